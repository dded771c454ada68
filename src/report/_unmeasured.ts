// One wording, for stderr, the annotations and the Markdown report, of a
// metric that measured nothing because the run's cases were invalid.

import { type GateFailure, nothingMeasured } from "../aggregate/gates.ts";
import type { Score } from "../score/mod.ts";

/**
 * A run's invalid cases (malformed dataset records), in words.
 *
 * @example
 * ```ts
 * import type { InvalidCasesText } from "../../mod.ts";
 * const text: InvalidCasesText = { count: 2, first: '"d.jsonl" line 2: "input" is missing' };
 * if (text.count !== 2) throw new Error("unexpected");
 * ```
 */
export interface InvalidCasesText {
  /** How many there were. */
  count: number;
  /** The first: where it is and why it is invalid. */
  first: string;
}

/**
 * A gate failure's message; for a metric that measured nothing while the
 * run's cases were invalid (the run exits 2 for them), what to fix rather
 * than the `allow_unmeasured` that would let a broken dataset pass.
 */
export function unmeasuredMessage(
  failure: GateFailure,
  invalid: InvalidCasesText | undefined,
): string {
  if (
    invalid === undefined || invalid.count === 0 ||
    failure.unmeasured === undefined
  ) return failure.message;
  const { count, first } = invalid;
  return `${
    nothingMeasured({ ...failure, unmeasured: failure.unmeasured })
  }, ${count} ${
    count === 1 ? "case is" : "cases are"
  } invalid (the first: ${first}): fix the dataset and run again`;
}

/**
 * Gathers a run's invalid cases from its Scores (a shard's Scores file keeps
 * no units): the examples blocked as `case.invalid`, the first by its id and
 * reason.
 */
export class InvalidCaseTally {
  #examples = new Set<string>();
  #first: string | undefined;

  /** Takes one Score; only a blocked one is looked into. */
  add(s: Score): void {
    if (
      s.status !== "blocked" ||
      !s.diagnostics?.some((d) => d.code === "case.invalid")
    ) return;
    const id = s.example_id ?? s.unit_id ?? "(no id)";
    this.#examples.add(id);
    this.#first ??= `${id}: ${(s.reason ?? "").replace(/^invalid case: /, "")}`;
  }

  /** The invalid cases, or `undefined` when there were none. */
  result(): InvalidCasesText | undefined {
    return this.#first === undefined
      ? undefined
      : { count: this.#examples.size, first: this.#first };
  }
}

/** {@linkcode InvalidCaseTally} over Scores held whole. */
export function invalidCasesOfScores(
  scores: Iterable<Score>,
): InvalidCasesText | undefined {
  const tally = new InvalidCaseTally();
  for (const s of scores) tally.add(s);
  return tally.result();
}
