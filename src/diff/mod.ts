/**
 * Comparing two runs case by case: paired differences per metric, and
 * whether a metric got significantly worse.
 *
 * @module
 */

export type {
  DiffLine,
  DiffOptions,
  PairedDelta,
  Pairing,
  Regression,
  StatusCounts,
} from "./diff.ts";
export {
  caseIdOf,
  casePasses,
  diffLabel,
  diffScores,
  pairingOf,
  significantlyWorse,
  unfitComparison,
} from "./diff.ts";
export type {
  CompareOptions,
  ComparisonLine,
  TargetDelta,
  TargetFigures,
} from "./compare.ts";
export { compareTargets, targetsOf } from "./compare.ts";
