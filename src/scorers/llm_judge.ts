/**
 * The `llm_judge` scorer: a model grades each unit against a rubric.
 *
 * @module
 */

import { expectedJson } from "../io/_expected_text.ts";
import {
  ChatClient,
  type ChatClientOptions,
  type ChatSettings,
  ContentFilterError,
  ReplyError,
} from "../net/chat_client.ts";
import { fingerprint } from "../fingerprint/fingerprint.ts";
import { hasPlaceholder, renderTemplate } from "../net/template.ts";
import {
  blocked,
  errored,
  makeScore,
  nonEvaluable,
  type Score,
} from "../score/mod.ts";
import { type Scorer, type ScorerContext, UNIT_RANGE } from "./scorer.ts";
import type { Unit } from "../dataset/unit.ts";
import { JudgeReplyError } from "./judge_reply_error.ts";
import {
  gradeDoubt,
  READING_RULES,
  REPLY_QUOTED,
  replyAnswer,
  replyObjects,
  scoreField,
  verdictsDoubt,
} from "./_judge_replies.ts";
import { clip } from "../base/terminal.ts";
import {
  apiHeadersProblem,
  paramsProblem,
  refuseSettings,
} from "../net/_settings_checks.ts";
import { JUDGE_TEMPLATES } from "./_judge_vars.ts";

export { JudgeReplyError };

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
  name?: string | undefined;
  /**
   * The grading instructions, a template over the unit's `input`, `output`,
   * `expected`, `context` and `metadata` (`{{metadata.topic}}`). One that
   * names none of them is a criterion, as EvalCore's `judge` and promptfoo's
   * `llm-rubric` take theirs: the judge is shown it with the unit's input,
   * output, expected answer and context.
   */
  rubric?: string | undefined;
  /**
   * The judge's system prompt, a template over the same fields as `rubric`.
   * @default {DEFAULT_JUDGE_SYSTEM}
   */
  system?: string | undefined;
  /**
   * A reply's score at least this passes.
   * @default {0.5}
   */
  pass_threshold?: number | undefined;
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

/**
 * The prompt a rubric that names no field of the unit is shown in: without
 * it, the judge would grade an answer it is never given.
 */
const CRITERION_RUBRIC =
  `Grade the answer to the question below by this criterion:
{{criterion}}

Question:
{{input}}

Answer to grade:
{{output}}

Reference answer (may be empty):
{{expected}}

Retrieved context (may be empty):
{{context}}`;

/**
 * Names, in a judge's version, that its rubric is shown as a criterion in
 * {@linkcode CRITERION_RUBRIC}: bump it with every change of that wrapper
 * (a test pins the wrapper's hash), so that a new wrapper is a new evaluator
 * while versions made before stay those of the same requests.
 */
const CRITERION = "criterion/1";

/** Names, in a judge's version, that its system prompt is a template. */
const SYSTEM_TEMPLATE = "system-template/1";

/** The default system prompt: how to answer. */
export const DEFAULT_JUDGE_SYSTEM: string =
  `You are a strict, impartial grader. Reply with one JSON object and nothing else: ` +
  `{"score": <a number from 0 to 1>, "reason": "<one sentence>"}.`;

/**
 * What a judge's reply says.
 *
 * @example A grade outside 0..1 comes with a doubt
 * ```ts
 * import { type JudgeReading, parseJudgeReply } from "./llm_judge.ts";
 * const r: JudgeReading = parseJudgeReply('{"score": 7}');
 * if (r.score !== 7 || r.doubt !== "the judge gave 7, outside 0..1") throw new Error("unexpected");
if (r.code !== "judge.out_of_range") throw new Error("unexpected");
 * ```
 */
export interface JudgeReading {
  /** The score read. */
  score: number;
  /** The judge's reason, when it gave one. */
  reason?: string;
  /** Why the score is not trustworthy, when it is not. */
  doubt?: string;
  /**
   * The code of the doubt's diagnostic.
   * @default {"judge.doubt"}
   */
  code?: string;
  /** The verdict as the judge gave it (claims, chunks), recorded in the Score's provenance. */
  verdict?: unknown;
}

/**
 * A judge's reply that says the metric does not apply after all (an answer
 * in which the judge found no claim to check): the Score is
 * `non_evaluable`.
 *
 * @example
 * ```ts
 * import type { JudgeAbstention } from "./llm_judge.ts";
 * const a: JudgeAbstention = { not_applicable: "the judge found no claim in the output", verdict: { claims: [] } };
 * if (!a.not_applicable.startsWith("the judge")) throw new Error("unexpected");
 * ```
 */
export interface JudgeAbstention {
  /** Why, after `not applicable: `. */
  not_applicable: string;
  /** The verdict as the judge gave it, recorded in the Score's provenance. */
  verdict?: unknown;
}

/**
 * How a judge made from {@linkcode llmJudge} reads units and replies: the
 * RAG and quality judges (`faithfulness`, `correctness`, ...) are `llmJudge`
 * with a prompt and one of these.
 *
 * @example A judge that counts the words of a reply's "words" list
 * ```ts
 * import { type JudgeRecipe, JudgeReplyError, llmJudge } from "./llm_judge.ts";
 * const recipe: JudgeRecipe = {
 *   tag: "words/1",
 *   notApplicable: (unit) => unit.output === "" ? "the output is empty" : undefined,
 *   read(text) {
 *     const words = JSON.parse(text).words;
 *     if (!Array.isArray(words)) throw new JudgeReplyError('the reply has no "words" list');
 *     return { score: Math.min(1, words.length / 10), verdict: { words } };
 *   },
 * };
 * const judge = llmJudge({ name: "words", model: "m", base_url: "http://127.0.0.1:9/v1" }, undefined, recipe);
 * const s = await judge.score({ example_id: "d#1", unit_id: "d#1", input: "q", output: "" }, {});
 * if ("scores" in s || s.status !== "non_evaluable") throw new Error("unexpected");
 * ```
 */
export interface JudgeRecipe {
  /** Names the recipe and the rules of its reading, in the evaluator version (`faithfulness/1`). */
  readonly tag: string;
  /**
   * Why the metric does not apply to a unit (`the case has no context`), or
   * `undefined` when it does: the Score is then `non_evaluable` and no call
   * is made.
   */
  notApplicable?(unit: Unit): string | undefined;
  /** Template variables beside `input`, `output`, `expected`, `context` and `metadata`. */
  vars?(unit: Unit): Record<string, unknown>;
  /**
   * Reads the reply.
   *
   * @throws {JudgeReplyError} When it cannot be read.
   */
  read(text: string, unit: Unit): JudgeReading | JudgeAbstention;
}

/**
 * Reads a judge's reply: a JSON object with a numeric `score` within 0..1
 * (code fences and text around it are allowed). The thoughts a reasoning
 * model opens its reply with (`<think>…</think>`) are left out, and of
 * several objects with a `score` the last is read. A score outside 0..1,
 * one of several that differ, or one read from prose (`Score: 0.8`) instead
 * of JSON, comes with a `doubt`.
 *
 * @param text The reply.
 * @returns What it says.
 * @throws {JudgeReplyError} When no score can be read at all (code
 * `judge.unparsable`): none in the reply, a `score` that is not a finite
 * number (`"0.7"`, `1e400`), or thoughts that never end.
 *
 * @example
 * ```ts
 * import { parseJudgeReply } from "./llm_judge.ts";
 * const fence = "`".repeat(3);
 * const r = parseJudgeReply(`${fence}json\n{"score": 0.75, "reason": "mostly right"}\n${fence}`);
 * if (r.score !== 0.75 || r.doubt !== undefined) throw new Error("unexpected");
 * const t = parseJudgeReply('<think>Is it {"score": 0.1}? No.</think>\n{"score": 0.9}');
 * if (t.score !== 0.9 || t.doubt !== undefined) throw new Error("unexpected");
 * ```
 */
export function parseJudgeReply(text: string): JudgeReading {
  const answer = replyAnswer(text);
  const verdicts = replyObjects(answer).filter((o) =>
    Object.hasOwn(o.value, "score")
  );
  const last = verdicts.at(-1);
  if (last !== undefined) {
    const { score, reason } = scoreField(last.value);
    return {
      score,
      ...(reason !== undefined ? { reason } : {}),
      ...gradeDoubt(score, [0, 1], verdictsDoubt(verdicts, "score")),
    };
  }
  const loose = /score\W{0,3}(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)/i.exec(answer);
  const score = loose !== null ? Number(loose[1]) : NaN;
  if (Number.isFinite(score)) {
    return {
      score,
      doubt: `the judge did not answer in JSON; read ${score} from its text`,
    };
  }
  // A JudgeReplyError, so its Score keeps the paid call's provenance.
  throw new JudgeReplyError(
    `the judge's reply has no score: ${JSON.stringify(clip(text, 200))}`,
  );
}

/**
 * Why a reply gives no verdict because the judge would not give one: it
 * refused (`refusal` and no content, as OpenAI's structured outputs
 * answer), or the provider's content filter stopped it. Its Score is an
 * error (`judge.refused`) that quotes the refusal, never "no score".
 */
function refusalOf(
  text: string,
  info: Record<string, unknown>,
): JudgeReplyError | undefined {
  const quoted = JSON.stringify(clip(text, REPLY_QUOTED));
  if (info.refusal === true) {
    return new JudgeReplyError(`the judge refused: ${quoted}`, "judge.refused");
  }
  if (info.finish_reason !== "content_filter") return undefined;
  return new JudgeReplyError(
    `the judge refused: the provider's content filter stopped its reply (finish_reason "content_filter")${
      text.trim() === "" ? "" : `: ${quoted}`
    }`,
    "judge.refused",
  );
}

/**
 * A scorer that asks a chat model to grade each unit. A reply that cannot be
 * read is an error (never a 0); a score read but not trustworthy is `scored`
 * and `invalid`, so it is shown but not aggregated. The judge's model, prompt
 * and parameters go into its `evaluator_version` and `provenance`, so
 * changing the judge changes the version. With a cache, its answers are kept
 * and replayed as the cache's mode says (its `provenance` then says
 * `cached: true`); with `cost` (prices per million tokens) its `provenance`
 * records `cost_usd`, charged to the budget when there is one.
 *
 * @param settings The judge's model, prompts, headers, prices and flow control.
 * @param env Reads an environment variable (the API key, `${NAME}` in headers).
 * @param recipe How the unit is prepared and the reply read, for a judge
 *   with a structured verdict; by default {@linkcode parseJudgeReply}.
 * @param options A cache, a budget, whether the API key may be missing (a replayed run).
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
  recipe?: JudgeRecipe,
  options: ChatClientOptions = {},
): Scorer {
  // A config is checked at its lines first; a script's settings here.
  refuseSettings(
    "llmJudge",
    paramsProblem(settings, []) ?? apiHeadersProblem(settings, []),
  );
  const client = new ChatClient(settings, env, options);
  const name = settings.name ?? "llm_judge";
  const rubric = settings.rubric ?? DEFAULT_RUBRIC;
  // A criterion is a value of the prompt, never filled itself.
  const criterion = hasPlaceholder(rubric) ? undefined : rubric;
  const system = settings.system ?? DEFAULT_JUDGE_SYSTEM;
  const threshold = settings.pass_threshold ?? 0.5;
  // The hash of what is sent: a criterion in its wrapper, so that a new
  // wrapper is a new prompt (the replacer keeps a "$&" in it as text). The
  // version names the wrapper by its tag, CRITERION, instead: the versions
  // of judges whose requests have not changed stay as they were.
  const sent = criterion !== undefined
    ? CRITERION_RUBRIC.replace("{{criterion}}", () => criterion)
    : rubric;
  const promptHash = fingerprint(system, sent);
  const headers = Object.keys(settings.headers ?? {});
  const version = `${name}@${
    fingerprint(
      client.url,
      settings.model,
      system,
      rubric,
      JSON.stringify(settings.params ?? {}),
      String(threshold),
      READING_RULES,
      // A system prompt's placeholders were sent as written before it was
      // filled: such a judge's Scores from then are another evaluator's.
      ...(system.includes("{{") ? [SYSTEM_TEMPLATE] : []),
      // A rubric naming no field was sent alone before it was a criterion.
      ...(criterion !== undefined ? [CRITERION] : []),
      // Headers as written (a gateway's may choose the model that answers),
      // and only when there are some: a judge without keeps its version.
      ...(headers.length > 0 ? [JSON.stringify(settings.headers)] : []),
      ...(recipe !== undefined ? [recipe.tag] : []),
    )
      .slice(7, 15)
  }`;
  const provenance = {
    judge_model: settings.model,
    judge_url: client.shownUrl,
    prompt: promptHash,
  };
  const messagesOf = (unit: Unit) => {
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
      // As a target's templates read it; none is an empty one.
      metadata: unit.metadata ?? {},
      ...recipe?.vars?.(unit),
    };
    return [
      {
        role: "system",
        content: renderTemplate(system, vars, JUDGE_TEMPLATES.system),
      },
      {
        role: "user",
        content: criterion !== undefined
          ? renderTemplate(CRITERION_RUBRIC, { ...vars, criterion })
          : renderTemplate(rubric, vars, JUDGE_TEMPLATES.rubric),
      },
    ];
  };
  /** A reply's text as the judge reads it, or why it cannot. */
  const readReply = (
    text: string,
    unit: Unit,
  ): JudgeReading | JudgeAbstention | JudgeReplyError => {
    try {
      return recipe !== undefined
        ? recipe.read(text, unit)
        : parseJudgeReply(text);
    } catch (error) {
      if (!(error instanceof JudgeReplyError)) throw error;
      return error;
    }
  };
  return {
    name,
    version,
    // A score outside 0..1 is invalid, so every aggregated one is within it.
    range: UNIT_RANGE,
    cacheKey: (unit: Unit) => client.cacheKey(messagesOf(unit)),
    skipsCall: (unit: Unit) => recipe?.notApplicable?.(unit) !== undefined,
    // As score() reads a reply: a refusal first, then the text.
    usableReply: (unit, { output, info }) =>
      !((refusalOf(output, info ?? {}) ?? readReply(output, unit)) instanceof
        JudgeReplyError),
    async score(unit: Unit, context: ScorerContext): Promise<Score> {
      const skip = recipe?.notApplicable?.(unit);
      if (skip !== undefined) {
        return nonEvaluable(name, {
          reason: `not applicable: ${skip}`,
          evaluator_version: version,
        });
      }
      const messages = messagesOf(unit);
      // Read once, whether the cache asks first (a reply that gives no
      // verdict is not cached, nor taken from the cache) or the Score does.
      let readText: string | undefined;
      let readAs: JudgeReading | JudgeAbstention | JudgeReplyError;
      const readOf = (text: string) => {
        if (text === readText) return readAs;
        readAs = readReply(text, unit);
        readText = text;
        return readAs;
      };
      // A refusal is read before the text: it may hold a number by chance.
      const verdictOf = (text: string, info: Record<string, unknown>) =>
        refusalOf(text, info) ?? readOf(text);
      let reply: { text: string; info: Record<string, unknown> };
      try {
        reply = await client.complete(
          messages,
          context.signal,
          context.flow,
          (text, info) => !(verdictOf(text, info) instanceof JudgeReplyError),
        );
      } catch (error) {
        if (!(error instanceof ReplyError)) throw error;
        // A filter that left no text refused as one that left "" did.
        if (error instanceof ContentFilterError) {
          reply = { text: "", info: error.info };
        } else if (error.code === "budget.exhausted") {
          // A retry the budget refused: blocked as a call it refused is,
          // keeping what the billed attempts cost.
          return blocked(name, `budget: ${error.message}`, {
            code: error.code,
            evaluator_version: version,
            provenance: { ...provenance, ...error.info },
          });
        } else {
          // No choice, no text: the call was made and paid for, and its
          // provenance stays, so the totals count what the budget did.
          return errored(name, `scorer error: ${error.message}`, {
            evaluator_version: version,
            provenance: { ...provenance, ...error.info },
          });
        }
      }
      const read = verdictOf(reply.text, reply.info);
      if (read instanceof JudgeReplyError) {
        // The call was made and paid for: its provenance stays.
        return errored(name, `scorer error: ${read.message}`, {
          code: read.code,
          evaluator_version: version,
          provenance: { ...provenance, ...reply.info },
        });
      }
      if ("not_applicable" in read) {
        return nonEvaluable(name, {
          reason: `not applicable: ${read.not_applicable}`,
          evaluator_version: version,
          provenance: {
            ...provenance,
            ...reply.info,
            ...(read.verdict !== undefined ? { verdict: read.verdict } : {}),
          },
        });
      }
      const reading = read;
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
            code: reading.code ?? "judge.doubt",
            severity: "warning",
            message: reading.doubt,
          }]
          : [],
        evidence_refs: [],
        provenance: {
          ...provenance,
          ...reply.info,
          ...(reading.verdict !== undefined
            ? { verdict: reading.verdict }
            : {}),
        },
      });
    },
  };
}
