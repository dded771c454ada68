/**
 * The Aggregate: what one metric's Scores sum up to, with the exact partial
 * sums that let aggregates of shards merge. The types live here, below every
 * module that uses them.
 *
 * @module
 */

/** The exact partial sums and counts an Aggregate carries so that it can be merged. */
export interface AggregateSums {
  /** Σ of each example's mean value (its aggregatable Scores averaged). */
  value: number[];
  /** Σ of the squares of those means. */
  square: number[];
  /** Σ of each example's mean with its errors counted as 0. */
  low: number[];
  /** Σ of each example's mean with its errors counted as 1. */
  high: number[];
  /** Examples with at least one aggregatable Score or error. */
  tried: number;
  /** Of those, examples where at least one unit passed. */
  passed_any: number;
  /** Of those, examples where every unit passed (no error, no failure). */
  passed_all: number;
}

/**
 * The summary of one metric's Scores. Undefined statistics are `null`, never
 * NaN. Scores are reduced per example first (the units of one example, as
 * with epochs, are averaged), then summarised across examples, so the
 * standard error is clustered by example.
 */
export interface Aggregate {
  /** The metric. */
  metric: string;
  /** Scores seen. */
  n: number;
  /** Scores that are scored and valid: the ones the mean covers. */
  aggregatable: number;
  /** Scores whose status is `error`. */
  errors: number;
  /** Scores whose status is `skipped`. */
  skipped: number;
  /** Scores whose status is `not_applicable`. */
  not_applicable: number;
  /** Scores that are scored but invalid. */
  invalid: number;
  /** `aggregatable / n`: how much of the suite the mean covers; `null` when n is 0. */
  coverage: number | null;
  /** Examples with at least one aggregatable Score: the sample size of the mean. */
  examples: number;
  /** The mean across examples of each example's mean; `null` when there are none. */
  mean: number | null;
  /** The standard error of the mean, across examples; `null` below two. */
  stderr: number | null;
  /** The 95% interval of the mean (Student's t); `null` below two examples. */
  ci95: [number, number] | null;
  /**
   * The mean if every error had scored 0, and if every error had scored 1:
   * how far the errors could move it. `null` when there are neither values
   * nor errors.
   */
  mean_bounds: [number, number] | null;
  /** Aggregatable Scores that passed. */
  passed: number;
  /** `passed / (aggregatable + errors)`: an error fails; `null` when that is 0. */
  pass_rate: number | null;
  /** The Wilson 95% interval of `pass_rate`. */
  pass_rate_ci95: [number, number] | null;
  /** The share of examples where at least one unit (epoch) passed; errors fail. */
  pass_at_k: number | null;
  /** The share of examples where every unit (epoch) passed; errors fail. */
  pass_hat_k: number | null;
  /** What merging needs: exact partial sums and counts. */
  sums: AggregateSums;
}

/** What an Aggregate must carry to be merged: its counts and exact sums. */
export type PartialAggregate = Pick<
  Aggregate,
  | "metric"
  | "n"
  | "aggregatable"
  | "errors"
  | "skipped"
  | "not_applicable"
  | "invalid"
  | "examples"
  | "passed"
  | "sums"
>;
