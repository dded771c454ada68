/**
 * A run's units with their Scores and outcome: what the JUnit and Markdown
 * reports list, case by case.
 *
 * @module
 */

import type { Unit } from "../dataset/unit.ts";
import { aggregatable, type Score } from "../score/mod.ts";

/**
 * What became of one unit, from its Scores: `error` when a Score is an error
 * or blocked, `failed` when a Score that counts (scored and valid) did not
 * pass, `skipped` when none counts (all skipped, not applicable, or scored
 * but invalid: measured, not trusted), else `passed`. As in the pass rate,
 * an invalid Score is neither a pass nor a failure, whatever its `passed`.
 *
 * @example
 * ```ts
 * import { type CaseOutcome, unitCases } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const outcome: CaseOutcome | undefined = unitCases([scored("m", 0.2, { unit_id: "d#1" })])[0]?.outcome;
 * if (outcome !== "failed") throw new Error(outcome);
 * ```
 */
export type CaseOutcome = "passed" | "failed" | "error" | "skipped";

/**
 * One unit of a run: its ids, its record when the run kept it, its Scores.
 *
 * @example The failing cases of a run
 * ```ts
 * import { type UnitCase, unitCases } from "./mod.ts";
 * import { errored, scored } from "../score/mod.ts";
 * const cases: UnitCase[] = unitCases([
 *   scored("m", 1, { example_id: "d#1", unit_id: "d#1" }),
 *   errored("m", "scorer error: boom", { example_id: "d#2", unit_id: "d#2" }),
 * ]);
 * if (cases.filter((c) => c.outcome !== "passed").map((c) => c.unit_id).join() !== "d#2") throw new Error();
 * ```
 */
export interface UnitCase {
  /** The example. */
  example_id: string;
  /** The unit. */
  unit_id: string;
  /** The epoch, when known. */
  epoch?: number;
  /** The unit record (input, output, target), when the record holds it. */
  unit?: Unit;
  /** Its Scores, in output order. */
  scores: Score[];
  /** What became of it. */
  outcome: CaseOutcome;
}

/**
 * The outcome of a unit from its Scores (see {@linkcode CaseOutcome}).
 *
 * @param scores The unit's Scores.
 * @returns The outcome.
 *
 * @example
 * ```ts
 * import { caseOutcome } from "./cases.ts";
 * import { blocked, scored } from "../score/mod.ts";
 * if (caseOutcome([scored("m", 1), blocked("n", "target error: x", { code: "target.error" })]) !== "error") throw new Error();
 * ```
 */
export function caseOutcome(scores: readonly Score[]): CaseOutcome {
  if (scores.some((s) => s.status === "error" || s.status === "blocked")) {
    return "error";
  }
  if (scores.some(failsCase)) return "failed";
  return scores.some(aggregatable) ? "passed" : "skipped";
}

/**
 * Whether a Score fails its case: an error or blocked one, or one that
 * counts (scored and valid) and did not pass. A scored but invalid Score
 * fails nothing, whatever its `passed`, as in the pass rate.
 *
 * @param s The Score.
 * @returns Whether it fails its case.
 */
export function failsCase(s: Score): boolean {
  return s.status === "error" || s.status === "blocked" ||
    (aggregatable(s) && s.passed === false);
}

/**
 * Groups a run's Scores by unit, in the order units first appear, each with
 * its unit record when `units` holds it.
 *
 * @param scores The Scores.
 * @param units The unit records, when the record holds them.
 * @returns One entry per unit.
 *
 * @example
 * ```ts
 * import { unitCases } from "./cases.ts";
 * import { scored } from "../score/mod.ts";
 * const unit = { example_id: "d#1", unit_id: "d#1", epoch: 1, input: "q", output: "a" };
 * const [c] = unitCases([scored("m", 1, { example_id: "d#1", unit_id: "d#1" })], [unit]);
 * if (c?.unit?.output !== "a" || c.outcome !== "passed") throw new Error();
 * ```
 */
export function unitCases(
  scores: readonly Score[],
  units: readonly Unit[] = [],
): UnitCase[] {
  const recorded = new Map(units.map((u) => [u.unit_id, u]));
  const byUnit = new Map<string, UnitCase>();
  for (const s of scores) {
    const unitId = s.unit_id ?? s.example_id ?? "(no id)";
    let c = byUnit.get(unitId);
    if (c === undefined) {
      const unit = recorded.get(unitId);
      c = {
        example_id: s.example_id ?? unit?.example_id ?? unitId,
        unit_id: unitId,
        scores: [],
        outcome: "passed",
      };
      if (unit !== undefined) c.unit = unit;
      const epoch = unit?.epoch ?? epochOf(c.example_id, unitId);
      if (epoch !== undefined) c.epoch = epoch;
      byUnit.set(unitId, c);
    }
    c.scores.push(s);
  }
  for (const c of byUnit.values()) c.outcome = caseOutcome(c.scores);
  return [...byUnit.values()];
}

/** The epoch a unit id names (`<example_id>@<epoch>`), if it names one. */
function epochOf(exampleId: string, unitId: string): number | undefined {
  if (!unitId.startsWith(`${exampleId}@`)) return undefined;
  const n = Number(unitId.slice(exampleId.length + 1));
  return Number.isInteger(n) && n >= 1 ? n : undefined;
}
