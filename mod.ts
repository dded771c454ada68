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

export * from "./src/score/score.ts";
export * from "./src/dataset/case.ts";
export * from "./src/dataset/unit.ts";
export * from "./src/aggregate/aggregate.ts";
export * from "./src/scorers/scorer.ts";
export * from "./src/scorers/subprocess_scorer.ts";
export * from "./src/scorers/builtin.ts";
export * from "./src/scorers/score_units.ts";
export * from "./src/score/validate.ts";
export * from "./src/targets/target.ts";
export * from "./src/targets/function_target.ts";
export * from "./src/targets/replay_target.ts";
export * from "./src/targets/subprocess_target.ts";
export * from "./src/dataset/dataset.ts";
export * from "./src/io/line_stream.ts";
export * from "./src/io/ndjson.ts";
export * from "./src/io/concurrent_map.ts";
export * from "./src/config/config.ts";
export * from "./src/config/schema.ts";
export * from "./src/run/run_suite.ts";
export * from "./src/report/summary.ts";
export * from "./src/record/run_record.ts";
export * from "./src/aggregate/gates.ts";
export * from "./src/diff/diff.ts";
export * from "./src/report/view.ts";
export * from "./src/record/scores_file.ts";
export * from "./src/net/flow.ts";
export * from "./src/targets/cache.ts";
export * from "./src/targets/openai_target.ts";
export * from "./src/targets/http_target.ts";
export * from "./src/scorers/llm_judge.ts";
export * from "./src/net/network.ts";
export * from "./src/net/chat_client.ts";
export * from "./src/run/resume.ts";
export * from "./src/scorers/persistent_scorer.ts";
