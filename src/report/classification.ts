/**
 * A classification metric's figures for people: the accuracy and F1s, a
 * table per label, and the confusion matrix (rows true, columns predicted),
 * as the summary of `run` and `view` prints them.
 *
 * @module
 */

import type { Aggregate } from "../aggregate/mod.ts";
import type { Classification } from "../aggregate/classification.ts";
import { escapeControl } from "../base/terminal.ts";
import { alignRows } from "./_table.ts";

/** Above this many labels the matrix is left to the Aggregate line. */
export const MATRIX_LABELS = 20;

function fixed(x: number | null): string {
  return x === null ? "–" : x.toFixed(3);
}

/**
 * The headline of a classification: accuracy with its counts, then the F1s.
 *
 * @param metric The metric.
 * @param c Its figures.
 * @returns One line.
 */
export function classificationHeadline(
  metric: string,
  c: Classification,
): string {
  const invalid = c.invalid_predictions > 0
    ? `, ${c.invalid_predictions} invalid`
    : "";
  return `${escapeControl(metric)}: accuracy ${
    fixed(c.accuracy)
  } (${c.correct}/${c.predictions}${invalid}), macro F1 ${
    fixed(c.macro_f1)
  }, micro F1 ${fixed(c.micro_f1)}, weighted F1 ${fixed(c.weighted_f1)}`;
}

/**
 * Formats the classification figures of every aggregate that has them: a
 * headline, a table of precision, recall, F1 and support per label, and
 * the confusion matrix (up to 20 labels; rows are true labels, columns
 * predicted ones, then the invalid predictions).
 *
 * @param aggregates The aggregates.
 * @returns The text, lines joined with `\n`; empty when no aggregate is a classification's.
 *
 * @example Two labels, one invalid prediction
 * ```ts
 * import { formatClassification } from "./mod.ts";
 * import { Aggregator } from "../aggregate/mod.ts";
 * import { classification } from "../scorers/mod.ts";
 * import type { Score } from "../score/mod.ts";
 * const scorer = classification();
 * const agg = new Aggregator();
 * const pairs: Array<[string, string]> = [["spam", "spam"], ["ham", "spam"], ["ham", ""]];
 * for (const [i, [expected, output]] of pairs.entries()) {
 *   const unit = { example_id: `d#${i}`, unit_id: `d#${i}`, input: "q", output, expected };
 *   agg.add({ ...(scorer.score(unit, {}) as Score), example_id: unit.example_id });
 * }
 * const text = await formatClassification(agg.results());
 * if (!text.startsWith("classification: accuracy 0.333 (1/3, 1 invalid)") || !/\n  ham +0 +1 +1\n/.test(text)) throw new Error(text);
 * ```
 */
export async function formatClassification(
  aggregates: readonly Aggregate[],
): Promise<string> {
  const out: string[] = [];
  for (const a of aggregates) {
    const c = a.classification;
    if (c === undefined) continue;
    const labels = c.labels.map((l) => escapeControl(l));
    if (out.length > 0) out.push("");
    out.push(
      classificationHeadline(a.metric, c),
      ...(await alignRows([
        ["label", "precision", "recall", "f1", "support"],
        ...c.per_label.map((l, i) => [
          labels[i]!,
          fixed(l.precision),
          fixed(l.recall),
          fixed(l.f1),
          String(l.support),
        ]),
      ])).map((line) => `  ${line}`),
    );
    if (labels.length > MATRIX_LABELS) {
      out.push(
        `  (the confusion matrix of ${labels.length} labels is in the aggregate line, "classification.confusion")`,
      );
      continue;
    }
    out.push(
      "  confusion matrix (rows true, columns predicted):",
      ...(await alignRows([
        ["true \\ predicted", ...labels, "invalid"],
        ...c.confusion.map((row, i) => [
          labels[i]!,
          ...row.map(String),
          String(c.invalid_by_label[i]),
        ]),
      ])).map((line) => `  ${line}`),
    );
  }
  return out.join("\n");
}
