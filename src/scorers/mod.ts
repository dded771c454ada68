/**
 * Scorers: built in, TypeScript functions, LLM judges and programs in any
 * language that speak the subprocess scorer protocol v0, and the stage that
 * runs them over units.
 *
 * @example Score units with a built-in and a function scorer
 * ```ts
 * import { exactMatch, functionScorer, scoreUnits } from "./mod.ts";
 * const short = functionScorer("short", (unit) => (unit.output ?? "").length <= 10);
 * const units = [{ example_id: "d#1", unit_id: "d#1", input: "2+2?", output: "4", expected: "4" }];
 * const scores = await Array.fromAsync(ReadableStream.from(units).pipeThrough(scoreUnits([exactMatch(), short])));
 * if (scores.map((s) => s.metric).join() !== "exact_match,short") throw new Error("unexpected");
 * ```
 *
 * @module
 */

export type {
  FunctionScorerOptions,
  FunctionScorerResult,
  Scorer,
  ScorerContext,
  Verdict,
} from "./scorer.ts";
export {
  functionScorer,
  metricsOf,
  scoreFromVerdict,
  UNIT_RANGE,
  valueRangesOf,
} from "./scorer.ts";
export type { ContainsScorerOptions, TextScorerOptions } from "./builtin.ts";
export { contains, exactMatch, notContains, startsWith } from "./builtin.ts";
export type {
  OneOfOptions,
  RegexScorerOptions,
  WordCountOptions,
} from "./text_checks.ts";
export { oneOf, regexMatch, wordCount } from "./text_checks.ts";
export type {
  JsonFieldsOptions,
  JsonMatchOptions,
  JsonScorerOptions,
} from "./json_scorers.ts";
export { jsonFields, jsonMatch, jsonValid } from "./json_scorers.ts";
export type { NumericScorerOptions } from "./numeric.ts";
export { numericMatch } from "./numeric.ts";
export type { SimilarityScorerOptions } from "./similarity.ts";
export { bleu, levenshtein, rougeL, tokenF1 } from "./similarity.ts";
export type { SetOverlapOptions } from "./set_overlap.ts";
export { setOverlap } from "./set_overlap.ts";
export type { CostScorerOptions, LatencyScorerOptions } from "./run_facts.ts";
export { costLimit, latencyLimit } from "./run_facts.ts";
export type {
  EmbeddingCache,
  SemanticSimilarityOptions,
  SemanticSimilaritySettings,
} from "./semantic_similarity.ts";
export { semanticSimilarity } from "./semantic_similarity.ts";
export type {
  Embeddings,
  EmbeddingsClient,
  EmbeddingSettings,
} from "../net/embeddings_client.ts";
export type { ClassificationOptions } from "./classification.ts";
export { classification } from "./classification.ts";
export type {
  ArgumentMatcher,
  ExpectedToolCall,
  ToolCallF1Options,
  TrajectoryOptions,
  TrajectoryRule,
} from "./trajectory.ts";
export { toolCallF1, trajectory, TrajectoryOptionError } from "./trajectory.ts";
export type { SubprocessScorerOptions } from "./subprocess_scorer.ts";
export {
  parseVerdict,
  scorerPayload,
  subprocessScorer,
  SubprocessScorerError,
} from "./subprocess_scorer.ts";
export type { PersistentScorerOptions } from "./persistent_scorer.ts";
export { persistentScorer } from "./persistent_scorer.ts";
export type { LlmJudgeSettings } from "./llm_judge.ts";
export type { ChatSettings } from "../net/chat_client.ts";
export { llmJudge } from "./llm_judge.ts";
export type {
  JudgeAbstention,
  JudgeReading,
  JudgeRecipe,
} from "./llm_judge.ts";
export { JudgeReplyError } from "./llm_judge.ts";
export type { JudgeSettings, RubricJudgeSettings } from "./rag_judges.ts";
export {
  answerRelevanceJudge,
  contextPrecisionJudge,
  contextRecallJudge,
  correctnessJudge,
  faithfulnessJudge,
  rubricJudge,
} from "./rag_judges.ts";
export type { DuplicateScorerName } from "./scorer_names.ts";
export { duplicateScorerName } from "./scorer_names.ts";
export type { ScoreUnitsOptions } from "./score_units.ts";
export { scoreUnitBatches, scoreUnits } from "./score_units.ts";
