/**
 * Targets, the systems under test, and the stage that calls them.
 *
 * @module
 */

export * from "./target.ts";
export * from "./function_target.ts";
export * from "./replay_target.ts";
export * from "./subprocess_target.ts";
export * from "./openai_target.ts";
export * from "./http_target.ts";
export * from "./cache.ts";
