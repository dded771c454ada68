/**
 * Comparing two runs case by case: paired differences per metric, and
 * whether a metric got significantly worse.
 *
 * @module
 */

export type { DiffLine, Pairing, Regression, StatusCounts } from "./diff.ts";
export { diffScores, pairingOf, significantlyWorse } from "./diff.ts";
