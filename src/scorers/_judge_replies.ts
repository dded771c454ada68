// Reading the JSON verdicts judges ask for: the answer after a reasoning
// model's thoughts, the verdict among the JSON objects in it, and its fields
// of the asked types. Whatever does not fit is a JudgeReplyError that says
// what, so the Score is an error, never a 0.

import { clip } from "../base/terminal.ts";
import { JudgeReplyError } from "./judge_reply_error.ts";

/**
 * Names the rules this module reads replies by, in every judge's evaluator
 * version: change how a reply is read (what is dropped before the verdict,
 * which of several objects counts) and this changes, so that `diff` and a
 * baseline see a new evaluator rather than the old one scoring differently.
 * 2: a reasoning model's `<think>` block is dropped, and of several verdict
 * objects the last is read (`judge.doubt` when they differ).
 */
export const READING_RULES = "judge-reading/2";

/** How much of a reply a message quotes. */
export const REPLY_QUOTED = 160;

/** A reasoning model's thoughts opening a reply, as servers pass them on. */
const THOUGHTS_OPEN = /^\s*<(think|thinking|reasoning)>/i;
const THOUGHTS_CLOSE = /<\/(think|thinking|reasoning)>/i;

/**
 * A reply without the thoughts a reasoning model opens it with
 * (`<think>…</think>`, as Ollama passes DeepSeek-R1's and Qwen3's on, or
 * only the closing tag when the chat template wrote the opening one): what
 * they quote is not the verdict.
 *
 * @throws {JudgeReplyError} When the thoughts never end (a reply cut short).
 */
export function replyAnswer(text: string): string {
  const open = THOUGHTS_OPEN.exec(text);
  if (open !== null) {
    const rest = text.slice(open[0].length);
    const close = new RegExp(`</${open[1]}>`, "i").exec(rest);
    if (close === null) {
      throw new JudgeReplyError(
        `the judge's reply ends inside its <${
          open[1]
        }> block, before any verdict: ${
          JSON.stringify(clip(text, REPLY_QUOTED))
        }`,
      );
    }
    return rest.slice(close.index + close[0].length);
  }
  const close = THOUGHTS_CLOSE.exec(text);
  return close !== null && !text.slice(0, close.index).includes(`<${close[1]}`)
    ? text.slice(close.index + close[0].length)
    : text;
}

/** A JSON object found in a reply, and where it lies. */
export interface ReplyObject {
  /** The object. */
  value: Record<string, unknown>;
  /** Its first character's index. */
  start: number;
  /** Its last character's index. */
  end: number;
}

/**
 * The JSON objects a text holds, in order: each balanced `{...}` (strings
 * inside it skipped) that parses, the outermost ones; inside one that does
 * not parse, those it holds. Parsing stops once it has read four times the
 * text, so no reply makes the reading quadratic.
 */
export function replyObjects(text: string): ReplyObject[] {
  const spans: Array<[number, number]> = [];
  const open: number[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') {
      // A quote in the prose around the objects opens no string.
      inString = open.length > 0;
    } else if (c === "{") open.push(i);
    else if (c === "}" && open.length > 0) spans.push([open.pop()!, i]);
  }
  // Outer objects before those inside them.
  spans.sort((a, b) => a[0] - b[0]);
  const found: ReplyObject[] = [];
  let budget = 4 * text.length + 4096;
  let covered = -1;
  for (const [start, end] of spans) {
    if (start <= covered) continue;
    budget -= end - start + 1;
    if (budget < 0) break;
    let value: unknown;
    try {
      value = JSON.parse(text.slice(start, end + 1));
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      continue;
    }
    found.push({ value: value as Record<string, unknown>, start, end });
    covered = end;
  }
  return found;
}

/**
 * The verdict a reply holds: after the model's thoughts, the last JSON
 * object that has `key` (a model may quote a verdict before it gives its
 * own); when several such objects differ in `key`, a doubt that says so.
 * Without one, the first balanced `{...}`, for the message of what is
 * missing (a code fence or a sentence around it is tolerated).
 *
 * @throws {JudgeReplyError} When the reply holds no JSON object.
 */
export function replyVerdict(
  text: string,
  key: string,
): { reply: Record<string, unknown>; doubt?: string } {
  const answer = replyAnswer(text);
  const verdicts = replyObjects(answer).filter((o) =>
    Object.hasOwn(o.value, key)
  );
  const last = verdicts.at(-1);
  if (last !== undefined) {
    const doubt = verdictsDoubt(verdicts, key);
    return doubt === undefined
      ? { reply: last.value }
      : { reply: last.value, doubt };
  }
  return { reply: firstObject(answer, text) };
}

/**
 * A doubt when the reply's verdicts say different things: the last is read,
 * but the judge did not settle on it.
 */
export function verdictsDoubt(
  verdicts: readonly ReplyObject[],
  key: string,
): string | undefined {
  const said = verdicts.map((v) => JSON.stringify(v.value[key]) ?? "");
  if (new Set(said).size < 2) return undefined;
  return `the judge's reply holds ${verdicts.length} verdicts, "${key}" ${
    said.map((s) => clip(s, 40)).join(", then ")
  }; the last is read`;
}

/**
 * The doubt of a grade read from a reply: outside its scale (code
 * `judge.out_of_range`), or one of several the reply gave that differ
 * (`several`, from {@linkcode verdictsDoubt}); nothing when neither.
 */
export function gradeDoubt(
  score: number,
  [low, high]: readonly [number, number],
  several: string | undefined,
): { doubt?: string; code?: string } {
  if (!(score < low || score > high)) {
    return several !== undefined ? { doubt: several } : {};
  }
  const outside = `the judge gave ${score}, outside ${low}..${high}`;
  return {
    doubt: several !== undefined ? `${outside}; ${several}` : outside,
    code: "judge.out_of_range",
  };
}

/** The first balanced `{...}` of `answer`, as `text` shows it in messages. */
function firstObject(answer: string, text: string): Record<string, unknown> {
  const start = answer.indexOf("{");
  const end = start < 0 ? -1 : objectEnd(answer, start);
  if (end < 0) {
    throw new JudgeReplyError(
      `the judge's reply holds no JSON object: ${
        JSON.stringify(clip(text, REPLY_QUOTED))
      }`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(answer.slice(start, end + 1));
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    throw new JudgeReplyError(
      `the judge's reply is not valid JSON (${error.message}): ${
        JSON.stringify(clip(text, REPLY_QUOTED))
      }`,
    );
  }
  return value as Record<string, unknown>;
}

/** Where the object that opens at `start` closes, strings skipped; -1 if never. */
function objectEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return i;
  }
  return -1;
}

/** A list of objects under `key`, each checked by `item`. */
export function listOf<T>(
  reply: Record<string, unknown>,
  key: string,
  item: (entry: Record<string, unknown>, where: string) => T,
): T[] {
  const list = reply[key];
  if (!Array.isArray(list)) {
    throw new JudgeReplyError(
      `the judge's reply has no "${key}" list${
        list === undefined ? "" : `; "${key}" is ${JSON.stringify(list)}`
      }`,
    );
  }
  return list.map((entry, i) => {
    const where = `"${key}" item ${i + 1}`;
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
      throw new JudgeReplyError(
        `${where} of the judge's reply is not an object: ${
          JSON.stringify(entry)
        }`,
      );
    }
    return item(entry as Record<string, unknown>, where);
  });
}

/** A string field of an entry. */
export function textField(
  entry: Record<string, unknown>,
  key: string,
  where: string,
): string {
  const value = entry[key];
  if (typeof value !== "string") {
    throw new JudgeReplyError(
      `${where} of the judge's reply has no "${key}" text`,
    );
  }
  return value;
}

/** A boolean field of an entry. */
export function flagField(
  entry: Record<string, unknown>,
  key: string,
  where: string,
): boolean {
  const value = entry[key];
  if (typeof value !== "boolean") {
    throw new JudgeReplyError(
      `${where} of the judge's reply has "${key}": ${
        JSON.stringify(value) ?? "nothing"
      }, not true or false`,
    );
  }
  return value;
}

/** The reply's numeric `score` and its `reason`, when it gave one. */
export function scoreField(
  reply: Record<string, unknown>,
): { score: number; reason?: string } {
  const score = reply.score;
  if (typeof score !== "number" || !Number.isFinite(score)) {
    // 1e400 parses as Infinity: a number too large to be a grade.
    throw new JudgeReplyError(
      `the judge's reply has no numeric "score"${
        score === undefined
          ? ""
          : typeof score === "number"
          ? `; "score" is beyond the largest number`
          : `; "score" is ${JSON.stringify(score)}`
      }`,
    );
  }
  const reason = reply.reason;
  return typeof reason === "string" && reason !== ""
    ? { score, reason }
    : { score };
}
