/**
 * The shapes of a suite's config, as written in its YAML file: the types
 * every config module reads, kept below them so that imports never circle.
 *
 * @module
 */

import type { Gate } from "../aggregate/gates.ts";
import type { Prices } from "../net/budget.ts";
import type { CaseRequirement } from "../aggregate/types.ts";
import type { LlmJudgeSettings } from "../scorers/llm_judge.ts";
import type { JudgeSettings } from "../scorers/rag_judges.ts";
import type {
  ContainsScorerOptions,
  TextScorerOptions,
} from "../scorers/builtin.ts";
import type {
  OneOfOptions,
  RegexScorerOptions,
  WordCountOptions,
} from "../scorers/text_checks.ts";
import type {
  JsonFieldsOptions,
  JsonMatchOptions,
  JsonScorerOptions,
} from "../scorers/json_scorers.ts";
import type { NumericScorerOptions } from "../scorers/numeric.ts";
import type { SimilarityScorerOptions } from "../scorers/similarity.ts";
import type { SetOverlapOptions } from "../scorers/set_overlap.ts";
import type {
  CostScorerOptions,
  LatencyScorerOptions,
} from "../scorers/run_facts.ts";
import type { ClassificationOptions } from "../scorers/classification.ts";
import type { SemanticSimilaritySettings } from "../scorers/semantic_similarity.ts";
import type {
  ToolCallF1Options,
  TrajectoryOptions,
} from "../scorers/trajectory.ts";
import type { HttpTargetSettings } from "../targets/http_target.ts";
import type { OpenAITargetSettings } from "../targets/openai_target.ts";

/**
 * The `subprocess` target: the system under test as a command.
 *
 * @example A script run for each case, for at most 30 seconds
 * ```ts
 * import { checkConfigText, type SubprocessTargetConfig } from "./mod.ts";
 * const yaml = "dataset: cases.jsonl\ntarget:\n  type: subprocess\n  cmd: python3 app.py\n  timeout: 30\nscorers: [{ type: exact_match }]\n";
 * const config = await checkConfigText(yaml, "suite.yaml");
 * const expected: SubprocessTargetConfig = { type: "subprocess", cmd: "python3 app.py", timeout: 30 };
 * if (JSON.stringify(config.target) !== JSON.stringify(expected)) throw new Error("unexpected");
 * ```
 */
export interface SubprocessTargetConfig {
  /** The kind of target. */
  type: "subprocess";
  /** The command, run via `sh -c` in the config file's folder. */
  cmd: string;
  /** Seconds a call may take. */
  timeout?: number;
  /**
   * The most bytes a call may print on stdout, and on stderr, each; more is
   * a target error naming the cap (default 16 MiB of stdout, 1 MiB of
   * stderr: a verbose program raises it).
   */
  max_output_bytes?: number;
  /**
   * What the command reads on stdin: `json`, the case as JSON (default), or
   * `text`, the case's input alone, as EvalCore's `shell` target sends it.
   */
  stdin?: "json" | "text";
}

/**
 * The `replay` target: outputs recorded in the dataset's `output` field.
 *
 * @example `target: { type: replay }` scores logs without calling anything
 * ```ts
 * import { buildTarget, type ReplayTargetConfig } from "./mod.ts";
 * const target: ReplayTargetConfig = { type: "replay" };
 * const built = await buildTarget({ dataset: "logs.jsonl", target, scorers: [{ type: "exact_match" }] }, ".");
 * const result = await built.call({ input: "2+2?", output: "4" }, {});
 * if (result.output !== "4") throw new Error("unexpected");
 * ```
 */
export interface ReplayTargetConfig {
  /** The kind of target. */
  type: "replay";
}

/**
 * The `openai` target: a chat completions API (OpenAI, Ollama, vLLM, llama.cpp).
 *
 * @example A model on loopback, with a system prompt
 * ```ts
 * import { buildTarget, type OpenAITargetConfig } from "./mod.ts";
 * await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () =>
 *   Response.json({ model: "m", choices: [{ message: { role: "assistant", content: "Paris" } }] }));
 * const target: OpenAITargetConfig = { type: "openai", base_url: `http://127.0.0.1:${server.addr.port}/v1`, model: "m", system: "Answer in one word." };
 * const built = await buildTarget({ dataset: "cases.jsonl", target, scorers: [{ type: "exact_match" }] }, ".");
 * const result = await built.call({ input: "capital of France?" }, {});
 * if (result.output !== "Paris") throw new Error("unexpected");
 * ```
 */
export interface OpenAITargetConfig
  extends OpenAITargetSettings, GenerationKeys {
  /** The kind of target. */
  type: "openai";
}

/**
 * The `http` target: any HTTP service.
 *
 * @example A service on loopback, its answer at a path in the JSON it returns
 * ```ts
 * import { buildTarget, type HttpTargetConfig } from "./mod.ts";
 * await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) =>
 *   Response.json({ answer: String((await request.json()).input).toUpperCase() }));
 * const target: HttpTargetConfig = { type: "http", url: `http://127.0.0.1:${server.addr.port}/ask`, output: "answer", timeout: 5 };
 * const built = await buildTarget({ dataset: "cases.jsonl", target, scorers: [{ type: "exact_match" }] }, ".");
 * const result = await built.call({ input: "hi" }, {});
 * if (result.output !== "HI") throw new Error("unexpected");
 * ```
 */
export interface HttpTargetConfig extends HttpTargetSettings {
  /** The kind of target. */
  type: "http";
}

/**
 * The `trace` target: each case's recorded agent trace, named by its
 * `trace` field relative to the dataset file.
 *
 * @example `target: { type: trace }` reads what the agent did
 * ```ts
 * import { buildTarget, type TraceTargetConfig } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/t.json`, '{"steps": [{"tool": "search_kb"}], "final_output": "30 days"}');
 * const target: TraceTargetConfig = { type: "trace" };
 * const built = await buildTarget({ dataset: "cases.jsonl", target, scorers: [{ type: "exact_match" }] }, dir);
 * const result = await built.call({ input: "", trace: "t.json" }, {});
 * await Deno.remove(dir, { recursive: true });
 * if (result.output !== "30 days" || result.tool_calls?.[0]?.name !== "search_kb") throw new Error("unexpected");
 * ```
 */
export interface TraceTargetConfig {
  /** The kind of target. */
  type: "trace";
  /**
   * USD per million tokens, at which the token usage found in each trace's
   * spans is priced as the unit's `target.cost_usd` (cached and
   * cache-written input tokens at their own prices, when given).
   */
  cost?: Prices;
}

/**
 * A target's configuration: its `type` says which.
 *
 * @example Narrow a config's target by its `type`
 * ```ts
 * import { checkConfigText, type TargetConfig } from "./mod.ts";
 * const yaml = "dataset: cases.jsonl\ntarget: { type: subprocess, cmd: python3 app.py }\nscorers: [{ type: exact_match }]\n";
 * const target: TargetConfig = (await checkConfigText(yaml, "suite.yaml")).target!;
 * if (target.type !== "subprocess" || target.cmd !== "python3 app.py") throw new Error("unexpected");
 * ```
 */
export type TargetConfig =
  | SubprocessTargetConfig
  | ReplayTargetConfig
  | OpenAITargetConfig
  | HttpTargetConfig
  | TraceTargetConfig;

/**
 * Common generation parameters, accepted beside `params` and merged into it.
 *
 * @example `temperature`, `max_tokens` and `stop` go into the request with `params`
 * ```ts
 * import { buildTarget, checkConfigText } from "./mod.ts";
 * let body: Record<string, unknown> = {};
 * await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
 *   body = await request.json();
 *   return Response.json({ model: "m", choices: [{ message: { role: "assistant", content: "4" } }] });
 * });
 * const yaml = `dataset: cases.jsonl\ntarget: { type: openai, base_url: "http://127.0.0.1:${server.addr.port}/v1", model: m,\n` +
 *   `  temperature: 0, max_tokens: 64, stop: ["\\n"], params: { seed: 7 } }\nscorers: [{ type: exact_match }]\n`;
 * await (await buildTarget(await checkConfigText(yaml, "suite.yaml"), ".")).call({ input: "2+2?" }, {});
 * if (body.temperature !== 0 || body.max_tokens !== 64 || JSON.stringify(body.stop) !== '["\\n"]' || body.seed !== 7) throw new Error("unexpected");
 * ```
 */
export interface GenerationKeys {
  /** Sampling temperature. */
  temperature?: number | undefined;
  /** The most tokens to generate. */
  max_tokens?: number | undefined;
  /** A seed, where the server supports one. */
  seed?: number | undefined;
  /** Nucleus sampling. */
  top_p?: number | undefined;
  /** Stop sequences. */
  stop?: string | string[] | undefined;
}

/**
 * A subprocess scorer's configuration (protocol v0).
 *
 * @example One long-lived scorer process, its metric named
 * ```ts
 * import { checkConfigText, type SubprocessScorerConfig } from "./mod.ts";
 * const yaml = "dataset: cases.jsonl\ntarget: { type: replay }\nscorers:\n" +
 *   "  - { type: subprocess, cmd: python3 scorers/faithfulness.py, name: faithful, timeout: 30, persistent: true }\n";
 * const [scorer] = (await checkConfigText(yaml, "suite.yaml")).scorers;
 * const expected: SubprocessScorerConfig = { type: "subprocess", cmd: "python3 scorers/faithfulness.py", name: "faithful", timeout: 30, persistent: true };
 * if (JSON.stringify(scorer) !== JSON.stringify(expected)) throw new Error("unexpected");
 * ```
 */
export interface SubprocessScorerConfig {
  /** The kind of scorer. */
  type: "subprocess";
  /** The command, run via `sh -c` in the config file's folder. */
  cmd: string;
  /** The metric name; by default the script's file name without extension. */
  name?: string;
  /** Seconds a run may take. */
  timeout?: number;
  /** The most stdout, and the most stderr, read from one run. */
  max_output_bytes?: number;
  /** One long-lived process, a payload per line (an extension of protocol v0). */
  persistent?: boolean;
}

/**
 * The options of each built-in scorer, by its config `type`: the options of
 * the function `mod.ts` exports for it, except that a `json` scorer's
 * `schema` may also be a file, relative to the config file's folder.
 *
 * @example A regex scorer's options
 * ```ts
 * import { type BuiltinScorerOptions, buildScorers } from "./mod.ts";
 * const options: BuiltinScorerOptions["regex"] = { pattern: "^\\d+$", name: "digits" };
 * const [built] = await buildScorers({ dataset: "cases.jsonl", target: { type: "replay" }, scorers: [{ type: "regex", ...options }] }, "suite.yaml", { cwd: "." });
 * const s = await built!.score({ example_id: "d#1", unit_id: "d#1", input: "q", output: "42" }, {});
 * if ("scores" in s || s.metric !== "digits" || s.value !== 1) throw new Error("unexpected");
 * ```
 */
export interface BuiltinScorerOptions {
  /** The options of `exactMatch`. */
  exact_match: TextScorerOptions;
  /** The options of `contains`. */
  contains: ContainsScorerOptions;
  /** The options of `notContains`. */
  not_contains: TextScorerOptions;
  /** The options of `startsWith`. */
  starts_with: TextScorerOptions;
  /** The options of `regexMatch`. */
  regex: RegexScorerOptions;
  /** The options of `wordCount`. */
  word_count: WordCountOptions;
  /** The options of `oneOf`. */
  one_of: OneOfOptions;
  /** The options of `jsonValid`; `schema` inline, or a JSON file's path. */
  json: Omit<JsonScorerOptions, "schema"> & {
    schema?: string | Record<string, unknown> | boolean;
  };
  /** The options of `jsonFields`. */
  fields: JsonFieldsOptions;
  /** The options of `jsonMatch`. */
  json_match: JsonMatchOptions;
  /** The options of `numericMatch`. */
  numeric: NumericScorerOptions;
  /** The options of `levenshtein`. */
  levenshtein: SimilarityScorerOptions;
  /** The options of `tokenF1`. */
  token_f1: Omit<SimilarityScorerOptions, "ignore_case" | "normalize">;
  /** The options of `rougeL`. */
  rouge_l: Omit<SimilarityScorerOptions, "ignore_case" | "normalize">;
  /** The options of `bleu`. */
  bleu: SimilarityScorerOptions;
  /** The options of `setOverlap`. */
  set_overlap: SetOverlapOptions;
  /** The options of `latencyLimit`. */
  latency: LatencyScorerOptions;
  /** The options of `costLimit`. */
  cost: CostScorerOptions;
  /** The options of `trajectory`. */
  trajectory: TrajectoryOptions;
  /** The options of `toolCallF1`. */
  tool_call_f1: ToolCallF1Options;
}

/**
 * A built-in scorer's configuration: its `type` and that type's options.
 *
 * @example `{ type: contains, name: mentions_paris, ignore_case: true }`
 * ```ts
 * import { type BuiltinScorerConfig, buildScorers } from "./mod.ts";
 * const scorer: BuiltinScorerConfig = { type: "contains", name: "mentions_paris", ignore_case: true };
 * const [built] = await buildScorers({ dataset: "cases.jsonl", target: { type: "replay" }, scorers: [scorer] }, "suite.yaml", { cwd: "." });
 * const s = await built!.score({ example_id: "d#1", unit_id: "d#1", input: "capital?", output: "PARIS, France", expected: "paris" }, {});
 * if ("scores" in s || s.metric !== "mentions_paris" || s.value !== 1) throw new Error("unexpected");
 * ```
 */
export type BuiltinScorerConfig = {
  [T in keyof BuiltinScorerOptions]: { type: T } & BuiltinScorerOptions[T];
}[keyof BuiltinScorerOptions];

/**
 * The `llm_judge` scorer's configuration.
 *
 * @example A judge on loopback whose 0.9 passes a threshold of 0.8
 * ```ts
 * import { buildScorers, type LlmJudgeConfig } from "./mod.ts";
 * await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () =>
 *   Response.json({ model: "judge", choices: [{ message: { role: "assistant", content: '{"score": 0.9}' } }] }));
 * const judge: LlmJudgeConfig = { type: "llm_judge", base_url: `http://127.0.0.1:${server.addr.port}/v1`, model: "judge", rubric: "Is it correct?", pass_threshold: 0.8, temperature: 0 };
 * const [built] = await buildScorers({ dataset: "cases.jsonl", target: { type: "replay" }, scorers: [judge] }, "suite.yaml", { cwd: "." });
 * const s = await built!.score({ example_id: "d#1", unit_id: "d#1", input: "2+2?", output: "4" }, {});
 * if ("scores" in s || s.value !== 0.9 || !s.passed) throw new Error("unexpected");
 * ```
 */
export interface LlmJudgeConfig extends LlmJudgeSettings, GenerationKeys {
  /** The kind of scorer. */
  type: "llm_judge";
}

/**
 * The configuration of a RAG or quality judge: `faithfulness`,
 * `answer_relevance`, `context_precision`, `context_recall` or
 * `correctness`, with a chat model's keys, `name` and `threshold`.
 *
 * @example A faithfulness judge on a local model
 * ```ts
 * import { checkConfigText, type JudgeScorerConfig } from "./mod.ts";
 * const yaml = "dataset: cases.jsonl\ntarget: { type: replay }\nscorers:\n" +
 *   "  - { type: faithfulness, model: llama3.1, base_url: 'http://127.0.0.1:11434/v1', threshold: 0.8 }\n";
 * const [judge] = (await checkConfigText(yaml, "suite.yaml")).scorers as JudgeScorerConfig[];
 * if (judge?.type !== "faithfulness" || judge.threshold !== 0.8) throw new Error("unexpected");
 * ```
 */
export interface JudgeScorerConfig extends JudgeSettings, GenerationKeys {
  /** The kind of judge. */
  type:
    | "faithfulness"
    | "answer_relevance"
    | "context_precision"
    | "context_recall"
    | "correctness";
}

/**
 * The `rubric` judge's configuration: a judge's keys, the rubric's file
 * (relative to the config file's folder) and the scale it grades on.
 *
 * @example A 1-to-5 rubric in a file beside the config
 * ```ts
 * import { checkConfigText, type RubricScorerConfig } from "./mod.ts";
 * const yaml = "dataset: cases.jsonl\ntarget: { type: replay }\nscorers:\n" +
 *   "  - { type: rubric, name: tone, file: rubrics/tone.md, scale: [1, 5], model: llama3.1 }\n";
 * const [judge] = (await checkConfigText(yaml, "suite.yaml")).scorers as RubricScorerConfig[];
 * if (judge?.file !== "rubrics/tone.md" || judge.scale?.join() !== "1,5") throw new Error("unexpected");
 * ```
 */
export interface RubricScorerConfig extends JudgeSettings, GenerationKeys {
  /** The kind of judge. */
  type: "rubric";
  /** The rubric's file, relative to the config file's folder; its text is the rubric. */
  file: string;
  /** The lowest and the highest grade; default `[0, 1]`. */
  scale?: number[];
}

/**
 * The `semantic_similarity` scorer's configuration.
 *
 * @example Embeddings from a server on loopback: the same text is 1
 * ```ts
 * import { buildScorers, type SemanticSimilarityConfig } from "./mod.ts";
 * await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
 *   const { input } = await request.json();
 *   return Response.json({ data: input.map((_: string, index: number) => ({ index, embedding: [0.6, 0.8] })) });
 * });
 * const scorer: SemanticSimilarityConfig = { type: "semantic_similarity", base_url: `http://127.0.0.1:${server.addr.port}/v1`, model: "e", threshold: 0.9 };
 * const [built] = await buildScorers({ dataset: "cases.jsonl", target: { type: "replay" }, scorers: [scorer] }, "suite.yaml", { cwd: "." });
 * const s = await built!.score({ example_id: "d#1", unit_id: "d#1", input: "q", output: "yes", expected: "yes" }, {});
 * if ("scores" in s || s.value !== 1 || !s.passed) throw new Error("unexpected");
 * ```
 */
export interface SemanticSimilarityConfig extends SemanticSimilaritySettings {
  /** The kind of scorer. */
  type: "semantic_similarity";
}

/**
 * A scorer's configuration: its `type` says which.
 *
 * @example A config's scorers, each narrowed by its `type`
 * ```ts
 * import { checkConfigText, type ScorerConfig } from "./mod.ts";
 * const yaml = "dataset: cases.jsonl\ntarget: { type: replay }\nscorers:\n  - { type: exact_match }\n  - { type: llm_judge, model: judge }\n";
 * const scorers: ScorerConfig[] = (await checkConfigText(yaml, "suite.yaml")).scorers;
 * const models = scorers.map((s) => s.type === "llm_judge" ? s.model : s.type);
 * if (models.join() !== "exact_match,judge") throw new Error("unexpected");
 * ```
 */
export type ScorerConfig =
  | SubprocessScorerConfig
  | BuiltinScorerConfig
  | LlmJudgeConfig
  | JudgeScorerConfig
  | RubricScorerConfig
  | SemanticSimilarityConfig;

/**
 * One of a suite's `datasets:`. Its examples' ids are `<name>#<id>`, or
 * `<path>#<id>` without a name, so that ids stay unique across datasets.
 *
 * @example Two datasets, one named
 * ```ts
 * import { checkConfigText, type DatasetConfig } from "./mod.ts";
 * const yaml = "datasets:\n  - { path: a.jsonl, name: easy }\n  - path: b.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n";
 * const datasets: DatasetConfig[] = (await checkConfigText(yaml, "suite.yaml")).datasets ?? [];
 * if (datasets[0]?.name !== "easy" || datasets[1]?.path !== "b.jsonl") throw new Error("unexpected");
 * ```
 */
export interface DatasetConfig {
  /** The file, relative to the config file's folder. */
  path: string;
  /** The name its example ids start with. */
  name?: string;
}

/**
 * A suite, as written in its YAML file.
 *
 * @example Three epochs of each case, and a gate on the pass rate
 * ```ts
 * import { checkConfigText, type SuiteConfig } from "./mod.ts";
 * const yaml = "dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n" +
 *   "epochs: 3\nconcurrency: 8\ngates:\n  exact_match: { min_pass_rate: 0.9 }\n";
 * const suite: SuiteConfig = await checkConfigText(yaml, "suite.yaml");
 * if (suite.epochs !== 3 || suite.gates?.exact_match?.min_pass_rate !== 0.9) throw new Error("unexpected");
 * ```
 */
export interface SuiteConfig {
  /**
   * The dataset's path, relative to the config file's folder (or `-`,
   * stdin); a config has this or `datasets`.
   */
  dataset?: string;
  /** Several datasets, read in order; a config has this or `dataset`. */
  datasets?: DatasetConfig[];
  /** The system under test; exactly one of `target` and `targets` is given. */
  target?: TargetConfig;
  /** Several systems under test, by name (`run --target NAME`, `--matrix a,b`). */
  targets?: Record<string, TargetConfig>;
  /** The targets a run compares when neither `--target` nor `--matrix` is given. */
  matrix?: string[];
  /** The scorers, in output order. */
  scorers: ScorerConfig[];
  /** Units in flight at once. */
  concurrency?: number;
  /**
   * How many times each example is run (units `<example_id>@<epoch>`), or
   * that and when a case passes: `{ n: 5, require: majority }`.
   */
  epochs?: number | EpochsConfig;
  /** The most child processes (targets and scorers together) at once. */
  max_processes?: number;
  /** The default scorer timeout, in seconds. */
  timeout?: number;
  /**
   * How the cache of model calls is used (`run --cache` overrides it):
   * `auto`, `replay`, `live` or `off`.
   */
  cache?: "auto" | "replay" | "live" | "off";
  /**
   * The most US dollars the run's priced calls (targets and judges with
   * `cost:`) may spend: once reached, no new call starts and the units not
   * run are blocked.
   */
  budget_usd?: number;
  /** Thresholds per metric; `run` exits 1 when one fails. */
  gates?: Record<string, Gate>;
  /**
   * Each unit is a prediction: the output's trimmed text (or, with
   * `field`, a field of its JSON) is the predicted label, `expected` the
   * true one. Adds the metric `classification`, whose Aggregate carries the
   * confusion matrix, accuracy and F1s.
   */
  classification?: boolean | Pick<ClassificationOptions, "field">;
}

/**
 * Epochs with a reducer: how many times each example runs, and when a case
 * passes (all, more than half, or at least one of its epochs pass).
 *
 * @example Five epochs, a case passes when most of them pass
 * ```ts
 * import { checkConfigText, type EpochsConfig } from "./mod.ts";
 * const yaml = "dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\nepochs: { n: 5, require: majority }\n";
 * const epochs = (await checkConfigText(yaml, "suite.yaml")).epochs as EpochsConfig;
 * if (epochs.n !== 5 || epochs.require !== "majority") throw new Error("unexpected");
 * ```
 */
export interface EpochsConfig {
  /** How many times each example is run. */
  n: number;
  /** When a case passes; by default `all`. */
  require?: CaseRequirement;
}
