/**
 * An evalpipe RunRecord in evalglass's shape: its Scores as evalglass's
 * Scores, a Scorecard whose figures are the ones evalglass's reader
 * recomputes from those Scores, and the run's fingerprints as evalglass's
 * provenance dimensions.
 *
 * @module
 */

import type { Diagnostic, Score } from "../score/types.ts";
import type { RunRecord } from "../record/run_record.ts";
import type { RunRecordSummary } from "../record/record_entries.ts";
import { checkGates, type Gate } from "../aggregate/gates.ts";
import { tCritical95 } from "../aggregate/stats.ts";
import { undecidedGates } from "../record/_undecided_gates.ts";
import { createHash } from "node:crypto";
import { compareCodePoints, pythonCompactJson } from "./_python_json.ts";
import type { EvalglassRunRecord, EvalglassScore } from "./types.ts";
import { withVerdict } from "./_verdict.ts";

/**
 * The dimensions evalglass's `RunFingerprint` requires, each a string.
 *
 * @example
 * ```ts
 * import { EVALGLASS_DIMENSIONS } from "./mod.ts";
 * if (!EVALGLASS_DIMENSIONS.includes("evaluator")) throw new Error("unexpected");
 * ```
 */
export const EVALGLASS_DIMENSIONS: readonly string[] = [
  "framework",
  "metric_spec",
  "evaluator",
  "dataset",
  "example",
  "evidence",
  "config",
  "policy",
  "authority",
  "baseline",
];

/** The dimensions two evalglass runs must share to be compared. */
const GATING_DIMENSIONS = [
  "framework",
  "metric_spec",
  "evaluator",
  "dataset",
  "config",
  "policy",
];

/**
 * What {@linkcode toEvalglass} makes: the two documents evalglass's result
 * store writes.
 *
 * @example
 * ```ts
 * import { type EvalglassExport, toEvalglass } from "./mod.ts";
 * import { parseRunRecord } from "../record/mod.ts";
 * const record = parseRunRecord(JSON.stringify({
 *   evalpipe_run_record: 1, run_id: "r1", started_at: "2026-12-01T08:00:00.000Z", config_path: "evalpipe.yaml", config: {},
 *   fingerprints: { config: "sha256:aa", dataset: null, target: "sha256:cc", scorers: {} },
 *   scores: [], aggregates: [], finished_at: "2026-12-01T08:00:01.000Z", complete: true,
 * }), "run.json");
 * const out: EvalglassExport = await toEvalglass(record);
 * if (out.runrecord.scorecard !== out.scorecard) throw new Error("unexpected");
 * ```
 */
export interface EvalglassExport {
  /** The content of `runrecord.json`. */
  runrecord: EvalglassRunRecord;
  /** The content of `scorecard.json` (the record's own Scorecard). */
  scorecard: Record<string, unknown>;
}

/** evalglass's `fingerprint_dimension`: SHA-256 of the value as compact sorted JSON. */
async function dimension(value: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(pythonCompactJson(value));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function evalglassDiagnostic(d: Diagnostic): Record<string, unknown> {
  const out: Record<string, unknown> = {
    code: d.code,
    severity: d.severity,
    message: d.message,
  };
  if (d.location !== undefined) out.location = d.location;
  if (d.details !== undefined && Object.keys(d.details).length > 0) {
    out.details = d.details;
  }
  if (d.cause !== undefined) out.cause = d.cause;
  if (d.evidence_refs !== undefined && d.evidence_refs.length > 0) {
    out.evidence_refs = d.evidence_refs;
  }
  return out;
}

/**
 * One Score in evalglass's shape: what evalglass's `Score.to_dict` writes
 * (empty lists and mappings left out), with evalpipe's `passed`, `reason`
 * and, in a matrix run, `target_name` kept beside it and under its
 * provenance's `evalpipe` key, which evalglass keeps when it writes the
 * record again.
 *
 * @param score An evalpipe Score.
 * @returns The evalglass Score.
 *
 * @example An error keeps its diagnostic and loses its empty evidence list
 * ```ts
 * import { evalglassScore } from "./mod.ts";
 * import { errored } from "../score/mod.ts";
 * const s = evalglassScore(errored("m", "scorer error: boom", { code: "scorer.exit_status" }));
 * if (s.status !== "error" || s.evidence_refs !== undefined || s.diagnostics?.length !== 1) throw new Error("unexpected");
 * ```
 */
export function evalglassScore(score: Score): EvalglassScore {
  const out: EvalglassScore = {
    metric: score.metric,
    status: score.status,
    validity: score.validity,
    value: score.value,
    evaluator_version: score.evaluator_version,
  };
  if (score.diagnostics.length > 0) {
    out.diagnostics = score.diagnostics.map(evalglassDiagnostic);
  }
  if (score.evidence_refs.length > 0) out.evidence_refs = score.evidence_refs;
  const provenance = withVerdict(score);
  if (provenance !== undefined) out.provenance = provenance;
  if (score.example_id !== undefined) out.example_id = score.example_id;
  if (score.unit_id !== undefined) out.unit_id = score.unit_id;
  // A matrix run's Scores say which target they measured: without it, read
  // back, the targets' Scores would pool into one metric.
  if (score.target_name !== undefined) out.target_name = score.target_name;
  if (score.passed !== undefined) out.passed = score.passed;
  if (score.reason !== undefined) out.reason = score.reason;
  return out;
}

const isAggregatable = (s: Score) =>
  s.status === "scored" && s.validity === "valid" && s.value !== null;

const within = (v: number, [low, high]: readonly [number, number]) =>
  v >= low && v <= high;

/** evalglass's `_stable`: interval bounds rounded to twelve places. */
const stable = (x: number) => Math.round(x * 1e12) / 1e12;

/**
 * What the Scorecard keeps of one metric's Scores as they pass: its counts
 * and the values of its scored and valid Scores, in order.
 */
class MetricTally {
  readonly status_counts: Record<string, number> = {};
  readonly population: Record<string, number> = {
    scored_valid: 0,
    non_evaluable: 0,
    blocked: 0,
    skipped: 0,
    error: 0,
  };
  values = new Float64Array(64);
  n = 0;

  add(s: Score): void {
    this.status_counts[s.status] = (this.status_counts[s.status] ?? 0) + 1;
    if (isAggregatable(s)) {
      if (this.n === this.values.length) {
        const grown = new Float64Array(this.n * 2);
        grown.set(this.values);
        this.values = grown;
      }
      this.values[this.n++] = s.value as number;
    }
    // evalglass counts a scored but invalid Score as an error here.
    const bucket = s.status === "scored"
      ? (s.validity === "valid" ? "scored_valid" : "error")
      : s.status;
    this.population[bucket] = (this.population[bucket] ?? 0) + 1;
  }
}

/**
 * The metric's `AggregatedMetric`, `Estimate` and `PopulationSummary`. The
 * interval is clamped to the metric's declared range, as evalglass clamps a
 * mean's interval to its `score_range` (which every continuous metric of its
 * declares), unless a value lies outside it: the declaration is then not
 * trusted, as evalpipe's own aggregates do not trust it.
 */
function summarise(
  metric: string,
  tally: MetricTally,
  range: readonly [number, number] | undefined,
) {
  const { status_counts } = tally;
  const population = { metric, ...tally.population };
  const values = tally.values.subarray(0, tally.n);
  let sum = 0;
  for (const v of values) sum += v;
  const n = values.length;
  const value = n > 0 ? sum / n : null;
  const estimate: Record<string, unknown> = {
    metric,
    point: value,
    n_effective: n,
  };
  if (value !== null) {
    const diagnostics: Record<string, unknown>[] = [];
    if (n >= 2) {
      let squares = 0;
      for (const v of values) squares += (v - value) ** 2;
      const sd = Math.sqrt(squares / (n - 1));
      const half = sd === 0 ? 0 : tCritical95(n - 1) * sd / Math.sqrt(n);
      let lower = stable(value - half), upper = stable(value + half);
      if (range !== undefined && values.every((v) => within(v, range))) {
        lower = Math.max(range[0], lower);
        upper = Math.min(range[1], upper);
      }
      estimate.interval = { method: "student_t", level: 0.95, lower, upper };
    }
    if (n < 5) {
      diagnostics.push({
        code: "low_reliability_small_n",
        severity: "warning",
        message: `only ${n} eligible observation(s); any interval is ` +
          `descriptive sampling uncertainty, not a reliability estimate (n < 5).`,
        details: { n_effective: n, small_n_threshold: 5 },
      });
    }
    if (diagnostics.length > 0) estimate.diagnostics = diagnostics;
  }
  return {
    aggregated: {
      metric,
      aggregation: "mean",
      value,
      included_count: n,
      status_counts,
    },
    estimate,
    population,
  };
}

const RANK: Record<string, number> = { info: 0, warning: 1, error: 2 };

function outranks(a: Diagnostic, b: Diagnostic): boolean {
  const ra = RANK[a.severity] ?? 0, rb = RANK[b.severity] ?? 0;
  return ra !== rb ? ra > rb : compareCodePoints(a.message, b.message) < 0;
}

/**
 * evalglass's diagnostic clusters: per metric and diagnostic code, how many
 * Scores carry it and the worst of them, in evalglass's canonical order.
 */
class Clusters {
  #found = new Map<
    string,
    { metric: string; code: string; count: number; rep: Diagnostic }
  >();

  add(s: Score): void {
    if (s.diagnostics.length === 0) return;
    const perCode = new Map<string, Diagnostic>();
    for (const d of s.diagnostics) {
      const best = perCode.get(d.code);
      if (best === undefined || outranks(d, best)) perCode.set(d.code, d);
    }
    for (const [code, d] of perCode) {
      const key = JSON.stringify([s.metric, code]);
      const c = this.#found.get(key);
      if (c === undefined) {
        this.#found.set(key, { metric: s.metric, code, count: 1, rep: d });
      } else {
        c.count++;
        if (outranks(d, c.rep)) c.rep = d;
      }
    }
  }

  result(): Record<string, unknown>[] {
    return [...this.#found.values()]
      .sort((a, b) =>
        (RANK[b.rep.severity] ?? 0) - (RANK[a.rep.severity] ?? 0) ||
        b.count - a.count ||
        compareCodePoints(a.metric, b.metric) ||
        compareCodePoints(a.code, b.code)
      )
      .map((c) => ({
        metric: c.metric,
        code: c.code,
        severity: c.rep.severity,
        count: c.count,
        message: c.rep.message,
      }));
  }
}

/** The suite's gates, as the resolved config in the record holds them. */
function gatesOf(config: Record<string, unknown>): Record<string, Gate> {
  const raw = config.gates;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return {};
  const gates: Record<string, Gate> = {};
  for (const [metric, gate] of Object.entries(raw)) {
    if (typeof gate !== "object" || gate === null) continue;
    const g: Record<string, number> = {};
    for (const [k, v] of Object.entries(gate)) {
      if (typeof v === "number") g[k] = v;
    }
    gates[metric] = g as Gate;
  }
  return gates;
}

/**
 * Maps an evalpipe RunRecord to evalglass's `runrecord.json` and
 * `scorecard.json`. The Scorecard's metrics (the mean of each metric's scored
 * and valid Scores, and its counts by status), estimates, populations and
 * diagnostic clusters are computed from the Scores as evalglass's reader
 * recomputes them, so that its consistency check holds. A metric with a gate
 * in the suite is a gating metric that passes or fails as the gate does (is
 * blocked, undecided, when the run did not finish);
 * every other metric is informational.
 *
 * @param record The evalpipe RunRecord.
 * @returns The two documents.
 *
 * @example A run whose gate failed is a failing evalglass verdict
 * ```ts
 * import { toEvalglass } from "./mod.ts";
 * import { parseRunRecord } from "../record/mod.ts";
 * const record = parseRunRecord(JSON.stringify({
 *   evalpipe_run_record: 1, run_id: "r1", started_at: "2026-12-01T08:00:00.000Z", config_path: "evalpipe.yaml",
 *   config: { gates: { m: { min_mean: 0.9 } } },
 *   fingerprints: { config: "sha256:aa", dataset: null, target: "sha256:cc", scorers: { m: "m@1" } },
 *   scores: [{ metric: "m", status: "scored", validity: "valid", value: 0.5, passed: true, evaluator_version: "m@1",
 *     example_id: "d#1", unit_id: "d#1", diagnostics: [], evidence_refs: [] }],
 *   aggregates: [], finished_at: "2026-12-01T08:00:01.000Z", complete: true,
 * }), "run.json");
 * const { scorecard } = await toEvalglass(record);
 * const verdict = scorecard.verdict as { verdict: string; failing_gates: string[] };
 * if (verdict.verdict !== "fail" || verdict.failing_gates[0] !== "m") throw new Error("unexpected");
 * ```
 */
export async function toEvalglass(record: RunRecord): Promise<EvalglassExport> {
  const tally = new EvalglassTally();
  for (const s of record.scores) tally.add(s);
  const head = await tally.finish(record);
  const runrecord: EvalglassRunRecord = {
    run_id: head.run_id,
    scorecard: head.scorecard,
    scores: record.scores.map(evalglassScore),
    provenance: head.provenance,
    comparable: head.comparable,
  };
  return { runrecord, scorecard: head.scorecard };
}

/** What `runrecord.json` holds besides its Scores. */
export interface EvalglassHead {
  /** The run id. */
  run_id: string;
  /** The Scorecard, also `scorecard.json`. */
  scorecard: Record<string, unknown>;
  /** The run's fingerprint dimensions. */
  provenance: { dimensions: Record<string, string> };
  /** That no comparison was asked for. */
  comparable: Record<string, unknown>;
}

/**
 * What `runrecord.json` says besides its Scores: the Scorecard and the
 * provenance, computed from the Scores as they pass ({@linkcode add}), so
 * that a record of any size is exported holding a few numbers per Score.
 */
export class EvalglassTally {
  #byMetric = new Map<string, MetricTally>();
  #clusters = new Clusters();
  #seen = new Set<string>();
  #examples = createHash("sha256").update("[");

  /** Counts one Score, in the record's order. */
  add(s: Score): void {
    let tally = this.#byMetric.get(s.metric);
    if (tally === undefined) {
      this.#byMetric.set(s.metric, tally = new MetricTally());
    }
    tally.add(s);
    this.#clusters.add(s);
    const id = s.example_id ?? s.unit_id;
    if (id !== undefined && !this.#seen.has(id)) {
      // The example ids' dimension is the hash of their list, hashed as it grows.
      this.#examples.update(
        `${this.#seen.size > 0 ? "," : ""}${pythonCompactJson(id)}`,
      );
      this.#seen.add(id);
    }
  }

  /**
   * The Scorecard and the rest of `runrecord.json` but its Scores.
   *
   * @param record The record's header, aggregates and how it ended.
   */
  async finish(
    record: RunRecordSummary,
  ): Promise<EvalglassHead> {
    const byMetric = this.#byMetric;
    const metrics = [...byMetric.keys()].sort(compareCodePoints);
    const summaries = metrics.map((m) =>
      summarise(m, byMetric.get(m)!, record.value_ranges?.[m])
    );
    const exampleCount = this.#seen.size;
    const exampleDimension = this.#examples.update("]").digest("hex");
    const cluster = this.#clusters.result();

    const gates = gatesOf(record.config);
    // A shard's gates are checked on the merged run, as `run` checks none
    // on a shard: its part of the examples decides no gate here either.
    const shard = record.shard;
    // A run that did not finish (cut short, a partial merge) measured part
    // of its examples: a gate over them is blocked, as evalglass blocks a
    // gate whose measurement is incomplete, so that no partial verdict
    // reads as the run's.
    const undecided = new Set(undecidedGates(record));
    const failures = shard === undefined && undecided.size === 0
      ? checkGates(gates, record.aggregates)
      : [];
    const passing: string[] = [];
    const failing: string[] = [];
    const blocked: string[] = [];
    const informational: string[] = [];
    const reasons: Record<string, string[]> = {};
    const authority: Record<string, unknown> = {};
    const gated = [...new Set([...metrics, ...Object.keys(gates)])].sort(
      compareCodePoints,
    );
    for (const metric of gated) {
      if (gates[metric] === undefined || shard !== undefined) {
        informational.push(metric);
        authority[metric] = {
          can_gate: false,
          level: "informational",
          blocked: false,
          reasons: [
            gates[metric] === undefined ? "no_evalpipe_gate" : "evalpipe_shard",
          ],
        };
        continue;
      }
      authority[metric] = {
        can_gate: true,
        level: "gating",
        blocked: false,
        reasons: [],
      };
      if (undecided.has(metric)) {
        blocked.push(metric);
        reasons[metric] = ["incomplete_measurement"];
        continue;
      }
      const failed = failures.filter((f) => f.metric === metric);
      if (failed.length === 0) passing.push(metric);
      else {
        failing.push(metric);
        reasons[metric] = failed.map((f) => f.message);
      }
    }
    const verdict = blocked.length > 0
      ? "blocked"
      : failing.length > 0
      ? "fail"
      : passing.length > 0
      ? "pass"
      : "informational";

    const diagnostics: Record<string, unknown>[] = [{
      code: "evalpipe.export",
      severity: "info",
      message:
        `exported from the evalpipe RunRecord of run ${record.run_id} (config ${record.config_path})`,
      details: {
        started_at: record.started_at,
        finished_at: record.finished_at,
        complete: record.complete,
        // What evalpipe's reader needs to clamp intervals as the run did.
        ...(record.value_ranges !== undefined
          ? { value_ranges: record.value_ranges }
          : {}),
      },
    }];
    if (shard !== undefined) {
      diagnostics.push({
        code: "evalpipe.shard",
        severity: "warning",
        message:
          `shard ${shard.index} of ${shard.count} of an evalpipe run: its gates are checked on the merged run (evalpipe merge), so none is decided here`,
      });
    }
    if (!record.complete) {
      diagnostics.push({
        code: "evalpipe.run_incomplete",
        severity: "warning",
        message: `the evalpipe run did not finish: some units have no Scores${
          blocked.length > 0
            ? `, so its gates are undecided (blocked): ${blocked.join(", ")}`
            : ""
        }`,
      });
    }
    const scorecard: Record<string, unknown> = {
      verdict: {
        verdict,
        ci_should_fail: verdict === "fail" || verdict === "blocked",
        passing_gates: passing,
        failing_gates: failing,
        blocked_gates: blocked,
        informational_metrics: informational,
        reasons,
      },
      metrics: summaries.map((s) => s.aggregated),
      authority,
      baseline_state: "comparison_not_requested",
      diagnostics,
      estimates: summaries.map((s) => s.estimate),
      populations: summaries.map((s) => s.population),
      ...(cluster.length > 0 ? { clusters: cluster } : {}),
    };

    const f = record.fingerprints;
    const dimensions: Record<string, string> = {
      framework: await dimension("evalpipe"),
      metric_spec: await dimension(
        metrics.map((name) => ({ name, aggregation: "mean" })),
      ),
      evaluator: await dimension(f.scorers),
      dataset: f.dataset ?? await dimension(null),
      example: exampleDimension,
      evidence: await dimension({ example_count: exampleCount }),
      config: f.config,
      policy: await dimension([]),
      authority: await dimension(gates),
      baseline: await dimension(null),
      // No evalglass counterpart: kept as a dimension evalglass does not gate on.
      target: f.target,
    };
    const provenance = { dimensions };
    return {
      run_id: record.run_id,
      scorecard,
      provenance,
      comparable: {
        current: provenance,
        requested: false,
        gating_dimensions: GATING_DIMENSIONS,
        state: "comparison_not_requested",
        changed_dimensions: [],
      },
    };
  }
}
