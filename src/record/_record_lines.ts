/**
 * The line grammar of a RunRecord as evalpipe writes it, in one place for
 * every reader: the header on the first line, ending where its body's list
 * opens; one entry a line, each followed by a comma but the last; then a line
 * that closes the list with the record's last fields. A record cut short by a
 * crash ends at its last whole line.
 *
 * @module
 */

import { INVALID_UTF8, TOO_LONG } from "../io/line_stream.ts";

/** A record's header as its first line holds it. */
export interface HeaderLine {
  /** Its fields, the body's list among them (empty). */
  fields: Record<string, unknown>;
  /** The list its body fills: `units`, or `scores` in a record of version 1. */
  body: "units" | "scores";
}

const HEADER =
  /^\s*\{\s*"evalpipe_run_record"\s*:\s*[12]\s*,.*"(units|scores)":\[$/;

/**
 * A record's first line, read as a header.
 *
 * @param text The line.
 * @returns The header, or `undefined` when the line is not one as evalpipe
 *   writes it (a record edited by hand, or not a record).
 */
export function headerLine(text: string): HeaderLine | undefined {
  const m = HEADER.exec(text);
  if (m === null) return undefined;
  try {
    return {
      fields: JSON.parse(`${text}]}`) as Record<string, unknown>,
      body: m[1] as HeaderLine["body"],
    };
  } catch (error) {
    // A line that only looks like a header: the file is read another way.
    if (!(error instanceof SyntaxError)) throw error;
    return undefined;
  }
}

/**
 * What a line of a record's body holds: an entry (a unit with its Scores, or
 * a Score in a record of version 1), the end of the body with the record's
 * last fields (`undefined` when the record was cut short there), or nothing
 * (a blank line, `undefined`).
 */
export type BodyLine =
  | { entry: unknown }
  | { end: Record<string, unknown> }
  | { end: undefined; torn: string }
  | undefined;

/**
 * A line of a record's body, read.
 *
 * @param text The line.
 * @param error Why the line cannot be trusted, as `LineStream` says it
 *   (invalid UTF-8, too long), if it cannot.
 * @returns What it holds.
 */
export function bodyLine(text: string, error?: string): BodyLine {
  // Only the last line can be torn by a crash; the record ends before it.
  // `torn` says why, for a reader that finds lines after it.
  if (error !== undefined) return { end: undefined, torn: unreadable(error) };
  if (text.startsWith("]")) {
    try {
      return { end: JSON.parse(`{${text.slice(2)}`) };
    } catch (error) {
      // A closing line cut short: the record did not finish.
      if (!(error instanceof SyntaxError)) throw error;
      return { end: undefined, torn: error.message };
    }
  }
  const json = text.endsWith(",") ? text.slice(0, -1) : text;
  if (json.trim() === "") return undefined;
  try {
    return { entry: JSON.parse(json) };
  } catch (error) {
    // A torn line: the record ends at the line before.
    if (!(error instanceof SyntaxError)) throw error;
    return { end: undefined, torn: error.message };
  }
}

/**
 * Why a line `LineStream` could not read is not JSON, in the words of a
 * torn line's reason.
 *
 * @param error The line's `error`.
 * @returns E.g. `not valid UTF-8`.
 */
export function unreadable(error: string): string {
  if (error === INVALID_UTF8) return "not valid UTF-8";
  if (error.startsWith(TOO_LONG)) {
    return `longer than ${error.slice(TOO_LONG.length)}`;
  }
  return error;
}

/**
 * The error of a line that is not JSON with lines after it: a crash tears
 * only a record's last line, so this one was damaged or edited by hand, and
 * reading the record as cut short there would drop every line after it.
 *
 * @param path The record, for the message.
 * @param line The line's 1-based number.
 * @param torn Why it is not JSON.
 * @returns The message.
 */
export function notLastMessage(
  path: string,
  line: number,
  torn: string,
): string {
  return `Invalid run record ${
    JSON.stringify(path)
  } line ${line}: it is not JSON (${torn}), and lines follow it: only a record's last line can be cut short by a crash`;
}
