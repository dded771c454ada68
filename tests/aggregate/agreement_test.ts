// Cohen's kappa and its interval against figures worked out by hand here,
// from published examples, with the variance written in the other form
// Fleiss, Levin and Paik give (Statistical Methods for Rates and
// Proportions, 3rd ed., eq. 18.15), not the one the code uses.

import assert from "node:assert/strict";
import {
  Calibration,
  cohenKappa,
  errored,
  humanLabel,
  HumanLabelError,
  judgeAgreement,
  nonEvaluable,
  scored,
} from "../../mod.ts";

const Z = 1.959963984540054;

function near(actual: number | null, expected: number, digits = 12): void {
  assert.ok(actual !== null, `null is not ${expected}`);
  assert.ok(
    Math.abs(actual - expected) < 10 ** -digits,
    `${actual} is not ${expected}`,
  );
}

Deno.test("cohenKappa: Wikipedia's example of 50 grant proposals read by two readers", () => {
  // Both yes 20, A yes B no 5, A no B yes 10, both no 15.
  const k = cohenKappa([[20, 5], [10, 15]]);
  // p_o = (20 + 15) / 50 = 0.7; A says yes 25/50, B 30/50, so
  // p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5 and kappa = (0.7 - 0.5) / 0.5 = 0.4,
  // the figure Wikipedia gives.
  assert.equal(k.n, 50);
  near(k.observed, 0.7);
  near(k.expected, 0.5);
  near(k.kappa, 0.4);
  // FLP 18.15: var = [A + B - C] / (n (1 - p_e)^4), with p_ij the cell
  // shares, p_i. A's margins (0.5, 0.5), p_.j B's (0.6, 0.4):
  //   A = sum_i p_ii [(1 - p_e) - (p_.i + p_i.)(1 - p_o)]^2
  //     = 0.4 (0.5 - 1.1 * 0.3)^2 + 0.3 (0.5 - 0.9 * 0.3)^2
  //     = 0.4 * 0.0289 + 0.3 * 0.0529 = 0.01156 + 0.01587 = 0.02743
  //   B = (1 - p_o)^2 sum_{i != j} p_ij (p_.i + p_j.)^2
  //     = 0.09 (0.1 (0.6 + 0.5)^2 + 0.2 (0.4 + 0.5)^2)
  //     = 0.09 (0.121 + 0.162) = 0.02547
  //   C = (p_o p_e - 2 p_e + p_o)^2 = (0.35 - 1 + 0.7)^2 = 0.0025
  //   var = (0.02743 + 0.02547 - 0.0025) / (50 * 0.0625) = 0.05040 / 3.125
  //       = 0.016128
  const se = Math.sqrt(0.016128);
  near(k.stderr, se);
  near(k.ci95![0], 0.4 - Z * se);
  near(k.ci95![1], 0.4 + Z * se);
  // 0.127, and 0.151 to 0.649: the interval as printed to three places.
  assert.equal(k.stderr!.toFixed(3), "0.127");
  assert.deepEqual(k.ci95!.map((x) => x.toFixed(3)), ["0.151", "0.649"]);
});

Deno.test("cohenKappa: three categories, two diagnosticians of 100 patients", () => {
  // Shares (rows A, columns B), times 100:
  //   75  1  4 | 80
  //    5  4  1 | 10
  //    0  0 10 | 10
  //   80  5 15
  const k = cohenKappa([[75, 1, 4], [5, 4, 1], [0, 0, 10]]);
  // p_o = 0.89; p_e = 0.8 * 0.8 + 0.1 * 0.05 + 0.1 * 0.15 = 0.66;
  // kappa = 0.23 / 0.34 = 0.67647...
  near(k.observed, 0.89);
  near(k.expected, 0.66);
  near(k.kappa, 0.23 / 0.34);
  // FLP 18.15, with 1 - p_e = 0.34 and 1 - p_o = 0.11:
  //   A = 0.75 (0.34 - 1.6 * 0.11)^2 + 0.04 (0.34 - 0.15 * 0.11)^2
  //       + 0.10 (0.34 - 0.25 * 0.11)^2
  //     = 0.75 * 0.026896 + 0.04 * 0.10465225 + 0.1 * 0.09765625
  //     = 0.020172 + 0.00418609 + 0.009765625 = 0.034123715
  //   B = 0.0121 (0.01 (0.8 + 0.1)^2 + 0.04 (0.8 + 0.1)^2
  //       + 0.05 (0.05 + 0.8)^2 + 0.01 (0.05 + 0.1)^2)
  //     = 0.0121 (0.0081 + 0.0324 + 0.036125 + 0.000225) = 0.0121 * 0.07685
  //     = 0.000929885
  //   C = (0.89 * 0.66 - 1.32 + 0.89)^2 = 0.1574^2 = 0.02477476
  //   var = (0.034123715 + 0.000929885 - 0.02477476) / (100 * 0.34^4)
  //       = 0.01027884 / 1.33633600
  const se = Math.sqrt(0.01027884 / 1.336336);
  near(k.stderr, se);
  assert.equal(k.stderr!.toFixed(4), "0.0877");
});

Deno.test("cohenKappa: perfect agreement, chance-level agreement, one category, no cases", () => {
  const perfect = cohenKappa([[7, 0], [0, 3]]);
  assert.equal(perfect.kappa, 1);
  assert.equal(perfect.stderr, 0);
  assert.deepEqual(perfect.ci95, [1, 1]);
  // Independent raters: each cell the product of its margins, kappa 0.
  const chance = cohenKappa([[4, 4], [4, 4]]);
  near(chance.kappa, 0);
  // Everything in one category for both: p_e = 1, kappa undefined, not 0 or 1.
  const one = cohenKappa([[9, 0], [0, 0]]);
  assert.equal(one.observed, 1);
  assert.equal(one.kappa, null);
  assert.equal(one.ci95, null);
  const none = cohenKappa([[0, 0], [0, 0]]);
  assert.equal(none.n, 0);
  assert.equal(none.observed, null);
  // Worse than chance: kappa below 0, the interval kept within -1..1.
  const against = cohenKappa([[0, 5], [5, 0]]);
  near(against.kappa, -1);
  assert.ok(against.ci95![0] >= -1 && against.ci95![1] <= 1);
  assert.throws(() => cohenKappa([[1, 2]]), RangeError);
  assert.throws(() => cohenKappa([[1, -1], [0, 1]]), RangeError);
  assert.throws(() => cohenKappa([[1.5, 0], [0, 1]]), RangeError);
});

Deno.test("judgeAgreement: the confusion table, per-label counts and the agreement's Wilson interval", () => {
  const pairs = [
    ...Array(20).fill({ human: "pass", judge: "pass" }),
    ...Array(5).fill({ human: "pass", judge: "fail" }),
    ...Array(10).fill({ human: "fail", judge: "pass" }),
    ...Array(15).fill({ human: "fail", judge: "fail" }),
  ];
  const a = judgeAgreement(pairs, ["pass", "fail"]);
  assert.deepEqual(a.labels, ["pass", "fail"]);
  assert.deepEqual(a.confusion, [[20, 5], [10, 15]]);
  near(a.kappa, 0.4);
  // Wilson, 35 of 50, by its formula.
  const p = 0.7;
  const n = 50;
  const centre = p + Z * Z / (2 * n);
  const margin = Z * Math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n));
  near(a.agreement_ci95![0], (centre - margin) / (1 + Z * Z / n));
  near(a.agreement_ci95![1], (centre + margin) / (1 + Z * Z / n));
  const [pass, fail] = a.per_label;
  assert.deepEqual(pass, {
    label: "pass",
    human: 25,
    judge: 30,
    both: 20,
    precision: 20 / 30,
    recall: 20 / 25,
    specific_agreement: 40 / 55,
  });
  assert.equal(fail?.precision, 15 / 20);
  // Labels beyond the given ones follow, sorted; a label no one used has
  // no precision or recall, not a 0.
  const b = judgeAgreement([{ human: "x", judge: "pass" }], ["pass", "fail"]);
  assert.deepEqual(b.labels, ["pass", "fail", "x"]);
  assert.equal(b.per_label[1]?.precision, null);
  assert.equal(b.per_label[1]?.specific_agreement, null);
});

Deno.test("humanLabel reads pass and fail, booleans, and an object by metric", () => {
  assert.equal(humanLabel("pass", "m"), "pass");
  assert.equal(humanLabel(" Fail\n", "m"), "fail");
  assert.equal(humanLabel(false, "m"), "fail");
  assert.equal(humanLabel({ m: true, n: "fail" }, "n"), "fail");
  assert.equal(humanLabel({ n: "fail" }, "m"), undefined);
  assert.equal(humanLabel(null, "m"), undefined);
  assert.throws(
    () => humanLabel({ m: "good" }, "m"),
    HumanLabelError,
    `"metadata.human.m" is "good"; a human label is "pass" or "fail" (or true or false)`,
  );
  assert.throws(() => humanLabel(1, "m"), HumanLabelError);
  assert.throws(() => humanLabel(["pass"], "m"), HumanLabelError);
});

Deno.test("Calibration compares only scored, valid Scores of labelled cases, and counts the rest", () => {
  const c = new Calibration(["judge", "never"]);
  const at = (i: number) => ({
    example_id: `d#${i}`,
    evaluator_version: "judge@1",
  });
  c.add(scored("judge", 1, at(1)), "pass");
  c.add(scored("judge", 0.2, { ...at(2), reason: "unsupported" }), "pass");
  c.add(scored("judge", 0.9, { ...at(3), validity: "invalid" }), "pass");
  c.add(errored("judge", "scorer error: boom", at(4)), "fail");
  c.add(
    nonEvaluable("judge", { ...at(5), reason: "not applicable: x" }),
    "fail",
  );
  c.add(scored("judge", 1, at(6)), undefined);
  const [judge, never] = c.results();
  assert.equal(judge?.metric, "judge");
  assert.equal(judge?.evaluator_version, "judge@1");
  assert.equal(judge?.n, 2);
  assert.deepEqual(judge?.confusion, [[1, 1], [0, 0]]);
  assert.equal(judge?.invalid, 1);
  assert.equal(judge?.errors, 1);
  assert.equal(judge?.not_applicable, 1);
  assert.equal(judge?.unlabelled, 1);
  assert.deepEqual(judge?.disagreements, [
    { example_id: "d#2", human: "pass", judge: "fail", reason: "unsupported" },
  ]);
  // A metric listed but never scored still has its line, with nulls.
  assert.equal(never?.n, 0);
  assert.equal(never?.kappa, null);
  assert.equal("evaluator_version" in never!, false);
});
