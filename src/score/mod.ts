/**
 * Scores: the type, its constructors, the rules every Score obeys, its
 * NDJSON line, and the validation stage.
 *
 * @example Only a scored and valid Score carries a number
 * ```ts
 * import { aggregatable, errored, scored } from "./mod.ts";
 * const ok = scored("exact_match", 1);
 * const failed = errored("exact_match", "scorer error: exit status 1");
 * if (!aggregatable(ok) || failed.value !== null) throw new Error("unexpected");
 * ```
 *
 * @module
 */

export type {
  Diagnostic,
  DiagnosticSeverity,
  Identity,
  Score,
  ScoreBatch,
  ScoreStatus,
  ScoreValidity,
  UnitScore,
} from "./types.ts";
export {
  SCORE_STATUSES,
  SCORE_VALIDITIES,
  ScoreError,
  ScoreSyntaxError,
} from "./types.ts";
export type { FailureOptions, ScoredOptions, ScoreOptions } from "./make.ts";
export {
  blocked,
  errored,
  nonEvaluable,
  notApplicable,
  scoreBatch,
  scored,
  skipped,
} from "./make.ts";
export { codeOfReason, DIAGNOSTIC_CODES } from "./codes.ts";
export {
  aggregatable,
  isScoreBatch,
  makeScore,
  parseScore,
  parseScoreFor,
} from "./rules.ts";
export { scoreLine } from "./line.ts";
export {
  validateScore,
  validateScoreBatches,
  validateScores,
} from "./validate.ts";
