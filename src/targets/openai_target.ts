/**
 * The `openai` target: a model behind the OpenAI chat completions API
 * (OpenAI itself, or a local Ollama, vLLM or llama.cpp server).
 *
 * @module
 */

import type { Case } from "../dataset/case.ts";
import {
  ChatClient,
  type ChatClientOptions,
  type ChatSettings,
} from "../net/chat_client.ts";
import { renderTemplate, withoutCredentials } from "../net/template.ts";
import { withoutFlow } from "../net/network.ts";
import type { Target, TargetContext, TargetResult } from "./target.ts";
import {
  apiHeadersProblem,
  paramsProblem,
  refuseSettings,
  targetTemplateProblem,
} from "../net/_settings_checks.ts";

/**
 * Settings of the `openai` target (config keys).
 *
 * @example A system prompt and a prompt template over the case
 * ```ts
 * import { openaiTarget, type OpenAITargetSettings } from "./mod.ts";
 * const settings: OpenAITargetSettings = {
 *   base_url: "http://127.0.0.1:11434/v1",
 *   model: "llama3",
 *   system: "Answer in one word.",
 *   prompt: "Question: {{input}}",
 *   params: { temperature: 0 },
 * };
 * const body = openaiTarget(settings).request({ input: "capital of France?" }) as { messages: { content: string }[] };
 * if (body.messages[1]?.content !== "Question: capital of France?") throw new Error("unexpected");
 * ```
 */
export interface OpenAITargetSettings extends ChatSettings {
  /** A system prompt, sent first. */
  system?: string | undefined;
  /** The user message, a template over the case. Default `{{input}}`. */
  prompt?: string | undefined;
}

/**
 * A target whose requests can key a cache: they hold no secret.
 *
 * @example A function target made cacheable, then cached
 * ```ts
 * import { type CacheableTarget, cachedTarget, TargetCache } from "./mod.ts";
 * const upper: CacheableTarget = {
 *   identity: { type: "upper", version: 1 },
 *   request: (testCase) => ({ input: testCase.input }),
 *   call: (testCase) => ({ output: String(testCase.input).toUpperCase() }),
 * };
 * const dir = await Deno.makeTempDir();
 * const cache = new TargetCache(dir);
 * const result = await cachedTarget(upper, cache).call({ input: "hi" }, {});
 * await Deno.remove(dir, { recursive: true });
 * if (result.output !== "HI" || cache.misses !== 1) throw new Error("unexpected");
 * ```
 */
export interface CacheableTarget extends Target {
  /** What identifies the target itself: its settings, with secrets as names. */
  readonly identity: unknown;
  /**
   * The request a case becomes, without secrets.
   *
   * @throws When the case cannot be turned into a request (a template names a missing field).
   */
  request(testCase: Case): unknown;
  /**
   * Whether its results carry a `cost_usd` (it has prices): a cached
   * answer then records `cost_usd: 0`, since it cost nothing this time.
   */
  readonly priced?: boolean;
  /**
   * How the target reads what it is answered, when that changed after
   * answers were cached: stored with each answer it caches, and given to
   * {@linkcode CacheableTarget.replays} with a stored one.
   */
  readonly reading?: number;
  /**
   * Whether a stored result replays what a call would give now, from the
   * `reading` it was stored under (`undefined`: before any); one it refuses
   * is a miss, asked again.
   *
   * @param result The stored result.
   * @param reading The `reading` it was stored under.
   * @returns Whether to replay it.
   */
  replays?(result: TargetResult, reading: number | undefined): boolean;
}

/** The values a target's templates may use: the case's fields, never `expected`. */
export function targetVars(testCase: Case): Record<string, unknown> {
  const { expected: _hidden, ...fields } = testCase as
    & Case
    & Record<string, unknown>;
  return fields;
}

/**
 * A target that asks a chat model. The case's `input` is rendered into the
 * `prompt` template (after the `system` prompt), or, when `input` is already a
 * list of messages, sent as it is. The unit records the model, token usage,
 * finish reason and attempts under `target`, with `cost` (prices per
 * million tokens) what the call cost as `cost_usd`, and the tools the model
 * asked to call as its `tool_calls` (arguments parsed from their JSON text; a text
 * that does not parse kept, with `arguments_error`). A request that offers
 * `tools` (in `params`) and gets no call records an empty list.
 *
 * @param settings Base URL, model, key variable, headers, prompts, parameters, prices, flow control.
 * @param env Reads an environment variable (the API key, `${NAME}` in headers).
 * @param options A budget to charge, whether the API key may be missing (a replayed run).
 * @returns The target.
 *
 * @example Ask a chat model on loopback for each example
 * ```ts
 * import { openaiTarget, runTarget } from "./mod.ts";
 * await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () =>
 *   Response.json({ model: "m", choices: [{ message: { role: "assistant", content: "Paris" } }] }));
 * const target = openaiTarget({ base_url: `http://127.0.0.1:${server.addr.port}/v1`, model: "m" });
 * const examples = [{ example_id: "d#1", line: 1, case: { input: "capital of France?", expected: "Paris" } }];
 * const [unit] = await Array.fromAsync(ReadableStream.from(examples).pipeThrough(runTarget(target)));
 * if (unit?.output !== "Paris" || unit.expected !== "Paris") throw new Error("unexpected");
 * ```
 */
export function openaiTarget(
  settings: OpenAITargetSettings,
  env?: (name: string) => string | undefined,
  options: Omit<ChatClientOptions, "cache"> = {},
): CacheableTarget {
  // A config is checked at its lines first; a script's settings here.
  refuseSettings(
    "openaiTarget",
    paramsProblem(settings, []) ??
      targetTemplateProblem({ ...settings, type: "openai" }, []) ??
      apiHeadersProblem(settings, []),
  );
  const client = new ChatClient(settings, env, options);
  const tools = settings.params?.tools;
  const offersTools = Array.isArray(tools) && tools.length > 0;
  const messagesOf = (testCase: Case): unknown[] => {
    if (Array.isArray(testCase.input)) return testCase.input;
    const messages: unknown[] = [];
    if (settings.system !== undefined) {
      messages.push({
        role: "system",
        content: renderTemplate(settings.system, targetVars(testCase)),
      });
    }
    messages.push({
      role: "user",
      content: renderTemplate(
        settings.prompt ?? "{{input}}",
        targetVars(testCase),
      ),
    });
    return messages;
  };
  // What keys the cache: nothing of the machine, no secret (a URL's
  // password; headers as written, `${NAME}` never its value), no price (a
  // new price list is the same answer).
  const { cost: _cost, ...kept } = withoutFlow(settings);
  return {
    identity: {
      type: "openai",
      url: client.shownUrl,
      ...kept,
      ...(kept.base_url !== undefined
        ? { base_url: withoutCredentials(kept.base_url) }
        : {}),
    },
    priced: settings.cost !== undefined,
    // Reading 1: a refusal beside "" or whitespace (since e989e42) or in
    // parts is the output. A "" (or whitespace) answer stored before may be
    // such a refusal read as it was: it is asked again once, and then kept
    // with the reading.
    reading: 1,
    replays: (result, reading) =>
      reading !== undefined || result.output.trim() !== "" ||
      result.info?.refusal === true || (result.tool_calls?.length ?? 0) > 0,
    request: (testCase) => client.body(messagesOf(testCase)),
    async call(testCase: Case, context: TargetContext): Promise<TargetResult> {
      const reply = await client.complete(
        messagesOf(testCase),
        context.signal,
        context.flow,
      );
      const toolCalls = reply.tool_calls ?? (offersTools ? [] : undefined);
      return toolCalls === undefined
        ? { output: reply.text, info: reply.info }
        : { output: reply.text, info: reply.info, tool_calls: toolCalls };
    },
  };
}
