/**
 * Targets, the systems under test, and the stage that calls them: a
 * TypeScript function, recorded outputs, a command, an OpenAI-compatible chat
 * API or any HTTP service, with a cache for the network ones, or recorded
 * agent traces.
 *
 * @example Call a function target for each example
 * ```ts
 * import { functionTarget, runTarget } from "./mod.ts";
 * const upper = functionTarget((c) => String(c.input).toUpperCase());
 * const [unit] = await Array.fromAsync(
 *   ReadableStream.from([{ example_id: "d#1", line: 1, case: { input: "hi" } }]).pipeThrough(runTarget(upper)),
 * );
 * if (unit?.output !== "HI") throw new Error("unexpected");
 * ```
 *
 * @module
 */

export type {
  RunTargetOptions,
  Target,
  TargetContext,
  TargetResult,
} from "./target.ts";
export { runTarget, runTargetBatches } from "./target.ts";
export { functionTarget } from "./function_target.ts";
export { replayTarget } from "./replay_target.ts";
export type { SubprocessTargetOptions } from "./subprocess_target.ts";
export { subprocessTarget, targetPayload } from "./subprocess_target.ts";
export type { CacheableTarget, OpenAITargetSettings } from "./openai_target.ts";
export { openaiTarget } from "./openai_target.ts";
export type { HttpTargetSettings } from "./http_target.ts";
export type { NetworkSettings } from "../net/network.ts";
export type {
  ChatClientOptions,
  ChatSettings,
  ReplyCache,
} from "../net/chat_client.ts";
export { ContentFilterError, ReplyError } from "../net/chat_client.ts";
export type { Prices } from "../net/budget.ts";
export { Budget, BudgetError, costOf } from "../net/budget.ts";
export type { FlowState, FlowWait } from "../net/flow.ts";
export { FlowWatch } from "../net/flow.ts";
export { httpTarget } from "./http_target.ts";
export type { CacheMode, TargetCacheOptions } from "./cache.ts";
export {
  CACHE_MODES,
  cachedTarget,
  cacheKey,
  CacheMissError,
  TargetCache,
} from "./cache.ts";
export type { CacheMergeResult } from "./cache_merge.ts";
export { mergeCaches } from "./cache_merge.ts";
export type { TraceTargetOptions } from "./trace_target.ts";
export { traceTarget } from "./trace_target.ts";
export type { Trace } from "./trace_format.ts";
export { parseTrace, TraceError, trajectoryJson } from "./trace_format.ts";
