/**
 * The lines `run` and `merge` print on stderr for the gates a run failed:
 * one wording for both commands and for a script, made from the failure's
 * fields.
 *
 * @module
 */

import type { GateFailure } from "../aggregate/gates.ts";
import { type InvalidCase, invalidCaseText } from "../base/place.ts";
import { type InvalidCasesText, unmeasuredMessage } from "./_unmeasured.ts";

export type { InvalidCasesText };

/**
 * A run's invalid cases (malformed dataset records), for the line on a
 * metric they left unmeasured.
 *
 * @example The first invalid case, as `runSuite`'s `onInvalidRecord` gives it
 * ```ts
 * import type { InvalidCases } from "./mod.ts";
 * const invalid: InvalidCases = {
 *   count: 1,
 *   first: { dataset: "d.jsonl", where: "line", line: 2, message: '"input" is missing' },
 * };
 * if (invalid.first.line !== 2) throw new Error("unexpected");
 * ```
 */
export interface InvalidCases {
  /** How many there were (`runSuite`'s `invalidRecords`). */
  count: number;
  /** The first: where it is and why it is invalid. */
  first: InvalidCase;
}

/**
 * The invalid cases as the messages on a metric say them.
 *
 * @param invalid The run's invalid cases, if it had any.
 * @returns Their count and the first in words, or `undefined` when none.
 *
 * @example
 * ```ts
 * import { invalidCasesText } from "./mod.ts";
 * const text = invalidCasesText({
 *   count: 2,
 *   first: { dataset: "d.jsonl", where: "line", line: 2, message: '"input" is missing' },
 * });
 * if (text?.first !== '"d.jsonl" line 2: "input" is missing') throw new Error(text?.first);
 * ```
 */
export function invalidCasesText(
  invalid: InvalidCases | undefined,
): InvalidCasesText | undefined {
  return invalid === undefined
    ? undefined
    : { count: invalid.count, first: invalidCaseText(invalid.first) };
}

/**
 * The stderr line `run` and `merge` print on a gate that did not hold:
 * `evalpipe: gate failed: …` for a threshold the config set; for a metric
 * that measured nothing though no gate names it, the rule that failed the
 * run. When the run's cases were invalid (the run exits 2 for them), a
 * metric that measured nothing says what to fix rather than a gate to set,
 * gated or not.
 *
 * @param failure A gate failure, as `checkGates` or `runSuite`'s
 *   `gateFailures` give it.
 * @param invalid The run's invalid cases in words ({@linkcode invalidCasesText}).
 * @returns The line, without a newline.
 *
 * @example A script prints what `run` prints on a failed gate
 * ```ts
 * import { checkGates, gateLine } from "../../mod.ts";
 * import { Aggregator, scored } from "../../mod.ts";
 * const aggregator = new Aggregator();
 * aggregator.add(scored("exact_match", 0, { example_id: "d#1", unit_id: "d#1" }));
 * const [failure] = checkGates({ exact_match: { min_mean: 0.9 } }, aggregator.results());
 * if (!gateLine(failure!).startsWith("evalpipe: gate failed: exact_match")) throw new Error(gateLine(failure!));
 * ```
 */
export function gateLine(
  failure: GateFailure,
  invalid?: InvalidCasesText,
): string {
  const head = failure.ungated ? "evalpipe: " : "evalpipe: gate failed: ";
  return `${head}${unmeasuredMessage(failure, invalid)}`;
}
