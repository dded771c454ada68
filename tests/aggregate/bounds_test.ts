/**
 * The statistics evalglass users expect beside ours: a bounded metric's t
 * interval clamped to its range (the unclamped one kept), the rule of three
 * at a pass rate of 0 or 1, and a small-n flag and warning. Every figure is
 * worked out by hand in the test; t quantiles are from a printed table.
 */

import assert from "node:assert/strict";
import {
  type Aggregate,
  Aggregator,
  blocked,
  errored,
  formatSummary,
  functionScorer,
  parseAggregate,
  type Score,
  scored,
  scoreUnits,
  valueRangesOf,
} from "../../mod.ts";
import { cli, cliWithStdin } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

// Student's t, two-sided 95% (0.975 quantile), from the table.
const T_DF2 = 4.302652730;
const T_DF3 = 3.182446305;
const T_DF4 = 2.776445105;

function close(actual: number | null | undefined, expected: number) {
  assert.ok(
    typeof actual === "number" && Math.abs(actual - expected) <= 1e-7,
    `expected ${expected}, got ${actual}`,
  );
}

function closePair(
  actual: [number, number] | null | undefined,
  expected: [number, number],
) {
  assert.ok(actual !== null && actual !== undefined, "expected an interval");
  close(actual[0], expected[0]);
  close(actual[1], expected[1]);
}

/** Scores of one metric, one per example `d#1`, `d#2`, ... */
function values(metric: string, xs: number[]): Score[] {
  return xs.map((x, i) =>
    scored(metric, x, { example_id: `d#${i + 1}`, unit_id: `d#${i + 1}` })
  );
}

function aggregateOf(
  scores: Score[],
  range?: [number, number],
): Aggregate {
  const aggregator = new Aggregator(
    range !== undefined ? { valueRange: () => range } : {},
  );
  for (const s of scores) aggregator.add(s);
  const [a, ...rest] = aggregator.results();
  assert.equal(rest.length, 0);
  return a!;
}

Deno.test("Aggregator clamps a 0..1 metric's t interval to 0..1 and keeps the unclamped one", () => {
  const a = aggregateOf(values("m", [1, 1, 1, 0.5]), [0, 1]);
  // mean = (1 + 1 + 1 + 0.5)/4 = 3.5/4 = 0.875
  // deviations 0.125, 0.125, 0.125, −0.375; squares 3 × 0.015625 + 0.140625 = 0.1875
  // variance = 0.1875/(4 − 1) = 0.0625, sd = 0.25, stderr = 0.25/√4 = 0.125
  // t(df 3) = 3.182446305, half = 3.182446305 × 0.125 = 0.397805788
  // unclamped = [0.875 − 0.397805788, 0.875 + 0.397805788] = [0.477194212, 1.272805788]
  // clamped to 0..1: [0.477194212, 1]
  assert.equal(a.mean, 0.875);
  assert.equal(a.stderr, 0.125);
  const half = T_DF3 * 0.125;
  closePair(a.ci95_unclamped, [0.875 - half, 0.875 + half]);
  closePair(a.ci95_unclamped, [0.477194212, 1.272805788]);
  assert.equal(a.ci95![1], 1);
  close(a.ci95![0], 0.477194212);
  assert.deepEqual(a.value_range, [0, 1]);
  // 4 values: fewer than 5.
  assert.equal(a.small_n, true);
  // Every value >= 0.5 passes: 4 of 4, pass rate 1. Rule of three on n = 4:
  // the fail rate is at most 3/4, so the pass rate at least 1 − 3/4 = 0.25.
  assert.equal(a.pass_rate, 1);
  assert.deepEqual(a.pass_rate_rule_of_three, [0.25, 1]);
  // Without a declared range nothing is clamped: the same figures, ci95 = unclamped.
  const free = aggregateOf(values("m", [1, 1, 1, 0.5]));
  assert.equal(free.value_range, null);
  assert.deepEqual(free.ci95, a.ci95_unclamped);
  assert.deepEqual(free.ci95_unclamped, a.ci95_unclamped);
});

Deno.test("Aggregator clamps the low end at 0 and a 1..5 metric's high end at 5", () => {
  // 0..1: values 0, 0, 0.5 → mean 0.5/3 = 0.166666667
  // deviations −1/6, −1/6, 1/3; squares 1/36 + 1/36 + 4/36 = 6/36 = 1/6
  // variance = (1/6)/2 = 1/12, stderr = √(1/12 / 3) = √(1/36) = 1/6
  // half = 4.302652730/6 = 0.717108788 → [−0.550442122, 0.883775455] → [0, 0.883775455]
  const low = aggregateOf(values("m", [0, 0, 0.5]), [0, 1]);
  close(low.mean, 1 / 6);
  close(low.stderr, 1 / 6);
  closePair(low.ci95_unclamped, [1 / 6 - T_DF2 / 6, 1 / 6 + T_DF2 / 6]);
  closePair(low.ci95_unclamped, [-0.550442122, 0.883775455]);
  assert.equal(low.ci95![0], 0);
  close(low.ci95![1], 0.883775455);
  // 1..5: values 5, 5, 4 → mean 14/3 = 4.666666667
  // deviations 1/3, 1/3, −2/3; squares 1/9 + 1/9 + 4/9 = 2/3
  // variance = (2/3)/2 = 1/3, stderr = √(1/3 / 3) = 1/3
  // half = 4.302652730/3 = 1.434217577 → [3.232449090, 6.100884244] → [3.232449090, 5]
  const stars = aggregateOf(values("stars", [5, 5, 4]), [1, 5]);
  close(stars.mean, 14 / 3);
  close(stars.stderr, 1 / 3);
  closePair(stars.ci95_unclamped, [3.232449090, 6.100884244]);
  close(stars.ci95![0], 3.232449090);
  assert.equal(stars.ci95![1], 5);
  assert.deepEqual(stars.value_range, [1, 5]);
});

Deno.test("Aggregator leaves an interval inside the range as it is", () => {
  // values 0, 0.1, 0.2, 0.3, 0.4 → mean 1.0/5 = 0.2
  // deviations −0.2, −0.1, 0, 0.1, 0.2; squares sum 0.04 + 0.01 + 0 + 0.01 + 0.04 = 0.1
  // variance = 0.1/4 = 0.025, stderr = √(0.025/5) = √0.005 = 0.070710678
  // half = 2.776445105 × 0.070710678 = 0.196324316 → [0.003675684, 0.396324316]: inside 0..1
  const a = aggregateOf(
    [
      ...values("m", [0, 0.1, 0.2, 0.3, 0.4]),
      errored("m", "scorer error: boom", { example_id: "d#6", unit_id: "d#6" }),
    ],
    [0, 1],
  );
  close(a.mean, 0.2);
  close(a.stderr, Math.sqrt(0.005));
  closePair(a.ci95, [
    0.2 - T_DF4 * Math.sqrt(0.005),
    0.2 + T_DF4 * Math.sqrt(0.005),
  ]);
  closePair(a.ci95, [0.003675684, 0.396324316]);
  assert.deepEqual(a.ci95, a.ci95_unclamped);
  // 5 values: not small.
  assert.equal(a.small_n, false);
  // No value reaches 0.5 and the error fails: 0 passed of n = 5 aggregatable + 1 error = 6.
  // Rule of three: the pass rate is at most 3/6 = 0.5.
  assert.equal(a.pass_rate, 0);
  assert.deepEqual(a.pass_rate_rule_of_three, [0, 0.5]);
});

Deno.test("Aggregator's rule of three clamps 3/n to 1 below n = 3 and is null between 0 and 1", () => {
  // n = 1, failed: 3/1 = 3 > 1 → [0, 1]. n = 2, both passed: 1 − 3/2 = −0.5 < 0 → [0, 1].
  assert.deepEqual(
    aggregateOf(values("m", [0])).pass_rate_rule_of_three,
    [0, 1],
  );
  assert.deepEqual(
    aggregateOf(values("m", [1, 1])).pass_rate_rule_of_three,
    [0, 1],
  );
  // n = 3, all passed: 1 − 3/3 = 0 → [0, 1]; n = 10, none passed: 3/10 → [0, 0.3].
  assert.deepEqual(
    aggregateOf(values("m", [1, 1, 1])).pass_rate_rule_of_three,
    [0, 1],
  );
  assert.deepEqual(
    aggregateOf(values("m", Array(10).fill(0))).pass_rate_rule_of_three,
    [0, 0.3],
  );
  // n is the pass rate's denominator, aggregatable + errors + blocked:
  // 10 failing values and 2 blocked Scores, n = 12 → 3/12 = 0.25.
  const withBlocked = aggregateOf([
    ...values("m", Array(10).fill(0)),
    blocked("m", "target error: HTTP 503", {
      code: "target.error",
      example_id: "d#11",
    }),
    blocked("m", "target error: HTTP 503", {
      code: "target.error",
      example_id: "d#12",
    }),
  ]);
  assert.equal(withBlocked.pass_rate, 0);
  assert.deepEqual(withBlocked.pass_rate_rule_of_three, [0, 0.25]);
  // 1 of 2: neither 0 nor 1.
  assert.equal(
    aggregateOf(values("m", [1, 0])).pass_rate_rule_of_three,
    null,
  );
  // Only errors: n = 2, none passed → [0, 1]; no Score that passes or fails: null.
  const errors = aggregateOf([
    errored("m", "scorer error: a", { example_id: "d#1" }),
    errored("m", "scorer error: b", { example_id: "d#2" }),
  ]);
  assert.deepEqual(errors.pass_rate_rule_of_three, [0, 1]);
  assert.equal(errors.small_n, false, "no mean: nothing to warn about");
});

Deno.test("Aggregator's rule of three counts examples, not their epochs", () => {
  const epochs = (value: number, examples: number, each: number) =>
    Array.from({ length: examples }, (_, e) =>
      Array.from(
        { length: each },
        (_, k) =>
          scored("m", value, {
            example_id: `d#${e + 1}`,
            unit_id: `d#${e + 1}@${k + 1}`,
          }),
      )).flat();
  // 10 examples × 5 epochs, every one passing: 50 Scores, but 10
  // independent questions. No failure in 10: at least 1 − 3/10 = 0.7, not
  // 1 − 3/50 = 0.94.
  const all = aggregateOf(epochs(1, 10, 5));
  assert.equal(all.pass_rate, 1);
  assert.equal(all.aggregatable, 50);
  closePair(all.pass_rate_rule_of_three, [0.7, 1]);
  // None passing: at most 3/10, not 3/50.
  closePair(aggregateOf(epochs(0, 10, 5)).pass_rate_rule_of_three, [0, 0.3]);
  // Epochs of different counts, and an example whose every epoch erred:
  // 4 examples (3 + 1 + 2 + 2 errors = 8 trials), none passed: 3/4.
  const uneven = aggregateOf([
    ...epochs(0, 2, 3).slice(0, 4),
    ...[1, 2].map((k) =>
      errored("m", "scorer error: boom", {
        example_id: "d#3",
        unit_id: `d#3@${k}`,
      })
    ),
    ...[1, 2].map((k) =>
      scored("m", 0, { example_id: "d#4", unit_id: `d#4@${k}` })
    ),
  ]);
  assert.equal(uneven.pass_rate, 0);
  assert.equal(uneven.aggregatable + uneven.errors, 8);
  closePair(uneven.pass_rate_rule_of_three, [0, 0.75]);
  // Shards' lines merged: the examples add up, the bound is the whole's.
  const scores = epochs(1, 10, 5);
  const viaJson = new Aggregator();
  for (const part of [scores.slice(0, 15), scores.slice(15)]) {
    viaJson.mergeAggregate(
      parseAggregate(JSON.parse(JSON.stringify(aggregateOf(part)))),
    );
  }
  closePair(viaJson.results()[0]!.pass_rate_rule_of_three, [0.7, 1]);
});

Deno.test("Aggregator's mean_bounds put the failures at the ends of the metric's range", () => {
  const stars = [
    scored("stars", 5, { example_id: "d#1", unit_id: "d#1" }),
    scored("stars", 4, { example_id: "d#2", unit_id: "d#2" }),
    errored("stars", "scorer error: boom", {
      example_id: "d#3",
      unit_id: "d#3",
    }),
  ];
  // 1..5: the error as 1 gives (5 + 4 + 1)/3 = 10/3, as 5 gives 14/3; the
  // mean 4.5 lies between. (As 0 and 1 it gave [3, 3.333], below the mean.)
  const a = aggregateOf(stars, [1, 5]);
  assert.equal(a.mean, 4.5);
  closePair(a.mean_bounds, [10 / 3, 14 / 3]);
  // −1..1 (semantic_similarity): −0.8 and an error → [(−0.8 − 1)/2, (−0.8 + 1)/2].
  const similar = aggregateOf([
    scored("sim", -0.8, { example_id: "d#1", unit_id: "d#1" }),
    blocked("sim", "target error: HTTP 503", { example_id: "d#2" }),
  ], [-1, 1]);
  closePair(similar.mean_bounds, [-0.9, 0.1]);
  // An example's epochs: 5, then an error → that example's bounds are
  // (5 + 1)/2 and (5 + 5)/2; with d#2's 4: [(3 + 4)/2, (5 + 4)/2].
  const epochs = aggregateOf([
    scored("stars", 5, { example_id: "d#1", unit_id: "d#1@1" }),
    errored("stars", "scorer error: boom", {
      example_id: "d#1",
      unit_id: "d#1@2",
    }),
    scored("stars", 4, { example_id: "d#2", unit_id: "d#2@1" }),
    scored("stars", 4, { example_id: "d#2", unit_id: "d#2@2" }),
  ], [1, 5]);
  closePair(epochs.mean_bounds, [3.5, 4.5]);
  // 0..1 and no range: the failures as 0 and 1, as before.
  closePair(aggregateOf(stars).mean_bounds, [3, 10 / 3]);
  // Shards' lines merged keep their range: the same bounds.
  const viaJson = new Aggregator();
  for (const part of [stars.slice(0, 1), stars.slice(1)]) {
    viaJson.mergeAggregate(
      parseAggregate(JSON.parse(JSON.stringify(aggregateOf(part, [1, 5])))),
    );
  }
  assert.deepStrictEqual(viaJson.results(), [a]);
});

Deno.test("Aggregator flags fewer than 5 values as small_n, counted by example", () => {
  const ids = (e: number, k: number) => ({
    example_id: `d#${e}`,
    unit_id: `d#${e}@${k}`,
  });
  // 4 examples × 3 epochs: 12 values, but the mean rests on 4 example means.
  const epochs = [1, 2, 3, 4].flatMap((e) =>
    [1, 2, 3].map((k) => scored("m", 1, ids(e, k)))
  );
  const a = aggregateOf(epochs);
  assert.equal(a.aggregatable, 12);
  assert.equal(a.examples, 4);
  assert.equal(a.small_n, true);
  assert.equal(aggregateOf(values("m", [1, 1, 1, 1, 1])).small_n, false);
  assert.equal(aggregateOf(values("m", [1])).small_n, true);
});

Deno.test("Aggregator drops a declared range that an example's mean breaks: nothing is clamped", () => {
  const a = aggregateOf(values("m", [1, 1.5, 1]), [0, 1]);
  assert.equal(a.value_range, null);
  assert.deepEqual(a.ci95, a.ci95_unclamped);
  assert.ok(a.ci95![1] > 1);
  // The check is per example (what the interval is about): epochs 1.5 and
  // 0.5 average 1, within 0..1.
  const epochs = aggregateOf([
    scored("m", 1.5, { example_id: "d#1", unit_id: "d#1@1" }),
    scored("m", 0.5, { example_id: "d#1", unit_id: "d#1@2" }),
    scored("m", 1, { example_id: "d#2", unit_id: "d#2@1" }),
  ], [0, 1]);
  assert.deepEqual(epochs.value_range, [0, 1]);
  // A mean that rounds past the end is still within it: 3 × 0.1 sums to
  // 0.30000000000000004, / 3 = 0.10000000000000002 > 0.1.
  const rounding = aggregateOf([
    ...[1, 2, 3].map((k) =>
      scored("m", 0.1, { example_id: "d#1", unit_id: `d#1@${k}` })
    ),
    scored("m", 0, { example_id: "d#2", unit_id: "d#2@1" }),
  ], [0, 0.1]);
  assert.ok((0.1 + 0.1 + 0.1) / 3 > 0.1);
  assert.deepEqual(rounding.value_range, [0, 0.1]);
  assert.ok(rounding.ci95![1] <= 0.1);
});

Deno.test("Aggregator shards with a declared range merge into exactly the whole, through NDJSON too", () => {
  const scores = values("m", [1, 1, 0.5, 1, 0, 1, 1, 0.75]);
  const whole = aggregateOf(scores, [0, 1]);
  assert.ok(whole.ci95![1] === 1 && whole.ci95_unclamped![1] > 1);
  for (const cut of [1, 3, 4, 7]) {
    const parts = [scores.slice(0, cut), scores.slice(cut)].map((part) => {
      const aggregator = new Aggregator({ valueRange: () => [0, 1] });
      for (const s of part) aggregator.add(s);
      return aggregator;
    });
    const merged = new Aggregator({ valueRange: () => [0, 1] });
    for (const part of parts) merged.merge(part);
    assert.deepStrictEqual(merged.results(), [whole], `cut ${cut}`);
    // Lines of shards merged by an aggregator that declares nothing itself.
    const viaJson = new Aggregator();
    for (const part of parts) {
      for (const line of part.results()) {
        viaJson.mergeAggregate(
          parseAggregate(JSON.parse(JSON.stringify(line))),
        );
      }
    }
    assert.deepStrictEqual(viaJson.results(), [whole], `cut ${cut}`);
  }
  // A shard line without value_range (written before it) declares none:
  // the merged range is unknown, nothing clamped.
  const old = JSON.parse(JSON.stringify(aggregateOf(scores.slice(4), [0, 1])));
  delete old.value_range;
  const mixed = new Aggregator({ valueRange: () => [0, 1] });
  for (const s of scores.slice(0, 4)) mixed.add(s);
  mixed.mergeAggregate(parseAggregate(old));
  const [m] = mixed.results();
  assert.equal(m!.value_range, null);
  assert.deepEqual(m!.ci95, whole.ci95_unclamped);
});

Deno.test("parseAggregate reads value_range and names it when wrong", () => {
  const line = JSON.parse(
    JSON.stringify(aggregateOf(values("m", [1, 0]), [0, 1])),
  );
  assert.deepEqual(parseAggregate(line).value_range, [0, 1]);
  for (const bad of ["0..1", [1, 0], [0], [0, null]]) {
    assert.throws(
      () => parseAggregate({ ...line, value_range: bad }),
      (e: unknown) =>
        e instanceof SyntaxError &&
        e.message.startsWith(
          '"value_range": must be null or two finite numbers, low to high, not ',
        ),
      JSON.stringify(bad),
    );
  }
});

Deno.test("functionScorer declares its range, and a value outside it is scored but invalid", async () => {
  const stars = functionScorer("stars", (unit) => Number(unit.output), {
    range: [1, 5],
  });
  assert.deepEqual(stars.range, [1, 5]);
  assert.equal(functionScorer("free", () => 1).range, undefined);
  const units = ["5", "4", "9"].map((output, i) => ({
    example_id: `d#${i + 1}`,
    unit_id: `d#${i + 1}`,
    input: "q",
    output,
  }));
  const scores = await Array.fromAsync(
    ReadableStream.from(units).pipeThrough(scoreUnits([stars])),
  );
  assert.deepEqual(
    scores.map((s) => [s.value, s.validity]),
    [[5, "valid"], [4, "valid"], [9, "invalid"]],
  );
  assert.match(
    JSON.stringify(scores[2]!.diagnostics),
    /the value 9 is outside the declared range 1\.\.5/,
  );
  // Aggregated with the scorers' ranges: 5 and 4 (the 9 is not aggregatable).
  // mean 4.5, sd √0.5, stderr √0.5/√2 = 0.5, half 12.706204736 × 0.5 = 6.353102368
  // → [−1.853102368, 10.853102368], clamped to [1, 5].
  const aggregator = new Aggregator({ valueRange: valueRangesOf([stars]) });
  for (const s of scores) aggregator.add(s);
  const [a] = aggregator.results();
  assert.equal(a!.mean, 4.5);
  assert.equal(a!.stderr, 0.5);
  closePair(a!.ci95_unclamped, [-1.853102368, 10.853102368]);
  assert.deepEqual(a!.ci95, [1, 5]);
  assert.throws(
    () => functionScorer("bad", () => 1, { range: [1, 0] }),
    RangeError,
  );
});

Deno.test("formatSummary shows a clamped interval as [low, high], the rule of three, and a small-n warning", async () => {
  const aggregator = new Aggregator({ valueRange: () => [0, 1] });
  for (const s of values("clamped", [1, 1, 1, 0.5])) aggregator.add(s);
  for (const s of values("free", [0, 0.1, 0.2, 0.3, 0.4])) aggregator.add(s);
  const text = await formatSummary(aggregator.results());
  const lines = text.split("\n");
  // clamped: 0.875 [0.477, 1.000] (see above); pass rate 100% ≥ 1 − 3/4 = 25%.
  assert.match(
    lines[1]!,
    /^clamped\s+0\.875 \[0\.477, 1\.000\]\s+–\s+100\.0% \(≥ 25\.0%\)\s+100\.0% \(4\/4\)\s+0\s+0\s+0\s+0$/,
  );
  // free: 0.200 ± 0.196 (inside 0..1: symmetric); pass rate 0% ≤ 3/5 = 60%.
  assert.match(
    lines[2]!,
    /^free\s+0\.200 ± 0\.196\s+–\s+0\.0% \(≤ 60\.0%\)\s+100\.0% \(5\/5\)\s+0\s+0\s+0\s+0$/,
  );
  assert.deepEqual(lines.slice(3), [
    'warning: the mean of "clamped" rests on 4 values (fewer than 5): read its interval as a description of this sample, not a prediction',
  ]);
});

Deno.test("formatSummary shows no rule-of-three bound up to 3 examples, where it is clamped to 0..1 and bounds nothing", async () => {
  const aggregator = new Aggregator({ valueRange: () => [0, 1] });
  // 3 examples: 1 − 3/3 = 0 and 3/3 = 1; 1 example: clamped from −2 and 3.
  for (const s of values("all", [1, 1, 1])) aggregator.add(s);
  for (const s of values("none", [0, 0, 0])) aggregator.add(s);
  for (const s of values("one", [1])) aggregator.add(s);
  const lines = (await formatSummary(aggregator.results())).split("\n");
  const cells = lines.slice(1, 4).map((line) => line.split(/\s{2,}/)[3]);
  assert.deepEqual(cells, ["100.0%", "0.0%", "100.0%"]);
  assert.doesNotMatch(lines.join("\n"), /≥ 0\.0%|≤ 100\.0%/);
});

// --- the command line ---------------------------------------------------------

function scoreLines(scores: Score[]): string {
  return scores.map((s) => JSON.stringify(s) + "\n").join("");
}

function aggregates(text: string): Aggregate[] {
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

/** The CLI in `dir` with `input` on stdin (tests/_cli.ts takes `dir` first). */
const withStdin = (args: string[], input: string, dir: string) =>
  cliWithStdin(args, dir, input);

const CLAMPED = values("clamped", [1, 1, 1, 0.5]);
const FREE = values("free", [0, 0.1, 0.2, 0.3, 0.4]);

Deno.test("cli aggregate --range clamps the interval of the metrics it names, or of all", async () => {
  await withTempDir(async (dir) => {
    const input = scoreLines([...CLAMPED, ...FREE]);
    const half = T_DF3 * 0.125; // clamped: mean 0.875, stderr 0.125 (see above)
    const all = await withStdin(["aggregate", "--range", "0..1"], input, dir);
    assert.deepEqual([all.code, all.stderr], [0, ""]);
    const [c, f] = aggregates(all.stdout);
    assert.deepEqual(c!.value_range, [0, 1]);
    closePair(c!.ci95_unclamped, [0.875 - half, 0.875 + half]);
    closePair(c!.ci95, [0.875 - half, 1]);
    assert.deepEqual(c!.pass_rate_rule_of_three, [0.25, 1]);
    assert.equal(c!.small_n, true);
    assert.deepEqual(f!.value_range, [0, 1]);
    assert.deepEqual(f!.ci95, f!.ci95_unclamped);
    assert.deepEqual(f!.pass_rate_rule_of_three, [0, 0.6]);
    assert.equal(f!.small_n, false);
    // Only the metric named: the other keeps no range.
    const one = await withStdin(
      ["aggregate", "--range", "clamped=0..1"],
      input,
      dir,
    );
    assert.deepEqual(aggregates(one.stdout), [c, { ...f!, value_range: null }]);
    // Scores do not carry a range: without --range nothing is clamped.
    const none = await withStdin(["aggregate"], input, dir);
    const [c0] = aggregates(none.stdout);
    assert.equal(c0!.value_range, null);
    assert.deepEqual(c0!.ci95, c!.ci95_unclamped);
  });
});

Deno.test("cli aggregate merges shards' lines with their ranges into exactly the whole", async () => {
  await withTempDir(async (dir) => {
    const scores = [...CLAMPED, ...FREE];
    const whole = await withStdin(
      ["aggregate", "--range", "0..1"],
      scoreLines(scores),
      dir,
    );
    const shardLines = await Promise.all(
      [scores.slice(0, 2), scores.slice(2, 6), scores.slice(6)].map((part) =>
        withStdin(["aggregate", "--range", "0..1"], scoreLines(part), dir)
      ),
    );
    const merged = await withStdin(
      ["aggregate"],
      shardLines.map((o) => o.stdout).join(""),
      dir,
    );
    assert.deepEqual([merged.code, merged.stderr], [0, ""]);
    assert.equal(merged.stdout, whole.stdout);
  });
});

Deno.test("cli aggregate rejects a --range that is not one, exit 2", async () => {
  await withTempDir(async (dir) => {
    for (const bad of ["1..0", "0-1", "m=", "a..b", "0..", "..1"]) {
      const out = await withStdin(["aggregate", "--range", bad], "", dir);
      assert.equal(out.code, 2, bad);
      assert.equal(
        out.stderr.split("\n")[0],
        `evalpipe: --range ${
          JSON.stringify(bad)
        } is not a range: write LOW..HIGH or METRIC=LOW..HIGH, low to high, e.g. 0..1`,
      );
    }
    // One metric's range twice, or every metric's twice: which was meant?
    for (
      const [flags, message] of [
        [
          ["m=0..1", "m=0..2"],
          `--range "m=0..2": the range of "m" is given twice (0..1 and 0..2); give it once`,
        ],
        [
          ["0..1", "m=0..5", "0..1"],
          `--range "0..1": the range of every metric is given twice (0..1 and 0..1); give it once`,
        ],
      ] as const
    ) {
      const out = await withStdin(
        ["aggregate", ...flags.flatMap((f) => ["--range", f])],
        "",
        dir,
      );
      assert.equal(out.code, 2, out.stderr);
      assert.equal(out.stderr.split("\n")[0], `evalpipe: ${message}`);
    }
  });
});

Deno.test("cli run clamps its scorers' intervals to 0..1 in the summary, the record and view", async () => {
  await withTempDir(async (dir) => {
    // exact_match: 1 1 1 0; contains: 1 1 1 1 (the last output holds "d").
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      [["a", "a"], ["b", "b"], ["c", "c"], ["d", "d!"]].map(([e, o]) =>
        JSON.stringify({ input: "q", expected: e, output: o })
      ).join("\n") + "\n",
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: cases.jsonl\ntarget: { type: replay }\n" +
        "scorers: [{ type: exact_match }, { type: contains }]\n",
    );
    const out = await cli(["run", "suite.yaml", "--record", "rec.json"], dir);
    assert.equal(out.code, 0, out.stderr);
    // exact_match: mean 3/4 = 0.75; deviations 0.25 × 3 and −0.75; squares
    // 3 × 0.0625 + 0.5625 = 0.75; variance 0.75/3 = 0.25; stderr 0.5/√4 = 0.25;
    // half 3.182446305 × 0.25 = 0.795611576 → [−0.045611576, 1.545611576] → [0, 1].
    // Pass rate 3/4: no rule of three.
    // contains: all 1: stderr 0, interval [1, 1]; pass rate 4/4 ≥ 1 − 3/4 = 25%.
    const summary = out.stderr.split("\n");
    const at = summary.findIndex((l) => l.startsWith("metric "));
    assert.match(
      summary[at + 1]!,
      /^contains\s+1\.000 ± 0\.000\s+–\s+100\.0% \(≥ 25\.0%\)\s+100\.0% \(4\/4\)\s+0\s+0\s+0\s+0$/,
    );
    assert.match(
      summary[at + 2]!,
      /^exact_match\s+0\.750 \[0\.000, 1\.000\]\s+–\s+75\.0%\s+100\.0% \(4\/4\)\s+0\s+0\s+0\s+0$/,
    );
    const warning = (m: string) =>
      `warning: the mean of "${m}" rests on 4 values (fewer than 5): read its interval as a description of this sample, not a prediction`;
    assert.deepEqual(summary.slice(at + 3, at + 5), [
      warning("contains"),
      warning("exact_match"),
    ]);
    // The Scores on stdout stay data: no warning there.
    assert.ok(!out.stdout.includes("warning"));
    const record = JSON.parse(await Deno.readTextFile(`${dir}/rec.json`));
    assert.deepEqual(record.value_ranges, {
      exact_match: [0, 1],
      contains: [0, 1],
    });
    const exact = record.aggregates.find((a: Aggregate) =>
      a.metric === "exact_match"
    );
    assert.deepEqual(exact.ci95, [0, 1]);
    closePair(exact.ci95_unclamped, [0.75 - T_DF3 * 0.25, 0.75 + T_DF3 * 0.25]);
    closePair(exact.ci95_unclamped, [-0.045611576, 1.545611576]);
    // `aggregate --range 0..1` of the Scores gives the record's aggregates.
    const again = await withStdin(
      ["aggregate", "--range", "0..1"],
      out.stdout,
      dir,
    );
    assert.deepEqual(aggregates(again.stdout), record.aggregates);
    // `view` of the record clamps as the run did.
    const view = await cli(["view", "rec.json"], dir);
    assert.equal(view.code, 0, view.stderr);
    assert.match(view.stdout, /^exact_match\s+0\.750 \[0\.000, 1\.000\]/m);
  });
});
