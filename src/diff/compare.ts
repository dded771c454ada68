/**
 * Comparing the targets of a matrix run: per metric, each target's mean with
 * its interval, and each target's paired difference from the first, with
 * the verdicts that flipped. The pairing is {@linkcode diffScores}'s.
 *
 * @module
 */

import { Aggregator } from "../aggregate/aggregator.ts";
import type { CaseRequirement, ValueRange } from "../aggregate/types.ts";
import type { Score } from "../score/mod.ts";
import { diffScores, type PairedDelta } from "./diff.ts";

/**
 * One target's figures for one metric.
 *
 * @example The mean and interval of target "fast"
 * ```ts
 * import { compareTargets, type TargetFigures } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const at = (t: string, id: string, v: number) => ({ ...scored("m", v, { example_id: id }), target_name: t });
 * const scores = [at("fast", "d#1", 1), at("slow", "d#1", 1), at("fast", "d#2", 0), at("slow", "d#2", 1)];
 * const fast: TargetFigures = compareTargets(scores)[0]!.targets[0]!;
 * if (fast.target !== "fast" || fast.mean !== 0.5 || fast.examples !== 2) throw new Error("unexpected");
 * ```
 */
export interface TargetFigures {
  /** The target's name. */
  target: string;
  /** Examples with an aggregatable value. */
  examples: number;
  /** The mean across examples (epochs averaged first); `null` without any. */
  mean: number | null;
  /** Its 95% interval (Student's t, clamped to the metric's range); `null` below two. */
  ci95: [number, number] | null;
  /** The share of Scores that passed (errors and blocked Scores fail). */
  pass_rate: number | null;
}

/**
 * How one target differs from the first, paired by example.
 *
 * @example "slow" passes one example "fast" fails
 * ```ts
 * import { compareTargets, type TargetDelta } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const at = (t: string, id: string, v: number) => ({ ...scored("m", v, { example_id: id }), target_name: t });
 * const scores = [at("fast", "d#1", 1), at("slow", "d#1", 1), at("fast", "d#2", 0), at("slow", "d#2", 1)];
 * const d: TargetDelta = compareTargets(scores)[0]!.versus[0]!;
 * if (d.target !== "slow" || d.against !== "fast" || d.delta !== 0.5 || d.newly_passing !== 1) throw new Error("unexpected");
 * ```
 */
export interface TargetDelta extends PairedDelta {
  /** The target compared (B). */
  target: string;
  /** The target it is compared with (A): the matrix's first. */
  against: string;
}

/**
 * The comparison of a matrix's targets on one metric: the NDJSON line
 * `diff RECORD` prints for a matrix record.
 *
 * @example
 * ```ts
 * import { type ComparisonLine, compareTargets } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const at = (t: string, v: number) => ({ ...scored("m", v, { example_id: "d#1" }), target_name: t });
 * const [line]: ComparisonLine[] = compareTargets([at("a", 1), at("b", 0)]);
 * if (line?.kind !== "comparison" || line.targets.length !== 2 || line.versus[0]?.newly_failing !== 1) throw new Error("unexpected");
 * ```
 */
export interface ComparisonLine {
  /** Always `"comparison"`: what the line is. */
  kind: "comparison";
  /** The metric. */
  metric: string;
  /** Each target's figures, in the matrix's order. */
  targets: TargetFigures[];
  /** Each target after the first, against the first. */
  versus: TargetDelta[];
}

/**
 * Options of {@linkcode compareTargets}.
 *
 * @example Name the targets' order and clamp the intervals to 0..1
 * ```ts
 * import { compareTargets, type CompareOptions } from "./mod.ts";
 * const options: CompareOptions = { targets: ["b", "a"], valueRange: () => [0, 1] };
 * if (compareTargets([], options).length !== 0) throw new Error("unexpected");
 * ```
 */
export interface CompareOptions {
  /**
   * The targets, in order (the first is what the others are compared
   * with); a target named here with no Scores still gets its figures.
   * @default {the targets the Scores name, in the order first seen}
   */
  targets?: readonly string[] | undefined;
  /**
   * The range each metric's values lie within, for clamping intervals.
   * @default {undefined}
   */
  valueRange?: ((metric: string) => ValueRange | undefined) | undefined;
  /**
   * When a case passes over its epochs, for `newly_passing` and
   * `newly_failing`: the run's `epochs.require`, as `diff` takes it.
   * @default {"majority"}
   */
  require?: CaseRequirement | undefined;
}

/**
 * The targets a matrix run's Scores name (`target_name`), in the order first
 * seen.
 *
 * @param scores Scores of a run.
 * @returns The names; empty for a run of one target.
 *
 * @example
 * ```ts
 * import { targetsOf } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const s = (t: string) => ({ ...scored("m", 1), target_name: t });
 * if (targetsOf([s("b"), s("a"), s("b")]).join() !== "b,a") throw new Error("unexpected");
 * ```
 */
export function targetsOf(scores: readonly Score[]): string[] {
  const seen = new Set<string>();
  for (const s of scores) {
    if (s.target_name !== undefined) seen.add(s.target_name);
  }
  return [...seen];
}

/**
 * Compares the targets of a matrix run per metric (sorted by metric): each
 * target's mean and interval as `aggregate` computes them over its Scores,
 * and each later target's paired difference from the first as `diff`
 * computes it (examples paired by id, epochs averaged first, a case's pass
 * judged over its epochs by `require`).
 *
 * @param scores The run's Scores, each with its `target_name`.
 * @param options The targets' order, the metrics' ranges.
 * @returns One line per metric.
 *
 * @example Two targets on two examples
 * ```ts
 * import { compareTargets } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const at = (t: string, id: string, v: number) => ({ ...scored("m", v, { example_id: id }), target_name: t });
 * const [line] = compareTargets([at("a", "d#1", 1), at("b", "d#1", 0), at("a", "d#2", 1), at("b", "d#2", 1)]);
 * if (line?.targets[1]?.mean !== 0.5 || line.versus[0]?.delta !== -0.5) throw new Error("unexpected");
 * ```
 */
export function compareTargets(
  scores: readonly Score[],
  options: CompareOptions = {},
): ComparisonLine[] {
  const names = [...(options.targets ?? [])];
  for (const name of targetsOf(scores)) {
    if (!names.includes(name)) names.push(name);
  }
  const byTarget = new Map<string, Score[]>(names.map((n) => [n, []]));
  for (const s of scores) {
    if (s.target_name !== undefined) byTarget.get(s.target_name)!.push(s);
  }
  const figures = new Map<string, Map<string, TargetFigures>>();
  const metrics = new Set<string>();
  for (const [name, own] of byTarget) {
    const aggregator = new Aggregator({
      grouped: true,
      ...(options.valueRange !== undefined
        ? { valueRange: options.valueRange }
        : {}),
    });
    for (const s of own) aggregator.add(s);
    const out = new Map<string, TargetFigures>();
    for (const a of aggregator.results()) {
      metrics.add(a.metric);
      out.set(a.metric, {
        target: name,
        examples: a.examples,
        mean: a.mean,
        ci95: a.ci95,
        pass_rate: a.pass_rate,
      });
    }
    figures.set(name, out);
  }
  const first = names[0];
  const deltas = new Map<string, Map<string, TargetDelta>>();
  for (const name of names.slice(1)) {
    const out = new Map<string, TargetDelta>();
    // Both sides without their target: their example ids pair as written.
    const strip = (list: readonly Score[]) =>
      list.map(({ target_name: _, ...rest }) => rest);
    for (
      const line of diffScores(
        strip(byTarget.get(first!)!),
        strip(byTarget.get(name)!),
        {
          ...(options.valueRange !== undefined
            ? { valueRange: options.valueRange }
            : {}),
          ...(options.require !== undefined
            ? { require: options.require }
            : {}),
        },
      )
    ) {
      out.set(line.metric, {
        target: name,
        against: first!,
        pairs: line.pairs,
        delta: line.delta,
        stderr: line.stderr,
        ci95: line.ci95,
        ci95_unclamped: line.ci95_unclamped,
        improved: line.improved,
        regressed: line.regressed,
        newly_passing: line.newly_passing,
        newly_failing: line.newly_failing,
      });
    }
    deltas.set(name, out);
  }
  return [...metrics].sort().map((metric) => ({
    kind: "comparison",
    metric,
    targets: names.map((name) =>
      figures.get(name)?.get(metric) ?? {
        target: name,
        examples: 0,
        mean: null,
        ci95: null,
        pass_rate: null,
      }
    ),
    versus: names.slice(1).map((name) =>
      deltas.get(name)?.get(metric) ?? {
        target: name,
        against: first!,
        pairs: 0,
        delta: null,
        stderr: null,
        ci95: null,
        ci95_unclamped: null,
        improved: 0,
        regressed: 0,
        newly_passing: 0,
        newly_failing: 0,
      }
    ),
  }));
}
