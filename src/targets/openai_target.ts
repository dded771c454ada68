/**
 * The `openai` target: a model behind the OpenAI chat completions API
 * (OpenAI itself, or a local Ollama, vLLM or llama.cpp server).
 *
 * @module
 */

import type { Case } from "../dataset/case.ts";
import { ChatClient, type ChatSettings } from "../net/chat_client.ts";
import { renderTemplate } from "../net/template.ts";
import { withoutFlow } from "../net/network.ts";
import type { Target, TargetContext, TargetResult } from "./target.ts";

/** Settings of the `openai` target (config keys). */
export interface OpenAITargetSettings extends ChatSettings {
  /** A system prompt, sent first. */
  system?: string;
  /** The user message, a template over the case. Default `{{input}}`. */
  prompt?: string;
}

/** A target whose requests can key a cache: they hold no secret. */
export interface CacheableTarget extends Target {
  /** What identifies the target itself: its settings, with secrets as names. */
  readonly identity: unknown;
  /**
   * The request a case becomes, without secrets.
   *
   * @throws When the case cannot be turned into a request (a template names a missing field).
   */
  request(testCase: Case): unknown;
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
 * finish reason and attempts under `target`.
 *
 * @param settings Base URL, model, key variable, prompts, parameters, flow control.
 * @param env Reads an environment variable (the API key).
 * @returns The target.
 */
export function openaiTarget(
  settings: OpenAITargetSettings,
  env?: (name: string) => string | undefined,
): CacheableTarget {
  const client = new ChatClient(settings, env);
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
  return {
    identity: { type: "openai", url: client.url, ...withoutFlow(settings) },
    request: (testCase) => client.body(messagesOf(testCase)),
    async call(testCase: Case, context: TargetContext): Promise<TargetResult> {
      const reply = await client.complete(messagesOf(testCase), context.signal);
      return { output: reply.text, info: reply.info };
    },
  };
}
