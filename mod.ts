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

export * from "./src/score.ts";
export * from "./src/case.ts";
export * from "./src/unit.ts";
export * from "./src/aggregate.ts";
export * from "./src/scorer.ts";
export * from "./src/subprocess_scorer.ts";
export * from "./src/builtin_scorers.ts";
export * from "./src/score_units.ts";
export * from "./src/validate.ts";
export * from "./src/target.ts";
export * from "./src/targets/function_target.ts";
export * from "./src/targets/replay_target.ts";
export * from "./src/targets/subprocess_target.ts";
export * from "./src/dataset.ts";
export * from "./src/line_stream.ts";
export * from "./src/ndjson.ts";
export * from "./src/concurrent_map.ts";
export * from "./src/config.ts";
export * from "./src/config_schema.ts";
export * from "./src/run.ts";
export * from "./src/report.ts";
export * from "./src/run_record.ts";
export * from "./src/gates.ts";
export * from "./src/diff.ts";
export * from "./src/view.ts";
export * from "./src/scores_file.ts";
export * from "./src/flow.ts";
export * from "./src/cache.ts";
export * from "./src/targets/openai_target.ts";
export * from "./src/targets/http_target.ts";
export * from "./src/scorers/llm_judge.ts";
export * from "./src/network.ts";
export * from "./src/chat_client.ts";
export * from "./src/resume.ts";
export * from "./src/persistent_scorer.ts";
