// The lines `run` and `merge` print on stderr for the gates a run failed:
// one wording for both commands, made from the failure's fields.

import type { GateFailure } from "../aggregate/gates.ts";
import { type InvalidCase, invalidCaseText } from "../base/place.ts";
import {
  type InvalidCasesText,
  unmeasuredMessage,
} from "../report/_unmeasured.ts";

/** A run's invalid cases (malformed dataset records), for the line on a metric they left unmeasured. */
export interface InvalidCases {
  /** How many there were. */
  count: number;
  /** The first: where it is and why it is invalid. */
  first: InvalidCase;
}

/** The invalid cases as the messages on a metric say them. */
export function invalidCasesText(
  invalid: InvalidCases | undefined,
): InvalidCasesText | undefined {
  return invalid === undefined
    ? undefined
    : { count: invalid.count, first: invalidCaseText(invalid.first) };
}

/**
 * The stderr line on a gate that did not hold: `gate failed: …` for a
 * threshold the config set; for a metric that measured nothing though no
 * gate names it, the rule that failed the run. When the run's cases were
 * invalid (the run exits 2 for them), a metric that measured nothing says
 * what to fix rather than a gate to set, gated or not.
 */
export function gateLine(
  failure: GateFailure,
  invalid?: InvalidCasesText,
): string {
  const head = failure.ungated ? "evalpipe: " : "evalpipe: gate failed: ";
  return `${head}${unmeasuredMessage(failure, invalid)}`;
}
