// JSON read with its numbers' text kept: `1.0` stays `1.0`, an integer
// past 2^53 keeps its digits, where `JSON.parse` makes them `1` and a
// rounded double. Through JSON.rawJSON and the reviver's `source` (ES2026,
// in V8 since 11.4; not yet in TypeScript's lib). Pure; loaded by `diff`
// and baselines only, not by a plain run.

import { expectedJson } from "./_expected_text.ts";

interface RawJson {
  rawJSON(text: string): object;
  isRawJSON(value: unknown): boolean;
}

const Raw = JSON as unknown as RawJson;

/**
 * Parses JSON text with each number kept as its text: `JSON.stringify`
 * writes it back as written.
 *
 * @param text Valid JSON text.
 * @returns The value, its numbers raw JSON.
 */
export function parseKeepingNumbers(text: string): unknown {
  return JSON.parse(
    text,
    (_key, value, context?: { source?: string }) =>
      typeof value === "number" && context?.source !== undefined
        ? Raw.rawJSON(context.source)
        : value,
  );
}

/**
 * Whether a value is a number {@linkcode parseKeepingNumbers} kept as text.
 *
 * @param value Any value.
 * @returns `true` for raw JSON.
 */
export function isRawJson(value: unknown): boolean {
  return Raw.isRawJSON(value);
}

/**
 * A record's `expected` with its numbers as the dataset wrote them: `1.0`
 * stays `1.0`, an integer past 2^53 keeps its digits; `null` when absent.
 * What a baseline keeps and a later run's case is compared by.
 *
 * @param record A case or unit record.
 * @returns The value itself where its text is what `JSON.stringify`
 *   writes, else its verbatim text read by {@linkcode parseKeepingNumbers}.
 */
export function expectedAsWritten(record: { expected?: unknown }): unknown {
  const expected = record.expected;
  // Most answers are strings, whose text can differ only in escapes.
  if (typeof expected === "string") return expected;
  const text = expectedJson(record);
  return text === JSON.stringify(expected)
    ? expected
    : parseKeepingNumbers(text);
}
