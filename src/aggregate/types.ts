/**
 * The Aggregate: what one metric's Scores sum up to, with the exact partial
 * sums that let aggregates of shards merge. The types live here, below every
 * module that uses them.
 *
 * @module
 */

import type { Classification, ClassificationCounts } from "./classification.ts";

/**
 * The range `[low, high]` every value of a metric lies within, as its scorer
 * declares it: `[0, 1]` for the built-in, `llm_judge` and protocol v0
 * scorers. The mean's interval is clamped to it.
 *
 * @example A metric on a 1 to 5 scale
 * ```ts
 * import { Aggregator, type ValueRange } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const stars: ValueRange = [1, 5];
 * const aggregator = new Aggregator({ valueRange: (metric) => metric === "stars" ? stars : undefined });
 * aggregator.add(scored("stars", 5, { example_id: "d#1" }));
 * aggregator.add(scored("stars", 4, { example_id: "d#2" }));
 * const [m] = aggregator.results();
 * if (m?.ci95?.[1] !== 5 || m.ci95_unclamped![1] <= 5) throw new Error("unexpected");
 * ```
 */
export type ValueRange = readonly [number, number];

/**
 * When a case run over several epochs passes: when `all` of its epochs pass
 * (the share of such cases is `pass_hat_k`), when more than half do
 * (`majority`, `pass_majority`), or when at least one does (`any`,
 * `pass_at_k`).
 *
 * @example The figure of an Aggregate each requirement reads
 * ```ts
 * import type { CaseRequirement } from "./mod.ts";
 * const field: Record<CaseRequirement, string> = { all: "pass_hat_k", majority: "pass_majority", any: "pass_at_k" };
 * if (field.majority !== "pass_majority") throw new Error("unexpected");
 * ```
 */
export type CaseRequirement = "all" | "majority" | "any";

/**
 * The exact partial sums and counts an Aggregate carries so that it can be
 * merged.
 *
 * @example Two examples, one passed: the sums behind the mean
 * ```ts
 * import { Aggregator, type AggregateSums } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const aggregator = new Aggregator();
 * aggregator.add(scored("m", 1, { example_id: "d#1", unit_id: "d#1" }));
 * aggregator.add(scored("m", 0, { example_id: "d#2", unit_id: "d#2" }));
 * const sums: AggregateSums = aggregator.results()[0]!.sums;
 * if (sums.tried !== 2 || sums.passed_all !== 1) throw new Error("unexpected sums");
 * ```
 */
export interface AggregateSums {
  /** Σ of each example's mean value (its aggregatable Scores averaged). */
  value: number[];
  /** Σ of the squares of those means. */
  square: number[];
  /** Σ of each example's mean with its errors and blocked Scores counted as 0. */
  low: number[];
  /** Σ of each example's mean with its errors and blocked Scores counted as 1. */
  high: number[];
  /** Examples with at least one aggregatable, error or blocked Score. */
  tried: number;
  /** Of those, examples where at least one unit passed. */
  passed_any: number;
  /** Of those, examples where every unit passed (no error, no blocked Score, no failure). */
  passed_all: number;
  /** Of those, examples where more than half of the units passed; absent in lines written before it. */
  passed_majority?: number;
  /** Of those, examples whose units disagree (one passed, another failed); absent in lines written before it. */
  flaky?: number;
  /**
   * Σ over those examples of the square of their trials (aggregatable,
   * error and blocked Scores), for the pass rate's clustered interval;
   * absent in lines written before it, as are the two below.
   */
  trials_square?: number;
  /** Σ over those examples of the square of their passed Scores. */
  passed_square?: number;
  /** Σ over those examples of their passed Scores times their trials. */
  passed_trials?: number;
}

/**
 * The summary of one metric's Scores. Undefined statistics are `null`, never
 * NaN. Scores are reduced per example first (the units of one example, as
 * with epochs, are averaged), then summarised across examples, so the
 * standard error is clustered by example.
 *
 * @example Three examples, one errored: the mean, its interval and the bounds
 * ```ts
 * import { type Aggregate, aggregate } from "./mod.ts";
 * import { errored, scored } from "../score/mod.ts";
 * const scores = [
 *   scored("m", 1, { example_id: "d#1", unit_id: "d#1" }),
 *   scored("m", 0.5, { example_id: "d#2", unit_id: "d#2" }),
 *   errored("m", "scorer error: boom", { example_id: "d#3", unit_id: "d#3" }),
 * ];
 * const [m]: Aggregate[] = await Array.fromAsync(ReadableStream.from(scores).pipeThrough(aggregate()));
 * if (m?.mean !== 0.75 || m.errors !== 1 || m.coverage !== 2 / 3) throw new Error("unexpected");
 * if (m.ci95 === null || m.mean_bounds?.[0] !== 0.5) throw new Error("unexpected interval");
 * ```
 */
export interface Aggregate {
  /** In a matrix run, the target whose Scores these are. */
  target_name?: string;
  /** The metric. */
  metric: string;
  /** Scores seen. */
  n: number;
  /** Scores that are scored and valid: the ones the mean covers. */
  aggregatable: number;
  /** Scores whose status is `error`: the scorer failed. */
  errors: number;
  /** Scores whose status is `blocked`: a prerequisite (the target, the case) failed. */
  blocked: number;
  /** Scores whose status is `skipped`. */
  skipped: number;
  /** Scores whose status is `non_evaluable`: the metric does not apply. */
  non_evaluable: number;
  /** Scores whose validity is `not_applicable` (as evalpipe writes them, the `non_evaluable` ones). */
  not_applicable: number;
  /** Scores that are scored but not valid. */
  invalid: number;
  /** `aggregatable / n`: how much of the suite the mean covers; `null` when n is 0. */
  coverage: number | null;
  /** Examples with at least one aggregatable Score: the sample size of the mean. */
  examples: number;
  /**
   * Whether the mean rests on fewer than 5 values (1 to 4 examples): its
   * interval then describes the sample more than it predicts. `false` when
   * there is no mean.
   */
  small_n: boolean;
  /**
   * The range the metric's values lie within, as its scorer declares it
   * (`[0, 1]` for built-in, `llm_judge` and protocol v0 scorers; a function
   * scorer's `range`); `null` when none is declared, or when an example's
   * mean (its one value, or its epochs' mean) lies outside it: then the
   * declaration is not trusted and nothing is clamped.
   */
  value_range: [number, number] | null;
  /** The mean across examples of each example's mean; `null` when there are none. */
  mean: number | null;
  /** The standard error of the mean, across examples; `null` below two. */
  stderr: number | null;
  /**
   * The 95% interval of the mean (Student's t), clamped to `value_range`
   * when there is one: a mean of values within 0..1 lies within 0..1 too.
   * `null` below two examples.
   */
  ci95: [number, number] | null;
  /**
   * The same interval before clamping, `mean ± t(0.975, examples − 1) ×
   * stderr`; equal to `ci95` when neither end crossed the range, or there
   * is no range. `null` below two examples.
   */
  ci95_unclamped: [number, number] | null;
  /**
   * The mean if every error and blocked Score had scored the low end of
   * `value_range`, and if every one had scored its high end (0 and 1 when
   * there is no range): how far the failures could move it. `null` when
   * there are neither values nor errors.
   */
  mean_bounds: [number, number] | null;
  /** Aggregatable Scores that passed. */
  passed: number;
  /** `passed / (aggregatable + errors + blocked)`: an error or a blocked Score fails; `null` when that is 0. */
  pass_rate: number | null;
  /**
   * The Wilson 95% interval of `pass_rate`, over its denominator n shrunk
   * by the design effect when examples ran several times (epochs): the
   * Scores of one example are not independent trials, so n is divided by
   * how much more the pass rate varies between examples than independent
   * trials would (at least 1; 1 for Aggregate lines merged from before
   * this). At a pass rate of 0 or 1, which shows no spread to measure it,
   * n is the examples tried, as for `pass_rate_rule_of_three`.
   */
  pass_rate_ci95: [number, number] | null;
  /**
   * When `pass_rate` is 0 or 1, the rule of three's 95% interval over the
   * examples behind its denominator (n, the examples with an aggregatable,
   * error or blocked Score; with one Score an example, the denominator
   * itself): `[0, 3/n]` at 0 (no pass seen in n, the pass rate is still at
   * most 3/n) and `[1 − 3/n, 1]` at 1; an end beyond 0..1 (n below 3) is
   * clamped to it. The epochs of one example are not independent trials,
   * and a rate of 0 or 1 shows no spread to tell how far they agree, so
   * they count once. `null` for any other pass rate, or none.
   */
  pass_rate_rule_of_three: [number, number] | null;
  /** The share of examples where at least one unit (epoch) passed; errors and blocked Scores fail. */
  pass_at_k: number | null;
  /** The share of examples where every unit (epoch) passed; errors and blocked Scores fail. */
  pass_hat_k: number | null;
  /**
   * The share of examples where more than half of the units (epochs)
   * passed; errors and blocked Scores fail. `null` when there are none, or
   * when a merged line did not carry it.
   */
  pass_majority: number | null;
  /**
   * Examples whose epochs disagree: at least one passed and at least one
   * failed (an error or a blocked Score fails). `null` when a merged line
   * did not carry it.
   */
  flaky: number | null;
  /** What merging needs: exact partial sums and counts. */
  sums: AggregateSums;
  /**
   * For a classification metric (its Scores carry their labels in
   * `provenance.classification`), the confusion matrix and what it sums up
   * to; absent for any other metric.
   */
  classification?: Classification;
}

/**
 * What an Aggregate must carry to be merged: its counts and exact sums.
 *
 * @example Merge two shards' Aggregate lines into the whole run's Aggregate
 * ```ts
 * import { Aggregator, type PartialAggregate, parseAggregate } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const shard = (value: number, id: string): PartialAggregate => {
 *   const aggregator = new Aggregator();
 *   aggregator.add(scored("m", value, { example_id: id, unit_id: id }));
 *   return parseAggregate(JSON.parse(JSON.stringify(aggregator.results()[0])));
 * };
 * const whole = new Aggregator();
 * for (const part of [shard(1, "d#1"), shard(0, "d#2")]) whole.mergeAggregate(part);
 * if (whole.results()[0]?.mean !== 0.5) throw new Error("unexpected");
 * ```
 */
export type PartialAggregate =
  & Pick<
    Aggregate,
    | "metric"
    | "n"
    | "aggregatable"
    | "errors"
    | "blocked"
    | "skipped"
    | "non_evaluable"
    | "not_applicable"
    | "invalid"
    | "examples"
    | "passed"
    | "sums"
  >
  & {
    /** The range its values were declared within; absent (an older line) or `null` for none. */
    value_range?: [number, number] | null;
    /** In a matrix run, the target whose Scores these are. */
    target_name?: string;
    /** A classification metric's counts; absent for any other metric. */
    classification?: ClassificationCounts;
  };
