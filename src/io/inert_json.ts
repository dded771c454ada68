/**
 * JSON text that cannot drive a terminal: the characters JSON allows raw in
 * strings but a terminal acts on (C1 controls such as U+009B CSI and U+009D
 * OSC, line and paragraph separators, bidi overrides and isolates, and
 * invisible marks) written as `\u` escapes. The text parses to the same value.
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
  if (!RAW_UNSAFE.test(json)) return json;
  return json.replace(
    RAW_UNSAFE_ALL,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
