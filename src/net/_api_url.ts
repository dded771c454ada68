/**
 * Where an OpenAI-compatible API's endpoint is, from its `base_url`, and how
 * that API takes its key.
 *
 * @module
 */

import { keyHeaderName } from "./_settings_checks.ts";

/**
 * The URL of `endpoint` (`chat/completions`, `embeddings`) under `base`, its
 * query and fragment kept after the path: Azure OpenAI's base URL names its
 * API version in the query (`…/deployments/gpt-4o?api-version=2024-10-21`),
 * which the path joined at the end made part of the query.
 *
 * @param base The base URL, as the OpenAI SDKs take it.
 * @param endpoint The endpoint's path under it, without a leading `/`.
 * @returns The endpoint's URL.
 *
 * @example
 * ```ts
 * import { apiUrl } from "./_api_url.ts";
 * const url = apiUrl("https://r.openai.azure.com/openai/deployments/d/?api-version=1", "chat/completions");
 * if (url !== "https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=1") throw new Error(url);
 * ```
 */
export function apiUrl(base: string, endpoint: string): string {
  const at = base.search(/[?#]/);
  const path = at < 0 ? base : base.slice(0, at);
  const rest = at < 0 ? "" : base.slice(at);
  return `${path.replace(/\/+$/, "")}/${endpoint}${rest}`;
}

/**
 * The header that carries an API key to `url`, and its value: Azure
 * OpenAI's `api-key: <key>`, else `authorization: Bearer <key>`
 * ({@linkcode keyHeaderName} says which).
 *
 * @param url The endpoint's URL.
 * @param key The key.
 * @returns The header's name and value.
 */
export function keyHeader(url: string, key: string): [string, string] {
  return keyHeaderName(url) === "api-key"
    ? ["api-key", key]
    : ["authorization", `Bearer ${key}`];
}
