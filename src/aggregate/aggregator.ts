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
import {
  clampInterval,
  ruleOfThree95,
  SMALL_N,
  tCritical95,
  wilson95,
} from "./stats.ts";
import { aggregatable, type Score } from "../score/mod.ts";
import { nfcKey } from "../base/nfc.ts";
import type { Aggregate, PartialAggregate, ValueRange } from "./types.ts";
import {
  ConfusionCounts,
  confusionFrom,
  predictionOf,
} from "./classification.ts";

/**
 * A metric's range as far as it is known: `undefined` when nothing declared
 * one and no value has been seen (so merging it changes nothing), `null`
 * when values came without one or broke it (so merging keeps it unknown).
 */
type RangeState = ValueRange | null | undefined;

/** The range of two parts together: the hull of what both declare. */
function joinRanges(a: RangeState, b: RangeState): RangeState {
  if (a === undefined) return b;
  if (b === undefined) return a;
  if (a === null || b === null) return null;
  if (a[0] === b[0] && a[1] === b[1]) return a;
  return [Math.min(a[0], b[0]), Math.max(a[1], b[1])];
}

/** The units of one example seen so far, for one metric. */
interface Cluster {
  /** The example's id, as first written. */
  id: string | undefined;
  /** It in Unicode NFC: two spellings of one id are one example. */
  key: string | undefined;
  sum: number;
  count: number;
  /** Its Scores that failed without a value: errors and blocked ones. */
  errors: number;
  /** Its Scores that passed. */
  passes: number;
  anyPassed: boolean;
  allPassed: boolean;
}

function newCluster(
  id: string | undefined,
  key: string | undefined,
): Cluster {
  return {
    id,
    key,
    sum: 0,
    count: 0,
    errors: 0,
    passes: 0,
    anyPassed: false,
    allPassed: true,
  };
}

/** The running state of one metric. */
class MetricState {
  n = 0;
  aggregatable = 0;
  errors = 0;
  blocked = 0;
  skipped = 0;
  non_evaluable = 0;
  not_applicable = 0;
  invalid = 0;
  passed = 0;
  examples = 0;
  tried = 0;
  passedAny = 0;
  passedAll = 0;
  passedMajority = 0;
  flaky = 0;
  /** Whether every part merged in counted `passedMajority` and `flaky`. */
  reducersKnown = true;
  // Per-example trial sums for the pass rate's clustered interval:
  // Σ trials², Σ passes², Σ passes × trials over the examples tried.
  trialsSquare = 0;
  passedSquare = 0;
  passedTrials = 0;
  /** Whether every part merged in counted the three sums above. */
  clustersKnown = true;
  value = new ExactSum();
  square = new ExactSum();
  // The error bounds differ from the mean only for examples with errors, so
  // only those are summed: low and high hold their bounds, meanErr their means.
  low = new ExactSum();
  high = new ExactSum();
  meanErr = new ExactSum();
  open: Cluster | undefined;
  /** The cluster last closed, to be opened again for the next example. */
  spare: Cluster | undefined;
  /** In grouped mode, every example's cluster until the results are asked for. */
  pending: Map<string, Cluster> | undefined;
  range: RangeState = undefined;
  // The range's ends as plain numbers, for one cheap test per example: a
  // mean outside [low, high] (beyond rounding) drops the range. Unknown
  // (null) is ±∞, so nothing fails; undefined is +∞..−∞, so the first mean
  // fails and makes it null.
  rangeLow = Infinity;
  rangeHigh = -Infinity;
  /** The predictions of a classification metric, once one is seen. */
  confusion: ConfusionCounts | undefined;

  constructor(
    readonly metric: string,
    grouped = false,
    range: RangeState = undefined,
  ) {
    if (grouped) this.pending = new Map();
    this.setRange(range);
  }

  setRange(range: RangeState): void {
    this.range = range;
    if (range === undefined || range === null) {
      this.rangeLow = range === undefined ? Infinity : -Infinity;
      this.rangeHigh = -this.rangeLow;
    } else {
      // An example's mean of values at the range's end may round past it.
      const slack = 1e-9 * Math.max(1, Math.abs(range[0]), Math.abs(range[1]));
      this.rangeLow = range[0] - slack;
      this.rangeHigh = range[1] + slack;
    }
  }

  add(score: Score): void {
    this.n++;
    const id = score.example_id ?? score.unit_id;
    let c: Cluster;
    if (this.pending !== undefined && id !== undefined) {
      // Gathered by the id in NFC: "é" written as one code point or as "e"
      // and a combining accent is one example, as diff and resume pair it.
      const key = nfcKey(id);
      c = this.pending.get(key) ?? newCluster(id, key);
      this.pending.set(key, c);
    } else {
      // The units of one example arrive together: a new id closes the
      // cluster, unless it is the open one's in another spelling. Its key
      // is made once per new id, not once per Score.
      const open = this.open;
      let key: string | undefined;
      if (open !== undefined && (id === undefined || id !== open.id)) {
        key = id === undefined ? undefined : nfcKey(id);
        if (key === undefined || key !== open.key) this.close();
      }
      c = this.open ??= this.reopen(
        id,
        key ?? (id === undefined ? undefined : nfcKey(id)),
      );
    }
    if (aggregatable(score)) {
      this.aggregatable++;
      c.sum += score.value as number;
      c.count++;
      if (score.passed === true) {
        this.passed++;
        c.passes++;
        c.anyPassed = true;
      } else c.allPassed = false;
      if (score.provenance !== undefined) {
        const p = predictionOf(score);
        if (p !== undefined) {
          (this.confusion ??= new ConfusionCounts()).add(p.label, p.predicted);
        }
      }
    } else {
      if (score.validity === "not_applicable") this.not_applicable++;
      switch (score.status) {
        // An error and a blocked Score both fail: no value, a failed verdict.
        case "error":
          this.errors++;
          c.errors++;
          c.allPassed = false;
          break;
        case "blocked":
          this.blocked++;
          c.errors++;
          c.allPassed = false;
          break;
        case "skipped":
          this.skipped++;
          break;
        case "non_evaluable":
          this.non_evaluable++;
          break;
        default:
          this.invalid++;
      }
    }
  }

  /** A cluster for a new example: the spare one, emptied, or a new one. */
  reopen(id: string | undefined, key: string | undefined): Cluster {
    const c = this.spare;
    if (c === undefined) return newCluster(id, key);
    this.spare = undefined;
    c.id = id;
    c.key = key;
    c.sum = 0;
    c.count = 0;
    c.errors = 0;
    c.passes = 0;
    c.anyPassed = false;
    c.allPassed = true;
    return c;
  }

  /** Folds the open cluster (and, grouped, every pending one) into the sums. */
  close(): void {
    if (this.open !== undefined) {
      this.fold(this.open);
      // Folded, it is nobody's: one cluster serves example after example.
      this.spare = this.open;
    }
    this.open = undefined;
    for (const c of this.pending?.values() ?? []) this.fold(c);
    this.pending?.clear();
  }

  fold(c: Cluster): void {
    if (c.count > 0) {
      const mean = c.sum / c.count;
      // Means without a declared range, or outside it: nothing is clamped.
      // Checked per example, not per Score: off the hot path, and the mean
      // of the example means is what the interval is about.
      if (mean < this.rangeLow || mean > this.rangeHigh) this.setRange(null);
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
      if (c.passes * 2 > trials) this.passedMajority++;
      if (c.anyPassed && !c.allPassed) this.flaky++;
      this.trialsSquare += trials * trials;
      this.passedSquare += c.passes * c.passes;
      this.passedTrials += c.passes * trials;
    }
  }

  /**
   * The pass rate's trials as independent ones: n over the design effect
   * of examples with several trials (Kish's, from the ratio estimator's
   * variance across examples), never above n. A pass rate of 0 or 1 has
   * no spread to measure how far an example's trials agree: the examples,
   * as the rule of three counts them. One trial an example, or sums merged
   * from older lines: n itself.
   */
  effectiveTrials(n: number): number {
    const p = this.passed / n;
    if (p === 0 || p === 1) return this.tried > 0 ? Math.min(n, this.tried) : n;
    if (!this.clustersKnown || this.trialsSquare === n) return n;
    // Σ (passes − p × trials)² over the examples.
    const residual = this.passedSquare - 2 * p * this.passedTrials +
      p * p * this.trialsSquare;
    const clustered = residual / (n * n);
    const independent = (p * (1 - p)) / n;
    return clustered > independent ? (n * independent) / clustered : n;
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
    this.blocked += other.blocked;
    this.skipped += other.skipped;
    this.non_evaluable += other.non_evaluable;
    this.not_applicable += other.not_applicable;
    this.invalid += other.invalid;
    this.passed += other.passed;
    this.examples += other.examples;
    this.tried += other.tried;
    this.passedAny += other.passedAny;
    this.passedAll += other.passedAll;
    this.passedMajority += other.passedMajority;
    this.flaky += other.flaky;
    this.reducersKnown &&= other.reducersKnown;
    this.trialsSquare += other.trialsSquare;
    this.passedSquare += other.passedSquare;
    this.passedTrials += other.passedTrials;
    this.clustersKnown &&= other.clustersKnown;
    this.value.merge(other.value);
    this.square.merge(other.square);
    this.low.merge(other.low);
    this.high.merge(other.high);
    this.meanErr.merge(other.meanErr);
    this.setRange(joinRanges(this.range, other.range));
    if (other.confusion !== undefined) {
      (this.confusion ??= new ConfusionCounts()).merge(other.confusion);
    }
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
    let unclamped: [number, number] | null = null;
    const range = s.range ?? null;
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
        unclamped = [mean - half, mean + half];
        ci95 = range === null
          ? [mean - half, mean + half]
          : clampInterval(unclamped, range);
      }
    }
    const trials = s.aggregatable + s.errors + s.blocked;
    // Σ bound = Σ mean − Σ mean of examples with errors + Σ their bounds, exactly.
    const lowSum = new ExactSum();
    lowSum.merge(s.value);
    lowSum.subtract(s.meanErr);
    const highSum = new ExactSum();
    highSum.merge(lowSum);
    lowSum.merge(s.low);
    highSum.merge(s.high);
    // Those sums count a failure as 0 and as 1; their difference is Σ of
    // each example's share of failures, so a failure at the range's ends
    // (a 1..5 metric's 1 and 5) is low + end × share.
    let low = lowSum.value;
    let high = highSum.value;
    if (range !== null && (range[0] !== 0 || range[1] !== 1)) {
      const share = new ExactSum();
      share.merge(highSum);
      share.subtract(lowSum);
      const failed = share.value;
      [low, high] = [low + range[0] * failed, low + range[1] * failed];
    }
    return {
      metric: s.metric,
      n: s.n,
      aggregatable: s.aggregatable,
      errors: s.errors,
      blocked: s.blocked,
      skipped: s.skipped,
      non_evaluable: s.non_evaluable,
      not_applicable: s.not_applicable,
      invalid: s.invalid,
      coverage: s.n > 0 ? s.aggregatable / s.n : null,
      examples: k,
      small_n: k > 0 && k < SMALL_N,
      value_range: range === null ? null : [range[0], range[1]],
      mean,
      stderr,
      ci95,
      ci95_unclamped: unclamped,
      mean_bounds: s.tried > 0 && Number.isFinite(low) && Number.isFinite(high)
        ? [low / s.tried, high / s.tried]
        : null,
      passed: s.passed,
      pass_rate: trials > 0 ? s.passed / trials : null,
      pass_rate_ci95: trials > 0
        ? wilson95(s.passed, trials, s.effectiveTrials(trials))
        : null,
      // The examples, not the Scores: 50 passing epochs of 10 examples
      // bound the rate as 10 passing questions do.
      pass_rate_rule_of_three: trials > 0
        ? ruleOfThree95(s.passed, trials, Math.min(s.tried, trials))
        : null,
      pass_at_k: s.tried > 0 ? s.passedAny / s.tried : null,
      pass_hat_k: s.tried > 0 ? s.passedAll / s.tried : null,
      pass_majority: s.tried > 0 && s.reducersKnown
        ? s.passedMajority / s.tried
        : null,
      flaky: s.reducersKnown ? s.flaky : null,
      sums: {
        value: s.value.partials,
        square: s.square.partials,
        low: lowSum.partials,
        high: highSum.partials,
        tried: s.tried,
        passed_any: s.passedAny,
        passed_all: s.passedAll,
        ...(s.reducersKnown
          ? { passed_majority: s.passedMajority, flaky: s.flaky }
          : {}),
        ...(s.clustersKnown
          ? {
            trials_square: s.trialsSquare,
            passed_square: s.passedSquare,
            passed_trials: s.passedTrials,
          }
          : {}),
      },
      ...(s.confusion !== undefined
        ? { classification: s.confusion.figures() }
        : {}),
    };
  }
}

/**
 * Accumulates Scores per metric; merges with other aggregators exactly.
 *
 * @example Aggregate three Scores
 * ```ts
 * import { Aggregator } from "./mod.ts";
 * import { errored, scored } from "../score/mod.ts";
 * const agg = new Aggregator();
 * for (const s of [scored("m", 1), scored("m", 0), errored("m", "boom")]) agg.add(s);
 * const [m] = agg.results();
 * if (m?.mean !== 0.5 || m.errors !== 1) throw new Error("unexpected");
 * ```
 */
export class Aggregator {
  #metrics = new Map<string, MetricState>();
  /** A matrix run's Scores, per target (in the order first seen), per metric. */
  #targets = new Map<string, Map<string, MetricState>>();
  #grouped: boolean;
  #valueRange: (metric: string) => ValueRange | undefined;

  /**
   * Creates an aggregator.
   *
   * @param options `grouped: true` gathers the Scores of each example wherever
   *   they come in the stream (memory grows with the examples); by default
   *   the Scores of one example must be adjacent, as evalpipe writes them,
   *   and memory stays flat. `valueRange` tells the range a metric's scorer
   *   declares (asked once per metric; `undefined` when it declares none):
   *   the mean's interval is clamped to it, and an example whose mean lies
   *   outside it drops it.
   */
  constructor(
    options: {
      grouped?: boolean | undefined;
      valueRange?: ((metric: string) => ValueRange | undefined) | undefined;
    } = {},
  ) {
    this.#grouped = options.grouped ?? false;
    this.#valueRange = options.valueRange ?? (() => undefined);
  }

  /**
   * Whether it gathers each example's Scores wherever they stand (the
   * `grouped` it was made with), rather than expecting them adjacent.
   *
   * @returns `true` when grouped.
   */
  get grouped(): boolean {
    return this.#grouped;
  }

  #state(metric: string, target?: string): MetricState {
    let metrics = this.#metrics;
    if (target !== undefined) {
      metrics = this.#targets.get(target) ?? new Map();
      this.#targets.set(target, metrics);
    }
    let state = metrics.get(metric);
    if (state === undefined) {
      state = new MetricState(
        metric,
        this.#grouped,
        checkedRange(metric, this.#valueRange(metric)),
      );
      metrics.set(metric, state);
    }
    return state;
  }

  /**
   * Counts one Score.
   *
   * @param score A valid Score.
   */
  add(score: Score): void {
    // A matrix run's Scores count towards their target's aggregates.
    const target = score.target_name;
    (target === undefined
      ? this.#state(score.metric)
      : this.#state(score.metric, target)).add(score);
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
    for (const [target, metrics] of other.#targets) {
      for (const [metric, state] of metrics) {
        this.#state(metric, target).merge(state);
      }
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
    state.blocked = aggregate.blocked;
    state.skipped = aggregate.skipped;
    state.non_evaluable = aggregate.non_evaluable;
    state.not_applicable = aggregate.not_applicable;
    state.invalid = aggregate.invalid;
    state.passed = aggregate.passed;
    state.examples = aggregate.examples;
    state.tried = aggregate.sums.tried;
    state.passedAny = aggregate.sums.passed_any;
    state.passedAll = aggregate.sums.passed_all;
    const { passed_majority, flaky } = aggregate.sums;
    if (passed_majority !== undefined && flaky !== undefined) {
      state.passedMajority = passed_majority;
      state.flaky = flaky;
    } else state.reducersKnown = false;
    const { trials_square, passed_square, passed_trials } = aggregate.sums;
    if (
      trials_square !== undefined && passed_square !== undefined &&
      passed_trials !== undefined
    ) {
      state.trialsSquare = trials_square;
      state.passedSquare = passed_square;
      state.passedTrials = passed_trials;
    } else state.clustersKnown = false;
    state.value = new ExactSum(aggregate.sums.value);
    state.square = new ExactSum(aggregate.sums.square);
    // Serialised bounds are whole sums: as if every example had errors.
    state.low = new ExactSum(aggregate.sums.low);
    state.high = new ExactSum(aggregate.sums.high);
    state.meanErr = new ExactSum(aggregate.sums.value);
    state.setRange(aggregate.value_range ?? null);
    if (aggregate.classification !== undefined) {
      state.confusion = confusionFrom(aggregate.classification);
    }
    this.#state(aggregate.metric, aggregate.target_name).merge(state);
  }

  /**
   * The aggregates, one per metric, sorted by metric; a matrix run's then
   * one per target and metric, each with its `target_name`, the targets in
   * the order their Scores first came.
   *
   * @returns The aggregates.
   */
  results(): Aggregate[] {
    const sorted = (metrics: Map<string, MetricState>) =>
      [...metrics.keys()].sort().map((metric) => metrics.get(metric)!.result());
    const out = sorted(this.#metrics);
    for (const [target, metrics] of this.#targets) {
      for (const a of sorted(metrics)) out.push({ target_name: target, ...a });
    }
    return out;
  }
}

/** A declared range, copied, after checking that it is one. */
function checkedRange(
  metric: string,
  range: ValueRange | undefined,
): ValueRange | undefined {
  if (range === undefined) return undefined;
  const [low, high] = range;
  if (!Number.isFinite(low) || !Number.isFinite(high) || low > high) {
    throw new RangeError(
      `The value range of metric ${
        JSON.stringify(metric)
      } must be two finite numbers, low to high, not ${JSON.stringify(range)}`,
    );
  }
  return [low, high];
}
