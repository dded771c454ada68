/**
 * The shapes of a suite's config, as written in its YAML file: the types
 * every config module reads, kept below them so that imports never circle.
 *
 * @module
 */

import type { Gate } from "../aggregate/gates.ts";
import type { LlmJudgeSettings } from "../scorers/llm_judge.ts";
import type { HttpTargetSettings } from "../targets/http_target.ts";
import type { OpenAITargetSettings } from "../targets/openai_target.ts";

/** The `subprocess` target: the system under test as a command. */
export interface SubprocessTargetConfig {
  /** The kind of target. */
  type: "subprocess";
  /** The command, run via `sh -c` in the config file's folder. */
  cmd: string;
  /** Seconds a call may take. */
  timeout?: number;
}

/** The `replay` target: outputs recorded in the dataset's `output` field. */
export interface ReplayTargetConfig {
  /** The kind of target. */
  type: "replay";
}

/** The `openai` target: a chat completions API (OpenAI, Ollama, vLLM, llama.cpp). */
export interface OpenAITargetConfig
  extends OpenAITargetSettings, GenerationKeys {
  /** The kind of target. */
  type: "openai";
}

/** The `http` target: any HTTP service. */
export interface HttpTargetConfig extends HttpTargetSettings {
  /** The kind of target. */
  type: "http";
}

/** A target's configuration. */
export type TargetConfig =
  | SubprocessTargetConfig
  | ReplayTargetConfig
  | OpenAITargetConfig
  | HttpTargetConfig;

/** Common generation parameters, accepted beside `params` and merged into it. */
export interface GenerationKeys {
  /** Sampling temperature. */
  temperature?: number;
  /** The most tokens to generate. */
  max_tokens?: number;
  /** A seed, where the server supports one. */
  seed?: number;
  /** Nucleus sampling. */
  top_p?: number;
  /** Stop sequences. */
  stop?: string | string[];
}

/** A subprocess scorer's configuration (protocol v0). */
export interface SubprocessScorerConfig {
  /** The kind of scorer. */
  type: "subprocess";
  /** The command, run via `sh -c` in the config file's folder. */
  cmd: string;
  /** The metric name; by default the script's file name without extension. */
  name?: string;
  /** Seconds a run may take. */
  timeout?: number;
  /** The most stdout read from one run. */
  max_output_bytes?: number;
  /** One long-lived process, a payload per line (an extension of protocol v0). */
  persistent?: boolean;
}

/** A built-in text scorer's configuration. */
export interface BuiltinScorerConfig {
  /** The built-in scorer. */
  type: "exact_match" | "contains";
  /** The metric name; by default the type. */
  name?: string;
  /** Compare without regard to letter case. */
  ignore_case?: boolean;
}

/** The `llm_judge` scorer's configuration. */
export interface LlmJudgeConfig extends LlmJudgeSettings, GenerationKeys {
  /** The kind of scorer. */
  type: "llm_judge";
}

/** A scorer's configuration. */
export type ScorerConfig =
  | SubprocessScorerConfig
  | BuiltinScorerConfig
  | LlmJudgeConfig;

/** A suite, as written in its YAML file. */
export interface SuiteConfig {
  /** The dataset's path, relative to the config file's folder. */
  dataset: string;
  /** The system under test. */
  target: TargetConfig;
  /** The scorers, in output order. */
  scorers: ScorerConfig[];
  /** Units in flight at once. */
  concurrency?: number;
  /** How many times each example is run (units `<example_id>@<epoch>`). */
  epochs?: number;
  /** The most child processes (targets and scorers together) at once. */
  max_processes?: number;
  /** The default scorer timeout, in seconds. */
  timeout?: number;
  /** Thresholds per metric; `run` exits 1 when one fails. */
  gates?: Record<string, Gate>;
}
