/**
 * The RAG and quality judges: `faithfulness`, `answer_relevance`,
 * `context_precision`, `context_recall`, `correctness` and `rubric`. Each is
 * {@linkcode llmJudge} with a prompt of evalpipe's own and a reader of the
 * structured verdict it asks for; the score is computed from the verdict
 * (supported claims over claims, say), not taken from the model as a number
 * where a count can be made.
 *
 * @module
 */

import { expectedJson } from "../io/_expected_text.ts";
import type { Unit } from "../dataset/unit.ts";
import { fingerprint } from "../fingerprint/fingerprint.ts";
import type { ChatClientOptions, ChatSettings } from "../net/chat_client.ts";
import {
  type JudgeAbstention,
  type JudgeReading,
  type JudgeRecipe,
  JudgeReplyError,
  llmJudge,
} from "./llm_judge.ts";
import {
  flagField,
  gradeDoubt,
  listOf,
  REPLY_QUOTED,
  replyVerdict,
  scoreField,
  textField,
} from "./_judge_replies.ts";
import * as prompts from "./_judge_prompts.ts";
import type { Scorer } from "./scorer.ts";
import { clip } from "../base/terminal.ts";

/**
 * Settings of a RAG or quality judge (config keys): the chat model's, a
 * metric name and a pass threshold.
 *
 * @example A faithfulness judge that passes at 0.8
 * ```ts
 * import { faithfulnessJudge, type JudgeSettings } from "./mod.ts";
 * const settings: JudgeSettings = { model: "judge", base_url: "http://127.0.0.1:9/v1", threshold: 0.8 };
 * const judge = faithfulnessJudge(settings);
 * if (judge.name !== "faithfulness" || !judge.version.startsWith("faithfulness@")) throw new Error("unexpected");
 * ```
 */
export interface JudgeSettings extends ChatSettings {
  /**
   * The metric name.
   * @default {the judge's type: "faithfulness", "correctness", ...}
   */
  name?: string | undefined;
  /**
   * A value at least this passes; within 0..1.
   * @default {0.5}
   */
  threshold?: number | undefined;
}

/**
 * Settings of the `rubric` judge: a judge's, the rubric's text and the
 * scale it grades on.
 *
 * @example A 1-to-5 rubric: a 4 is 0.75
 * ```ts
 * import { rubricJudge, type RubricJudgeSettings } from "./mod.ts";
 * const settings: RubricJudgeSettings = { model: "judge", base_url: "http://127.0.0.1:9/v1", rubric: "5: polite and exact. 1: rude.", scale: [1, 5] };
 * if (rubricJudge(settings).name !== "rubric") throw new Error("unexpected");
 * ```
 */
export interface RubricJudgeSettings extends JudgeSettings {
  /** The rubric: what a good output is, and how to grade one, in the judge's language. */
  rubric: string;
  /**
   * The lowest and the highest grade the rubric gives; the value is the
   * grade mapped onto 0..1, `(grade − low) / (high − low)`.
   * @default {[0, 1]}
   */
  scale?: readonly [number, number] | undefined;
}

/** A judge's settings, without the threshold check. */
function judge(
  type: string,
  prompt: string,
  recipe: JudgeRecipe,
  settings: JudgeSettings,
  env: ((name: string) => string | undefined) | undefined,
  options: ChatClientOptions,
): Scorer {
  const { name, threshold, ...chat } = settings;
  if (threshold !== undefined && !(threshold >= 0 && threshold <= 1)) {
    throw new RangeError(
      `The threshold of judge "${
        name ?? type
      }" must lie within 0..1, not ${threshold}`,
    );
  }
  return llmJudge(
    {
      ...chat,
      name: name ?? type,
      system: prompts.JUDGE_SYSTEM,
      rubric: prompt,
      pass_threshold: threshold ?? 0.5,
    },
    env,
    recipe,
    options,
  );
}

/** The unit's context chunks, numbered `[1] ...`, for a prompt. */
function passages(unit: Unit): string {
  const chunks = unit.context ?? [];
  return chunks.length === 0
    ? "(none)"
    : chunks.map((c, i) => `[${i + 1}] ${c}`).join("\n\n");
}

/** The unit's `expected` as text: itself when a string, else its JSON. */
function expectedText(unit: Unit): string | undefined {
  if (unit.expected === undefined || unit.expected === null) return undefined;
  return typeof unit.expected === "string" ? unit.expected : expectedJson(unit);
}

/** The variables every judge's prompt may name. */
function unitVars(unit: Unit): Record<string, unknown> {
  return {
    passages: passages(unit),
    passage_count: (unit.context ?? []).length,
    expected_text: expectedText(unit) ?? "",
  };
}

const blank = (text: string | null | undefined) =>
  text === undefined || text === null || text.trim() === "";

function noContext(unit: Unit): string | undefined {
  return (unit.context ?? []).every((c) => blank(c))
    ? "the case has no context"
    : undefined;
}

function noExpected(unit: Unit): string | undefined {
  return blank(expectedText(unit)) ? "the case has no expected" : undefined;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function quoted(texts: readonly string[]): string {
  return texts.map((t) => JSON.stringify(clip(t, REPLY_QUOTED))).join("; ");
}

/** A share of a count, as a reading with its verdict (and a doubt of it). */
function share(
  hits: number,
  total: number,
  reason: string,
  verdict: unknown,
  doubt: string | undefined,
): JudgeReading {
  return doubt === undefined
    ? { score: hits / total, reason, verdict }
    : { score: hits / total, reason, verdict, doubt };
}

/**
 * The `faithfulness` judge: is every claim of the output supported by the
 * case's `context`? The judge lists the output's claims, each marked
 * supported or not; the value is supported claims / claims, and the reason
 * quotes each unsupported claim. A case without context (or with only blank
 * chunks) and an empty output are `non_evaluable`, with no call; so is an
 * output in which the judge finds no claim.
 *
 * @param settings The judge's model, name and threshold.
 * @param env Reads an environment variable (the API key).
 * @param options The run's cache and budget, whether the API key may be missing.
 * @returns The scorer.
 *
 * @example Three claims, two supported: 0.667
 * ```ts
 * import { faithfulnessJudge } from "./mod.ts";
 * const content = JSON.stringify({ claims: [
 *   { claim: "Paris is the capital of France.", supported: true },
 *   { claim: "Paris has 2.1 million people.", supported: true },
 *   { claim: "Paris was founded in 1200.", supported: false },
 * ] });
 * await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () =>
 *   Response.json({ model: "judge", choices: [{ message: { role: "assistant", content } }] }));
 * const judge = faithfulnessJudge({ model: "judge", base_url: `http://127.0.0.1:${server.addr.port}/v1` });
 * const unit = { example_id: "d#1", unit_id: "d#1", input: "Tell me about Paris", output: "...",
 *   context: ["Paris, the capital of France, has 2.1 million inhabitants."] };
 * const s = await judge.score(unit, {});
 * if ("scores" in s || s.value !== 2 / 3 || !s.reason?.includes("founded in 1200")) throw new Error("unexpected");
 * ```
 */
export function faithfulnessJudge(
  settings: JudgeSettings,
  env?: (name: string) => string | undefined,
  options: ChatClientOptions = {},
): Scorer {
  return judge(
    "faithfulness",
    prompts.FAITHFULNESS,
    {
      tag: "faithfulness/1",
      notApplicable: (unit) =>
        noContext(unit) ??
          (blank(unit.output) ? "the output is empty" : undefined),
      vars: unitVars,
      read(text): JudgeReading | JudgeAbstention {
        const { reply, doubt } = replyVerdict(text, "claims");
        const claims = listOf(reply, "claims", (e, where) => ({
          claim: textField(e, "claim", where),
          supported: flagField(e, "supported", where),
        }));
        const verdict = { claims };
        if (claims.length === 0) {
          return {
            not_applicable: "the judge found no claim in the output",
            verdict,
          };
        }
        const unsupported = claims.filter((c) => !c.supported).map((c) =>
          c.claim
        );
        const n = claims.length;
        return share(
          n - unsupported.length,
          n,
          unsupported.length === 0
            ? `all ${plural(n, "claim")} supported by the context`
            : `${n - unsupported.length} of ${
              plural(n, "claim")
            } supported by the context; unsupported: ${quoted(unsupported)}`,
          verdict,
          doubt,
        );
      },
    },
    settings,
    env,
    options,
  );
}

/**
 * The `answer_relevance` judge: does the output address the input? The
 * judge grades on a scale of 0, 0.25, 0.5, 0.75 and 1 (any number within
 * 0..1 is taken) with a reason; a grade outside 0..1 is `scored` but
 * `invalid` (`judge.out_of_range`). Truth is not judged here (see
 * `correctness`, `faithfulness`).
 *
 * @param settings The judge's model, name and threshold.
 * @param env Reads an environment variable (the API key).
 * @param options The run's cache and budget, whether the API key may be missing.
 * @returns The scorer.
 *
 * @example
 * ```ts
 * import { answerRelevanceJudge } from "./mod.ts";
 * const content = '{"score": 0.75, "reason": "answers, with padding"}';
 * await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () =>
 *   Response.json({ model: "judge", choices: [{ message: { role: "assistant", content } }] }));
 * const judge = answerRelevanceJudge({ model: "judge", base_url: `http://127.0.0.1:${server.addr.port}/v1` });
 * const s = await judge.score({ example_id: "d#1", unit_id: "d#1", input: "2+2?", output: "4, as everyone knows" }, {});
 * if ("scores" in s || s.value !== 0.75 || s.reason !== "answers, with padding") throw new Error("unexpected");
 * ```
 */
export function answerRelevanceJudge(
  settings: JudgeSettings,
  env?: (name: string) => string | undefined,
  options: ChatClientOptions = {},
): Scorer {
  return judge(
    "answer_relevance",
    prompts.ANSWER_RELEVANCE,
    {
      tag: "answer_relevance/1",
      vars: unitVars,
      read: (text) => gradeOn(replyVerdict(text, "score"), [0, 1]),
    },
    settings,
    env,
    options,
  );
}

/**
 * A grade on `[low, high]`, mapped onto 0..1; outside it, or one of
 * several the reply gave, with a doubt.
 */
function gradeOn(
  { reply, doubt }: { reply: Record<string, unknown>; doubt?: string },
  [low, high]: readonly [number, number],
): JudgeReading {
  const { score, reason } = scoreField(reply);
  return {
    score: (score - low) / (high - low),
    ...(reason !== undefined ? { reason } : {}),
    ...gradeDoubt(score, [low, high], doubt),
    verdict: { score, ...(reason !== undefined ? { reason } : {}) },
  };
}

/**
 * The `context_precision` judge: are the useful context chunks ranked
 * first? The judge marks each chunk useful or not for reaching `expected`;
 * the value is the average precision of that ranking: the mean, over the
 * useful chunks, of the share of useful chunks among those up to it (0
 * when none is useful). A reply that does not judge each chunk once, in
 * order, is an error (`judge.incomplete`). Without `context` or `expected`
 * the Score is `non_evaluable`.
 *
 * @param settings The judge's model, name and threshold.
 * @param env Reads an environment variable (the API key).
 * @param options The run's cache and budget, whether the API key may be missing.
 * @returns The scorer.
 *
 * @example Useful chunks at ranks 1 and 3: (1/1 + 2/3) / 2
 * ```ts
 * import { contextPrecisionJudge } from "./mod.ts";
 * const content = '{"chunks": [{"chunk": 1, "useful": true}, {"chunk": 2, "useful": false}, {"chunk": 3, "useful": true}]}';
 * await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () =>
 *   Response.json({ model: "judge", choices: [{ message: { role: "assistant", content } }] }));
 * const judge = contextPrecisionJudge({ model: "judge", base_url: `http://127.0.0.1:${server.addr.port}/v1` });
 * const unit = { example_id: "d#1", unit_id: "d#1", input: "q", output: "a", expected: "Paris", context: ["a", "b", "c"] };
 * const s = await judge.score(unit, {});
 * if ("scores" in s || Math.abs(s.value! - 5 / 6) > 1e-12) throw new Error("unexpected");
 * ```
 */
export function contextPrecisionJudge(
  settings: JudgeSettings,
  env?: (name: string) => string | undefined,
  options: ChatClientOptions = {},
): Scorer {
  return judge(
    "context_precision",
    prompts.CONTEXT_PRECISION,
    {
      tag: "context_precision/1",
      notApplicable: (unit) => noContext(unit) ?? noExpected(unit),
      vars: unitVars,
      read(text, unit): JudgeReading {
        const count = (unit.context ?? []).length;
        const { reply, doubt } = replyVerdict(text, "chunks");
        const chunks = listOf(reply, "chunks", (e, where) => ({
          chunk: e.chunk,
          useful: flagField(e, "useful", where),
        }));
        if (chunks.length !== count) {
          throw new JudgeReplyError(
            `the judge's reply judges ${
              plural(chunks.length, "chunk")
            }; the case has ${count}`,
            "judge.incomplete",
          );
        }
        const wrong = chunks.findIndex((c, i) =>
          c.chunk !== undefined && c.chunk !== i + 1
        );
        if (wrong >= 0) {
          throw new JudgeReplyError(
            `"chunks" item ${wrong + 1} of the judge's reply is for chunk ${
              JSON.stringify(chunks[wrong]!.chunk)
            }; the chunks must be judged 1 to ${count}, in order`,
            "judge.incomplete",
          );
        }
        let useful = 0;
        let sum = 0;
        const ranks: number[] = [];
        chunks.forEach((c, i) => {
          if (!c.useful) return;
          useful++;
          sum += useful / (i + 1);
          ranks.push(i + 1);
        });
        const verdict = {
          chunks: chunks.map((c, i) => ({ ...c, chunk: i + 1 })),
        };
        const score = useful === 0 ? 0 : sum / useful;
        return {
          score,
          reason: useful === 0
            ? `none of the ${plural(count, "chunk")} is useful`
            : `useful ${ranks.length === 1 ? "chunk" : "chunks"}: ${
              ranks.join(", ")
            } of ${count}; average precision ${
              Math.round(score * 1000) / 1000
            }`,
          verdict,
          ...(doubt !== undefined ? { doubt } : {}),
        };
      },
    },
    settings,
    env,
    options,
  );
}

/**
 * The `context_recall` judge: does the context hold what `expected` says?
 * The judge lists the statements of `expected`, each marked attributed to
 * the context or not; the value is attributed statements / statements, and
 * the reason quotes those the context lacks. Without `context` or
 * `expected` the Score is `non_evaluable`.
 *
 * @param settings The judge's model, name and threshold.
 * @param env Reads an environment variable (the API key).
 * @param options The run's cache and budget, whether the API key may be missing.
 * @returns The scorer.
 *
 * @example One of two statements in the context: 0.5
 * ```ts
 * import { contextRecallJudge } from "./mod.ts";
 * const content = JSON.stringify({ statements: [
 *   { statement: "Paris is the capital.", attributed: true },
 *   { statement: "It lies on the Seine.", attributed: false },
 * ] });
 * await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () =>
 *   Response.json({ model: "judge", choices: [{ message: { role: "assistant", content } }] }));
 * const judge = contextRecallJudge({ model: "judge", base_url: `http://127.0.0.1:${server.addr.port}/v1` });
 * const unit = { example_id: "d#1", unit_id: "d#1", input: "q", output: "a",
 *   expected: "Paris, on the Seine, is the capital.", context: ["Paris is the capital of France."] };
 * const s = await judge.score(unit, {});
 * if ("scores" in s || s.value !== 0.5 || !s.reason?.includes("Seine")) throw new Error("unexpected");
 * ```
 */
export function contextRecallJudge(
  settings: JudgeSettings,
  env?: (name: string) => string | undefined,
  options: ChatClientOptions = {},
): Scorer {
  return judge(
    "context_recall",
    prompts.CONTEXT_RECALL,
    {
      tag: "context_recall/1",
      notApplicable: (unit) => noContext(unit) ?? noExpected(unit),
      vars: unitVars,
      read(text): JudgeReading | JudgeAbstention {
        const { reply, doubt } = replyVerdict(text, "statements");
        const statements = listOf(
          reply,
          "statements",
          (e, where) => ({
            statement: textField(e, "statement", where),
            attributed: flagField(e, "attributed", where),
          }),
        );
        const verdict = { statements };
        if (statements.length === 0) {
          return {
            not_applicable:
              "the judge found no statement in the expected answer",
            verdict,
          };
        }
        const lacking = statements.filter((s) => !s.attributed).map((s) =>
          s.statement
        );
        const n = statements.length;
        return share(
          n - lacking.length,
          n,
          lacking.length === 0
            ? `all ${
              plural(n, "statement")
            } of the expected answer in the context`
            : `${n - lacking.length} of ${
              plural(n, "statement")
            } of the expected answer in the context; not in it: ${
              quoted(lacking)
            }`,
          verdict,
          doubt,
        );
      },
    },
    settings,
    env,
    options,
  );
}

const FACT_VERDICTS = ["stated", "missing", "contradicted"] as const;

/**
 * The `correctness` judge: does the output get the facts of `expected`
 * right? The judge lists the facts of `expected`, each `stated`, `missing`
 * or `contradicted` by the output; the value is stated facts / facts, and
 * the reason quotes the missing and the contradicted ones. Without
 * `expected` the Score is `non_evaluable`.
 *
 * @param settings The judge's model, name and threshold.
 * @param env Reads an environment variable (the API key).
 * @param options The run's cache and budget, whether the API key may be missing.
 * @returns The scorer.
 *
 * @example One fact stated, one contradicted: 0.5
 * ```ts
 * import { correctnessJudge } from "./mod.ts";
 * const content = JSON.stringify({ facts: [
 *   { fact: "The refund window is 30 days.", verdict: "stated" },
 *   { fact: "Refunds go to the original card.", verdict: "contradicted" },
 * ] });
 * await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () =>
 *   Response.json({ model: "judge", choices: [{ message: { role: "assistant", content } }] }));
 * const judge = correctnessJudge({ model: "judge", base_url: `http://127.0.0.1:${server.addr.port}/v1` });
 * const unit = { example_id: "d#1", unit_id: "d#1", input: "Refunds?", output: "30 days, as store credit",
 *   expected: "Within 30 days, to the original card." };
 * const s = await judge.score(unit, {});
 * if ("scores" in s || s.value !== 0.5 || !s.reason?.includes("contradicted")) throw new Error("unexpected");
 * ```
 */
export function correctnessJudge(
  settings: JudgeSettings,
  env?: (name: string) => string | undefined,
  options: ChatClientOptions = {},
): Scorer {
  return judge(
    "correctness",
    prompts.CORRECTNESS,
    {
      tag: "correctness/1",
      notApplicable: noExpected,
      vars: unitVars,
      read(text): JudgeReading | JudgeAbstention {
        const { reply, doubt } = replyVerdict(text, "facts");
        const facts = listOf(reply, "facts", (e, where) => {
          const verdict = textField(e, "verdict", where);
          if (!(FACT_VERDICTS as readonly string[]).includes(verdict)) {
            throw new JudgeReplyError(
              `${where} of the judge's reply has "verdict": ${
                JSON.stringify(verdict)
              }, not "stated", "missing" or "contradicted"`,
            );
          }
          return {
            fact: textField(e, "fact", where),
            verdict: verdict as typeof FACT_VERDICTS[number],
          };
        });
        const verdict = { facts };
        if (facts.length === 0) {
          return {
            not_applicable: "the judge found no fact in the expected answer",
            verdict,
          };
        }
        const of = (v: string) =>
          facts.filter((f) => f.verdict === v).map((f) => f.fact);
        const missing = of("missing");
        const contradicted = of("contradicted");
        const n = facts.length;
        const stated = n - missing.length - contradicted.length;
        const parts = [
          `${stated} of ${plural(n, "fact")} of the expected answer stated`,
          ...(missing.length > 0 ? [`missing: ${quoted(missing)}`] : []),
          ...(contradicted.length > 0
            ? [`contradicted: ${quoted(contradicted)}`]
            : []),
        ];
        return share(stated, n, parts.join("; "), verdict, doubt);
      },
    },
    settings,
    env,
    options,
  );
}

/**
 * The `rubric` judge: a grade by a rubric of your own (in a config, a file
 * beside it). The rubric's text goes into evalpipe's prompt as it is (its
 * `{{...}}` are not filled); the judge replies with a grade on `scale` and a
 * reason, and the value is the grade mapped onto 0..1. A grade outside the
 * scale is `scored` but `invalid` (`judge.out_of_range`).
 *
 * @param settings The judge's model, name, threshold, rubric and scale.
 * @param env Reads an environment variable (the API key).
 * @param options The run's cache and budget, whether the API key may be missing.
 * @returns The scorer.
 * @throws {RangeError} When the scale is not two finite numbers, low below high.
 *
 * @example A 4 on a 1-to-5 scale is 0.75
 * ```ts
 * import { rubricJudge } from "./mod.ts";
 * const content = '{"score": 4, "reason": "polite, one detail off"}';
 * await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () =>
 *   Response.json({ model: "judge", choices: [{ message: { role: "assistant", content } }] }));
 * const judge = rubricJudge({ model: "judge", base_url: `http://127.0.0.1:${server.addr.port}/v1`,
 *   name: "tone", rubric: "5: polite and exact. 1: rude or wrong.", scale: [1, 5] });
 * const s = await judge.score({ example_id: "d#1", unit_id: "d#1", input: "q", output: "a" }, {});
 * if ("scores" in s || s.metric !== "tone" || s.value !== 0.75) throw new Error("unexpected");
 * ```
 */
export function rubricJudge(
  settings: RubricJudgeSettings,
  env?: (name: string) => string | undefined,
  options: ChatClientOptions = {},
): Scorer {
  const { rubric, scale = [0, 1], ...rest } = settings;
  const [low, high] = scale;
  if (
    scale.length !== 2 || !Number.isFinite(low) || !Number.isFinite(high) ||
    !(low < high)
  ) {
    throw new RangeError(
      `The scale of rubric judge "${
        rest.name ?? "rubric"
      }" must be two numbers, low below high, not ${JSON.stringify(scale)}`,
    );
  }
  if (rubric.trim() === "") {
    throw new RangeError(
      `The rubric of rubric judge "${rest.name ?? "rubric"}" is empty`,
    );
  }
  return judge(
    "rubric",
    prompts.RUBRIC,
    {
      tag: `rubric/1+${
        fingerprint(rubric, String(low), String(high)).slice(7, 15)
      }`,
      vars: (unit) => ({
        ...unitVars(unit),
        rubric,
        scale_low: low,
        scale_high: high,
      }),
      read: (text) => gradeOn(replyVerdict(text, "score"), [low, high]),
    },
    rest,
    env,
    options,
  );
}
