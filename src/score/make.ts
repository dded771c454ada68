/**
 * The Score constructors: one per status, each checking every rule.
 *
 * @module
 */

import { codeOfReason } from "./codes.ts";
import { describeValue, makeScore } from "./rules.ts";
import {
  type Diagnostic,
  type Score,
  type ScoreBatch,
  ScoreError,
  type ScoreStatus,
  type ScoreValidity,
} from "./types.ts";

/**
 * The fields every constructor takes besides the metric and the value.
 *
 * @example A skipped Score that says why and which unit
 * ```ts
 * import { type ScoreOptions, skipped } from "./mod.ts";
 * const options: ScoreOptions = { reason: "sampled out", example_id: "d#7", unit_id: "d#7" };
 * const s = skipped("faithfulness", options);
 * if (s.evaluator_version !== "faithfulness@1" || s.reason !== "sampled out") throw new Error("unexpected");
 * ```
 */
export interface ScoreOptions {
  /**
   * The evaluator and its version.
   * @default {`${metric}@1`}
   */
  evaluator_version?: string | undefined;
  /**
   * A human-readable explanation.
   * @default {undefined}
   */
  reason?: string | undefined;
  /**
   * The example this Score measured.
   * @default {undefined}
   */
  example_id?: string | undefined;
  /**
   * The unit this Score measured.
   * @default {undefined}
   */
  unit_id?: string | undefined;
  /**
   * Notes on how the Score came about.
   * @default {[]}
   */
  diagnostics?: Diagnostic[] | undefined;
  /**
   * References to evidence.
   * @default {[]}
   */
  evidence_refs?: string[] | undefined;
  /**
   * Where the Score came from.
   * @default {undefined}
   */
  provenance?: Record<string, unknown> | undefined;
}

/**
 * Options of {@linkcode scored}.
 *
 * @example A strict threshold: 0.6 is not a pass
 * ```ts
 * import { type ScoredOptions, scored } from "./mod.ts";
 * const value = 0.6;
 * const options: ScoredOptions = { passed: value >= 0.9, evaluator_version: "judge@2" };
 * const s = scored("faithfulness", value, options);
 * if (s.passed !== false || s.evaluator_version !== "judge@2") throw new Error("unexpected");
 * ```
 */
export interface ScoredOptions extends ScoreOptions {
  /**
   * The verdict.
   * @default {value >= 0.5}
   */
  passed?: boolean | undefined;
  /**
   * Whether the value can be trusted: `invalid` for a value measured but not
   * trustworthy (a judge's prose, a value out of a declared range).
   * @default {"valid"}
   */
  validity?: "valid" | "invalid" | undefined;
}

/**
 * Options of {@linkcode errored} and {@linkcode blocked}: the diagnostic's
 * code and particulars beside the usual fields.
 *
 * @example A timeout with its limit
 * ```ts
 * import { errored, type FailureOptions } from "./mod.ts";
 * const options: FailureOptions = { code: "scorer.timeout", details: { timeout_s: 5 } };
 * const s = errored("faithfulness", "scorer error: timed out after 5 s", options);
 * if (s.diagnostics[0]?.code !== "scorer.timeout") throw new Error("unexpected");
 * ```
 */
export interface FailureOptions extends Omit<ScoreOptions, "reason"> {
  /**
   * The diagnostic's stable dotted code.
   * @default {inferred from the message's prefix (see codeOfReason): `scorer error: ` is `scorer.error`, `target error: ` is `target.error`, `invalid case: ` is `case.invalid`, `budget: ` is `budget.exhausted`, `invalid Score: ` or `scorer error: invalid Score` is `scorer.invalid_score`; with none of these, `scorer.error` for errored and `prerequisite.failed` for blocked}
   */
  code?: string | undefined;
  /**
   * The diagnostic's machine-readable particulars.
   * @default {undefined}
   */
  details?: Record<string, unknown> | undefined;
}

function base(
  metric: string,
  status: ScoreStatus,
  validity: ScoreValidity,
  value: number | null,
  passed: boolean | undefined,
  options: ScoreOptions,
): Score {
  const fields = { metric, status, validity, value } as Score;
  if (passed !== undefined) fields.passed = passed;
  if (options.reason !== undefined) fields.reason = options.reason;
  fields.evaluator_version = options.evaluator_version ?? `${metric}@1`;
  if (options.example_id !== undefined) fields.example_id = options.example_id;
  if (options.unit_id !== undefined) fields.unit_id = options.unit_id;
  fields.diagnostics = options.diagnostics ?? [];
  fields.evidence_refs = options.evidence_refs ?? [];
  if (options.provenance !== undefined) fields.provenance = options.provenance;
  return fields;
}

/**
 * Builds a `scored` Score: a finite number that exists.
 *
 * @param metric The metric's name.
 * @param value A finite number; NaN, ±Infinity and booleans are rejected.
 * @param options The verdict, validity, reason and provenance.
 * @returns The Score.
 * @throws {ScoreError} When `value` is not a finite number, or another
 *   field breaks a Score rule (an empty metric or version, a `passed` that
 *   is no boolean).
 *
 * @example A passing Score
 * ```ts
 * import { scored } from "./mod.ts";
 * const s = scored("exact_match", 1);
 * if (!s.passed || s.value !== 1) throw new Error("unexpected");
 * ```
 */
export function scored(
  metric: string,
  value: number,
  options: ScoredOptions = {},
): Score {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new ScoreError(
      `A "scored" Score must carry a finite number, not ${
        describeValue(value)
      }`,
    );
  }
  // A built-in's Score (no ids, lists or provenance given): every field is
  // checked here, and the Score is built once, as `makeScore` would build it.
  const version = options.evaluator_version ?? `${metric}@1`;
  const passed = options.passed ?? value >= 0.5;
  const validity = options.validity ?? "valid";
  const reason = options.reason;
  if (
    typeof metric === "string" && metric !== "" &&
    typeof version === "string" && version !== "" &&
    typeof passed === "boolean" &&
    (validity === "valid" || validity === "invalid") &&
    (reason === undefined || typeof reason === "string") &&
    options.example_id === undefined && options.unit_id === undefined &&
    options.diagnostics === undefined && options.evidence_refs === undefined &&
    options.provenance === undefined
  ) {
    const v = value === 0 ? 0 : value; // -0 is written 0
    return reason === undefined
      ? {
        metric,
        status: "scored",
        validity,
        value: v,
        passed,
        evaluator_version: version,
        diagnostics: [],
        evidence_refs: [],
      }
      : {
        metric,
        status: "scored",
        validity,
        value: v,
        passed,
        reason,
        evaluator_version: version,
        diagnostics: [],
        evidence_refs: [],
      };
  }
  return makeScore(
    base(
      metric,
      "scored",
      options.validity ?? "valid",
      value,
      options.passed ?? value >= 0.5,
      options,
    ),
  );
}

/** A failure's Score: no value, a failed verdict, the message twice. */
function failed(
  status: "error" | "blocked",
  metric: string,
  message: string,
  options: FailureOptions,
): Score {
  const { code, details, ...rest } = options;
  const diagnostic: Diagnostic = {
    code: code ??
      codeOfReason(
        message,
        status === "error" ? "scorer.error" : "prerequisite.failed",
      ),
    severity: "error",
    message,
  };
  if (details !== undefined) diagnostic.details = details;
  return makeScore(
    base(metric, status, "not_measured", null, false, {
      ...rest,
      reason: message,
      diagnostics: [...(rest.diagnostics ?? []), diagnostic],
    }),
  );
}

/**
 * Builds an `error` Score: the scorer failed. No value, a failed verdict,
 * the message as reason and as an error diagnostic with a dotted code.
 *
 * @param metric The metric's name.
 * @param message The full reason, e.g. `scorer error: ...`.
 * @param options The diagnostic's code and details, version and identity.
 * @returns The Score.
 *
 * @example A scorer that crashed
 * ```ts
 * import { errored } from "./mod.ts";
 * const s = errored("faithfulness", "scorer error: exit status 1", { code: "scorer.exit_status" });
 * if (s.value !== null || s.passed !== false || s.validity !== "not_measured") throw new Error("unexpected");
 * ```
 */
export function errored(
  metric: string,
  message: string,
  options: FailureOptions = {},
): Score {
  return failed("error", metric, message, options);
}

/**
 * Builds a `blocked` Score: the Score could not be measured because a
 * prerequisite failed (the target errored, the case is invalid, the budget
 * ran out). It counts as a failure in the pass rate, as an error does.
 *
 * @param metric The metric's name.
 * @param message The full reason, e.g. `target error: HTTP 503`.
 * @param options The diagnostic's code and details, version and identity.
 * @returns The Score.
 *
 * @example A target that failed
 * ```ts
 * import { blocked } from "./mod.ts";
 * const s = blocked("exact_match", "target error: HTTP 503");
 * if (s.status !== "blocked" || s.diagnostics[0]?.code !== "target.error") throw new Error("unexpected");
 * ```
 */
export function blocked(
  metric: string,
  message: string,
  options: FailureOptions = {},
): Score {
  return failed("blocked", metric, message, options);
}

/**
 * Builds a `skipped` Score: deliberately not measured (a filter, a shard).
 *
 * @param metric The metric's name.
 * @param options Reason, version and identity.
 * @returns The Score.
 *
 * @example
 * ```ts
 * import { skipped } from "./mod.ts";
 * const s = skipped("m", { reason: "sampled out" });
 * if (s.value !== null || s.validity !== "not_measured") throw new Error("unexpected");
 * ```
 */
export function skipped(metric: string, options: ScoreOptions = {}): Score {
  return makeScore(
    base(metric, "skipped", "not_measured", null, undefined, options),
  );
}

/**
 * Builds a `non_evaluable` Score: the metric does not apply to this unit
 * (say, `exact_match` on a case without `expected`).
 *
 * @param metric The metric's name.
 * @param options Reason, version and identity.
 * @returns The Score.
 *
 * @example
 * ```ts
 * import { nonEvaluable } from "./mod.ts";
 * const s = nonEvaluable("m", { reason: "not applicable: no expected" });
 * if (s.status !== "non_evaluable" || s.validity !== "not_applicable") throw new Error("unexpected");
 * ```
 */
export function nonEvaluable(
  metric: string,
  options: ScoreOptions = {},
): Score {
  return makeScore(
    base(metric, "non_evaluable", "not_applicable", null, undefined, options),
  );
}

/**
 * The earlier name of {@linkcode nonEvaluable}.
 *
 * @deprecated Use {@linkcode nonEvaluable}; the status is now `non_evaluable`.
 * @param metric The metric's name.
 * @param options Reason, version and identity.
 * @returns A `non_evaluable` Score.
 *
 * @example
 * ```ts
 * import { notApplicable } from "./mod.ts";
 * if (notApplicable("m").status !== "non_evaluable") throw new Error("unexpected");
 * ```
 */
export function notApplicable(
  metric: string,
  options: ScoreOptions = {},
): Score {
  return nonEvaluable(metric, options);
}

/**
 * Builds a batch of related Scores from one evaluator pass.
 *
 * @param evaluator The evaluator, e.g. its name and version.
 * @param scores The Scores.
 * @param evidenceRefs References to evidence the Scores share.
 * @returns The batch.
 *
 * @example
 * ```ts
 * import { scoreBatch, scored } from "./mod.ts";
 * const batch = scoreBatch("retrieval@1", [scored("precision", 0.5), scored("recall", 1)]);
 * if (batch.scores.length !== 2 || batch.evaluator !== "retrieval@1") throw new Error("unexpected");
 * ```
 */
export function scoreBatch(
  evaluator: string,
  scores: Score[],
  evidenceRefs: string[] = [],
): ScoreBatch {
  const batch: ScoreBatch = { evaluator, scores };
  if (evidenceRefs.length > 0) batch.evidence_refs = [...evidenceRefs];
  return batch;
}
