/**
 * Aggregation: per metric, streaming, mergeable summaries of Scores, and the
 * gates checked on them.
 *
 * @module
 */

export * from "./aggregate.ts";
export * from "./gates.ts";
