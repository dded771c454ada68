/**
 * A client of the OpenAI chat completions API, as OpenAI, Ollama, vLLM and
 * llama.cpp servers speak it.
 *
 * @module
 */

import { parseJsonAnswer, send } from "./_http.ts";
import { readToolCalls, type ToolCall } from "./tool_calls.ts";
import { NetworkFlow, type NetworkSettings } from "./network.ts";
import {
  redact,
  TemplateError,
  urlSecrets,
  withoutUserinfo,
} from "./template.ts";

/**
 * The settings of a chat client (config keys): where the chat completions API
 * is, which model, the name of the variable holding the key, and parameters.
 *
 * @example A local OpenAI-compatible server as the target
 * ```ts
 * import { type ChatSettings, openaiTarget } from "../targets/mod.ts";
 * const chat: ChatSettings = { base_url: "http://127.0.0.1:11434/v1", model: "llama3", params: { temperature: 0 } };
 * const target = openaiTarget(chat);
 * if (typeof target.call !== "function") throw new Error("unexpected");
 * ```
 */
export interface ChatSettings extends NetworkSettings {
  /** The API's base URL, as the OpenAI SDKs take it. Default `https://api.openai.com/v1`. */
  base_url?: string;
  /** The model. */
  model: string;
  /** The name of the environment variable that holds the API key, never the key. */
  api_key_env?: string;
  /** Generation parameters passed through (`temperature`, `max_tokens`, `seed`, ...). */
  params?: Record<string, unknown>;
}

/** A chat message. */
export interface ChatMessage {
  /** `system`, `user`, `assistant`, ... */
  role: string;
  /** The text. */
  content: string;
}

/** What the model answered. */
export interface ChatReply {
  /** The reply's text. */
  text: string;
  /** What to record: model, usage, finish reason, attempts. */
  info: Record<string, unknown>;
  /** The tools the model asked to call, when it asked for any. */
  tool_calls?: ToolCall[];
}

/** Calls `{base_url}/chat/completions`. */
export class ChatClient {
  /** The chat completions URL. */
  readonly url: string;
  /** The URL as messages and records show it: without user name and password. */
  readonly shownUrl: string;
  /** The settings it was made with. */
  readonly settings: ChatSettings;
  #key: string | undefined;
  #secrets: string[];
  #flow: NetworkFlow;

  /**
   * Creates the client; reads the API key from the environment now.
   *
   * @param settings The settings.
   * @param env Reads an environment variable.
   * @throws {TemplateError} When `api_key_env` names a variable that is not set.
   */
  constructor(
    settings: ChatSettings,
    env: (name: string) => string | undefined = (name) => Deno.env.get(name),
  ) {
    this.settings = settings;
    this.url = `${
      (settings.base_url ?? "https://api.openai.com/v1").replace(/\/+$/, "")
    }/chat/completions`;
    if (settings.api_key_env !== undefined) {
      this.#key = env(settings.api_key_env);
      if (this.#key === undefined || this.#key === "") {
        throw new TemplateError(
          `The environment variable ${settings.api_key_env} is not set`,
        );
      }
    }
    this.shownUrl = withoutUserinfo(this.url);
    this.#secrets = [
      ...(this.#key !== undefined ? [this.#key] : []),
      ...urlSecrets(this.url),
    ];
    this.#flow = new NetworkFlow(settings);
  }

  /**
   * The request body for some messages: the model, the messages, then the
   * parameters. It holds no secret, so it can key a cache.
   *
   * @param messages The conversation.
   * @returns The body.
   */
  body(messages: readonly unknown[]): Record<string, unknown> {
    return { model: this.settings.model, messages, ...this.settings.params };
  }

  /**
   * Asks the model, with the client's timeout, rate limit and retries. The
   * reply's text comes with every secret (the key, a URL password) hidden,
   * so that none is cached, scored or written.
   *
   * @param messages The conversation.
   * @param signal Aborting stops it.
   * @returns The reply.
   * @throws An `Error` with a message for people when the call fails for good.
   */
  async complete(
    messages: readonly unknown[],
    signal?: AbortSignal,
  ): Promise<ChatReply> {
    const secrets = this.#secrets;
    const headers: Record<string, string> = {
      "content-type": "application/json",
    };
    if (this.#key !== undefined) headers.authorization = `Bearer ${this.#key}`;
    const body = JSON.stringify(this.body(messages));
    const { result, attempts } = await this.#flow.run(
      () =>
        send({ method: "POST", url: this.url, headers, body }, {
          timeoutMs: this.#flow.timeoutMs,
          maxRedirects: this.#flow.maxRedirects,
          maxResponseBytes: this.#flow.maxResponseBytes,
          secrets,
          signal,
        }),
      signal,
    );
    const reply = parseJsonAnswer(this.shownUrl, result.text, secrets);
    const choice = (reply as { choices?: Array<Record<string, unknown>> })
      .choices?.[0];
    const message = choice?.message;
    const toolCalls = typeof message === "object" && message !== null
      ? readToolCalls(
        message as Record<string, unknown>,
        this.shownUrl,
        secrets,
      )
      : undefined;
    // A reply that only calls tools has no text: `content` is null.
    const content = (message as { content?: unknown } | undefined)?.content ??
      (toolCalls !== undefined ? "" : undefined);
    if (typeof content !== "string") {
      throw new Error(
        `${this.shownUrl} answered without a message text in choices[0].message.content`,
      );
    }
    const r = reply as Record<string, unknown>;
    return {
      text: redact(content, secrets),
      info: {
        model: r.model ?? this.settings.model,
        ...(r.usage !== undefined ? { usage: r.usage } : {}),
        ...(choice?.finish_reason !== undefined
          ? { finish_reason: choice.finish_reason }
          : {}),
        attempts,
      },
      ...(toolCalls !== undefined ? { tool_calls: toolCalls } : {}),
    };
  }
}
