/**
 * A Score's NDJSON line, written field by field.
 *
 * @module
 */

import { inertJson } from "../io/inert_json.ts";
import type { Score } from "./types.ts";

// The JSON text of the last id and reason written: a unit's Scores share
// their ids (and an id built by concatenation must be flattened before it
// can be escaped), and a scorer's reason for a miss often names the same
// expected text.
const lastText: string[] = ["", ""];

const lastJson: string[] = ['""', '""'];

/** The inert JSON of `text`, remembered in `slot`. */
function jsonOf(text: string, slot: number): string {
  if (text !== lastText[slot]) {
    lastText[slot] = text;
    lastJson[slot] = inertJson(JSON.stringify(text));
  }
  return lastJson[slot]!;
}

/**
 * The JSON text of a Score, its keys in the canonical order: the same text as
 * `JSON.stringify` gives for a Score this module built (by a constructor or
 * by validation), written field by field, which is faster for the many
 * Scores of a run; characters a terminal could act on are `\u` escapes
 * (see {@linkcode inertJson}), so the text parses to the same Score.
 *
 * @param score A valid Score.
 * @returns Its JSON text, without a line break.
 *
 * @example
 * ```ts
 * import { scored, scoreLine } from "./mod.ts";
 * const s = scored("exact_match", 1, { example_id: "d#1", unit_id: "d#1" });
 * if (scoreLine(s) !== JSON.stringify(s)) throw new Error(scoreLine(s));
 * ```
 */
export function scoreLine(score: Score): string {
  const { reason, example_id, unit_id, diagnostics, evidence_refs } = score;
  const value = score.value;
  // Few pieces a line: each `+` of a long text is an object for the
  // collector, and a run writes a line a case.
  let text = headOf(score.metric, score.status, score.validity) +
    (value === null ? "null" : String(value));
  if (score.passed !== undefined) {
    text += score.passed ? ',"passed":true' : ',"passed":false';
  }
  if (reason !== undefined) text += ',"reason":' + jsonOf(reason, 1);
  text += versionOf(score.evaluator_version);
  if (example_id !== undefined) {
    text += ',"example_id":' + jsonOf(example_id, 0);
  }
  if (unit_id !== undefined) text += ',"unit_id":' + jsonOf(unit_id, 0);
  if (score.target_name !== undefined) {
    text += `,"target_name":${JSON.stringify(score.target_name)}`;
  }
  if (
    diagnostics.length === 0 && evidence_refs.length === 0 &&
    score.provenance === undefined
  ) return text + ',"diagnostics":[],"evidence_refs":[]}';
  text += `,"diagnostics":${
    diagnostics.length === 0 ? "[]" : inertJson(JSON.stringify(diagnostics))
  },"evidence_refs":${
    evidence_refs.length === 0 ? "[]" : inertJson(JSON.stringify(evidence_refs))
  }`;
  if (score.provenance !== undefined) {
    text += `,"provenance":${inertJson(JSON.stringify(score.provenance))}`;
  }
  return text + "}";
}

// The text of a line up to its value, and its version's member, for the
// last few kinds of Score written: a run's Scores come in a few metrics,
// most scored and valid, so the text is made once per kind, not per line.

/** How many kinds are remembered; the oldest is forgotten first. */
const KINDS = 8;

/** metric, status, validity, text; four entries a kind. */
const heads: string[] = [];

/** The line's text from its opening brace to `"value":`. */
function headOf(metric: string, status: string, validity: string): string {
  for (let i = 0; i < heads.length; i += 4) {
    if (
      heads[i] === metric && heads[i + 1] === status &&
      heads[i + 2] === validity
    ) return heads[i + 3]!;
  }
  const head = `{"metric":${
    inertJson(JSON.stringify(metric))
  },"status":"${status}","validity":"${validity}","value":`;
  if (heads.length === 4 * KINDS) heads.splice(0, 4);
  heads.push(metric, status, validity, head);
  return head;
}

/** version, member text; two entries a version. */
const versions: string[] = [];

/** `,"evaluator_version":…`, the member as written. */
function versionOf(version: string): string {
  for (let i = 0; i < versions.length; i += 2) {
    if (versions[i] === version) return versions[i + 1]!;
  }
  const member = `,"evaluator_version":${inertJson(JSON.stringify(version))}`;
  if (versions.length === 2 * KINDS) versions.splice(0, 2);
  versions.push(version, member);
  return member;
}
