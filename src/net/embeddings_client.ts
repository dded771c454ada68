/**
 * A client of the OpenAI embeddings API (`POST {base_url}/embeddings`), as
 * OpenAI, Ollama, vLLM, llama.cpp and text-embeddings-inference servers speak
 * it, with the same settings, flow control and secrets rules as the chat
 * client.
 *
 * @module
 */

import { answeredError, parseJsonAnswer, send } from "./_http.ts";
import { NetworkFlow, type NetworkSettings, withoutFlow } from "./network.ts";
import {
  type TemplateError,
  urlSecrets,
  withoutCredentials,
} from "./template.ts";
import { apiUrl } from "./_api_url.ts";
import { apiHeaders } from "./_api_headers.ts";

/**
 * The settings of an embeddings client (config keys): where the API is, which
 * model, the name of the variable holding the key, more headers, and flow
 * control.
 *
 * @example A local server, a header whose value comes from the environment
 * ```ts
 * import { type EmbeddingSettings, semanticSimilarity } from "../scorers/mod.ts";
 * const settings: EmbeddingSettings = {
 *   base_url: "http://127.0.0.1:11434/v1",
 *   model: "nomic-embed-text",
 *   headers: { "x-team": "${TEAM}" },
 *   rate_limit: 600,
 * };
 * const scorer = semanticSimilarity(settings, { env: (name) => name === "TEAM" ? "search" : undefined });
 * if (scorer.name !== "semantic_similarity") throw new Error("unexpected");
 * ```
 */
export interface EmbeddingSettings extends NetworkSettings {
  /** The API's base URL, as the OpenAI SDKs take it. Default `https://api.openai.com/v1`. */
  base_url?: string | undefined;
  /** The embedding model. */
  model: string;
  /** The name of the environment variable that holds the API key, never the key. */
  api_key_env?: string | undefined;
  /** More headers; values may name environment variables as `${NAME}`. */
  headers?: Record<string, string> | undefined;
}

/**
 * The vectors of some texts, and what to record of the call.
 *
 * @example One vector per text, in the texts' order
 * ```ts
 * import { type Embeddings, EmbeddingsClient } from "./mod.ts";
 * await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () =>
 *   Response.json({ model: "e", data: [{ index: 1, embedding: [0, 1] }, { index: 0, embedding: [1, 0] }] }));
 * const client = new EmbeddingsClient({ base_url: `http://127.0.0.1:${server.addr.port}/v1`, model: "e" });
 * const answer: Embeddings = await client.embed(["first", "second"]);
 * if (answer.vectors[0]?.join() !== "1,0" || answer.info.attempts !== 1) throw new Error("unexpected");
 * ```
 */
export interface Embeddings {
  /** One vector per text, in the texts' order. */
  vectors: number[][];
  /** The model answered, the token usage, the attempts. */
  info: Record<string, unknown>;
}

/**
 * The endpoint answered, but not with usable vectors: not JSON, no list of
 * numbers per text, vectors of different lengths. Calling again would not
 * help, so it is not retried.
 */
export class EmbeddingAnswerError extends Error {
  /**
   * Creates the instance.
   *
   * @param message What is wrong with the answer.
   */
  constructor(message: string) {
    super(message);
    this.name = "EmbeddingAnswerError";
  }
}

/**
 * Calls `{base_url}/embeddings`, with the settings' flow control, and hides
 * every secret (the key, `${NAME}` header values, a URL password) in its
 * messages.
 *
 * @example The request a text becomes holds no secret: it can key a cache
 * ```ts
 * import { EmbeddingsClient } from "./mod.ts";
 * const client = new EmbeddingsClient({ model: "text-embedding-3-small", api_key_env: "KEY" }, () => "sk-secret");
 * const body = JSON.stringify([client.identity, client.body(["hello"])]);
 * if (body.includes("sk-secret") || client.url !== "https://api.openai.com/v1/embeddings") throw new Error(body);
 * ```
 */
export class EmbeddingsClient {
  /** The embeddings URL. */
  readonly url: string;
  /** The URL as messages and records show it: without user name and password. */
  readonly shownUrl: string;
  /** The settings it was made with. */
  readonly settings: EmbeddingSettings;
  /**
   * What identifies the client for a cache: the URL, the model and the
   * headers as written (secrets only as `${NAME}`), without flow control.
   */
  readonly identity: Record<string, unknown>;
  #headers: Record<string, string>;
  #secrets: string[];
  #flow: NetworkFlow;
  /** A variable the settings name is not set (with `optionalKey`): every call fails. */
  #missingKey: TemplateError | undefined;

  /**
   * Creates the client; reads the API key and the headers' variables from
   * the environment now.
   *
   * @param settings The settings.
   * @param env Reads an environment variable.
   * @param options With `optionalKey`, a missing API key or header
   *   variable fails each call rather than the client (a replay run makes
   *   none).
   * @throws {TemplateError} When a variable the settings name is not set.
   */
  constructor(
    settings: EmbeddingSettings,
    env: (name: string) => string | undefined = (name) => Deno.env.get(name),
    options: { optionalKey?: boolean | undefined } = {},
  ) {
    this.settings = settings;
    this.url = apiUrl(
      settings.base_url ?? "https://api.openai.com/v1",
      "embeddings",
    );
    this.shownUrl = withoutCredentials(this.url);
    // A replay needs no secret: the call that would need it fails alone.
    const { headers, secrets, unset } = apiHeaders(
      this.url,
      settings,
      env,
      options.optionalKey,
    );
    this.#missingKey = unset;
    this.#headers = headers;
    this.#secrets = [...urlSecrets(this.url), ...secrets];
    this.#flow = new NetworkFlow(settings);
    this.identity = {
      type: "embeddings",
      url: this.url,
      ...withoutFlow(settings),
    };
  }

  /**
   * The request body for some texts. It holds no secret, so it can key a
   * cache.
   *
   * @param texts The texts.
   * @returns The body.
   */
  body(texts: readonly string[]): Record<string, unknown> {
    return { model: this.settings.model, input: texts };
  }

  /**
   * Embeds texts in one request, with the client's timeout, rate limit and
   * retries (429, 5xx, resets and timeouts, `Retry-After` honoured).
   *
   * @param texts The texts, at least one.
   * @param signal Aborting stops it.
   * @returns One vector per text.
   * @throws {EmbeddingAnswerError} When the answer holds no usable vectors.
   * @throws An `Error` with a message for people when the call fails for good.
   */
  async embed(
    texts: readonly string[],
    signal?: AbortSignal,
  ): Promise<Embeddings> {
    if (this.#missingKey !== undefined) throw this.#missingKey;
    const secrets = this.#secrets;
    const body = JSON.stringify(this.body(texts));
    // An error a proxy answers with 200 is retried as its 5xx would be.
    const { result: reply, attempts } = await this.#flow.run(
      async () => {
        const answer = await send({
          method: "POST",
          url: this.url,
          headers: this.#headers,
          body,
        }, {
          timeoutMs: this.#flow.timeoutMs,
          maxRedirects: this.#flow.maxRedirects,
          maxResponseBytes: this.#flow.maxResponseBytes,
          secrets,
          signal,
        });
        let json: unknown;
        try {
          json = parseJsonAnswer(
            `POST ${this.shownUrl}`,
            answer.text,
            secrets,
          );
        } catch (error) {
          if (!(error instanceof Error)) throw error;
          throw new EmbeddingAnswerError(error.message);
        }
        const failed = answeredError(
          `POST ${this.shownUrl}`,
          answer.status,
          json,
          "data",
          secrets,
        );
        if (failed !== undefined) throw failed;
        return json;
      },
      signal,
    );
    const r = (typeof reply === "object" && reply !== null ? reply : {}) as
      & Record<string, unknown>
      & { data?: unknown };
    const vectors = readVectors(
      r.data,
      texts.length,
      `POST ${this.shownUrl}`,
    );
    return {
      vectors,
      info: {
        model: r.model ?? this.settings.model,
        ...(r.usage !== undefined ? { usage: r.usage } : {}),
        attempts,
      },
    };
  }
}

/** `data[]`'s vectors in index order, checked: one per text, finite numbers, one length. */
function readVectors(data: unknown, count: number, where: string): number[][] {
  const bad = (why: string) =>
    new EmbeddingAnswerError(`${where} answered ${why}`);
  if (!Array.isArray(data) || data.length !== count) {
    throw bad(
      `without ${count} embedding${count === 1 ? "" : "s"} in "data"`,
    );
  }
  const vectors: number[][] = new Array(count);
  for (const [i, item] of data.entries()) {
    const entry = (typeof item === "object" && item !== null ? item : {}) as {
      index?: unknown;
      embedding?: unknown;
    };
    const at = typeof entry.index === "number" ? entry.index : i;
    const v = entry.embedding;
    if (
      !Number.isInteger(at) || at < 0 || at >= count ||
      vectors[at] !== undefined
    ) {
      throw bad(`with "data[${i}].index" ${JSON.stringify(entry.index)}`);
    }
    if (
      !Array.isArray(v) || v.length === 0 ||
      !v.every((x) => typeof x === "number" && Number.isFinite(x))
    ) {
      throw bad(`without a list of numbers in "data[${i}].embedding"`);
    }
    vectors[at] = v as number[];
  }
  const length = vectors[0]!.length;
  if (vectors.some((v) => v.length !== length)) {
    throw bad("with embeddings of different lengths");
  }
  return vectors;
}
