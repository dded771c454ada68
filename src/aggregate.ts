/**
 * Aggregation: per metric, streaming, mergeable summaries of Scores.
 *
 * The mean covers aggregatable Scores only (scored and valid), and the counts
 * of everything else stand beside it, so a reader sees what the mean leaves
 * out. Sums are exact, so aggregates of shards merge into exactly the
 * aggregate of the whole run, in any order.
 *
 * @module
 */

import { z } from "zod";
import { ExactSum } from "./_exact_sum.ts";
import { tCritical95, wilson95 } from "./_stats.ts";
import { aggregatable, type Score } from "./score.ts";

/** The summary of one metric's Scores. Undefined statistics are `null`, never NaN. */
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
  /** The mean over aggregatable Scores; `null` when there are none. */
  mean: number | null;
  /** The standard error of the mean; `null` below two values. */
  stderr: number | null;
  /** The 95% interval of the mean (Student's t); `null` below two values. */
  ci95: [number, number] | null;
  /** Aggregatable Scores that passed. */
  passed: number;
  /** `passed / (aggregatable + errors)`: an error fails; `null` when that is 0. */
  pass_rate: number | null;
  /** The Wilson 95% interval of `pass_rate`. */
  pass_rate_ci95: [number, number] | null;
  /**
   * The mean over aggregatable Scores and errors if every error had scored
   * 0, and if every error had scored 1: how far the errors could move the
   * mean. `null` when there are neither.
   */
  mean_bounds: [number, number] | null;
  /** Exact partial sums of the values and their squares, so aggregates merge exactly. */
  sums: { value: number[]; square: number[] };
}

const AggregateSchema = z.object({
  metric: z.string().min(1),
  n: z.number().int().nonnegative(),
  aggregatable: z.number().int().nonnegative(),
  errors: z.number().int().nonnegative(),
  skipped: z.number().int().nonnegative(),
  not_applicable: z.number().int().nonnegative(),
  invalid: z.number().int().nonnegative(),
  passed: z.number().int().nonnegative(),
  sums: z.object({ value: z.array(z.number()), square: z.array(z.number()) }),
});

/** The running state of one metric. */
class MetricState {
  n = 0;
  aggregatable = 0;
  errors = 0;
  skipped = 0;
  not_applicable = 0;
  invalid = 0;
  passed = 0;
  sum = new ExactSum();
  square = new ExactSum();

  constructor(readonly metric: string) {}

  add(score: Score): void {
    this.n++;
    if (aggregatable(score)) {
      const v = score.value as number;
      this.aggregatable++;
      this.sum.add(v);
      this.square.add(v * v);
      if (score.passed === true) this.passed++;
    } else if (score.status === "error") this.errors++;
    else if (score.status === "skipped") this.skipped++;
    else if (score.status === "not_applicable") this.not_applicable++;
    else this.invalid++;
  }

  merge(other: MetricState): void {
    this.n += other.n;
    this.aggregatable += other.aggregatable;
    this.errors += other.errors;
    this.skipped += other.skipped;
    this.not_applicable += other.not_applicable;
    this.invalid += other.invalid;
    this.passed += other.passed;
    this.sum.merge(other.sum);
    this.square.merge(other.square);
  }

  result(): Aggregate {
    const k = this.aggregatable;
    const sum = this.sum.value;
    // Sums of huge values can overflow: what cannot be computed is null, never NaN.
    const mean = k > 0 && Number.isFinite(sum) ? sum / k : null;
    let stderr: number | null = null;
    let ci95: [number, number] | null = null;
    if (k >= 2 && mean !== null) {
      // Exact sums keep the cancellation error at one rounding of each total.
      const variance = Math.max(
        0,
        (this.square.value - (sum * sum) / k) / (k - 1),
      );
      const se = Math.sqrt(variance / k);
      const half = tCritical95(k - 1) * se;
      if (Number.isFinite(mean - half) && Number.isFinite(mean + half)) {
        stderr = se;
        ci95 = [mean - half, mean + half];
      }
    }
    const trials = k + this.errors;
    return {
      metric: this.metric,
      n: this.n,
      aggregatable: k,
      errors: this.errors,
      skipped: this.skipped,
      not_applicable: this.not_applicable,
      invalid: this.invalid,
      coverage: this.n > 0 ? k / this.n : null,
      mean,
      stderr,
      ci95,
      passed: this.passed,
      pass_rate: trials > 0 ? this.passed / trials : null,
      pass_rate_ci95: trials > 0 ? wilson95(this.passed, trials) : null,
      mean_bounds: trials > 0 && Number.isFinite(sum)
        ? [sum / trials, (sum + this.errors) / trials]
        : null,
      sums: { value: this.sum.partials, square: this.square.partials },
    };
  }
}

/**
 * Accumulates Scores per metric; merges with other aggregators exactly.
 *
 * @example Aggregate three Scores
 * ```ts
 * import { Aggregator } from "./aggregate.ts";
 * import { errored, scored } from "./score.ts";
 * const agg = new Aggregator();
 * for (const s of [scored("m", 1), scored("m", 0), errored("m", "boom")]) agg.add(s);
 * const [m] = agg.results();
 * if (m?.mean !== 0.5 || m.errors !== 1) throw new Error("unexpected");
 * ```
 */
export class Aggregator {
  #metrics = new Map<string, MetricState>();

  #state(metric: string): MetricState {
    let state = this.#metrics.get(metric);
    if (state === undefined) {
      state = new MetricState(metric);
      this.#metrics.set(metric, state);
    }
    return state;
  }

  /**
   * Counts one Score.
   *
   * @param score A valid Score.
   */
  add(score: Score): void {
    this.#state(score.metric).add(score);
  }

  /**
   * Adds another aggregator's counts and sums to this one.
   *
   * @param other The other aggregator.
   */
  merge(other: Aggregator): void {
    for (const [metric, state] of other.#metrics) {
      this.#state(metric).merge(state);
    }
  }

  /**
   * Adds a partial Aggregate (one line of `aggregate`'s output) to this one.
   *
   * @param aggregate The partial aggregate, with its `sums`.
   */
  mergeAggregate(aggregate: PartialAggregate): void {
    const state = new MetricState(aggregate.metric);
    state.n = aggregate.n;
    state.aggregatable = aggregate.aggregatable;
    state.errors = aggregate.errors;
    state.skipped = aggregate.skipped;
    state.not_applicable = aggregate.not_applicable;
    state.invalid = aggregate.invalid;
    state.passed = aggregate.passed;
    state.sum = new ExactSum(aggregate.sums.value);
    state.square = new ExactSum(aggregate.sums.square);
    this.#state(aggregate.metric).merge(state);
  }

  /**
   * The aggregates, one per metric, sorted by metric.
   *
   * @returns The aggregates.
   */
  results(): Aggregate[] {
    return [...this.#metrics.keys()]
      .sort()
      .map((metric) => this.#metrics.get(metric)!.result());
  }
}

/**
 * Tells whether a parsed NDJSON value is a partial Aggregate rather than a
 * Score: it has `n` and `sums`.
 *
 * @param value A parsed NDJSON value.
 * @returns Whether it should be read with {@linkcode parseAggregate}.
 */
export function looksLikeAggregate(value: unknown): boolean {
  return typeof value === "object" && value !== null && "sums" in value &&
    "n" in value;
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
  | "passed"
  | "sums"
>;

/**
 * Validates a partial Aggregate read back from NDJSON, to merge it with
 * {@linkcode Aggregator.mergeAggregate}.
 *
 * @param value A parsed NDJSON value.
 * @returns Its counts and sums.
 * @throws {SyntaxError} Naming the field that is wrong.
 */
export function parseAggregate(value: unknown): PartialAggregate {
  const result = AggregateSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new SyntaxError(`"${issue.path.join(".")}": ${issue.message}`);
  }
  return result.data;
}

/**
 * A stage that consumes Scores and, when they end, emits one Aggregate per
 * metric, sorted by metric.
 *
 * @param aggregator Where to count; pass your own to read it afterwards.
 * @returns The stage.
 *
 * @example
 * ```ts
 * import { aggregate } from "./aggregate.ts";
 * import { scored } from "./score.ts";
 * const out = await Array.fromAsync(
 *   ReadableStream.from([scored("m", 1), scored("m", 0.5)]).pipeThrough(aggregate()),
 * );
 * if (out[0]?.mean !== 0.75) throw new Error("unexpected");
 * ```
 */
export function aggregate(
  aggregator: Aggregator = new Aggregator(),
): TransformStream<Score, Aggregate> {
  return new TransformStream({
    transform(score) {
      aggregator.add(score);
    },
    flush(controller) {
      for (const a of aggregator.results()) controller.enqueue(a);
    },
  });
}
