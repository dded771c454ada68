import assert from "node:assert/strict";
import {
  type Aggregate,
  aggregate,
  Aggregator,
  blocked,
  errored,
  notApplicable,
  parseAggregate,
  type Score,
  scored,
  ScoreOrderError,
  skipped,
} from "../../mod.ts";
import { ExactSum } from "../../src/aggregate/exact_sum.ts";
import { tCritical95, wilson95 } from "../../src/aggregate/stats.ts";
import { cli } from "../_cli.ts";

function close(
  actual: number | null | undefined,
  expected: number,
  tol = 1e-9,
) {
  assert.ok(
    typeof actual === "number" && Math.abs(actual - expected) <= tol,
    `expected ${expected} ± ${tol}, got ${actual}`,
  );
}

function closePair(
  actual: [number, number] | null | undefined,
  expected: [number, number],
  tol = 1e-9,
) {
  assert.ok(actual !== null && actual !== undefined, "expected an interval");
  close(actual[0], expected[0], tol);
  close(actual[1], expected[1], tol);
}

function aggregateAll(
  scores: Iterable<Score>,
  options: ConstructorParameters<typeof Aggregator>[0] = {},
): Aggregator {
  const agg = new Aggregator(options);
  for (const s of scores) agg.add(s);
  return agg;
}

Deno.test("tCritical95 matches Student's t table values", () => {
  const table: [number, number][] = [
    [1, 12.706],
    [2, 4.303],
    [9, 2.262],
    [29, 2.045],
    [1000, 1.962],
  ];
  for (const [df, t] of table) {
    assert.equal(Math.round(tCritical95(df) * 1000) / 1000, t, `df ${df}`);
  }
  // Larger df approaches the normal quantile, from above.
  assert.ok(tCritical95(1e6) > 1.95996 && tCritical95(1e6) < 1.96);
});

Deno.test("wilson95 gives the Wilson interval for 8 of 10 and 2 of 4", () => {
  // z = 1.959964, z² = 3.841459.
  // 8 of 10: p = 0.8
  //   denom  = 1 + z²/n             = 1 + 0.3841459          = 1.3841459
  //   centre = p + z²/(2n)          = 0.8 + 0.1920729        = 0.9920729
  //   margin = z·√(p(1−p)/n + z²/4n²) = 1.959964·√(0.016 + 0.0096036)
  //          = 1.959964·0.1600114                          = 0.3136166
  //   low = (0.9920729 − 0.3136166)/1.3841459 = 0.490162
  //   high = (0.9920729 + 0.3136166)/1.3841459 = 0.943318
  closePair(wilson95(8, 10), [0.490162, 0.943318], 1e-6);
  // 2 of 4: p = 0.5
  //   denom = 1 + 0.9603647 = 1.9603647, centre = 0.5 + 0.4801824 = 0.9801824
  //   margin = 1.959964·√(0.0625 + 0.0600228) = 1.959964·0.3500326 = 0.6860512
  //   low = 0.2941312/1.9603647 = 0.150039, high = 1.6662336/1.9603647 = 0.849961
  closePair(wilson95(2, 4), [0.150039, 0.849961], 1e-6);
  // The interval stays inside 0..1 at the edges.
  const [low0] = wilson95(0, 5);
  const [, high5] = wilson95(5, 5);
  assert.equal(low0, 0);
  assert.equal(high5, 1);
});

Deno.test("Aggregator averages aggregatable Scores only and counts the rest", () => {
  const agg = aggregateAll([
    skipped("zeta"),
    scored("accuracy", 0, { passed: false }),
    scored("brevity", 0.8),
    scored("accuracy", 0.5),
    errored("accuracy", "scorer error: boom"),
    blocked("accuracy", "target error: HTTP 503"),
    skipped("accuracy"),
    notApplicable("accuracy"),
    // Measured but not trustworthy: neither its value nor its verdict counts.
    scored("accuracy", 0.9, { validity: "invalid", passed: true }),
    scored("accuracy", 1),
    blocked("brevity", "target error: timeout"),
  ]);
  const [accuracy, brevity, zeta, ...rest] = agg.results();
  assert.equal(rest.length, 0);
  // accuracy: values 0, 0.5, 1 (aggregatable), 1 error, 1 blocked, 1 skipped,
  //   1 non_evaluable, 1 invalid.
  //   n = 8, mean = (0 + 0.5 + 1)/3 = 0.5
  //   sample variance = ((0−0.5)² + 0² + (1−0.5)²)/(3−1) = 0.5/2 = 0.25
  //   stderr = √(0.25/3) = √0.0833333 = 0.2886751
  //   t(df 2) = 4.3026527, half width = 4.3026527 · 0.2886751 = 1.2420689
  //   ci95 = [0.5 − 1.2420689, 0.5 + 1.2420689] = [−0.7420689, 1.7420689]
  //   passed = 2 (0.5 and 1; the invalid 0.9 is not trusted)
  //   pass_rate = 2 / (3 aggregatable + 1 error + 1 blocked) = 0.4
  //   coverage = 3/8
  assert.deepEqual(
    {
      ...accuracy!,
      mean: 0,
      stderr: 0,
      ci95: null,
      ci95_unclamped: null,
      pass_rate_ci95: null,
    },
    {
      metric: "accuracy",
      n: 8,
      aggregatable: 3,
      errors: 1,
      blocked: 1,
      skipped: 1,
      non_evaluable: 1,
      not_applicable: 1,
      invalid: 1,
      coverage: 3 / 8,
      // Scores without ids are examples of their own: 3 with values.
      examples: 3,
      // Fewer than 5 values.
      small_n: true,
      // No scorer declared a range: nothing is clamped.
      value_range: null,
      mean: 0,
      stderr: 0,
      ci95: null,
      ci95_unclamped: null,
      passed: 2,
      pass_rate: 0.4,
      pass_rate_ci95: null,
      // Neither 0 nor 1: no rule of three.
      pass_rate_rule_of_three: null,
      // Failures as 0: (0 + 0.5 + 1 + 0 + 0)/5 = 0.3; as 1: (1.5 + 2)/5 = 0.7.
      mean_bounds: [0.3, 0.7],
      // One epoch each: pass@k and pass^k are the pass rate, 2 of 5 tried.
      pass_at_k: 0.4,
      pass_hat_k: 0.4,
      // One epoch each: more than half of one is that one, 2 of 5; no flaky.
      pass_majority: 0.4,
      flaky: 0,
      sums: accuracy!.sums,
    },
  );
  assert.equal(accuracy!.mean, 0.5);
  close(accuracy!.stderr, 0.2886751, 1e-7);
  closePair(accuracy!.ci95, [-0.7420689, 1.7420689], 1e-7);
  assert.deepEqual(accuracy!.ci95_unclamped, accuracy!.ci95);
  // Wilson(2, 5), z = 1.959964: centre (0.4 + z²/10)/(1 + z²/5) = 0.443448,
  //   half z·√(0.4·0.6/5 + z²/100)/(1 + z²/5) = 0.325828.
  closePair(accuracy!.pass_rate_ci95, [0.117620, 0.769276], 1e-6);
  // brevity: one value 0.8 (passes), one blocked.
  //   mean = 0.8; stderr and ci95 need two values: null
  //   pass_rate = 1/(1 + 1) = 0.5, coverage = 1/2
  assert.equal(brevity!.metric, "brevity");
  assert.equal(brevity!.mean, 0.8);
  assert.equal(brevity!.stderr, null);
  assert.equal(brevity!.ci95, null);
  assert.equal(brevity!.pass_rate, 0.5);
  assert.equal(brevity!.coverage, 0.5);
  // Failures as 0: 0.8/2 = 0.4; as 1: 1.8/2 = 0.9.
  assert.deepEqual(brevity!.mean_bounds, [0.4, 0.9]);
  // zeta: nothing aggregatable and nothing that passes or fails.
  assert.deepEqual(
    { ...zeta!, sums: null },
    {
      metric: "zeta",
      n: 1,
      aggregatable: 0,
      errors: 0,
      blocked: 0,
      skipped: 1,
      non_evaluable: 0,
      not_applicable: 0,
      invalid: 0,
      coverage: 0,
      examples: 0,
      // No mean, nothing to warn about.
      small_n: false,
      value_range: null,
      mean: null,
      stderr: null,
      ci95: null,
      ci95_unclamped: null,
      passed: 0,
      pass_rate: null,
      pass_rate_ci95: null,
      pass_rate_rule_of_three: null,
      mean_bounds: null,
      pass_at_k: null,
      pass_hat_k: null,
      pass_majority: null,
      flaky: 0,
      sums: null,
    },
  );
});

Deno.test("Aggregator gives the t interval and Wilson interval for 8 passes of 10", () => {
  const scores = [
    ...Array.from({ length: 8 }, () => scored("m", 1)),
    ...Array.from({ length: 2 }, () => scored("m", 0)),
  ];
  const [m] = aggregateAll(scores).results();
  // mean = 8/10 = 0.8
  // squared deviations: 8·(1−0.8)² + 2·(0−0.8)² = 8·0.04 + 2·0.64 = 0.32 + 1.28 = 1.6
  // sample variance = 1.6/9 = 0.1777…, stderr = √(0.1777…/10) = √0.01777… = 2/15 = 0.1333…
  // t(df 9) = 2.2621572, half width = 2.2621572 · 2/15 = 0.3016210
  // ci95 = [0.4983790, 1.1016210]
  assert.equal(m!.mean, 0.8);
  close(m!.stderr, 2 / 15, 1e-12);
  closePair(m!.ci95, [0.4983790, 1.1016210], 1e-7);
  assert.equal(m!.passed, 8);
  assert.equal(m!.pass_rate, 0.8);
  closePair(m!.pass_rate_ci95, [0.490162, 0.943318], 1e-6);
});

Deno.test("Aggregator mean is exact where naive summation drifts", () => {
  // 0.1 added ten times left to right is 0.9999999999999999 in doubles; the
  // exact sum of the ten doubles rounds to 1, so the mean is 0.1 itself.
  let naive = 0;
  for (let i = 0; i < 10; i++) naive += 0.1;
  assert.notEqual(naive / 10, 0.1);
  const [m] = aggregateAll(Array.from({ length: 10 }, () => scored("m", 0.1)))
    .results();
  assert.equal(m!.mean, 0.1);
  // Equal values: the variance is zero up to one rounding of the square sum.
  assert.ok(m!.stderr !== null && m!.stderr >= 0 && m!.stderr < 1e-9);
});

Deno.test("Aggregator gives null, never NaN, below two values and for empty metrics", () => {
  const agg = aggregateAll([scored("one", 0.3), errored("err", "boom")]);
  agg.mergeAggregate({
    metric: "empty",
    n: 0,
    aggregatable: 0,
    errors: 0,
    blocked: 0,
    skipped: 0,
    non_evaluable: 0,
    not_applicable: 0,
    invalid: 0,
    examples: 0,
    passed: 0,
    sums: {
      value: [],
      square: [],
      low: [],
      high: [],
      tried: 0,
      passed_any: 0,
      passed_all: 0,
    },
  });
  const byMetric = Object.fromEntries(
    agg.results().map((a) => [a.metric, a]),
  );
  assert.deepEqual(Object.keys(byMetric), ["empty", "err", "one"]);
  const empty = byMetric.empty!;
  assert.equal(empty.coverage, null);
  assert.equal(empty.mean, null);
  assert.equal(empty.stderr, null);
  assert.equal(empty.ci95, null);
  assert.equal(empty.pass_rate, null);
  assert.equal(empty.pass_rate_ci95, null);
  const err = byMetric.err!;
  assert.equal(err.mean, null);
  assert.equal(err.pass_rate, 0); // an error fails: 0 passed of 1 trial
  assert.equal(err.coverage, 0);
  const one = byMetric.one!;
  assert.equal(one.mean, 0.3);
  assert.equal(one.stderr, null);
  assert.equal(one.ci95, null);
  for (const a of agg.results()) {
    assert.ok(!JSON.stringify(a).includes("NaN"));
    assertNoNaN(a);
  }
});

function assertNoNaN(value: unknown, path = "$"): void {
  if (typeof value === "number") {
    assert.ok(Number.isFinite(value), `${path} is ${value}`);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => assertNoNaN(v, `${path}[${i}]`));
  } else if (typeof value === "object" && value !== null) {
    for (const [k, v] of Object.entries(value)) assertNoNaN(v, `${path}.${k}`);
  }
}

Deno.test("Aggregator emits no NaN or Infinity when huge values overflow the sums", () => {
  // 1e200² and 1e308 + 1e308 overflow doubles: what cannot be computed is null.
  const [m] = aggregateAll([
    scored("m", 1e308),
    scored("m", 1e308),
    scored("m", 1e200),
  ]).results();
  for (const key of ["mean", "stderr", "coverage", "pass_rate"] as const) {
    const v = m![key];
    assert.ok(v === null || Number.isFinite(v), `${key} is ${v}`);
  }
  for (const key of ["ci95", "pass_rate_ci95"] as const) {
    const v = m![key];
    assert.ok(v === null || v.every(Number.isFinite), `${key} is ${v}`);
  }
});

Deno.test("Aggregator.results sorts by metric", () => {
  const metrics = ["zz", "a", "m", "B", "_", "a2"];
  const agg = aggregateAll(metrics.map((m) => scored(m, 0.5)));
  assert.deepEqual(
    agg.results().map((a) => a.metric),
    [...metrics].sort(),
  );
});

Deno.test("aggregate stage emits one Aggregate per metric, sorted, when the Scores end", async () => {
  const out = await Array.fromAsync(
    ReadableStream.from([scored("b", 1), scored("a", 0), scored("b", 0)])
      .pipeThrough(aggregate()),
  );
  assert.deepEqual(out.map((a) => [a.metric, a.n, a.mean]), [
    ["a", 1, 0],
    ["b", 2, 0.5],
  ]);
});

Deno.test("ExactSum is independent of order on adversarial inputs", () => {
  const cases: [number[], number][] = [
    // 1e16 + 1 − 1e16: left to right in doubles gives 0 (1e16 + 1 rounds back to 1e16).
    [[1e16, 1, -1e16], 1],
    // 2⁵³ + 1 + 1 = 2⁵³ + 2 exactly; left to right each +1 is a tie that rounds to even, giving 2⁵³.
    [[2 ** 53, 1, 1], 2 ** 53 + 2],
    // 2⁵³ + 1 is a tie: correctly rounded to even, 2⁵³.
    [[2 ** 53, 1], 2 ** 53],
    // 2⁵³ + 1 + 2⁻³⁰ is just above the tie: rounds up to 2⁵³ + 2.
    [[2 ** 53, 1, 2 ** -30], 2 ** 53 + 2],
    // Huge terms cancel; the small ones remain: 1 + 1 = 2.
    [[1, 1e100, 1, -1e100], 2],
    // The doubles nearest 0.1, 0.2 and 0.3, exactly, then their sum:
    // 0.1000000000000000055511 + 0.2000000000000000111022 − 0.2999999999999999888978
    // = 0.0000000000000000277556 = 2⁻⁵⁵ exactly (left to right gives 2⁻⁵⁴).
    [[1e308, -1e308, 0.1, 0.2, -0.3], 2 ** -55],
    // Ten 0.1 doubles sum exactly to 1.0000000000000000555…, which rounds to 1.
    [Array.from({ length: 10 }, () => 0.1), 1],
  ];
  const random = prng(99);
  for (const [xs, expected] of cases) {
    let partials: number[] | undefined;
    for (let round = 0; round < 50; round++) {
      const order = shuffle(random, xs);
      const sum = new ExactSum();
      for (const x of order) sum.add(x);
      assert.equal(sum.value, expected, `${order}`);
      // The serialised state is the same too, and restores to the same sum.
      partials ??= sum.partials;
      assert.deepStrictEqual(sum.partials, partials, `${order}`);
      assert.equal(new ExactSum(sum.partials).value, expected);
    }
  }
  // Left to right in doubles, the first two really are wrong.
  assert.equal(1e16 + 1 - 1e16, 0);
  assert.equal(2 ** 53 + 1 + 1, 2 ** 53);
});

Deno.test("ExactSum merges shards into exactly the sum of the whole", () => {
  const random = prng(7);
  const pool = [0.1, 1 / 3, 0.7, 2 / 3, 1e16, -1e16, 1, 2 ** -40, -0.3, 1e-300];
  for (let round = 0; round < 200; round++) {
    const xs = Array.from(
      { length: 1 + Math.floor(random() * 40) },
      () => pick(random, pool),
    );
    const whole = new ExactSum();
    for (const x of xs) whole.add(x);
    const shards = [new ExactSum(), new ExactSum(), new ExactSum()];
    for (const x of xs) pick(random, shards).add(x);
    const merged = new ExactSum();
    for (const shard of shuffle(random, shards)) {
      merged.merge(new ExactSum(JSON.parse(JSON.stringify(shard.partials))));
    }
    assert.equal(merged.value, whole.value, `${xs}`);
    assert.deepStrictEqual(merged.partials, whole.partials, `${xs}`);
  }
});

// A small seeded PRNG (mulberry32) so random runs are reproducible.
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(random: () => number, pool: readonly T[]): T {
  return pool[Math.floor(random() * pool.length)]!;
}

function shuffle<T>(random: () => number, xs: readonly T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const VALUES = [0.1, 1 / 3, 0.7, 0.2, 2 / 3, 0, 1, 0.3, 0.9999999999999999];

function randomScore(random: () => number): Score {
  const metric = pick(random, ["faithfulness", "exact_match", "brevity"]);
  const r = random();
  if (r < 0.7) return scored(metric, pick(random, VALUES));
  if (r < 0.75) return scored(metric, pick(random, [1e16, -1e16, 3e-17]));
  if (r < 0.82) {
    return scored(metric, pick(random, VALUES), { validity: "invalid" });
  }
  if (r < 0.9) return errored(metric, "scorer error: boom");
  if (r < 0.95) return skipped(metric);
  return notApplicable(metric);
}

/**
 * Declared ranges for the random Scores: faithfulness's holds every value,
 * exact_match's is broken by the ±1e16 values, brevity has none.
 */
const RANDOM_RANGES = {
  valueRange: (metric: string): [number, number] | undefined =>
    metric === "faithfulness"
      ? [-1e16, 1e16]
      : metric === "exact_match"
      ? [0, 1]
      : undefined,
};

Deno.test("Aggregator.merge of random shards equals the whole run, bit for bit", () => {
  let naiveDrift = 0;
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    const random = prng(seed);
    const scores = Array.from({ length: 3000 }, () => randomScore(random));
    // Half the seeds with the scorers' ranges declared, as run declares them.
    const options = seed > 5 ? RANDOM_RANGES : {};
    const whole = aggregateAll(scores, options).results();
    if (seed > 5) {
      assert.deepEqual(whole.map((a) => [a.metric, a.value_range]), [
        ["brevity", null],
        ["exact_match", null],
        ["faithfulness", [-1e16, 1e16]],
      ]);
    }
    const shards = Array.from(
      { length: 2 + Math.floor(random() * 7) },
      () => new Aggregator(options),
    );
    for (const s of scores) pick(random, shards).add(s);
    const merged = new Aggregator();
    for (const shard of shuffle(random, shards)) merged.merge(shard);
    assert.deepStrictEqual(merged.results(), whole, `seed ${seed}`);
    assert.equal(
      JSON.stringify(merged.results()),
      JSON.stringify(whole),
      `seed ${seed}`,
    );
    // The data really does defeat naive summation: shard-wise sums differ.
    const naive = (xs: Score[]) =>
      xs.filter((s) => s.metric === "faithfulness" && s.value !== null)
        .reduce((acc, s) => acc + s.value!, 0);
    const half = Math.floor(scores.length / 2);
    if (
      naive(scores) !== naive(scores.slice(0, half)) + naive(scores.slice(half))
    ) naiveDrift++;
  }
  assert.ok(naiveDrift > 0, "fixtures should not add exactly in doubles");
});

Deno.test("parseAggregate and mergeAggregate round trip NDJSON shards to the whole run, bit for bit", () => {
  for (const seed of [11, 12, 13, 14, 15, 16, 17, 18]) {
    const random = prng(seed);
    const scores = Array.from({ length: 3000 }, () => randomScore(random));
    // The shards declare ranges; the aggregator merging their lines does not.
    const options = seed > 15 ? RANDOM_RANGES : {};
    const whole = aggregateAll(scores, options).results();
    const shards = Array.from(
      { length: 2 + Math.floor(random() * 7) },
      () => new Aggregator(options),
    );
    for (const s of scores) pick(random, shards).add(s);
    // Each shard's output, as `aggregate` would print it, lines interleaved.
    const lines = shuffle(
      random,
      shards.flatMap((a) => a.results().map((r) => JSON.stringify(r))),
    );
    const merged = new Aggregator();
    for (const line of lines) {
      merged.mergeAggregate(parseAggregate(JSON.parse(line)));
    }
    assert.deepStrictEqual(merged.results(), whole, `seed ${seed}`);
    // Merging merged output again (a shard of shards) still agrees.
    const twice = new Aggregator();
    for (const a of merged.results()) {
      twice.mergeAggregate(parseAggregate(JSON.parse(JSON.stringify(a))));
    }
    assert.deepStrictEqual(twice.results(), whole, `seed ${seed}`);
  }
});

Deno.test("parseAggregate names the wrong field", () => {
  assert.throws(
    () =>
      parseAggregate({
        metric: "m",
        n: 1.5,
        aggregatable: 0,
        errors: 0,
        skipped: 0,
        not_applicable: 0,
        invalid: 0,
        examples: 0,
        passed: 0,
        sums: {
          value: [],
          square: [],
          low: [],
          high: [],
          tried: 0,
          passed_any: 0,
          passed_all: 0,
        },
      }),
    (error) => error instanceof SyntaxError && /"n"/.test(error.message),
  );
  assert.throws(
    () =>
      parseAggregate({
        metric: "m",
        n: 1,
        aggregatable: 1,
        errors: 0,
        skipped: 0,
        not_applicable: 0,
        invalid: 0,
        examples: 1,
        passed: 0,
        sums: {
          value: [null],
          square: [],
          low: [],
          high: [],
          tried: 1,
          passed_any: 0,
          passed_all: 0,
        },
      }),
    (error) =>
      error instanceof SyntaxError && /sums\.value/.test(error.message),
  );
});

// The CLI, end to end.
const ROOT = new URL("../../", import.meta.url).pathname;

function runAggregate(
  input: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return runAggregateWith([], input);
}

async function runAggregateWith(
  flags: string[],
  input: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli.ts", "aggregate", ...flags],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // Write stdin while stdout and stderr are read: pipes hold only 64 KiB.
  const write = async () => {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(input));
    await writer.close();
  };
  const [, output] = await Promise.all([write(), child.output()]);
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

function ndjson(values: unknown[]): string {
  return values.map((v) => `${JSON.stringify(v)}\n`).join("");
}

function parseLines(text: string): Aggregate[] {
  assert.ok(text === "" || text.endsWith("\n"), "output ends with a newline");
  assert.ok(!/NaN|Infinity/.test(text), text);
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

Deno.test("cli aggregate prints one line per metric, sorted by metric", async () => {
  const scores = [
    scored("recall", 0.25),
    scored("exact_match", 1),
    errored("recall", "scorer error: boom"),
    scored("exact_match", 0),
    skipped("brevity"),
    scored("recall", 0.75, { validity: "invalid" }),
    scored("recall", 0.5),
  ];
  const { code, stdout, stderr } = await runAggregate(ndjson(scores));
  assert.equal(stderr, "");
  assert.equal(code, 0);
  const lines = parseLines(stdout);
  assert.deepEqual(lines.map((a) => a.metric), [
    "brevity",
    "exact_match",
    "recall",
  ]);
  assert.deepStrictEqual(
    lines,
    JSON.parse(JSON.stringify(aggregateAll(scores).results())),
  );
  // recall: values 0.25 and 0.5 → mean 0.375; 1 error, 1 invalid; 1 passed of 3 trials.
  const recall = lines[2]!;
  assert.equal(recall.mean, 0.375);
  assert.equal(recall.errors, 1);
  assert.equal(recall.invalid, 1);
  assert.equal(recall.pass_rate, 1 / 3);
  assert.equal(lines[0]!.mean, null);
});

Deno.test("cli aggregate merges the aggregate lines of shards into the whole", async () => {
  const random = prng(21);
  const scores = Array.from({ length: 600 }, () => randomScore(random));
  const shards: Score[][] = [[], [], [], []];
  for (const s of scores) pick(random, shards).push(s);
  const whole = await runAggregate(ndjson(scores));
  assert.equal(whole.code, 0);
  const partials = await Promise.all(
    shards.map((s) => runAggregate(ndjson(s))),
  );
  for (const p of partials) assert.equal(p.code, 0);
  const merged = await runAggregate(partials.map((p) => p.stdout).join(""));
  assert.equal(merged.code, 0);
  assert.equal(merged.stderr, "");
  // The very same bytes as aggregating the whole run in one pass.
  assert.equal(merged.stdout, whole.stdout);
  assert.equal(parseLines(merged.stdout).length, 3);
  // Aggregate lines and raw Scores mix: a shard's summary plus another's Scores.
  const mixed = await runAggregate(
    partials.slice(0, 2).map((p) => p.stdout).join("") +
      ndjson([...shards[2]!, ...shards[3]!]),
  );
  assert.equal(mixed.code, 0);
  assert.equal(mixed.stdout, whole.stdout);
});

Deno.test("cli aggregate reports a malformed line on stderr, counts the others, and exits 2", async () => {
  const input = [
    JSON.stringify(scored("m", 1)),
    "not json",
    JSON.stringify(scored("m", 0.5)),
    // The no-0.0 rule: an error carrying a number is not a Score.
    JSON.stringify({ ...errored("m", "boom"), value: 0 }),
    "",
    JSON.stringify(errored("m", "scorer error: boom")),
  ].join("\n") + "\n";
  const { code, stdout, stderr } = await runAggregate(input);
  assert.equal(code, 2);
  assert.match(stderr, /line 2\b/);
  assert.match(stderr, /line 4\b/);
  assert.doesNotMatch(stderr, /line [1356]\b/);
  const [m, ...rest] = parseLines(stdout);
  assert.equal(rest.length, 0);
  assert.equal(m!.n, 3);
  assert.equal(m!.aggregatable, 2);
  assert.equal(m!.errors, 1);
  assert.equal(m!.mean, 0.75);
});

Deno.test("cli aggregate never prints NaN", async () => {
  const { code, stdout } = await runAggregate(
    ndjson([
      skipped("a"),
      notApplicable("b"),
      errored("c", "boom"),
      scored("d", 0.5),
      scored("e", 0.5, { validity: "invalid" }),
      scored("f", 1e308),
      scored("f", 1e308),
    ]),
  );
  assert.equal(code, 0);
  const lines = parseLines(stdout);
  assert.equal(lines.length, 6);
  for (const a of lines) {
    for (const key of ["mean", "stderr", "pass_rate", "coverage"] as const) {
      assert.ok(
        a[key] === null || Number.isFinite(a[key]),
        `${a.metric}.${key}`,
      );
    }
  }
});

Deno.test("Aggregator reduces epochs per example first and clusters the standard error by example", () => {
  const ids = (e: string, k: number) => ({
    example_id: `d#${e}`,
    unit_id: `d#${e}@${k}`,
  });
  const scores = [
    scored("m", 1, ids("a", 1)),
    scored("m", 0, ids("a", 2)),
    scored("m", 1, ids("b", 1)),
    scored("m", 1, ids("b", 2)),
    scored("m", 0, ids("c", 1)),
    errored("m", "scorer error: boom", ids("c", 2)),
  ];
  const [m] = aggregateAll(scores).results();
  // Per example: a = (1 + 0)/2 = 0.5, b = 1, c = 0 (its error is not a value).
  //   examples = 3, mean = (0.5 + 1 + 0)/3 = 0.5
  //   variance across examples = (0² + 0.5² + 0.5²)/2 = 0.25, stderr = √(0.25/3) = 0.2886751
  //   t(df 2) = 4.3026527, ci95 = 0.5 ± 1.2420689
  assert.equal(m!.examples, 3);
  assert.equal(m!.aggregatable, 5);
  assert.equal(m!.mean, 0.5);
  close(m!.stderr, 0.2886751, 1e-7);
  closePair(m!.ci95, [-0.7420689, 1.7420689], 1e-7);
  // Errors as 0: c = (0 + 0)/2 = 0 → (0.5 + 1 + 0)/3 = 0.5; as 1: c = (0 + 1)/2 = 0.5 → 2/3.
  assert.deepEqual(m!.mean_bounds, [0.5, 2 / 3]);
  // pass@k: a and b had a passing epoch, c did not: 2/3. pass^k: only b passed every epoch: 1/3.
  assert.equal(m!.pass_at_k, 2 / 3);
  assert.equal(m!.pass_hat_k, 1 / 3);
  // The pass rate stays per Score: 3 passed of 5 aggregatable + 1 error.
  assert.equal(m!.pass_rate, 0.5);
  // Shards split between examples merge into exactly the whole.
  const left = aggregateAll(scores.slice(0, 2));
  const right = aggregateAll(scores.slice(2));
  left.merge(right);
  assert.deepStrictEqual(left.results(), aggregateAll(scores).results());
  const viaJson = new Aggregator();
  for (const shard of [scores.slice(0, 4), scores.slice(4)]) {
    for (const a of aggregateAll(shard).results()) {
      viaJson.mergeAggregate(parseAggregate(JSON.parse(JSON.stringify(a))));
    }
  }
  assert.deepStrictEqual(viaJson.results(), aggregateAll(scores).results());
});

Deno.test("Aggregator widens the pass rate's Wilson interval by the design effect when epochs of an example agree", () => {
  // 10 examples x 5 epochs. Each example's epochs all pass or all fail:
  // 50 Scores carry the information of 10 questions, so the interval is
  // Wilson's for 5 of 10, not for 25 of 50.
  const epochs = (passes: (e: number) => number) =>
    Array.from({ length: 10 }, (_, e) =>
      Array.from(
        { length: 5 },
        (_, k) =>
          scored("m", k < passes(e) ? 1 : 0, {
            example_id: `d#${e}`,
            unit_id: `d#${e}@${k + 1}`,
          }),
      )).flat();
  const agreeing = epochs((e) => e < 5 ? 5 : 0);
  const [a] = aggregateAll(agreeing).results();
  assert.equal(a!.pass_rate, 0.5);
  // Σ (passes − 0.5 × 5)² = 10 × 6.25; clustered variance 62.5 / 50² =
  // 0.025, against 0.25 / 50 = 0.005 for independent trials: effect 5.
  closePair(a!.pass_rate_ci95, wilson95(5, 10), 1e-12);
  assert.ok(a!.pass_rate_ci95![0] < wilson95(25, 50)[0] - 0.05);
  // Epochs that disagree as independent trials would (2 or 3 of 5 pass
  // everywhere) spread less than independent trials: n stays 50.
  const [b] = aggregateAll(epochs((e) => e % 2 === 0 ? 2 : 3)).results();
  assert.equal(b!.pass_rate, 0.5);
  assert.deepEqual(b!.pass_rate_ci95, wilson95(25, 50));
  // An error fails its trial: 4 of 5 epochs pass in half the examples, the
  // fifth errs; the effect is measured with it.
  const withErrors = epochs((e) => e < 5 ? 4 : 0).map((s, i) =>
    i < 25 && i % 5 === 4
      ? errored("m", "scorer error: boom", {
        example_id: s.example_id!,
        unit_id: s.unit_id!,
      })
      : s
  );
  const [c] = aggregateAll(withErrors).results();
  assert.equal(c!.pass_rate, 20 / 50);
  // Σ (p_i − 0.4 t_i)²: 5 × (4 − 2)² + 5 × (0 − 2)² = 40; clustered 40/2500
  // = 0.016 against 0.24/50 = 0.0048: n = 50 × 0.0048 / 0.016 = 15.
  closePair(c!.pass_rate_ci95, wilson95(6, 15), 1e-12);
  // One Score an example: Wilson's interval over the Scores, as before.
  const single = agreeing.filter((s) => s.unit_id!.endsWith("@1"));
  const [d] = aggregateAll(single).results();
  assert.deepEqual(d!.pass_rate_ci95, wilson95(5, 10));
  // All passing: no spread to measure how far the epochs agree, so they
  // count once: Wilson's for 10 of 10 ([0.722, 1]), not 50 of 50 ([0.929,
  // 1]), as the rule of three bounds it over the 10 examples. None passing
  // likewise.
  const [e] = aggregateAll(epochs(() => 5)).results();
  assert.deepEqual(e!.pass_rate_ci95, wilson95(10, 10));
  assert.equal(e!.pass_rate_ci95![1], 1, "1 exactly, not 0.9999999999999999");
  closePair(e!.pass_rate_ci95, [10 / (10 + 1.959963984540054 ** 2), 1], 1e-12);
  const [z] = aggregateAll(epochs(() => 0)).results();
  assert.deepEqual(z!.pass_rate_ci95, wilson95(0, 10));
  // One Score an example, all passing: n as it is.
  const [f] = aggregateAll(
    epochs(() => 5).filter((s) => s.unit_id!.endsWith("@1")),
  )
    .results();
  assert.deepEqual(f!.pass_rate_ci95, wilson95(10, 10));
  // Shards split between examples merge into exactly the whole, through
  // their Aggregate lines too.
  const viaJson = new Aggregator();
  for (const shard of [agreeing.slice(0, 20), agreeing.slice(20)]) {
    for (const line of aggregateAll(shard).results()) {
      viaJson.mergeAggregate(parseAggregate(JSON.parse(JSON.stringify(line))));
    }
  }
  assert.deepStrictEqual(viaJson.results(), aggregateAll(agreeing).results());
  // A line written before these sums merges as independent trials.
  const old = aggregateAll(agreeing).results()[0]!;
  const { trials_square: _t, passed_square: _p, passed_trials: _x, ...sums } =
    old.sums;
  const merged = new Aggregator();
  merged.mergeAggregate(parseAggregate({ ...old, sums }));
  const [m] = merged.results();
  assert.deepEqual(m!.pass_rate_ci95, wilson95(25, 50));
  assert.equal(m!.sums.trials_square, undefined);
});

Deno.test("cli aggregate --grouped gathers an example's epochs wherever they stand", async () => {
  const ids = (e: string, k: number) => ({
    example_id: `d#${e}`,
    unit_id: `d#${e}@${k}`,
  });
  const adjacent = [
    scored("m", 1, ids("a", 1)),
    scored("m", 0, ids("a", 2)),
    scored("m", 1, ids("b", 1)),
    scored("m", 1, ids("b", 2)),
  ];
  // The same Scores with the epochs of each example apart, as after a resume.
  const apart = [adjacent[0]!, adjacent[2]!, adjacent[1]!, adjacent[3]!];
  const toText = (scores: Score[]) =>
    scores.map((s) => JSON.stringify(s)).join("\n") + "\n";
  const reference = await runAggregate(toText(adjacent));
  const grouped = await runAggregateWith(["--grouped"], toText(apart));
  assert.equal(grouped.code, 0, grouped.stderr);
  assert.equal(grouped.stdout, reference.stdout);
  assert.equal(JSON.parse(grouped.stdout).examples, 2);
  // Without --grouped, the interleaved epochs would count as four examples:
  // aggregate stops, names the line and the example, and prints nothing.
  const plain = await runAggregateWith([], toText(apart));
  assert.equal(plain.code, 2);
  assert.equal(plain.stdout, "");
  assert.match(
    plain.stderr,
    /^evalpipe: The Scores of example "d#a" \(metric "m"\) are not adjacent: stdin line 3 comes after other examples' Scores.*--grouped/,
  );
});

Deno.test("cli aggregate takes the metrics of one example interleaved as adjacent", async () => {
  const ids = (e: string, k: number) => ({
    example_id: `d#${e}`,
    unit_id: `d#${e}@${k}`,
  });
  // Each example's Scores of one metric together, the metrics interleaved.
  const scores = [
    scored("m", 1, ids("a", 1)),
    scored("n", 0, ids("a", 1)),
    scored("m", 0, ids("a", 2)),
    scored("n", 1, ids("a", 2)),
    scored("m", 1, ids("b", 1)),
    scored("n", 1, ids("b", 1)),
  ];
  const text = scores.map((s) => JSON.stringify(s)).join("\n") + "\n";
  const plain = await runAggregateWith([], text);
  assert.equal(plain.code, 0, plain.stderr);
  const grouped = await runAggregateWith(["--grouped"], text);
  assert.equal(plain.stdout, grouped.stdout);
  assert.deepStrictEqual(
    plain.stdout.trim().split("\n").map((l) => JSON.parse(l).examples),
    [2, 2],
  );
});

Deno.test("parseAggregate keeps only what merging needs and says what is wrong", () => {
  const good = {
    metric: "m",
    mean: 0.5,
    n: 2,
    aggregatable: 2,
    errors: 0,
    blocked: 0,
    skipped: 0,
    non_evaluable: 0,
    not_applicable: 0,
    invalid: 0,
    examples: 2,
    passed: 1,
    sums: {
      value: [1],
      square: [1],
      low: [1],
      high: [1],
      tried: 2,
      passed_any: 1,
      passed_all: 1,
      extra: true,
    },
  };
  const parsed = parseAggregate(good);
  assert.equal(
    JSON.stringify(parsed),
    '{"metric":"m","n":2,"aggregatable":2,"errors":0,"blocked":0,"skipped":0,"non_evaluable":0,"not_applicable":0,"invalid":0,"examples":2,"passed":1,"value_range":null,' +
      '"sums":{"value":[1],"square":[1],"low":[1],"high":[1],"tried":2,"passed_any":1,"passed_all":1}}',
  );
  const message = (value: unknown) => {
    try {
      parseAggregate(value);
    } catch (error) {
      assert.ok(error instanceof SyntaxError);
      return error.message;
    }
    assert.fail("accepted");
  };
  assert.equal(message([]), '"": must be a mapping, not a list');
  assert.equal(
    message({ ...good, sums: null }),
    '"sums": must be a mapping, not null',
  );
  assert.equal(
    message({ ...good, metric: "" }),
    '"metric": must be a non-empty string, not ""',
  );
  assert.equal(
    message({ ...good, errors: -1 }),
    '"errors": must be a whole number of at least 0, not -1',
  );
  assert.equal(
    message({ ...good, sums: { ...good.sums, tried: undefined } }),
    '"sums.tried": must be a whole number of at least 0, not nothing',
  );
  assert.equal(
    message({ ...good, sums: { ...good.sums, low: [1, "2"] } }),
    '"sums.low.1": must be a finite number, not "2"',
  );
});

Deno.test("cli aggregate reads an evalpipe RunRecord as its Scores, epochs gathered and ranges kept: what view says of it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cases = Array.from({ length: 6 }, (_, i) =>
      JSON.stringify({
        input: `q${i}`,
        output: i % 3 === 0 ? "x" : "a",
        expected: "a",
      })).join("\n") + "\n";
    await Deno.writeTextFile(`${dir}/d.jsonl`, cases);
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }, { type: levenshtein }]\nepochs: 3\nconcurrency: 5\n",
    );
    const run = await cli(["run", "s.yaml", "--record", "r.json"], dir);
    assert.equal(run.code, 0, run.stderr);
    const view = await cli(["view", "r.json", "--json"], dir);
    assert.equal(view.code, 0, view.stderr);
    const aggregate = await cli(["aggregate", "r.json"], dir);
    assert.equal(aggregate.code, 0, aggregate.stderr);
    assert.equal(aggregate.stderr, "");
    assert.equal(aggregate.stdout, view.stdout);
    // The record's ranges: an interval clamped to 0..1.
    for (const line of aggregate.stdout.trim().split("\n")) {
      assert.deepEqual(JSON.parse(line).value_range, [0, 1]);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli aggregate counts a Score given twice once, names the first copies and exits 2", async () => {
  const ids = (e: string) => ({ example_id: `d#${e}`, unit_id: `d#${e}` });
  const scores = ["a", "b", "c", "d", "e"].map((e, i) =>
    scored("m", i % 2, ids(e))
  );
  const text = scores.map((s) => JSON.stringify(s)).join("\n") + "\n";
  const once = await runAggregateWith(["--grouped"], text);
  assert.equal(once.code, 0, once.stderr);
  // The whole input twice, as `cat a a` gives it.
  const twice = await runAggregateWith(["--grouped"], text + text);
  assert.equal(twice.code, 2);
  assert.equal(twice.stdout, once.stdout);
  assert.equal(JSON.parse(twice.stdout).n, 5);
  assert.deepEqual(twice.stderr.trimEnd().split("\n"), [
    'evalpipe: Score given twice in stdin line 6: unit "d#a" already has a Score of metric "m"; counted once',
    'evalpipe: Score given twice in stdin line 7: unit "d#b" already has a Score of metric "m"; counted once',
    'evalpipe: Score given twice in stdin line 8: unit "d#c" already has a Score of metric "m"; counted once',
    "evalpipe: 5 Scores in all were given twice (same unit, metric and target); each counted once",
  ]);
  // Plain, a copy right behind its Score is counted once too.
  const adjacent = scores.flatMap((s) => [s, s]);
  const plain = await runAggregateWith(
    [],
    adjacent.map((s) => JSON.stringify(s)).join("\n") + "\n",
  );
  assert.equal(plain.code, 2);
  assert.equal(plain.stdout, once.stdout);
});

Deno.test("aggregate stage counts what cli aggregate counts: a Score again further on is an error, not a second example", async () => {
  const ids = (e: string, k: number) => ({
    example_id: `d#${e}`,
    unit_id: `d#${e}@${k}`,
  });
  const adjacent = [
    scored("m", 1, ids("a", 1)),
    scored("m", 0, ids("a", 2)),
    scored("m", 1, ids("b", 1)),
    scored("m", 1, ids("b", 2)),
  ];
  const toText = (scores: Score[]) =>
    scores.map((s) => JSON.stringify(s)).join("\n") + "\n";
  const viaLibrary = async (
    scores: Score[],
    options?: Parameters<typeof aggregate>[0],
  ) => {
    const out = await Array.fromAsync(
      ReadableStream.from(scores).pipeThrough(aggregate(options)),
    );
    return out.map((a) => JSON.stringify(a) + "\n").join("");
  };
  const reference = await runAggregate(toText(adjacent));
  assert.equal(reference.code, 0, reference.stderr);
  assert.equal(await viaLibrary(adjacent), reference.stdout);

  // A's first Score again after B's, as `cat a.ndjson b.ndjson a.ndjson`
  // gives: counted, example a would be two examples and a Score twice.
  const again = [...adjacent, adjacent[0]!];
  const cli = await runAggregate(toText(again));
  assert.equal(cli.code, 2);
  await assert.rejects(() => viaLibrary(again), (error: unknown) => {
    assert.ok(error instanceof ScoreOrderError, String(error));
    assert.equal(error.at, 5);
    assert.equal(error.exitCode, 2);
    assert.match(
      error.message,
      /^The Scores of example "d#a" \(metric "m"\) are not adjacent: Score 5 comes after other examples' Scores.*grouped: true/,
    );
    return true;
  });
  // Grouped, as --grouped: the copy is named and counted once.
  const grouped = await runAggregateWith(["--grouped"], toText(again));
  assert.equal(grouped.code, 2);
  assert.equal(grouped.stdout, reference.stdout);
  const named: number[] = [];
  assert.equal(
    await viaLibrary(again, {
      grouped: true,
      onDuplicate: (at) => named.push(at),
    }),
    grouped.stdout,
  );
  assert.deepEqual(named, [5]);
  // Without onDuplicate, the copy is an error naming the unit.
  await assert.rejects(
    () => viaLibrary(again, { grouped: true }),
    /^ScoreOrderError: Score 5 is given twice: unit "d#a@1" already has a Score of metric "m"/,
  );
  // An Aggregator of one's own, grouped, is grouped for the check too.
  const own = new Aggregator({ grouped: true });
  await viaLibrary([adjacent[0]!, adjacent[2]!, adjacent[1]!], own);
  assert.equal(own.results()[0]?.examples, 2);
});

Deno.test("aggregate() counts into an Aggregator made by a second copy of the module", async () => {
  // Two versions of evalpipe in one script's dependency tree load two copies
  // of the class; the query string makes Deno load this one a second time.
  const copy = await import("../../src/aggregate/aggregator.ts?second-copy");
  assert.notEqual(copy.Aggregator, Aggregator, "a second copy was loaded");
  const theirs = new copy.Aggregator();
  const out = await Array.fromAsync(
    ReadableStream.from([
      scored("m", 1, { example_id: "d#1", unit_id: "d#1" }),
      scored("m", 0, { example_id: "d#2", unit_id: "d#2" }),
    ]).pipeThrough(aggregate(theirs)),
  );
  assert.equal(out.length, 1);
  assert.equal(out[0]!.n, 2);
  assert.equal(out[0]!.mean, 0.5);
  // The script reads its own Aggregator afterwards: it was counted into.
  const [counted] = theirs.results();
  assert.equal(counted?.n, 2, "the Scores went into the Aggregator given");
});

Deno.test("Aggregator counts an example whose epochs write its id in NFC and in NFD as one example, adjacent or grouped", () => {
  const nfc = "d.jsonl#caf\u00e9";
  const nfd = "d.jsonl#cafe\u0301";
  const epochs = [
    scored("m", 1, { example_id: nfc, unit_id: `${nfc}@1` }),
    scored("m", 0, { example_id: nfd, unit_id: `${nfd}@2` }),
    scored("m", 1, { example_id: "d.jsonl#2", unit_id: "d.jsonl#2@1" }),
    scored("m", 1, { example_id: "d.jsonl#2", unit_id: "d.jsonl#2@2" }),
  ];
  for (const grouped of [false, true]) {
    const agg = new Aggregator({ grouped });
    for (const s of grouped ? [...epochs].reverse() : epochs) agg.add(s);
    const [m] = agg.results();
    assert.equal(m?.examples, 2, `grouped: ${grouped}`);
    // One example of two epochs, one passing: flaky, not two examples.
    assert.equal(m?.flaky, 1, `grouped: ${grouped}`);
    close(m?.mean, 0.75);
  }
});

Deno.test("aggregate stops at an example written again in another spelling after other examples, and at a unit given in two spellings", async () => {
  const nfc = "d.jsonl#caf\u00e9";
  const nfd = "d.jsonl#cafe\u0301";
  const run = (scores: Score[]) =>
    Array.fromAsync(ReadableStream.from(scores).pipeThrough(aggregate()))
      .then(() => undefined, (e) => e);
  const scattered = await run([
    scored("m", 1, { example_id: nfc, unit_id: `${nfc}@1` }),
    scored("m", 1, { example_id: "d.jsonl#2", unit_id: "d.jsonl#2" }),
    scored("m", 0, { example_id: nfd, unit_id: `${nfd}@2` }),
  ]);
  assert.ok(scattered instanceof ScoreOrderError, String(scattered));
  assert.equal(scattered.at, 3);
  assert.match(scattered.message, /are not adjacent/);
  const twice = await run([
    scored("m", 1, { example_id: nfc, unit_id: nfc }),
    scored("m", 0, { example_id: nfd, unit_id: nfd }),
  ]);
  assert.ok(twice instanceof ScoreOrderError, String(twice));
  assert.match(twice.message, /^Score 2 is given twice/);
});
