/**
 * Comparing two runs case by case: paired differences per metric,
 * whether a metric got significantly worse, and which cases were edited
 * between the runs under the same ids.
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
export type {
  CaseField,
  CasesChanged,
  CasesChangedOptions,
  KeptCase,
} from "./cases.ts";
export { casesChanged, casesChangedText } from "./cases.ts";
