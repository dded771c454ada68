/**
 * The Score model: one metric result, its value separated from its meaning.
 *
 * A Score has a `status` (does a value exist?) and a `validity` (can it be
 * trusted?). Only a `scored` Score carries a number, and only a `scored` and
 * `valid` Score enters aggregation. Anything else carries `value: null`: an
 * error is never a 0.0. The types live here, below every module that uses
 * them.
 *
 * @module
 */

/** Whether a value exists: `scored` is the only status that carries one. */
export type ScoreStatus = "scored" | "skipped" | "not_applicable" | "error";

/** Whether a value can be trusted: only `valid` values are aggregated. */
export type ScoreValidity = "valid" | "invalid";

/** The statuses, in the order the design lists them. */
export const SCORE_STATUSES: readonly ScoreStatus[] = [
  "scored",
  "skipped",
  "not_applicable",
  "error",
];

/** The validities, in the order the design lists them. */
export const SCORE_VALIDITIES: readonly ScoreValidity[] = ["valid", "invalid"];

/** A note attached to a Score, such as the message of the error behind it. */
export interface Diagnostic {
  /** How serious the note is. */
  level: "error" | "warning" | "info";
  /** What happened, for a person. */
  message: string;
}

/** One metric result for one unit. */
export interface Score {
  /** The metric's name, e.g. `exact_match` or `faithfulness`. */
  metric: string;
  /** Whether a value exists. */
  status: ScoreStatus;
  /** Whether the value can be trusted. */
  validity: ScoreValidity;
  /** A finite number exactly when `status` is `scored`, else `null`. */
  value: number | null;
  /** The verdict; `false` for an error, `null` when skipped or not applicable. */
  passed: boolean | null;
  /** A human-readable explanation, present only when known. */
  reason?: string;
  /** The evaluator and its version, never empty, e.g. `exact_match@1`. */
  evaluator_version: string;
  /** The example this Score measured, stamped by the pipeline. */
  example_id?: string;
  /** The unit (one target call) this Score measured, stamped by the pipeline. */
  unit_id?: string;
  /** Notes on how the Score came about. */
  diagnostics: Diagnostic[];
  /** References to evidence behind the Score (trace ids, file paths). */
  evidence_refs: string[];
  /** Where the Score came from (judge model, prompt hash, ...), when known. */
  provenance?: Record<string, unknown>;
}

/** Several related Scores from one pass of one evaluator, each independently statused. */
export interface ScoreBatch {
  /** The Scores, one per declared metric. */
  scores: Score[];
}

/** Which unit a Score measured. */
export interface Identity {
  /** The example. */
  example_id: string;
  /** The unit. */
  unit_id: string;
}

/** Thrown when a Score would break the Score rules. */
export class ScoreError extends TypeError {
  /**
   * Creates the instance.
   *
   * @param message What rule was broken.
   */
  constructor(message: string) {
    super(message);
    this.name = "ScoreError";
  }
}

/** Thrown by {@linkcode parseScore} for a value that is not a valid Score. */
export class ScoreSyntaxError extends SyntaxError {
  /**
   * Creates the instance.
   *
   * @param message What is wrong.
   */
  constructor(message: string) {
    super(message);
    this.name = "ScoreSyntaxError";
  }
}
