// The classification figures, checked against values worked out by hand
// from each confusion matrix and against scikit-learn's documented examples
// (`classification_report` and `f1_score`), never against the code itself.

import assert from "node:assert/strict";
import {
  type Aggregate,
  Aggregator,
  blocked,
  checkGates,
  classification,
  errored,
  nonEvaluable,
  parseAggregate,
  type Score,
  type Unit,
} from "../../mod.ts";

/** Scores of the classification scorer for (true label, output) pairs. */
function predictions(
  pairs: ReadonlyArray<readonly [unknown, string]>,
  name = "classification",
): Score[] {
  const scorer = classification({ name });
  return pairs.map(([expected, output], i) => {
    const unit: Unit = {
      example_id: `d#${i + 1}`,
      unit_id: `d#${i + 1}`,
      input: "q",
      output,
      ...(expected !== undefined ? { expected } : {}),
    };
    const s = scorer.score(unit, {}) as Score;
    return { ...s, example_id: unit.example_id, unit_id: unit.unit_id };
  });
}

function aggregateOf(scores: readonly Score[]): Aggregate {
  const aggregator = new Aggregator();
  for (const s of scores) aggregator.add(s);
  const [a, ...rest] = aggregator.results();
  assert.equal(rest.length, 0);
  return a!;
}

const near = (actual: number | null | undefined, expected: number) =>
  assert.ok(
    actual !== null && actual !== undefined &&
      Math.abs(actual - expected) < 1e-12,
    `${actual} is not ${expected}`,
  );

/** A figure shown to two decimals, as scikit-learn's report prints it. */
const two = (x: number | null | undefined) => x?.toFixed(2);

Deno.test("classification figures match scikit-learn's classification_report example", () => {
  // sklearn.metrics.classification_report docs:
  // y_true = [0, 1, 2, 2, 2], y_pred = [0, 0, 2, 2, 1] prints
  //   class 0  precision 0.50  recall 1.00  f1 0.67  support 1
  //   class 1            0.00         0.00     0.00          1
  //   class 2            1.00         0.67     0.80          3
  //   accuracy 0.60, macro avg f1 0.49, weighted avg f1 0.61
  const t = ["class 0", "class 1", "class 2", "class 2", "class 2"];
  const p = ["class 0", "class 0", "class 2", "class 2", "class 1"];
  const c = aggregateOf(predictions(t.map((x, i) => [x, p[i]!])))
    .classification!;
  assert.deepEqual(c.labels, ["class 0", "class 1", "class 2"]);
  assert.deepEqual(c.confusion, [[1, 0, 0], [1, 0, 0], [0, 1, 2]]);
  assert.deepEqual(c.per_label.map((l) => two(l.precision)), [
    "0.50",
    "0.00",
    "1.00",
  ]);
  assert.deepEqual(c.per_label.map((l) => two(l.recall)), [
    "1.00",
    "0.00",
    "0.67",
  ]);
  assert.deepEqual(c.per_label.map((l) => two(l.f1)), ["0.67", "0.00", "0.80"]);
  assert.deepEqual(c.per_label.map((l) => l.support), [1, 1, 3]);
  assert.equal(two(c.accuracy), "0.60");
  assert.equal(two(c.macro_f1), "0.49");
  assert.equal(two(c.weighted_f1), "0.61");
  // By hand: F1 = 2/3, 0, 4/5.
  near(c.macro_f1, (2 / 3 + 0 + 4 / 5) / 3);
  near(c.weighted_f1, (2 / 3 * 1 + 0 * 1 + 4 / 5 * 3) / 5);
  near(c.micro_f1, 3 / 5); // no invalid prediction: micro F1 is the accuracy
});

Deno.test("classification figures match scikit-learn's f1_score example", () => {
  // sklearn.metrics.f1_score docs: y_true = [0, 1, 2, 0, 1, 2],
  // y_pred = [0, 2, 1, 0, 0, 1]: macro 0.26..., micro 0.33...,
  // weighted 0.26..., average=None [0.8, 0, 0].
  const t = [0, 1, 2, 0, 1, 2];
  const p = ["0", "2", "1", "0", "0", "1"];
  const c = aggregateOf(predictions(t.map((x, i) => [x, p[i]!])))
    .classification!;
  assert.deepEqual(c.labels, ["0", "1", "2"]); // numbers are labels too
  assert.deepEqual(c.per_label.map((l) => l.f1), [0.8, 0, 0]);
  near(c.macro_f1, 0.8 / 3);
  assert.equal(c.macro_f1!.toFixed(2), "0.27"); // 0.2666...
  near(c.micro_f1, 1 / 3);
  near(c.weighted_f1, 0.8 / 3);
});

/**
 * A 3-class run worked out by hand, with an invalid prediction, an example
 * of two epochs, and Scores that carry no prediction (blocked, error, no
 * expected):
 *
 *   true \ predicted   cat  dog  fish  invalid   support
 *   cat                 2    1    0     1         4
 *   dog                 1    2    0     0         3
 *   fish                0    1    1     0         2
 *   predicted           3    4    1
 *
 * correct 5 of 9 predictions (8 valid); accuracy 5/9.
 * cat:  P 2/3, R 2/4, F1 2·2/(3+4) = 4/7
 * dog:  P 2/4, R 2/3, F1 2·2/(4+3) = 4/7
 * fish: P 1/1, R 1/2, F1 2·1/(1+2) = 2/3
 * macro F1 (4/7 + 4/7 + 2/3)/3 = 38/63; weighted (4/7·4 + 4/7·3 + 2/3·2)/9
 * = 16/27; micro P 5/8, R 5/9, F1 2·(5/8)(5/9)/(5/8 + 5/9) = 10/17.
 */
function handWorked(): Score[] {
  const scores = predictions([
    ["cat", "cat"],
    ["cat", " cat\n"],
    ["cat", "dog"],
    ["cat", ""], // invalid: no label
    ["dog", "dog"],
    ["dog", "cat"],
    ["fish", "fish"],
    ["fish", "dog"],
  ]);
  // Example d#5 ran twice: each epoch is a prediction.
  const [epoch2] = predictions([["dog", "dog"]]);
  scores[4] = { ...scores[4]!, unit_id: "d#5@1" };
  scores.splice(5, 0, { ...epoch2!, example_id: "d#5", unit_id: "d#5@2" });
  const none = { evaluator_version: "classification@1" };
  return [
    ...scores,
    blocked("classification", "target error: HTTP 503", {
      ...none,
      example_id: "d#20",
      unit_id: "d#20",
    }),
    errored("classification", "scorer error: boom", {
      ...none,
      example_id: "d#21",
      unit_id: "d#21",
    }),
    ...predictions([[undefined, "cat"]]).map((s) => ({
      ...s,
      example_id: "d#22",
      unit_id: "d#22",
    })),
  ];
}

Deno.test("classification figures of a hand-worked 3-class run with an invalid prediction and epochs", () => {
  const a = aggregateOf(handWorked());
  const c = a.classification!;
  assert.deepEqual(c.labels, ["cat", "dog", "fish"]);
  assert.deepEqual(c.confusion, [[2, 1, 0], [1, 2, 0], [0, 1, 1]]);
  assert.deepEqual(c.invalid_by_label, [1, 0, 0]);
  assert.equal(c.predictions, 9);
  assert.equal(c.invalid_predictions, 1);
  assert.equal(c.correct, 5);
  near(c.accuracy, 5 / 9);
  const byLabel = Object.fromEntries(c.per_label.map((l) => [l.label, l]));
  near(byLabel.cat!.precision, 2 / 3);
  near(byLabel.cat!.recall, 2 / 4);
  near(byLabel.cat!.f1, 4 / 7);
  near(byLabel.dog!.precision, 2 / 4);
  near(byLabel.dog!.recall, 2 / 3);
  near(byLabel.dog!.f1, 4 / 7);
  near(byLabel.fish!.precision, 1);
  near(byLabel.fish!.recall, 1 / 2);
  near(byLabel.fish!.f1, 2 / 3);
  assert.deepEqual(c.per_label.map((l) => l.support), [4, 3, 2]);
  assert.deepEqual(c.per_label.map((l) => l.predicted), [3, 4, 1]);
  near(c.macro_f1, 38 / 63);
  near(c.weighted_f1, 16 / 27);
  near(c.micro_f1, 10 / 17);
  // The Scores without a prediction are counted apart, not as wrong.
  assert.equal(a.blocked, 1);
  assert.equal(a.errors, 1);
  assert.equal(a.non_evaluable, 1);
  assert.equal(a.n, 12);
});

Deno.test("classification counts of shards merge into the whole run's", () => {
  const scores = handWorked();
  const shard = (part: Score[]) =>
    parseAggregate(JSON.parse(JSON.stringify(aggregateOf(part))));
  const merged = new Aggregator();
  // Split between examples: d#5's two epochs stay together.
  merged.mergeAggregate(shard(scores.slice(0, 3)));
  merged.mergeAggregate(shard(scores.slice(3)));
  const whole = aggregateOf(scores);
  assert.deepEqual(merged.results()[0]!.classification, whole.classification);
  assert.equal(merged.results()[0]!.n, whole.n);
});

Deno.test("parseAggregate refuses a confusion matrix of the wrong shape", () => {
  const line = JSON.parse(JSON.stringify(aggregateOf(handWorked())));
  line.classification.confusion = [[1, 2], [3, 4]];
  assert.throws(
    () => parseAggregate(line),
    /"classification\.confusion": must be 3 rows of 3 whole numbers/,
  );
  line.classification.confusion = [[1, 0, 0], [0, 1, 0], [0, 0, -1]];
  assert.throws(() => parseAggregate(line), SyntaxError);
});

Deno.test("checkGates min_accuracy and min_macro_f1 read the classification figures", () => {
  const aggregates = [aggregateOf(handWorked())];
  // accuracy 5/9 = 0.5556, macro F1 38/63 = 0.6032
  assert.deepEqual(
    checkGates(
      { classification: { min_accuracy: 0.5, min_macro_f1: 0.6 } },
      aggregates,
    ),
    [],
  );
  const failures = checkGates(
    { classification: { min_accuracy: 0.8, min_macro_f1: 0.7 } },
    aggregates,
  );
  assert.deepEqual(failures.map((f) => f.message), [
    "classification: accuracy 0.555556 < min_accuracy 0.8",
    "classification: macro F1 0.603175 < min_macro_f1 0.7",
  ]);
  // A metric without classification figures has no accuracy: the gate fails.
  const other = checkGates(
    { m: { min_accuracy: 0.1 } },
    [aggregateOf([nonEvaluable("m", { example_id: "x#1" })])],
  );
  assert.equal(other[0]?.actual, null);
});
