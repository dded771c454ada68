/**
 * Text files read as UTF-8 strictly: a config or a rubric saved in another
 * encoding is refused at the line of its first bad byte, never read with
 * replacement characters that would change what it says.
 *
 * @module
 */

/**
 * A file whose bytes are not UTF-8.
 *
 * @example
 * ```ts
 * import { Utf8Error } from "./utf8.ts";
 * const e = new Utf8Error(5);
 * if (e.line !== 5 || e.message !== "not valid UTF-8 (line 5); save it as UTF-8") throw new Error(e.message);
 * ```
 */
export class Utf8Error extends Error {
  /** The 1-based line of the first byte that is not UTF-8. */
  readonly line: number;

  /**
   * Creates the error.
   *
   * @param line The 1-based line of the first bad byte.
   */
  constructor(line: number) {
    super(`not valid UTF-8 (line ${line}); save it as UTF-8`);
    this.name = "Utf8Error";
    this.line = line;
  }
}

/**
 * A file of valid UTF-8 longer than a JavaScript string can be (about 512
 * MiB): it cannot be read as one text.
 *
 * @example
 * ```ts
 * import { TextTooLongError } from "./utf8.ts";
 * const e = new TextTooLongError(600_000_000);
 * if (!(e instanceof RangeError) || e.bytes !== 600_000_000) throw new Error(e.message);
 * ```
 */
export class TextTooLongError extends RangeError {
  /** The text's size in bytes. */
  readonly bytes: number;

  /**
   * Creates the error.
   *
   * @param bytes The text's size in bytes.
   */
  constructor(bytes: number) {
    super(
      `too large to read as one text (${
        (bytes / 2 ** 20).toFixed(0)
      } MiB; a text holds at most about 512 MiB)`,
    );
    this.name = "TextTooLongError";
    this.bytes = bytes;
  }
}

const strict = new TextDecoder("utf-8", { fatal: true });

/**
 * Decodes bytes as UTF-8, refusing any that are not.
 *
 * @param bytes The bytes (a leading byte-order mark is dropped).
 * @returns The text.
 * @throws {Utf8Error} Naming the line of the first bad byte.
 * @throws {TextTooLongError} When they are UTF-8, but more than one string
 *   can hold.
 *
 * @example
 * ```ts
 * import { decodeUtf8, Utf8Error } from "./utf8.ts";
 * if (decodeUtf8(new TextEncoder().encode("café")) !== "café") throw new Error();
 * let line = 0;
 * try { decodeUtf8(new Uint8Array([0x61, 0x0a, 0x63, 0xe9, 0x0a])); } catch (e) { if (e instanceof Utf8Error) line = e.line; }
 * if (line !== 2) throw new Error(String(line));
 * ```
 */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return strict.decode(bytes);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    // The decoder throws the same TypeError for a text longer than a string
    // can be: a valid file was called "not valid UTF-8 (line 1)".
    if (isUtf8(bytes)) throw new TextTooLongError(bytes.length);
    throw new Utf8Error(badLineOf(bytes));
  }
}

/** Whether `bytes` are UTF-8, decoded a part at a time, the text dropped. */
function isUtf8(bytes: Uint8Array): boolean {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const part = 1 << 24;
  try {
    for (let at = 0; at < bytes.length; at += part) {
      decoder.decode(bytes.subarray(at, at + part), { stream: true });
    }
    decoder.decode();
  } catch (error) {
    // A byte that is not UTF-8, the one error a fatal decoder throws here.
    if (!(error instanceof TypeError)) throw error;
    return false;
  }
  return true;
}

/**
 * The 1-based line (lines end at `\n`) of the first bytes that are not
 * UTF-8: only on the way to a message, so line by line.
 *
 * @param bytes Bytes known not to be UTF-8.
 * @returns The line, or the last one when each line alone decodes.
 *
 * @example
 * ```ts
 * import { badLineOf } from "./utf8.ts";
 * if (badLineOf(new Uint8Array([0x61, 0x0a, 0xff])) !== 2) throw new Error();
 * ```
 */
export function badLineOf(bytes: Uint8Array): number {
  let line = 1;
  let start = 0;
  for (let end = bytes.indexOf(0x0a);; end = bytes.indexOf(0x0a, start)) {
    try {
      strict.decode(bytes.subarray(start, end < 0 ? bytes.length : end));
    } catch (error) {
      // A fatal decoder's only throw: this line holds the bad byte.
      if (!(error instanceof TypeError)) throw error;
      return line;
    }
    if (end < 0) return line;
    line++;
    start = end + 1;
  }
}

/**
 * Reads a file as UTF-8 text, strictly.
 *
 * @param path The file.
 * @returns Its text.
 * @throws {Utf8Error} When its bytes are not UTF-8.
 * @throws {TextTooLongError} When it is longer than one string can be.
 * @throws {Deno.errors.NotFound} And the other errors of `Deno.readFile`.
 *
 * @example
 * ```ts
 * import { readUtf8File } from "./utf8.ts";
 * const file = await Deno.makeTempFile();
 * await Deno.writeTextFile(file, "café");
 * const text = await readUtf8File(file);
 * await Deno.remove(file);
 * if (text !== "café") throw new Error(text);
 * ```
 */
export async function readUtf8File(path: string): Promise<string> {
  return decodeUtf8(await Deno.readFile(path));
}
