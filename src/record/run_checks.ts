/**
 * What a RunRecord keeps of the checks a run met besides its gates: its
 * comparison with a baseline (`run --baseline`) and its budget
 * (`budget_usd`), so that a report made from the record later (`report
 * --markdown`) says what the run said. Records without them are read as
 * before.
 *
 * @module
 */

import { countAt, FieldError, mappingAt, stringAt } from "../io/fields.ts";

/**
 * A case whose verdict on one metric changed against the baseline, or whose
 * epochs disagree (`CaseChange` in the run layer).
 *
 * @example
 * ```ts
 * import type { RecordedCaseChange } from "./mod.ts";
 * const change: RecordedCaseChange = { case: "d#1", metric: "m", baseline: [5, 5], now: [0, 5], p_value: 1 / 252 };
 * if (change.now[0] !== 0) throw new Error("unexpected");
 * ```
 */
export interface RecordedCaseChange {
  /** The case: its example id, `~<target>` in a matrix. */
  case: string;
  /** The metric. */
  metric: string;
  /** Passes and trials (epochs) in the baseline. */
  baseline: [number, number];
  /** Passes and trials now. */
  now: [number, number];
  /** For a flaky case, Fisher's one-sided p-value that its pass fraction fell. */
  p_value?: number;
}

/**
 * A metric's paired difference against the baseline (now − baseline), as a
 * record keeps it: `diff`'s line without its pairs.
 *
 * @example
 * ```ts
 * import type { RecordedMetricChange } from "./mod.ts";
 * const m: RecordedMetricChange = { metric: "m", pairs: 2, mean_a: 1, mean_b: 0.5, delta: -0.5, ci95: [-1, 1] };
 * if (m.delta !== -0.5) throw new Error();
 * ```
 */
export interface RecordedMetricChange {
  /** The metric. */
  metric: string;
  /** Its target, in a matrix run (a line per target and metric). */
  target_name?: string;
  /** Examples measured in both. */
  pairs: number;
  /** The baseline's mean over the pairs; `null` without pairs. */
  mean_a: number | null;
  /** The mean now over the pairs. */
  mean_b: number | null;
  /** The mean of now − baseline over the pairs. */
  delta: number | null;
  /** Its 95% interval, clamped as `diff` clamps it; `null` below two pairs. */
  ci95: [number, number] | null;
}

/**
 * The run compared with its baseline, as its record keeps it: the shape of
 * `BaselineComparison` with the baseline's path, each metric's difference
 * without its list of pairs.
 *
 * @example
 * ```ts
 * import type { RecordedBaseline } from "./mod.ts";
 * const b: RecordedBaseline = {
 *   path: ".evalpipe/baselines/main.json", failed: true,
 *   newly_failing: [{ case: "d#1", metric: "m", baseline: [1, 1], now: [0, 1] }],
 *   fixed: [], flaky: [], new_cases: [], removed_cases: [], metrics: [], worse: [], unfit: [],
 * };
 * if (b.newly_failing.length !== 1) throw new Error();
 * ```
 */
export interface RecordedBaseline {
  /** The baseline's file. */
  path: string;
  /** Whether the run regressed or cannot be compared: it exited 1 for it. */
  failed: boolean;
  /** Cases that passed in the baseline and fail now. */
  newly_failing: RecordedCaseChange[];
  /** Cases that failed in the baseline and pass now. */
  fixed: RecordedCaseChange[];
  /** Cases whose epochs disagree, not counted as regressions. */
  flaky: RecordedCaseChange[];
  /** Cases run now and not in the baseline. */
  new_cases: string[];
  /** Cases in the baseline and not run now. */
  removed_cases: string[];
  /** The paired difference per metric. */
  metrics: RecordedMetricChange[];
  /** The metrics significantly worse. */
  worse: string[];
  /** Why the run cannot be compared with the baseline, if it cannot. */
  unfit: string[];
}

/**
 * The run's budget (`budget_usd`) and what it spent against it.
 *
 * @example
 * ```ts
 * import type { RecordedBudget } from "./mod.ts";
 * const b: RecordedBudget = { limit_usd: 2, spent_usd: 2.0031, refused: 41 };
 * if (b.refused === 0) throw new Error();
 * ```
 */
export interface RecordedBudget {
  /** The budget, in US dollars. */
  limit_usd: number;
  /** What the run's priced calls spent. */
  spent_usd: number;
  /** Calls not made because the budget was spent: their Scores are blocked. */
  refused: number;
}

/**
 * What a record's ending keeps of the checks a run met besides its gates.
 *
 * @example
 * ```ts
 * import type { RunChecks } from "./mod.ts";
 * const checks: RunChecks = { budget: { limit_usd: 2, spent_usd: 0.25, refused: 0 } };
 * if (checks.baseline !== undefined) throw new Error();
 * ```
 */
export interface RunChecks {
  /** The comparison with the baseline, when the run had one. */
  baseline?: RecordedBaseline;
  /** The budget, when the config set one. */
  budget?: RecordedBudget;
}

/**
 * A comparison with a baseline as a record keeps it: each metric's figures
 * without its pairs.
 *
 * @param path The baseline's file.
 * @param c The comparison.
 * @returns What the record keeps.
 *
 * @example
 * ```ts
 * import { recordedBaseline } from "./mod.ts";
 * import { compareWithBaseline } from "../run/mod.ts";
 * import { scored } from "../score/mod.ts";
 * const c = compareWithBaseline([scored("m", 1, { example_id: "d#1" })], [scored("m", 0, { example_id: "d#1" })], "all");
 * const kept = recordedBaseline("b.json", c);
 * if (!kept.failed || kept.metrics[0]?.delta !== -1 || "regressions" in kept.metrics[0]) throw new Error();
 * ```
 */
export function recordedBaseline(
  path: string,
  c: Omit<RecordedBaseline, "path">,
): RecordedBaseline {
  return {
    path,
    failed: c.failed,
    newly_failing: c.newly_failing,
    fixed: c.fixed,
    flaky: c.flaky,
    new_cases: c.new_cases,
    removed_cases: c.removed_cases,
    metrics: c.metrics.map((m) => ({
      metric: m.metric,
      ...(m.target_name === undefined ? {} : { target_name: m.target_name }),
      pairs: m.pairs,
      mean_a: m.mean_a,
      mean_b: m.mean_b,
      delta: m.delta,
      ci95: m.ci95,
    })),
    worse: c.worse,
    unfit: c.unfit,
  };
}

/** A list at `where`, each item checked by `item`. */
function listAt<T>(
  value: unknown,
  where: string,
  item: (v: unknown, where: string) => T,
): T[] {
  if (!Array.isArray(value)) throw new FieldError(where, "a list", value);
  return value.map((v, i) => item(v, `${where}[${i}]`));
}

function text(v: unknown, where: string): string {
  if (typeof v !== "string") throw new FieldError(where, "a string", v);
  return v;
}

function numberOrNull(v: unknown, where: string): number | null {
  if (v !== null && typeof v !== "number") {
    throw new FieldError(where, "a number or null", v);
  }
  return v;
}

function pair(v: unknown, where: string): [number, number] {
  if (!Array.isArray(v) || v.length !== 2) {
    throw new FieldError(where, "two whole numbers", v);
  }
  return [countAt(v[0], `${where}[0]`), countAt(v[1], `${where}[1]`)];
}

function caseChange(v: unknown, where: string): RecordedCaseChange {
  const o = mappingAt(v, where);
  const p = o.p_value;
  if (p !== undefined && typeof p !== "number") {
    throw new FieldError(`${where}.p_value`, "a number", p);
  }
  return {
    case: stringAt(o, "case", `${where}.`),
    metric: stringAt(o, "metric", `${where}.`),
    baseline: pair(o.baseline, `${where}.baseline`),
    now: pair(o.now, `${where}.now`),
    ...(p !== undefined ? { p_value: p } : {}),
  };
}

function metricChange(v: unknown, where: string): RecordedMetricChange {
  const o = mappingAt(v, where);
  const ci = o.ci95;
  if (
    ci !== null &&
    !(Array.isArray(ci) && ci.length === 2 &&
      ci.every((x) => typeof x === "number"))
  ) {
    throw new FieldError(`${where}.ci95`, "two numbers or null", ci);
  }
  return {
    metric: stringAt(o, "metric", `${where}.`),
    ...(o.target_name === undefined
      ? {}
      : { target_name: stringAt(o, "target_name", `${where}.`) }),
    pairs: countAt(o.pairs, `${where}.pairs`),
    mean_a: numberOrNull(o.mean_a, `${where}.mean_a`),
    mean_b: numberOrNull(o.mean_b, `${where}.mean_b`),
    delta: numberOrNull(o.delta, `${where}.delta`),
    ci95: ci === null ? null : [ci[0] as number, ci[1] as number],
  };
}

/**
 * A record's `baseline` and `budget`, checked, when it has them.
 *
 * @param o The record's object.
 * @returns What it keeps of them.
 * @throws {FieldError} When one is there but not of its shape, naming the field.
 *
 * @example A record without them has none
 * ```ts
 * import { runChecksAt } from "./mod.ts";
 * const checks = runChecksAt({ budget: { limit_usd: 2, spent_usd: 0.5, refused: 0 } });
 * if (checks.budget?.spent_usd !== 0.5 || checks.baseline !== undefined) throw new Error();
 * ```
 */
export function runChecksAt(o: Record<string, unknown>): RunChecks {
  const out: RunChecks = {};
  if (o.baseline !== undefined) {
    const b = mappingAt(o.baseline, "baseline");
    if (typeof b.failed !== "boolean") {
      throw new FieldError("baseline.failed", "true or false", b.failed);
    }
    out.baseline = {
      path: stringAt(b, "path", "baseline."),
      failed: b.failed,
      newly_failing: listAt(
        b.newly_failing,
        "baseline.newly_failing",
        caseChange,
      ),
      fixed: listAt(b.fixed, "baseline.fixed", caseChange),
      flaky: listAt(b.flaky, "baseline.flaky", caseChange),
      new_cases: listAt(b.new_cases, "baseline.new_cases", text),
      removed_cases: listAt(b.removed_cases, "baseline.removed_cases", text),
      metrics: listAt(b.metrics, "baseline.metrics", metricChange),
      worse: listAt(b.worse, "baseline.worse", text),
      unfit: listAt(b.unfit, "baseline.unfit", text),
    };
  }
  if (o.budget !== undefined) {
    const b = mappingAt(o.budget, "budget");
    for (const key of ["limit_usd", "spent_usd"] as const) {
      if (typeof b[key] !== "number" || !(b[key] >= 0)) {
        throw new FieldError(`budget.${key}`, "a number from 0", b[key]);
      }
    }
    out.budget = {
      limit_usd: b.limit_usd as number,
      spent_usd: b.spent_usd as number,
      refused: countAt(b.refused, "budget.refused"),
    };
  }
  return out;
}
