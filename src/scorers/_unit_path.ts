// A scorer's own path to a unit's final Scores, for scorers of this package
// whose Scores need no second look: `scoreUnits` takes it when a scorer has
// one, instead of `score` followed by `checkScores`.

import type { Score, ScoreStatus, ScoreValidity } from "../score/mod.ts";
import type { Unit } from "../dataset/unit.ts";
import type { Scorer, ScorerContext } from "./scorer.ts";
import type { Later } from "../io/_later.ts";

/** The key of a scorer's unit path; not exported from any `mod.ts`. */
export const UNIT_PATH: unique symbol = Symbol("evalpipe.unitPath");

/** What a failure of `scorer` on `unit` becomes: its error (or blocked) Scores. */
export type Failure = (scorer: Scorer, error: unknown, unit: Unit) => Score[];

/** A scorer with a unit path. */
export interface UnitPath {
  /**
   * Scores `unit` as `scoreUnits` would from `score` and `checkScores`: one
   * valid Score per declared metric, in order, carrying the unit's ids; or
   * `undefined`, when this unit is for that ordinary path to score. Never
   * rejects: a failure resolves to `failed(this, error, unit)`.
   */
  [UNIT_PATH](
    unit: Unit,
    context: ScorerContext,
    failed: Failure,
  ): Score[] | Promise<Score[]> | undefined;
}

/**
 * Whether a unit path may serve `scorer`, the object it was called on: only
 * one that scores as the scorer that made the path, with that scorer's
 * `score`, name and version and no metrics of its own. A script's scorer
 * spread from it (`{...exactMatch(), score}`, a new name) carries the path
 * too, and is scored by its own `score` and `checkScores`.
 *
 * @param scorer The scorer the path was called on.
 * @param score The `score` of the scorer that made the path.
 * @param name Its name.
 * @param version Its version.
 * @returns Whether the path serves it.
 */
export function scoresAsMade(
  scorer: Scorer,
  score: Scorer["score"],
  name: string,
  version: string,
): boolean {
  return scorer.score === score && scorer.name === name &&
    scorer.version === version && scorer.metrics === undefined;
}

/** The scorer's unit path, if it has one. */
export function unitPathOf(
  scorer: Scorer,
): UnitPath[typeof UNIT_PATH] | undefined {
  return (scorer as Partial<UnitPath>)[UNIT_PATH];
}

/** The key of a scorer's pooled unit path; not exported from any `mod.ts`. */
export const UNIT_LATER: unique symbol = Symbol("evalpipe.unitLater");

/** A scorer whose unit path can settle without a promise. */
export interface UnitLater {
  /**
   * What {@linkcode UnitPath}'s path gives, for a caller that is the pool of
   * a concurrent stage (`scoreUnits`, `scoreUnitBatches` with this scorer
   * alone, for a unit without a target name, a target error or `invalid`):
   * the Scores now, or a promise, or a `Later` the scorer settles with them;
   * or `undefined`, when the unit is for the ordinary path to score.
   */
  [UNIT_LATER](
    unit: Unit,
    context: ScorerContext,
    failed: Failure,
  ): Score[] | Promise<Score[]> | Later<Score[]> | undefined;
}

/** The scorer's pooled unit path, if it has one. */
export function unitLaterOf(
  scorer: Scorer,
): UnitLater[typeof UNIT_LATER] | undefined {
  return (scorer as Partial<UnitLater>)[UNIT_LATER];
}

/** The key of a scorer's "no more cases" notice; not exported from any `mod.ts`. */
export const END_OF_CASES: unique symbol = Symbol("evalpipe.endOfCases");

/** A scorer that can let go of its input early. */
export interface CasesEnd {
  /**
   * Told once no case will come any more (every unit has started): a
   * persistent scorer closes its process's stdin once the payloads asked
   * for are written, so that the process ends beside the last verdicts
   * rather than after them. `close` is still called.
   */
  [END_OF_CASES](): void;
}

/** Tells `scorer` that no case will come any more, if it wants to know. */
export function endOfCases(scorer: Scorer): void {
  (scorer as Partial<CasesEnd>)[END_OF_CASES]?.();
}

/**
 * A Score without diagnostics or evidence, with `unit`'s ids in their place,
 * built as `parseScoreFor` would build it: one literal of one shape per kind
 * (with `passed` or without, with a reason or without), keys in canonical
 * order. For Scores whose every rule was checked before (a canonical one, a
 * checked verdict's); it checks nothing.
 */
export function unitScore(
  metric: string,
  status: ScoreStatus,
  validity: ScoreValidity,
  value: number | null,
  passed: boolean | undefined,
  reason: string | undefined,
  evaluator_version: string,
  unit: Unit,
): Score {
  const { example_id, unit_id } = unit;
  if (passed === undefined) {
    return reason === undefined
      ? {
        metric,
        status,
        validity,
        value,
        evaluator_version,
        example_id,
        unit_id,
        diagnostics: [],
        evidence_refs: [],
      }
      : {
        metric,
        status,
        validity,
        value,
        reason,
        evaluator_version,
        example_id,
        unit_id,
        diagnostics: [],
        evidence_refs: [],
      };
  }
  return reason === undefined
    ? {
      metric,
      status,
      validity,
      value,
      passed,
      evaluator_version,
      example_id,
      unit_id,
      diagnostics: [],
      evidence_refs: [],
    }
    : {
      metric,
      status,
      validity,
      value,
      passed,
      reason,
      evaluator_version,
      example_id,
      unit_id,
      diagnostics: [],
      evidence_refs: [],
    };
}
