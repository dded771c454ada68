/**
 * Where a line of input stands, as every message names it.
 *
 * @module
 */

/**
 * `stdin line 3` or `"scores.jsonl" line 3`, for a message: a file's name
 * quoted, stdin by its name.
 *
 * @param name The input as given: a file's path, or `-` for stdin.
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
  return `${inputName(name)} line ${line}`;
}

/**
 * An input as every message names it: a file's path quoted, stdin (given
 * as `-`) by its name, unquoted; a file named `stdin` is a file, quoted.
 *
 * @param name The input as given: a file's path, or `-` for stdin.
 * @returns The words.
 *
 * @example
 * ```ts
 * import { inputName } from "./place.ts";
 * if (inputName("-") !== "stdin") throw new Error();
 * if (inputName("run.json") !== '"run.json"') throw new Error();
 * if (inputName("stdin") !== '"stdin"') throw new Error();
 * ```
 */
export function inputName(name: string): string {
  return name === "-" ? "stdin" : JSON.stringify(name);
}

/**
 * A path in a config or in settings as messages write it:
 * `targets.api.body.q`, `scorers[0].name`.
 *
 * @param path The keys and indexes from the top.
 * @returns The text.
 *
 * @example
 * ```ts
 * import { pathText } from "./place.ts";
 * if (pathText(["scorers", 0, "name"]) !== "scorers[0].name") throw new Error();
 * ```
 */
export function pathText(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (out, key) =>
      typeof key === "number"
        ? `${out}[${key}]`
        : out === ""
        ? String(key)
        : `${out}.${String(key)}`,
    "",
  );
}
