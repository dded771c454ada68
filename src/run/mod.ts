/**
 * Running a suite: the stages assembled from a config, end to end, and
 * resuming a run that was interrupted.
 *
 * @module
 */

export type { RunSuiteOptions, RunSummary, SuiteFiles } from "./run_suite.ts";
export { runSuite } from "./run_suite.ts";
export type { ResumePlan, RunMeta, RunSettings } from "./resume.ts";
export { dropTornLine, prepareResume, ResumeError } from "./resume.ts";
export type {
  Interrupt,
  InterruptOptions,
  InterruptSignal,
} from "./interrupt.ts";
export { onInterrupt, signalExitCode } from "./interrupt.ts";
export type { RunProgress } from "./progress.ts";
