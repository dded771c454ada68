/**
 * Reports for people: summary tables, diffs, and Scores grouped by the
 * call they measured, with control characters in model output escaped.
 *
 * @module
 */

export { formatDiff, formatSummary } from "./summary.ts";
export type { UnitView } from "./view.ts";
export { escapeControl, groupByCall, renderByCall } from "./view.ts";
