/**
 * What a terminal acts on in text: the one list of characters that JSON
 * outputs write as `\u` escapes and tables escape, kept at the bottom so that
 * both (and the command line's messages) share it.
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
