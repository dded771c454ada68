/**
 * What a terminal acts on in text: the one list of characters that JSON
 * outputs write as `\u` escapes and tables escape, kept at the bottom so that
 * both (and the command line's messages) share it, and the escaping itself.
 *
 * @module
 */

/**
 * The characters (a regular expression class's body) that a terminal acts on
 * and JSON.stringify leaves raw: C1 controls, line and paragraph separators,
 * bidi marks, overrides and isolates, zero-width and invisible characters,
 * the BOM. C0 controls JSON escapes itself; tables escape them too.
 */
export const TERMINAL_UNSAFE_CHARS =
  "\\u0080-\\u009f\\u061c\\u200b-\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u2069\\ufeff";

// C0 controls and DEL, and what JSON leaves raw but a terminal acts on (C1
// controls, separators, bidi marks and overrides, invisible characters),
// and the variation selectors, which are invisible after a letter.
const UNSAFE = new RegExp(
  `[\\u0000-\\u001f\\u007f${TERMINAL_UNSAFE_CHARS}\\ufe00-\\ufe0f]`,
  "g",
);
const ZWJ = "\u200d";
// What an emoji's ZWJ sequence has before a joiner (a pictograph, its skin
// tone or presentation selector) and after it (the next pictograph): the
// joiner draws the two as one (👩‍💻), and shown as `\u{200d}` it would
// break the emoji apart.
const JOINS_AFTER =
  /\p{Extended_Pictographic}(?:\p{Emoji_Modifier}|[\ufe0e\ufe0f])?$/u;
const JOINS_BEFORE = /^\p{Extended_Pictographic}/u;
// What a presentation selector (U+FE0E text, U+FE0F emoji) may follow:
// a character that has both presentations (❤️, 1️⃣).
const PRESENTED = /\p{Emoji}$/u;
const ZWNJ = "\u200c";
// The scripts whose spelling writes a joiner or a non-joiner inside a word:
// Persian's می‌خواهم, Hindi's क्‍ष. There the character changes the letters'
// shapes, so it hides nothing, and escaped it would break every such word.
const JOINING_SCRIPTS = [
  "Arabic",
  "Syriac",
  "Devanagari",
  "Bengali",
  "Gurmukhi",
  "Gujarati",
  "Oriya",
  "Tamil",
  "Telugu",
  "Kannada",
  "Malayalam",
  "Sinhala",
];
// Built at the first joiner met, not when the module loads: V8 parses a
// `new RegExp` at once (about 1 ms for these), and most runs escape none.
let joiningScripts: RegExp[] | undefined;

/** Whether the (non-)joiner at `at` sits inside a word of a joining script. */
function inWord(at: number, text: string): boolean {
  const before = text[at - 1];
  const after = text[at + 1];
  if (before === undefined || after === undefined) return false;
  joiningScripts ??= JOINING_SCRIPTS.map((script) =>
    new RegExp(`^\\p{Script=${script}}$`, "u")
  );
  return joiningScripts.some((script) =>
    script.test(before) && script.test(after)
  );
}

/**
 * Whether the invisible character at `at` is part of what it is written in:
 * a ZWJ between two pictographs (an emoji), a presentation selector after
 * an emoji, a ZWJ or ZWNJ inside a word of a script that spells with them.
 * Elsewhere (between Latin letters, alone) either could hide a difference
 * between two names.
 */
function isWritten(c: string, at: number, text: string): boolean {
  if (c === ZWNJ) return inWord(at, text);
  if (c === ZWJ) {
    return (JOINS_AFTER.test(text.slice(Math.max(0, at - 4), at)) &&
      JOINS_BEFORE.test(text.slice(at + 1, at + 3))) || inWord(at, text);
  }
  return (c === "\ufe0f" || c === "\ufe0e") &&
    PRESENTED.test(text.slice(Math.max(0, at - 2), at));
}

/**
 * Escapes every character that could move the cursor, change colours or
 * reorder text in a terminal, or hide in it, as `\n`, `\t` or `\u{1b}`;
 * the joiners and selectors inside an emoji (👩‍💻, ❤️) stay, as the emoji,
 * and so do the joiners and non-joiners inside a Persian, Arabic or Indic
 * word (می‌خواهم, क्‍ष), where they shape the letters.
 *
 * @param text Untrusted text (model output, a reason).
 * @returns Text that prints as one inert line.
 *
 * @example
 * ```ts
 * import { escapeControl } from "./terminal.ts";
 * if (escapeControl("a\x1b[2Jb\n") !== "a\\u{1b}[2Jb\\n") throw new Error("unexpected");
 * if (escapeControl("👩\u200d💻 a\u200db") !== "👩\u200d💻 a\\u{200d}b") throw new Error("unexpected");
 * ```
 */
export function escapeControl(text: string): string {
  return text.replace(UNSAFE, (c, at: number) => {
    if (c === "\n") return "\\n";
    if (c === "\t") return "\\t";
    if (c === "\r") return "\\r";
    if (c.charCodeAt(0) >= 0x200c && isWritten(c, at, text)) return c;
    return `\\u{${c.codePointAt(0)!.toString(16)}}`;
  });
}

/**
 * `text` cut to `max` characters, with `…` where it was cut: how a message
 * quotes a command, a template, a reply or a stderr that may be long.
 *
 * @param text The text.
 * @param max The most characters kept.
 * @param mark What ends a text that was clipped.
 * @returns The text, or its first `max` characters and `mark`.
 *
 * @example
 * ```ts
 * import { clip } from "./terminal.ts";
 * if (clip("abcdef", 3) !== "abc…" || clip("abc", 3) !== "abc") throw new Error();
 * ```
 */
export function clip(text: string, max: number, mark = "…"): string {
  return text.length > max ? `${text.slice(0, whole(text, max))}${mark}` : text;
}

/**
 * A cut at `at` moved back off the middle of a surrogate pair: an emoji cut
 * in two left half of it, which JSON writes as the text `\ud83d`.
 */
function whole(text: string, at: number): number {
  const c = text.charCodeAt(at - 1);
  return c >= 0xd800 && c <= 0xdbff ? at - 1 : at;
}

/**
 * What a user's function returned, as TypeScript shows it, for a message
 * that says it was not what was expected: JSON would show `{ value: NaN }`
 * as `{"value":null}` and drop a function or `undefined`; a large object
 * (the unit, returned by mistake) is cut, as the message may go into every
 * Score's reason.
 *
 * @param value What the function returned.
 * @returns At most 200 characters and `…`.
 *
 * @example
 * ```ts
 * import { returnedText } from "./terminal.ts";
 * if (returnedText({ value: NaN }) !== "{ value: NaN }") throw new Error(returnedText({ value: NaN }));
 * if (returnedText({ text: "x".repeat(500) }).length > 201) throw new Error();
 * ```
 */
export function returnedText(value: unknown): string {
  return clip(
    Deno.inspect(value, {
      colors: false,
      compact: true,
      breakLength: Infinity,
      depth: 2,
      iterableLimit: 5,
      strAbbreviateSize: 60,
    }),
    200,
  );
}

/**
 * `text` cut in the middle to its first `head` and last `tail` characters,
 * with `…` where it was cut: how a message quotes a program's stderr, whose
 * end (Python's exception, after its traceback and any warnings) says as much
 * as its start (Node's error line).
 *
 * @param text The text.
 * @param head The most characters kept from the start.
 * @param tail The most characters kept from the end.
 * @returns The text, or its start, `…` and its end.
 *
 * @example
 * ```ts
 * import { clipMiddle } from "./terminal.ts";
 * if (clipMiddle("abcdefgh", 2, 3) !== "ab…fgh" || clipMiddle("abcde", 2, 3) !== "abcde") throw new Error();
 * ```
 */
export function clipMiddle(text: string, head: number, tail: number): string {
  if (text.length <= head + tail) return text;
  // The end starts after a low surrogate, not on it.
  const from = text.length - tail;
  const c = text.charCodeAt(from);
  const start = c >= 0xdc00 && c <= 0xdfff ? from + 1 : from;
  return `${text.slice(0, whole(text, head))}…${text.slice(start)}`;
}

/**
 * A word as a POSIX shell reads it back: as it is when plain, else in single
 * quotes, for a command a message tells a user to run.
 *
 * @param word The word: a path, a flag's value.
 * @returns The word, quoted unless it is plain.
 *
 * @example
 * ```ts
 * import { shellWord } from "./terminal.ts";
 * if (shellWord("evals/suite.yaml") !== "evals/suite.yaml") throw new Error();
 * if (shellWord("my evals/it's.yaml") !== "'my evals/it'\\''s.yaml'") throw new Error();
 * ```
 */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_.,:\/=@%+-]+$/.test(word)
    ? word
    : `'${word.replaceAll("'", `'\\''`)}'`;
}
