/**
 * The Score constructors: one per status, each checking every rule.
 *
 * @module
 */

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
  evaluator_version?: string;
  /**
   * A human-readable explanation.
   * @default {undefined}
   */
  reason?: string;
  /**
   * The example this Score measured.
   * @default {undefined}
   */
  example_id?: string;
  /**
   * The unit this Score measured.
   * @default {undefined}
   */
  unit_id?: string;
  /**
   * Notes on how the Score came about.
   * @default {[]}
   */
  diagnostics?: Diagnostic[];
  /**
   * References to evidence.
   * @default {[]}
   */
  evidence_refs?: string[];
  /**
   * Where the Score came from.
   * @default {undefined}
   */
  provenance?: Record<string, unknown>;
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
  passed?: boolean;
  /**
   * Whether the value can be trusted.
   * @default {"valid"}
   */
  validity?: ScoreValidity;
}

function base(
  metric: string,
  status: ScoreStatus,
  validity: ScoreValidity,
  value: number | null,
  passed: boolean | null,
  options: ScoreOptions,
): Score {
  const fields = { metric, status, validity, value, passed } as Score;
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
 * @throws {ScoreError} When `value` is not a finite number.
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

/**
 * Builds an `error` Score: no value, a failed verdict, the message as reason
 * and as an error diagnostic.
 *
 * @param metric The metric's name.
 * @param message The full reason, e.g. `scorer error: ...`.
 * @param options Version, identity and further diagnostics.
 * @returns The Score.
 *
 * @example A scorer that crashed
 * ```ts
 * import { errored } from "./mod.ts";
 * const s = errored("faithfulness", "scorer error: exit status 1");
 * if (s.value !== null || s.passed !== false) throw new Error("unexpected");
 * ```
 */
export function errored(
  metric: string,
  message: string,
  options: Omit<ScoreOptions, "reason"> = {},
): Score {
  return makeScore(
    base(metric, "error", "valid", null, false, {
      ...options,
      reason: message,
      diagnostics: [...(options.diagnostics ?? []), {
        level: "error",
        message,
      }],
    }),
  );
}

/**
 * Builds a `skipped` Score: the evaluator chose not to measure this unit.
 *
 * @param metric The metric's name.
 * @param options Reason, version and identity.
 * @returns The Score.
 *
 * @example
 * ```ts
 * import { skipped } from "./mod.ts";
 * if (skipped("m", { reason: "sampled out" }).value !== null) throw new Error("unexpected");
 * ```
 */
export function skipped(metric: string, options: ScoreOptions = {}): Score {
  return makeScore(base(metric, "skipped", "valid", null, null, options));
}

/**
 * Builds a `not_applicable` Score: the metric does not apply to this unit
 * (say, `exact_match` on a case without `expected`).
 *
 * @param metric The metric's name.
 * @param options Reason, version and identity.
 * @returns The Score.
 *
 * @example
 * ```ts
 * import { notApplicable } from "./mod.ts";
 * if (notApplicable("m").status !== "not_applicable") throw new Error("unexpected");
 * ```
 */
export function notApplicable(
  metric: string,
  options: ScoreOptions = {},
): Score {
  return makeScore(
    base(metric, "not_applicable", "valid", null, null, options),
  );
}

/**
 * Builds a batch of related Scores from one evaluator pass.
 *
 * @param scores The Scores.
 * @returns The batch.
 *
 * @example
 * ```ts
 * import { scoreBatch, scored } from "./mod.ts";
 * const batch = scoreBatch([scored("precision", 0.5), scored("recall", 1)]);
 * if (batch.scores.length !== 2) throw new Error("unexpected");
 * ```
 */
export function scoreBatch(scores: Score[]): ScoreBatch {
  return { scores };
}
