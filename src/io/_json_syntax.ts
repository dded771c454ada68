// Where a JSON text first breaks the grammar, as a person finds it in an
// editor: `JSON.parse`'s messages name no place for most errors (a NaN, a
// bare word) and quote the text around it, newlines included.

/** A JSON syntax error's place (1-based line and column) and what is wrong there. */
export interface JsonSyntaxPlace {
  /** The index in the text. */
  offset: number;
  /** The 1-based line. */
  line: number;
  /** The 1-based column, in UTF-16 units as the line is indexed. */
  column: number;
  /** What is wrong, in a few words. */
  problem: string;
  /**
   * Whether a whole JSON value was read before it: the text holds more
   * than one document (NDJSON, or `jq .` output), not a broken one.
   */
  afterValue: boolean;
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const WORDS = ["true", "false", "null"];

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/** The character at `i`, described for a message. */
function found(text: string, i: number): string {
  if (i >= text.length) return "the text ends";
  const c = String.fromCodePoint(text.codePointAt(i)!);
  const shown = /^[\x21-\x7e]$/.test(c)
    ? c
    : `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
  // A word (NaN, Infinity, undefined) is named whole.
  const word = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(text.slice(i, i + 40))?.[0];
  return `found ${JSON.stringify(word ?? shown)}`;
}

/**
 * Finds where a text stops being one JSON value.
 *
 * @param text The text `JSON.parse` refused.
 * @returns The place, or `undefined` when the text is valid JSON.
 */
export function jsonSyntaxPlace(text: string): JsonSyntaxPlace | undefined {
  let i = 0;
  // What each open container expects next: "value" (an array's first item
  // or the value after a colon), "key", "," (or its close) and so on.
  const stack: Array<"[" | "{"> = [];
  let afterValue = false;
  const fail = (at: number, problem: string): JsonSyntaxPlace => {
    let line = 1;
    let start = 0;
    for (
      let n = text.indexOf("\n");
      n >= 0 && n < at;
      n = text.indexOf("\n", n + 1)
    ) {
      line++;
      start = n + 1;
    }
    return { offset: at, line, column: at - start + 1, problem, afterValue };
  };
  const skip = () => {
    while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  };
  const string = (): JsonSyntaxPlace | undefined => {
    const open = i++;
    for (;;) {
      if (i >= text.length) {
        return fail(
          i,
          `the text ends inside the string opened at column ${
            open - text.lastIndexOf("\n", open)
          }`,
        );
      }
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return undefined;
      }
      if (c < 32) {
        return fail(i, "a control character inside a string (escape it)");
      }
      if (c === 92) {
        const e = text[i + 1];
        if (e === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
            return fail(i, "an invalid \\u escape");
          }
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else return fail(i, "an invalid escape");
      } else i++;
    }
  };
  // A value, then what follows it, until the top-level value is closed.
  let expect: "value" | "key" | "after" = "value";
  for (;;) {
    skip();
    if (expect === "value") {
      const c = text[i];
      if (c === "{" || c === "[") {
        stack.push(c);
        i++;
        skip();
        if (text[i] === (c === "{" ? "}" : "]")) {
          i++;
          stack.pop();
          expect = "after";
        } else expect = c === "{" ? "key" : "value";
        continue;
      }
      if (c === '"') {
        const bad = string();
        if (bad !== undefined) return bad;
      } else {
        NUMBER.lastIndex = i;
        const word = WORDS.find((w) => text.startsWith(w, i));
        if (word !== undefined) i += word.length;
        else if (NUMBER.test(text)) i = NUMBER.lastIndex;
        else return fail(i, `expected a JSON value, ${found(text, i)}`);
      }
      expect = "after";
      continue;
    }
    if (expect === "key") {
      if (text[i] !== '"') {
        return fail(
          i,
          `expected a member name in double quotes, ${found(text, i)}`,
        );
      }
      const bad = string();
      if (bad !== undefined) return bad;
      skip();
      if (text[i] !== ":") return fail(i, `expected ":", ${found(text, i)}`);
      i++;
      expect = "value";
      continue;
    }
    // After a value: its container goes on or closes, or the text ends.
    const top = stack.at(-1);
    if (top === undefined) {
      if (i === text.length) return undefined;
      afterValue = true;
      return fail(i, `more after the JSON value, ${found(text, i)}`);
    }
    const close = top === "{" ? "}" : "]";
    if (text[i] === ",") {
      i++;
      skip();
      expect = top === "{" ? "key" : "value";
      continue;
    }
    if (text[i] === close) {
      i++;
      stack.pop();
      continue;
    }
    return fail(i, `expected "," or "${close}", ${found(text, i)}`);
  }
}

/** One JSON value read from a text of several: its value, or where it breaks. */
export interface JsonValueRead {
  /** The 1-based line its first character is on. */
  line: number;
  /** Its text, from its first character. */
  text: string;
  /** The value, when it parses. */
  value?: unknown;
  /**
   * Where it breaks the grammar, when it does not parse: the 1-based line
   * in the whole text, the column (when the scanner found it) and what is
   * wrong. Nothing is read after it.
   */
  broken?: { line: number; column?: number; problem: string };
}

/**
 * Reads a text of JSON values one after another, as `jq .` prints them
 * (indented objects, each after the last; one value is the case of one), a
 * value at a time. A value that breaks the grammar ends the reading: it is
 * the last read, with where it breaks.
 *
 * @param text The text.
 * @returns The values read, in order.
 */
export function readJsonValues(text: string): JsonValueRead[] {
  const reads: JsonValueRead[] = [];
  let from = 0;
  let line = 1;
  while (from < text.length) {
    const rest = text.slice(from);
    const lead = rest.length - rest.trimStart().length;
    if (lead === rest.length) break;
    const at = line + countNewlines(rest, lead);
    const place = jsonSyntaxPlace(rest);
    const piece = place === undefined || !place.afterValue
      ? rest
      : rest.slice(0, place.offset);
    const own = piece.slice(lead);
    if (place !== undefined && !place.afterValue) {
      reads.push({
        line: at,
        text: own,
        broken: {
          line: line + place.line - 1,
          column: place.column,
          problem: place.problem,
        },
      });
      break;
    }
    try {
      reads.push({ line: at, text: own, value: JSON.parse(piece) });
    } catch (error) {
      // What the scanner lets through and V8 refuses (a number too deep).
      if (!(error instanceof SyntaxError)) throw error;
      reads.push({
        line: at,
        text: own,
        broken: { line: at, problem: error.message },
      });
      break;
    }
    if (place === undefined) break;
    line += countNewlines(rest, place.offset);
    from += place.offset;
  }
  return reads;
}

/** The newlines in `text` before `end`. */
function countNewlines(text: string, end: number): number {
  let n = 0;
  for (
    let i = text.indexOf("\n");
    i >= 0 && i < end;
    i = text.indexOf("\n", i + 1)
  ) {
    n++;
  }
  return n;
}
