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
} from "../score/mod.ts";
import type { Unit } from "../dataset/unit.ts";

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
  /** Within 0..1. */
  score: number;
  /**
   * Whether the unit passes.
   * @default {score >= 0.5}
   */
  passed?: boolean;
  /** A human-readable explanation. */
  reason?: string;
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
  signal?: AbortSignal;
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
 */
export interface FunctionScorerOptions {
  /**
   * The evaluator version; bump it when the function's meaning changes.
   * @default {`${name}@1`}
   */
  version?: string;
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
 * @param options The version.
 * @returns The scorer.
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
    context: ScorerContext,
  ) => FunctionScorerResult | Promise<FunctionScorerResult>,
  options: FunctionScorerOptions = {},
): Scorer {
  const version = options.version ?? `${name}@1`;
  return {
    name,
    version,
    score(unit, context) {
      // A synchronous function stays synchronous: no promise per unit.
      const result = fn(unit, context);
      return result instanceof Promise ? result.then(convert) : convert(result);
    },
  };

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
      if ("score" in result) return scoreFromVerdict(name, version, result);
    }
    throw new TypeError(
      `Function scorer "${name}" returned ${
        JSON.stringify(result) ?? typeof result
      }: ` +
        "expected a number, a boolean, a verdict, a Score or a batch",
    );
  }
}
