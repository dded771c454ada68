/**
 * Reports for people: summary tables, diffs, and Scores grouped by the call
 * they measured.
 *
 * @module
 */

export * from "./summary.ts";
export * from "./view.ts";
