/**
 * Gates: thresholds on a run's aggregates that CI can fail on.
 *
 * @module
 */

import type { Aggregate } from "./types.ts";

/**
 * The thresholds of one metric; each is checked when present.
 *
 * @example A gate that holds
 * ```ts
 * import { Aggregator, checkGates, type Gate } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const aggregator = new Aggregator();
 * aggregator.add(scored("exact_match", 1));
 * const gate: Gate = { min_mean: 0.9, min_coverage: 1, max_errors: 0 };
 * if (checkGates({ exact_match: gate }, aggregator.results()).length !== 0) throw new Error("gate failed");
 * ```
 */
export interface Gate {
  /** The mean must be at least this. */
  min_mean?: number | undefined;
  /** The low end of the mean's 95% interval must be at least this: noise cannot pass the bar. */
  min_mean_lower_bound?: number | undefined;
  /** The pass rate (errors and blocked Scores count as failures) must be at least this. */
  min_pass_rate?: number | undefined;
  /** The share of Scores that are scored and valid must be at least this. */
  min_coverage?: number | undefined;
  /** At most this many Scores may be errors (the scorer failed). */
  max_errors?: number | undefined;
  /** At most this many Scores may be blocked (the target or the case failed). */
  max_blocked?: number | undefined;
  /** A classification metric's accuracy (invalid predictions count as wrong) must be at least this. */
  min_accuracy?: number | undefined;
  /** A classification metric's macro F1 must be at least this. */
  min_macro_f1?: number | undefined;
  /**
   * Let the run pass when nothing of this metric was measured: every Score
   * that could have been is an error, blocked or scored but invalid. Without
   * it, such a metric fails the run, gated or not.
   */
  allow_unmeasured?: boolean | undefined;
}

/**
 * A gate that did not hold, with the figures.
 *
 * @example Errors above the limit
 * ```ts
 * import { Aggregator, checkGates, type GateFailure } from "./mod.ts";
 * import { errored, scored } from "../score/mod.ts";
 * const aggregator = new Aggregator();
 * aggregator.add(scored("exact_match", 1));
 * aggregator.add(errored("exact_match", "scorer error: boom"));
 * const [failure]: GateFailure[] = checkGates({ exact_match: { max_errors: 0 } }, aggregator.results());
 * if (failure?.actual !== 1 || failure.message !== "exact_match: errors 1 > max_errors 0") throw new Error("unexpected");
 * ```
 */
export interface GateFailure {
  /** The metric. */
  metric: string;
  /** The threshold's name, e.g. `min_mean`. */
  gate: keyof Gate;
  /** The threshold. */
  threshold: number;
  /** The figure it was compared with; `null` when the figure is undefined. */
  actual: number | null;
  /** A sentence for people. */
  message: string;
  /** The target that failed the gate, in a matrix run. */
  target_name?: string;
  /**
   * No gate names the metric: the failure is the rule that a metric that
   * measured nothing fails the run (`gate` is `allow_unmeasured`), not a
   * threshold the config set.
   */
  ungated?: true;
  /**
   * For a metric that measured nothing (`gate` is `allow_unmeasured`): what
   * became of its Scores instead, which {@linkcode nothingMeasured} words.
   */
  unmeasured?: Unmeasured;
}

/**
 * What became of the Scores of a metric that measured nothing: each that
 * could have been measured is an error, blocked or scored but invalid.
 *
 * @example A target that was down for both cases
 * ```ts
 * import { Aggregator, checkGates, type Unmeasured } from "./mod.ts";
 * import { blocked } from "../score/mod.ts";
 * const aggregator = new Aggregator();
 * aggregator.add(blocked("m", "target error: down"));
 * aggregator.add(blocked("m", "target error: down"));
 * const [failure] = checkGates({}, aggregator.results());
 * const expected: Unmeasured = { scores: 2, errors: 0, blocked: 2, invalid: 0 };
 * if (JSON.stringify(failure?.unmeasured) !== JSON.stringify(expected)) throw new Error();
 * ```
 */
export interface Unmeasured {
  /** The metric's Scores, every one (those that did not apply too). */
  scores: number;
  /** Errors: the scorer failed. */
  errors: number;
  /** Blocked: the target, the case or the budget failed. */
  blocked: number;
  /** Scored, but not to be trusted (a grade off the judge's scale). */
  invalid: number;
}

/**
 * What a metric that measured nothing has, in words: its target's name in a
 * matrix, the metric, and what became of its Scores. Every message on such a
 * metric starts so, whatever it then says to do.
 *
 * @param failure The failure, with its target (if any), metric and counts.
 * @returns E.g. `exact_match: nothing measured: 2 blocked of 2 Scores`.
 *
 * @example
 * ```ts
 * import { nothingMeasured } from "./gates.ts";
 * const text = nothingMeasured({
 *   metric: "judge",
 *   target_name: "v2",
 *   unmeasured: { scores: 3, errors: 1, blocked: 1, invalid: 0 },
 * });
 * if (text !== "v2: judge: nothing measured: 1 error and 1 blocked of 3 Scores") throw new Error(text);
 * const three = nothingMeasured({
 *   metric: "judge",
 *   unmeasured: { scores: 4, errors: 2, blocked: 1, invalid: 1 },
 * });
 * if (three !== "judge: nothing measured: 2 errors, 1 blocked and 1 invalid of 4 Scores") throw new Error(three);
 * ```
 */
export function nothingMeasured(
  failure: {
    metric: string;
    target_name?: string | undefined;
    unmeasured: Unmeasured;
  },
): string {
  const { errors, blocked, invalid, scores } = failure.unmeasured;
  const kinds = [
    errors > 0 ? `${errors} error${errors === 1 ? "" : "s"}` : "",
    blocked > 0 ? `${blocked} blocked` : "",
    invalid > 0 ? `${invalid} invalid` : "",
  ].filter((x) => x !== "");
  // "1 error, 2 blocked and 1 invalid"; none of them (a caller's own
  // counts: checkGates never words a metric without one) says so.
  const of = `${scores} Score${scores === 1 ? "" : "s"}`;
  const counts = kinds.length === 0
    ? `none of ${of} failed`
    : `${
      kinds.length === 1
        ? kinds[0]
        : `${kinds.slice(0, -1).join(", ")} and ${kinds.at(-1)}`
    } of ${of}`;
  return `${
    failure.target_name !== undefined ? `${failure.target_name}: ` : ""
  }${failure.metric}: nothing measured: ${counts}`;
}

/**
 * How {@linkcode checkGates} reads a matrix run's aggregates.
 *
 * @example A target that has no aggregate fails every gate
 * ```ts
 * import { checkGates, type CheckGatesOptions } from "./gates.ts";
 * const options: CheckGatesOptions = { targets: ["a"] };
 * const [failure] = checkGates({ m: { min_mean: 0.5 } }, [], options);
 * if (failure?.message !== "a: m: no Scores for this metric (min_mean 0.5)") throw new Error(failure?.message);
 * ```
 */
export interface CheckGatesOptions {
  /**
   * A matrix run's targets, in the order their failures are listed. Each
   * meets the gates on its own, one without any aggregate too (its gated
   * metrics have no Scores).
   *
   * @default {the targets the aggregates name, in the order they first come}
   */
  targets?: readonly string[] | undefined;
}

type Figure = (a: Aggregate) => number | null;

const CHECKS: Array<
  [Exclude<keyof Gate, "allow_unmeasured">, string, Figure, "min" | "max"]
> = [
  ["min_mean", "mean", (a) => a.mean, "min"],
  [
    "min_mean_lower_bound",
    "95% interval low end",
    (a) => a.ci95?.[0] ?? null,
    "min",
  ],
  ["min_pass_rate", "pass rate", (a) => a.pass_rate, "min"],
  ["min_coverage", "coverage", (a) => a.coverage, "min"],
  ["max_errors", "errors", (a) => a.errors, "max"],
  ["max_blocked", "blocked", (a) => a.blocked, "max"],
  [
    "min_accuracy",
    "accuracy",
    (a) => a.classification?.accuracy ?? null,
    "min",
  ],
  [
    "min_macro_f1",
    "macro F1",
    (a) => a.classification?.macro_f1 ?? null,
    "min",
  ],
];

function show(x: number): string {
  if (Number.isInteger(x)) return String(x);
  // Six significant digits: 0.99999 must not print as "1." or "1" beside a bar of 1.
  return String(Number(x.toPrecision(6)));
}

/** Why an aggregate has no figure for a gate, in words. */
function noFigure(key: keyof Gate, a: Aggregate): string {
  const of = `${a.n} Score${a.n === 1 ? "" : "s"}`;
  switch (key) {
    case "min_mean_lower_bound":
      // The interval is across examples (a case's epochs averaged first).
      return a.examples >= 2
        ? "the values are too large to compute one"
        : `an interval needs scored and valid Scores from two examples, and ${
          a.examples === 0 ? "none has any" : "only 1 has"
        }`;
    case "min_pass_rate":
      return `${of}, none that passes or fails (skipped, not applicable or invalid)`;
    case "min_accuracy":
    case "min_macro_f1":
      return a.aggregatable === 0
        ? `${of}, none scored and valid`
        : "its Scores carry no labels to classify";
    default:
      return a.n === 0 ? "no Scores" : `${of}, none scored and valid`;
  }
}

/**
 * Checks gates against aggregates. A metric with a gate but no Scores fails
 * every threshold it has; an undefined figure (a mean with no values, an
 * interval below two values) fails a minimum. The aggregates of a matrix
 * run (each with its `target_name`) are checked target by target, as `run`
 * checks them: each target meets every gate on its own, and a failure's
 * message starts with the target's name.
 *
 * @param gates Thresholds by metric.
 * @param aggregates The run's aggregates.
 * @param options A matrix run's targets, in order.
 * @returns The gates that did not hold, in metric order (per target, in the
 *   targets' order).
 *
 * @example
 * ```ts
 * import { checkGates } from "./gates.ts";
 * import { Aggregator } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const agg = new Aggregator();
 * agg.add(scored("m", 0.4));
 * const [failure] = checkGates({ m: { min_mean: 0.5 } }, agg.results());
 * if (failure?.gate !== "min_mean") throw new Error("unexpected");
 * ```
 *
 * @example A matrix run: the second target fails where the first holds
 * ```ts
 * import { checkGates } from "./gates.ts";
 * import { Aggregator } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const agg = new Aggregator();
 * agg.add({ ...scored("m", 1, { example_id: "d#1", unit_id: "d#1~a" }), target_name: "a" });
 * agg.add({ ...scored("m", 0, { example_id: "d#1", unit_id: "d#1~b" }), target_name: "b" });
 * const [failure, ...rest] = checkGates({ m: { min_mean: 0.5 } }, agg.results());
 * if (rest.length !== 0 || failure?.message !== "b: m: mean 0 < min_mean 0.5") throw new Error(failure?.message);
 * ```
 */
export function checkGates(
  gates: Readonly<Record<string, Gate>>,
  aggregates: readonly Aggregate[],
  options: CheckGatesOptions = {},
): GateFailure[] {
  const targets = options.targets ?? [
    ...new Set(aggregates.flatMap((a) => a.target_name ?? [])),
  ];
  if (targets.length === 0) return checkOne(gates, aggregates);
  // Aggregates without a target (none in a matrix record) are one more run.
  const plain = aggregates.filter((a) => a.target_name === undefined);
  return [
    ...(plain.length > 0 ? checkOne(gates, plain) : []),
    ...targets.flatMap((target) =>
      checkOne(gates, aggregates.filter((a) => a.target_name === target))
        .map((f) => ({
          ...f,
          target_name: target,
          message: `${target}: ${f.message}`,
        }))
    ),
  ];
}

function checkOne(
  gates: Readonly<Record<string, Gate>>,
  aggregates: readonly Aggregate[],
): GateFailure[] {
  const failures: GateFailure[] = [];
  // A metric whose every Score failed, or was scored out of its rules (a
  // judge's grade off its scale), measured nothing: a broken target, scorer
  // or judge must not pass CI just because no gate names the metric.
  for (const a of aggregates) {
    if (gates[a.metric]?.allow_unmeasured === true) continue;
    const failed = a.errors + a.blocked + a.invalid;
    if (a.aggregatable > 0 || failed === 0) continue;
    const ungated = gates[a.metric] === undefined;
    const unmeasured: Unmeasured = {
      scores: a.n,
      errors: a.errors,
      blocked: a.blocked,
      invalid: a.invalid,
    };
    const counted = nothingMeasured({ metric: a.metric, unmeasured });
    failures.push({
      metric: a.metric,
      gate: "allow_unmeasured",
      threshold: 1,
      actual: 0,
      // Without a gate, say which rule failed the run: a user who set none
      // would otherwise look for one.
      message: ungated
        ? `${counted}; no gate names it, but a metric that measured nothing fails the run: the Scores' reasons say why (let it pass with gates.${a.metric}.allow_unmeasured: true)`
        : `${counted} (allow it with gates.${a.metric}.allow_unmeasured: true)`,
      ...(ungated ? { ungated: true as const } : {}),
      unmeasured,
    });
  }
  for (const metric of Object.keys(gates).sort()) {
    const gate = gates[metric]!;
    const aggregate = aggregates.find((a) => a.metric === metric);
    for (const [key, label, figure, kind] of CHECKS) {
      const threshold = gate[key];
      if (threshold === undefined) continue;
      if (aggregate === undefined) {
        failures.push({
          metric,
          gate: key,
          threshold,
          actual: null,
          message: `${metric}: no Scores for this metric (${key} ${
            show(threshold)
          })`,
        });
        continue;
      }
      const actual = figure(aggregate);
      const held = actual !== null &&
        (kind === "min" ? actual >= threshold : actual <= threshold);
      if (!held) {
        const op = kind === "min" ? "<" : ">";
        failures.push({
          metric,
          gate: key,
          threshold,
          actual,
          // No figure is said as why there is none, not as JavaScript's
          // "undefined".
          message: actual === null
            ? `${metric}: no ${label} to compare with ${key} ${
              show(threshold)
            }: ${noFigure(key, aggregate)}`
            : `${metric}: ${label} ${show(actual)} ${op} ${key} ${
              show(threshold)
            }`,
        });
      }
    }
  }
  // In metric order; for one metric, nothing measured first.
  return failures.sort((x, y) =>
    x.metric < y.metric ? -1 : x.metric > y.metric ? 1 : 0
  );
}
