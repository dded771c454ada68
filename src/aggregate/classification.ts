/**
 * Classification figures: a confusion matrix counted from the Scores of a
 * classification metric (each Score one prediction, its labels in
 * `provenance.classification`), and what it sums up to: accuracy, macro,
 * micro and weighted F1, and per label precision, recall, F1 and support.
 * Counts merge exactly, so shards combine into the whole run's figures.
 *
 * @module
 */

import { FieldError, mappingAt } from "../io/fields.ts";
import type { Score } from "../score/mod.ts";

/**
 * One prediction: the true label and the predicted one, `null` when the
 * output gave no label (unparsable, the field missing): an invalid
 * prediction, which belongs to no label.
 *
 * @example Read the prediction a classification Score carries
 * ```ts
 * import { type Prediction, predictionOf } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const s = scored("classification", 0, { provenance: { classification: { label: "dog", predicted: "cat" } } });
 * const p: Prediction | undefined = predictionOf(s);
 * if (p?.label !== "dog" || p.predicted !== "cat") throw new Error("unexpected");
 * ```
 */
export interface Prediction {
  /** The true label (the case's `expected`). */
  label: string;
  /** The predicted label; `null` for an invalid prediction. */
  predicted: string | null;
}

/**
 * The prediction a Score carries in `provenance.classification`, when it is
 * a scored Score of a classification metric.
 *
 * @param score A Score.
 * @returns The prediction, or `undefined` when the Score carries none.
 *
 * @example A Score of another metric carries none
 * ```ts
 * import { predictionOf } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * if (predictionOf(scored("exact_match", 1)) !== undefined) throw new Error("unexpected");
 * ```
 */
export function predictionOf(score: Score): Prediction | undefined {
  if (score.status !== "scored" || score.validity !== "valid") return undefined;
  const c = score.provenance?.classification;
  if (typeof c !== "object" || c === null) return undefined;
  const { label, predicted } = c as Record<string, unknown>;
  if (typeof label !== "string") return undefined;
  if (predicted !== null && typeof predicted !== "string") return undefined;
  return { label, predicted };
}

/**
 * Precision, recall, F1 and support of one label. Undefined figures are
 * `null`: precision when the label was never predicted, recall when it
 * never was the true label.
 *
 * @example The figures of one label, read from an aggregate
 * ```ts
 * import { ConfusionCounts, type LabelFigures } from "./mod.ts";
 * const counts = new ConfusionCounts();
 * counts.add("cat", "cat");
 * counts.add("cat", "dog");
 * const cat: LabelFigures = counts.figures().per_label[0]!;
 * if (cat.label !== "cat" || cat.recall !== 0.5 || cat.precision !== 1) throw new Error("unexpected");
 * ```
 */
export interface LabelFigures {
  /** The label. */
  label: string;
  /** Of the units predicted as this label, the share that were: `null` when none was predicted. */
  precision: number | null;
  /** Of the units of this label, the share predicted as it: `null` when its support is 0. */
  recall: number | null;
  /** `2·TP / (predicted + support)`, the harmonic mean of the two (0 when either is 0). */
  f1: number;
  /** Units whose true label this is (invalid predictions included). */
  support: number;
  /** Units predicted as this label. */
  predicted: number;
  /** Units of this label whose prediction was invalid. */
  invalid: number;
}

/**
 * The classification figures of a metric, as its Aggregate line carries them
 * under `classification`. `confusion` and `invalid_by_label` are the counts
 * everything else is computed from (and what merging adds).
 *
 * @example Accuracy and F1 of four predictions
 * ```ts
 * import { type Classification, ConfusionCounts } from "./mod.ts";
 * const counts = new ConfusionCounts();
 * for (const [t, p] of [["a", "a"], ["a", "b"], ["b", "b"], ["b", null]] as const) counts.add(t, p);
 * const c: Classification = counts.figures();
 * if (c.accuracy !== 0.5 || c.invalid_predictions !== 1 || c.confusion.join("|") !== "1,1|0,1") throw new Error("unexpected");
 * ```
 */
export interface Classification {
  /** Every label seen, true or predicted, sorted (by code unit). */
  labels: string[];
  /** Units with a true label and a prediction, invalid ones included. */
  predictions: number;
  /** Predictions that gave no label (counted wrong, in no label's column). */
  invalid_predictions: number;
  /** Predictions equal to their true label. */
  correct: number;
  /** `correct / predictions`; `null` when there are none. */
  accuracy: number | null;
  /** The mean of every label's F1; `null` without labels. */
  macro_f1: number | null;
  /** F1 over all labels' counts together, `2·correct / (valid predictions + predictions)`: the accuracy when none is invalid. */
  micro_f1: number | null;
  /** The mean of the labels' F1 weighted by their support. */
  weighted_f1: number | null;
  /** Each label's figures, in `labels` order. */
  per_label: LabelFigures[];
  /** Rows are true labels, columns predicted ones, both in `labels` order. */
  confusion: number[][];
  /** Per true label (in `labels` order), its invalid predictions. */
  invalid_by_label: number[];
}

/**
 * Counts of predictions by true and predicted label: a confusion matrix that
 * grows with the labels it meets and merges exactly.
 *
 * @example Count, merge, and read the figures
 * ```ts
 * import { ConfusionCounts } from "./mod.ts";
 * const a = new ConfusionCounts();
 * a.add("spam", "spam");
 * const b = new ConfusionCounts();
 * b.add("ham", "spam");
 * a.merge(b);
 * const c = a.figures();
 * if (c.labels.join() !== "ham,spam" || c.accuracy !== 0.5) throw new Error("unexpected");
 * ```
 */
export class ConfusionCounts {
  /** By true label, then by predicted label (`null` for invalid). */
  #rows = new Map<string, Map<string | null, number>>();
  #labels = new Set<string>();

  /**
   * Counts one prediction (or `count` alike).
   *
   * @param label The true label.
   * @param predicted The predicted label, `null` for an invalid prediction.
   * @param count How many such predictions.
   */
  add(label: string, predicted: string | null, count = 1): void {
    if (count === 0) return;
    let row = this.#rows.get(label);
    if (row === undefined) this.#rows.set(label, row = new Map());
    row.set(predicted, (row.get(predicted) ?? 0) + count);
    this.#labels.add(label);
    if (predicted !== null) this.#labels.add(predicted);
  }

  /**
   * Adds another's counts to these.
   *
   * @param other The other counts.
   */
  merge(other: ConfusionCounts): void {
    for (const [label, row] of other.#rows) {
      for (const [predicted, n] of row) this.add(label, predicted, n);
    }
  }

  /**
   * The figures the counts sum up to.
   *
   * @returns The figures; undefined ones are `null`, never NaN.
   */
  figures(): Classification {
    const labels = [...this.#labels].sort();
    const confusion = labels.map((t) =>
      labels.map((p) => this.#rows.get(t)?.get(p) ?? 0)
    );
    const invalidBy = labels.map((t) => this.#rows.get(t)?.get(null) ?? 0);
    let predictions = 0;
    let valid = 0;
    let correct = 0;
    const perLabel = labels.map((label, i) => {
      const tp = confusion[i]![i]!;
      const invalid = invalidBy[i]!;
      const support = confusion[i]!.reduce((a, b) => a + b, 0) + invalid;
      const predicted = confusion.reduce((a, row) => a + row[i]!, 0);
      predictions += support;
      valid += predicted;
      correct += tp;
      return {
        label,
        precision: predicted > 0 ? tp / predicted : null,
        recall: support > 0 ? tp / support : null,
        // A label is in the list only when it was true or predicted: never 0/0.
        f1: (2 * tp) / (predicted + support),
        support,
        predicted,
        invalid,
      };
    });
    const k = labels.length;
    return {
      labels,
      predictions,
      invalid_predictions: predictions - valid,
      correct,
      accuracy: predictions > 0 ? correct / predictions : null,
      macro_f1: k > 0 ? perLabel.reduce((a, l) => a + l.f1, 0) / k : null,
      micro_f1: predictions > 0 ? (2 * correct) / (valid + predictions) : null,
      weighted_f1: predictions > 0
        ? perLabel.reduce((a, l) => a + l.f1 * l.support, 0) / predictions
        : null,
      per_label: perLabel,
      confusion,
      invalid_by_label: invalidBy,
    };
  }
}

/**
 * What a classification's figures are computed from, and what merging adds:
 * the labels, the confusion matrix and the invalid predictions per label.
 *
 * @example The counts of an Aggregate line, merged into an Aggregator
 * ```ts
 * import { Aggregator, type ClassificationCounts, parseAggregate } from "./mod.ts";
 * const counts: ClassificationCounts = { labels: ["a", "b"], confusion: [[1, 0], [1, 1]], invalid_by_label: [0, 1] };
 * const line = { metric: "classification", n: 4, aggregatable: 4, errors: 0, skipped: 0, not_applicable: 0, invalid: 0,
 *   examples: 4, passed: 2, sums: { value: [2], square: [2], low: [], high: [], tried: 4, passed_any: 2, passed_all: 2 },
 *   classification: counts };
 * const aggregator = new Aggregator();
 * aggregator.mergeAggregate(parseAggregate(line));
 * if (aggregator.results()[0]?.classification?.accuracy !== 0.5) throw new Error("unexpected");
 * ```
 */
export type ClassificationCounts = Pick<
  Classification,
  "labels" | "confusion" | "invalid_by_label"
>;

/**
 * Counts from an Aggregate line's `classification`, read back.
 *
 * @param counts The labels, confusion matrix and invalid predictions.
 * @returns The counts, ready to merge.
 */
export function confusionFrom(counts: ClassificationCounts): ConfusionCounts {
  const out = new ConfusionCounts();
  for (const [i, t] of counts.labels.entries()) {
    for (const [j, p] of counts.labels.entries()) {
      out.add(t, p, counts.confusion[i]![j]!);
    }
    out.add(t, null, counts.invalid_by_label[i]!);
  }
  return out;
}

/**
 * Reads the counts back from an Aggregate line's `classification` (its
 * `labels`, `confusion` and `invalid_by_label`), checked, to merge them.
 *
 * @param value The `classification` member of a parsed Aggregate line.
 * @returns The counts.
 * @throws {SyntaxError} Naming the field that is wrong.
 */
export function parseClassification(value: unknown): ClassificationCounts {
  const c = mappingAt(value, "classification");
  const labels = c.labels;
  if (
    !Array.isArray(labels) || labels.some((l) => typeof l !== "string") ||
    new Set(labels).size !== labels.length
  ) {
    throw new FieldError(
      "classification.labels",
      "a list of distinct strings",
      labels,
    );
  }
  const rows = c.confusion;
  const invalid = c.invalid_by_label;
  const isCounts = (row: unknown): row is number[] =>
    Array.isArray(row) && row.length === labels.length &&
    row.every((n) => Number.isSafeInteger(n) && n >= 0);
  if (
    !Array.isArray(rows) || rows.length !== labels.length ||
    !rows.every(isCounts)
  ) {
    throw new FieldError(
      "classification.confusion",
      `${labels.length} rows of ${labels.length} whole numbers of at least 0`,
      rows,
    );
  }
  if (!isCounts(invalid)) {
    throw new FieldError(
      "classification.invalid_by_label",
      `${labels.length} whole numbers of at least 0`,
      invalid,
    );
  }
  return {
    labels: [...labels] as string[],
    confusion: rows.map((r) => [...r]),
    invalid_by_label: [...invalid],
  };
}
