import assert from "node:assert/strict";
import { inertJson } from "../../src/io/mod.ts";
import {
  aggregatable,
  blocked,
  errored,
  makeScore,
  nonEvaluable,
  notApplicable,
  parseScore,
  type Score,
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

Deno.test("scored builds, key for key, the Score makeScore builds from the same fields", () => {
  // scored builds a built-in's Score in one step; it must be the very Score
  // (keys, order, -0 as 0) the checked constructor makes.
  const optionsList = [
    {},
    { reason: "r" },
    { passed: false },
    { validity: "invalid" as const, reason: "out of range" },
    { evaluator_version: "m@2" },
    { example_id: "d#1", unit_id: "d#1@2" },
    { diagnostics: [{ code: "a.b", severity: "info" as const, message: "m" }] },
  ];
  for (const options of optionsList) {
    for (const value of [1, 0.25, 0, -0]) {
      const got = scored("m", value, options);
      const want = makeScore({
        metric: "m",
        status: "scored",
        validity: options.validity ?? "valid",
        value,
        passed: options.passed ?? value >= 0.5,
        ...("reason" in options ? { reason: options.reason } : {}),
        evaluator_version: options.evaluator_version ?? "m@1",
        ...("example_id" in options
          ? { example_id: options.example_id, unit_id: options.unit_id }
          : {}),
        diagnostics: options.diagnostics ?? [],
        evidence_refs: [],
      });
      assert.equal(JSON.stringify(got), JSON.stringify(want));
      assert.ok(Object.is(got.value, value === 0 ? 0 : value));
    }
  }
  assert.throws(() => scored("", 1), ScoreError);
  assert.throws(
    () => scored("m", 1, { passed: "yes" as unknown as boolean }),
    ScoreError,
  );
});

Deno.test("errored carries null, fails, and repeats its message as a diagnostic", () => {
  const s = errored("m", "scorer error: boom");
  assert.equal(s.value, null);
  assert.equal(s.passed, false);
  assert.equal(s.reason, "scorer error: boom");
  assert.equal(s.validity, "not_measured");
  assert.deepEqual(s.diagnostics, [{
    code: "scorer.error",
    severity: "error",
    message: "scorer error: boom",
  }]);
  assert.equal(aggregatable(s), false);
});

Deno.test("blocked, skipped and nonEvaluable carry the statuses and validities evalglass names", () => {
  const b = blocked("m", "target error: HTTP 503");
  assert.equal(b.status, "blocked");
  assert.equal(b.validity, "not_measured");
  assert.equal(b.value, null);
  assert.equal(b.passed, false);
  assert.deepEqual(b.diagnostics, [{
    code: "target.error",
    severity: "error",
    message: "target error: HTTP 503",
  }]);
  const c = blocked("m", "invalid case: no input", {
    details: { line: 3 },
  });
  assert.deepEqual(c.diagnostics[0], {
    code: "case.invalid",
    severity: "error",
    message: "invalid case: no input",
    details: { line: 3 },
  });
  const s = skipped("m", { reason: "sampled out" });
  assert.equal(s.validity, "not_measured");
  assert.equal("passed" in s, false, "a skipped Score has no verdict");
  const n = nonEvaluable("m");
  assert.equal(n.status, "non_evaluable");
  assert.equal(n.validity, "not_applicable");
  assert.equal("passed" in n, false);
  // The earlier name still builds the same Score.
  assert.deepEqual(notApplicable("m"), n);
  for (const x of [b, c, s, n]) assert.equal(aggregatable(x), false);
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
      '"status" must be one of scored, blocked, non_evaluable, skipped, error, not "done"; ' +
      '"value" must be a finite number or null, not "0.5"',
  );
  assert.equal(
    message({ ...base, evaluator_version: undefined }),
    '"evaluator_version" is missing',
  );
  assert.equal(
    message({ ...base, value: NaN, diagnostics: [{ level: "fatal" }] }),
    '"value" must be a finite number or null, not NaN; "diagnostics" item 1: ' +
      '"code" is missing, "severity" is missing, "message" is missing',
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
    message({ ...base, status: "blocked", value: null, passed: true }),
    '"passed": A "blocked" Score must carry "passed": false',
  );
  assert.equal(
    message({ ...base, passed: "yes" }),
    '"passed" must be a boolean, not "yes"',
  );
  assert.equal(
    message({ ...base, diagnostics: [{ severity: "error", message: "x" }] }),
    '"diagnostics" item 1: "code" is missing',
  );
  assert.equal(
    message({
      ...base,
      diagnostics: [
        { code: "c", severity: "info", message: "fine" },
        { code: "c", severity: "fatal", message: "x", evidence_refs: [1] },
        ["not", "one"],
      ],
    }),
    '"diagnostics" item 2: "severity" must be one of info, warning, error, not "fatal", ' +
      '"evidence_refs" must be a list of strings, not object; ' +
      '"diagnostics" item 3: a diagnostic must be an object, not a list',
  );
  assert.equal(
    message({ ...base, diagnostics: "none" }),
    '"diagnostics" must be a list of {"code": string, "severity": "info" | "warning" | "error", "message": string, "location"?: string, "details"?: object}, not "none"',
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
      diagnostics: [{
        code: "judge.doubt",
        severity: "warning",
        message: "close\tcall",
        location: "line 3",
        details: { limit: 5, nested: ["a"] },
      }],
      evidence_refs: ["trace/1", "ü"],
      provenance: { model: "x", nested: { a: [1, null, "b"] } },
    }),
    errored("m", "scorer error: boom", ids(3)),
    skipped("m", { reason: "budget", ...ids(3) }),
    nonEvaluable("m", ids(4)),
    nonEvaluable("m"),
    blocked("m", "target error: x", ids(5)),
    skipped("m", { reason: "filtered", ...ids(6) }),
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

Deno.test("scoreLine writes each of many kinds of Score as its own, in any order", () => {
  // More metrics, statuses and versions than scoreLine remembers the text
  // of, cycled forwards and back: a remembered head must never be another
  // kind's (a metric with a terminal control character included).
  const scores = [];
  for (let m = 0; m < 12; m++) {
    const metric = m === 11 ? "m\u202e\u0007" : `metric_${m % 6}`;
    const options = {
      example_id: `d#${m}`,
      unit_id: `d#${m}`,
      evaluator_version: `${metric}@${m % 4}`,
    };
    scores.push(
      scored(metric, m / 7, { ...options, passed: m % 2 === 0 }),
      scored(metric, m, { ...options, validity: "invalid" }),
      errored(metric, `scorer error: ${m}`, options),
      skipped(metric, { ...options, reason: "filtered" }),
    );
  }
  for (const s of [...scores, ...scores.toReversed(), ...scores]) {
    assert.equal(scoreLine(s), inertJson(JSON.stringify(s)));
  }
});

Deno.test("parseScore reads Scores written before the evalglass vocabulary as today's", () => {
  const old = (fields: Record<string, unknown>) =>
    parseScore({
      metric: "m",
      evaluator_version: "m@1",
      example_id: "d#1",
      unit_id: "d#1",
      evidence_refs: [],
      ...fields,
    });
  // Status not_applicable, validity valid, passed null: non_evaluable.
  const na = old({
    status: "not_applicable",
    validity: "valid",
    value: null,
    passed: null,
    reason: "the case has no expected",
    diagnostics: [],
  });
  assert.equal(na.status, "non_evaluable");
  assert.equal(na.validity, "not_applicable");
  assert.equal("passed" in na, false);
  // An error of old: validity valid, a diagnostic with a level.
  const err = old({
    status: "error",
    validity: "valid",
    value: null,
    passed: false,
    reason: "target error: HTTP 503",
    diagnostics: [{ level: "error", message: "target error: HTTP 503" }],
  });
  assert.equal(err.status, "error", "an old target error stays an error");
  assert.equal(err.validity, "not_measured");
  assert.deepEqual(err.diagnostics, [{
    code: "target.error",
    severity: "error",
    message: "target error: HTTP 503",
  }]);
  const warned = old({
    status: "scored",
    validity: "invalid",
    value: 0.4,
    passed: false,
    diagnostics: [{ level: "warning", message: "judge reply was prose" }],
  });
  assert.deepEqual(warned.diagnostics, [{
    code: "legacy.warning",
    severity: "warning",
    message: "judge reply was prose",
  }]);
  const skip = old({
    status: "skipped",
    validity: "valid",
    value: null,
    passed: null,
  });
  assert.equal(skip.validity, "not_measured");
  assert.equal("passed" in skip, false);
});

Deno.test("parseScore reads evalglass's Scores: no passed, diagnostics with cause, empty lists absent", () => {
  // As evalglass's Score.to_dict writes them (keys sorted by its dump).
  const scoredOne = parseScore({
    evaluator_version: "set_overlap@1",
    example_id: "datasets/grounded.jsonl#1",
    metric: "set_overlap",
    status: "scored",
    unit_id: "datasets/grounded.jsonl#1",
    validity: "valid",
    value: 0.4,
  });
  assert.equal(scoredOne.passed, false, "passed derives as value >= 0.5");
  assert.deepEqual(scoredOne.diagnostics, []);
  assert.deepEqual(scoredOne.evidence_refs, []);
  const high = parseScore({ ...scoredOne, passed: undefined, value: 0.5 });
  assert.equal(high.passed, true);
  const nonEval = parseScore({
    diagnostics: [{
      code: "reference_missing",
      severity: "warning",
      message: "no reference",
      location: "example.reference",
      details: {},
      cause: "dataset",
      evidence_refs: ["trace:1"],
    }],
    evaluator_version: "exact@1",
    metric: "exact",
    status: "non_evaluable",
    validity: "not_applicable",
    value: null,
  });
  assert.deepEqual(nonEval.diagnostics, [{
    code: "reference_missing",
    severity: "warning",
    message: "no reference",
    location: "example.reference",
    cause: "dataset",
    evidence_refs: ["trace:1"],
  }]);
  const err = parseScore({
    evaluator_version: "judge@1",
    metric: "judge",
    status: "error",
    validity: "not_measured",
    value: null,
  });
  assert.equal(err.passed, false, "an error fails");
  const blockedOne = parseScore({ ...err, status: "blocked" });
  assert.equal(blockedOne.passed, false);
  // A status evalglass does not know is still refused.
  assert.throws(
    () => parseScore({ ...err, status: "crashed" }),
    ScoreSyntaxError,
  );
  assert.throws(
    () => parseScore({ ...err, validity: "maybe" }),
    ScoreSyntaxError,
  );
});

Deno.test("parseScore says why a value read as Infinity: JSON has no Infinity, only numbers out of range", () => {
  // Before, the file's 1e400 (or a 400-digit integer) was named "Infinity",
  // which the file does not hold.
  const line =
    '{"metric":"m","status":"scored","validity":"valid","value":1e400,"evaluator_version":"m@1"}';
  assert.throws(() => parseScore(JSON.parse(line)), {
    name: "ScoreSyntaxError",
    message:
      /"value" must be a finite number or null \(in JSON, a number beyond ±1\.8e308, such as 1e400, reads as Infinity\), not Infinity/,
  });
});

Deno.test('a diagnostic with an empty message is read as "(no message)", which evalglass\'s reader and its schema accept', async () => {
  const { assertSchema } = await import("../evalglass/_schemas.ts");
  const { functionScorer, scoreUnits } = await import("../../mod.ts");
  const diagnostic = {
    code: "length.short",
    severity: "warning" as const,
    message: "",
  };
  const read = (s: { diagnostics: unknown[] }) => {
    assert.deepEqual(s.diagnostics, [{
      ...diagnostic,
      message: "(no message)",
    }]);
    for (const d of s.diagnostics) assertSchema("diagnostic", d);
    assertSchema("score", s);
  };
  // A Scores file or a record written before (an evalglass reader refuses it).
  read(parseScore({
    metric: "m",
    status: "skipped",
    validity: "not_measured",
    value: null,
    evaluator_version: "m@1",
    diagnostics: [diagnostic],
    evidence_refs: [],
  }));
  // The older shape: a level, no code.
  assert.equal(
    parseScore({
      metric: "m",
      status: "error",
      validity: "not_measured",
      value: null,
      evaluator_version: "m@1",
      diagnostics: [{ level: "error", message: "" }],
    }).diagnostics[0]?.message,
    "(no message)",
  );
  // A function scorer's Score, as run writes it.
  const scorer = functionScorer("short", () => ({
    metric: "short",
    status: "scored",
    validity: "valid",
    value: 1,
    passed: true,
    evaluator_version: "short@1",
    diagnostics: [diagnostic],
    evidence_refs: [],
  } as Score));
  const unit = { example_id: "d#1", unit_id: "d#1", input: "q", output: "a" };
  const [score] = await Array.fromAsync(
    ReadableStream.from([unit]).pipeThrough(scoreUnits([scorer])),
  );
  read(score!);
});
