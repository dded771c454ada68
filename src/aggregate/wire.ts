/**
 * Aggregates read back from NDJSON: an Aggregate line from a shard, checked
 * field by field, so that it can be merged.
 *
 * @module
 */

import { countAt, FieldError, mappingAt } from "../io/fields.ts";
import type { PartialAggregate } from "./types.ts";
import { parseClassification } from "./classification.ts";

/**
 * Tells whether a parsed NDJSON value is a partial Aggregate rather than a
 * Score: it has `n` and `sums`.
 *
 * @param value A parsed NDJSON value.
 * @returns Whether it should be read with {@linkcode parseAggregate}.
 *
 * @example Tell an Aggregate line from a Score line
 * ```ts
 * import { Aggregator, looksLikeAggregate } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const aggregator = new Aggregator();
 * aggregator.add(scored("m", 1));
 * if (!looksLikeAggregate(aggregator.results()[0]) || looksLikeAggregate(scored("m", 1))) {
 *   throw new Error("unexpected");
 * }
 * ```
 */
export function looksLikeAggregate(value: unknown): boolean {
  return typeof value === "object" && value !== null && "sums" in value &&
    "n" in value;
}

/**
 * Validates a partial Aggregate read back from NDJSON, to merge it with
 * {@linkcode Aggregator.mergeAggregate}.
 *
 * @param value A parsed NDJSON value.
 * @returns Its counts and sums.
 * @throws {SyntaxError} Naming the field that is wrong.
 *
 * @example A shard's Aggregate line, and one with a broken count
 * ```ts
 * import { Aggregator, parseAggregate } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const aggregator = new Aggregator();
 * aggregator.add(scored("m", 1));
 * const line = JSON.stringify(aggregator.results()[0]);
 * if (parseAggregate(JSON.parse(line)).n !== 1) throw new Error("unexpected");
 * try {
 *   parseAggregate({ ...JSON.parse(line), n: -1 });
 *   throw new Error("expected a SyntaxError");
 * } catch (error) {
 *   if (!(error instanceof SyntaxError) || !error.message.includes('"n"')) throw error;
 * }
 * ```
 */
export function parseAggregate(value: unknown): PartialAggregate {
  const a = mappingAt(value, "");
  const sums = mappingAt(a.sums, "sums");
  if (typeof a.metric !== "string" || a.metric === "") {
    throw new FieldError("metric", "a non-empty string", a.metric);
  }
  if (a.target_name !== undefined && typeof a.target_name !== "string") {
    throw new FieldError("target_name", "a string", a.target_name);
  }
  // Only the fields merging needs, in this order; others are dropped.
  return {
    ...(a.target_name !== undefined ? { target_name: a.target_name } : {}),
    metric: a.metric,
    n: countAt(a.n, "n"),
    aggregatable: countAt(a.aggregatable, "aggregatable"),
    errors: countAt(a.errors, "errors"),
    // Lines written before the blocked and non_evaluable statuses existed
    // counted target errors as errors and had a status `not_applicable`.
    blocked: a.blocked === undefined ? 0 : countAt(a.blocked, "blocked"),
    skipped: countAt(a.skipped, "skipped"),
    non_evaluable: a.non_evaluable === undefined
      ? countAt(a.not_applicable, "not_applicable")
      : countAt(a.non_evaluable, "non_evaluable"),
    not_applicable: countAt(a.not_applicable, "not_applicable"),
    invalid: countAt(a.invalid, "invalid"),
    examples: countAt(a.examples, "examples"),
    passed: countAt(a.passed, "passed"),
    value_range: valueRange(a.value_range),
    sums: {
      value: partials(sums, "value"),
      square: partials(sums, "square"),
      low: partials(sums, "low"),
      high: partials(sums, "high"),
      tried: countAt(sums.tried, "sums.tried"),
      passed_any: countAt(sums.passed_any, "sums.passed_any"),
      passed_all: countAt(sums.passed_all, "sums.passed_all"),
      // Lines written before the reducers existed lack them: unknown.
      ...(sums.passed_majority !== undefined || sums.flaky !== undefined
        ? {
          passed_majority: countAt(
            sums.passed_majority,
            "sums.passed_majority",
          ),
          flaky: countAt(sums.flaky, "sums.flaky"),
        }
        : {}),
      // And before the pass rate's clustered interval: n taken as is.
      ...(sums.trials_square !== undefined ||
          sums.passed_square !== undefined ||
          sums.passed_trials !== undefined
        ? {
          trials_square: countAt(sums.trials_square, "sums.trials_square"),
          passed_square: countAt(sums.passed_square, "sums.passed_square"),
          passed_trials: countAt(sums.passed_trials, "sums.passed_trials"),
        }
        : {}),
    },
    ...(a.classification !== undefined
      ? { classification: parseClassification(a.classification) }
      : {}),
  };
}

/** A declared range, or `null`; an Aggregate line without one (older) declares none. */
function valueRange(v: unknown): [number, number] | null {
  if (v === undefined || v === null) return null;
  if (
    !Array.isArray(v) || v.length !== 2 || typeof v[0] !== "number" ||
    typeof v[1] !== "number" || !Number.isFinite(v[0]) ||
    !Number.isFinite(v[1]) || v[0] > v[1]
  ) {
    throw new FieldError(
      "value_range",
      "null or two finite numbers, low to high",
      v,
    );
  }
  return [v[0], v[1]];
}

function partials(sums: Record<string, unknown>, key: string): number[] {
  const list = sums[key];
  if (!Array.isArray(list)) {
    throw new FieldError(`sums.${key}`, "a list of numbers", list);
  }
  return list.map((x, i) => {
    if (typeof x !== "number" || !Number.isFinite(x)) {
      throw new FieldError(`sums.${key}.${i}`, "a finite number", x);
    }
    return x;
  });
}
