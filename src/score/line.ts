/**
 * A Score's NDJSON line, written field by field.
 *
 * @module
 */

import { inertJson } from "../io/inert_json.ts";
import type { Score } from "./types.ts";

// The JSON text of the last few strings written: the Scores of a run repeat
// their metric, version, ids (a unit's Scores share their ids, and an id
// built by concatenation must be flattened before it can be escaped) and
// often their reason (a scorer's reason for a miss names the expected text).
const lastText: string[] = ["", "", "", ""];

const lastJson: string[] = ['""', '""', '""', '""'];

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
  let text = `{"metric":${
    jsonOf(score.metric, 0)
  },"status":"${score.status}","validity":"${score.validity}","value":${
    score.value === null ? "null" : String(score.value)
  }`;
  if (score.passed !== undefined) text += `,"passed":${score.passed}`;
  if (reason !== undefined) {
    text += `,"reason":${jsonOf(reason, 3)}`;
  }
  text += `,"evaluator_version":${jsonOf(score.evaluator_version, 1)}`;
  if (example_id !== undefined) {
    text += `,"example_id":${jsonOf(example_id, 2)}`;
  }
  if (unit_id !== undefined) text += `,"unit_id":${jsonOf(unit_id, 2)}`;
  if (score.target_name !== undefined) {
    text += `,"target_name":${JSON.stringify(score.target_name)}`;
  }
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
