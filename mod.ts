/**
 * evalpipe: evaluate LLM systems as streams of Web Streams stages.
 *
 * load a dataset → call the target → run scorers → validate every Score →
 * aggregate. Every stage is exported here and composes with `pipeThrough`.
 *
 * @example Score a few recorded outputs with a built-in and a function scorer
 * ```ts
 * import { aggregate, exactMatch, functionScorer, replayTarget, runTarget, scoreUnits } from "./mod.ts";
 *
 * const examples = [
 *   { example_id: "demo#1", line: 1, case: { input: "2+2?", expected: "4", output: "4" } },
 *   { example_id: "demo#2", line: 2, case: { input: "capital of France?", expected: "Paris", output: "Lyon" } },
 * ];
 * const short = functionScorer("short", (unit) => (unit.output ?? "").length <= 10);
 * const [exact] = await Array.fromAsync(
 *   ReadableStream.from(examples)
 *     .pipeThrough(runTarget(replayTarget()))
 *     .pipeThrough(scoreUnits([exactMatch(), short]))
 *     .pipeThrough(aggregate()),
 * );
 * if (exact?.metric !== "exact_match" || exact.mean !== 0.5) throw new Error("unexpected");
 * ```
 *
 * @module
 */

export * from "./src/score/mod.ts";
export * from "./src/dataset/mod.ts";
export * from "./src/io/mod.ts";
export * from "./src/targets/mod.ts";
export * from "./src/scorers/mod.ts";
export * from "./src/aggregate/mod.ts";
export * from "./src/diff/mod.ts";
export * from "./src/config/mod.ts";
export * from "./src/record/mod.ts";
export * from "./src/evalglass/mod.ts";
export * from "./src/run/mod.ts";
export * from "./src/report/mod.ts";
export * from "./src/base/mod.ts";
