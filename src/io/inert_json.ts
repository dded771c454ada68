/**
 * JSON text that cannot drive a terminal: the characters JSON allows raw in
 * strings but a terminal acts on (C1 controls such as U+009B CSI and U+009D
 * OSC, line and paragraph separators, bidi overrides and isolates, and
 * invisible marks) written as `\u` escapes. The text parses to the same value,
 * except that a lone surrogate (half a UTF-16 pair, which is no character and
 * which strict readers such as jq refuse) becomes U+FFFD.
 *
 * @module
 */

import { TERMINAL_UNSAFE_CHARS } from "../base/terminal.ts";

const RAW_UNSAFE = new RegExp(`[${TERMINAL_UNSAFE_CHARS}]`);
const RAW_UNSAFE_ALL = new RegExp(`[${TERMINAL_UNSAFE_CHARS}]`, "g");

/**
 * Escapes, in JSON text, every character a terminal could act on that JSON
 * lets through raw. Such characters can stand only inside JSON strings, where
 * `\uXXXX` means the same character, so the text still parses to the same
 * value. Text without any is returned as it is, after one scan.
 *
 * @param json JSON text (one value, or NDJSON lines).
 * @returns The same JSON, inert in a terminal.
 *
 * @example A model's answer with a CSI and a right-to-left override
 * ```ts
 * import { inertJson } from "./mod.ts";
 * const json = inertJson(JSON.stringify({ output: "ok\u009b2J \u202etxt.exe" }));
 * if (json !== '{"output":"ok\\u009b2J \\u202etxt.exe"}') throw new Error(json);
 * if (JSON.parse(json).output !== "ok\u009b2J \u202etxt.exe") throw new Error("unexpected");
 * ```
 */
export function inertJson(json: string): string {
  const text = json.includes("\\u") && LONE_ESCAPE.test(json)
    ? wellFormed(json)
    : json;
  if (!RAW_UNSAFE.test(text)) return text;
  return text.replace(
    RAW_UNSAFE_ALL,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** A `\u` escape of a surrogate: maybe half a pair, maybe alone. */
const LONE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * Every escape in JSON text, one at a time (so `\\\\` is one and the `u`
 * after it is text): a surrogate pair, a lone surrogate, or any other.
 */
const ESCAPE =
  /\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|(u[dD][89a-fA-F][0-9a-fA-F]{2})|u[0-9a-fA-F]{4}|.)/gs;

/**
 * Writes each lone surrogate escape (`\ud800` without its other half) as
 * U+FFFD, as `String.prototype.toWellFormed` does: JSON.stringify writes a
 * string that holds one (from a `\ud800` in a model's or scorer's JSON) as
 * such an escape, which jq and other strict readers refuse.
 */
function wellFormed(json: string): string {
  return json.replace(
    ESCAPE,
    (escape, lone: string | undefined) =>
      lone !== undefined ? "\\ufffd" : escape,
  );
}
