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

/**
 * Whether a value exists, and if not, why: `scored` is the only status that
 * carries one. `blocked` means a prerequisite failed (the target, the case),
 * `non_evaluable` that the metric does not apply, `skipped` that it was not
 * run on purpose, `error` that the scorer failed. The vocabulary is
 * evalglass's, so its reader accepts every Score evalpipe writes.
 *
 * @example Only a scored Score has a value
 * ```ts
 * import { nonEvaluable, type ScoreStatus } from "./mod.ts";
 * const status: ScoreStatus = nonEvaluable("exact_match").status;
 * if (status !== "non_evaluable") throw new Error("unexpected status");
 * ```
 */
export type ScoreStatus =
  | "scored"
  | "blocked"
  | "non_evaluable"
  | "skipped"
  | "error";

/**
 * Whether a value can be trusted: only `valid` values are aggregated. A
 * Score without a value is `not_measured`, or `not_applicable` when the
 * metric does not apply.
 *
 * @example A value the judge could not vouch for
 * ```ts
 * import { aggregatable, scored, type ScoreValidity } from "./mod.ts";
 * const validity: ScoreValidity = "invalid";
 * const s = scored("faithfulness", 0.8, { validity });
 * if (aggregatable(s)) throw new Error("an invalid Score is not aggregated");
 * ```
 */
export type ScoreValidity =
  | "valid"
  | "invalid"
  | "not_measured"
  | "not_applicable";

/**
 * The statuses, in the order the design lists them.
 *
 * @example Count Scores per status
 * ```ts
 * import { errored, scored, SCORE_STATUSES } from "./mod.ts";
 * const scores = [scored("m", 1), errored("m", "scorer error: boom")];
 * const counts = SCORE_STATUSES.map((status) => scores.filter((s) => s.status === status).length);
 * if (counts.join() !== "1,0,0,0,1") throw new Error("unexpected counts");
 * ```
 */
export const SCORE_STATUSES: readonly ScoreStatus[] = [
  "scored",
  "blocked",
  "non_evaluable",
  "skipped",
  "error",
];

/**
 * The validities, in the order the design lists them.
 *
 * @example Check a validity read from outside
 * ```ts
 * import { SCORE_VALIDITIES, type ScoreValidity } from "./mod.ts";
 * const read = "invalid";
 * if (!SCORE_VALIDITIES.includes(read as ScoreValidity)) throw new Error("unknown validity");
 * ```
 */
export const SCORE_VALIDITIES: readonly ScoreValidity[] = [
  "valid",
  "invalid",
  "not_measured",
  "not_applicable",
];

/**
 * How serious a diagnostic is.
 *
 * @example
 * ```ts
 * import { type DiagnosticSeverity, errored } from "./mod.ts";
 * const severity: DiagnosticSeverity | undefined = errored("m", "scorer error: boom").diagnostics[0]?.severity;
 * if (severity !== "error") throw new Error("unexpected");
 * ```
 */
export type DiagnosticSeverity = "info" | "warning" | "error";

/**
 * A structured note attached to a Score, such as the error behind it: a
 * stable dotted `code` for programs, a `message` for people. The shape is
 * evalglass's `Diagnostic`.
 *
 * @example A warning beside a value
 * ```ts
 * import { type Diagnostic, scored } from "./mod.ts";
 * const note: Diagnostic = { code: "judge.truncated", severity: "warning", message: "judge reply was truncated" };
 * const s = scored("faithfulness", 0.7, { diagnostics: [note] });
 * if (s.diagnostics[0]?.code !== "judge.truncated") throw new Error("unexpected");
 * ```
 */
export interface Diagnostic {
  /** A stable dotted code, e.g. `scorer.timeout` (see the README's list). */
  code: string;
  /** How serious the note is. */
  severity: DiagnosticSeverity;
  /** What happened, for a person. */
  message: string;
  /** Where it happened (a file and line, a field), when known. */
  location?: string;
  /** Machine-readable particulars (an exit status, a limit), when any. */
  details?: Record<string, unknown>;
  /** What caused it, when known. */
  cause?: string;
  /** References to evidence behind the note. */
  evidence_refs?: string[];
}

/**
 * One metric result for one unit.
 *
 * @example A Score read back from its NDJSON line
 * ```ts
 * import { parseScore, type Score, scored, scoreLine } from "./mod.ts";
 * const score: Score = scored("exact_match", 1, { example_id: "d#1", unit_id: "d#1" });
 * const back = parseScore(JSON.parse(scoreLine(score)));
 * if (back.value !== 1 || back.unit_id !== "d#1") throw new Error("unexpected");
 * ```
 */
export interface Score {
  /** The metric's name, e.g. `exact_match` or `faithfulness`. */
  metric: string;
  /** Whether a value exists. */
  status: ScoreStatus;
  /** Whether the value can be trusted. */
  validity: ScoreValidity;
  /** A finite number exactly when `status` is `scored`, else `null`. */
  value: number | null;
  /**
   * The verdict: the scorer's, else `value >= 0.5`; `false` for `error` and
   * `blocked`; absent when no verdict exists (`skipped`, `non_evaluable`).
   */
  passed?: boolean;
  /** A human-readable explanation, present only when known. */
  reason?: string;
  /** The evaluator and its version, never empty, e.g. `exact_match@1`. */
  evaluator_version: string;
  /** The example this Score measured, stamped by the pipeline. */
  example_id?: string;
  /** The unit (one target call) this Score measured, stamped by the pipeline. */
  unit_id?: string;
  /** In a matrix run, the name of the target whose output this Score measured. */
  target_name?: string;
  /** Notes on how the Score came about. */
  diagnostics: Diagnostic[];
  /** References to evidence behind the Score (trace ids, file paths). */
  evidence_refs: string[];
  /** Where the Score came from (judge model, prompt hash, ...), when known. */
  provenance?: Record<string, unknown>;
}

/**
 * Several related Scores from one pass of one evaluator, each independently
 * statused, as evalglass's `ScoreBatch`.
 *
 * @example One pass, two metrics, one of them failed
 * ```ts
 * import { errored, isScoreBatch, type ScoreBatch, scored } from "./mod.ts";
 * const batch: ScoreBatch = {
 *   evaluator: "retrieval@1",
 *   scores: [scored("precision", 0.5), errored("recall", "scorer error: no reference")],
 * };
 * if (!isScoreBatch(batch) || batch.scores[1]?.value !== null) throw new Error("unexpected");
 * ```
 */
export interface ScoreBatch {
  /** The evaluator that made the Scores, e.g. its name and version. */
  evaluator: string;
  /** The Scores, one per declared metric. */
  scores: Score[];
  /** References to evidence the Scores share. */
  evidence_refs?: string[];
}

/**
 * Which unit a Score measured.
 *
 * @example Stamp a scorer's result with its unit
 * ```ts
 * import { type Identity, parseScoreFor, scored } from "./mod.ts";
 * const identity: Identity = { example_id: "d#1", unit_id: "d#1/2" };
 * const s = parseScoreFor(scored("m", 1), identity);
 * if (s.unit_id !== "d#1/2") throw new Error("unexpected");
 * ```
 */
export interface Identity {
  /** The example. */
  example_id: string;
  /** The unit. */
  unit_id: string;
}

/**
 * A Score as the scoring stages emit it: stamped with the unit it measured,
 * so its ids are always there (a {@linkcode Score} read from a file may lack
 * them).
 *
 * @example The ids of a stamped Score need no check
 * ```ts
 * import { parseScoreFor, scored, type UnitScore } from "./mod.ts";
 * const s: UnitScore = parseScoreFor(scored("m", 1), { example_id: "d#1", unit_id: "d#1@2" });
 * const epoch: string = s.unit_id.slice(s.example_id.length + 1);
 * if (epoch !== "2") throw new Error("unexpected");
 * ```
 */
export interface UnitScore extends Score {
  /** The example this Score measured. */
  example_id: string;
  /** The unit (one target call) this Score measured. */
  unit_id: string;
}

/**
 * Thrown when a Score would break the Score rules.
 *
 * @example A scored Score must carry a finite number
 * ```ts
 * import { ScoreError, scored } from "./mod.ts";
 * try {
 *   scored("m", NaN);
 *   throw new Error("expected a ScoreError");
 * } catch (error) {
 *   if (!(error instanceof ScoreError) || !error.message.includes("finite number")) throw error;
 * }
 * ```
 */
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

/**
 * Thrown by {@linkcode parseScore} for a value that is not a valid Score.
 *
 * @example The message names the field and the rule
 * ```ts
 * import { parseScore, ScoreSyntaxError } from "./mod.ts";
 * try {
 *   parseScore({ metric: "m", status: "scored", validity: "valid", value: "high", passed: true, evaluator_version: "m@1" });
 *   throw new Error("expected a ScoreSyntaxError");
 * } catch (error) {
 *   if (!(error instanceof ScoreSyntaxError) || !error.message.includes("value")) throw error;
 * }
 * ```
 */
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
