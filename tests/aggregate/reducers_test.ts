import assert from "node:assert/strict";
import { Aggregator, parseAggregate } from "../../src/aggregate/mod.ts";
import { fisherExactLower } from "../../src/aggregate/stats.ts";
import { blocked, errored, scored, skipped } from "../../src/score/mod.ts";

/** One example's epochs: 1 passes, 0 fails, "e" errors, "b" is blocked, "s" skipped. */
function epochs(id: string, marks: (0 | 1 | "e" | "b" | "s")[]) {
  return marks.map((m, i) => {
    const ids = { example_id: id, unit_id: `${id}@${i + 1}` };
    if (m === "e") return errored("m", "scorer error: x", ids);
    if (m === "b") return blocked("m", "target error: x", ids);
    if (m === "s") return skipped("m", { ...ids, reason: "filtered" });
    return scored("m", m, ids);
  });
}

function aggregateOf(groups: ReturnType<typeof epochs>[]) {
  const agg = new Aggregator();
  for (const g of groups) for (const s of g) agg.add(s);
  return agg.results()[0]!;
}

Deno.test("Aggregator counts cases passing all, most and any of their epochs, and the flaky ones", () => {
  // Five examples of 4 epochs each:
  //   d#1 1111  all, majority, any; not flaky
  //   d#2 1110  majority (3 of 4 > 2), any; flaky
  //   d#3 1100  any only (2 of 4 is not more than half); flaky
  //   d#4 1e00  any only (an error fails: 1 of 4); flaky
  //   d#5 0000  none; not flaky
  const a = aggregateOf([
    epochs("d#1", [1, 1, 1, 1]),
    epochs("d#2", [1, 1, 1, 0]),
    epochs("d#3", [1, 1, 0, 0]),
    epochs("d#4", [1, "e", 0, 0]),
    epochs("d#5", [0, 0, 0, 0]),
  ]);
  assert.equal(a.sums.tried, 5);
  assert.equal(a.pass_hat_k, 1 / 5);
  assert.equal(a.pass_majority, 2 / 5);
  assert.equal(a.pass_at_k, 4 / 5);
  assert.equal(a.flaky, 3);
  assert.equal(a.sums.passed_majority, 2);
  assert.equal(a.sums.flaky, 3);
});

Deno.test("Aggregator: an odd number of epochs, blocked and skipped ones", () => {
  //   d#1 110   2 of 3 > 1.5: majority; flaky
  //   d#2 1bs   the skipped epoch is no trial: 1 of 2, not a majority; flaky
  //   d#3 s s   no trial at all: not tried, not counted
  const a = aggregateOf([
    epochs("d#1", [1, 1, 0]),
    epochs("d#2", [1, "b", "s"]),
    epochs("d#3", ["s", "s"]),
  ]);
  assert.equal(a.sums.tried, 2);
  assert.equal(a.pass_majority, 1 / 2);
  assert.equal(a.pass_hat_k, 0);
  assert.equal(a.pass_at_k, 1);
  assert.equal(a.flaky, 2);
});

Deno.test("Aggregator merges the reducers' counts exactly, and an older line leaves them unknown", () => {
  const part = (groups: ReturnType<typeof epochs>[]) =>
    parseAggregate(JSON.parse(JSON.stringify(aggregateOf(groups))));
  const whole = new Aggregator();
  whole.mergeAggregate(part([epochs("d#1", [1, 1, 0])]));
  whole.mergeAggregate(part([epochs("d#2", [0, 0, 1])]));
  const merged = whole.results()[0]!;
  assert.equal(merged.pass_majority, 1 / 2);
  assert.equal(merged.flaky, 2);
  // A line written before the reducers: no passed_majority, no flaky.
  const old = JSON.parse(JSON.stringify(aggregateOf([epochs("d#3", [1])])));
  delete old.sums.passed_majority;
  delete old.sums.flaky;
  whole.mergeAggregate(parseAggregate(old));
  const unknown = whole.results()[0]!;
  assert.equal(unknown.pass_majority, null);
  assert.equal(unknown.flaky, null);
  assert.equal(unknown.pass_at_k, 1);
});

Deno.test("fisherExactLower matches hand-computed hypergeometric tails", () => {
  // 5/5 then 0/5: P(X >= 5), X ~ H(N 10, K 5, draws 5) = C(5,5)C(5,0)/C(10,5) = 1/252.
  assert.ok(Math.abs(fisherExactLower(5, 5, 0, 5) - 1 / 252) < 1e-12);
  // 5/5 then 2/5: K 7: C(7,5)C(3,0)/C(10,5) = 21/252 = 0.0833.
  assert.ok(Math.abs(fisherExactLower(5, 5, 2, 5) - 21 / 252) < 1e-12);
  // 4/5 then 1/5: K 5: [C(5,4)C(5,1) + C(5,5)C(5,0)]/252 = 26/252.
  assert.ok(Math.abs(fisherExactLower(4, 5, 1, 5) - 26 / 252) < 1e-12);
  // 3/3 then 0/3: 1/C(6,3) = 1/20 = 0.05, not below 0.05.
  assert.ok(Math.abs(fisherExactLower(3, 3, 0, 3) - 0.05) < 1e-12);
  // No fall at all: p = 1.
  assert.ok(Math.abs(fisherExactLower(0, 5, 5, 5) - 1) < 1e-12);
  assert.ok(Math.abs(fisherExactLower(2, 4, 2, 4) - 53 / 70) < 1e-12);
});

Deno.test("Aggregator keeps a matrix run's targets apart, in the order they came, and merges them apart", () => {
  const at = (target: string, id: string, v: number) => ({
    ...scored("m", v, { example_id: id, unit_id: `${id}~${target}` }),
    target_name: target,
  });
  // Adjacent Scores of one example from two targets: two clusters, not one.
  const agg = new Aggregator();
  for (
    const s of [
      at("b", "d#1", 1),
      at("a", "d#1", 0),
      at("b", "d#2", 1),
      at("a", "d#2", 1),
    ]
  ) agg.add(s);
  const [b, a] = agg.results();
  assert.equal(b!.target_name, "b");
  assert.equal(b!.mean, 1);
  assert.equal(b!.examples, 2);
  assert.equal(a!.target_name, "a");
  assert.equal(a!.mean, 0.5);
  // Aggregate lines of a matrix merge target by target.
  const whole = new Aggregator();
  for (const line of agg.results()) {
    whole.mergeAggregate(parseAggregate(JSON.parse(JSON.stringify(line))));
  }
  assert.deepEqual(
    whole.results().map((x) => `${x.target_name}:${x.mean}`),
    ["b:1", "a:0.5"],
  );
});
