// The lines `run` and `merge` print on stderr for the gates a run failed:
// one wording for both commands, made from the failure's fields.

import { type GateFailure, nothingMeasured } from "../aggregate/gates.ts";
import { type InvalidCase, invalidCaseText } from "../base/place.ts";

/** A run's invalid cases (malformed dataset records), for the line on a metric they left unmeasured. */
export interface InvalidCases {
  /** How many there were. */
  count: number;
  /** The first: where it is and why it is invalid. */
  first: InvalidCase;
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
  invalid?: InvalidCases,
): string {
  const head = failure.ungated ? "evalpipe: " : "evalpipe: gate failed: ";
  if (
    invalid === undefined || invalid.count === 0 ||
    failure.unmeasured === undefined
  ) return `${head}${failure.message}`;
  const { count, first } = invalid;
  return `${head}${
    nothingMeasured({ ...failure, unmeasured: failure.unmeasured })
  }, ${count} ${count === 1 ? "case is" : "cases are"} invalid (the first: ${
    invalidCaseText(first)
  }): fix the dataset and run again`;
}
