/**
 * Comparing two runs case by case: paired differences per metric.
 *
 * @module
 */

import { ExactSum } from "../aggregate/exact_sum.ts";
import { clampInterval, tCritical95 } from "../aggregate/stats.ts";
import type { CaseRequirement, ValueRange } from "../aggregate/types.ts";
import { aggregatable, type Score, type ScoreStatus } from "../score/mod.ts";
import { nfcKey } from "../base/nfc.ts";

/**
 * How many of a metric's Scores in one run have each status.
 *
 * @example A run whose target broke on one example
 * ```ts
 * import { diffScores, type StatusCounts } from "./mod.ts";
 * import { blocked, scored } from "../score/mod.ts";
 * const a = [scored("m", 1, { example_id: "d#1" })];
 * const b = [blocked("m", "target error: HTTP 503", { example_id: "d#1" })];
 * const counts: StatusCounts = diffScores(a, b)[0]!.statuses_b;
 * if (counts.blocked !== 1 || counts.scored !== 0) throw new Error("unexpected");
 * ```
 */
export type StatusCounts = Record<ScoreStatus, number>;

function noStatuses(): StatusCounts {
  return { scored: 0, blocked: 0, non_evaluable: 0, skipped: 0, error: 0 };
}

/**
 * A case that got worse.
 *
 * @example The examples that fell, largest drop first
 * ```ts
 * import { diffScores, type Regression } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const a = [scored("m", 1, { example_id: "d#1" }), scored("m", 1, { example_id: "d#2" })];
 * const b = [scored("m", 0.5, { example_id: "d#1" }), scored("m", 0, { example_id: "d#2" })];
 * const regressions: Regression[] = diffScores(a, b)[0]!.regressions;
 * if (regressions.map((r) => r.example_id).join() !== "d#2,d#1") throw new Error("unexpected");
 * ```
 */
export interface Regression {
  /** The example. */
  example_id: string;
  /** Its value in run A (epochs averaged). */
  a: number;
  /** Its value in run B. */
  b: number;
}

/**
 * A paired difference, B − A (a later run against an earlier, a target
 * against a matrix's first), over the examples both sides measured.
 *
 * @example
 * ```ts
 * import type { PairedDelta } from "./mod.ts";
 * const d: PairedDelta = { pairs: 2, delta: 0.5, stderr: 0.5, ci95: [-1, 1], ci95_unclamped: [-5.85, 6.85], improved: 1, regressed: 0, newly_passing: 1, newly_failing: 0 };
 * if (d.newly_passing !== 1) throw new Error();
 * ```
 */
export interface PairedDelta {
  /** Examples with an aggregatable value (scored and valid) on both sides. */
  pairs: number;
  /** The mean of B − A over the pairs; `null` without pairs. */
  delta: number | null;
  /** The paired standard error of `delta`; `null` below two pairs. */
  stderr: number | null;
  /**
   * The 95% interval of `delta` (Student's t), clamped to the range a
   * difference can take when the metric's range is known (`[−1, 1]` for a
   * 0..1 metric: `[low − high, high − low]`); `null` below two pairs.
   */
  ci95: [number, number] | null;
  /**
   * The same interval before clamping, `delta ± t(0.975, pairs − 1) ×
   * stderr`; equal to `ci95` when neither end crossed the range, or no
   * range is known. `null` below two pairs.
   */
  ci95_unclamped: [number, number] | null;
  /** Pairs whose value rose. */
  improved: number;
  /** Pairs whose value fell. */
  regressed: number;
  /**
   * Examples that failed in A and pass in B (their epochs judged by the
   * requirement; an error or blocked epoch is tried and failed), whether or
   * not both sides have a value to pair.
   */
  newly_passing: number;
  /**
   * Examples that passed in A and fail in B: a pair whose verdict flipped,
   * or an example whose every epoch in B is an error or blocked.
   */
  newly_failing: number;
}

/**
 * How one metric changed from run A to run B, over the examples both
 * measured.
 *
 * @example One example only in run B does not enter the pairs
 * ```ts
 * import { type DiffLine, diffScores } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const a = [scored("m", 0, { example_id: "d#1" })];
 * const b = [scored("m", 1, { example_id: "d#1" }), scored("m", 1, { example_id: "d#2" })];
 * const [line]: DiffLine[] = diffScores(a, b);
 * if (line?.pairs !== 1 || line.newly_passing !== 1 || line.only_b !== 1) throw new Error("unexpected");
 * ```
 */
export interface DiffLine extends PairedDelta {
  /** The metric. */
  metric: string;
  /**
   * The target, in a line of one target of two matrix runs
   * ({@linkcode DiffOptions.byTarget}); absent otherwise.
   */
  target_name?: string;
  /** The mean in A over the pairs; `null` without pairs. */
  mean_a: number | null;
  /** The mean in B over the pairs. */
  mean_b: number | null;
  /** Examples with Scores of this metric in A only. */
  only_a: number;
  /** Examples with Scores of this metric in B only. */
  only_b: number;
  /** The metric's Scores in A, counted by status. */
  statuses_a: StatusCounts;
  /** The metric's Scores in B, counted by status. */
  statuses_b: StatusCounts;
  /** The pairs that fell, largest drop first. */
  regressions: Regression[];
}

interface Reduced {
  sum: number;
  count: number;
  passed: number;
  /** Epochs that failed to produce a value: `error` and `blocked`. */
  failed: number;
}

/** What cannot be computed (sums of huge values overflow) is `null`, never NaN. */
function finite(x: number): number | null {
  return Number.isFinite(x) ? x : null;
}

/**
 * Per metric, per example: the aggregatable values, epochs reduced to their
 * mean; and per metric, its Scores counted by status.
 */
function reduce(
  scores: readonly Score[],
  statuses: Map<string, StatusCounts>,
  key: (id: string) => string,
  group: (s: Score) => string,
  written?: Map<string, string>,
): Map<string, Map<string, Reduced | null>> {
  const byMetric = new Map<string, Map<string, Reduced | null>>();
  for (const s of scores) {
    const g = group(s);
    let counts = statuses.get(g);
    if (counts === undefined) statuses.set(g, counts = noStatuses());
    counts[s.status]++;
    const raw = caseIdOf(s);
    if (raw === undefined) continue;
    const id = key(raw);
    if (written !== undefined && !written.has(id)) written.set(id, raw);
    let examples = byMetric.get(g);
    if (examples === undefined) byMetric.set(g, examples = new Map());
    let r = examples.get(id) ?? null;
    if (aggregatable(s)) {
      r ??= { sum: 0, count: 0, passed: 0, failed: 0 };
      r.sum += s.value as number;
      r.count++;
      if (s.passed === true) r.passed++;
    } else if (s.status === "error" || s.status === "blocked") {
      // An epoch that errored is a trial that did not pass, as in the
      // Aggregate's `pass_majority`; it is no value, so it stays out of the
      // mean. An example with no value at all pairs with nothing.
      r ??= { sum: 0, count: 0, passed: 0, failed: 0 };
      r.failed++;
    }
    examples.set(id, r);
  }
  return byMetric;
}

/**
 * The case a Score belongs to, as runs are paired by: its example id, and in
 * a matrix run the target after a `~` (`d#1~fast`), so that two matrix runs
 * pair target by target.
 *
 * @param score A Score.
 * @returns The case's id; `undefined` for a Score without ids.
 *
 * @example
 * ```ts
 * import { caseIdOf } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const s = { ...scored("m", 1, { example_id: "d#1", unit_id: "d#1@2~fast" }), target_name: "fast" };
 * if (caseIdOf(s) !== "d#1~fast" || caseIdOf(scored("m", 1, { example_id: "d#2" })) !== "d#2") throw new Error();
 * ```
 */
export function caseIdOf(score: Score): string | undefined {
  const id = score.example_id ?? score.unit_id;
  if (id === undefined || score.target_name === undefined) return id;
  return `${id}~${score.target_name}`;
}

/** A run's targets, in the order its Scores first name them. */
function targetsOf(scores: readonly Score[]): string[] {
  const names = new Set<string>();
  for (const s of scores) {
    if (s.target_name !== undefined) names.add(s.target_name);
  }
  return [...names];
}

/**
 * Why a matrix run and a run of one target share no case, when one is each
 * (`run --target v1 --baseline` of a matrix's baseline): else `""`.
 */
function matrixNote(a: readonly Score[], b: readonly Score[]): string {
  const [ta, tb] = [targetsOf(a), targetsOf(b)];
  if ((ta.length === 0) === (tb.length === 0)) return "";
  const matrix = (names: string[]) =>
    `a matrix run (targets ${names.map((n) => JSON.stringify(n)).join(", ")})`;
  const [what, other] = ta.length > 0
    ? [`A is ${matrix(ta)}`, "B a run of one target"]
    : ["A is a run of one target", `B ${matrix(tb)}`];
  return `: ${what} and ${other}, whose cases do not pair (a matrix run's case is its example id and its target)`;
}

/** The one dataset of a run's example ids, as written; else `undefined`. */
function onlyDataset(scores: readonly Score[]): string | undefined {
  let only: string | undefined;
  for (const s of scores) {
    const id = s.example_id ?? s.unit_id;
    if (id === undefined) continue;
    const data = datasetOf(id);
    if (data === undefined) return undefined;
    if (only === undefined) only = data;
    else if (only !== data) return undefined;
  }
  return only;
}

/** The dataset part of an example id, `datasets/a.jsonl` of `datasets/a.jsonl#7`. */
function datasetOf(id: string): string | undefined {
  const hash = id.indexOf("#");
  return hash > 0 ? id.slice(0, hash) : undefined;
}

/** A dataset path's last part, `a.jsonl` of `../evals/datasets/a.jsonl`. */
function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/**
 * How two runs' example ids are paired: as they are, read in Unicode NFC
 * (an id with "é" written as one code point in one run and as "e" and a
 * combining accent in the other is one example), or by the case part
 * alone when each run names one dataset, the same file by its name, but by
 * another relative path (`datasets/a.jsonl#7` and `../datasets/a.jsonl#7`,
 * a suite run from two folders), so that no example pairs as written.
 *
 * @param a The Scores of run A.
 * @param b The Scores of run B.
 * @returns The key of an id of each run, and the two dataset paths when
 *   they were set aside.
 *
 * @example
 * ```ts
 * import { pairingOf } from "./diff.ts";
 * import { scored } from "../score/mod.ts";
 * const p = pairingOf(
 *   [scored("m", 1, { example_id: "data/a.jsonl#1" })],
 *   [scored("m", 1, { example_id: "../data/a.jsonl#1" })],
 * );
 * if (p.a("data/a.jsonl#1") !== p.b("../data/a.jsonl#1")) throw new Error("unpaired");
 * ```
 */
export function pairingOf(a: readonly Score[], b: readonly Score[]): Pairing {
  const same: Pairing = { a: nfcKey, b: nfcKey };
  // Each run's ids in NFC, and one way each was written.
  const ids = (scores: readonly Score[]) => {
    const out = new Map<string, string>();
    for (const s of scores) {
      const id = caseIdOf(s);
      if (id !== undefined) out.set(nfcKey(id), id);
    }
    return out;
  };
  const idsA = ids(a);
  const idsB = ids(b);
  for (const id of idsA.keys()) if (idsB.has(id)) return same;
  const one = (written: Iterable<string>) => {
    const found = new Set<string | undefined>();
    for (const id of written) {
      const data = datasetOf(id);
      found.add(data === undefined ? undefined : nfcKey(data));
      if (found.size > 1) return undefined;
    }
    const [only] = found;
    return only;
  };
  const dataA = one(idsA.keys());
  const dataB = one(idsB.keys());
  if (
    dataA === undefined || dataB === undefined ||
    baseName(dataA) !== baseName(dataB)
  ) return same;
  const caseOf = (prefix: string) => (written: string) => {
    const id = nfcKey(written);
    return id.startsWith(`${prefix}#`) ? id.slice(prefix.length + 1) : id;
  };
  // The paths as the runs wrote them, for a message.
  const path = (written: Map<string, string>) =>
    datasetOf(written.values().next().value!)!;
  return {
    a: caseOf(dataA),
    b: caseOf(dataB),
    datasets: [path(idsA), path(idsB)],
  };
}

/**
 * How the example ids of two runs are paired, from {@linkcode pairingOf}.
 *
 * @example
 * ```ts
 * import { type Pairing, pairingOf } from "./mod.ts";
 * const same: Pairing = pairingOf([], []);
 * if (same.datasets !== undefined || same.a("d#1") !== "d#1") throw new Error();
 * ```
 */
export interface Pairing {
  /** The key an example id of run A pairs by (in Unicode NFC). */
  a: (id: string) => string;
  /** The key an example id of run B pairs by (in Unicode NFC). */
  b: (id: string) => string;
  /** The dataset paths of A and B, when ids pair without them. */
  datasets?: [string, string];
}

/**
 * Options of {@linkcode diffScores}.
 *
 * @example Clamp every metric's difference to what one of 0..1 can take
 * ```ts
 * import { diffScores, type DiffOptions } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const options: DiffOptions = { valueRange: () => [0, 1] };
 * const a = [scored("m", 1, { example_id: "d#1" }), scored("m", 1, { example_id: "d#2" })];
 * const b = [scored("m", 1, { example_id: "d#1" }), scored("m", 0, { example_id: "d#2" })];
 * const [line] = diffScores(a, b, options);
 * if (line?.ci95?.[0] !== -1 || line.ci95_unclamped![0] >= -1) throw new Error("unexpected");
 * ```
 */
export interface DiffOptions {
  /**
   * The range each metric's values lie within, as the scorer declares it
   * (what `aggregate` clamps to): the interval of a difference is clamped
   * to `[low − high, high − low]`, unless a paired example's mean lies
   * outside the range (the declaration is then not trusted).
   * @default {undefined}
   */
  valueRange?: ((metric: string) => ValueRange | undefined) | undefined;
  /**
   * When an example passes over its epochs, for `newly_passing` and
   * `newly_failing` (see {@linkcode casePasses}): a run's `epochs.require`.
   * @default {"majority"}
   */
  require?: CaseRequirement | undefined;
  /**
   * A line per target and metric for Scores of matrix runs (`target_name`),
   * as `diff A B`, `run --baseline` and the HTML report give them; `false`
   * pools every target's pairs in one line per metric, where one target's
   * regression is averaged with the others' changes. Scores without a
   * target (a run of one) give a line per metric either way.
   * @default {true}
   */
  byTarget?: boolean | undefined;
}

/**
 * The name a diff line goes by in messages and tables: its metric, after its
 * target in a line of one target (`large: exact_match`).
 *
 * @param line A diff line, or what a record keeps of one.
 * @returns The name.
 *
 * @example
 * ```ts
 * import { diffLabel } from "./mod.ts";
 * if (diffLabel({ metric: "m", target_name: "large" }) !== "large: m") throw new Error();
 * ```
 */
export function diffLabel(
  line: { metric: string; target_name?: string | undefined },
): string {
  return line.target_name === undefined
    ? line.metric
    : `${line.target_name}: ${line.metric}`;
}

/**
 * Whether a case passes under a requirement.
 *
 * @param passes Epochs that passed.
 * @param trials Epochs tried (an error or blocked epoch is tried and failed).
 * @param require When a case passes.
 * @returns The verdict.
 *
 * @example
 * ```ts
 * import { casePasses } from "./mod.ts";
 * if (!casePasses(3, 5, "majority") || casePasses(2, 4, "majority") || !casePasses(1, 5, "any") || casePasses(4, 5, "all")) throw new Error();
 * ```
 */
export function casePasses(
  passes: number,
  trials: number,
  require: CaseRequirement,
): boolean {
  switch (require) {
    case "all":
      return passes === trials;
    case "majority":
      return passes * 2 > trials;
    case "any":
      return passes > 0;
  }
}

/**
 * Whether every value lies within a range, but for rounding (an example's
 * mean of values at an end may round past it), as the aggregator checks.
 */
function within(values: readonly number[], range: ValueRange): boolean {
  const slack = 1e-9 * Math.max(1, Math.abs(range[0]), Math.abs(range[1]));
  return values.every((v) => v >= range[0] - slack && v <= range[1] + slack);
}

/**
 * Pairs the Scores of two runs by example id and metric (epochs averaged per
 * example first) and summarises B − A per metric, sorted by metric. When
 * the two runs name one dataset by two relative paths, ids pair by their
 * case part (see {@linkcode pairingOf}). Ids pair in Unicode NFC; the ids
 * shown are A's, as written.
 *
 * @param a The Scores of run A (the baseline).
 * @param b The Scores of run B (the candidate).
 * @param options The metrics' ranges, for clamping the intervals.
 * @returns One line per metric seen in either run.
 *
 * @example
 * ```ts
 * import { diffScores } from "./diff.ts";
 * import { scored } from "../score/mod.ts";
 * const a = [scored("m", 1, { example_id: "d#1" }), scored("m", 1, { example_id: "d#2" })];
 * const b = [scored("m", 0, { example_id: "d#1" }), scored("m", 1, { example_id: "d#2" })];
 * const [line] = diffScores(a, b);
 * if (line?.delta !== -0.5 || line.newly_failing !== 1) throw new Error("unexpected");
 * ```
 */
export function diffScores(
  a: readonly Score[],
  b: readonly Score[],
  options: DiffOptions = {},
): DiffLine[] {
  const statusesA = new Map<string, StatusCounts>();
  const statusesB = new Map<string, StatusCounts>();
  const pairing = pairingOf(a, b);
  const require = options.require ?? "majority";
  // A's ids, as written, for the examples a reader looks up.
  const written = new Map<string, string>();
  const shown = (key: string) => written.get(key) ?? key;
  // A group is a metric, or with byTarget one target's metric.
  const groups = new Map<string, { metric: string; target_name?: string }>();
  const group = (s: Score): string => {
    const target = options.byTarget !== false ? s.target_name : undefined;
    if (target === undefined) return s.metric;
    const g = JSON.stringify([s.metric, target]);
    if (!groups.has(g)) {
      groups.set(g, { metric: s.metric, target_name: target });
    }
    return g;
  };
  const ra = reduce(a, statusesA, pairing.a, group, written);
  const rb = reduce(b, statusesB, pairing.b, group);
  const metricOf = (g: string) => groups.get(g)?.metric ?? g;
  // By metric; a metric's targets in the order the runs first name them
  // (the matrix's), the sort being stable.
  const keys = [...new Set([...statusesA.keys(), ...statusesB.keys()])]
    .sort((x, y) => {
      const mx = metricOf(x);
      const my = metricOf(y);
      return mx < my ? -1 : mx > my ? 1 : 0;
    });
  return keys.map((g) => {
    const { metric, target_name } = groups.get(g) ?? { metric: g };
    const ea = ra.get(g) ?? new Map<string, Reduced | null>();
    const eb = rb.get(g) ?? new Map<string, Reduced | null>();
    const diffs: number[] = [];
    // Both sides' example means, to trust the declared range or not.
    const means: number[] = [];
    const sumA = new ExactSum();
    const sumB = new ExactSum();
    const sumD = new ExactSum();
    let improved = 0;
    let newlyPassing = 0;
    let newlyFailing = 0;
    const regressions: Regression[] = [];
    for (const [id, x] of ea) {
      const y = eb.get(id);
      if (x === null || y === null || y === undefined) continue;
      // A verdict on each side, epochs tried as the requirement counts them
      // (errors tried and failed): a pass flip needs no value on both sides,
      // so a case that passed and now only errors is newly failing.
      const passA = casePasses(x.passed, x.count + x.failed, require);
      const passB = casePasses(y.passed, y.count + y.failed, require);
      if (!passA && passB) newlyPassing++;
      if (passA && !passB) newlyFailing++;
      if (x.count === 0 || y.count === 0) continue;
      const va = x.sum / x.count;
      const vb = y.sum / y.count;
      sumA.add(va);
      sumB.add(vb);
      sumD.add(vb - va);
      diffs.push(vb - va);
      means.push(va, vb);
      if (vb > va) improved++;
      else if (vb < va) {
        regressions.push({ example_id: shown(id), a: va, b: vb });
      }
    }
    const n = diffs.length;
    let stderr: number | null = null;
    let ci95: [number, number] | null = null;
    let unclamped: [number, number] | null = null;
    const delta = n > 0 ? finite(sumD.value / n) : null;
    if (n >= 2 && delta !== null) {
      const variance = diffs.reduce((s, d) => s + (d - delta) ** 2, 0) /
        (n - 1);
      const se = Math.sqrt(variance / n);
      const half = tCritical95(n - 1) * se;
      if (Number.isFinite(delta - half) && Number.isFinite(delta + half)) {
        stderr = se;
        unclamped = [delta - half, delta + half];
        const range = options.valueRange?.(metric);
        // A difference of two values of [low, high] lies within ±(high − low).
        const width = range === undefined ? NaN : range[1] - range[0];
        ci95 = Number.isFinite(width) && width >= 0 && within(means, range!)
          ? clampInterval(unclamped, [-width, width])
          : [unclamped[0], unclamped[1]];
      }
    }
    regressions.sort((p, q) =>
      (p.b - p.a) - (q.b - q.a) || p.example_id.localeCompare(q.example_id)
    );
    return {
      metric,
      ...(target_name === undefined ? {} : { target_name }),
      pairs: n,
      mean_a: n > 0 ? finite(sumA.value / n) : null,
      mean_b: n > 0 ? finite(sumB.value / n) : null,
      delta,
      stderr,
      ci95,
      ci95_unclamped: unclamped,
      improved,
      regressed: regressions.length,
      newly_passing: newlyPassing,
      newly_failing: newlyFailing,
      only_a: [...ea.keys()].filter((id) => !eb.has(id)).length,
      only_b: [...eb.keys()].filter((id) => !ea.has(id)).length,
      statuses_a: statusesA.get(g) ?? noStatuses(),
      statuses_b: statusesB.get(g) ?? noStatuses(),
      regressions,
    };
  });
}

/**
 * Why two runs cannot be compared, if they cannot: they share under half of
 * the examples (paired as {@linkcode pairingOf} pairs them), or a metric is
 * measured in no example of both (a matrix's target that only one run has,
 * added or removed, aside: its cases are new or removed ones). Such a
 * comparison is no evidence of "no regression", so `diff --fail-on-regression` and `run --baseline` fail on
 * it.
 *
 * @param a The Scores of run A (the baseline).
 * @param b The Scores of run B.
 * @param lines Their {@linkcode diffScores}.
 * @returns The reasons, in words; none when the runs compare.
 *
 * @example Two runs of different datasets
 * ```ts
 * import { diffScores, unfitComparison } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const a = [scored("m", 1, { example_id: "a.jsonl#1" })];
 * const b = [scored("m", 1, { example_id: "b.jsonl#1" })];
 * const why = unfitComparison(a, b, diffScores(a, b));
 * if (!why[0]?.includes("share 0 examples")) throw new Error(why.join("; "));
 * ```
 */
export function unfitComparison(
  a: readonly Score[],
  b: readonly Score[],
  lines: readonly DiffLine[],
): string[] {
  const pairing = pairingOf(a, b);
  const examples = (scores: readonly Score[], key: (id: string) => string) => {
    const out = new Set<string>();
    for (const s of scores) {
      const id = caseIdOf(s);
      if (id !== undefined) out.add(key(id));
    }
    return out;
  };
  const inA = examples(a, pairing.a);
  const inB = examples(b, pairing.b);
  let shared = 0;
  for (const id of inA) if (inB.has(id)) shared++;
  const unfit: string[] = [];
  if (shared * 2 < Math.max(inA.size, inB.size)) {
    // Runs of two datasets (renamed, or another version): say so, as the
    // counts alone read like a bug. Not of one file by two paths, paired by
    // case id: those ran one dataset, and share few examples for another
    // reason (a --limit, a shard).
    const dataA = onlyDataset(a);
    const dataB = onlyDataset(b);
    const datasets = pairing.datasets === undefined &&
        dataA !== undefined && dataB !== undefined &&
        nfcKey(dataA) !== nfcKey(dataB)
      ? `: A's are of dataset ${JSON.stringify(dataA)}, B's of ${
        JSON.stringify(dataB)
      } (an example id starts with its dataset's name or path, as the config writes it)`
      : "";
    unfit.push(
      `the runs share ${shared} example${
        shared === 1 ? "" : "s"
      } of A's ${inA.size} and B's ${inB.size}, under half${
        datasets || matrixNote(a, b)
      }`,
    );
  }
  // A matrix's target that only one run has (one added to or removed from
  // the matrix): its cases are new or removed, listed and never a failure,
  // as a case added to the dataset is; not a metric measured in no case.
  const targetsA = new Set(targetsOf(a));
  const targetsB = new Set(targetsOf(b));
  for (const l of lines) {
    if (
      l.pairs === 0 &&
      (l.target_name === undefined ||
        (targetsA.has(l.target_name) && targetsB.has(l.target_name)))
    ) {
      unfit.push(
        `${
          diffLabel(l)
        }: no example is measured in both runs (A: ${l.statuses_a.scored} scored, B: ${l.statuses_b.scored} scored)`,
      );
    }
  }
  return unfit;
}

/**
 * Tells whether a metric got significantly worse: the whole 95% interval of
 * its paired difference is below zero.
 *
 * @param line A diff line.
 * @returns Whether it regressed beyond noise.
 *
 * @example Every example dropped: beyond noise
 * ```ts
 * import { diffScores, significantlyWorse } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const ids = ["d#1", "d#2", "d#3", "d#4"];
 * const a = ids.map((id, i) => scored("m", 0.9 + i / 100, { example_id: id }));
 * const b = ids.map((id, i) => scored("m", 0.2 + i / 50, { example_id: id }));
 * if (!significantlyWorse(diffScores(a, b)[0]!)) throw new Error("expected a regression");
 * if (significantlyWorse(diffScores(a, a)[0]!)) throw new Error("no change is no regression");
 * ```
 */
export function significantlyWorse(line: DiffLine): boolean {
  return line.ci95 !== null && line.ci95[1] < 0;
}
