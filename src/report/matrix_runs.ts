/**
 * A matrix run seen as one run per target, so that the report of a matrix
 * record compares its targets as it compares two runs.
 *
 * @module
 */

import { compareTargets, type ComparisonLine } from "../diff/compare.ts";
import type { Score } from "../score/mod.ts";
import type { ReportRun, ReportUnit } from "./report_run.ts";
import { valueRangeOption } from "../aggregate/value_ranges.ts";

/**
 * A matrix run's targets in the run's order: the config's `matrix` first,
 * then any other target its Scores name, in the order first seen. A
 * `matrix` of one target (`run --target v1`, `--matrix v1`) is a plain run,
 * whose Scores name no target, as the run and its baseline read it.
 */
export function targetOrder(
  run: Pick<ReportRun, "config" | "scores">,
): string[] {
  const names: string[] = [];
  const matrix = run.config?.matrix;
  if (Array.isArray(matrix) && matrix.length > 1) {
    for (const m of matrix) {
      if (typeof m === "string" && !names.includes(m)) names.push(m);
    }
  }
  for (const s of run.scores) {
    if (s.target_name !== undefined && !names.includes(s.target_name)) {
      names.push(s.target_name);
    }
  }
  return names;
}

/**
 * The comparison of a matrix run's targets, as the run's summary and `diff
 * RECORD` compute it: per metric each target's mean with its interval
 * (clamped to the metric's range the record names), and each target's
 * paired difference from the first with its interval and the flips. A run
 * of one target gives `undefined`.
 *
 * @param run A run, as the report reads it.
 * @returns One line per metric, or `undefined`.
 *
 * @example
 * ```ts
 * import { matrixComparison } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const s = (t: string, v: number) => ({ ...scored("m", v, { example_id: "d#1", unit_id: `d#1~${t}` }), target_name: t });
 * const [line] = matrixComparison({ scores: [s("a", 1), s("b", 0), s("c", 1)] }) ?? [];
 * if (line?.versus.map((d) => d.delta).join() !== "-1,0") throw new Error();
 * ```
 */
export function matrixComparison(
  run: ReportRun,
): ComparisonLine[] | undefined {
  // The targets that have Scores, as diff and splitMatrixRun take them.
  const targets = targetOrder(run).filter((t) =>
    run.scores.some((s) => s.target_name === t)
  );
  if (targets.length < 2) return undefined;
  const ranges = run.value_ranges;
  return compareTargets(run.scores, {
    targets,
    ...valueRangeOption(ranges),
  });
}

/** A unit id without its matrix suffix (`d#1@2~fast` → `d#1@2`). */
function plainId(id: string | undefined, target: string): string | undefined {
  return id !== undefined && id.endsWith(`~${target}`)
    ? id.slice(0, -target.length - 1)
    : id;
}

/**
 * Splits a matrix run into one run per target, in the run's order (the
 * config's `matrix`, then the order the targets first appear): each with
 * that target's Scores and units, their ids as a run of that target alone
 * would have them, and the config's target set to that one. A run of one
 * target gives `undefined`.
 *
 * @param run A run, as the report reads it.
 * @returns One run per target, or `undefined`.
 *
 * @example
 * ```ts
 * import { splitMatrixRun } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const s = (t: string, v: number) => ({ ...scored("m", v, { example_id: "d#1", unit_id: `d#1~${t}` }), target_name: t });
 * const runs = splitMatrixRun({ run_id: "r1", scores: [s("a", 1), s("b", 0)] });
 * if (runs?.length !== 2 || runs[1]?.scores[0]?.unit_id !== "d#1" || runs[1].run_id !== "r1 (target b)") throw new Error();
 * ```
 */
export function splitMatrixRun(run: ReportRun): ReportRun[] | undefined {
  const names = targetOrder(run).filter((t) =>
    run.scores.some((s) => s.target_name === t)
  );
  if (names.length < 2) return undefined;
  const targets = run.config?.targets as Record<string, unknown> | undefined;
  return names.map((name) => {
    const scores: Score[] = run.scores
      .filter((s) => s.target_name === name)
      .map(({ target_name: _, ...s }) => {
        const unitId = plainId(s.unit_id, name);
        return unitId !== undefined ? { ...s, unit_id: unitId } : s;
      });
    const units: ReportUnit[] | undefined = run.units
      ?.filter((u) => (u as { target_name?: unknown }).target_name === name)
      .map((u) => {
        const { target_name: _, ...rest } = u as ReportUnit & {
          target_name?: unknown;
        };
        const unitId = plainId(rest.unit_id, name);
        return unitId !== undefined ? { ...rest, unit_id: unitId } : rest;
      });
    const { aggregates: _, ...head } = run;
    return {
      ...head,
      ...(run.run_id !== undefined
        ? { run_id: `${run.run_id} (target ${name})` }
        : {}),
      ...(run.config !== undefined
        ? {
          config: {
            ...run.config,
            target: targets?.[name],
            target_name: name,
          },
        }
        : {}),
      scores,
      ...(units !== undefined ? { units } : {}),
    };
  });
}
