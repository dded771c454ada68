/**
 * The diagnostic codes evalpipe writes: stable, dotted, one per way a Score
 * can fail to be measured, so that a program can count causes without
 * parsing messages.
 *
 * @module
 */

/**
 * Every diagnostic code evalpipe writes, with what it means. Codes are
 * stable: a new cause gets a new code, an old code keeps its meaning.
 *
 * @example Look up what a code means
 * ```ts
 * import { DIAGNOSTIC_CODES } from "./mod.ts";
 * if (!DIAGNOSTIC_CODES["scorer.timeout"]?.includes("timeout")) throw new Error("unexpected");
 * ```
 */
export const DIAGNOSTIC_CODES: Readonly<Record<string, string>> = Object.freeze(
  {
    "scorer.error":
      "the scorer failed: a function scorer threw, a judge call failed",
    "scorer.exit_status":
      "a subprocess scorer exited with a non-zero status or was killed by a signal",
    "scorer.invalid_verdict":
      "a subprocess scorer printed something that is not a verdict (protocol v0's error table)",
    "scorer.out_of_range": "a subprocess scorer's score lies outside 0.0..=1.0",
    "scorer.spawn_failed": "a subprocess scorer's command could not be started",
    "scorer.timeout":
      "a scorer ran past its timeout; a subprocess scorer's process group was killed",
    "scorer.output_cap":
      "a subprocess scorer printed more than its stdout or stderr cap",
    "scorer.interrupted":
      "the run was stopped (Ctrl-C, an abort) while the scorer ran",
    "scorer.reported":
      "a persistent scorer answered the case with an error line of its own",
    "scorer.invalid_encoding":
      "a warning beside a subprocess scorer's verdict: it printed bytes that are not UTF-8, each read as U+FFFD",
    "scorer.invalid_score":
      "a scorer returned something that is not a valid Score, or not one per declared metric",
    "scorer.invalid_schema":
      "a json scorer's JSON Schema is not one Ajv accepts (draft 2020-12), so no output can be checked against it",
    "embedding.request_failed":
      "a semantic_similarity scorer's call to the embeddings endpoint failed (an HTTP error, a timeout, a reset), after its retries",
    "embedding.invalid_answer":
      "the embeddings endpoint answered, but not with usable vectors (not JSON, no numbers, lengths that differ, a zero vector)",
    "classification.invalid_prediction":
      "a classification unit's output gave no label (empty, not JSON, the field missing): counted as an invalid prediction, wrong, in no label's column",
    "judge.doubt":
      "a judge's reply was read, but with a doubt (a warning beside the value)",
    "judge.unparsable":
      "a judge's reply is not the JSON verdict it was asked for (no object, a field missing or of the wrong type), so the Score is an error",
    "judge.incomplete":
      "a judge's verdict leaves out or adds items it was asked about (a context chunk), so no value can be computed",
    "judge.refused":
      "a judge refused to grade (a refusal instead of a reply, or the provider's content filter stopped it), so the Score is an error",
    "judge.out_of_range":
      "a judge's grade lies outside its scale (a 7 on 0..1): scored, but invalid",
    "target.error":
      "the target failed for this unit, so its Scores are blocked",
    "case.invalid":
      "the dataset record is malformed, so its Scores are blocked",
    "prerequisite.failed":
      "something this Score depends on failed (a blocked Score of no cause above)",
    "budget.exhausted":
      "a budget (calls, cost) ran out before this unit, so its Scores are blocked",
    "cache.miss":
      "the cache replays only (--cache replay) and had no answer for this call, so none was made",
    "legacy.error":
      "an error diagnostic read from a file written before codes existed",
    "legacy.warning":
      "a warning diagnostic read from a file written before codes existed",
    "legacy.info":
      "an info diagnostic read from a file written before codes existed",
  },
);

/** Reason prefixes and the code each names, in the order they are tried. */
const PREFIXES: readonly (readonly [string, string])[] = [
  ["target error: ", "target.error"],
  ["invalid case: ", "case.invalid"],
  ["budget: ", "budget.exhausted"],
  ["invalid Score: ", "scorer.invalid_score"],
  ["scorer error: invalid Score", "scorer.invalid_score"],
  ["scorer error: ", "scorer.error"],
];

/**
 * The code a failure's message names by its prefix, as evalpipe writes its
 * reasons (`target error: ...`, `invalid case: ...`).
 *
 * @param message The reason.
 * @param fallback The code when no prefix matches.
 * @returns A code of {@linkcode DIAGNOSTIC_CODES}, or `fallback`.
 *
 * @example
 * ```ts
 * import { codeOfReason } from "./codes.ts";
 * if (codeOfReason("target error: HTTP 503") !== "target.error") throw new Error("unexpected");
 * ```
 */
export function codeOfReason(
  message: string,
  fallback = "scorer.error",
): string {
  for (const [prefix, code] of PREFIXES) {
    if (message.startsWith(prefix)) return code;
  }
  return fallback;
}
