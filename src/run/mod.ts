/**
 * Running a suite: the stages assembled from a config, end to end, and
 * resuming a run that was interrupted.
 *
 * @module
 */

export type {
  CacheCounts,
  RunSuiteOptions,
  RunSummary,
  SuiteFiles,
} from "./run_suite.ts";
export { runSuite } from "./run_suite.ts";
export type {
  EarlierSpend,
  PrepareResumeOptions,
  ResumePlan,
  RunMeta,
  RunSettings,
} from "./resume.ts";
export {
  dropTornLine,
  metricsScored,
  prepareResume,
  readMeta,
  ResumeError,
  withUnitsSpend,
} from "./resume.ts";
export type { PreviousUnitsOptions } from "./previous_units.ts";
export { previousUnits } from "./previous_units.ts";
export type {
  Interrupt,
  InterruptOptions,
  InterruptSignal,
} from "./interrupt.ts";
export { onInterrupt, signalExitCode } from "./interrupt.ts";
export type { SelectionOptions } from "./select.ts";
export {
  drawSample,
  parseShard,
  Selection,
  SHARD_INDEX_VARIABLES,
  ShardError,
  shardOf,
} from "./select.ts";
export type {
  BaselineComparison,
  BaselineFile,
  BaselineScore,
  BaselineUnit,
  CaseChange,
  EvaluatorChange,
} from "./baseline.ts";
export {
  BaselineCollector,
  baselinePath,
  baselineSettings,
  baselineText,
  casePasses,
  casesKept,
  compareWithBaseline,
  FLAKY_ALPHA,
  readBaseline,
  writeBaseline,
} from "./baseline.ts";
export type { MatrixTarget } from "./matrix.ts";
export { matrixUnitId, runMatrixBatches } from "./matrix.ts";
export type {
  CacheCoverage,
  PlanSuiteOptions,
  SuitePlan,
} from "./plan_suite.ts";
export { formatPlan, planSuite } from "./plan_suite.ts";
export type { InvalidCase } from "../base/place.ts";
export { invalidCaseText } from "../base/place.ts";
export type { RunProgress } from "./progress.ts";
export type { ProgressLineOptions, ProgressNumbers } from "./progress_line.ts";
export { ProgressLine } from "./progress_line.ts";
