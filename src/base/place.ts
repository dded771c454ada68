/**
 * Where a line of input stands, as every message names it.
 *
 * @module
 */

/**
 * `stdin line 3` or `"scores.jsonl" line 3`, for a message: a file's name
 * quoted, stdin by its name.
 *
 * @param name The input: a file's path, or `stdin` (or `-`).
 * @param line The line, from 1.
 * @returns The words.
 *
 * @example
 * ```ts
 * import { placeOf } from "./place.ts";
 * if (placeOf("-", 3) !== "stdin line 3") throw new Error();
 * if (placeOf("a b.ndjson", 2) !== '"a b.ndjson" line 2') throw new Error();
 * ```
 */
export function placeOf(name: string, line: number): string {
  return name === "stdin" || name === "-"
    ? `stdin line ${line}`
    : `${JSON.stringify(name)} line ${line}`;
}
