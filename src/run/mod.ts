/**
 * Running a suite: the stages assembled from a config, and resuming a run.
 *
 * @module
 */

export * from "./run_suite.ts";
export * from "./resume.ts";
export * from "./interrupt.ts";
