/**
 * What a report shows of a run: its Scores and what else its RunRecord
 * holds. The types live here, below the modules that use them.
 *
 * @module
 */

import type { Aggregate, CaseRequirement } from "../aggregate/types.ts";
import type { Score } from "../score/mod.ts";
import type { RecordedBaseline, RecordedBudget } from "../record/run_checks.ts";

/**
 * One unit as a RunRecord holds it: what went in and what came out. Every
 * field is optional and read defensively: the report shows what is there.
 *
 * @example A unit with its answer and its target's record
 * ```ts
 * import { htmlReport, type ReportUnit } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const unit: ReportUnit = {
 *   example_id: "d#1", unit_id: "d#1", input: "2+2?", expected: "4", output: "4",
 *   target: { latency_ms: 12, model: "m1" },
 * };
 * const html = htmlReport({ scores: [scored("exact_match", 1, { example_id: "d#1", unit_id: "d#1" })], units: [unit] });
 * if (!html.includes('"out":"4"')) throw new Error("the output is in the page");
 * ```
 */
export interface ReportUnit {
  /** The example. */
  example_id?: string;
  /** The call (equal to `example_id` with one epoch). */
  unit_id?: string;
  /** The epoch, from 1. */
  epoch?: unknown;
  /** The case's input. */
  input?: unknown;
  /** The case's expected answer. */
  expected?: unknown;
  /** The case's context. */
  context?: unknown;
  /** The case's metadata. */
  metadata?: unknown;
  /** What the system under test answered. */
  output?: unknown;
  /** The tools it called (an `openai` reply's, a trace's steps). */
  tool_calls?: unknown;
  /** The target's record: latency, error, model, usage, cache. */
  target?: unknown;
}

/**
 * What the report shows of one run: its Scores, and whatever else the
 * record holds (a RunRecord is one). Without units the page shows Scores only.
 *
 * @example A report from Scores alone
 * ```ts
 * import { htmlReport, type ReportRun } from "./mod.ts";
 * import { errored, scored } from "../score/mod.ts";
 * const run: ReportRun = {
 *   run_id: "r1",
 *   scores: [scored("m", 1, { example_id: "d#1" }), errored("m", "scorer error: boom", { example_id: "d#2" })],
 * };
 * if (!htmlReport(run).includes('"id":"d#2"')) throw new Error("every unit is a row");
 * ```
 */
export interface ReportRun {
  /** The run's id. */
  run_id?: string;
  /** When it started (ISO 8601). */
  started_at?: string;
  /** When it finished; `null` when it did not. */
  finished_at?: string | null;
  /** Whether every unit was run. */
  complete?: boolean;
  /** The config file as given. */
  config_path?: string;
  /** The resolved config: its target, dataset and gates are shown. */
  config?: Readonly<Record<string, unknown>>;
  /** Every Score. */
  scores: readonly Score[];
  /** One per metric; computed from the Scores when absent. */
  aggregates?: readonly Aggregate[];
  /** Every unit, when the record holds them. */
  units?: readonly ReportUnit[];
  /** The range each metric's values lie within, for clamping intervals. */
  value_ranges?: Readonly<Record<string, [number, number]>>;
  /** The run compared with its baseline, as its record keeps it. */
  baseline?: RecordedBaseline;
  /** Its budget and what it spent, as its record keeps them. */
  budget?: RecordedBudget;
  /**
   * When a case passes over its epochs, for a run without `config` (a
   * Scores file whose sidecar says, as `diff` reads it); a config's
   * `epochs.require` comes first.
   */
  require?: CaseRequirement;
}
