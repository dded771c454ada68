/**
 * How well a judge agrees with people: percent agreement and Cohen's κ over
 * the labels both gave the same cases, with 95% intervals, per label, and
 * the confusion table. Pure: no I/O.
 *
 * @module
 */

import { wilson95, Z95 } from "./stats.ts";

/**
 * One case's two labels: a person's and the judge's.
 *
 * @example A case where the judge passed what a person failed
 * ```ts
 * import { judgeAgreement, type LabelPair } from "./mod.ts";
 * const pair: LabelPair = { human: "fail", judge: "pass" };
 * if (judgeAgreement([pair]).agreement !== 0) throw new Error("unexpected");
 * ```
 */
export interface LabelPair {
  /** The label a person gave. */
  human: string;
  /** The label the judge gave. */
  judge: string;
}

/**
 * Cohen's κ of a confusion table, with the large-sample standard error of
 * Fleiss, Cohen and Everitt (1969), the one that holds when κ is not 0.
 *
 * @example Perfect agreement: κ is 1, its standard error 0
 * ```ts
 * import { cohenKappa, type KappaEstimate } from "./mod.ts";
 * const k: KappaEstimate = cohenKappa([[3, 0], [0, 2]]);
 * if (k.kappa !== 1 || k.stderr !== 0 || k.ci95?.join() !== "1,1") throw new Error("unexpected");
 * ```
 */
export interface KappaEstimate {
  /** Cases counted. */
  n: number;
  /** The observed agreement p_o: the share of cases on the diagonal; `null` when n is 0. */
  observed: number | null;
  /** The agreement expected by chance p_e, from the margins; `null` when n is 0. */
  expected: number | null;
  /** κ = (p_o − p_e) / (1 − p_e); `null` when p_e is 1 (both raters used one label, so κ is undefined). */
  kappa: number | null;
  /** κ's standard error; `null` with κ. */
  stderr: number | null;
  /** κ ± 1.96 standard errors, kept within −1..1; `null` with κ. */
  ci95: [number, number] | null;
}

/**
 * What the judge and people did with one label.
 *
 * @example The judge passed three cases, two of them rightly
 * ```ts
 * import { judgeAgreement, type LabelAgreement } from "./mod.ts";
 * const pairs = [["pass", "pass"], ["pass", "pass"], ["fail", "pass"], ["pass", "fail"]].map(([human, judge]) => ({ human: human!, judge: judge! }));
 * const pass: LabelAgreement = judgeAgreement(pairs, ["pass", "fail"]).per_label[0]!;
 * if (pass.judge !== 3 || pass.both !== 2 || pass.recall !== 2 / 3) throw new Error("unexpected");
 * ```
 */
export interface LabelAgreement {
  /** The label. */
  label: string;
  /** Cases people gave it. */
  human: number;
  /** Cases the judge gave it. */
  judge: number;
  /** Cases both gave it. */
  both: number;
  /** `both / judge`: how often the judge's label is the people's; `null` when the judge never gave it. */
  precision: number | null;
  /** `both / human`: how often the judge finds the people's label; `null` when people never gave it. */
  recall: number | null;
  /** Specific agreement `2·both / (human + judge)`; `null` when neither gave it. */
  specific_agreement: number | null;
}

/**
 * The agreement of a judge with people over some cases.
 *
 * @example No case with both labels: every figure is `null`, never 0
 * ```ts
 * import { judgeAgreement, type JudgeAgreement } from "./mod.ts";
 * const a: JudgeAgreement = judgeAgreement([], ["pass", "fail"]);
 * if (a.n !== 0 || a.kappa !== null || a.agreement !== null) throw new Error("unexpected");
 * ```
 */
export interface JudgeAgreement {
  /** Cases with both labels. */
  n: number;
  /** The labels, in the order of the confusion table's rows and columns. */
  labels: string[];
  /** `confusion[i][j]`: cases people labelled `labels[i]` and the judge `labels[j]`. */
  confusion: number[][];
  /** The share of cases where the labels agree; `null` when n is 0. */
  agreement: number | null;
  /** Its Wilson 95% interval; `null` when n is 0. */
  agreement_ci95: [number, number] | null;
  /** The agreement expected by chance from the margins; `null` when n is 0. */
  chance_agreement: number | null;
  /** Cohen's κ; `null` when undefined (n is 0, or both used one label only). */
  kappa: number | null;
  /** κ's standard error (Fleiss, Cohen and Everitt, 1969). */
  kappa_stderr: number | null;
  /** κ ± 1.96 standard errors, within −1..1. */
  kappa_ci95: [number, number] | null;
  /** Each label's counts, in the order of `labels`. */
  per_label: LabelAgreement[];
}

/**
 * Cohen's κ of a square confusion table (rows one rater, columns the
 * other), with its large-sample standard error by Fleiss, Cohen and Everitt
 * (1969) and the normal 95% interval.
 *
 * @param counts `counts[i][j]`: cases the first rater put in category i and
 *   the second in j; non-negative whole numbers.
 * @returns κ, p_o, p_e, the standard error and the interval.
 * @throws {RangeError} When the table is not square or holds a count that
 *   is not a non-negative whole number.
 *
 * @example Wikipedia's example: 50 grant proposals read by two readers
 * ```ts
 * import { cohenKappa } from "./mod.ts";
 * const k = cohenKappa([[20, 5], [10, 15]]);
 * if (k.observed !== 0.7 || k.expected !== 0.5 || Math.abs(k.kappa! - 0.4) > 1e-12) throw new Error("unexpected");
 * ```
 */
export function cohenKappa(
  counts: readonly (readonly number[])[],
): KappaEstimate {
  const k = counts.length;
  let n = 0;
  for (const row of counts) {
    if (row.length !== k) {
      throw new RangeError(
        `A confusion table must be square: ${k} rows, but a row of ${row.length}`,
      );
    }
    for (const c of row) {
      if (!(Number.isInteger(c) && c >= 0)) {
        throw new RangeError(
          `A confusion table holds counts, not ${JSON.stringify(c)}`,
        );
      }
      n += c;
    }
  }
  if (n === 0) {
    return {
      n,
      observed: null,
      expected: null,
      kappa: null,
      stderr: null,
      ci95: null,
    };
  }
  const p = counts.map((row) => row.map((c) => c / n));
  const rows = p.map((row) => row.reduce((a, b) => a + b, 0));
  const columns = p[0]!.map((_, j) => p.reduce((a, row) => a + row[j]!, 0));
  // Sums of counts, then one division: p_o of 35/50 is 0.7 exactly.
  let diagonal = 0;
  for (let i = 0; i < k; i++) diagonal += counts[i]![i]!;
  const observed = diagonal / n;
  let expected = 0;
  for (let i = 0; i < k; i++) expected += rows[i]! * columns[i]!;
  // Both raters used one category: p_e is 1 and κ is 0/0.
  if (expected >= 1 - 1e-12) {
    return { n, observed, expected, kappa: null, stderr: null, ci95: null };
  }
  const kappa = (observed - expected) / (1 - expected);
  const q = 1 - kappa;
  let sum = 0;
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) {
      const pij = p[i]![j]!;
      if (pij === 0) continue;
      sum += i === j
        ? pij * (1 - (rows[i]! + columns[i]!) * q) ** 2
        : pij * q * q * (columns[i]! + rows[j]!) ** 2;
    }
  }
  sum -= (kappa - expected * q) ** 2;
  // Rounding can take a variance of 0 (perfect agreement) a hair below it.
  const stderr = Math.sqrt(Math.max(0, sum) / (n * (1 - expected) ** 2));
  return {
    n,
    observed,
    expected,
    kappa,
    stderr,
    ci95: [
      Math.max(-1, kappa - Z95 * stderr),
      Math.min(1, kappa + Z95 * stderr),
    ],
  };
}

/**
 * The agreement of a judge's labels with people's over the same cases:
 * percent agreement with its Wilson interval, Cohen's κ with the interval of
 * {@linkcode cohenKappa}, each label's counts, and the confusion table.
 *
 * @param pairs Each case's two labels.
 * @param labels Labels to list first, in this order, even when no case has
 *   them (`["pass", "fail"]`); others follow, sorted.
 * @returns The agreement.
 *
 * @example Three cases, one disagreement
 * ```ts
 * import { judgeAgreement } from "./mod.ts";
 * const a = judgeAgreement([
 *   { human: "pass", judge: "pass" }, { human: "fail", judge: "fail" }, { human: "fail", judge: "pass" },
 * ], ["pass", "fail"]);
 * if (a.n !== 3 || JSON.stringify(a.confusion) !== "[[1,0],[1,1]]" || a.per_label[0]?.precision !== 0.5) throw new Error("unexpected");
 * ```
 */
export function judgeAgreement(
  pairs: Iterable<LabelPair>,
  labels: readonly string[] = [],
): JudgeAgreement {
  const list = [...pairs];
  const seen = new Set(labels);
  const others = new Set<string>();
  for (const { human, judge } of list) {
    for (const l of [human, judge]) if (!seen.has(l)) others.add(l);
  }
  const all = [...labels, ...[...others].sort()];
  const index = new Map(all.map((l, i) => [l, i]));
  const confusion = all.map(() => all.map(() => 0));
  for (const { human, judge } of list) {
    confusion[index.get(human)!]![index.get(judge)!]!++;
  }
  const n = list.length;
  const kappa = cohenKappa(confusion);
  const agreed = all.reduce((s, _, i) => s + confusion[i]![i]!, 0);
  const ratio = (a: number, b: number) => b > 0 ? a / b : null;
  return {
    n,
    labels: all,
    confusion,
    agreement: kappa.observed,
    agreement_ci95: n > 0 ? wilson95(agreed, n) : null,
    chance_agreement: kappa.expected,
    kappa: kappa.kappa,
    kappa_stderr: kappa.stderr,
    kappa_ci95: kappa.ci95,
    per_label: all.map((label, i) => {
      const human = confusion[i]!.reduce((a, b) => a + b, 0);
      const judge = confusion.reduce((a, row) => a + row[i]!, 0);
      const both = confusion[i]![i]!;
      return {
        label,
        human,
        judge,
        both,
        precision: ratio(both, judge),
        recall: ratio(both, human),
        specific_agreement: ratio(2 * both, human + judge),
      };
    }),
  };
}
