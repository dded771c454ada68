/**
 * evalpipe's `passed`, `reason` and `target_name` in an exported Score's
 * provenance. evalglass reads a record and writes it again (`persist`) with
 * only the fields of its own Score, and keeps a Score's provenance: from
 * there the three are read back.
 *
 * @module
 */

import type { Score } from "../score/types.ts";

/** The provenance key that holds them. */
const KEY = "evalpipe";

/**
 * The Score's provenance with its `passed`, `reason` and `target_name` under
 * `evalpipe`; a provenance that has an `evalpipe` key of its own is left as
 * it is.
 *
 * @param score An evalpipe Score.
 * @returns The provenance to export, `undefined` when there is none.
 */
export function withVerdict(
  score: Score,
): Record<string, unknown> | undefined {
  const own = score.provenance !== undefined &&
      Object.keys(score.provenance).length > 0
    ? score.provenance
    : undefined;
  if (own !== undefined && Object.hasOwn(own, KEY)) return own;
  const kept: Record<string, unknown> = {};
  if (score.passed !== undefined) kept.passed = score.passed;
  if (score.reason !== undefined) kept.reason = score.reason;
  if (score.target_name !== undefined) kept.target_name = score.target_name;
  if (Object.keys(kept).length === 0) return own;
  return { ...own, [KEY]: kept };
}

const FIELDS: Record<string, string> = {
  passed: "boolean",
  reason: "string",
  target_name: "string",
};

/**
 * A Score of an evalglass record with what {@linkcode withVerdict} kept in
 * its provenance put back where evalpipe reads it: each of the three the
 * Score does not give itself (a record evalglass wrote again has none), and
 * the provenance without the `evalpipe` key. A value under that key that is
 * not what the export writes is left in the provenance, untouched.
 *
 * @param raw A Score as parsed from the record.
 * @returns The Score to read; `raw` itself when there is nothing to restore.
 */
export function restoreVerdict(raw: unknown): unknown {
  if (typeof raw !== "object" || raw === null) return raw;
  const score = raw as Record<string, unknown>;
  const provenance = score.provenance;
  if (
    typeof provenance !== "object" || provenance === null ||
    Array.isArray(provenance) || !Object.hasOwn(provenance, KEY)
  ) return raw;
  const kept = (provenance as Record<string, unknown>)[KEY];
  if (typeof kept !== "object" || kept === null || Array.isArray(kept)) {
    return raw;
  }
  const verdict = kept as Record<string, unknown>;
  const keys = Object.keys(verdict);
  if (keys.length === 0) return raw;
  for (const k of keys) {
    if (!Object.hasOwn(FIELDS, k) || typeof verdict[k] !== FIELDS[k]) {
      return raw;
    }
  }
  // Copied key by key: spreads and a rest pattern with a computed key cost
  // this per-Score path several times as much.
  const out: Record<string, unknown> = {};
  for (const k of keys) if (!Object.hasOwn(score, k)) out[k] = verdict[k];
  let rest: Record<string, unknown> | undefined;
  for (const k of Object.keys(provenance)) {
    if (k !== KEY) {
      (rest ??= {})[k] = (provenance as Record<string, unknown>)[k];
    }
  }
  for (const k of Object.keys(score)) {
    if (k !== "provenance") out[k] = score[k];
    else if (rest !== undefined) out.provenance = rest;
  }
  return out;
}
