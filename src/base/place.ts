/**
 * Where a line of input stands, as every message names it, and a malformed
 * dataset record's place and reason ({@linkcode InvalidCase}): what run's
 * messages, validate's list and the gate line (run's and merge's) say. It
 * imports nothing, so none of them loads a dataset reader with it.
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

/**
 * A malformed dataset record: which dataset, where in it, and why. `run`
 * reports each (`onInvalidRecord`), `validate` lists them (`SuitePlan`).
 *
 * @example A JSON array's second record, which starts on line 5
 * ```ts
 * import { type InvalidCase, invalidCaseText } from "./place.ts";
 * const bad: InvalidCase = { dataset: "data.json", where: "record", line: 2, at: 5, message: '"input" is missing' };
 * if (invalidCaseText(bad) !== '"data.json" record 2 (line 5): "input" is missing') throw new Error();
 * ```
 */
export interface InvalidCase {
  /** The dataset as given: its path (or name), `-` for stdin. */
  dataset: string;
  /** What `line` counts: a JSONL file's lines, a list's or CSV's records. */
  where: "line" | "record";
  /** The record's line (JSONL) or position (JSON, YAML, CSV), from 1. */
  line: number;
  /** The line of the file a record starts on, when `line` counts records. */
  at?: number;
  /** Why the record is malformed. */
  message: string;
}

/**
 * Where a malformed record stands and why, as every message words it after
 * `Invalid case in `: `"data.jsonl" line 3: "input" is missing`, or
 * `stdin line 3: ...` for `-`, as {@linkcode placeOf} names it.
 *
 * @param invalid The record's parts.
 * @returns The words.
 *
 * @example
 * ```ts
 * import { invalidCaseText } from "./place.ts";
 * const text = invalidCaseText({ dataset: "data.jsonl", where: "line", line: 3, message: "Unexpected token" });
 * if (text !== '"data.jsonl" line 3: Unexpected token') throw new Error(text);
 * const piped = invalidCaseText({ dataset: "-", where: "line", line: 2, message: "Unexpected token" });
 * if (piped !== "stdin line 2: Unexpected token") throw new Error(piped);
 * ```
 */
export function invalidCaseText(invalid: InvalidCase): string {
  return `${inputName(invalid.dataset)} ${invalid.where} ${invalid.line}${
    invalid.at !== undefined ? ` (line ${invalid.at})` : ""
  }: ${invalid.message}`;
}
