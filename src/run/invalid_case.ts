/**
 * A malformed dataset record as data, and the one wording of it: what run's
 * messages, validate's list and the gate line say. It imports nothing, so
 * the gate line (run's and merge's) loads no dataset reader with it.
 *
 * @module
 */

/**
 * A malformed dataset record: which dataset, where in it, and why. `run`
 * reports each (`onInvalidRecord`), `validate` lists them (`SuitePlan`).
 *
 * @example A JSON array's second record, which starts on line 5
 * ```ts
 * import { type InvalidCase, invalidCaseText } from "./mod.ts";
 * const bad: InvalidCase = { dataset: "data.json", where: "record", line: 2, at: 5, message: '"input" is missing' };
 * if (invalidCaseText(bad) !== '"data.json" record 2 (line 5): "input" is missing') throw new Error();
 * ```
 */
export interface InvalidCase {
  /** The dataset, as messages name it. */
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
 * `Invalid case in `: `"data.jsonl" line 3: "input" is missing`.
 *
 * @param invalid The record's parts.
 * @returns The words.
 *
 * @example
 * ```ts
 * import { invalidCaseText } from "./mod.ts";
 * const text = invalidCaseText({ dataset: "data.jsonl", where: "line", line: 3, message: "Unexpected token" });
 * if (text !== '"data.jsonl" line 3: Unexpected token') throw new Error(text);
 * ```
 */
export function invalidCaseText(invalid: InvalidCase): string {
  return `${JSON.stringify(invalid.dataset)} ${invalid.where} ${invalid.line}${
    invalid.at !== undefined ? ` (line ${invalid.at})` : ""
  }: ${invalid.message}`;
}
