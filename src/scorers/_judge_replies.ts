// Reading the JSON verdicts the RAG and quality judges ask for: the object
// in a reply, and its fields of the asked types. Whatever does not fit is a
// JudgeReplyError that says what, so the Score is an error, never a 0.

import { JudgeReplyError } from "./llm_judge.ts";

/** `text` clipped to `max` characters, for messages. */
export function clip(text: string, max = 160): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * The JSON object a reply holds: the whole reply, or the first balanced
 * `{...}` in it (a code fence or a sentence around it is tolerated).
 */
export function replyObject(text: string): Record<string, unknown> {
  const start = text.indexOf("{");
  const end = start < 0 ? -1 : objectEnd(text, start);
  if (end < 0) {
    throw new JudgeReplyError(
      `the judge's reply holds no JSON object: ${JSON.stringify(clip(text))}`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text.slice(start, end + 1));
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    throw new JudgeReplyError(
      `the judge's reply is not valid JSON (${error.message}): ${
        JSON.stringify(clip(text))
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
    throw new JudgeReplyError(
      `the judge's reply has no numeric "score"${
        score === undefined ? "" : `; "score" is ${JSON.stringify(score)}`
      }`,
    );
  }
  const reason = reply.reason;
  return typeof reason === "string" && reason !== ""
    ? { score, reason }
    : { score };
}
