/**
 * Source-span scanning of already-validated JSON text, so that a value can be
 * passed on verbatim: key order (integer-like keys included), number spellings
 * and integers beyond 2^53 survive, which `JSON.parse` would lose.
 *
 * Every function here assumes its input has been accepted by `JSON.parse`.
 *
 * @module
 */

const QUOTE = 34;
const BACKSLASH = 92;

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
  let found: [number, number] | undefined;
  eachMember(text, start, (name, from, to) => {
    if (name === key) found = [from, to];
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

/** Calls `fn` with each top-level member's name and value span, in order. */
function eachMember(
  text: string,
  start: number,
  fn: (name: string, from: number, to: number) => void,
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
    fn(name, i, valueEnd);
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

/**
 * Tells whether valid JSON text nests arrays and objects deeper than `limit`.
 *
 * @param text Valid JSON text.
 * @param limit The deepest nesting allowed.
 * @param start Where to start.
 * @param end Where to stop.
 * @returns Whether it is deeper.
 */
export function nestedDeeperThan(
  text: string,
  limit: number,
  start = 0,
  end = text.length,
): boolean {
  // Nesting deeper than `limit` takes more than 2 * limit bracket characters.
  if (end - start <= 2 * limit) return false;
  let depth = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = skipString(text, i) - 1;
    else if (c === 123 || c === 91) {
      if (++depth > limit) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}
