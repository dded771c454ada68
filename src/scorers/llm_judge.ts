/**
 * The `llm_judge` scorer: a model grades each unit against a rubric.
 *
 * @module
 */

import { expectedJson } from "../dataset/case.ts";
import { ChatClient, type ChatSettings } from "../net/chat_client.ts";
import { fingerprint } from "../fingerprint/fingerprint.ts";
import { renderTemplate } from "../net/template.ts";
import { makeScore, type Score } from "../score/mod.ts";
import { type Scorer, type ScorerContext, UNIT_RANGE } from "./scorer.ts";
import type { Unit } from "../dataset/unit.ts";

/**
 * Settings of the `llm_judge` scorer (config keys).
 *
 * @example A judge's settings name its version: a new rubric is a new evaluator
 * ```ts
 * import { llmJudge, type LlmJudgeSettings } from "./mod.ts";
 * const settings: LlmJudgeSettings = { name: "faithfulness", model: "judge", base_url: "http://127.0.0.1:9/v1" };
 * const a = llmJudge(settings);
 * const b = llmJudge({ ...settings, rubric: "Is {{output}} supported by {{context}}?", pass_threshold: 0.8 });
 * if (a.name !== "faithfulness" || a.version === b.version) throw new Error("unexpected");
 * ```
 */
export interface LlmJudgeSettings extends ChatSettings {
  /**
   * The metric name.
   * @default {"llm_judge"}
   */
  name?: string;
  /** The grading instructions, a template over `input`, `output`, `expected`, `context`. */
  rubric?: string;
  /** The judge's system prompt. */
  system?: string;
  /**
   * A reply's score at least this passes.
   * @default {0.5}
   */
  pass_threshold?: number;
}

/** The default rubric: correct, complete, supported by the context. */
export const DEFAULT_RUBRIC: string = `Grade the answer to the question below.

Question:
{{input}}

Answer to grade:
{{output}}

Reference answer (may be empty):
{{expected}}

Retrieved context (may be empty):
{{context}}

A good answer is correct, complete, and supported by the context.`;

/** The default system prompt: how to answer. */
export const DEFAULT_JUDGE_SYSTEM: string =
  `You are a strict, impartial grader. Reply with one JSON object and nothing else: ` +
  `{"score": <a number from 0 to 1>, "reason": "<one sentence>"}.`;

/** What a judge's reply says. */
export interface JudgeReading {
  /** The score read. */
  score: number;
  /** The judge's reason, when it gave one. */
  reason?: string;
  /** Why the score is not trustworthy, when it is not. */
  doubt?: string;
}

/**
 * Reads a judge's reply: a JSON object with a numeric `score` within 0..1
 * (code fences and text around it are allowed). A score outside 0..1, or one
 * read from prose (`Score: 0.8`) instead of JSON, comes with a `doubt`.
 *
 * @param text The reply.
 * @returns What it says.
 * @throws {SyntaxError} When no score can be read at all.
 *
 * @example
 * ```ts
 * import { parseJudgeReply } from "./llm_judge.ts";
 * const fence = "`".repeat(3);
 * const r = parseJudgeReply(`${fence}json\n{"score": 0.75, "reason": "mostly right"}\n${fence}`);
 * if (r.score !== 0.75 || r.doubt !== undefined) throw new Error("unexpected");
 * ```
 */
export function parseJudgeReply(text: string): JudgeReading {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start >= 0 && end > start) {
    try {
      const value = JSON.parse(text.slice(start, end + 1));
      const score = value?.score;
      const reason = typeof value?.reason === "string"
        ? value.reason
        : undefined;
      if (typeof score === "number" && Number.isFinite(score)) {
        return {
          score,
          ...(reason !== undefined ? { reason } : {}),
          ...(score < 0 || score > 1
            ? { doubt: `the judge gave ${score}, outside 0..1` }
            : {}),
        };
      }
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
    }
  }
  const loose = /score\W{0,3}(-?\d+(?:\.\d+)?)/i.exec(text);
  if (loose !== null) {
    const score = Number(loose[1]);
    return {
      score,
      doubt: `the judge did not answer in JSON; read ${score} from its text`,
    };
  }
  const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  throw new SyntaxError(
    `the judge's reply has no score: ${JSON.stringify(shown)}`,
  );
}

/**
 * A scorer that asks a chat model to grade each unit. A reply that cannot be
 * read is an error (never a 0); a score read but not trustworthy is `scored`
 * and `invalid`, so it is shown but not aggregated. The judge's model, prompt
 * and parameters go into its `evaluator_version` and `provenance`, so
 * changing the judge changes the version.
 *
 * @param settings The judge's model, prompts and flow control.
 * @param env Reads an environment variable (the API key).
 * @returns The scorer.
 *
 * @example Grade a unit with a chat model on loopback
 * ```ts
 * import { llmJudge } from "./mod.ts";
 * const content = '{"score": 0.9, "reason": "correct and supported"}';
 * await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () =>
 *   Response.json({ model: "judge", choices: [{ message: { role: "assistant", content } }] }));
 * const judge = llmJudge({ model: "judge", base_url: `http://127.0.0.1:${server.addr.port}/v1` });
 * const s = await judge.score({ example_id: "d#1", unit_id: "d#1", input: "2+2?", output: "4" }, {});
 * if ("scores" in s || s.value !== 0.9 || s.provenance?.judge_model !== "judge") throw new Error("unexpected");
 * ```
 */
export function llmJudge(
  settings: LlmJudgeSettings,
  env?: (name: string) => string | undefined,
): Scorer {
  const client = new ChatClient(settings, env);
  const name = settings.name ?? "llm_judge";
  const rubric = settings.rubric ?? DEFAULT_RUBRIC;
  const system = settings.system ?? DEFAULT_JUDGE_SYSTEM;
  const threshold = settings.pass_threshold ?? 0.5;
  const promptHash = fingerprint(system, rubric);
  const version = `${name}@${
    fingerprint(
      client.url,
      settings.model,
      system,
      rubric,
      JSON.stringify(settings.params ?? {}),
      String(threshold),
    )
      .slice(7, 15)
  }`;
  const provenance = {
    judge_model: settings.model,
    judge_url: client.shownUrl,
    prompt: promptHash,
  };
  return {
    name,
    version,
    // A score outside 0..1 is invalid, so every aggregated one is within it.
    range: UNIT_RANGE,
    async score(unit: Unit, context: ScorerContext): Promise<Score> {
      const vars = {
        input: typeof unit.input === "string"
          ? unit.input
          : JSON.stringify(unit.input),
        output: unit.output ?? "",
        expected: unit.expected === undefined
          ? ""
          : typeof unit.expected === "string"
          ? unit.expected
          : expectedJson(unit),
        context: unit.context ?? [],
      };
      const messages = [
        { role: "system", content: system },
        { role: "user", content: renderTemplate(rubric, vars) },
      ];
      const reply = await client.complete(messages, context.signal);
      const reading = parseJudgeReply(reply.text);
      const reason = reading.doubt !== undefined
        ? `${reading.doubt}${
          reading.reason !== undefined ? `: ${reading.reason}` : ""
        }`
        : reading.reason;
      return makeScore({
        metric: name,
        status: "scored",
        validity: reading.doubt === undefined ? "valid" : "invalid",
        value: reading.score,
        passed: reading.score >= threshold,
        ...(reason !== undefined ? { reason } : {}),
        evaluator_version: version,
        diagnostics: reading.doubt !== undefined
          ? [{
            code: "judge.doubt",
            severity: "warning",
            message: reading.doubt,
          }]
          : [],
        evidence_refs: [],
        provenance: { ...provenance, ...reply.info },
      });
    },
  };
}
