import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import {
  type DiffLine,
  diffScores,
  significantlyWorse,
} from "../../src/diff/diff.ts";
import {
  blocked,
  errored,
  notApplicable,
  type Score,
  scored,
  skipped,
} from "../../src/score/mod.ts";
import { withTempDir } from "../_proc.ts";

/** A Score of one epoch-free unit of `data.jsonl#<id>`. */
function s(metric: string, value: number, id: string): Score {
  const example_id = `data.jsonl#${id}`;
  return scored(metric, value, { example_id, unit_id: example_id });
}

/** A Score of epoch `epoch` of `data.jsonl#<id>`. */
function epoch(metric: string, value: number, id: string, n: number): Score {
  const example_id = `data.jsonl#${id}`;
  return scored(metric, value, { example_id, unit_id: `${example_id}@${n}` });
}

function close(actual: number | null, expected: number, tolerance: number) {
  assert.ok(actual !== null, `expected ${expected}, got null`);
  assert.ok(
    Math.abs(actual - expected) <= tolerance,
    `expected ${expected} ± ${tolerance}, got ${actual}`,
  );
}

/** No statistic of a line is NaN or infinite: undefined is null. */
function assertNoNaN(line: DiffLine) {
  for (
    const x of [
      line.mean_a,
      line.mean_b,
      line.delta,
      line.stderr,
      ...(line.ci95 ?? []),
      ...(line.ci95_unclamped ?? []),
    ]
  ) {
    assert.ok(x === null || Number.isFinite(x), `${x} in ${line.metric}`);
  }
}

function only(lines: DiffLine[]): DiffLine {
  assert.equal(lines.length, 1);
  return lines[0]!;
}

// Four pairs (df = 3).
//   A: 0.2 0.4 0.6 0.8   B: 0.6 0.5 0.5 1.0
//   d = B − A: 0.4 0.1 −0.1 0.2, sum 0.6
//   mean_a = 2.0 / 4 = 0.5, mean_b = 2.6 / 4 = 0.65, delta = 0.6 / 4 = 0.15
//   d − delta: 0.25 −0.05 −0.25 0.05, squares 0.0625 0.0025 0.0625 0.0025 = 0.13
//   sd = sqrt(0.13 / 3) = 0.208167, stderr = sd / sqrt(4) = 0.104083
//   half = 3.182 × 0.104083 = 0.331193, ci95 = [−0.181193, 0.481193]
//   pass (value ≥ 0.5): A F F T T, B T T T T → newly_passing 2, newly_failing 0
//   improved: #1 #2 #4; regressed: #3
Deno.test("diffScores computes the paired statistics of four pairs (df 3)", () => {
  const a = [0.2, 0.4, 0.6, 0.8].map((v, i) => s("m", v, `${i + 1}`));
  const b = [0.6, 0.5, 0.5, 1.0].map((v, i) => s("m", v, `${i + 1}`));
  const line = only(diffScores(a, b));
  assert.equal(line.metric, "m");
  assert.equal(line.pairs, 4);
  close(line.mean_a, 0.5, 1e-12);
  close(line.mean_b, 0.65, 1e-12);
  close(line.delta, 0.15, 1e-12);
  close(line.stderr, 0.104083, 1e-6);
  close(line.ci95![0], -0.181193, 1e-3);
  close(line.ci95![1], 0.481193, 1e-3);
  assert.equal(line.improved, 3);
  assert.equal(line.regressed, 1);
  assert.equal(line.newly_passing, 2);
  assert.equal(line.newly_failing, 0);
  assert.equal(line.only_a, 0);
  assert.equal(line.only_b, 0);
  assert.deepEqual(line.regressions.map((r) => r.example_id), [
    "data.jsonl#3",
  ]);
  assert.equal(significantlyWorse(line), false);
});

// Five pairs (df = 4).
//   A: 1.0 0.6 0.3 0.9 0.5   B: 0.4 0.8 0.7 0.9 0.2
//   d: −0.6 0.2 0.4 0 −0.3, sum −0.3
//   mean_a = 3.3 / 5 = 0.66, mean_b = 3.0 / 5 = 0.6, delta = −0.06
//   d − delta: −0.54 0.26 0.46 0.06 −0.24
//   squares 0.2916 0.0676 0.2116 0.0036 0.0576 = 0.632
//   sd = sqrt(0.632 / 4) = sqrt(0.158) = 0.397492, stderr = sqrt(0.158 / 5) = 0.177764
//   half = 2.776 × 0.177764 = 0.493473, ci95 = [−0.553473, 0.433473]
//   pass: A T T F T T, B F T T T F → newly_failing #1 #5 (2), newly_passing #3 (1)
//   improved #2 #3 (2), regressed #1 (−0.6) and #5 (−0.3), #4 unchanged
Deno.test("diffScores computes the paired statistics, flips and counts of five pairs (df 4)", () => {
  const a = [1.0, 0.6, 0.3, 0.9, 0.5].map((v, i) => s("m", v, `${i + 1}`));
  const b = [0.4, 0.8, 0.7, 0.9, 0.2].map((v, i) => s("m", v, `${i + 1}`));
  const line = only(diffScores(a, b));
  assert.equal(line.pairs, 5);
  close(line.mean_a, 0.66, 1e-12);
  close(line.mean_b, 0.6, 1e-12);
  close(line.delta, -0.06, 1e-12);
  close(line.stderr, 0.177764, 1e-6);
  close(line.ci95![0], -0.553473, 1e-3);
  close(line.ci95![1], 0.433473, 1e-3);
  assert.equal(line.improved, 2);
  assert.equal(line.regressed, 2);
  assert.equal(line.newly_failing, 2);
  assert.equal(line.newly_passing, 1);
  assert.equal(significantlyWorse(line), false, "the interval holds 0");
});

Deno.test("diffScores sorts regressions by largest drop first", () => {
  // Drops: #1 −0.1, #2 −0.5, #3 +0.2 (not a regression), #4 −0.375, #5 −0.5.
  const a = [0.9, 0.75, 0.3, 0.5, 1].map((v, i) => s("m", v, `${i + 1}`));
  const b = [0.8, 0.25, 0.5, 0.125, 0.5].map((v, i) => s("m", v, `${i + 1}`));
  const line = only(diffScores(a, b));
  assert.equal(line.regressed, 4);
  assert.deepEqual(
    line.regressions.map((r) => r.example_id.replace("data.jsonl#", "")),
    ["2", "5", "4", "1"],
    "equal drops in example id order",
  );
  const [first] = line.regressions;
  assert.deepEqual(first, { example_id: "data.jsonl#2", a: 0.75, b: 0.25 });
});

// Four pairs that all fell:
//   A: 0.9 0.8 0.9 0.7   B: 0.5 0.5 0.6 0.4   d: −0.4 −0.3 −0.3 −0.3
//   delta = −1.3 / 4 = −0.325; d − delta: −0.075 0.025 0.025 0.025
//   squares 0.005625 + 3 × 0.000625 = 0.0075; sd = sqrt(0.0025) = 0.05; stderr = 0.025
//   half = 3.182 × 0.025 = 0.07955, ci95 = [−0.40455, −0.24545]: wholly below 0
Deno.test("significantlyWorse holds when the whole interval is below 0", () => {
  const a = [0.9, 0.8, 0.9, 0.7].map((v, i) => s("m", v, `${i + 1}`));
  const b = [0.5, 0.5, 0.6, 0.4].map((v, i) => s("m", v, `${i + 1}`));
  const line = only(diffScores(a, b));
  close(line.delta, -0.325, 1e-12);
  close(line.stderr, 0.025, 1e-9);
  close(line.ci95![0], -0.40455, 1e-3);
  close(line.ci95![1], -0.24545, 1e-3);
  assert.equal(significantlyWorse(line), true);
  assert.equal(line.newly_failing, 1, "only 0.7 → 0.4 crosses 0.5");
});

Deno.test("significantlyWorse is false without an interval or when it reaches 0", () => {
  // One pair that fell a lot: no interval, so not significant.
  const one = only(diffScores([s("m", 1, "1")], [s("m", 0, "1")]));
  assert.equal(one.ci95, null);
  assert.equal(significantlyWorse(one), false);
  // Improvement: the interval is above 0.
  const up = only(
    diffScores(
      [0.1, 0.2, 0.1].map((v, i) => s("m", v, `${i}`)),
      [0.5, 0.7, 0.6].map((v, i) => s("m", v, `${i}`)),
    ),
  );
  assert.ok(up.ci95 !== null && up.ci95[0] > 0);
  assert.equal(significantlyWorse(up), false);
});

// Epochs are averaged per example before pairing.
//   A: #1 epochs 0.2 0.3 → 0.25 (both fail); #2 epochs 1.0 0.8 → 0.9 (both pass)
//   B: #1 epochs 0.7 0.9 0.8 → 0.8 (all pass); #2 one unit 0.4 (fails)
//   pairs 2 (not 5): d = 0.55, −0.5; delta = 0.05 / 2 = 0.025
//   mean_a = (0.25 + 0.9) / 2 = 0.575, mean_b = (0.8 + 0.4) / 2 = 0.6
//   stderr of two pairs = |0.55 − (−0.5)| / 2 = 0.525; t(0.975, 1) = 12.706
//   half = 12.706 × 0.525 = 6.67065
Deno.test("diffScores averages the epochs of an example before pairing", () => {
  const a = [
    epoch("m", 0.2, "1", 1),
    epoch("m", 1.0, "2", 1),
    epoch("m", 0.3, "1", 2),
    epoch("m", 0.8, "2", 2),
  ];
  const b = [
    epoch("m", 0.7, "1", 1),
    epoch("m", 0.9, "1", 2),
    epoch("m", 0.8, "1", 3),
    s("m", 0.4, "2"),
  ];
  const line = only(diffScores(a, b));
  assert.equal(line.pairs, 2);
  close(line.mean_a, 0.575, 1e-12);
  close(line.mean_b, 0.6, 1e-12);
  close(line.delta, 0.025, 1e-12);
  close(line.stderr, 0.525, 1e-9);
  close(line.ci95![0], 0.025 - 6.67065, 1e-2);
  close(line.ci95![1], 0.025 + 6.67065, 1e-2);
  assert.equal(line.improved, 1);
  assert.equal(line.regressed, 1);
  assert.equal(line.newly_passing, 1);
  assert.equal(line.newly_failing, 1);
  assert.equal(line.only_a + line.only_b, 0);
  assert.deepEqual(line.regressions, [
    { example_id: "data.jsonl#2", a: 0.9, b: 0.4 },
  ]);
});

Deno.test("diffScores never pairs errors, skipped or invalid Scores", () => {
  const id = (n: string) => ({
    example_id: `data.jsonl#${n}`,
    unit_id: `data.jsonl#${n}`,
  });
  const a = [
    s("m", 0.9, "1"),
    s("m", 0.8, "2"),
    s("m", 0.4, "3"),
    s("m", 0.1, "4"),
    errored("m", "target error: boom", id("5")),
    s("m", 0.7, "6"),
  ];
  const b = [
    errored("m", "scorer error: exit status 1", id("1")),
    skipped("m", id("2")),
    scored("m", 0.9, { ...id("3"), validity: "invalid" }),
    s("m", 0.3, "4"),
    s("m", 1, "5"),
    notApplicable("m", id("6")),
    s("m", 1, "7"),
  ];
  const line = only(diffScores(a, b));
  // Only #4 is aggregatable in both: 0.1 → 0.3.
  assert.equal(line.pairs, 1);
  close(line.delta, 0.2, 1e-12);
  assert.equal(line.improved, 1, "#3 (invalid in B) did not improve");
  assert.equal(line.regressed, 0, "#1 (errored in B) did not regress");
  assert.deepEqual(line.regressions, []);
  // No pair, but a verdict each side: an error fails, as in the pass rate.
  assert.equal(line.newly_failing, 1, "#1 passed in A and errors in B");
  assert.equal(line.newly_passing, 1, "#5 errored in A and passes in B");
  assert.equal(line.only_a, 0, "#1, #2, #3, #6 are in B, as non-aggregatable");
  assert.equal(line.only_b, 1, "#7");
});

Deno.test("diffScores counts examples in one run only per metric", () => {
  const a = [s("m", 1, "1"), s("m", 1, "2"), s("m", 1, "3"), s("k", 1, "1")];
  const b = [s("m", 1, "2"), s("m", 1, "4"), s("n", 0, "1")];
  const lines = diffScores(a, b);
  assert.deepEqual(lines.map((l) => l.metric), ["k", "m", "n"]);
  const [k, m, n] = lines;
  assert.deepEqual(
    [k!.pairs, k!.only_a, k!.only_b, m!.pairs, m!.only_a, m!.only_b],
    [0, 1, 0, 1, 2, 1],
  );
  assert.deepEqual([n!.pairs, n!.only_a, n!.only_b], [0, 0, 1]);
  // Epochs of one example count once.
  const e = only(diffScores(
    [epoch("m", 1, "9", 1), epoch("m", 1, "9", 2), epoch("m", 1, "9", 3)],
    [],
  ));
  assert.equal(e.only_a, 1);
});

Deno.test("diffScores gives null statistics, never NaN, below two pairs", () => {
  const none = only(diffScores([s("m", 1, "1")], [s("m", 1, "2")]));
  assert.equal(none.pairs, 0);
  assert.equal(none.mean_a, null);
  assert.equal(none.mean_b, null);
  assert.equal(none.delta, null);
  assert.equal(none.stderr, null);
  assert.equal(none.ci95, null);
  const one = only(diffScores([s("m", 0.25, "1")], [s("m", 0.75, "1")]));
  assert.equal(one.pairs, 1);
  assert.equal(one.delta, 0.5);
  assert.equal(one.stderr, null);
  assert.equal(one.ci95, null);
  // Identical runs: stderr 0, a zero-width interval, not NaN.
  const same = only(diffScores(
    [s("m", 0.5, "1"), s("m", 0.5, "2")],
    [s("m", 0.5, "1"), s("m", 0.5, "2")],
  ));
  assert.equal(same.stderr, 0);
  assert.deepEqual(same.ci95, [0, 0]);
  const empty = diffScores([], []);
  assert.deepEqual(empty, []);
  for (const line of [none, one, same]) {
    assertNoNaN(line);
    assert.doesNotMatch(JSON.stringify(line), /NaN|Infinity/);
  }
});

Deno.test("diffScores gives null, never NaN, when huge values overflow", () => {
  const a = [s("m", 1.7e308, "1"), s("m", 1.7e308, "2"), s("m", 0, "3")];
  const b = [s("m", -1.7e308, "1"), s("m", -1.7e308, "2"), s("m", 0, "3")];
  const line = only(diffScores(a, b));
  assert.equal(line.pairs, 3);
  assertNoNaN(line);
  assert.equal(line.delta, null, "−3.4e308 has no double");
  assert.equal(line.ci95, null);
  assert.equal(line.regressed, 2);
});

// --- the CLI ---------------------------------------------------------------

Deno.test("diffScores clamps the interval of a difference to what the metric's range allows", () => {
  // d = B − A: −1, 0, −1, 0 → delta −0.5; deviations ±0.5, variance
  // 4 × 0.25 / 3 = 1/3, stderr √(1/3 / 4) = 0.288675; t(0.975, 3) = 3.182446,
  // half 0.918693 → [−1.418693, 0.418693].
  const a = [1, 1, 1, 1].map((v, i) => s("m", v, `${i + 1}`));
  const b = [0, 1, 0, 1].map((v, i) => s("m", v, `${i + 1}`));
  const free = only(diffScores(a, b));
  close(free.ci95![0], -1.418693, 1e-5);
  assert.deepEqual(free.ci95, free.ci95_unclamped);
  // A 0..1 metric: a difference lies within −1..1.
  const unit = only(diffScores(a, b, { valueRange: () => [0, 1] }));
  assert.deepEqual(unit.ci95_unclamped, free.ci95_unclamped);
  assert.equal(unit.ci95![0], -1);
  close(unit.ci95![1], 0.418693, 1e-5);
  assert.equal(significantlyWorse(unit), false);
  // A 1..5 metric: within −4..4; the same values, scaled, reach −5.67.
  const stars = only(
    diffScores(
      [5, 5, 5, 5].map((v, i) => s("m", v, `${i + 1}`)),
      [1, 5, 1, 5].map((v, i) => s("m", v, `${i + 1}`)),
      { valueRange: () => [1, 5] },
    ),
  );
  close(stars.ci95_unclamped![0], -2 - 4 * 0.918693, 1e-4);
  assert.equal(stars.ci95![0], -4);
  // A paired example's mean outside the declared range: the declaration
  // is not trusted, nothing is clamped (as the aggregate does).
  const broken = only(
    diffScores([...a.slice(0, 3), s("m", 1.5, "4")], b, {
      valueRange: () => [0, 1],
    }),
  );
  assert.deepEqual(broken.ci95, broken.ci95_unclamped);
  assert.ok(broken.ci95![0] < -1);
  // Another metric's range does not apply.
  const other = only(
    diffScores(a, b, { valueRange: (m) => m === "k" ? [0, 1] : undefined }),
  );
  assert.deepEqual(other.ci95, other.ci95_unclamped);
});

function ndjson(scores: Score[]): string {
  return scores.map((x) => JSON.stringify(x) + "\n").join("");
}

function parseLines(stdout: string): DiffLine[] {
  assert.ok(stdout.endsWith("\n"));
  return stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
}

Deno.test("cli diff writes one NDJSON line per metric on stdout and the table on stderr", async () => {
  await withTempDir(async (dir) => {
    // m: the df-4 fixture above; k: one pair.
    await Deno.writeTextFile(
      `${dir}/a.ndjson`,
      ndjson([
        ...[1.0, 0.6, 0.3, 0.9, 0.5].map((v, i) => s("m", v, `${i + 1}`)),
        s("k", 0.5, "1"),
      ]),
    );
    await Deno.writeTextFile(
      `${dir}/b.ndjson`,
      ndjson([
        ...[0.4, 0.8, 0.7, 0.9, 0.2].map((v, i) => s("m", v, `${i + 1}`)),
        s("k", 1, "1"),
      ]),
    );
    const out = await cli(["diff", "a.ndjson", "b.ndjson"], dir);
    assert.equal(out.code, 0, out.stderr);
    const lines = parseLines(out.stdout);
    assert.deepEqual(lines.map((l) => l.metric), ["k", "m"]);
    const m = lines[1]!;
    assert.equal(m.pairs, 5);
    close(m.delta, -0.06, 1e-12);
    close(m.stderr, 0.177764, 1e-6);
    assert.equal(m.newly_failing, 2);
    assert.equal(lines[0]!.ci95, null);
    assert.doesNotMatch(out.stdout, /pairs\s+mean A/, "no table on stdout");
    assert.match(out.stderr, /metric\s+pairs\s+mean A\s+mean B/);
    assert.match(out.stderr, /Worst regressions of m:/);
    assert.match(out.stderr, /data\.jsonl#1\s+1\.000 → 0\.400/);
  });
});

Deno.test("cli diff --fail-on-regression exits 1 only when the interval is wholly below 0", async () => {
  await withTempDir(async (dir) => {
    const write = (name: string, values: number[]) =>
      Deno.writeTextFile(
        `${dir}/${name}`,
        ndjson(values.map((v, i) => s("m", v, `${i + 1}`))),
      );
    await write("base.ndjson", [0.9, 0.8, 0.9, 0.7]);
    await write("worse.ndjson", [0.5, 0.5, 0.6, 0.4]); // ci95 ≈ [−0.405, −0.245]
    await write("noisy.ndjson", [0.2, 0.9, 0.95, 0.8]); // falls, but the ci holds 0
    await write("better.ndjson", [1, 1, 1, 1]);

    const worse = await cli(
      ["diff", "base.ndjson", "worse.ndjson", "--fail-on-regression"],
      dir,
    );
    assert.equal(worse.code, 1, worse.stderr);
    assert.match(worse.stderr, /m got significantly worse/);
    const [line] = parseLines(worse.stdout);
    assert.ok(line!.ci95![1] < 0);

    const noisy = await cli(
      ["diff", "base.ndjson", "noisy.ndjson", "--fail-on-regression"],
      dir,
    );
    assert.equal(noisy.code, 0, noisy.stderr);
    const [n] = parseLines(noisy.stdout);
    assert.ok(n!.delta! < 0 && n!.ci95![0] < 0 && n!.ci95![1] > 0);

    const better = await cli(
      ["diff", "base.ndjson", "better.ndjson", "--fail-on-regression"],
      dir,
    );
    assert.equal(better.code, 0, better.stderr);

    const without = await cli(["diff", "base.ndjson", "worse.ndjson"], dir);
    assert.equal(without.code, 0, "without the flag a regression is reported");
    assert.match(without.stderr, /significantly worse/);
  });
});

Deno.test("cli diff compares two RunRecords", async () => {
  await withTempDir(async (dir) => {
    const config = `dataset: data.jsonl
target: { type: replay }
scorers:
  - type: exact_match
`;
    const cases = (outputs: string[]) =>
      outputs.map((output, i) =>
        JSON.stringify({ input: `q${i}`, expected: "yes", output }) + "\n"
      ).join("");
    for (
      const [name, outputs] of Object.entries({
        a: ["yes", "yes", "yes", "yes"],
        b: ["no", "no", "yes", "no"],
      })
    ) {
      await Deno.mkdir(`${dir}/${name}`);
      await Deno.writeTextFile(`${dir}/${name}/suite.yaml`, config);
      await Deno.writeTextFile(`${dir}/${name}/data.jsonl`, cases(outputs));
      const run = await cli(
        ["run", `${name}/suite.yaml`, "--record", `${name}.json`],
        dir,
      );
      assert.equal(run.code, 0, run.stderr);
    }
    const out = await cli(
      ["diff", "a.json", "b.json", "--fail-on-regression"],
      dir,
    );
    // d: −1 −1 0 −1, delta −0.75, sd 0.5, stderr 0.25,
    // ci95 = −0.75 ± 3.182 × 0.25 = [−1.5455, 0.0455]: holds 0.
    assert.equal(out.code, 0, out.stderr);
    const [line] = parseLines(out.stdout);
    assert.equal(line!.metric, "exact_match");
    assert.equal(line!.pairs, 4);
    close(line!.delta, -0.75, 1e-12);
    close(line!.stderr, 0.25, 1e-12);
    close(line!.ci95![1], 0.0455, 1e-3);
    // exact_match is 0..1, as both records say: a difference is not below
    // −1, so the low end −1.5455 is clamped to it, the computed one kept.
    assert.equal(line!.ci95![0], -1);
    close(line!.ci95_unclamped![0], -1.5455, 1e-3);
    close(line!.ci95_unclamped![1], 0.0455, 1e-3);
    assert.equal(line!.newly_failing, 3);
    assert.deepEqual(
      line!.regressions.map((r) => r.example_id),
      ["data.jsonl#1", "data.jsonl#2", "data.jsonl#4"],
    );
    assert.match(out.stderr, /exact_match\s+4\s+1\.000\s+0\.250/);
  });
});

Deno.test("cli diff --fail-on-regression fails, naming why, when nothing can be compared", async () => {
  await withTempDir(async (dir) => {
    const base = [0.9, 0.8, 0.9, 0.7].map((v, i) => s("m", v, `${i + 1}`));
    await Deno.writeTextFile(`${dir}/base.ndjson`, ndjson(base));
    // A broken candidate: every Score blocked, no pair left.
    await Deno.writeTextFile(
      `${dir}/broken.ndjson`,
      ndjson(base.map((x) =>
        blocked("m", "target error: down", {
          example_id: x.example_id!,
          unit_id: x.unit_id!,
        })
      )),
    );
    const broken = await cli(
      ["diff", "base.ndjson", "broken.ndjson", "--fail-on-regression"],
      dir,
    );
    assert.equal(broken.code, 1, broken.stderr);
    assert.match(
      broken.stderr,
      /^evalpipe: cannot compare: m: no example is measured in both runs \(A: 4 scored, B: 0 scored\)$/m,
    );
    // An empty candidate.
    await Deno.writeTextFile(`${dir}/empty.ndjson`, "");
    const empty = await cli(
      ["diff", "base.ndjson", "empty.ndjson", "--fail-on-regression"],
      dir,
    );
    assert.equal(empty.code, 1, empty.stderr);
    assert.match(
      empty.stderr,
      /cannot compare: the runs share 0 examples of A's 4 and B's 0, under half/,
    );
    // One shared example of four: a pair, but under half.
    await Deno.writeTextFile(
      `${dir}/other.ndjson`,
      ndjson([
        s("m", 0.9, "1"),
        s("m", 1, "x"),
        s("m", 1, "y"),
        s("m", 1, "z"),
      ]),
    );
    const other = await cli(
      ["diff", "base.ndjson", "other.ndjson", "--fail-on-regression"],
      dir,
    );
    assert.equal(other.code, 1, other.stderr);
    assert.match(other.stderr, /share 1 example of A's 4 and B's 4/);
    // Without the flag the same is said, and the exit is 0.
    const told = await cli(["diff", "base.ndjson", "broken.ndjson"], dir);
    assert.equal(told.code, 0);
    assert.match(told.stderr, /cannot compare: m: no example/);
  });
});

Deno.test("cli diff says which metric's evaluator differs from A to B, as run --baseline does", async () => {
  await withTempDir(async (dir) => {
    // The judge's prompt was edited between the runs; m's scorer was not.
    const run = (judge: string) =>
      ["1", "2", "3"].flatMap((id) => [
        s("m", 1, id),
        { ...s("judge", 0.8, id), evaluator_version: judge },
      ]);
    await Deno.writeTextFile(`${dir}/a.ndjson`, ndjson(run("judge@1a2b3c4d")));
    await Deno.writeTextFile(`${dir}/b.ndjson`, ndjson(run("judge@5e6f7a8b")));
    const out = await cli(["diff", "a.ndjson", "b.ndjson"], dir);
    assert.equal(out.code, 0, out.stderr);
    assert.match(
      out.stderr,
      /^evalpipe: the evaluator of judge differs from A to B \(judge@1a2b3c4d → judge@5e6f7a8b\): its cases are compared all the same, so a change may be the evaluator's$/m,
    );
    assert.doesNotMatch(out.stderr, /evaluator of m /);
    const same = await cli(["diff", "a.ndjson", "a.ndjson"], dir);
    assert.doesNotMatch(same.stderr, /evaluator of/);
  });
});

Deno.test("cli diff pairs the examples of one dataset named by two relative paths", async () => {
  await withTempDir(async (dir) => {
    const at = (prefix: string, values: number[]) =>
      ndjson(values.map((v, i) => {
        const id = `${prefix}#case-${i + 1}`;
        return scored("m", v, { example_id: id, unit_id: id });
      }));
    await Deno.writeTextFile(
      `${dir}/a.ndjson`,
      at("datasets/support.jsonl", [1, 1, 0, 1]),
    );
    await Deno.writeTextFile(
      `${dir}/b.ndjson`,
      at("../evals/datasets/support.jsonl", [1, 0, 0, 1]),
    );
    const out = await cli(
      ["diff", "a.ndjson", "b.ndjson", "--fail-on-regression"],
      dir,
    );
    assert.equal(out.code, 0, out.stderr);
    const [line] = parseLines(out.stdout);
    assert.equal(line!.pairs, 4);
    assert.equal(line!.delta, -0.25);
    assert.deepEqual(line!.regressions, [
      { example_id: "datasets/support.jsonl#case-2", a: 1, b: 0 },
    ]);
    assert.match(
      out.stderr,
      /A names the dataset "datasets\/support\.jsonl" and B "\.\.\/evals\/datasets\/support\.jsonl": examples are paired by their case id/,
    );
    // Two different datasets never pair by case id.
    await Deno.writeTextFile(
      `${dir}/c.ndjson`,
      at("datasets/other.jsonl", [1, 1, 1, 1]),
    );
    const apart = await cli(["diff", "a.ndjson", "c.ndjson"], dir);
    assert.equal(parseLines(apart.stdout)[0]!.pairs, 0);
  });
});

Deno.test("cli diff pairs an example id written in NFC in one run and NFD in the other, and shows A's as written", async () => {
  await withTempDir(async (dir) => {
    const nfc = "café-1"; // é one code point, as typed
    const nfd = nfc.normalize("NFD"); // e and a combining accent, as macOS names files
    assert.notEqual(nfc, nfd);
    const lines = (scores: Score[]) =>
      scores.map((x) => JSON.stringify(x) + "\n").join("");
    // A's ids in NFD (a dataset exported on a Mac), B's in NFC.
    await Deno.writeTextFile(
      `${dir}/a.ndjson`,
      lines([s("m", 1, nfd), s("m", 1, "plain")]),
    );
    await Deno.writeTextFile(
      `${dir}/b.ndjson`,
      lines([s("m", 0, nfc), s("m", 1, "plain")]),
    );
    const out = await cli(["diff", "a.ndjson", "b.ndjson"], dir);
    assert.equal(out.code, 0, out.stderr);
    const [line] = out.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
    assert.equal(line.pairs, 2);
    assert.equal(line.only_a, 0);
    assert.equal(line.only_b, 0);
    assert.equal(line.newly_failing, 1);
    assert.deepEqual(line.regressions, [
      { example_id: `data.jsonl#${nfd}`, a: 1, b: 0 },
    ]);
    // And with the dataset named by two paths, as from two folders.
    const moved = [scored("m", 0, {
      example_id: `../data.jsonl#${nfc}`,
      unit_id: `../data.jsonl#${nfc}`,
    })];
    const [far] = diffScores([s("m", 1, nfd)], moved);
    assert.equal(far!.pairs, 1);
    assert.equal(far!.regressions[0]!.example_id, `data.jsonl#${nfd}`);
  });
});

// A pass flip is a `require: majority` verdict: more than half of the epochs
// tried, an error or blocked epoch tried and failed, as the Aggregate's
// `pass_majority` and `run --baseline` count it.
//   #1: A 1 1 (2 of 2) → B 1 0 (1 of 2, not more than half): newly failing
//   #2: A 1 1 1 → B 1 1 error error (2 of 4): newly failing
//   #3: A 0 0 → B 1 1 1 blocked (3 of 4): newly passing
//   #4: A 1 1 → B 1 1 1 error (3 of 4): no flip
Deno.test("diffScores flips a verdict on more than half of the epochs tried, errors failing", () => {
  const eid = (n: string, e: number) => ({
    example_id: `data.jsonl#${n}`,
    unit_id: `data.jsonl#${n}@${e}`,
  });
  const a = [
    epoch("m", 1, "1", 1),
    epoch("m", 1, "1", 2),
    epoch("m", 1, "2", 1),
    epoch("m", 1, "2", 2),
    epoch("m", 1, "2", 3),
    epoch("m", 0, "3", 1),
    epoch("m", 0, "3", 2),
    epoch("m", 1, "4", 1),
    epoch("m", 1, "4", 2),
  ];
  const b = [
    epoch("m", 1, "1", 1),
    epoch("m", 0, "1", 2),
    epoch("m", 1, "2", 1),
    epoch("m", 1, "2", 2),
    errored("m", "scorer error: exit status 1", eid("2", 3)),
    errored("m", "scorer error: exit status 1", eid("2", 4)),
    epoch("m", 1, "3", 1),
    epoch("m", 1, "3", 2),
    epoch("m", 1, "3", 3),
    blocked("m", "target error: HTTP 503", eid("3", 4)),
    epoch("m", 1, "4", 1),
    epoch("m", 1, "4", 2),
    epoch("m", 1, "4", 3),
    errored("m", "scorer error: exit status 1", eid("4", 4)),
  ];
  const line = only(diffScores(a, b));
  assert.equal(line.pairs, 4);
  assert.equal(
    line.newly_failing,
    2,
    "#1 (1 of 2) and #2 (2 of 4, errors tried)",
  );
  assert.equal(line.newly_passing, 1, "#3 (3 of 4)");
  // The mean stays over values: #2's errors are no 0.0.
  assert.equal(line.regressed, 1, "only #1's mean fell");
});

Deno.test("diffScores counts a case that passed in A and has only error or blocked epochs in B as newly failing, as compareWithBaseline lists it", async () => {
  const { compareWithBaseline } = await import("../../src/run/baseline.ts");
  const eid = (n: string, e: number) => ({
    example_id: `data.jsonl#${n}`,
    unit_id: `data.jsonl#${n}@${e}`,
  });
  const a = [
    epoch("m", 1, "1", 1),
    epoch("m", 1, "1", 2),
    epoch("m", 1, "2", 1),
    epoch("m", 1, "2", 2),
  ];
  const b = [
    errored("m", "scorer error: exit status 1", eid("1", 1)),
    blocked("m", "target error: HTTP 503", eid("1", 2)),
    epoch("m", 1, "2", 1),
    epoch("m", 1, "2", 2),
  ];
  const line = only(diffScores(a, b, { require: "all" }));
  assert.equal(line.pairs, 1, "#1 has no value in B: no pair");
  assert.equal(line.newly_failing, 1);
  assert.equal(line.only_a + line.only_b, 0);
  const run = compareWithBaseline(a, b, "all");
  assert.deepEqual(run.newly_failing.map((c) => c.case), ["data.jsonl#1"]);
  assert.equal(run.metrics[0]!.newly_failing, 1);
});

Deno.test("diffScores judges flips by the requirement it is given", () => {
  // Each example passes 1 of its 2 epochs in B, both in A.
  const a = ["1", "2"].flatMap((id) => [1, 2].map((e) => epoch("m", 1, id, e)));
  const b = ["1", "2"].flatMap((id) =>
    [1, 0].map((v, e) => epoch("m", v, id, e + 1))
  );
  assert.equal(
    only(diffScores(a, b)).newly_failing,
    2,
    "majority: 1 of 2 fails",
  );
  assert.equal(only(diffScores(a, b, { require: "any" })).newly_failing, 0);
  assert.equal(only(diffScores(a, b, { require: "all" })).newly_failing, 2);
});

Deno.test("cli diff judges a case's epochs by the records' require, B's when they differ, and saying so", async () => {
  await withTempDir(async (dir) => {
    const cases = (output: boolean) =>
      Array.from({ length: 3 }, (_, i) =>
        JSON.stringify({
          input: `q${i}`,
          expected: "yes",
          ...(output ? { output: "yes" } : {}),
        }) + "\n").join("");
    // B's target answers "yes" on its odd calls and "no" on its even ones:
    // one call at a time, each case passes one epoch of its two.
    const flip =
      `n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo $n > count
cat > /dev/null
if [ $((n % 2)) -eq 1 ]; then echo yes; else echo no; fi
`;
    const suite = (target: string, require: string) =>
      `dataset: data.jsonl
target: ${target}
scorers: [{ type: exact_match }]
epochs: { n: 2, require: ${require} }
concurrency: 1
`;
    const runs: Array<[string, string, string]> = [
      ["a", "{ type: replay }", "any"],
      ["b", "{ type: subprocess, cmd: sh flip.sh }", "any"],
      ["c", "{ type: subprocess, cmd: sh flip.sh }", "all"],
    ];
    for (const [name, target, require] of runs) {
      await Deno.mkdir(`${dir}/${name}`);
      await Deno.writeTextFile(
        `${dir}/${name}/suite.yaml`,
        suite(target, require),
      );
      await Deno.writeTextFile(
        `${dir}/${name}/data.jsonl`,
        cases(name === "a"),
      );
      await Deno.writeTextFile(`${dir}/${name}/flip.sh`, flip);
      const run = await cli(
        ["run", `${name}/suite.yaml`, "--record", `${name}.json`],
        dir,
      );
      assert.equal(run.code, 0, run.stderr);
    }
    // Both runs require any epoch to pass: every case still passes.
    const any = await cli(["diff", "a.json", "b.json"], dir);
    assert.equal(any.code, 0, any.stderr);
    const [same] = parseLines(any.stdout);
    assert.equal(same!.pairs, 3);
    assert.equal(same!.newly_failing, 0, any.stdout);
    assert.doesNotMatch(any.stderr, /judges a case over its epochs/);
    // C requires all: B's requirement judges both, and stderr says so.
    const all = await cli(["diff", "a.json", "c.json"], dir);
    assert.equal(all.code, 0, all.stderr);
    const [stricter] = parseLines(all.stdout);
    assert.equal(stricter!.newly_failing, 3, all.stdout);
    assert.match(
      all.stderr,
      /evalpipe: A judges a case over its epochs by require any and B by require all: newly_passing and newly_failing judge both runs by B's, require all/,
    );
  });
});

// A target that answers "yes" on its odd calls and "no" on its even ones:
// one call at a time, over three epochs each case passes one or two.
const FLIP =
  `n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo $n > count
cat > /dev/null
if [ $((n % 2)) -eq 1 ]; then echo yes; else echo no; fi
`;

/** Three cases expecting "yes", with that output for a replay target. */
function yesCases(output: boolean): string {
  return Array.from({ length: 3 }, (_, i) =>
    JSON.stringify({
      input: `q${i}`,
      expected: "yes",
      ...(output ? { output: "yes" } : {}),
    }) + "\n").join("");
}

Deno.test("cli diff of two Scores files judges a case's epochs by the require their sidecars keep, and says when one does not keep it", async () => {
  await withTempDir(async (dir) => {
    for (
      const [name, target] of [
        ["a", "{ type: replay }"],
        ["b", "{ type: subprocess, cmd: sh flip.sh }"],
      ] as const
    ) {
      await Deno.mkdir(`${dir}/${name}`);
      await Deno.writeTextFile(
        `${dir}/${name}/suite.yaml`,
        `dataset: data.jsonl
target: ${target}
scorers: [{ type: exact_match }]
epochs: { n: 3, require: all }
concurrency: 1
`,
      );
      await Deno.writeTextFile(
        `${dir}/${name}/data.jsonl`,
        yesCases(name === "a"),
      );
      await Deno.writeTextFile(`${dir}/${name}/flip.sh`, FLIP);
      const run = await cli(
        ["run", `${name}/suite.yaml`, "--out", `${name}.ndjson`],
        dir,
      );
      assert.equal(run.code, 0, run.stderr);
    }
    const sidecar = JSON.parse(
      await Deno.readTextFile(`${dir}/b.ndjson.meta.json`),
    );
    assert.equal(sidecar.settings.require, "all");
    // Every case of B failed an epoch: under require all, each is newly
    // failing (majority would count the one that passed one epoch only).
    const out = await cli(["diff", "a.ndjson", "b.ndjson"], dir);
    assert.equal(out.code, 0, out.stderr);
    const [line] = parseLines(out.stdout);
    assert.equal(line!.newly_failing, 3, out.stdout);
    assert.doesNotMatch(
      out.stderr,
      /judges a case over its epochs|does not say/,
    );
    // A's sidecar gone: B's require judges both, and stderr says so.
    await Deno.remove(`${dir}/a.ndjson.meta.json`);
    const unsaid = await cli(["diff", "a.ndjson", "b.ndjson"], dir);
    assert.equal(unsaid.code, 0, unsaid.stderr);
    assert.equal(parseLines(unsaid.stdout)[0]!.newly_failing, 3);
    assert.match(
      unsaid.stderr,
      /evalpipe: A does not say when a case passes over its epochs: newly_passing and newly_failing judge both runs by B's, require all/,
    );
  });
});

Deno.test("cli diff of one matrix run judges its targets' flips by the run's require", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: data.jsonl
targets:
  good: { type: replay }
  flip: { type: subprocess, cmd: sh flip.sh }
scorers: [{ type: exact_match }]
epochs: { n: 3, require: all }
concurrency: 1
`,
    );
    await Deno.writeTextFile(`${dir}/data.jsonl`, yesCases(true));
    await Deno.writeTextFile(`${dir}/flip.sh`, FLIP);
    const run = await cli(
      ["run", "suite.yaml", "--matrix", "good,flip", "--out", "m.ndjson"],
      dir,
    );
    assert.equal(run.code, 0, run.stderr);
    const out = await cli(["diff", "m.ndjson"], dir);
    assert.equal(out.code, 0, out.stderr);
    const [line] = out.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
    assert.equal(line.versus[0].target, "flip");
    assert.equal(line.versus[0].newly_failing, 3, out.stdout);
  });
});

Deno.test("unfitComparison names each run's dataset when the runs share no example because their datasets differ", async () => {
  const { unfitComparison } = await import("../../src/diff/diff.ts");
  const a = [1, 2, 3].map((i) =>
    scored("m", 1, { example_id: `data/v1.jsonl#${i}` })
  );
  const b = [1, 2, 3].map((i) =>
    scored("m", 1, { example_id: `data/v2.jsonl#${i}` })
  );
  const why = unfitComparison(a, b, diffScores(a, b));
  assert.equal(
    why[0],
    "the runs share 0 examples of A's 3 and B's 3, under half: A's are of dataset \"data/v1.jsonl\", B's of \"data/v2.jsonl\" (an example id starts with its dataset's name or path, as the config writes it)",
  );
  // Runs of one dataset that share too few examples: no such note.
  const c = [4, 5, 6].map((i) =>
    scored("m", 1, { example_id: `data/v1.jsonl#${i}` })
  );
  assert.equal(
    unfitComparison(a, c, diffScores(a, c))[0],
    "the runs share 0 examples of A's 3 and B's 3, under half",
  );
});

Deno.test("unfitComparison does not call one file read by two paths two datasets when the runs share few examples", async () => {
  const { unfitComparison } = await import("../../src/diff/diff.ts");
  // One suite run from two folders, B with --limit 1: paired by case id.
  const a = [1, 2, 3, 4].map((i) =>
    scored("m", 1, { example_id: `data/a.jsonl#${i}` })
  );
  const b = [scored("m", 1, { example_id: "../data/a.jsonl#1" })];
  assert.deepEqual(unfitComparison(a, b, diffScores(a, b)), [
    "the runs share 1 example of A's 4 and B's 1, under half",
  ]);
});

Deno.test("unfitComparison and run --baseline say a matrix run and a run of one target do not pair, whichever is the baseline", async () => {
  await withTempDir(async (dir) => {
    const cases = [1, 2, 3, 4].map((i) =>
      JSON.stringify({
        id: `c${i}`,
        input: `q${i}`,
        output: "a",
        expected: "a",
      })
    );
    await Deno.writeTextFile(`${dir}/d.jsonl`, cases.join("\n") + "\n");
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      "dataset: d.jsonl\ntargets: { v1: { type: replay }, v2: { type: replay } }\nmatrix: [v1, v2]\nscorers: [{ type: exact_match }]\n",
    );
    // Before, the run said only "the runs share 0 examples of A's 8 and
    // B's 4, under half" and listed every case as new and removed, as if
    // the dataset had changed.
    const saved = await cli(["run", "s.yaml", "--save-baseline", "m"], dir);
    assert.equal(saved.code, 0, saved.stderr);
    const one = await cli([
      "run",
      "s.yaml",
      "--target",
      "v1",
      "--baseline",
      "m",
    ], dir);
    assert.equal(one.code, 1, one.stderr);
    assert.match(
      one.stderr,
      /cannot compare with baseline ".*m\.json": the runs share 0 examples of A's 8 and B's 4, under half: A is a matrix run \(targets "v1", "v2"\) and B a run of one target, whose cases do not pair \(a matrix run's case is its example id and its target\)/,
    );
    const single = await cli(
      ["run", "s.yaml", "--target", "v1", "--save-baseline", "one"],
      dir,
    );
    assert.equal(single.code, 0, single.stderr);
    const matrix = await cli(["run", "s.yaml", "--baseline", "one"], dir);
    assert.equal(matrix.code, 1, matrix.stderr);
    assert.match(
      matrix.stderr,
      /under half: A is a run of one target and B a matrix run \(targets "v1", "v2"\), whose cases do not pair/,
    );
  });
});

Deno.test("cli diff of two matrix runs takes a target added to or removed from the matrix as new or removed cases, and one down in B as no comparison", async () => {
  await withTempDir(async (dir) => {
    // A Score of target `t` on case `id`, as a matrix run writes it.
    const m = (t: string, id: string, value = 1): Score => {
      const example_id = `data.jsonl#${id}`;
      return {
        ...scored("m", value, { example_id, unit_id: `${example_id}~${t}` }),
        target_name: t,
      };
    };
    const run = (targets: string[]) =>
      targets.flatMap((t) => ["1", "2", "3", "4"].map((id) => m(t, id)));
    await Deno.writeTextFile(`${dir}/ab.ndjson`, ndjson(run(["a", "b"])));
    await Deno.writeTextFile(`${dir}/abc.ndjson`, ndjson(run(["a", "b", "c"])));
    for (const [x, y] of [["ab", "abc"], ["abc", "ab"]]) {
      const out = await cli(
        ["diff", `${x}.ndjson`, `${y}.ndjson`, "--fail-on-regression"],
        dir,
      );
      assert.equal(out.code, 0, out.stderr);
      assert.doesNotMatch(out.stderr, /cannot compare/);
      assert.deepEqual(
        out.stdout.trim().split("\n").map((l) => {
          const d = JSON.parse(l);
          return [d.target_name, d.pairs, d.only_a, d.only_b];
        }),
        [["a", 4, 0, 0], ["b", 4, 0, 0], [
          "c",
          0,
          x === "abc" ? 4 : 0,
          x === "abc" ? 0 : 4,
        ]],
      );
    }
    // Target b in both runs, but down in B: no case of it is measured.
    const down = [
      ...run(["a"]),
      ...["1", "2", "3", "4"].map((id) => {
        const example_id = `data.jsonl#${id}`;
        return {
          ...blocked("m", "target error: refused", {
            example_id,
            unit_id: `${example_id}~b`,
          }),
          target_name: "b",
        };
      }),
    ];
    await Deno.writeTextFile(`${dir}/down.ndjson`, ndjson(down));
    const out = await cli(
      ["diff", "ab.ndjson", "down.ndjson", "--fail-on-regression"],
      dir,
    );
    assert.equal(out.code, 1, out.stderr);
    assert.match(
      out.stderr,
      /cannot compare: b: m: no example is measured in both runs \(A: 4 scored, B: 0 scored\)/,
    );
  });
});

Deno.test("diffScores of two matrix runs compares target by target unless asked to pool, as diff A B does", () => {
  // Target "down" lost every case and "up" gained as many: pooled, no change.
  const m = (t: string, id: string, value: number): Score => {
    const example_id = `data.jsonl#${id}`;
    return {
      ...scored("m", value, { example_id, unit_id: `${example_id}~${t}` }),
      target_name: t,
    };
  };
  const ids = ["1", "2", "3", "4"];
  const a = ids.flatMap((id) => [m("up", id, 0), m("down", id, 1)]);
  const b = ids.flatMap((id) => [m("up", id, 1), m("down", id, 0)]);
  assert.deepEqual(
    diffScores(a, b).map((l) => [l.target_name, l.pairs, l.delta]),
    [["up", 4, 1], ["down", 4, -1]],
  );
  assert.deepEqual(
    diffScores(a, b, { byTarget: false }).map((l) => [
      l.target_name,
      l.pairs,
      l.delta,
    ]),
    [[undefined, 8, 0]],
  );
});
