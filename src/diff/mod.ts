/**
 * Comparing two runs case by case: paired differences per metric, and
 * whether a metric got significantly worse.
 *
 * @module
 */

export type { DiffLine, Regression, StatusCounts } from "./diff.ts";
export { diffScores, significantlyWorse } from "./diff.ts";
