/**
 * Reports for people: the summary table `run` prints on stderr.
 *
 * @module
 */

import type { Aggregate } from "../aggregate/mod.ts";
import type { DiffLine } from "../diff/diff.ts";
import { escapeControl } from "../base/terminal.ts";
import { formatClassification } from "./classification.ts";
import { alignRows } from "./_table.ts";

function fixed(x: number | null, digits = 3): string {
  return x === null ? "–" : x.toFixed(digits);
}

function percent(x: number | null): string {
  return x === null ? "–" : `${(x * 100).toFixed(1)}%`;
}

/**
 * Formats aggregates as an aligned table: metric, mean with its 95% interval
 * (`± half` when symmetric, `[low, high]` when clamped to the metric's
 * range), the mean if every error and blocked Score had scored the low
 * end of the metric's range and if every one had scored its high end (0
 * and 1 without a range: what the failures could hide), pass rate (with
 * the rule of three's bound at 0% or 100%), coverage (aggregatable / n),
 * then the Scores without a value counted by status: `error`, `blocked`,
 * `skipped`, `non_evaluable`.
 * Below the table, a warning for each metric whose mean rests on fewer than
 * 5 values, then the figures of each classification metric
 * ({@linkcode formatClassification}).
 *
 * @param aggregates The aggregates.
 * @returns The table, lines joined with `\n`, without a trailing newline.
 *
 * @example Four examples: a clamped interval, the rule of three, a small-n warning
 * ```ts
 * import { formatSummary } from "./summary.ts";
 * import { Aggregator } from "../aggregate/mod.ts";
 * import { scored } from "../score/mod.ts";
 * const agg = new Aggregator({ valueRange: () => [0, 1] });
 * for (const id of ["d#1", "d#2", "d#3", "d#4"]) agg.add(scored("exact_match", 1, { example_id: id }));
 * const text = await formatSummary(agg.results());
 * if (!text.includes("100.0% (≥ 25.0%)") || !text.includes("fewer than 5")) throw new Error(text);
 * ```
 */
export async function formatSummary(
  aggregates: readonly Aggregate[],
): Promise<string> {
  const header = [
    "metric",
    "mean ± 95% CI",
    "failures as low…high",
    "pass rate",
    "coverage",
    "error",
    "blocked",
    "skipped",
    "non_evaluable",
  ];
  const rows = aggregates.map((a) => [
    // A matrix run's aggregates stand per target (issue 14).
    escapeControl(
      a.target_name !== undefined ? `${a.target_name}: ${a.metric}` : a.metric,
    ),
    meanCell(a),
    a.errors + a.blocked === 0 || a.mean_bounds === null
      ? "–"
      : `${fixed(a.mean_bounds[0])}…${fixed(a.mean_bounds[1])}`,
    passRateCell(a),
    `${percent(a.coverage)} (${a.aggregatable}/${a.n})`,
    String(a.errors),
    String(a.blocked),
    String(a.skipped),
    String(a.non_evaluable),
  ]);
  const warnings = aggregates.filter((a) => a.small_n).map((a) =>
    `warning: the mean of "${escapeControl(a.metric)}"${
      a.target_name !== undefined
        ? ` (target ${escapeControl(a.target_name)})`
        : ""
    } rests on ${a.examples} ${
      a.examples === 1 ? "value" : "values"
    } (fewer than 5): read its interval as a description of this sample, not a prediction`
  );
  const labels = await formatClassification(aggregates);
  return [
    await table(header, rows),
    ...warnings,
    ...(labels === "" ? [] : ["", labels]),
  ]
    .join("\n");
}

function meanCell(a: Aggregate): string {
  if (a.ci95 === null || a.mean === null) return fixed(a.mean);
  const raw = a.ci95_unclamped ?? a.ci95;
  if (raw[0] === a.ci95[0] && raw[1] === a.ci95[1]) {
    return `${fixed(a.mean)} ± ${fixed(a.ci95[1] - a.mean)}`;
  }
  // Clamped to the range: no longer symmetric around the mean.
  return `${fixed(a.mean)} [${fixed(a.ci95[0])}, ${fixed(a.ci95[1])}]`;
}

function passRateCell(a: Aggregate): string {
  const three = a.pass_rate_rule_of_three;
  if (three === null || a.pass_rate === null) {
    return percent(a.pass_rate);
  }
  // Up to 3 examples the bound is clamped to the whole range (`≥ 0.0%`,
  // `≤ 100.0%`): it bounds nothing, so it is not shown as if it did.
  if (a.pass_rate === 0) {
    return three[1] < 1
      ? `${percent(a.pass_rate)} (≤ ${percent(three[1])})`
      : percent(a.pass_rate);
  }
  return three[0] > 0
    ? `${percent(a.pass_rate)} (≥ ${percent(three[0])})`
    : percent(a.pass_rate);
}

async function table(header: string[], rows: string[][]): Promise<string> {
  return (await alignRows([header, ...rows])).join("\n");
}

/** The statuses of Scores without a value, in the design's order. */
const NO_VALUE = ["error", "blocked", "skipped", "non_evaluable"] as const;

function signed(x: number | null): string {
  return x === null ? "–" : `${x >= 0 ? "+" : ""}${x.toFixed(3)}`;
}

/** A diff line's metric, after its target in a line of one target. */
function lineName(d: DiffLine): string {
  return d.target_name === undefined
    ? d.metric
    : `${d.target_name}: ${d.metric}`;
}

/**
 * Formats a diff as a table (metric, pairs, means, Δ with its 95% interval,
 * counts of changes), then, for each metric whose Scores without a value
 * changed, their counts by status in A and B (`m: blocked 0 → 3`), then the
 * worst regressions of each metric.
 *
 * @param lines The diff lines.
 * @param worst How many regressions to list per metric.
 * @returns The text, without a trailing newline.
 *
 * @example Compare a candidate run with the baseline
 * ```ts
 * import { formatDiff } from "./mod.ts";
 * import { diffScores } from "../diff/mod.ts";
 * import { scored } from "../score/mod.ts";
 * const a = [scored("m", 1, { example_id: "d#1" }), scored("m", 1, { example_id: "d#2" })];
 * const b = [scored("m", 0, { example_id: "d#1" }), scored("m", 1, { example_id: "d#2" })];
 * const text = await formatDiff(diffScores(a, b));
 * if (!text.includes("Worst regressions of m:\n  d#1  1.000 → 0.000")) throw new Error(text);
 * ```
 */
export async function formatDiff(
  lines: readonly DiffLine[],
  worst = 5,
): Promise<string> {
  const header = [
    "metric",
    "pairs",
    "mean A",
    "mean B",
    "Δ (B − A) [95% CI]",
    "better",
    "worse",
    "pass→fail",
    "fail→pass",
    "only A",
    "only B",
  ];
  const rows = lines.map((d) => [
    escapeControl(lineName(d)),
    String(d.pairs),
    fixed(d.mean_a),
    fixed(d.mean_b),
    `${signed(d.delta)}${
      d.ci95 !== null ? ` [${signed(d.ci95[0])}, ${signed(d.ci95[1])}]` : ""
    }`,
    String(d.improved),
    String(d.regressed),
    String(d.newly_failing),
    String(d.newly_passing),
    String(d.only_a),
    String(d.only_b),
  ]);
  const out = [await table(header, rows)];
  // Scores without a value, by status, where the runs differ: a target
  // that broke shows up here even when no pair is left to compare.
  for (const d of lines) {
    const changes = NO_VALUE.filter((st) =>
      d.statuses_a[st] !== d.statuses_b[st]
    ).map((st) => `${st} ${d.statuses_a[st]} → ${d.statuses_b[st]}`);
    if (changes.length > 0) {
      out.push(`${escapeControl(lineName(d))}: ${changes.join(", ")}`);
    }
  }
  for (const d of lines) {
    if (d.regressions.length === 0) continue;
    out.push("", `Worst regressions of ${escapeControl(lineName(d))}:`);
    for (const r of d.regressions.slice(0, worst)) {
      out.push(
        `  ${escapeControl(r.example_id)}  ${fixed(r.a)} → ${fixed(r.b)}`,
      );
    }
    if (d.regressions.length > worst) {
      out.push(`  … and ${d.regressions.length - worst} more`);
    }
  }
  return out.join("\n");
}
