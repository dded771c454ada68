/**
 * Scores: the type, its constructors, the rules every Score obeys, its NDJSON
 * line, and the validation stage.
 *
 * @module
 */

export * from "./score.ts";
export * from "./validate.ts";
