/**
 * A case's `expected` as the dataset wrote it: the verbatim JSON text a
 * reader keeps beside the parsed value (`1.0`, an integer past 2^53, which
 * `JSON.parse` makes `1` and a rounded double). Pure: the dataset readers,
 * the scorers and the cases-changed check of `diff` all read it here.
 *
 * @module
 */

/** Where a record keeps `expected`'s text beside its value. */
const VERBATIM = Symbol.for("evalpipe.verbatim_expected");

interface Verbatim {
  value: unknown;
  text: string;
}

/**
 * Attaches the verbatim JSON text of `expected` to a record, so that it
 * reaches scorers as it was written. Object spread copies it along.
 *
 * @param record A case or unit record.
 * @param text The compact source text of its `expected` value.
 */
export function attachVerbatimExpected(
  record: { expected?: unknown },
  text: string,
): void {
  (record as Record<symbol, Verbatim>)[VERBATIM] = {
    value: record.expected,
    text,
  };
}

/**
 * Copies `expected`, with its verbatim text, from one record to another.
 *
 * @param to The record to set.
 * @param from The record to read.
 */
export function copyExpected(
  to: { expected?: unknown },
  from: { expected?: unknown },
): void {
  if (from.expected === undefined) return;
  to.expected = from.expected;
  const verbatim = (from as Record<symbol, Verbatim | undefined>)[VERBATIM];
  if (verbatim !== undefined) {
    (to as Record<symbol, Verbatim>)[VERBATIM] = verbatim;
  }
}

/**
 * The JSON text of a record's `expected`: verbatim when a loader read it from
 * JSON source, `null` when absent.
 *
 * @param record A case or unit record.
 * @returns Compact JSON text.
 *
 * @example
 * ```ts
 * import { expectedJson } from "./_expected_text.ts";
 * if (expectedJson({}) !== "null") throw new Error("unexpected");
 * if (expectedJson({ expected: { b: 1, a: 2 } }) !== '{"b":1,"a":2}') throw new Error("unexpected");
 * ```
 */
export function expectedJson(record: { expected?: unknown }): string {
  const verbatim = (record as Record<symbol, Verbatim | undefined>)[VERBATIM];
  // A verbatim text only stands while `expected` is still the value it was read as.
  if (verbatim !== undefined && Object.is(verbatim.value, record.expected)) {
    return verbatim.text;
  }
  return record.expected === undefined
    ? "null"
    : JSON.stringify(record.expected) ?? "null";
}
