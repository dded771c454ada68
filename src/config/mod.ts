/**
 * Suite configs: the YAML file naming a dataset, a target and scorers,
 * checked (unknown keys and wrong types name the key, the file and the line)
 * and built into the parts a run uses.
 *
 * @example Check a suite's YAML
 * ```ts
 * import { checkConfigText } from "./mod.ts";
 * const config = await checkConfigText(
 *   "dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
 *   "suite.yaml",
 * );
 * if (config.scorers[0]?.type !== "exact_match") throw new Error("unexpected");
 * ```
 *
 * @module
 */

export type {
  BuiltinScorerConfig,
  BuiltinScorerOptions,
  DatasetConfig,
  EpochsConfig,
  GenerationKeys,
  HttpTargetConfig,
  JudgeScorerConfig,
  LlmJudgeConfig,
  OpenAITargetConfig,
  ReplayTargetConfig,
  RubricScorerConfig,
  ScorerConfig,
  SemanticSimilarityConfig,
  SubprocessScorerConfig,
  SubprocessTargetConfig,
  SuiteConfig,
  TargetConfig,
} from "./types.ts";
export type { TraceTargetConfig } from "./types.ts";
export type { BuildOptions, CallOptions } from "./config.ts";
export {
  buildScorers,
  buildTarget,
  buildTargetConfig,
  checkCommands,
  checkConfigText,
  ConfigError,
  loadConfig,
  traceDirOf,
} from "./config.ts";
export { datasetName, datasetsOf } from "./_datasets.ts";
export type { NamedTarget, TargetChoice } from "./targets.ts";
export { epochsOf, isNetworkTarget, selectTargets } from "./targets.ts";
export type { EnvTarget } from "./env_file.ts";
export { loadEnvFile } from "./env_file.ts";
