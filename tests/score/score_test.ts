import assert from "node:assert/strict";
import { inertJson } from "../../src/io/mod.ts";
import {
  aggregatable,
  errored,
  notApplicable,
  parseScore,
  scored,
  ScoreError,
  scoreLine,
  ScoreSyntaxError,
  skipped,
} from "../../mod.ts";

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

Deno.test("parseScore names every field that breaks its rule, and the no-0.0 rule", () => {
  const base = {
    metric: "m",
    status: "scored",
    validity: "valid",
    value: 0.5,
    passed: true,
    evaluator_version: "m@1",
  };
  const message = (value: unknown) => {
    try {
      parseScore(value);
    } catch (error) {
      assert.ok(error instanceof ScoreSyntaxError);
      return error.message;
    }
    assert.fail(`accepted ${JSON.stringify(value)}`);
  };
  assert.equal(message([1]), "A Score must be an object, not a list");
  assert.equal(message("x"), 'A Score must be an object, not "x"');
  assert.equal(
    message({ ...base, metric: "", value: "0.5", status: "done" }),
    '"metric" must be a non-empty string, not ""; ' +
      '"status" must be one of scored, skipped, not_applicable, error, not "done"; ' +
      '"value" must be a finite number or null, not "0.5"',
  );
  assert.equal(
    message({ ...base, evaluator_version: undefined }),
    '"evaluator_version" is missing',
  );
  assert.equal(
    message({ ...base, value: NaN, diagnostics: [{ level: "fatal" }] }),
    '"value" must be a finite number or null, not NaN; "diagnostics" must be ' +
      'a list of {"level": "error" | "warning" | "info", "message": string}, not object',
  );
  assert.match(
    message({ ...base, provenance: { at: new Date() } }),
    /^"provenance" must be a mapping of JSON values only/,
  );
  assert.equal(
    message({ ...base, status: "error", value: 0, passed: false }),
    '"value": A "error" Score must carry a null value, not 0',
  );
  assert.equal(
    message({ ...base, passed: null }),
    '"passed": A "scored" Score must carry a boolean "passed"',
  );
});

Deno.test("scoreLine writes JSON.stringify's text, made inert, for every kind of Score", () => {
  const ids = (n: number) => ({
    example_id: `d.jsonl#${n}`,
    unit_id: `d.jsonl#${n}`,
  });
  const scores = [
    scored("exact_match", 1, ids(1)),
    scored("m", 0, { ...ids(1), reason: 'said "no"\n\u0007 \u2028 ü' }),
    scored("m", -0, { example_id: "e", unit_id: "e@2" }),
    scored("m", 1e21, { evaluator_version: "m@2+x" }),
    scored("m", 1.5e-7, { passed: false, validity: "invalid" }),
    scored("m", -3.25, {
      ...ids(2),
      diagnostics: [{ level: "warning", message: "close\tcall" }],
      evidence_refs: ["trace/1", "ü"],
      provenance: { model: "x", nested: { a: [1, null, "b"] } },
    }),
    errored("m", "scorer error: boom", ids(3)),
    skipped("m", { reason: "budget", ...ids(3) }),
    notApplicable("m", ids(4)),
    notApplicable("m"),
    // What validation builds, from a Score whose keys came in another order.
    parseScore({
      evidence_refs: [],
      diagnostics: [],
      unit_id: "u",
      example_id: "x",
      evaluator_version: "m@1",
      passed: true,
      value: 0.5,
      validity: "valid",
      status: "scored",
      metric: "m",
    }),
  ];
  // Interleaved ids: a remembered id must not leak into the next Score.
  for (const s of [...scores, ...scores.reverse()]) {
    assert.equal(scoreLine(s), inertJson(JSON.stringify(s)));
    assert.deepEqual(JSON.parse(scoreLine(s)), JSON.parse(JSON.stringify(s)));
  }
  // The reason's line separator is the one character JSON leaves raw here.
  assert.match(scoreLine(scored("m", 0, { reason: "a\u2028b" })), /a\\u2028b/);
});
