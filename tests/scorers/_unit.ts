// Units and one-Score reads shared by the built-in scorers' tests.

import assert from "node:assert/strict";
import type { Score, Scorer, Unit } from "../../mod.ts";

/** A unit with this output, and an expected value or a target record when given. */
export function unit(
  output: string,
  expected?: unknown,
  target?: Record<string, unknown>,
): Unit {
  return {
    example_id: "d#1",
    unit_id: "d#1",
    input: "q",
    output,
    ...(expected !== undefined ? { expected } : {}),
    ...(target !== undefined ? { target } : {}),
  };
}

/** The Score of a built-in, which must come synchronously (no promise per unit). */
export function one(scorer: Scorer, u: Unit): Score {
  const s = scorer.score(u, {});
  assert.ok(!(s instanceof Promise), `${scorer.name} returned a promise`);
  assert.ok(!("scores" in s));
  return s;
}

/** The value of a built-in's Score, which must be scored and valid. */
export function value(scorer: Scorer, u: Unit): number {
  const s = one(scorer, u);
  assert.equal(s.status, "scored", s.reason);
  assert.equal(s.validity, "valid");
  return s.value!;
}

/** Asserts a Score is non_evaluable with a reason that starts `not applicable: `. */
export function assertNotApplicable(s: Score, reason?: string): void {
  assert.equal(s.status, "non_evaluable");
  assert.equal(s.validity, "not_applicable");
  assert.equal(s.value, null);
  assert.equal("passed" in s, false);
  assert.ok(s.reason?.startsWith("not applicable: "), s.reason);
  if (reason !== undefined) assert.equal(s.reason, reason);
}

/** Asserts two numbers agree to 12 places. */
export function close(actual: number, expected: number): void {
  assert.ok(
    Math.abs(actual - expected) < 1e-12,
    `${actual} is not ${expected}`,
  );
}
