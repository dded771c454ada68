/**
 * The shapes of evalglass's result store (`EvalGlass/evalglass-core`,
 * `core/results.py`, `core/scores.py`, `core/contracts.py`), as far as
 * evalpipe writes and reads them.
 *
 * @module
 */

/**
 * A Score as evalglass writes it: evalpipe's Score without the empty lists,
 * `passed` and `reason` kept (evalglass ignores keys it does not know).
 *
 * @example The Score of a scored case
 * ```ts
 * import type { EvalglassScore } from "./mod.ts";
 * const score: EvalglassScore = {
 *   metric: "exact_match", status: "scored", validity: "valid", value: 1,
 *   evaluator_version: "exact_match@1", example_id: "d.jsonl#1", unit_id: "d.jsonl#1",
 * };
 * if (score.value !== 1) throw new Error("unexpected");
 * ```
 */
export interface EvalglassScore {
  /** The metric. */
  metric: string;
  /** `scored`, `blocked`, `non_evaluable`, `skipped` or `error`. */
  status: string;
  /** `valid`, `invalid`, `not_measured` or `not_applicable`. */
  validity: string;
  /** A finite number when scored, else `null`. */
  value: number | null;
  /** The evaluator and its version. */
  evaluator_version: string;
  /** Diagnostics, absent when there are none. */
  diagnostics?: Array<Record<string, unknown>>;
  /** Evidence references, absent when there are none. */
  evidence_refs?: string[];
  /** Provenance, absent when empty. */
  provenance?: Record<string, unknown>;
  /** The example measured. */
  example_id?: string;
  /** The unit measured. */
  unit_id?: string;
  /** In a matrix run, the target measured (evalpipe's; not read by evalglass). */
  target_name?: string;
  /** evalpipe's verdict (not read by evalglass). */
  passed?: boolean;
  /** evalpipe's reason (not read by evalglass). */
  reason?: string;
}

/**
 * A `runrecord.json` of evalglass's result store: the run id, the
 * Scorecard, every Score and the run's fingerprint dimensions.
 *
 * @example The parts evalglass's reader requires
 * ```ts
 * import type { EvalglassRunRecord } from "./mod.ts";
 * const record: EvalglassRunRecord = {
 *   run_id: "r1",
 *   scorecard: { verdict: { verdict: "informational", ci_should_fail: false }, metrics: [], authority: {} },
 *   scores: [],
 *   provenance: { dimensions: {} },
 * };
 * if (record.scores.length !== 0) throw new Error("unexpected");
 * ```
 */
export interface EvalglassRunRecord {
  /** The run id. */
  run_id: string;
  /** The authority-aware summary: verdict, metrics, authority, ... */
  scorecard: Record<string, unknown>;
  /** Every Score. */
  scores: EvalglassScore[];
  /** `{dimensions: {name: fingerprint}}`. */
  provenance: { dimensions: Record<string, string> };
  /** Whether the run is comparable with a baseline, when known. */
  comparable?: Record<string, unknown>;
  /** What else an evalglass record may carry (evidence, plan, lanes, ...). */
  [key: string]: unknown;
}
