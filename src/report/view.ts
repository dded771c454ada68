/**
 * Views for people: Scores grouped by the unit they measured, safe to print
 * whatever the model wrote.
 *
 * @module
 */

import { escapeControl } from "../base/terminal.ts";
import { clipWidth as clip, displayWidth, padEndWidth } from "./_width.ts";
import { aggregatable, type Score } from "../score/mod.ts";
import type { Unit } from "../dataset/unit.ts";
import { toolCallLines } from "./_tool_calls.ts";
import { failsCase } from "./cases.ts";

export { escapeControl };

/**
 * The Scores of one unit.
 *
 * @example The failing units of a run, with their reasons
 * ```ts
 * import { groupByCall, type UnitView } from "./mod.ts";
 * import { errored, scored } from "../score/mod.ts";
 * const units: UnitView[] = groupByCall([
 *   scored("exact_match", 1, { example_id: "d#1", unit_id: "d#1" }),
 *   errored("exact_match", "scorer error: boom", { example_id: "d#2", unit_id: "d#2" }),
 * ]);
 * const failing = units.filter((u) => u.failed).map((u) => `${u.unit_id}: ${u.scores[0]?.reason}`);
 * if (failing.join() !== "d#2: scorer error: boom") throw new Error("unexpected");
 * ```
 */
export interface UnitView {
  /** The example. */
  example_id: string;
  /** The unit. */
  unit_id: string;
  /** Whether any Score is an error, is blocked, or did not pass. */
  failed: boolean;
  /** What went in, when the record holds the unit. */
  input?: string | unknown[];
  /** What the target answered (`null`: it failed), when the record holds the unit. */
  output?: string | null;
  /** Why the target failed, when it did and the record holds the unit. */
  target_error?: string;
  /** The tools it called, a line each (`1. name({...}) → output`), when any. */
  tool_calls?: string[];
  /** Its Scores, in the order they were written. */
  scores: Array<
    Pick<Score, "metric" | "status" | "value" | "passed"> & {
      reason?: string;
      /** Scored but not valid: measured, not trusted, neither pass nor fail. */
      invalid?: true;
    }
  >;
}

/**
 * Groups Scores by unit (units of one example together, in the order first
 * seen), examples with a failing unit first.
 *
 * @param scores The Scores.
 * @param units The units the Scores measured, when the record holds them:
 *   each entry then shows the unit's input and output.
 * @returns One entry per unit.
 *
 * @example
 * ```ts
 * import { groupByCall } from "./view.ts";
 * import { errored, scored } from "../score/mod.ts";
 * const units = groupByCall([
 *   scored("m", 1, { example_id: "d#1", unit_id: "d#1" }),
 *   errored("m", "boom", { example_id: "d#2", unit_id: "d#2" }),
 * ]);
 * if (units[0]?.example_id !== "d#2") throw new Error("failures come first");
 * ```
 */
export function groupByCall(
  scores: readonly Score[],
  units: readonly Unit[] = [],
): UnitView[] {
  const recorded = new Map(units.map((u) => [u.unit_id, u]));
  const examples = new Map<string, Map<string, UnitView>>();
  for (const s of scores) {
    const exampleId = s.example_id ?? s.unit_id ?? "(no id)";
    const unitId = s.unit_id ?? exampleId;
    let byUnit = examples.get(exampleId);
    if (byUnit === undefined) examples.set(exampleId, byUnit = new Map());
    let unit = byUnit.get(unitId);
    if (unit === undefined) {
      unit = {
        example_id: exampleId,
        unit_id: unitId,
        failed: false,
        scores: [],
      };
      const seen = recorded.get(unitId);
      // A malformed record's unit has no input to show: its reason says why.
      if (seen !== undefined && seen.invalid === undefined) {
        unit.input = seen.input;
        unit.output = seen.output;
        if (seen.target?.error !== undefined) {
          unit.target_error = seen.target.error;
        }
        const calls = toolCallLines(seen.tool_calls);
        if (calls.length > 0) unit.tool_calls = calls;
      }
      byUnit.set(unitId, unit);
    }
    unit.scores.push({
      metric: s.metric,
      status: s.status,
      value: s.value,
      ...(s.passed !== undefined ? { passed: s.passed } : {}),
      ...(s.reason !== undefined ? { reason: s.reason } : {}),
      ...(s.status === "scored" && !aggregatable(s) ? { invalid: true } : {}),
    });
    if (failsCase(s)) unit.failed = true;
  }
  // Failing examples first, each one's units together; Array.prototype.sort
  // is stable, so file order is kept within each group.
  const failing = (units: UnitView[]) => Number(units.some((u) => u.failed));
  return [...examples.values()]
    .map((units) => [...units.values()])
    .sort((a, b) => failing(b) - failing(a))
    .flat();
}

/**
 * Renders units as a table for a terminal of `width` columns: a heading per
 * example (and per unit when there are several), its input, output and tool
 * calls when the record holds them, a row per metric with status, value,
 * verdict and reason. Control characters are escaped.
 *
 * @param units From {@linkcode groupByCall}.
 * @param width The terminal's width in columns.
 * @returns The lines.
 *
 * @example Failing examples first, a row per metric
 * ```ts
 * import { groupByCall, renderByCall } from "./mod.ts";
 * import { errored, scored } from "../score/mod.ts";
 * const lines = renderByCall(groupByCall([
 *   scored("exact_match", 1, { example_id: "d#1", unit_id: "d#1" }),
 *   errored("exact_match", "scorer error: boom", { example_id: "d#2", unit_id: "d#2" }),
 * ]), 80);
 * if (lines[0] !== "✗ d#2" || !lines[1]?.endsWith("FAIL  scorer error: boom")) throw new Error(lines.join("\n"));
 * ```
 */
export function renderByCall(
  units: readonly UnitView[],
  width: number,
): string[] {
  const lines: string[] = [];
  // A loop, not Math.max(...): spread as arguments, 130,000 Scores overflow
  // the call stack.
  let metricWidth = 6;
  for (const u of units) {
    for (const s of u.scores) {
      metricWidth = Math.max(
        metricWidth,
        displayWidth(escapeControl(s.metric)),
      );
    }
  }
  metricWidth = Math.min(24, metricWidth);
  const failedExamples = new Set(
    units.filter((u) => u.failed).map((u) => u.example_id),
  );
  let lastExample: string | undefined;
  for (const unit of units) {
    if (unit.example_id !== lastExample) {
      if (lines.length > 0) lines.push("");
      lines.push(
        clip(
          `${failedExamples.has(unit.example_id) ? "✗" : "✓"} ${
            escapeControl(unit.example_id)
          }`,
          width,
        ),
      );
      lastExample = unit.example_id;
    }
    let indent = "  ";
    if (unit.unit_id !== unit.example_id) {
      lines.push(clip(`  ${escapeControl(unit.unit_id)}`, width));
      indent = "    ";
    }
    if (unit.input !== undefined) {
      const input = typeof unit.input === "string"
        ? unit.input
        : JSON.stringify(unit.input);
      lines.push(clip(`${indent}input   ${escapeControl(input)}`, width));
      const output = unit.output === null || unit.output === undefined
        ? `(none: ${unit.target_error ?? "no output"})`
        : unit.output;
      lines.push(clip(`${indent}output  ${escapeControl(output)}`, width));
      for (const call of unit.tool_calls ?? []) {
        lines.push(clip(`${indent}call    ${escapeControl(call)}`, width));
      }
    }
    for (const s of unit.scores) {
      const verdict = s.invalid
        ? "–"
        : s.passed === true
        ? "pass"
        : s.passed === false
        ? "FAIL"
        : "–";
      const value = s.value === null ? "–" : s.value.toFixed(3);
      const head = `${indent}${
        padEndWidth(clip(escapeControl(s.metric), metricWidth), metricWidth)
      }  ${(s.invalid ? "scored/invalid" : s.status).padEnd(14)}  ${
        value.padStart(5)
      }  ${verdict.padEnd(4)}`;
      const reason = s.reason !== undefined
        ? `  ${escapeControl(s.reason)}`
        : "";
      lines.push(clip(`${head}${reason}`, width));
    }
  }
  return lines;
}
