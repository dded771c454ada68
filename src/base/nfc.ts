/**
 * The one spelling texts are compared in where two sources may write them
 * two ways: an example id typed in a dataset, a file name macOS gave it, an
 * id in another run's file, a `--filter`. "é" is one code point (NFC, as
 * keyboards and most tools write it) or "e" and a combining accent (NFD, as
 * macOS file names and some exports do); both look alike and are one id.
 * Outputs keep each text as it was written.
 *
 * @module
 */

// ASCII is the same in every normalization form: most ids, checked first.
// deno-lint-ignore no-control-regex
const ASCII = /^[\x00-\x7f]*$/;

/**
 * `text` in Unicode NFC, the key two spellings of one text share.
 *
 * @param text An id, a name, a pattern.
 * @returns The text in NFC (the same string when it is ASCII).
 *
 * @example
 * ```ts
 * import { nfcKey } from "./nfc.ts";
 * if (nfcKey("caf\u0065\u0301") !== nfcKey("caf\u00e9")) throw new Error("unpaired");
 * ```
 */
export function nfcKey(text: string): string {
  return ASCII.test(text) ? text : text.normalize("NFC");
}
