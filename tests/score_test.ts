import assert from "node:assert/strict";
import {
  aggregatable,
  errored,
  notApplicable,
  parseScore,
  scored,
  ScoreError,
  ScoreSyntaxError,
  skipped,
} from "../mod.ts";

Deno.test("scored rejects NaN, infinities and booleans", () => {
  for (
    const bad of [
      NaN,
      Infinity,
      -Infinity,
      true as unknown as number,
      "1" as unknown as number,
    ]
  ) {
    assert.throws(() => scored("m", bad), ScoreError);
  }
});

Deno.test("errored carries null, fails, and repeats its message as a diagnostic", () => {
  const s = errored("m", "scorer error: boom");
  assert.equal(s.value, null);
  assert.equal(s.passed, false);
  assert.equal(s.reason, "scorer error: boom");
  assert.deepEqual(s.diagnostics, [{
    level: "error",
    message: "scorer error: boom",
  }]);
  assert.equal(aggregatable(s), false);
});

Deno.test("only scored and valid Scores are aggregatable", () => {
  assert.equal(aggregatable(scored("m", 0)), true);
  assert.equal(aggregatable(scored("m", 0.3, { validity: "invalid" })), false);
  assert.equal(aggregatable(skipped("m")), false);
  assert.equal(aggregatable(notApplicable("m")), false);
});

Deno.test("parseScore refuses a non-scored Score with a number (the no-0.0 rule)", () => {
  assert.throws(
    () =>
      parseScore({
        metric: "m",
        status: "error",
        validity: "valid",
        value: 0,
        passed: false,
        evaluator_version: "m@1",
      }),
    ScoreSyntaxError,
  );
});
