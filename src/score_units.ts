/**
 * The scoring stage: every scorer over every unit, failures turned into
 * `error` Scores, identity stamped, every Score validated.
 *
 * @module
 */

import { concurrentFlatMap } from "./concurrent_map.ts";
import { errored, isScoreBatch, parseScore, type Score } from "./score.ts";
import type { Scorer } from "./scorer.ts";
import type { Unit } from "./unit.ts";

/** Options of {@linkcode scoreUnits}. */
export interface ScoreUnitsOptions {
  /**
   * How many units are scored at once (each runs its scorers side by side).
   * @default {4}
   */
  concurrency?: number;
  /**
   * Aborting stops the scorers that are running (their Scores become errors).
   * @default {undefined}
   */
  signal?: AbortSignal;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** What a failed Score of a scorer looks like: one per metric it declares. */
function failure(scorer: Scorer, reason: string, unit: Unit): Score[] {
  const metrics = scorer.metrics ?? [scorer.name];
  return metrics.map((metric) =>
    errored(metric, reason, {
      evaluator_version: scorer.version,
      example_id: unit.example_id,
      unit_id: unit.unit_id,
    })
  );
}

/**
 * Checks one candidate Score from a scorer against the Score rules and the
 * scorer's declared metrics, and stamps the unit's identity on it. A
 * violation becomes an `error` Score with the violation as its reason: never
 * a crash, never a 0.0.
 *
 * @param candidate What the scorer returned.
 * @param scorer The scorer.
 * @param unit The unit scored.
 * @returns A valid Score, keys in canonical order.
 */
export function checkScore(
  candidate: unknown,
  scorer: Scorer,
  unit: Unit,
): Score {
  const declared = scorer.metrics ?? [scorer.name];
  let score: Score;
  try {
    score = parseScore(
      typeof candidate === "object" && candidate !== null
        ? { ...candidate, example_id: unit.example_id, unit_id: unit.unit_id }
        : candidate,
    );
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    return failure(
      scorer,
      `scorer error: invalid Score: ${error.message}`,
      unit,
    )[0]!;
  }
  if (!declared.includes(score.metric)) {
    return failure(
      scorer,
      `scorer error: Score for undeclared metric ${
        JSON.stringify(score.metric)
      }`,
      unit,
    )[0]!;
  }
  return score;
}

async function runScorer(
  scorer: Scorer,
  unit: Unit,
  signal?: AbortSignal,
): Promise<Score[]> {
  if (unit.invalid !== undefined) {
    return failure(scorer, `invalid case: ${unit.invalid}`, unit);
  }
  const targetError = unit.target?.error;
  if (targetError !== undefined) {
    return failure(scorer, `target error: ${targetError}`, unit);
  }
  let result: unknown;
  try {
    result = await scorer.score(unit, signal !== undefined ? { signal } : {});
  } catch (error) {
    // Any throw is the scorer's failure, and failures are data.
    return failure(scorer, `scorer error: ${messageOf(error)}`, unit);
  }
  const candidates = isScoreBatch(result) ? result.scores : [result];
  return candidates.map((c) => checkScore(c, scorer, unit));
}

/**
 * Scores each unit with every scorer, emitting Scores with units in input
 * order and scorers in the order given. A unit whose target failed gets
 * `target error: …` Scores and a malformed record `invalid case: …` Scores,
 * without running the scorers; a scorer that throws gives
 * `scorer error: …`. Each Score is validated and carries the unit's
 * identity.
 *
 * @param scorers The scorers, in output order.
 * @param options Concurrency and abort signal.
 * @returns The stage.
 *
 * @example
 * ```ts
 * import { scoreUnits } from "./score_units.ts";
 * import { exactMatch } from "./builtin_scorers.ts";
 * const units = [{ example_id: "d#1", unit_id: "d#1", input: "2+2", output: "4", expected: "4" }];
 * const [s] = await Array.fromAsync(ReadableStream.from(units).pipeThrough(scoreUnits([exactMatch()])));
 * if (s?.value !== 1 || s.unit_id !== "d#1") throw new Error("unexpected");
 * ```
 */
export function scoreUnits(
  scorers: readonly Scorer[],
  options: ScoreUnitsOptions = {},
): TransformStream<Unit, Score> {
  const signal = options.signal;
  return concurrentFlatMap(
    async (unit: Unit) => {
      const perScorer = await Promise.all(
        scorers.map((s) => runScorer(s, unit, signal)),
      );
      return perScorer.flat();
    },
    { concurrency: options.concurrency ?? 4 },
  );
}
