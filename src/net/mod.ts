/**
 * The network under every HTTP target and the judge: rate limits, retries
 * with budgets, and a chat completions client. Internal to evalpipe; its
 * parts are exported for the targets and scorers layers.
 *
 * @module
 */

export type {
  FlowState,
  FlowWait,
  RateLimiterOptions,
  RetryOptions,
} from "./flow.ts";
export {
  FlowWatch,
  parseRetryAfter,
  RateLimiter,
  RetryableError,
  RetryBudget,
  sleep,
  withRetries,
} from "./flow.ts";
export type { NetworkSettings } from "./network.ts";
export { NetworkFlow, withoutFlow } from "./network.ts";
export type {
  ChatClientOptions,
  ChatMessage,
  ChatReply,
  ChatSettings,
  ReplyCache,
} from "./chat_client.ts";
export type { Prices } from "./budget.ts";
export { Budget, BudgetError, costOf, roundUsd, tokensOf } from "./budget.ts";
export { ChatClient, ContentFilterError, ReplyError } from "./chat_client.ts";
export type { Embeddings, EmbeddingSettings } from "./embeddings_client.ts";
export { EmbeddingAnswerError, EmbeddingsClient } from "./embeddings_client.ts";
