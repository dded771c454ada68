/**
 * The classification scorer: each unit is one prediction, the output's label
 * against the case's `expected` one. Its Scores carry both labels in
 * `provenance.classification`, from which the aggregate counts a confusion
 * matrix (accuracy, macro and micro F1, per label precision, recall, F1).
 *
 * @module
 */

import { nonEvaluable, type Score, scored } from "../score/mod.ts";
import { type Scorer, UNIT_RANGE } from "./scorer.ts";
import type { Unit } from "../dataset/unit.ts";
import { noExpected, quote, versionOf } from "./_builtin.ts";

/**
 * Options of {@linkcode classification}.
 *
 * @example The label in the `label` field of a JSON output
 * ```ts
 * import { classification, type ClassificationOptions } from "./mod.ts";
 * const options: ClassificationOptions = { field: "label" };
 * const s = await classification(options).score({ example_id: "d#1", unit_id: "d#1", input: "q", output: '{"label": "spam"}', expected: "spam" }, {});
 * if ("scores" in s || s.value !== 1) throw new Error("unexpected");
 * ```
 */
export interface ClassificationOptions {
  /**
   * The metric name.
   * @default {"classification"}
   */
  name?: string | undefined;
  /**
   * A dotted path (`label`, `result.class`, `labels.0`) to the label in the
   * output, read as JSON; without it, the output's trimmed text is the label.
   * @default {undefined}
   */
  field?: string | undefined;
}

/** The label a value stands for: a trimmed text, a number or a boolean. */
function labelOf(value: unknown): string | undefined {
  if (typeof value === "string") {
    const text = value.trim();
    return text === "" ? undefined : text;
  }
  if (typeof value === "number" || typeof value === "boolean") {
    return String(value);
  }
  return undefined;
}

/** The value at a dotted path (`a.b.0`), or `undefined` when it is not there. */
function at(value: unknown, path: string): unknown {
  let v = value;
  for (const key of path.split(".")) {
    if (typeof v !== "object" || v === null || !Object.hasOwn(v, key)) {
      return undefined;
    }
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** The predicted label of an output, or why it gives none. */
function predict(
  output: string,
  field: string | undefined,
): { label: string } | { invalid: string } {
  const text = output.trim();
  if (text === "") return { invalid: "the output is empty" };
  if (field === undefined) return { label: text };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // JSON.parse throws only SyntaxError: the output is not JSON.
    if (!(error instanceof SyntaxError)) throw error;
    return { invalid: `the output is not JSON (${error.message})` };
  }
  const found = at(value, field);
  if (found === undefined || found === null) {
    return { invalid: `the output has no field ${quote(field)}` };
  }
  const label = labelOf(found);
  return label === undefined
    ? {
      invalid: `the output's field ${
        quote(field)
      } is not a label (a non-empty text, a number or a boolean)`,
    }
    : { label };
}

/**
 * `classification`: the output's label (its trimmed text, or a field of its
 * JSON) against `expected`, the true label; 1 when they are equal, else 0.
 * Each unit (each epoch) is one prediction. An output that gives no label
 * (empty, not JSON, the field missing or not a text, number or boolean) is
 * an invalid prediction: a measured 0 with a warning
 * (`classification.invalid_prediction`), counted apart from every label's
 * column in the confusion matrix, never taken for a label. A case without
 * a usable `expected` is `non_evaluable`.
 *
 * @param options The name and the field.
 * @returns The scorer.
 *
 * @example A wrong prediction names both labels
 * ```ts
 * import { classification } from "./mod.ts";
 * const s = await classification().score({ example_id: "d#1", unit_id: "d#1", input: "q", output: " ham\n", expected: "spam" }, {});
 * if ("scores" in s || s.value !== 0 || s.reason !== 'predicted "ham", expected "spam"') throw new Error("unexpected");
 * ```
 */
export function classification(options: ClassificationOptions = {}): Scorer {
  const name = options.name ?? "classification";
  const field = options.field;
  if (field !== undefined && field.split(".").some((k) => k === "")) {
    throw new RangeError(
      `The classification "field" must be a dotted path of keys, not ${
        JSON.stringify(field)
      }`,
    );
  }
  const version = versionOf("classification", { field });
  return {
    name,
    version,
    range: UNIT_RANGE,
    score(unit: Unit): Score {
      if (unit.expected === undefined || unit.expected === null) {
        return noExpected(name, version);
      }
      const label = labelOf(unit.expected);
      if (label === undefined) {
        return nonEvaluable(name, {
          evaluator_version: version,
          reason:
            "not applicable: the case's expected is not a label (a non-empty text, a number or a boolean)",
        });
      }
      const p = predict(unit.output ?? "", field);
      if ("invalid" in p) {
        const message = `invalid prediction: ${p.invalid}`;
        return scored(name, 0, {
          evaluator_version: version,
          passed: false,
          reason: `${message}; expected ${quote(label)}`,
          diagnostics: [{
            code: "classification.invalid_prediction",
            severity: "warning",
            message,
          }],
          provenance: { classification: { label, predicted: null } },
        });
      }
      const correct = p.label === label;
      return scored(name, correct ? 1 : 0, {
        evaluator_version: version,
        passed: correct,
        reason: correct
          ? `predicted ${quote(p.label)}`
          : `predicted ${quote(p.label)}, expected ${quote(label)}`,
        provenance: { classification: { label, predicted: p.label } },
      });
    },
  };
}
