/**
 * A key an object of a JSON text gives twice, which `JSON.parse` hides (the
 * last one wins, so `{"input": "a", "input": "b"}` would run "b"). Datasets
 * and unit records refuse it, as their YAML readers and subprocess verdicts
 * do.
 *
 * This runs on every line of every dataset, so it does not parse again: the
 * text's count of `"`-then-`:` pairs (white space between them allowed) is at
 * least the number of keys as written, one per key's closing quote, and a
 * `":` inside a string only adds to it. When that count equals the keys of
 * the parsed value, no key was lost to a repeat. Only otherwise is the text
 * scanned, to name the key (or to find that the extra pairs were in strings).
 *
 * @module
 */

import { skipSpace, skipString } from "./_json_scan.ts";

const QUOTE = 34;
const COLON = 58;

/** A key an object gives twice, where its second appearance stands. */
export interface RepeatedKey {
  /**
   * Its path from the value's root, as messages write paths: `input`,
   * `metadata.topic`, `tool_calls[1].name`.
   */
  path: string;
  /** The index of the second appearance's opening quote in the text. */
  offset: number;
}

/**
 * The first key an object in a JSON value's text gives twice.
 *
 * @param text The text `value` was parsed from (or that holds it).
 * @param value What `JSON.parse` made of `text[start, end)`.
 * @param start Where the value's text starts.
 * @param end Where it ends.
 * @returns The key, or `undefined` when no object repeats one.
 */
export function repeatedKey(
  text: string,
  value: unknown,
  start = 0,
  end: number = text.length,
): RepeatedKey | undefined {
  const kept = keysOf(value);
  // No key kept: no object had any, so none had one twice.
  if (kept === 0 || keyColons(text, start, end) === kept) return undefined;
  return scan(text, start, end);
}

/**
 * Why a record whose object gives a key twice is refused, for its message
 * (`key "input" appears twice: keep one`).
 *
 * @param path The key's path in the record.
 * @param line The file's line its second appearance is on, when the record
 *   is named otherwise (by its position, and the line it starts on).
 * @returns The reason.
 */
export function appearsTwice(path: string, line?: number): string {
  return `key ${JSON.stringify(path)} appears twice${
    line === undefined ? "" : ` (again at line ${line})`
  }: keep one`;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/** The keys of every object in a parsed JSON value. */
function keysOf(value: unknown): number {
  if (typeof value !== "object" || value === null) return 0;
  let keys = 0;
  // A stack, not recursion: a line may nest millions of levels deep. Made
  // only for a value that nests (most records' values are text). No list of
  // an object's values either: this runs on every record of a run.
  let stack: object[] | undefined;
  for (let top: object | undefined = value; top !== undefined;) {
    if (Array.isArray(top)) {
      for (let i = 0; i < top.length; i++) {
        const item: unknown = top[i];
        if (typeof item === "object" && item !== null) {
          (stack ??= []).push(item);
        }
      }
    } else {
      for (const key in top) {
        keys++;
        const item = (top as Record<string, unknown>)[key];
        if (typeof item === "object" && item !== null) {
          (stack ??= []).push(item);
        }
      }
    }
    top = stack?.pop();
  }
  return keys;
}

/** The colons of `text[start, end)` after a quote and white space. */
function keyColons(text: string, start: number, end: number): number {
  let count = 0;
  for (
    let i = text.indexOf(":", start);
    i >= 0 && i < end;
    i = text.indexOf(":", i + 1)
  ) {
    let j = i - 1;
    while (j > start && isSpace(text.charCodeAt(j))) j--;
    if (text.charCodeAt(j) === QUOTE) count++;
  }
  return count;
}

/** An object or array the scan is inside. */
interface Open {
  /** An object's keys so far; `undefined` for an array. */
  keys: Set<string> | undefined;
  /** The object's latest key, or the array's current index. */
  at: string | number;
}

/** Finds the first repeated key by reading the text's structure. */
function scan(
  text: string,
  start: number,
  end: number,
): RepeatedKey | undefined {
  const open: Open[] = [];
  let i = start;
  while (i < end) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const close = skipString(text, i);
      const keys = open.at(-1)?.keys;
      // In an object, a string a colon follows is a key (a value is
      // followed by a comma or the closing brace).
      const colon = keys === undefined ? -1 : skipSpace(text, close);
      if (keys !== undefined && text.charCodeAt(colon) === COLON) {
        const raw = text.slice(i + 1, close - 1);
        const name = raw.includes("\\")
          ? JSON.parse(text.slice(i, close)) as string
          : raw;
        if (keys.has(name)) return { path: pathOf(open, name), offset: i };
        keys.add(name);
        open.at(-1)!.at = name;
        i = colon + 1;
      } else i = close;
      continue;
    }
    if (c === 123 || c === 91) {
      open.push({ keys: c === 123 ? new Set() : undefined, at: 0 });
    } else if (c === 125 || c === 93) open.pop();
    else if (c === 44) {
      const top = open.at(-1);
      if (top !== undefined && top.keys === undefined) {
        top.at = (top.at as number) + 1;
      }
    }
    i++;
  }
  return undefined;
}

/** The path to `name` in the innermost open object. */
function pathOf(open: readonly Open[], name: string): string {
  let path = "";
  for (let k = 0; k < open.length - 1; k++) {
    const at = open[k]!.at;
    path += typeof at === "number" ? `[${at}]` : path === "" ? at : `.${at}`;
  }
  return path === "" ? name : `${path}.${name}`;
}
