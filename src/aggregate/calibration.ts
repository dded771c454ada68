/**
 * Calibrating judges: each Score's verdict beside the label a person gave
 * the same case, summed per metric into percent agreement, Cohen's κ, per
 * label counts and the confusion table. Pure: no I/O.
 *
 * @module
 */

import type { Score } from "../score/types.ts";
import { type JudgeAgreement, judgeAgreement } from "./agreement.ts";

/**
 * A person's verdict on a case: it passes or it fails.
 *
 * @example
 * ```ts
 * import { humanLabel, type HumanLabel } from "./mod.ts";
 * const label: HumanLabel | undefined = humanLabel("Pass", "faithfulness");
 * if (label !== "pass") throw new Error("unexpected");
 * ```
 */
export type HumanLabel = "pass" | "fail";

/** The labels in the order calibration lists them. */
const LABELS: readonly HumanLabel[] = ["pass", "fail"];

/**
 * A human label that cannot be read: not `pass`/`fail`, `true`/`false`, or
 * an object of them by metric.
 *
 * @example
 * ```ts
 * import { humanLabel, HumanLabelError } from "./mod.ts";
 * try {
 *   humanLabel("maybe", "faithfulness");
 *   throw new Error("expected an error");
 * } catch (error) {
 *   if (!(error instanceof HumanLabelError)) throw error;
 * }
 * ```
 */
export class HumanLabelError extends TypeError {
  /**
   * Creates the error.
   *
   * @param message What is wrong.
   */
  constructor(message: string) {
    super(message);
    this.name = "HumanLabelError";
  }
}

/**
 * A case's human label for a metric, from its `metadata.human`: one label
 * for every metric (`"pass"`, `"fail"`, `true`, `false`; case and white
 * space aside), or an object of them by metric
 * (`{"faithfulness": "pass", "correctness": "fail"}`).
 *
 * @param human The case's `metadata.human`.
 * @param metric The metric whose label is wanted.
 * @returns The label, or `undefined` when the case has none for the metric.
 * @throws {HumanLabelError} When the label is there but not one of those.
 *
 * @example
 * ```ts
 * import { humanLabel } from "./mod.ts";
 * if (humanLabel(true, "m") !== "pass" || humanLabel({ m: " FAIL " }, "m") !== "fail") throw new Error("unexpected");
 * if (humanLabel({ other: "pass" }, "m") !== undefined || humanLabel(undefined, "m") !== undefined) throw new Error("unexpected");
 * ```
 */
export function humanLabel(
  human: unknown,
  metric: string,
): HumanLabel | undefined {
  let label = human;
  let where = "metadata.human";
  if (typeof human === "object" && human !== null && !Array.isArray(human)) {
    label = Object.hasOwn(human, metric)
      ? (human as Record<string, unknown>)[metric]
      : undefined;
    where = `metadata.human.${metric}`;
  }
  if (label === undefined || label === null) return undefined;
  if (label === true) return "pass";
  if (label === false) return "fail";
  if (typeof label === "string") {
    const word = label.trim().toLowerCase();
    if (word === "pass" || word === "fail") return word;
  }
  throw new HumanLabelError(
    `"${where}" is ${
      JSON.stringify(label)
    }; a human label is "pass" or "fail" (or true or false)`,
  );
}

/**
 * A case the judge and the person labelled differently.
 *
 * @example
 * ```ts
 * import { Calibration, type Disagreement } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const c = new Calibration();
 * c.add(scored("m", 0.2, { example_id: "d#4", reason: "one claim unsupported" }), "pass");
 * const d: Disagreement | undefined = c.results()[0]?.disagreements[0];
 * if (d?.judge !== "fail" || d.human !== "pass" || d.reason !== "one claim unsupported") throw new Error("unexpected");
 * ```
 */
export interface Disagreement {
  /** The example. */
  example_id: string;
  /** The person's label. */
  human: HumanLabel;
  /** The judge's label. */
  judge: HumanLabel;
  /** The judge's reason, when it gave one. */
  reason?: string;
}

/**
 * One metric's calibration: the agreement of its judge with people, and
 * what kept cases out of it.
 *
 * @example An error Score is counted, not compared
 * ```ts
 * import { Calibration, type CalibrationLine } from "./mod.ts";
 * import { errored } from "../score/mod.ts";
 * const c = new Calibration();
 * c.add(errored("m", "scorer error: boom", { example_id: "d#1" }), "pass");
 * const line: CalibrationLine = c.results()[0]!;
 * if (line.n !== 0 || line.errors !== 1 || line.kappa !== null) throw new Error("unexpected");
 * ```
 */
export interface CalibrationLine extends JudgeAgreement {
  /** The metric. */
  metric: string;
  /** The judge's evaluator version, when a Score was seen. */
  evaluator_version?: string;
  /** Cases measured (`scored`, `valid`) without a human label for the metric. */
  unlabelled: number;
  /** Scores whose scorer failed. */
  errors: number;
  /** Scores whose case or target failed (a case without `output`). */
  blocked: number;
  /** Scores measured but not trusted (`scored`, `invalid`). */
  invalid: number;
  /** Scores of cases the metric does not apply to. */
  not_applicable: number;
  /** Scores deliberately not measured. */
  skipped: number;
  /** The cases where the labels differ, in the order they came. */
  disagreements: Disagreement[];
}

interface Tally {
  version?: string;
  pairs: { human: HumanLabel; judge: HumanLabel }[];
  disagreements: Disagreement[];
  unlabelled: number;
  errors: number;
  blocked: number;
  invalid: number;
  not_applicable: number;
  skipped: number;
}

/**
 * Sums Scores and the human labels of their cases into one
 * {@linkcode CalibrationLine} per metric. A Score is compared when it is
 * `scored` and `valid` (its `passed` is the judge's label: `pass` or
 * `fail`) and its case has a label for its metric; every other Score is
 * counted by why it was not.
 *
 * @example A judge that agrees on two cases of three
 * ```ts
 * import { Calibration } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const c = new Calibration(["faithfulness"]);
 * c.add(scored("faithfulness", 1, { example_id: "d#1" }), "pass");
 * c.add(scored("faithfulness", 0, { example_id: "d#2" }), "fail");
 * c.add(scored("faithfulness", 0.9, { example_id: "d#3", reason: "all supported" }), "fail");
 * const [line] = c.results();
 * if (line?.n !== 3 || line.agreement !== 2 / 3 || line.disagreements[0]?.example_id !== "d#3") throw new Error("unexpected");
 * ```
 */
export class Calibration {
  readonly #tallies = new Map<string, Tally>();

  /**
   * Creates an empty calibration.
   *
   * @param metrics Metrics to list first, in this order, even without a
   *   Score; others follow in the order their first Score came.
   */
  constructor(metrics: readonly string[] = []) {
    for (const m of metrics) this.#tally(m);
  }

  #tally(metric: string): Tally {
    let t = this.#tallies.get(metric);
    if (t === undefined) {
      t = {
        pairs: [],
        disagreements: [],
        unlabelled: 0,
        errors: 0,
        blocked: 0,
        invalid: 0,
        not_applicable: 0,
        skipped: 0,
      };
      this.#tallies.set(metric, t);
    }
    return t;
  }

  /**
   * Adds a Score and its case's human label for the Score's metric.
   *
   * @param score The judge's Score.
   * @param human The person's label, or `undefined` when the case has none.
   */
  add(score: Score, human: HumanLabel | undefined): void {
    const t = this.#tally(score.metric);
    t.version ??= score.evaluator_version;
    if (score.status === "error") t.errors++;
    else if (score.status === "blocked") t.blocked++;
    else if (score.status === "skipped") t.skipped++;
    else if (score.status === "non_evaluable") t.not_applicable++;
    else if (score.validity !== "valid") t.invalid++;
    else if (human === undefined) t.unlabelled++;
    else {
      const judge: HumanLabel = score.passed === false ? "fail" : "pass";
      t.pairs.push({ human, judge });
      if (judge !== human) {
        t.disagreements.push({
          example_id: score.example_id ?? "",
          human,
          judge,
          ...(score.reason !== undefined ? { reason: score.reason } : {}),
        });
      }
    }
  }

  /**
   * Each metric's calibration.
   *
   * @returns One line per metric.
   */
  results(): CalibrationLine[] {
    return [...this.#tallies].map(([metric, t]) => ({
      metric,
      ...(t.version !== undefined ? { evaluator_version: t.version } : {}),
      ...judgeAgreement(t.pairs, LABELS),
      unlabelled: t.unlabelled,
      errors: t.errors,
      blocked: t.blocked,
      invalid: t.invalid,
      not_applicable: t.not_applicable,
      skipped: t.skipped,
      disagreements: t.disagreements,
    }));
  }
}
