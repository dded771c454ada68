/**
 * Comparing two runs case by case: paired differences per metric.
 *
 * @module
 */

export * from "./diff.ts";
