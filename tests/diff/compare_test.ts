import assert from "node:assert/strict";
import { compareTargets, diffScores } from "../../src/diff/mod.ts";
import { errored, scored } from "../../src/score/mod.ts";
import type { Score } from "../../src/score/mod.ts";

const at = (target: string, id: string, v: number, epoch?: number): Score => ({
  ...scored("m", v, {
    example_id: id,
    unit_id: `${id}${epoch !== undefined ? `@${epoch}` : ""}~${target}`,
  }),
  target_name: target,
});

Deno.test("compareTargets gives each target's mean and interval, and the paired difference from the first", () => {
  // a: 1, 0.5, 1, 0.5   b: 0.5, 0.5, 0, 0.5   c: only d#1 and d#2
  const scores = [
    at("a", "d#1", 1),
    at("b", "d#1", 0.5),
    at("c", "d#1", 1),
    at("a", "d#2", 0.5),
    at("b", "d#2", 0.5),
    at("c", "d#2", 0),
    at("a", "d#3", 1),
    at("b", "d#3", 0),
    at("a", "d#4", 0.5),
    at("b", "d#4", 0.5),
  ];
  const [line] = compareTargets(scores, { valueRange: () => [0, 1] });
  assert.equal(line!.metric, "m");
  const [a, b, c] = line!.targets;
  // a: mean 0.75; deviations ±0.25, variance 4·0.0625/3 = 1/12; stderr
  // √(1/12/4) = 0.144338; t(0.975, 3) = 3.182446, half 0.459347.
  assert.equal(a!.mean, 0.75);
  assert.ok(Math.abs(a!.ci95![0] - (0.75 - 0.459347)) < 1e-6);
  assert.equal(a!.ci95![1], 1); // 1.209… clamped to the range
  assert.equal(b!.mean, 0.375);
  assert.equal(c!.examples, 2);
  const [vb, vc] = line!.versus;
  // b − a per example: −0.5, 0, −1, 0: delta −0.375; deviations −0.125,
  // 0.375, −0.625, 0.375: variance (0.015625 + 0.140625·2 + 0.390625)/3 =
  // 0.229167; stderr √(0.229167/4) = 0.239357; half 3.182446·0.239357 = 0.761737.
  assert.equal(vb!.target, "b");
  assert.equal(vb!.against, "a");
  assert.equal(vb!.pairs, 4);
  assert.equal(vb!.delta, -0.375);
  assert.ok(Math.abs(vb!.stderr! - 0.239357) < 1e-6);
  assert.ok(
    Math.abs(vb!.ci95_unclamped![0] - (-0.375 - 0.761737)) < 1e-5,
  );
  // −1.136… clamped to −1: a difference of two values of 0..1 is not below −1.
  assert.equal(vb!.ci95![0], -1);
  assert.ok(Math.abs(vb!.ci95![1] - (-0.375 + 0.761737)) < 1e-5);
  // Verdicts (value >= 0.5 passes): d#3 passes with a, fails with b.
  assert.equal(vb!.newly_failing, 1);
  assert.equal(vb!.newly_passing, 0);
  assert.equal(vb!.regressed, 2);
  // c against a: two pairs, 0 and −0.5.
  assert.equal(vc!.pairs, 2);
  assert.equal(vc!.delta, -0.25);
  // The same paired statistics as diff over the split Scores.
  const strip = (t: string) =>
    scores.filter((s) => s.target_name === t).map(({ target_name: _, ...s }) =>
      s
    );
  const d = diffScores(strip("a"), strip("b"), { valueRange: () => [0, 1] })[
    0
  ]!;
  assert.deepEqual(
    [vb!.delta, vb!.stderr, vb!.ci95, vb!.ci95_unclamped],
    [d.delta, d.stderr, d.ci95, d.ci95_unclamped],
  );
});

Deno.test("compareTargets averages epochs per example and names a target without Scores", () => {
  const scores = [
    at("a", "d#1", 1, 1),
    at("a", "d#1", 0, 2),
    at("b", "d#1", 1, 1),
    at("b", "d#1", 1, 2),
    {
      ...errored("m", "scorer error: x", {
        example_id: "d#2",
        unit_id: "d#2~a",
      }),
      target_name: "a",
    },
  ];
  const [line] = compareTargets(scores, { targets: ["a", "b", "z"] });
  assert.deepEqual(line!.targets.map((t) => [t.target, t.mean]), [
    ["a", 0.5],
    ["b", 1],
    ["z", null],
  ]);
  assert.equal(line!.versus[0]!.pairs, 1);
  assert.equal(line!.versus[0]!.delta, 0.5);
  assert.equal(line!.versus[1]!.pairs, 0);
  assert.equal(line!.versus[1]!.delta, null);
  // a's pass rate counts the error as a failure: 1 pass of 3.
  assert.equal(line!.targets[0]!.pass_rate, 1 / 3);
});
