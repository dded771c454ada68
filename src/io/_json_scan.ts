/**
 * Source-span scanning of already-validated JSON text, so that a value can be
 * passed on verbatim: key order (integer-like keys included), number spellings
 * and integers beyond 2^53 survive, which `JSON.parse` would lose.
 *
 * Every function here assumes its input has been accepted by `JSON.parse`.
 * Below them, {@linkcode repeatedKey}: a key an object gives twice, which
 * `JSON.parse` hides.
 *
 * @module
 */

const QUOTE = 34;
const BACKSLASH = 92;
const COLON = 58;

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/** Index of the first non-whitespace character at or after `i`. */
export function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** Index just past the string that opens at `i`. */
export function skipString(text: string, i: number): number {
  let from = i + 1;
  for (;;) {
    const q = text.indexOf('"', from);
    if (q < 0) return text.length;
    let slashes = 0;
    for (let b = q - 1; text.charCodeAt(b) === BACKSLASH; b--) slashes++;
    if (slashes % 2 === 0) return q + 1;
    from = q + 1;
  }
}

const STRUCTURAL = /["{}[\]]/g;

/**
 * Index just past the JSON value that starts at `i`.
 *
 * @param text Valid JSON text.
 * @param i Where the value starts (no leading whitespace).
 * @returns The index after it.
 */
export function skipValue(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return skipString(text, i);
  if (c === 123 || c === 91) {
    let depth = 0;
    STRUCTURAL.lastIndex = i;
    for (;;) {
      const m = STRUCTURAL.exec(text);
      if (m === null) return text.length;
      const ch = m[0];
      if (ch === '"') {
        STRUCTURAL.lastIndex = skipString(text, m.index);
      } else if (ch === "{" || ch === "[") {
        depth++;
      } else if (--depth === 0) {
        return m.index + 1;
      }
    }
  }
  let j = i;
  while (j < text.length) {
    const d = text.charCodeAt(j);
    if (d === 44 || d === 125 || d === 93 || isSpace(d)) break;
    j++;
  }
  return j;
}

/**
 * The source span of a top-level member's value in a JSON object. With
 * duplicate keys the last one wins, as in `JSON.parse`.
 *
 * @param text Valid JSON text of an object.
 * @param key The member's name.
 * @param start Where the object starts.
 * @returns `[start, end)` of the value, or `undefined` when absent.
 */
export function memberSpan(
  text: string,
  key: string,
  start = 0,
): [number, number] | undefined {
  return spanOf(text, key, start, false);
}

/**
 * The source span of a top-level member's value in a JSON object, the first
 * one of its name: read no further than it. For a text whose keys are known
 * to be unique, or a caller that checks the value it finds; otherwise
 * {@linkcode memberSpan}, whose last one is what `JSON.parse` reads.
 *
 * @param text Valid JSON text of an object.
 * @param key The member's name.
 * @param start Where the object starts.
 * @returns `[start, end)` of the value, or `undefined` when absent.
 */
export function firstMemberSpan(
  text: string,
  key: string,
  start = 0,
): [number, number] | undefined {
  return spanOf(text, key, start, true);
}

/** The span of the first or the last top-level member named `key`. */
function spanOf(
  text: string,
  key: string,
  start: number,
  first: boolean,
): [number, number] | undefined {
  let found: [number, number] | undefined;
  eachMember(text, start, (name, from, to) => {
    if (name !== key) return false;
    found = [from, to];
    return first;
  });
  return found;
}

/**
 * The names of a JSON object's top-level members, in order, a repeated one
 * as often as it comes (which `JSON.parse` hides: the last one wins).
 *
 * @param text Valid JSON text of an object.
 * @returns The names; none when the text is not an object.
 */
export function memberNames(text: string): string[] {
  const names: string[] = [];
  eachMember(text, 0, (name) => void names.push(name));
  return names;
}

/**
 * Calls `fn` with each top-level member's name and value span, in order,
 * until it returns true.
 */
function eachMember(
  text: string,
  start: number,
  fn: (name: string, from: number, to: number) => boolean | void,
): void {
  let i = skipSpace(text, start);
  if (text.charCodeAt(i) !== 123) return;
  i = skipSpace(text, i + 1);
  while (i < text.length && text.charCodeAt(i) === QUOTE) {
    const keyEnd = skipString(text, i);
    const raw = text.slice(i + 1, keyEnd - 1);
    const name = raw.includes("\\")
      ? JSON.parse(text.slice(i, keyEnd)) as string
      : raw;
    i = skipSpace(text, skipSpace(text, keyEnd) + 1); // past the colon
    const valueEnd = skipValue(text, i);
    if (fn(name, i, valueEnd) === true) return;
    i = skipSpace(text, valueEnd);
    if (text.charCodeAt(i) !== 44) break;
    i = skipSpace(text, i + 1);
  }
}

/**
 * The source spans of the elements of a JSON array.
 *
 * @param text Valid JSON text of an array.
 * @returns `[start, end)` of each element.
 */
export function elementSpans(text: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== 91) return spans;
  i = skipSpace(text, i + 1);
  while (i < text.length && text.charCodeAt(i) !== 93) {
    const end = skipValue(text, i);
    spans.push([i, end]);
    i = skipSpace(text, end);
    if (text.charCodeAt(i) === 44) i = skipSpace(text, i + 1);
  }
  return spans;
}

/**
 * Removes the whitespace outside strings from valid JSON text: the compact
 * form `JSON.stringify` writes, with every other byte kept.
 *
 * @param text Valid JSON text.
 * @returns The compact text.
 */
export function compactJson(text: string): string {
  if (!/[ \t\n\r]/.test(text)) return text;
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = skipString(text, i);
      out += text.slice(i, end);
      i = end;
    } else {
      if (!isSpace(c)) out += text[i];
      i++;
    }
  }
  return out;
}

/** What one read of a JSON text's structure finds. */
export interface JsonShape {
  /** Its deepest nesting of arrays and objects (0 for a scalar). */
  depth: number;
  /** Its objects' keys as written, a repeated one each time it comes. */
  keys: number;
}

/**
 * Reads valid JSON text's structure once: how deep it nests, and how many
 * keys its objects give as written (which `JSON.parse` hides when one comes
 * twice). Strings are skipped whole, so nothing inside them counts.
 *
 * @param text Valid JSON text.
 * @param start Where to start.
 * @param end Where to stop.
 * @returns Its shape.
 */
export function shapeOf(
  text: string,
  start = 0,
  end: number = text.length,
): JsonShape {
  let keys = 0;
  let depth = 0;
  let deepest = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // A string a colon follows is a key (a value is followed by a comma
      // or a closing bracket).
      const after = skipSpace(text, skipString(text, i));
      if (text.charCodeAt(after) === COLON) {
        keys++;
        i = after;
      } else i = after - 1;
    } else if (c === 123 || c === 91) {
      if (++depth > deepest) deepest = depth;
    } else if (c === 125 || c === 93) depth--;
  }
  return { depth: deepest, keys };
}

// A key an object of a JSON text gives twice, which `JSON.parse` hides (the
// last one wins, so `{"input": "a", "input": "b"}` would run "b"). Datasets
// and unit records refuse it, as their YAML readers and subprocess verdicts
// do.
//
// This runs on every line of every dataset, so it does not parse again: it
// compares the keys the parsed value kept with the keys as written, and only
// when they differ is the text read again, to name the key. A long text's
// keys are counted by one read of its structure (`shapeOf`, which a caller
// may have made already), skipping strings whole: its prose, with its
// colons, costs one search for the quote that ends it. A short one's are
// counted by its colons that follow an unescaped quote (white space between
// allowed), cheaper on a few dozen bytes: each key ends in one, and a string
// makes one more only when it opens with a colon (then the text is read
// again, and names no key).

/** Above this many characters, keys are counted by reading the structure. */
const LONG_TEXT = 512;

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
 * What {@linkcode repeatedKey} saw of the values on its way: a number that
 * `JSON.parse` read as ±Infinity (`1e400`), which JSON text can only write
 * as `null`. Told on the walk that counts the keys, which visits every value
 * of every record anyway: a walk of its own cost a run about 5%.
 */
export interface WalkNotes {
  /** Set when a number is ±Infinity; left as it was otherwise. */
  infinite: boolean;
}

/**
 * The first key an object in a JSON value's text gives twice.
 *
 * @param text The text `value` was parsed from (or that holds it).
 * @param value What `JSON.parse` made of `text[start, end)`.
 * @param start Where the value's text starts.
 * @param end Where it ends.
 * @param notes Where to note a number read as ±Infinity, when given.
 * @param written The keys of `text[start, end)` as written, when its
 *   {@linkcode shapeOf} has been read already.
 * @returns The key, or `undefined` when no object repeats one.
 */
export function repeatedKey(
  text: string,
  value: unknown,
  start = 0,
  end: number = text.length,
  notes?: WalkNotes,
  written?: number,
): RepeatedKey | undefined {
  const kept = keysOf(value, notes);
  // No key kept: no object had any, so none had one twice.
  if (kept === 0) return undefined;
  const keys = written ??
    (end - start > LONG_TEXT
      ? shapeOf(text, start, end).keys
      : keyColons(text, start, end));
  return keys === kept ? undefined : scan(text, start, end);
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

/** The keys of every object in a parsed JSON value. */
function keysOf(value: unknown, notes: WalkNotes | undefined): number {
  if (typeof value !== "object" || value === null) return 0;
  let keys = 0;
  let infinite = false;
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
        } else if (typeof item === "number" && item - item !== 0) {
          infinite = true;
        }
      }
    } else {
      for (const key in top) {
        keys++;
        const item = (top as Record<string, unknown>)[key];
        if (typeof item === "object" && item !== null) {
          (stack ??= []).push(item);
        } else if (typeof item === "number" && item - item !== 0) {
          infinite = true;
        }
      }
    }
    top = stack?.pop();
  }
  if (infinite && notes !== undefined) notes.infinite = true;
  return keys;
}

/**
 * The colons of `text[start, end)` after an unescaped quote and white space:
 * an escaped one (`\"`, JSON text inside a string) ends no key.
 */
function keyColons(text: string, start: number, end: number): number {
  let count = 0;
  for (
    let i = text.indexOf(":", start);
    i >= 0 && i < end;
    i = text.indexOf(":", i + 1)
  ) {
    let j = i - 1;
    while (j > start && isSpace(text.charCodeAt(j))) j--;
    if (text.charCodeAt(j) !== QUOTE) continue;
    let slashes = 0;
    while (text.charCodeAt(--j) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) count++;
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
