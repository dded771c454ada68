/**
 * Whether a text starts as a RunRecord: what every reader of Scores files
 * asks first, without loading the record's reader.
 *
 * @module
 */

/**
 * Tells whether a text is a RunRecord rather than NDJSON of Scores.
 *
 * @param text The file's text, or its first line.
 * @returns Whether it starts like a RunRecord.
 *
 * @example A RunRecord, and a line of Scores NDJSON
 * ```ts
 * import { isRunRecord } from "./_sniff.ts";
 * if (!isRunRecord('{"evalpipe_run_record":1,"run_id":"r1"')) throw new Error("a RunRecord");
 * if (isRunRecord('{"metric":"m","status":"scored"}')) throw new Error("NDJSON of Scores");
 * ```
 */
export function isRunRecord(text: string): boolean {
  return /^\s*\{\s*"evalpipe_run_record"\s*:/.test(text);
}
