import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { type Aggregate, Aggregator } from "../../src/aggregate/mod.ts";
import { checkGates, nothingMeasured } from "../../src/aggregate/gates.ts";
import {
  blocked,
  errored,
  type Score,
  scored,
  skipped,
} from "../../src/score/mod.ts";

function aggregates(scores: Score[]): Aggregate[] {
  const agg = new Aggregator();
  for (const s of scores) agg.add(s);
  return agg.results();
}

Deno.test("checkGates min_mean holds at the bar and fails below it", () => {
  // mean (0.4 + 0.6) / 2 = 0.5
  const aggs = aggregates([scored("m", 0.4), scored("m", 0.6)]);
  assert.deepEqual(checkGates({ m: { min_mean: 0.5 } }, aggs), []);
  assert.deepEqual(checkGates({ m: { min_mean: 0.51 } }, aggs), [{
    metric: "m",
    gate: "min_mean",
    threshold: 0.51,
    actual: 0.5,
    message: "m: mean 0.5 < min_mean 0.51",
  }]);
});

Deno.test("checkGates min_mean fails when there is no mean, saying why", () => {
  const aggs = aggregates([errored("m", "scorer error: boom")]);
  const [failure, ...rest] = checkGates(
    { m: { min_mean: 0, allow_unmeasured: true } },
    aggs,
  );
  assert.deepEqual(rest, []);
  assert.equal(failure!.gate, "min_mean");
  assert.equal(failure!.actual, null);
  assert.equal(
    failure!.message,
    "m: no mean to compare with min_mean 0: 1 Score, none scored and valid",
  );
});

Deno.test("checkGates fails a metric, gated or not, whose every Score failed, unless allowed", () => {
  const aggs = aggregates([
    errored("judge", "scorer error: boom"),
    blocked("judge", "target error: down"),
    skipped("judge"),
    // Nothing measured, nothing failed: a metric that did not apply is fine.
    skipped("other"),
    scored("fine", 1),
    errored("fine", "scorer error: once"),
  ]);
  assert.deepEqual(checkGates({}, aggs), [{
    metric: "judge",
    gate: "allow_unmeasured",
    threshold: 1,
    actual: 0,
    message:
      "judge: nothing measured: 1 error and 1 blocked of 3 Scores; no gate names it, but a metric that measured nothing fails the run: the Scores' reasons say why (let it pass with gates.judge.allow_unmeasured: true)",
    ungated: true,
    unmeasured: { scores: 3, errors: 1, blocked: 1, invalid: 0 },
  }]);
  // A gate of its own: the figure is the gate's to fail.
  assert.deepEqual(
    checkGates({ judge: { max_errors: 5 } }, aggs).map((f) => [
      f.message,
      f.ungated,
    ]),
    [[
      "judge: nothing measured: 1 error and 1 blocked of 3 Scores (allow it with gates.judge.allow_unmeasured: true)",
      undefined,
    ]],
  );
  assert.deepEqual(
    checkGates({ judge: { allow_unmeasured: true } }, aggs),
    [],
  );
  // With a gate of its own, nothing measured comes first.
  assert.deepEqual(
    checkGates({ judge: { min_mean: 0.5 } }, aggs).map((f) => f.gate),
    ["allow_unmeasured", "min_mean"],
  );
  // A judge that only ever graded off its scale measured nothing either.
  const offScale = aggregates([
    scored("judge", 7, { validity: "invalid", passed: false }),
    scored("judge", 9, { validity: "invalid", passed: false }),
  ]);
  assert.deepEqual(checkGates({}, offScale).map((f) => f.message), [
    "judge: nothing measured: 2 invalid of 2 Scores; no gate names it, but a metric that measured nothing fails the run: the Scores' reasons say why (let it pass with gates.judge.allow_unmeasured: true)",
  ]);
  assert.deepEqual(
    checkGates({ judge: { allow_unmeasured: true } }, offScale),
    [],
  );
});

// 0.8 0.9 1.0 0.9: mean 0.9, deviations −0.1 0 0.1 0, squares sum 0.02,
// sd = sqrt(0.02 / 3) = 0.081650, stderr = 0.040825,
// half = 3.182 × 0.040825 = 0.129905, low end 0.770095.
Deno.test("checkGates min_mean_lower_bound compares the low end of the 95% interval", () => {
  const aggs = aggregates([0.8, 0.9, 1.0, 0.9].map((v) => scored("m", v)));
  assert.ok(Math.abs(aggs[0]!.ci95![0] - 0.770095) < 1e-3);
  assert.deepEqual(checkGates({ m: { min_mean_lower_bound: 0.75 } }, aggs), []);
  const [failure] = checkGates({ m: { min_mean_lower_bound: 0.8 } }, aggs);
  assert.equal(failure!.gate, "min_mean_lower_bound");
  assert.equal(failure!.threshold, 0.8);
  assert.ok(Math.abs(failure!.actual! - 0.770095) < 1e-3);
  assert.match(
    failure!.message,
    /^m: 95% interval low end 0\.77\d* < min_mean_lower_bound 0\.8$/,
  );
  // The mean alone would pass: noise cannot pass the bar.
  assert.deepEqual(checkGates({ m: { min_mean: 0.8 } }, aggs), []);
});

Deno.test("checkGates min_pass_rate fails when no Score passes or fails, saying why (no JavaScript 'undefined')", () => {
  const aggs = aggregates([
    skipped("m", { reason: "skipped: not in the subset --sample 0" }),
    skipped("m", { reason: "skipped: not in the subset --sample 0" }),
  ]);
  const [failure] = checkGates({ m: { min_pass_rate: 0.9 } }, aggs);
  assert.equal(failure!.actual, null);
  assert.equal(
    failure!.message,
    "m: no pass rate to compare with min_pass_rate 0.9: 2 Scores, none that passes or fails (skipped, not applicable or invalid)",
  );
});

Deno.test("checkGates min_mean_lower_bound fails on one value (no interval)", () => {
  const aggs = aggregates([scored("m", 1)]);
  assert.equal(aggs[0]!.ci95, null);
  const failures = checkGates({ m: { min_mean_lower_bound: 0 } }, aggs);
  assert.equal(failures.length, 1);
  assert.equal(failures[0]!.actual, null);
  assert.equal(
    failures[0]!.message,
    "m: no 95% interval low end to compare with min_mean_lower_bound 0: an interval needs scored and valid Scores from two examples, and only 1 has",
  );
  // Three epochs of one example are still one example: no interval, and
  // the message does not count its three Scores as enough.
  const epochs = aggregates(
    [1, 0.5, 0].map((v, i) =>
      scored("m", v, { example_id: "d#1", unit_id: `d#1@${i + 1}` })
    ),
  );
  assert.equal(epochs[0]!.ci95, null);
  const [failure] = checkGates({ m: { min_mean_lower_bound: 0 } }, epochs);
  assert.match(failure!.message, /from two examples, and only 1 has$/);
});

Deno.test("checkGates min_pass_rate counts errors as failures", () => {
  // passed 2 of (3 aggregatable + 1 error): 0.5; the skipped one is not a trial.
  const aggs = aggregates([
    scored("m", 1),
    scored("m", 1),
    scored("m", 0),
    errored("m", "scorer error: boom"),
    skipped("m"),
  ]);
  assert.deepEqual(checkGates({ m: { min_pass_rate: 0.5 } }, aggs), []);
  const [failure] = checkGates({ m: { min_pass_rate: 0.6 } }, aggs);
  assert.deepEqual(
    [failure!.gate, failure!.actual, failure!.message],
    ["min_pass_rate", 0.5, "m: pass rate 0.5 < min_pass_rate 0.6"],
  );
});

Deno.test("checkGates min_coverage compares the share of aggregatable Scores", () => {
  // 3 aggregatable of 5 (an error, an invalid one): 0.6
  const aggs = aggregates([
    scored("m", 1),
    scored("m", 0.5),
    scored("m", 0),
    scored("m", 1, { validity: "invalid" }),
    errored("m", "scorer error: boom"),
  ]);
  assert.deepEqual(checkGates({ m: { min_coverage: 0.6 } }, aggs), []);
  const [failure] = checkGates({ m: { min_coverage: 0.61 } }, aggs);
  assert.deepEqual(
    [failure!.gate, failure!.actual, failure!.message],
    ["min_coverage", 0.6, "m: coverage 0.6 < min_coverage 0.61"],
  );
});

Deno.test("checkGates max_errors holds at the bar and fails above it", () => {
  const aggs = aggregates([
    scored("m", 1),
    errored("m", "scorer error: a"),
    errored("m", "target error: b"),
  ]);
  assert.deepEqual(checkGates({ m: { max_errors: 2 } }, aggs), []);
  assert.deepEqual(checkGates({ m: { max_errors: 1 } }, aggs), [{
    metric: "m",
    gate: "max_errors",
    threshold: 1,
    actual: 2,
    message: "m: errors 2 > max_errors 1",
  }]);
  assert.deepEqual(
    checkGates({ m: { max_errors: 0 } }, aggregates([scored("m", 1)])),
    [],
  );
});

Deno.test("checkGates counts errors and blocked Scores each by name, both as pass-rate failures", () => {
  // 1 passed of (1 aggregatable + 1 error + 2 blocked) = 0.25.
  const aggs = aggregates([
    scored("m", 1),
    errored("m", "scorer error: a"),
    blocked("m", "target error: b"),
    blocked("m", "invalid case: c"),
  ]);
  assert.deepEqual(
    checkGates({ m: { max_errors: 1, max_blocked: 2 } }, aggs),
    [],
  );
  assert.deepEqual(checkGates({ m: { max_blocked: 1 } }, aggs), [{
    metric: "m",
    gate: "max_blocked",
    threshold: 1,
    actual: 2,
    message: "m: blocked 2 > max_blocked 1",
  }]);
  const [rate] = checkGates({ m: { min_pass_rate: 0.3 } }, aggs);
  assert.equal(rate!.actual, 0.25);
});

Deno.test("checkGates fails every threshold of a gated metric with no Scores", () => {
  const aggs = aggregates([scored("m", 1)]);
  const failures = checkGates(
    { ghost: { min_mean: 0.5, max_errors: 0 }, m: { min_mean: 0.5 } },
    aggs,
  );
  assert.deepEqual(
    failures.map((f) => [f.metric, f.gate, f.actual]),
    [["ghost", "min_mean", null], ["ghost", "max_errors", null]],
  );
  assert.match(failures[0]!.message, /^ghost: no Scores .*min_mean 0\.5/);
});

Deno.test("checkGates reports every failing threshold, metrics in order", () => {
  const aggs = aggregates([
    scored("b", 0.2),
    scored("b", 0.4),
    errored("b", "scorer error: x"),
    scored("a", 0.1),
    scored("a", 0.3),
  ]);
  const failures = checkGates({
    b: { min_mean: 0.5, min_pass_rate: 0.5, min_coverage: 0.9, max_errors: 0 },
    a: { min_mean: 0.5, max_errors: 0 },
  }, aggs);
  assert.deepEqual(failures.map((f) => `${f.metric} ${f.gate}`), [
    "a min_mean",
    "b min_mean",
    "b min_pass_rate",
    "b min_coverage",
    "b max_errors",
  ]);
  assert.deepEqual(checkGates({}, aggs), []);
});

Deno.test("checkGates prints figures close to a bar without rounding them onto it", () => {
  const aggs = aggregates([scored("m", 0.99999), scored("m", 0.99999)]);
  const [failure] = checkGates({ m: { min_mean: 1 } }, aggs);
  assert.equal(failure!.message, "m: mean 0.99999 < min_mean 1");
});

// --- the CLI ---------------------------------------------------------------

/** A suite of 4 replayed cases: exact_match 1 1 1 0 (mean 0.75, pass rate 0.75). */
async function withSuite(
  gates: string,
  fn: (dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_gates_" });
  try {
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      [
        { input: "a", expected: "x", output: "x" },
        { input: "b", expected: "y", output: "y" },
        { input: "c", expected: "z", output: "z" },
        { input: "d", expected: "w", output: "nope" },
      ].map((r) => JSON.stringify(r) + "\n").join(""),
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: data.jsonl
target: { type: replay }
scorers:
  - type: exact_match
gates:
${gates}`,
    );
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("cli run exits 1 and names metric, figure and threshold when a gate fails", async () => {
  await withSuite(
    `  exact_match:
    min_mean: 0.9
    min_pass_rate: 0.5
    max_errors: 0
`,
    async (dir) => {
      const out = await cli(["run", "suite.yaml"], dir);
      assert.equal(out.code, 1, out.stderr);
      assert.equal(out.stdout.trim().split("\n").length, 4, "Scores still out");
      const gateLines = out.stderr.split("\n").filter((l) =>
        l.includes("gate failed:")
      );
      assert.equal(gateLines.length, 1, out.stderr);
      assert.match(gateLines[0]!, /exact_match/);
      assert.match(gateLines[0]!, /mean 0\.75\b/);
      assert.match(gateLines[0]!, /min_mean 0\.9\b/);
    },
  );
});

Deno.test("cli run lists every failing gate of a metric, the ones that hold left out", async () => {
  // A gate on a metric no scorer gives is a config error (config_test.ts).
  await withSuite(
    `  exact_match:
    min_mean_lower_bound: 0.5
    min_coverage: 1
    min_pass_rate: 0.9
`,
    async (dir) => {
      const out = await cli(["run", "suite.yaml"], dir);
      assert.equal(out.code, 1, out.stderr);
      const gateLines = out.stderr.split("\n").filter((l) =>
        l.includes("gate failed:")
      );
      // exact_match 1 1 1 0: mean 0.75, sd 0.5, stderr 0.25, low end
      // 0.75 − 3.182 × 0.25 = −0.0455, clamped to exact_match's range 0..1:
      // 0 < 0.5; coverage 1 holds.
      assert.equal(gateLines.length, 2, out.stderr);
      assert.match(
        gateLines[0]!,
        /exact_match: 95% interval low end 0 < min_mean_lower_bound 0\.5/,
      );
      assert.match(
        gateLines[1]!,
        /exact_match: pass rate 0\.75 < min_pass_rate 0\.9/,
      );
    },
  );
});

Deno.test("cli run exits 0 when every gate holds", async () => {
  await withSuite(
    `  exact_match:
    min_mean: 0.75
    min_pass_rate: 0.75
    min_coverage: 1
    max_errors: 0
`,
    async (dir) => {
      const out = await cli(["run", "suite.yaml"], dir);
      assert.equal(out.code, 0, out.stderr);
      assert.doesNotMatch(out.stderr, /gate failed/);
    },
  );
});

Deno.test("cli run rejects an unknown gate key, naming it and its line", async () => {
  await withSuite(
    `  exact_match:
    min_mean: 0.5
    min_meen: 0.9
`,
    async (dir) => {
      const out = await cli(["run", "suite.yaml"], dir);
      assert.equal(out.code, 2);
      assert.equal(out.stdout, "", "nothing runs");
      assert.match(
        out.stderr,
        /Invalid config "suite\.yaml" line 8: unknown key "gates\.exact_match\.min_meen"/,
      );
    },
  );
});

Deno.test("cli run rejects a gate of the wrong type, naming its line", async () => {
  await withSuite(
    `  exact_match:
    min_pass_rate: 1.5
`,
    async (dir) => {
      const out = await cli(["run", "suite.yaml"], dir);
      assert.equal(out.code, 2);
      assert.match(
        out.stderr,
        /Invalid config "suite\.yaml" line 7: .*min_pass_rate/,
      );
    },
  );
});

Deno.test("nothingMeasured words a metric that measured nothing from the failure's fields, as its message starts, a matrix target's name first", () => {
  const ids = (target: string) => ({
    example_id: "d#1",
    unit_id: `d#1~${target}`,
  });
  const aggs = aggregates([
    { ...blocked("judge", "target error: down", ids("a")), target_name: "a" },
    { ...scored("judge", 1, ids("b")), target_name: "b" },
    { ...errored("judge", "scorer error: boom", ids("b")), target_name: "b" },
  ]);
  const failures = checkGates({}, aggs);
  assert.equal(failures.length, 1);
  const [failure] = failures;
  assert.equal(failure!.target_name, "a");
  assert.deepEqual(failure!.unmeasured, {
    scores: 1,
    errors: 0,
    blocked: 1,
    invalid: 0,
  });
  const text = nothingMeasured({
    ...failure!,
    unmeasured: failure!.unmeasured!,
  });
  assert.equal(text, "a: judge: nothing measured: 1 blocked of 1 Score");
  assert.ok(failure!.message.startsWith(`${text}; no gate names it`));
});

Deno.test("nothingMeasured lists three kinds of failure with a comma, says one Score in the singular, and words counts with no failure", () => {
  const unmeasured = { scores: 4, errors: 2, blocked: 1, invalid: 1 };
  assert.equal(
    nothingMeasured({ metric: "judge", unmeasured }),
    "judge: nothing measured: 2 errors, 1 blocked and 1 invalid of 4 Scores",
  );
  assert.equal(
    nothingMeasured({
      metric: "m",
      unmeasured: { scores: 1, errors: 1, blocked: 0, invalid: 0 },
    }),
    "m: nothing measured: 1 error of 1 Score",
  );
  // A caller's own counts, none failed (checkGates never words such a
  // metric): no empty list before "of".
  assert.equal(
    nothingMeasured({
      metric: "m",
      unmeasured: { scores: 3, errors: 0, blocked: 0, invalid: 0 },
    }),
    "m: nothing measured: none of 3 Scores failed",
  );
});
