/**
 * The scorer interface, verdicts, and TypeScript function scorers.
 *
 * @module
 */

import {
  isScoreBatch,
  type Score,
  type ScoreBatch,
  scored,
  ScoreError,
} from "../score/mod.ts";
import { returnedText } from "../base/terminal.ts";
import type { Unit } from "../dataset/unit.ts";
import type { FlowWatch } from "../net/flow.ts";

/**
 * What a scorer decides about one unit: the protocol's verdict shape.
 *
 * @example A function scorer returning a verdict with its reason
 * ```ts
 * import { functionScorer, type Verdict } from "./mod.ts";
 * const polite = functionScorer("polite", (unit): Verdict =>
 *   /please|thank/i.test(unit.output ?? "") ? { score: 1 } : { score: 0, reason: "no please or thanks" });
 * const s = await polite.score({ example_id: "d#1", unit_id: "d#1", input: "hi", output: "hello" }, {});
 * if ("scores" in s || s.passed !== false || s.reason !== "no please or thanks") throw new Error("unexpected");
 * ```
 */
export interface Verdict {
  /**
   * The value, a finite number: within 0..1 from a subprocess scorer (the
   * protocol's rule); from a function scorer, within its `range` if it
   * declares one (outside, the Score is `invalid`), any otherwise.
   */
  score: number;
  /**
   * Whether the unit passes.
   * @default {score >= 0.5}
   */
  passed?: boolean | undefined;
  /** A human-readable explanation. */
  reason?: string | undefined;
}

/**
 * What a scorer is given besides the unit.
 *
 * @example A scorer that stops when the run stops
 * ```ts
 * import { functionScorer, type ScorerContext } from "./mod.ts";
 * const careful = functionScorer("careful", (_unit, context: ScorerContext) => {
 *   context.signal?.throwIfAborted(); // before any costly work
 *   return 1;
 * });
 * const unit = { example_id: "d#1", unit_id: "d#1", input: "hi", output: "hello" };
 * try {
 *   await careful.score(unit, { signal: AbortSignal.abort() });
 *   throw new Error("expected the scorer to stop");
 * } catch (error) {
 *   if (!(error instanceof DOMException) || error.name !== "AbortError") throw error;
 * }
 * ```
 */
export interface ScorerContext {
  /** Aborted when the run stops: stop work and let the Score be whatever comes. */
  signal?: AbortSignal | undefined;
  /** Told of every wait of the scorer's network requests (a judge's rate limit, `Retry-After`, ...). */
  flow?: FlowWatch | undefined;
}

/**
 * An evaluator of units: built-in, a TypeScript function, or a subprocess.
 *
 * @example A scorer written by hand, run by scoreUnits
 * ```ts
 * import { type Scorer, scoreUnits } from "./mod.ts";
 * import { nonEvaluable, scored } from "../score/mod.ts";
 * const length: Scorer = {
 *   name: "length",
 *   version: "length@1",
 *   score: (unit) => unit.output === null ? nonEvaluable("length") : scored("length", unit.output.length / 100),
 * };
 * const units = [{ example_id: "d#1", unit_id: "d#1", input: "hi", output: "hello" }];
 * const [s] = await Array.fromAsync(ReadableStream.from(units).pipeThrough(scoreUnits([length])));
 * if (s?.value !== 0.05 || s.evaluator_version !== "length@1") throw new Error("unexpected");
 * ```
 */
export interface Scorer {
  /** The metric its Scores carry (a batch may declare several in `metrics`). */
  readonly name: string;
  /** Its `evaluator_version`, never empty: changing the scorer changes it. */
  readonly version: string;
  /** The metric names its batches may carry, when there are several. */
  readonly metrics?: readonly string[];
  /**
   * The range `[low, high]` its values lie within, when it has one (`[0, 1]`
   * for the built-in, `llm_judge` and subprocess scorers): the mean's
   * interval is clamped to it. Without one, nothing is clamped. It is a
   * promise the aggregate checks per example: an example whose mean lies
   * outside it drops the range.
   */
  readonly range?: readonly [number, number];
  /**
   * Scores one unit, synchronously or not. Throwing (or rejecting) is
   * allowed: the pipeline turns it into an `error` Score,
   * `scorer error: <message>`.
   */
  score(
    unit: Unit,
    context: ScorerContext,
  ): Promise<Score | ScoreBatch> | Score | ScoreBatch;
  /** Releases what the scorer holds (a long-lived process); called once, at the end. */
  close?(): Promise<void>;
  /**
   * How many lines its processes wrote on stdout when no case was waiting
   * for a verdict (a persistent scorer's): blank lines and lines of a
   * process it killed aside. Above 0, its verdicts were likely shifted onto
   * later cases, since verdict lines carry no case id. Complete once
   * `close()` has resolved; `run` and `score` then name the scorer on
   * stderr and exit 2.
   */
  surplusLines?(): number;
  /**
   * The cache key of the call scoring a unit would make, for a scorer that
   * calls a model through the cache (`llm_judge`): what `validate` checks
   * the cache for. Throws when the unit cannot become a request.
   */
  cacheKey?(unit: Unit): string;
  /**
   * Whether scoring a unit makes no call, for a scorer with a
   * {@linkcode Scorer.cacheKey}: a judge that finds the unit not applicable
   * (`faithfulness` without a context) scores it `non_evaluable` without
   * asking, so `validate` counts no request for it. Left out, every unit
   * makes its call.
   */
  skipsCall?(unit: Unit): boolean;
  /**
   * Whether this scorer's `score` would take a reply the cache holds for
   * a unit (under {@linkcode Scorer.cacheKey}'s key), for a scorer that
   * refuses some (a judge's reply without a verdict, or a refusal, is
   * not cached nor taken from the cache). It is for `validate` (and
   * `planSuite`) alone, which call nothing: a stored reply it refuses is
   * counted missing, not stored, since `--cache replay` meets it as a miss
   * (`cache.miss`) and `auto` pays for the call again. Left out, every
   * stored reply counts as stored.
   */
  usableReply?(
    unit: Unit,
    reply: { output: string; info?: Record<string, unknown> | undefined },
  ): boolean;
}

/**
 * The range of every built-in, `llm_judge` and protocol v0 scorer: 0..1.
 *
 * @example The built-ins declare it
 * ```ts
 * import { exactMatch, UNIT_RANGE } from "./mod.ts";
 * if (exactMatch().range !== UNIT_RANGE) throw new Error("unexpected");
 * ```
 */
export const UNIT_RANGE: readonly [number, number] = Object.freeze([
  0,
  1,
]) as readonly [number, number];

/**
 * The metrics a scorer's Scores carry: its declared `metrics`, else its name.
 *
 * @param scorer The scorer.
 * @returns Its metric names, in its order.
 *
 * @example
 * ```ts
 * import { exactMatch, metricsOf } from "./mod.ts";
 * if (metricsOf(exactMatch()).join() !== "exact_match") throw new Error();
 * const batch = { ...exactMatch(), metrics: ["faithfulness", "relevance"] };
 * if (metricsOf(batch).join() !== "faithfulness,relevance") throw new Error();
 * ```
 */
export function metricsOf(scorer: Scorer): readonly string[] {
  return scorer.metrics !== undefined && scorer.metrics.length > 0
    ? scorer.metrics
    : [scorer.name];
}

/**
 * Each metric's range, as the scorers declare them: what an `Aggregator`
 * needs (its `valueRange` option) to clamp the mean's interval as `run`
 * does. A batch scorer's range covers each of its metrics.
 *
 * @param scorers The scorers.
 * @returns The range of a metric, `undefined` for one no scorer bounds.
 *
 * @example Aggregate a script's Scores as `run` would
 * ```ts
 * import { exactMatch, functionScorer, valueRangesOf } from "./mod.ts";
 * import { Aggregator } from "../aggregate/mod.ts";
 * const length = functionScorer("length", (unit) => (unit.output ?? "").length);
 * const ranges = valueRangesOf([exactMatch(), length]);
 * if (ranges("exact_match")?.join() !== "0,1" || ranges("length") !== undefined) throw new Error();
 * const aggregator = new Aggregator({ valueRange: ranges });
 * ```
 */
export function valueRangesOf(
  scorers: readonly Scorer[],
): (metric: string) => readonly [number, number] | undefined {
  const ranges = new Map<string, readonly [number, number]>();
  for (const s of scorers) {
    if (s.range === undefined) continue;
    for (const m of metricsOf(s)) ranges.set(m, s.range);
  }
  return (metric) => ranges.get(metric);
}

/**
 * Builds a `scored` Score from a verdict.
 *
 * @param metric The metric.
 * @param version The evaluator version.
 * @param verdict The verdict.
 * @returns The Score.
 * @throws {import("../score/mod.ts").ScoreError} When the verdict's score is not a finite number.
 *
 * @example A protocol verdict becomes a Score
 * ```ts
 * import { scoreFromVerdict } from "./mod.ts";
 * const s = scoreFromVerdict("faithfulness", "faithfulness@2", { score: 0.4, reason: "one claim unsupported" });
 * if (s.value !== 0.4 || s.passed !== false || s.evaluator_version !== "faithfulness@2") throw new Error("unexpected");
 * ```
 */
export function scoreFromVerdict(
  metric: string,
  version: string,
  verdict: Verdict,
): Score {
  return scored(metric, verdict.score, {
    evaluator_version: version,
    ...(verdict.passed !== undefined ? { passed: verdict.passed } : {}),
    ...(verdict.reason !== undefined ? { reason: verdict.reason } : {}),
  });
}

/**
 * What a function scorer may return.
 *
 * @example A number, a boolean and a verdict, each a Score
 * ```ts
 * import { functionScorer, type FunctionScorerResult } from "./mod.ts";
 * const unit = { example_id: "d#1", unit_id: "d#1", input: "hi", output: "hello" };
 * const results: FunctionScorerResult[] = [0.25, true, { score: 0.9, passed: false }];
 * const values = [];
 * for (const result of results) {
 *   const s = await functionScorer("m", () => result).score(unit, {});
 *   if (!("scores" in s)) values.push(`${s.value}:${s.passed}`);
 * }
 * if (values.join() !== "0.25:false,1:true,0.9:false") throw new Error(values.join());
 * ```
 */
export type FunctionScorerResult =
  | number
  | boolean
  | Verdict
  | Score
  | ScoreBatch;

/**
 * Options of {@linkcode functionScorer}.
 *
 * @example Bump the version when the function's meaning changes
 * ```ts
 * import { functionScorer, type FunctionScorerOptions } from "./mod.ts";
 * const options: FunctionScorerOptions = { version: "short@2" };
 * const short = functionScorer("short", (unit) => (unit.output ?? "").length <= 40, options);
 * const s = await short.score({ example_id: "d#1", unit_id: "d#1", input: "hi", output: "ok" }, {});
 * if ("scores" in s || s.evaluator_version !== "short@2") throw new Error("unexpected");
 * ```
 *
 * @example An async function that answers too late is an error Score
 * ```ts
 * import { functionScorer, scoreUnits } from "./mod.ts";
 * const slow = functionScorer("slow", (_unit, { signal }) =>
 *   new Promise<number>((resolve) => {
 *     const timer = setTimeout(() => resolve(1), 10_000);
 *     signal.addEventListener("abort", () => clearTimeout(timer));
 *   }), { timeout: 0.05 });
 * const units = [{ example_id: "d#1", unit_id: "d#1", input: "hi", output: "ok" }];
 * const [s] = await Array.fromAsync(ReadableStream.from(units).pipeThrough(scoreUnits([slow])));
 * if (s?.status !== "error" || s.diagnostics[0]?.code !== "scorer.timeout") throw new Error("unexpected");
 * ```
 */
export interface FunctionScorerOptions {
  /**
   * The evaluator version; bump it when the function's meaning changes.
   * @default {`${name}@1`}
   */
  version?: string | undefined;
  /**
   * The range `[low, high]` the function's values lie within, e.g. `[0, 1]`
   * or `[1, 5]`: the mean's interval is clamped to it. A value outside it
   * is `scored` but `invalid` (not aggregated). A boolean result is 0 or 1.
   * @default {undefined: no range, nothing clamped}
   */
  range?: readonly [number, number] | undefined;
  /**
   * Seconds an async function may take: past them, its Score is an error
   * (`scorer.timeout`) and the `context.signal` it was given aborts, so that
   * the work it started with that signal (a `fetch`) stops, and a promise
   * that never settles cannot hold the run. A synchronous function is not
   * timed.
   * @default {60, as a subprocess scorer's}
   */
  timeout?: number | undefined;
}

/**
 * The caller's context with another `signal`: one copy of all its fields,
 * so that a field added to {@linkcode ScorerContext} reaches the function
 * without a word here, and a plain object, so that a copy the function
 * makes (`{ ...context }`) keeps its `signal`.
 */
function withSignal(
  context: ScorerContext,
  signal: AbortSignal,
): ScorerContext & { signal: AbortSignal } {
  return { ...context, signal };
}

/**
 * Milliseconds a scorer still running when its signal aborts has to end on
 * its own, in the stage (`scoreUnits`) and in an async function scorer
 * alike: one that honours the signal ends with its own error (a subprocess
 * scorer's names its command) well within it.
 */
export const INTERRUPT_GRACE_MS = 1000;

/**
 * Calls of a synchronous function scorer that share one signal: few enough
 * that the listeners a function adds per call stay under Node's warning
 * (more than 10 on one signal), and a new controller's cost spreads thin.
 */
const SHARED_SIGNAL_CALLS = 10;

/** Seconds an async function scorer may take unless told otherwise. */
const FUNCTION_SCORER_TIMEOUT_S = 60;

/**
 * Microtasks an async function scorer's call may take before its timer is
 * set: one that settles at once is done within three.
 */
const TIMER_AFTER_HOPS = 16;

/** A function scorer's failure with a code of its own (`scorer.timeout`). */
class FunctionScorerError extends Error {
  readonly code: string;

  constructor(message: string, code: string) {
    super(message);
    this.name = "FunctionScorerError";
    this.code = code;
  }
}

function isScore(value: object): value is Score {
  return "status" in value && "metric" in value;
}

/**
 * Wraps a TypeScript function as a scorer. It may return a number (the
 * value), a boolean (1 or 0, passed or not), a verdict, a Score or a batch.
 *
 * @param name The metric.
 * @param fn The function, sync or async.
 * @param options The version, range and timeout.
 * @returns The scorer.
 * @throws {RangeError} When the range is not two finite numbers, low to high,
 *   or the timeout not a positive number of seconds.
 *
 * @example A length check
 * ```ts
 * import { functionScorer } from "./scorer.ts";
 * const short = functionScorer("short", (unit) => (unit.output ?? "").length < 80);
 * const s = await short.score({ example_id: "x#1", unit_id: "x#1", input: "hi", output: "ok" }, {});
 * if ("scores" in s || s.value !== 1) throw new Error("unexpected");
 * ```
 */
export function functionScorer(
  name: string,
  fn: (
    unit: Unit,
    // Always given a signal (its timeout's, the run's): typed so, it goes
    // to `fetch(url, { signal })` as it is, with exactOptionalPropertyTypes.
    context: ScorerContext & { signal: AbortSignal },
  ) => FunctionScorerResult | Promise<FunctionScorerResult>,
  options: FunctionScorerOptions = {},
): Scorer {
  const version = options.version ?? `${name}@1`;
  const range = options.range;
  if (
    range !== undefined &&
    !(Number.isFinite(range[0]) && Number.isFinite(range[1]) &&
      range[0] <= range[1])
  ) {
    throw new RangeError(
      `The range of function scorer "${name}" must be two finite numbers, low to high, not ${
        JSON.stringify(range)
      }`,
    );
  }
  const timeout = options.timeout ?? FUNCTION_SCORER_TIMEOUT_S;
  if (!(timeout > 0 && Number.isFinite(timeout))) {
    throw new RangeError(
      `The timeout of function scorer "${name}" must be a positive number of seconds, not ${timeout}`,
    );
  }
  const check = range === undefined
    ? convert
    : (result: FunctionScorerResult) => withinRange(convert(result), range);
  // Whether each call gets a signal of its own, which its timeout aborts.
  // A function that has returned synchronously is not timed, and from then
  // on shares one signal with the next few calls: a controller per unit
  // took 200,000 calls of a synchronous function from 23 to 108 ms
  // (session 26; bench/_function_scorer_context.ts), and the caller's
  // signal itself, given before, held every listener such a function
  // added, one a unit. One that returns a promise after that goes back to
  // signals of its own for good.
  let ownSignals = true;
  let promisedAfterSync = false;
  // The signal of a synchronous function's calls: one controller for a
  // few calls at once, then a new one, so that a listener the function
  // adds per unit is dropped with it. It follows the caller's signal
  // through one listener, `follow`, moved to each new controller's
  // caller: a listener the function adds hears of an abort when it
  // happens, not at a later call (which may never come).
  let sharedOuter: AbortSignal | undefined;
  let sharedFor: ScorerContext | undefined;
  let sharedContext: (ScorerContext & { signal: AbortSignal }) | undefined;
  let shared: AbortController | undefined;
  let sharedCalls = 0;
  const follow = () => shared!.abort(sharedOuter!.reason);
  return {
    name,
    version,
    ...(range !== undefined ? { range: [range[0], range[1]] as const } : {}),
    score(unit, context) {
      return timed(unit, context, timeout);
    },
  };

  /** The function run against its timeout, its signal aborted on expiry. */
  function timed(
    unit: Unit,
    context: ScorerContext,
    seconds: number,
  ): Promise<Score | ScoreBatch> | Score | ScoreBatch {
    const outer = context.signal;
    if (!ownSignals) {
      if (
        shared === undefined || outer !== sharedOuter ||
        ++sharedCalls > SHARED_SIGNAL_CALLS
      ) {
        sharedOuter?.removeEventListener("abort", follow);
        shared = new AbortController();
        sharedOuter = outer;
        sharedCalls = 1;
        sharedFor = undefined;
        if (outer?.aborted) shared.abort(outer.reason);
        else outer?.addEventListener("abort", follow, { once: true });
      }
      // A caller with a new context (same signal) gets its fields.
      if (context !== sharedFor) {
        sharedFor = context;
        sharedContext = withSignal(context, shared.signal);
      }
      const result = fn(unit, sharedContext!);
      if (!(result instanceof Promise)) return check(result);
      ownSignals = true;
      promisedAfterSync = true;
      // That call keeps the controller: its timeout aborts it, and
      // `settle` makes it follow the caller's while the call runs.
      sharedOuter?.removeEventListener("abort", follow);
      return settle(result, outer, shared, seconds);
    }
    // It follows the caller's signal through the listener `settle` adds
    // for a promise: a Set of the calls in flight per caller's signal cost
    // 0.8 µs a unit more (200,000 async units: 110 -> 280 ms).
    const own = new AbortController();
    if (outer?.aborted) own.abort(outer.reason);
    const result = fn(unit, withSignal(context, own.signal));
    // A synchronous function stays synchronous: no promise per unit.
    if (!(result instanceof Promise)) {
      if (!promisedAfterSync) ownSignals = false;
      return check(result);
    }
    return settle(result, outer, own, seconds);
  }

  /**
   * An async function's Score, or its timeout's error: `own` is the
   * controller of the signal it was given, if one of its own (aborted on
   * expiry, and following the caller's until the function is done).
   */
  function settle(
    result: Promise<FunctionScorerResult>,
    outer: AbortSignal | undefined,
    own: AbortController | undefined,
    seconds: number,
  ): Promise<Score | ScoreBatch> {
    return new Promise((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let ended = false;
      let hops = 0;
      // Most async functions settle at once (no I/O): within a few
      // microtasks, before the timer is set. A timer set and cleared per
      // unit cost 4.5 µs, and 200,000 such units took 1.5 to 2.5 s instead
      // of 0.4.
      const arm = () => {
        if (ended) return;
        if (++hops < TIMER_AFTER_HOPS) return queueMicrotask(arm);
        timer = setTimeout(() => {
          ended = true;
          outer?.removeEventListener("abort", stop);
          const error = new FunctionScorerError(
            `scorer ${JSON.stringify(name)} timed out after ${seconds} s`,
            "scorer.timeout",
          );
          own?.abort(error);
          reject(error);
          // A timer past 2^31 - 1 ms would fire at once: 24 days is no timeout.
        }, Math.min(seconds * 1000, 2 ** 31 - 1));
      };
      queueMicrotask(arm);
      // Once the run stops, the function has a second to end on its own
      // (the stage's grace), then its promise is a `scorer.interrupted`
      // error, so that one that never settles holds neither the stage nor
      // a script awaiting `score()`; nor does the rest of its timeout keep
      // the process alive.
      function stop() {
        ended = true;
        own?.abort(outer!.reason);
        if (timer !== undefined) clearTimeout(timer);
        timer = setTimeout(() => {
          reject(
            new FunctionScorerError(
              `scorer ${JSON.stringify(name)} was interrupted`,
              "scorer.interrupted",
            ),
          );
        }, INTERRUPT_GRACE_MS);
      }
      if (outer?.aborted) stop();
      else outer?.addEventListener("abort", stop, { once: true });
      const settled = () => {
        ended = true;
        if (timer !== undefined) clearTimeout(timer);
        outer?.removeEventListener("abort", stop);
      };
      result.then(check).then((scores) => {
        settled();
        resolve(scores);
      }, (error) => {
        settled();
        reject(error);
      });
    });
  }

  function convert(result: FunctionScorerResult): Score | ScoreBatch {
    if (typeof result === "number") {
      return scored(name, result, { evaluator_version: version });
    }
    if (typeof result === "boolean") {
      return scored(name, result ? 1 : 0, {
        evaluator_version: version,
        passed: result,
      });
    }
    if (typeof result === "object" && result !== null) {
      if (isScoreBatch(result) || isScore(result)) return result;
      if ("score" in result && result.score != null) {
        return scoreFromVerdict(name, version, result);
      }
    }
    // Not a result at all: an invalid Score, as a broken one is.
    const verdictLike = typeof result === "object" && result !== null;
    throw new ScoreError(
      `Function scorer "${name}" returned ${returnedText(result)}: ` +
        (verdictLike && "score" in result
          ? `a verdict's "score" is a finite number`
          : "expected a number, a boolean, a verdict, a Score or a batch") +
        // `{ value, passed }` reads like a verdict, whose number is `score`.
        (verdictLike && "value" in result && !("score" in result)
          ? ' (a verdict gives its number as "score")'
          : "") +
        // No number at all (`None`, `{score: null}`) is how other tools say
        // "does not apply": here that is a Score of its own, never a guess.
        (result === null || (verdictLike && "score" in result)
          ? `; for a unit the metric does not apply to, return nonEvaluable(${
            JSON.stringify(name)
          }, { reason: "not applicable: <why>" })`
          : ""),
    );
  }
}

/** A valid value outside the declared range is not trusted: `scored`, `invalid`. */
function withinRange(
  result: Score | ScoreBatch,
  range: readonly [number, number],
): Score | ScoreBatch {
  const check = (score: Score): Score => {
    const value = score.value;
    if (
      score.status !== "scored" || score.validity !== "valid" ||
      value === null || (value >= range[0] && value <= range[1])
    ) return score;
    return {
      ...score,
      validity: "invalid",
      diagnostics: [...score.diagnostics, {
        code: "scorer.out_of_range",
        severity: "warning",
        message: `the value ${value} is outside the declared range ${
          range[0]
        }..${range[1]}`,
        details: { value, range: [range[0], range[1]] },
      }],
    };
  };
  return isScoreBatch(result)
    ? { ...result, scores: result.scores.map(check) }
    : check(result);
}
