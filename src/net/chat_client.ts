/**
 * A client of the OpenAI chat completions API, as OpenAI, Ollama, vLLM and
 * llama.cpp servers speak it.
 *
 * @module
 */

import type { ToolCall } from "./tool_calls.ts";
import { NetworkFlow, type NetworkSettings } from "./network.ts";
import {
  type Budget,
  BudgetError,
  costOf,
  type Prices,
  roundUsd,
} from "./budget.ts";
import { fingerprint } from "../fingerprint/fingerprint.ts";
import type { FlowWatch } from "./flow.ts";
import { apiUrl } from "./_api_url.ts";
import { apiHeaders } from "./_api_headers.ts";
import {
  holdsSecret,
  type TemplateError,
  urlSecrets,
  withoutCredentials,
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
  base_url?: string | undefined;
  /** The model. */
  model: string;
  /** The name of the environment variable that holds the API key, never the key. */
  api_key_env?: string | undefined;
  /**
   * More headers (a gateway's, an organization's); values may name
   * environment variables as `${NAME}`, each value a secret. Neither
   * `content-type` nor, beside `api_key_env`, the header the key goes in.
   */
  headers?: Record<string, string> | undefined;
  /** Generation parameters passed through (`temperature`, `max_tokens`, `seed`, ...). */
  params?: Record<string, unknown> | undefined;
  /** The model's prices: each reply's `usage` then gives its `cost_usd`. */
  cost?: Prices | undefined;
}

/**
 * Where a chat client keeps the answers it paid for: what a `TargetCache`
 * (`src/targets/cache.ts`) offers, its mode (`replay`, `live`, ...) applied
 * by the cache itself.
 *
 * @example A judge's answers kept in a target cache
 * ```ts
 * import { type ReplyCache, TargetCache } from "../targets/mod.ts";
 * const dir = await Deno.makeTempDir();
 * const cache: ReplyCache = new TargetCache(dir);
 * await cache.keep("a".repeat(64), { output: '{"score": 1}' });
 * const hit = cache.lookup("a".repeat(64));
 * await Deno.remove(dir, { recursive: true });
 * if (hit?.output !== '{"score": 1}') throw new Error();
 * ```
 */
export interface ReplyCache {
  /**
   * The stored answer for a key, if the cache's mode reads one and
   * `usable`, when given, accepts it (one it refuses is a miss).
   *
   * @throws When the cache replays only and has no usable answer for the key.
   */
  lookup(
    key: string,
    usable?: (
      result: { output: string; info?: Record<string, unknown> | undefined },
    ) => boolean,
  ): { output: string; info?: Record<string, unknown> | undefined } | undefined;
  /** Takes back the miss of the last lookup: its call was refused, never made. */
  refused(): void;
  /** Stores an answer, if the cache's mode writes; never rejects for the disk's sake. */
  keep(
    key: string,
    result: { output: string; info?: Record<string, unknown> },
  ): Promise<void>;
}

/**
 * Options of a {@linkcode ChatClient} beyond its settings.
 *
 * @example A judge's client: its answers cached, its spend capped
 * ```ts
 * import { ChatClient, type ChatClientOptions } from "./chat_client.ts";
 * import { Budget } from "./budget.ts";
 * const options: ChatClientOptions = { budget: new Budget(1) };
 * const client = new ChatClient({ model: "m", base_url: "http://127.0.0.1:9/v1" }, undefined, options);
 * if (client.url !== "http://127.0.0.1:9/v1/chat/completions") throw new Error();
 * ```
 */
export interface ChatClientOptions {
  /**
   * What the run may spend: no call starts once it is spent, and each
   * priced reply is charged to it.
   * @default {undefined}
   */
  budget?: Budget | undefined;
  /**
   * Where answers are kept and looked up, by {@linkcode ChatClient.cacheKey}.
   * @default {undefined}
   */
  cache?: ReplyCache | undefined;
  /**
   * Accept an `api_key_env` (or a header's `${NAME}`) that is not set: the
   * error comes with the first call instead (for a run that replays its
   * cache and calls nothing).
   * @default {false}
   */
  optionalKey?: boolean | undefined;
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
  /** What to record: model, usage, finish reason, whether it refused, attempts. */
  info: Record<string, unknown>;
  /** The tools the model asked to call, when it asked for any. */
  tool_calls?: ToolCall[];
}

/**
 * A reply the provider gave, and billed when it reports `usage`, that gives
 * no answer: no choice, no message text, a message that echoes a secret, or
 * an error (`{"error": ...}` with `usage`, each attempt's usage summed).
 * It carries what the call reported (model, usage, finish reason, attempts,
 * cost), so that a target's failed unit and a judge's error Score keep it
 * and the run's totals count what the budget was charged.
 *
 * @example A reply without a choice, paid for
 * ```ts
 * import { ChatClient, ReplyError } from "./chat_client.ts";
 * await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () =>
 *   Response.json({ model: "m", choices: [], usage: { prompt_tokens: 10, completion_tokens: 0 } }));
 * const cost = { input_per_1m: 1, output_per_1m: 1 };
 * const client = new ChatClient({ model: "m", base_url: `http://127.0.0.1:${server.addr.port}/v1`, cost });
 * try {
 *   await client.complete([{ role: "user", content: "hi" }]);
 *   throw new Error("unexpected");
 * } catch (error) {
 *   if (!(error instanceof ReplyError) || error.info.cost_usd !== 0.00001) throw error;
 * }
 * ```
 */
export class ReplyError extends Error {
  /** What the call reported: model, usage, finish reason, attempts, cost. */
  readonly info: Record<string, unknown>;
  /**
   * The diagnostic code of a call that ended for a cause of its own:
   * `budget.exhausted` when the budget refused a retry after billed attempts.
   */
  readonly code: string | undefined;

  /**
   * Creates the error.
   *
   * @param message What happened, for people.
   * @param info What the call reported.
   * @param code The diagnostic code, when the call ended for a cause of its own.
   */
  constructor(message: string, info: Record<string, unknown>, code?: string) {
    super(message);
    this.name = "ReplyError";
    this.info = info;
    this.code = code;
  }
}

/**
 * A reply without text that the provider's content filter stopped
 * (`finish_reason` `"content_filter"`, no `content`, as Azure answers): a
 * target fails with its message, a judge reads it as a refusal.
 *
 * @example A reply error of its own kind
 * ```ts
 * import { ContentFilterError, ReplyError } from "./chat_client.ts";
 * const error = new ContentFilterError("filtered", { model: "m", attempts: 1 });
 * if (!(error instanceof ReplyError) || error.name !== "ContentFilterError") throw new Error();
 * ```
 */
export class ContentFilterError extends ReplyError {
  /**
   * Creates the error.
   *
   * @param message What happened, for people.
   * @param info What the call reported.
   */
  constructor(message: string, info: Record<string, unknown>) {
    super(message, info);
    this.name = "ContentFilterError";
  }
}

// The HTTP exchange and the reading of tool calls load at the first call:
// a cached rerun whose every request hits makes none.
let http: typeof import("./_http.ts") | undefined;
let tools: typeof import("./tool_calls.ts") | undefined;

/** Calls `{base_url}/chat/completions`. */
export class ChatClient {
  /** The chat completions URL. */
  readonly url: string;
  /** The URL as messages and records show it: without user name and password. */
  readonly shownUrl: string;
  /** The settings it was made with. */
  readonly settings: ChatSettings;
  /** A variable the settings name is not set (with `optionalKey`): every call fails. */
  #unset: TemplateError | undefined;
  #secrets: string[];
  #flow: NetworkFlow;
  #budget: Budget | undefined;
  #cache: ReplyCache | undefined;
  #headers: Readonly<Record<string, string>>;

  /**
   * Creates the client; reads the API key and the headers' variables from
   * the environment now.
   *
   * @param settings The settings.
   * @param env Reads an environment variable.
   * @param options A budget, a cache, whether the key may be missing.
   * @throws {TemplateError} When `api_key_env` or a header names a variable
   *   that is not set.
   */
  constructor(
    settings: ChatSettings,
    env: (name: string) => string | undefined = (name) => Deno.env.get(name),
    options: ChatClientOptions = {},
  ) {
    this.settings = settings;
    this.url = apiUrl(
      settings.base_url ?? "https://api.openai.com/v1",
      "chat/completions",
    );
    this.#budget = options.budget;
    this.#cache = options.cache;
    // The same for every call (fetch copies them): made once.
    const { headers, secrets, unset } = apiHeaders(
      this.url,
      settings,
      env,
      options.optionalKey,
    );
    this.#unset = unset;
    this.#headers = headers;
    this.shownUrl = withoutCredentials(this.url);
    this.#secrets = [...secrets, ...urlSecrets(this.url)];
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
   * The cache key of a request: a SHA-256 of the URL (without user name and
   * password), the body, and the headers as written (`${NAME}`, never its
   * value), when there are some: a gateway's header may choose the model
   * that answers. Nothing of the machine goes in, no path, no key, no
   * price: a cache made on one machine answers on another.
   *
   * @param messages The conversation.
   * @returns A hex key.
   */
  cacheKey(messages: readonly unknown[]): string {
    const headers = this.settings.headers;
    return fingerprint(
      "chat",
      this.shownUrl,
      JSON.stringify(this.body(messages)),
      ...(headers !== undefined && Object.keys(headers).length > 0
        ? [JSON.stringify(headers)]
        : []),
    ).slice("sha256:".length);
  }

  /** A cached answer's info: it cost nothing this time (`cost_usd: 0`, priced). */
  #cachedInfo(info: Record<string, unknown>) {
    return this.settings.cost === undefined ? info : { ...info, cost_usd: 0 };
  }

  /**
   * Asks the model, with the client's timeout, rate limit and retries. The
   * reply's text comes with every secret (the key, a URL password) hidden,
   * so that none is cached, scored or written. With a cache, a stored
   * answer comes back marked `cached: true` (and, priced, `cost_usd: 0`)
   * without a call, and a paid-for one is stored (when `usable` takes it).
   * With a budget, no call starts once it is spent, and every priced reply
   * is charged to it, one that gives no answer too.
   *
   * @param messages The conversation.
   * @param signal Aborting stops it.
   * @param watch Told of every wait (rate limit, `Retry-After`, backoff, call slots).
   * @param usable Whether a reply can be used (a judge's gives a verdict),
   *   from its text and its info (a refusal, a finish reason): one that
   *   cannot is not cached, and a cached one is a miss.
   * @returns The reply.
   * @throws An `Error` with a message for people when the call fails for
   *   good; a {@linkcode ReplyError} (what the call reported in its `info`,
   *   its cost charged) when the provider answered without an answer to
   *   use; a {@linkcode import("./budget.ts").BudgetError} when the budget
   *   is spent; the cache's error when it replays only and lacks the answer.
   */
  async complete(
    messages: readonly unknown[],
    signal?: AbortSignal,
    watch?: FlowWatch,
    usable?: (text: string, info: Record<string, unknown>) => boolean,
  ): Promise<ChatReply> {
    const cache = this.#cache;
    const key = cache !== undefined ? this.cacheKey(messages) : undefined;
    if (cache !== undefined) {
      const hit = cache.lookup(
        key!,
        usable !== undefined
          ? (r) => usable(r.output, r.info ?? {})
          : undefined,
      );
      if (hit !== undefined) {
        return {
          text: hit.output,
          info: this.#cachedInfo({ ...hit.info, cached: true }),
        };
      }
    }
    let reply: ChatReply;
    try {
      reply = await this.#call(messages, signal, watch);
    } catch (error) {
      if (error instanceof BudgetError) cache?.refused();
      throw error;
    }
    // An answer that cannot be used is paid for, but not kept: the next run
    // asks again, as it would after a failed call.
    if (
      cache !== undefined &&
      (usable === undefined || usable(reply.text, reply.info))
    ) {
      await cache.keep(key!, { output: reply.text, info: reply.info });
    }
    return reply;
  }

  async #call(
    messages: readonly unknown[],
    signal?: AbortSignal,
    watch?: FlowWatch,
  ): Promise<ChatReply> {
    if (this.#unset !== undefined) throw this.#unset;
    this.#budget?.claim();
    const secrets = this.#secrets;
    const headers = this.#headers;
    const body = JSON.stringify(this.body(messages));
    const { answeredError, parseJsonAnswer, send } = http ??= await import(
      "./_http.ts"
    );
    const { readToolCalls } = tools ??= await import("./tool_calls.ts");
    const prices = this.settings.cost;
    // What the attempts that answered an error with `usage` were billed:
    // each is charged as it comes, as a reply without text is.
    let tried = 0;
    let billed: { usage: unknown; usd: number | undefined } | undefined;
    // An error a proxy answers with 200 is retried as its 5xx would be.
    let run: { result: unknown; attempts: number };
    try {
      run = await this.#flow.run(
        async () => {
          // Each retry is a new call to pay for: it starts only while the
          // budget lasts, as the first did (billed attempts are charged as
          // they come, so the check sees them).
          if (tried > 0) this.#budget?.claim();
          tried++;
          const answer = await send(
            { method: "POST", url: this.url, headers, body },
            {
              timeoutMs: this.#flow.timeoutMs,
              maxRedirects: this.#flow.maxRedirects,
              maxResponseBytes: this.#flow.maxResponseBytes,
              secrets,
              signal,
              watch,
            },
          );
          const json = parseJsonAnswer(
            `POST ${this.shownUrl}`,
            answer.text,
            secrets,
          );
          const failed = answeredError(
            `POST ${this.shownUrl}`,
            answer.status,
            json,
            "choices",
            secrets,
          );
          if (failed !== undefined) {
            const usage = (json as Record<string, unknown>).usage;
            if (usage !== undefined && usage !== null) {
              const usd = prices === undefined
                ? undefined
                : costOf(usage, prices);
              this.#budget?.charge(usd);
              billed = {
                usage: billed === undefined
                  ? usage
                  : usageSum(billed.usage, usage),
                usd: billed?.usd === undefined
                  ? usd
                  : usd === undefined
                  ? billed.usd
                  : roundUsd(billed.usd + usd),
              };
            }
            throw failed;
          }
          return json;
        },
        signal,
        watch,
      );
    } catch (error) {
      // The call failed for good after an attempt the provider billed: a
      // reply error, so that the unit or the Score keeps what it cost.
      if (
        billed === undefined || !(error instanceof Error) || signal?.aborted
      ) {
        throw error;
      }
      // A retry the budget refused ends the call as the budget's refusal,
      // with what its billed attempts cost.
      const usage = holdsSecret(JSON.stringify(billed.usage), secrets)
        ? {}
        : { usage: billed.usage };
      const refused = error instanceof BudgetError;
      throw new ReplyError(
        refused
          ? `${error.message}, nor this call's retry after ${tried} attempt${
            tried === 1 ? "" : "s"
          }`
          : error.message,
        {
          model: this.settings.model,
          ...usage,
          attempts: tried,
          ...(billed.usd !== undefined ? { cost_usd: billed.usd } : {}),
        },
        refused ? error.code : undefined,
      );
    }
    const { result: reply, attempts } = run;
    const r = reply as Record<string, unknown>;
    // A reply that reports usage was billed, whatever it holds: it is
    // charged now, before it is read, and a reply that gives no answer
    // carries its cost in its error. Earlier attempts billed for an error
    // count in its cost and usage, as the budget counted them.
    const own = prices === undefined ? undefined : costOf(r.usage, prices);
    this.#budget?.charge(own);
    if (billed !== undefined) {
      r.usage = r.usage === undefined || r.usage === null
        ? billed.usage
        : usageSum(billed.usage, r.usage);
    }
    const usd = billed?.usd === undefined
      ? own
      : own === undefined
      ? billed.usd
      : roundUsd(billed.usd + own);
    const choices = r.choices;
    const choice = (choices as Array<Record<string, unknown>> | undefined)
      ?.[0];
    const message = choice?.message;
    // Keys in this order: model, usage, finish_reason, refusal, attempts.
    const read: Record<string, unknown> = {
      model: r.model ?? this.settings.model,
    };
    if (r.usage !== undefined) read.usage = r.usage;
    if (choice?.finish_reason !== undefined) {
      read.finish_reason = choice.finish_reason;
    }
    const reported = () => {
      read.attempts = attempts;
      return usd === undefined ? read : { ...read, cost_usd: usd };
    };
    // An answer is not rewritten: one that echoes the key or a ${VAR} value
    // is not kept (nor cached), rather than scored with `***` in it; nor is
    // what its reply reports beside it (a model name, a finish reason), which
    // a failed unit's target and a judge's Score keep: only what it cost.
    const inMessage = holdsSecret(JSON.stringify(message) ?? "", secrets);
    if (inMessage || holdsSecret(JSON.stringify(read), secrets)) {
      throw new ReplyError(
        `POST ${this.shownUrl} answered with a secret the config sends (the API key or a \${VAR} value) in its ${
          inMessage ? "message" : "model, usage or finish reason"
        }: the answer is not kept`,
        {
          model: this.settings.model,
          ...(r.usage !== undefined &&
              !holdsSecret(JSON.stringify(r.usage), secrets)
            ? { usage: r.usage }
            : {}),
          attempts,
          ...(usd !== undefined ? { cost_usd: usd } : {}),
        },
      );
    }
    if (Array.isArray(choices) && choices.length === 0) {
      throw new ReplyError(
        `POST ${this.shownUrl} answered no choice ("choices": [])`,
        reported(),
      );
    }
    let toolCalls: ToolCall[] | undefined;
    try {
      toolCalls = typeof message === "object" && message !== null
        ? readToolCalls(
          message as Record<string, unknown>,
          `POST ${this.shownUrl}`,
        )
        : undefined;
    } catch (error) {
      // A malformed tool call: the reply was paid for all the same.
      if (!(error instanceof Error)) throw error;
      throw new ReplyError(error.message, reported());
    }
    const said = messageText(message, toolCalls !== undefined);
    if (!("text" in said)) {
      const message =
        `POST ${this.shownUrl} answered without a message text in choices[0].message.content (${
          said.parts !== undefined ? `its parts are ${said.parts}; ` : ""
        }${finishText(choice?.finish_reason)})`;
      // Azure's filter leaves no content: a judge names it a refusal.
      throw choice?.finish_reason === "content_filter"
        ? new ContentFilterError(message, reported())
        : new ReplyError(message, reported());
    }
    if (said.refusal) read.refusal = true;
    const info = reported();
    return {
      text: said.text,
      info,
      ...(toolCalls !== undefined ? { tool_calls: toolCalls } : {}),
    };
  }
}

/**
 * The text of a reply's message: its `content` as a string, or the text parts
 * of a `content` given as a list (Mistral, some proxies: `[{"type": "text",
 * "text": ...}]`, joined; other parts, such as thinking, left out); a
 * `refusal` (OpenAI's structured outputs) when the content has no text
 * but whitespace (`null`, `""`, `[]`, or text parts of only whitespace, beside
 * a `refusal` or `{"type": "refusal", "refusal": ...}` parts, joined), as
 * promptfoo and Inspect read it; `""` for a reply
 * that only calls tools. Otherwise why there is none: the types of the
 * parts, when there are some.
 */
function messageText(
  message: unknown,
  callsTools: boolean,
): { text: string; refusal: boolean } | { parts?: string } {
  const { content, refusal } = typeof message === "object" && message !== null
    ? message as { content?: unknown; refusal?: unknown }
    : {};
  // A refusal beside a content without text (`""`, as OpenAI's structured
  // outputs may answer, or `null`) is the refusal, not an empty answer.
  if (
    typeof refusal === "string" && refusal !== "" &&
    (content === undefined || content === null ||
      (typeof content === "string" && content.trim() === "") ||
      (Array.isArray(content) && content.length === 0))
  ) return { text: refusal, refusal: true };
  if (typeof content === "string") return { text: content, refusal: false };
  if (Array.isArray(content) && content.length > 0) {
    const texts = content.filter((part) =>
      typeof part?.text === "string" &&
      (part.type === "text" || part.type === "output_text")
    ).map((part) => part.text as string);
    const text = texts.join("");
    // OpenAI's parts form of a refusal (`{"type": "refusal", "refusal":
    // ...}`), or a `refusal` beside the parts, is the refusal when the
    // text parts hold only whitespace, as beside a string content.
    const refusals = content.filter((part) =>
      part?.type === "refusal" && typeof part.refusal === "string" &&
      part.refusal !== ""
    ).map((part) => part.refusal as string);
    if (
      refusals.length === 0 && typeof refusal === "string" && refusal !== ""
    ) {
      refusals.push(refusal);
    }
    if (refusals.length > 0 && text.trim() === "") {
      return { text: refusals.join(""), refusal: true };
    }
    if (texts.length > 0) return { text, refusal: false };
    return {
      parts: [
        ...new Set(content.map((part) => JSON.stringify(part?.type ?? null))),
      ].join(", "),
    };
  }
  if (content !== undefined && content !== null) return {};
  // A reply that only calls tools has no text: `content` is null.
  return callsTools ? { text: "", refusal: false } : {};
}

/**
 * Two `usage` objects added up: their counts summed, field by field, nested
 * details too; a field only one has is kept as it is.
 */
function usageSum(a: unknown, b: unknown): unknown {
  if (typeof a === "number" && typeof b === "number") return a + b;
  if (
    typeof a !== "object" || a === null || Array.isArray(a) ||
    typeof b !== "object" || b === null || Array.isArray(b)
  ) return b;
  const sum: Record<string, unknown> = { ...a };
  for (const [key, value] of Object.entries(b)) {
    sum[key] = key in sum ? usageSum(sum[key], value) : value;
  }
  return sum;
}

/** A reply's finish reason as a message says it, with what it means. */
function finishText(reason: unknown): string {
  if (reason === undefined || reason === null) return "no finish_reason";
  const said = `finish_reason ${JSON.stringify(reason)}`;
  return reason === "length"
    ? `${said}: the reply ran out of max_tokens before any text, reasoning included; raise max_tokens`
    : said;
}
