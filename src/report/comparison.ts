/**
 * Reports for people on comparing and gating: a matrix's comparison table,
 * what changed against a baseline, and how cases fared over their epochs.
 *
 * @module
 */

import type { Aggregate, CaseRequirement } from "../aggregate/types.ts";
import type { ComparisonLine } from "../diff/compare.ts";
import type { BaselineComparison, CaseChange } from "../run/baseline.ts";
import { escapeControl } from "../base/terminal.ts";
import { casesChangedText } from "../diff/cases.ts";
import { alignRows } from "./_table.ts";

/** A figure to three places; `–` when undefined. */
export function fixed(x: number | null): string {
  return x === null ? "–" : x.toFixed(3);
}

/** A difference to three places with its sign; `–` when undefined. */
export function signed(x: number | null): string {
  return x === null ? "–" : `${x >= 0 ? "+" : ""}${x.toFixed(3)}`;
}

/** An interval after its figure, ` [low, high]`; nothing when undefined. */
export function interval(
  ci: readonly [number, number] | null,
  show = fixed,
): string {
  return ci === null ? "" : ` [${show(ci[0])}, ${show(ci[1])}]`;
}

/**
 * Formats a matrix's comparison: per metric and target, the mean with its
 * 95% interval, and for each target after the first its paired difference
 * from the first with its interval and the verdicts that flipped.
 *
 * @param lines The comparison, as `compareTargets` gives it.
 * @returns The table, without a trailing newline.
 *
 * @example
 * ```ts
 * import { formatComparison } from "./mod.ts";
 * import { compareTargets } from "../diff/mod.ts";
 * import { scored } from "../score/mod.ts";
 * const at = (t: string, id: string, v: number) => ({ ...scored("m", v, { example_id: id }), target_name: t });
 * const text = await formatComparison(compareTargets([at("a", "d#1", 1), at("b", "d#1", 0), at("a", "d#2", 1), at("b", "d#2", 1)]));
 * if (!text.includes("b vs a") || !text.includes("-0.500")) throw new Error(text);
 * ```
 */
export async function formatComparison(
  lines: readonly ComparisonLine[],
): Promise<string> {
  return (await alignRows([
    [...COMPARISON_HEADER],
    ...comparisonRows(lines, escapeControl),
  ])).join("\n");
}

/** The columns of a matrix's comparison, as the text and Markdown tables have them. */
export const COMPARISON_HEADER = [
  "metric",
  "target",
  "mean [95% CI]",
  "Δ vs first [95% CI]",
  "pairs",
  "pass→fail",
  "fail→pass",
] as const;

/**
 * The cells of a matrix's comparison, a row per metric and target (the
 * first target's row without a difference), the metric and the target
 * made safe by `cell`.
 */
export function comparisonRows(
  lines: readonly ComparisonLine[],
  cell: (text: string) => string,
): string[][] {
  const rows: string[][] = [];
  for (const line of lines) {
    for (const [i, t] of line.targets.entries()) {
      const d = i === 0 ? undefined : line.versus[i - 1];
      rows.push([
        cell(line.metric),
        cell(d === undefined ? t.target : `${t.target} vs ${d.against}`),
        `${fixed(t.mean)}${interval(t.ci95)}`,
        d === undefined ? "" : `${signed(d.delta)}${interval(d.ci95, signed)}`,
        d === undefined ? "" : String(d.pairs),
        d === undefined ? "" : String(d.newly_failing),
        d === undefined ? "" : String(d.newly_passing),
      ]);
    }
  }
  return rows;
}

/**
 * How the cases of a run with several epochs fared, per metric: those that
 * pass under the requirement, and the flaky ones (epochs that disagree).
 * Empty with one epoch.
 *
 * @param aggregates The run's aggregates.
 * @param epochs How many epochs each example ran.
 * @param require When a case passes.
 * @returns One line per metric, without a trailing newline.
 *
 * @example Five epochs, a case passes when most pass
 * ```ts
 * import { formatCases } from "./mod.ts";
 * import { Aggregator } from "../aggregate/mod.ts";
 * import { scored } from "../score/mod.ts";
 * const agg = new Aggregator();
 * for (const v of [1, 1, 0]) agg.add(scored("m", v, { example_id: "d#1" }));
 * const text = formatCases(agg.results(), 3, "majority");
 * if (text !== "m: 1 of 1 cases pass (require majority: more than half of 3 epochs), 1 flaky") throw new Error(text);
 * ```
 */
export function formatCases(
  aggregates: readonly Aggregate[],
  epochs: number,
  require: CaseRequirement,
): string {
  if (epochs <= 1) return "";
  const rule = {
    all: `all ${epochs} epochs`,
    majority: `more than half of ${epochs} epochs`,
    any: `at least one of ${epochs} epochs`,
  }[require];
  return aggregates.filter((a) => a.sums.tried > 0).map((a) => {
    const passed = require === "all"
      ? a.sums.passed_all
      : require === "any"
      ? a.sums.passed_any
      : a.sums.passed_majority;
    const tried = a.sums.tried;
    const passing = passed === undefined ? "–" : String(passed);
    return `${a.target_name !== undefined ? `${a.target_name}: ` : ""}${
      escapeControl(a.metric)
    }: ${passing} of ${tried} cases pass (require ${require}: ${rule}), ${
      a.flaky ?? "–"
    } flaky`;
  }).join("\n");
}

/**
 * What a run's comparison with its baseline found, for people: the cases
 * newly failing, fixed, flaky, new and removed, and the metrics that got
 * significantly worse.
 *
 * @param c The comparison.
 * @param path The baseline's file, for the first line.
 * @returns The text, without a trailing newline.
 *
 * @example
 * ```ts
 * import { formatBaseline } from "./mod.ts";
 * import { compareWithBaseline } from "../run/mod.ts";
 * import { scored } from "../score/mod.ts";
 * const s = (id: string, v: number) => scored("m", v, { example_id: id, unit_id: id });
 * const text = formatBaseline(compareWithBaseline([s("d#1", 1), s("d#2", 0)], [s("d#1", 0), s("d#2", 1)], "all"), "b.json");
 * if (!text.includes("newly failing (1):\n  d#1  m  1/1 → 0/1") || !text.includes("fixed (1)")) throw new Error(text);
 * ```
 */
export function formatBaseline(
  c: BaselineComparison,
  path: string,
): string {
  const out = [`Compared with baseline ${JSON.stringify(path)}:`];
  if (c.cases_changed !== undefined) {
    out.push(casesChangedText(c.cases_changed, "the baseline", "this run"));
  }
  for (const e of c.evaluators_changed ?? []) {
    out.push(
      `the evaluator of ${
        escapeControl(e.metric)
      } changed since the baseline (${
        e.baseline.map(escapeControl).join(", ")
      } → ${
        e.now.map(escapeControl).join(", ")
      }): its cases are compared all the same, so a change may be the evaluator's; save a new baseline once it is accepted`,
    );
  }
  const cases = (title: string, list: readonly CaseChange[]) => {
    if (list.length === 0) return;
    out.push(`${title} (${list.length}):`);
    for (const x of list) {
      out.push(
        `  ${escapeControl(x.case)}  ${escapeControl(x.metric)}  ${
          x.baseline.join("/")
        } → ${x.now.join("/")}${
          x.p_value !== undefined
            ? `  (Fisher p = ${x.p_value.toFixed(3)})`
            : ""
        }`,
      );
    }
  };
  cases("newly failing", c.newly_failing);
  cases("fixed", c.fixed);
  cases("flaky, epochs disagree (not a regression)", c.flaky);
  const ids = (title: string, list: readonly string[]) => {
    if (list.length === 0) return;
    out.push(
      `${title} (${list.length}): ${list.map(escapeControl).join(", ")}`,
    );
  };
  ids("new cases", c.new_cases);
  ids("removed cases", c.removed_cases);
  if (
    c.newly_failing.length + c.fixed.length + c.flaky.length +
        c.new_cases.length + c.removed_cases.length === 0
  ) {
    // Beside cases whose input changed, "no case changed" would contradict
    // them: it is their verdicts that stayed.
    out.push(
      c.cases_changed === undefined
        ? "no case changed"
        : "no case's verdict changed, and none came or went",
    );
  }
  if (c.metrics.length > 0) out.push("paired difference, now − baseline:");
  for (const l of c.metrics) {
    // A matrix's lines are per target: `large: exact_match`, as `worse` names them.
    const name = l.target_name === undefined
      ? l.metric
      : `${l.target_name}: ${l.metric}`;
    out.push(
      `  ${escapeControl(name)}: Δ ${signed(l.delta)}${
        interval(l.ci95, signed)
      }${c.worse.includes(name) ? "  significantly worse" : ""}`,
    );
  }
  return out.join("\n");
}

/**
 * The lines that say why a run failed against its baseline, or
 * `undefined` when it did not: the count of newly failing cases and the
 * metrics significantly worse, and why it cannot be compared, if it cannot.
 *
 * @param c The comparison.
 * @param path The baseline's file.
 * @returns The line, or `undefined`.
 *
 * @example
 * ```ts
 * import { formatRegression } from "./mod.ts";
 * import { compareWithBaseline } from "../run/mod.ts";
 * import { scored } from "../score/mod.ts";
 * const s = (v: number) => [scored("m", v, { example_id: "d#1", unit_id: "d#1" })];
 * const line = formatRegression(compareWithBaseline(s(1), s(0), "all"), "b.json");
 * if (line !== 'evalpipe: regressed against baseline "b.json": 1 newly failing') throw new Error(line);
 * if (formatRegression(compareWithBaseline(s(0), s(1), "all"), "b.json") !== undefined) throw new Error();
 * ```
 */
export function formatRegression(
  c: BaselineComparison,
  path: string,
): string | undefined {
  if (!c.failed) return undefined;
  const regressed = [
    ...(c.newly_failing.length > 0
      ? [`${c.newly_failing.length} newly failing`]
      : []),
    ...c.worse.map((m) => `${escapeControl(m)} significantly worse`),
  ];
  return [
    ...(regressed.length > 0
      ? [
        `evalpipe: regressed against baseline ${JSON.stringify(path)}: ${
          regressed.join(", ")
        }`,
      ]
      : []),
    ...c.unfit.map((why) =>
      `evalpipe: cannot compare with baseline ${JSON.stringify(path)}: ${
        escapeControl(why)
      }`
    ),
  ].join("\n");
}
