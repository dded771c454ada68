/**
 * The scoring stage: every scorer over every unit, failures turned into
 * `error` Scores, identity stamped, every Score validated.
 *
 * @module
 */

import { messageOf } from "../base/errors.ts";
import { DEFAULTS } from "../base/defaults.ts";
import {
  cancellable,
  concurrentBatches,
  concurrentFlatMap,
  type ConcurrentMapOptions,
} from "../io/concurrent_map.ts";
import {
  blocked,
  errored,
  isScoreBatch,
  parseScoreFor,
  type Score,
  ScoreError,
  type UnitScore,
} from "../score/mod.ts";
import { isCanonicalScore } from "../score/rules.ts";
import {
  INTERRUPT_GRACE_MS,
  metricsOf,
  type Scorer,
  type ScorerContext,
} from "./scorer.ts";
import { duplicateScorerName } from "./scorer_names.ts";
import { unitLaterOf, unitPathOf, unitScore } from "./_unit_path.ts";
import type { FlowWatch } from "../net/flow.ts";
import type { Unit } from "../dataset/unit.ts";

/**
 * Options of {@linkcode scoreUnits} and {@linkcode scoreUnitBatches}.
 *
 * @example Score two units at once, with a signal that can stop the scorers
 * ```ts
 * import { exactMatch, scoreUnits, type ScoreUnitsOptions } from "./mod.ts";
 * const options: ScoreUnitsOptions = { concurrency: 2, signal: new AbortController().signal };
 * const units = [
 *   { example_id: "d#1", unit_id: "d#1", input: "2+2", output: "4", expected: "4" },
 *   { example_id: "d#2", unit_id: "d#2", input: "3+3", output: "7", expected: "6" },
 * ];
 * const scores = await Array.fromAsync(ReadableStream.from(units).pipeThrough(scoreUnits([exactMatch()], options)));
 * if (scores.map((s) => s.value).join() !== "1,0") throw new Error("unexpected");
 * ```
 */
export interface ScoreUnitsOptions {
  /**
   * How many units are scored at once (each runs its scorers side by side):
   * a whole number of at least 1.
   * @default {DEFAULTS.concurrency (8)}
   */
  concurrency?: number | undefined;
  /**
   * Aborting stops the scorers that are running: their Scores become
   * `scorer.interrupted` errors, a second later at most for a scorer that
   * never looks at its signal (one that ends with an error of its own
   * rather than the signal's reason keeps that error).
   * @default {undefined}
   */
  signal?: AbortSignal | undefined;
  /**
   * Aborting lets each unit's Scores leave as soon as they are ready, no
   * longer in input order: a hung scorer holds back no other unit. `run`
   * passes its stop signal.
   * @default {undefined}
   */
  unordered?: AbortSignal | undefined;
  /**
   * The group of a unit, once `unordered`: the units of one group come one
   * after the other, and their Scores still leave together (`run` groups an
   * example's epochs and targets by `example_id`).
   * @default {undefined: each unit its own group}
   */
  groupOf?: ((unit: Unit) => unknown) | undefined;
  /**
   * Aborting ends the stage: the Scores ready are emitted, the units still
   * being scored are dropped (give the same signal as `signal` to kill their
   * scorers too), and the units still to come are cancelled.
   * @default {undefined}
   */
  abandon?: AbortSignal | undefined;
  /**
   * Given to each scorer as `context.flow`: told when its network requests wait.
   * @default {undefined}
   */
  flow?: FlowWatch | undefined;
  /**
   * Told as each unit's scoring starts (a progress line counts it).
   * @default {undefined}
   */
  onStart?: ((unit: Unit) => void) | undefined;
}

/**
 * What a scorer failing on a unit gives: an error Score per declared metric,
 * or a blocked one when the unit's target or record failed before it.
 */
function failure(
  scorer: Scorer,
  reason: string,
  unit: Unit,
  code: string,
  status: "error" | "blocked" = "error",
): Score[] {
  return metricsOf(scorer).map((metric) =>
    errorScore(scorer, metric, reason, unit, code, status)
  );
}

function errorScore(
  scorer: Scorer,
  metric: string,
  reason: string,
  unit: Unit,
  code: string,
  status: "error" | "blocked" = "error",
): Score {
  return (status === "error" ? errored : blocked)(metric, reason, {
    code,
    evaluator_version: scorer.version,
    example_id: unit.example_id,
    unit_id: unit.unit_id,
  });
}

/** A dotted code an error carries (as scorer errors do), else `scorer.error`. */
function codeOf(error: unknown): string {
  const code = typeof error === "object" && error !== null
    ? (error as { code?: unknown }).code
    : undefined;
  // Deno's own errors carry codes too ("ENOENT"), but never a dotted one.
  return typeof code === "string" && /^[a-z_]+(\.[a-z_]+)+$/.test(code)
    ? code
    : "scorer.error";
}

/**
 * Checks what a scorer returned for a unit (a Score or a batch) against the
 * Score rules and the scorer's declared metrics, and stamps the unit's
 * identity. The result has exactly one Score per declared metric, in the
 * declared order: a candidate that breaks a rule, a metric given twice, or a
 * declared metric left out becomes an `error` Score that says so. Never a
 * crash, never a 0.0.
 *
 * @param result What the scorer returned.
 * @param scorer The scorer.
 * @param unit The unit scored.
 * @returns One valid Score per declared metric, keys in canonical order.
 */
export function checkScores(
  result: unknown,
  scorer: Scorer,
  unit: Unit,
): Score[] {
  const declared = metricsOf(scorer);
  // A built-in's Score: canonical as it came, so every rule holds already,
  // and the copy that stamps the ids need not check them again.
  if (
    declared.length === 1 && isCanonicalScore(result) &&
    result.metric === declared[0] && result.target_name === undefined &&
    typeof unit.example_id === "string" && typeof unit.unit_id === "string" &&
    result.diagnostics.length === 0 && result.evidence_refs.length === 0
  ) {
    return [unitScore(
      result.metric,
      result.status,
      result.validity,
      result.value,
      result.passed,
      result.reason,
      result.evaluator_version,
      unit,
    )];
  }
  // The common case, one Score for a scorer's one metric, valid as it came.
  if (declared.length === 1 && !isScoreBatch(result)) {
    try {
      const score = parseScoreFor(result, unit);
      if (score.metric === declared[0]) return [score];
    } catch (error) {
      // What is wrong is said below, as for a batch.
      if (!(error instanceof SyntaxError)) throw error;
    }
  }
  const candidates: unknown[] = isScoreBatch(result) ? result.scores : [result];
  const found = new Map<string, Score>();
  const broken = new Map<string, string>();
  const strays: string[] = [];
  for (const candidate of candidates) {
    const claimed = typeof candidate === "object" && candidate !== null
      ? (candidate as { metric?: unknown }).metric
      : undefined;
    let score: Score;
    try {
      score = parseScoreFor(candidate, unit);
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      const message = `invalid Score: ${error.message}`;
      if (typeof claimed === "string" && declared.includes(claimed)) {
        broken.set(claimed, message);
      } else strays.push(message);
      continue;
    }
    if (!declared.includes(score.metric)) {
      strays.push(
        `Score for undeclared metric ${JSON.stringify(score.metric)}`,
      );
    } else if (found.has(score.metric) || broken.has(score.metric)) {
      broken.set(
        score.metric,
        `two Scores for metric ${JSON.stringify(score.metric)}`,
      );
    } else {
      found.set(score.metric, score);
    }
  }
  return declared.map((metric) => {
    const problem = broken.get(metric);
    if (problem !== undefined) {
      return errorScore(
        scorer,
        metric,
        `scorer error: ${problem}`,
        unit,
        "scorer.invalid_score",
      );
    }
    const score = found.get(metric);
    if (score !== undefined) return score;
    const why = strays.length > 0
      ? strays.join("; ")
      : `no Score for metric ${JSON.stringify(metric)}`;
    return errorScore(
      scorer,
      metric,
      `scorer error: ${why}`,
      unit,
      "scorer.invalid_score",
    );
  });
}

/**
 * Any throw or rejection is the scorer's failure, and failures are data; one
 * the budget refused was never run: blocked, as the units it stops. A Score
 * the scorer built against a rule (`scored(m, NaN)`, a function scorer's
 * verdict whose `passed` is no boolean) is an invalid Score, as one it
 * returned would be.
 */
function scorerFailed(scorer: Scorer, error: unknown, unit: Unit): Score[] {
  if (error instanceof ScoreError) {
    return failure(
      scorer,
      `scorer error: invalid Score: ${error.message}`,
      unit,
      "scorer.invalid_score",
    );
  }
  const code = codeOf(error);
  return code === "budget.exhausted"
    ? failure(scorer, `budget: ${messageOf(error)}`, unit, code, "blocked")
    : failure(scorer, `scorer error: ${messageOf(error)}`, unit, code);
}

/** The context of a scorer run without a signal, shared: it holds nothing. */
const NO_SIGNAL: ScorerContext = Object.freeze({});

/**
 * A matrix unit's Scores with its target's name after the ids, as the
 * pipeline stamps ids: whatever the scorer returned, and every failure.
 */
function withTarget(scores: Score[], target: string): Score[] {
  return scores.map((score) => {
    const { diagnostics, evidence_refs, provenance, target_name: _, ...ids } =
      score;
    return {
      ...ids,
      target_name: target,
      diagnostics,
      evidence_refs,
      ...(provenance !== undefined ? { provenance } : {}),
    };
  });
}

/** The one context every scorer run of a stage shares. */
function contextOf(signal?: AbortSignal, flow?: FlowWatch): ScorerContext {
  if (signal === undefined && flow === undefined) return NO_SIGNAL;
  return Object.freeze({
    ...(signal !== undefined ? { signal } : {}),
    ...(flow !== undefined ? { flow } : {}),
  });
}

function runScorer(
  scorer: Scorer,
  unit: Unit,
  context: ScorerContext,
): Score[] | Promise<Score[]> {
  const target = unit.target_name;
  if (target === undefined) return scoreOne(scorer, unit, context);
  const scores = scoreOne(scorer, unit, context);
  return scores instanceof Promise
    ? scores.then((list) => withTarget(list, target))
    : withTarget(scores, target);
}

function scoreOne(
  scorer: Scorer,
  unit: Unit,
  context: ScorerContext,
): Score[] | Promise<Score[]> {
  if (unit.invalid !== undefined) {
    return failure(
      scorer,
      `invalid case: ${unit.invalid}`,
      unit,
      "case.invalid",
      "blocked",
    );
  }
  const targetError = unit.target?.error;
  if (targetError !== undefined) {
    const code = unit.target?.error_code;
    return code === "budget.exhausted"
      ? failure(scorer, `budget: ${targetError}`, unit, code, "blocked")
      : failure(
        scorer,
        `target error: ${targetError}`,
        unit,
        typeof code === "string" && /^[a-z_]+(\.[a-z_]+)+$/.test(code)
          ? code
          : "target.error",
        "blocked",
      );
  }
  // No output is a failed call, which target.error says: a unit without
  // either (a script's own) has nothing to score, as `score` reads it.
  if (unit.output === null) {
    return failure(
      scorer,
      'invalid case: "output" must be a string',
      unit,
      "case.invalid",
      "blocked",
    );
  }
  // A scorer of this package whose Scores need no second look.
  const path = unitPathOf(scorer);
  const own = path?.call(scorer, unit, context, scorerFailed);
  if (own !== undefined) return own;
  // One that honours its signal ends with the signal's reason (a fetch's
  // AbortError): interrupted, as one that ignores it is a second later.
  const failed = (error: unknown) =>
    context.signal?.aborted && error === context.signal.reason
      ? interrupted(scorer, unit)
      : scorerFailed(scorer, error, unit);
  let result: unknown;
  try {
    result = scorer.score(unit, context);
  } catch (error) {
    return failed(error);
  }
  // A synchronous scorer (a built-in) stays synchronous: no promise per unit.
  if (!(result instanceof Promise)) return checkScores(result, scorer, unit);
  const scores = result.then((r) => checkScores(r, scorer, unit), failed);
  const signal = context.signal;
  return signal === undefined
    ? scores
    : untilAborted(scores, signal, scorer, unit);
}

/** A scorer's Scores once the stage's signal has stopped it. */
function interrupted(scorer: Scorer, unit: Unit): Score[] {
  return failure(
    scorer,
    `scorer error: scorer ${JSON.stringify(scorer.name)} was interrupted`,
    unit,
    "scorer.interrupted",
  );
}

/**
 * A scorer's Scores, or, once `signal` has aborted and the scorer has not
 * ended within {@linkcode INTERRUPT_GRACE_MS}, its `scorer.interrupted` error
 * Scores, as a subprocess scorer's: a scorer that ignores its signal (a
 * promise that never settles) cannot hold the stage.
 */
function untilAborted(
  scores: Promise<Score[]>,
  signal: AbortSignal,
  scorer: Scorer,
  unit: Unit,
): Promise<Score[]> {
  return new Promise((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const interrupt = () => resolve(interrupted(scorer, unit));
    const abort = () => (timer = setTimeout(interrupt, INTERRUPT_GRACE_MS));
    const settled = () => {
      signal.removeEventListener("abort", abort);
      // Only a timer that was set: the first clearTimeout of a process
      // costs a few milliseconds of start-up (Deno's timers load then).
      if (timer !== undefined) clearTimeout(timer);
    };
    // Settling after the interruption changes nothing, and is no unhandled
    // rejection.
    scores.then((list) => {
      settled();
      resolve(list);
    }, (error) => {
      settled();
      reject(error);
    });
    if (signal.aborted) abort();
    else signal.addEventListener("abort", abort, { once: true });
  });
}

/**
 * Scores each unit with every scorer, emitting Scores with units in input
 * order and scorers in the order given. A unit whose target failed gets
 * blocked `target error: …` Scores and a malformed record blocked
 * `invalid case: …` Scores, without running the scorers (a target's
 * `budget.exhausted` error gives blocked `budget: …` ones); a scorer that
 * throws gives `error` Scores, `scorer error: …`, with the error's dotted
 * `code` as the diagnostic's code when it has one (a budget's refusal gives
 * blocked `budget: …` Scores, and the `signal`'s reason, once it aborted,
 * `scorer.interrupted` ones). Each Score is validated and carries the
 * unit's identity. Cancelling the stage (its reader cancels, a `break` out
 * of `for await`) aborts the scorers still running, as `signal` would.
 *
 * @param scorers The scorers, in output order.
 * @param options Concurrency, signals, grouping and progress.
 * @returns The stage.
 * @throws {TypeError} When a scorer has no name, version or metric names,
 *   or two scorers give one metric.
 *
 * @example
 * ```ts
 * import { scoreUnits } from "./score_units.ts";
 * import { exactMatch } from "./builtin.ts";
 * const units = [{ example_id: "d#1", unit_id: "d#1", input: "2+2", output: "4", expected: "4" }];
 * const [s] = await Array.fromAsync(ReadableStream.from(units).pipeThrough(scoreUnits([exactMatch()])));
 * if (s?.value !== 1 || s.unit_id !== "d#1") throw new Error("unexpected");
 * ```
 */
export function scoreUnits(
  scorers: readonly Scorer[],
  options: ScoreUnitsOptions = {},
): TransformStream<Unit, UnitScore> {
  const { signal, onCancel } = cancellable(options.signal);
  return concurrentFlatMap(
    scoreEach(scorers, options, signal),
    poolOf(options, onCancel),
  );
}

/**
 * The pool of a stage: its concurrency, how it ends, and what aborts its
 * scorers once it is cancelled (nobody will read their Scores).
 */
function poolOf(
  options: ScoreUnitsOptions,
  onCancel: (reason: unknown) => void,
): ConcurrentMapOptions {
  return {
    concurrency: options.concurrency ?? DEFAULTS.concurrency,
    onCancel,
    ...(options.unordered !== undefined
      ? { unordered: options.unordered }
      : {}),
    ...(options.abandon !== undefined ? { abandon: options.abandon } : {}),
    ...(options.groupOf !== undefined ? { groupOf: options.groupOf } : {}),
  };
}

/**
 * Refuses a scorer no Score of which could be made, even an error Score (a
 * Score needs a metric and a version): as the stage is built, rather than a
 * crash at its first unit.
 */
function checkScorers(scorers: readonly Scorer[]): void {
  for (let i = 0; i < scorers.length; i++) {
    const scorer = scorers[i]!;
    const which = `The scorer at index ${i}`;
    if (typeof scorer.name !== "string" || scorer.name === "") {
      throw new TypeError(
        `${which} must have a non-empty "name", not ${
          JSON.stringify(scorer.name) ?? String(scorer.name)
        }`,
      );
    }
    const named = `${which} (${JSON.stringify(scorer.name)})`;
    if (typeof scorer.version !== "string" || scorer.version === "") {
      throw new TypeError(
        `${named} must have a non-empty "version", not ${
          JSON.stringify(scorer.version) ?? String(scorer.version)
        }`,
      );
    }
    if (!metricsOf(scorer).every((m) => typeof m === "string" && m !== "")) {
      throw new TypeError(
        `${named} must have "metrics" that are non-empty strings, not ${
          JSON.stringify(scorer.metrics)
        }`,
      );
    }
  }
  // Scores are told apart by metric: two scorers giving one would mix theirs,
  // and aggregate would count one unit twice. A config or `score` refuses it
  // at its line; a script's list is refused here.
  const metrics: string[] = [];
  const owner: number[] = [];
  scorers.forEach((scorer, i) => {
    for (const metric of metricsOf(scorer)) {
      metrics.push(metric);
      owner.push(i);
    }
  });
  const twice = duplicateScorerName(metrics);
  if (twice !== undefined) {
    const [a, b] = [owner[twice.first]!, owner[twice.second]!];
    throw new TypeError(
      `${
        a === b
          ? `The scorer at index ${a} gives`
          : `The scorers at index ${a} and ${b} give`
      } the metric ${
        JSON.stringify(twice.name)
      } twice: Scores are told apart by metric; give each scorer a name of its own`,
    );
  }
}

/** What a stage runs per unit: every scorer, after `onStart` when given. */
function scoreEach(
  scorers: readonly Scorer[],
  options: ScoreUnitsOptions,
  signal: AbortSignal,
): (unit: Unit) => UnitScore[] | Promise<UnitScore[]> {
  checkScorers(scorers);
  const context = contextOf(signal, options.flow);
  const onStart = options.onStart;
  // Every Score made here carries the unit's ids: `checkScores` and
  // `unitScore` stamp them on a scorer's, `failure` builds its own with them.
  const each = pooled(scorers, context) as (
    unit: Unit,
  ) => UnitScore[] | Promise<UnitScore[]>;
  if (onStart === undefined) return each;
  return (unit) => {
    onStart(unit);
    return each(unit);
  };
}

/**
 * What the pool runs per unit: `scoreWith`, or for one scorer with a pooled
 * unit path, that path for the units it serves (no target name, no target
 * error, not `invalid`: `scoreOne`'s and `runScorer`'s other cases), which
 * may settle a `Later` the pool keeps instead of a promise per unit.
 */
function pooled(
  scorers: readonly Scorer[],
  context: ScorerContext,
): (unit: Unit) => Score[] | Promise<Score[]> {
  const scorer = scorers.length === 1 ? scorers[0]! : undefined;
  const later = scorer !== undefined ? unitLaterOf(scorer) : undefined;
  if (later === undefined) return (unit) => scoreWith(scorers, unit, context);
  // The pool (orderedPool) takes a Later as a result; the stages' public
  // types do not name it.
  return ((unit: Unit) =>
    unit.invalid === undefined && unit.target_name === undefined &&
      unit.target?.error === undefined
      ? later.call(scorer, unit, context, scorerFailed) ??
        scoreWith(scorers, unit, context)
      : scoreWith(scorers, unit, context)) as (
      unit: Unit,
    ) => Score[] | Promise<Score[]>;
}

function units(batch: readonly Unit[]): readonly Unit[] {
  return batch;
}

/**
 * {@linkcode scoreUnits} over batches of units, as
 * {@linkcode import("../targets/mod.ts").runTargetBatches} emits them: the
 * same Scores in the same order, with the Scores that are ready together
 * leaving as one array. Synchronous scorers (the built-ins) then cost no
 * promise and no stream step per unit: this is the stage `run` uses.
 *
 * @param scorers The scorers, in output order.
 * @param options Concurrency, signals, grouping and progress.
 * @returns The stage.
 * @throws {TypeError} When a scorer has no name, version or metric names,
 *   or two scorers give one metric.
 *
 * @example
 * ```ts
 * import { scoreUnitBatches } from "./score_units.ts";
 * import { exactMatch } from "./builtin.ts";
 * const batch = [
 *   { example_id: "d#1", unit_id: "d#1", input: "2+2", output: "4", expected: "4" },
 *   { example_id: "d#2", unit_id: "d#2", input: "3+3", output: "7", expected: "6" },
 * ];
 * const scores = (await Array.fromAsync(
 *   ReadableStream.from([batch]).pipeThrough(scoreUnitBatches([exactMatch()])),
 * )).flat();
 * if (scores.map((s) => s.value).join() !== "1,0") throw new Error();
 * ```
 */
export function scoreUnitBatches(
  scorers: readonly Scorer[],
  options: ScoreUnitsOptions = {},
): TransformStream<readonly Unit[], UnitScore[]> {
  const { signal, onCancel } = cancellable(options.signal);
  return concurrentBatches(
    units,
    scoreEach(scorers, options, signal),
    poolOf(options, onCancel),
  );
}

/**
 * Scores one unit with every scorer side by side: one Score per declared
 * metric, scorers in the order given (see {@linkcode scoreUnits}).
 *
 * @param scorers The scorers.
 * @param unit The unit.
 * @param signal Aborting stops running scorers.
 * @param flow Told when the scorers' network requests wait.
 * @returns The Scores (at once when every scorer answers synchronously);
 *   never throws for a scorer's failure.
 * @throws {TypeError} When a scorer has no name, version or metric names,
 *   or two scorers give one metric.
 */
export function scoreUnit(
  scorers: readonly Scorer[],
  unit: Unit,
  signal?: AbortSignal,
  flow?: FlowWatch,
): Score[] | Promise<Score[]> {
  checkScorers(scorers);
  return scoreWith(scorers, unit, contextOf(signal, flow));
}

function scoreWith(
  scorers: readonly Scorer[],
  unit: Unit,
  context: ScorerContext,
): Score[] | Promise<Score[]> {
  if (scorers.length === 1) return runScorer(scorers[0]!, unit, context);
  const perScorer = scorers.map((s) => runScorer(s, unit, context));
  return perScorer.some((r) => r instanceof Promise)
    ? Promise.all(perScorer).then((all) => all.flat())
    : (perScorer as Score[][]).flat();
}
