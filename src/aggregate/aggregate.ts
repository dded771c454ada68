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

import { ExactSum } from "./exact_sum.ts";
import { FieldError, mappingAt } from "../io/fields.ts";
import { tCritical95, wilson95 } from "./stats.ts";
import { aggregatable, type Score } from "../score/score.ts";

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

/** The units of one example seen so far, for one metric. */
interface Cluster {
  id: string | undefined;
  sum: number;
  count: number;
  errors: number;
  anyPassed: boolean;
  allPassed: boolean;
}

function newCluster(id: string | undefined): Cluster {
  return { id, sum: 0, count: 0, errors: 0, anyPassed: false, allPassed: true };
}

/** The running state of one metric. */
class MetricState {
  n = 0;
  aggregatable = 0;
  errors = 0;
  skipped = 0;
  not_applicable = 0;
  invalid = 0;
  passed = 0;
  examples = 0;
  tried = 0;
  passedAny = 0;
  passedAll = 0;
  value = new ExactSum();
  square = new ExactSum();
  // The error bounds differ from the mean only for examples with errors, so
  // only those are summed: low and high hold their bounds, meanErr their means.
  low = new ExactSum();
  high = new ExactSum();
  meanErr = new ExactSum();
  open: Cluster | undefined;
  /** In grouped mode, every example's cluster until the results are asked for. */
  pending: Map<string, Cluster> | undefined;

  constructor(readonly metric: string, grouped = false) {
    if (grouped) this.pending = new Map();
  }

  add(score: Score): void {
    this.n++;
    const id = score.example_id ?? score.unit_id;
    let c: Cluster;
    if (this.pending !== undefined && id !== undefined) {
      c = this.pending.get(id) ?? newCluster(id);
      this.pending.set(id, c);
    } else {
      // The units of one example arrive together: a new id closes the cluster.
      if (
        this.open !== undefined && (id === undefined || id !== this.open.id)
      ) {
        this.close();
      }
      c = this.open ??= newCluster(id);
    }
    if (aggregatable(score)) {
      this.aggregatable++;
      c.sum += score.value as number;
      c.count++;
      if (score.passed === true) {
        this.passed++;
        c.anyPassed = true;
      } else c.allPassed = false;
    } else if (score.status === "error") {
      this.errors++;
      c.errors++;
      c.allPassed = false;
    } else if (score.status === "skipped") this.skipped++;
    else if (score.status === "not_applicable") this.not_applicable++;
    else this.invalid++;
  }

  /** Folds the open cluster (and, grouped, every pending one) into the sums. */
  close(): void {
    if (this.open !== undefined) this.fold(this.open);
    this.open = undefined;
    for (const c of this.pending?.values() ?? []) this.fold(c);
    this.pending?.clear();
  }

  fold(c: Cluster): void {
    if (c.count > 0) {
      const mean = c.sum / c.count;
      this.examples++;
      this.value.add(mean);
      this.square.add(mean * mean);
    }
    const trials = c.count + c.errors;
    if (trials > 0) {
      this.tried++;
      if (c.errors > 0) {
        this.low.add(c.sum / trials);
        this.high.add((c.sum + c.errors) / trials);
        if (c.count > 0) this.meanErr.add(c.sum / c.count);
      }
      if (c.anyPassed) this.passedAny++;
      if (c.allPassed) this.passedAll++;
    }
  }

  /** A copy with its open clusters closed, for results and merges. */
  closed(): MetricState {
    const copy = new MetricState(this.metric);
    copy.absorb(this);
    if (this.open !== undefined) copy.fold(this.open);
    for (const c of this.pending?.values() ?? []) copy.fold(c);
    return copy;
  }

  /** Adds another state's closed counts and sums (not its open cluster). */
  absorb(other: MetricState): void {
    this.n += other.n;
    this.aggregatable += other.aggregatable;
    this.errors += other.errors;
    this.skipped += other.skipped;
    this.not_applicable += other.not_applicable;
    this.invalid += other.invalid;
    this.passed += other.passed;
    this.examples += other.examples;
    this.tried += other.tried;
    this.passedAny += other.passedAny;
    this.passedAll += other.passedAll;
    this.value.merge(other.value);
    this.square.merge(other.square);
    this.low.merge(other.low);
    this.high.merge(other.high);
    this.meanErr.merge(other.meanErr);
  }

  merge(other: MetricState): void {
    this.close();
    this.absorb(other.closed());
  }

  result(): Aggregate {
    const s = this.closed();
    const k = s.examples;
    const sum = s.value.value;
    // Sums of huge values can overflow: what cannot be computed is null, never NaN.
    const mean = k > 0 && Number.isFinite(sum) ? sum / k : null;
    let stderr: number | null = null;
    let ci95: [number, number] | null = null;
    if (k >= 2 && mean !== null) {
      // Exact sums keep the cancellation error at one rounding of each total.
      const variance = Math.max(
        0,
        (s.square.value - (sum * sum) / k) / (k - 1),
      );
      const se = Math.sqrt(variance / k);
      const half = tCritical95(k - 1) * se;
      if (Number.isFinite(mean - half) && Number.isFinite(mean + half)) {
        stderr = se;
        ci95 = [mean - half, mean + half];
      }
    }
    const trials = s.aggregatable + s.errors;
    // Σ bound = Σ mean − Σ mean of examples with errors + Σ their bounds, exactly.
    const lowSum = new ExactSum();
    lowSum.merge(s.value);
    lowSum.subtract(s.meanErr);
    const highSum = new ExactSum();
    highSum.merge(lowSum);
    lowSum.merge(s.low);
    highSum.merge(s.high);
    const low = lowSum.value;
    const high = highSum.value;
    return {
      metric: s.metric,
      n: s.n,
      aggregatable: s.aggregatable,
      errors: s.errors,
      skipped: s.skipped,
      not_applicable: s.not_applicable,
      invalid: s.invalid,
      coverage: s.n > 0 ? s.aggregatable / s.n : null,
      examples: k,
      mean,
      stderr,
      ci95,
      mean_bounds: s.tried > 0 && Number.isFinite(low) && Number.isFinite(high)
        ? [low / s.tried, high / s.tried]
        : null,
      passed: s.passed,
      pass_rate: trials > 0 ? s.passed / trials : null,
      pass_rate_ci95: trials > 0 ? wilson95(s.passed, trials) : null,
      pass_at_k: s.tried > 0 ? s.passedAny / s.tried : null,
      pass_hat_k: s.tried > 0 ? s.passedAll / s.tried : null,
      sums: {
        value: s.value.partials,
        square: s.square.partials,
        low: lowSum.partials,
        high: highSum.partials,
        tried: s.tried,
        passed_any: s.passedAny,
        passed_all: s.passedAll,
      },
    };
  }
}

/**
 * Accumulates Scores per metric; merges with other aggregators exactly.
 *
 * @example Aggregate three Scores
 * ```ts
 * import { Aggregator } from "./aggregate.ts";
 * import { errored, scored } from "../score/score.ts";
 * const agg = new Aggregator();
 * for (const s of [scored("m", 1), scored("m", 0), errored("m", "boom")]) agg.add(s);
 * const [m] = agg.results();
 * if (m?.mean !== 0.5 || m.errors !== 1) throw new Error("unexpected");
 * ```
 */
export class Aggregator {
  #metrics = new Map<string, MetricState>();
  #grouped: boolean;

  /**
   * Creates an aggregator.
   *
   * @param options `grouped: true` gathers the Scores of each example wherever
   *   they come in the stream (memory grows with the examples); by default
   *   the Scores of one example must be adjacent, as evalpipe writes them,
   *   and memory stays flat.
   */
  constructor(options: { grouped?: boolean } = {}) {
    this.#grouped = options.grouped ?? false;
  }

  #state(metric: string): MetricState {
    let state = this.#metrics.get(metric);
    if (state === undefined) {
      state = new MetricState(metric, this.#grouped);
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
    state.examples = aggregate.examples;
    state.tried = aggregate.sums.tried;
    state.passedAny = aggregate.sums.passed_any;
    state.passedAll = aggregate.sums.passed_all;
    state.value = new ExactSum(aggregate.sums.value);
    state.square = new ExactSum(aggregate.sums.square);
    // Serialised bounds are whole sums: as if every example had errors.
    state.low = new ExactSum(aggregate.sums.low);
    state.high = new ExactSum(aggregate.sums.high);
    state.meanErr = new ExactSum(aggregate.sums.value);
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
  | "examples"
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
  const a = mappingAt(value, "");
  const sums = mappingAt(a.sums, "sums");
  if (typeof a.metric !== "string" || a.metric === "") {
    throw new FieldError("metric", "a non-empty string", a.metric);
  }
  // Only the fields merging needs, in this order; others are dropped.
  return {
    metric: a.metric,
    n: count(a, "n"),
    aggregatable: count(a, "aggregatable"),
    errors: count(a, "errors"),
    skipped: count(a, "skipped"),
    not_applicable: count(a, "not_applicable"),
    invalid: count(a, "invalid"),
    examples: count(a, "examples"),
    passed: count(a, "passed"),
    sums: {
      value: partials(sums, "value"),
      square: partials(sums, "square"),
      low: partials(sums, "low"),
      high: partials(sums, "high"),
      tried: count(sums, "tried", "sums."),
      passed_any: count(sums, "passed_any", "sums."),
      passed_all: count(sums, "passed_all", "sums."),
    },
  };
}

function count(o: Record<string, unknown>, key: string, prefix = ""): number {
  const v = o[key];
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
    throw new FieldError(prefix + key, "a whole number of at least 0", v);
  }
  return v;
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
 * import { scored } from "../score/score.ts";
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
