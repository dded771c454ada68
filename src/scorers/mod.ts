/**
 * Scorers: built in, TypeScript functions, LLM judges and subprocess programs
 * (protocol v0), and the stage that runs them.
 *
 * @module
 */

export * from "./scorer.ts";
export * from "./builtin.ts";
export * from "./subprocess_scorer.ts";
export * from "./persistent_scorer.ts";
export * from "./llm_judge.ts";
export * from "./score_units.ts";
