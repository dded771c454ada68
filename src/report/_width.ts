// How many columns text takes in a terminal: East Asian Wide and Fullwidth
// characters (CJK, most emoji) take two, combining marks and invisible
// characters none, the rest one. East Asian Width is Unicode's table, read
// through `get-east-asian-width`; the rest is regular expressions over
// Unicode properties the engine knows. `string-width` does the same with a
// grapheme segmenter and an emoji-sequence expression, whose set-up costs
// about 80 ms of every `view`; this costs about 2.

import { eastAsianWidth } from "get-east-asian-width";

// No column: combining marks, default ignorables (ZWJ, variation selectors,
// bidi marks, the BOM...), and the medial and final Hangul jamo that join
// the syllable before them.
const ZERO = /[\p{Mn}\p{Me}\p{Default_Ignorable_Code_Point}\u1160-\u11ff]/u;
// A pictograph that is text by default and an emoji with U+FE0F after it.
const PICTOGRAPH = /\p{Extended_Pictographic}/u;
const ZWJ = 0x200d;
const VS16 = 0xfe0f;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** The columns one code point takes after `previous` in the same text. */
function columns(cp: number, char: string, state: State): number {
  if (cp < 0x7f) return cp < 0x20 ? 0 : 1;
  if (cp < 0xa0) return 0;
  if (state.joined) {
    // After a ZWJ, the next pictograph is drawn into the one before.
    state.joined = false;
    if (PICTOGRAPH.test(char)) return 0;
  }
  if (cp === ZWJ) {
    state.joined = state.pictograph;
    return 0;
  }
  if (cp === VS16) {
    // A text-style pictograph asked for its emoji presentation: two wide.
    const widen = state.narrowPictograph;
    state.narrowPictograph = false;
    return widen ? 1 : 0;
  }
  if (cp >= 0x1f3fb && cp <= 0x1f3ff && state.pictograph) return 0; // skin tone
  if (cp >= 0x1f1e6 && cp <= 0x1f1ff) {
    // Regional indicators: a pair is one flag, two columns.
    state.pictograph = false;
    state.narrowPictograph = false;
    state.flagHalf = !state.flagHalf;
    return state.flagHalf ? 2 : 0;
  }
  state.flagHalf = false;
  if (ZERO.test(char)) return 0;
  const width = eastAsianWidth(cp);
  state.pictograph = PICTOGRAPH.test(char);
  state.narrowPictograph = state.pictograph && width === 1;
  return width;
}

interface State {
  joined: boolean;
  pictograph: boolean;
  narrowPictograph: boolean;
  flagHalf: boolean;
}

const fresh = (): State => ({
  joined: false,
  pictograph: false,
  narrowPictograph: false,
  flagHalf: false,
});

/** The columns `text` takes in a terminal. */
export function displayWidth(text: string): number {
  if (PRINTABLE_ASCII.test(text)) return text.length;
  const state = fresh();
  let width = 0;
  for (const char of text) width += columns(char.codePointAt(0)!, char, state);
  return width;
}

/**
 * Cuts `text` to at most `width` columns, marking a cut with `…`; a wide
 * character that would straddle the edge goes, and what draws into the last
 * character kept (its combining marks, the rest of its emoji) stays.
 */
export function clipWidth(text: string, width: number): string {
  if (PRINTABLE_ASCII.test(text)) {
    if (text.length <= width) return text;
    return width <= 1 ? "…".slice(0, width) : `${text.slice(0, width - 1)}…`;
  }
  if (displayWidth(text) <= width) return text;
  if (width <= 1) return "…".slice(0, width);
  const state = fresh();
  let used = 0;
  let end = 0;
  for (const char of text) {
    const w = columns(char.codePointAt(0)!, char, state);
    if (used + w > width - 1) break;
    used += w;
    end += char.length;
  }
  return `${text.slice(0, end)}…`;
}

/** `text` with spaces after it up to `width` columns. */
export function padEndWidth(text: string, width: number): string {
  const w = displayWidth(text);
  return w >= width ? text : text + " ".repeat(width - w);
}
