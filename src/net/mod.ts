/**
 * The network under every HTTP target and the judge: rate limits, retries, and
 * a chat client.
 *
 * @module
 */

export * from "./flow.ts";
export * from "./network.ts";
export * from "./chat_client.ts";
