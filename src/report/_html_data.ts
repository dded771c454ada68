// What the HTML report's page shows, computed here (pure) and embedded in the
// page as JSON: the page's script only lays it out.

import { Aggregator } from "../aggregate/aggregator.ts";
import { checkGates, type Gate } from "../aggregate/gates.ts";
import type { Aggregate, CaseRequirement } from "../aggregate/types.ts";
import type { ComparisonLine } from "../diff/compare.ts";
import { type DiffLine, diffScores } from "../diff/diff.ts";
import { aggregatable, type Score } from "../score/mod.ts";
import {
  matrixComparison,
  splitMatrixRun,
  targetOrder,
} from "./matrix_runs.ts";
import type { ReportRun, ReportUnit } from "./report_run.ts";
import { toolCallLines } from "./_tool_calls.ts";
import {
  type InvalidCasesText,
  InvalidCaseTally,
  unmeasuredMessage,
} from "./_unmeasured.ts";
import { formatSpend, hasSpend, SpendTally } from "../record/spend.ts";
import { budgetText, runFailures } from "./run_failures.ts";
import { valueRangeOption } from "../aggregate/value_ranges.ts";
import { counted } from "../base/words.ts";

/** A Score as the page holds it: short keys, absent fields left out. */
export interface PageScore {
  /** status; absent when `scored` */
  st?: string;
  /** validity; absent when `valid` */
  va?: string;
  /** value */
  v: number | null;
  /** passed */
  p?: boolean;
  /** reason */
  r?: string;
  /** evaluator_version, as its index in {@linkcode PageData.evaluators} */
  ev: number;
  /** diagnostics */
  d?: Score["diagnostics"];
}

/** One unit of one run as the page holds it. */
export interface PageUnit {
  in?: unknown;
  exp?: unknown;
  ctx?: unknown;
  meta?: unknown;
  out?: unknown;
  /** The tool calls, a line of text each. */
  tc?: string[];
  /** The target's record. */
  t?: unknown;
  /** The unit's Scores, by metric index; `null` where it has none. */
  s: Array<PageScore | null>;
}

/**
 * One row of the cases table: a unit of run A, of run B, or of both; or, for
 * a matrix run, the case's unit of each target.
 */
export interface PageRow {
  /** The unit id. */
  id: string;
  /** The example id; absent when equal to the unit id. */
  ex?: string;
  /** The epoch, when known. */
  ep?: number;
  /** Run A's unit; in a matrix, the first target's. */
  a: PageUnit | null;
  b?: PageUnit | null;
  /** In a matrix: the units of the targets after the first, in order. */
  rest?: Array<PageUnit | null>;
  /**
   * Two runs: -1 newly failing in B, 1 newly passing, 0 neither. A matrix:
   * -1 when a later target fails what the first passes, else 1 when one
   * passes what the first fails.
   */
  ch?: number;
}

/** A gate of the config and whether it held. */
export interface PageGate {
  metric: string;
  gate: string;
  /** `null` for a metric that measured nothing (no threshold named it). */
  threshold: number | null;
  actual: number | null;
  held: boolean;
  message: string;
}

/** One metric's chart: a histogram of its values and its interval. */
export interface PageChart {
  metric: string;
  lo: number;
  hi: number;
  bins: number[];
  mean: number | null;
  ci95: [number, number] | null;
  bounds: [number, number] | null;
}

/** One run's summary as the page shows it: a run, or a matrix's target. */
export interface PageRun {
  /** `run` (A or B, or the one run) or `target` (a matrix's). */
  noun: "run" | "target";
  /** "A", "B", the target's name, or empty for the one run. */
  label: string;
  facts: Array<[string, string]>;
  aggregates: Array<Omit<Aggregate, "sums">>;
  gates: PageGate[];
  /** `passed`, `failed` or `none` (no gates). */
  outcome: string;
  charts: PageChart[];
  /** Whether units (inputs and outputs) were in the record. */
  units: boolean;
}

/** Everything the page shows. */
export interface PageData {
  title: string;
  metrics: string[];
  runs: PageRun[];
  diff: Array<Omit<DiffLine, "regressions">> | null;
  /** A matrix run: the comparison of its targets, as `diff RECORD` prints it. */
  comparison: ComparisonLine[] | null;
  rows: PageRow[];
  /** The evaluator versions the Scores name, each once. */
  evaluators: string[];
}

type Threshold = Exclude<keyof Gate, "allow_unmeasured">;

const GATE_KEYS: ReadonlyArray<Threshold> = [
  "min_mean",
  "min_mean_lower_bound",
  "min_pass_rate",
  "min_coverage",
  "max_errors",
  "max_blocked",
  "min_accuracy",
  "min_macro_f1",
];

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The config's gates, read defensively: a record holds the resolved config. */
function gatesOf(config: unknown): Record<string, Gate> {
  const gates: Record<string, Gate> = {};
  if (!isObject(config) || !isObject(config.gates)) return gates;
  for (const [metric, g] of Object.entries(config.gates)) {
    if (!isObject(g)) continue;
    const gate: Gate = {};
    for (const key of GATE_KEYS) {
      const value = g[key];
      if (typeof value === "number") gate[key] = value;
    }
    if (typeof g.allow_unmeasured === "boolean") {
      gate.allow_unmeasured = g.allow_unmeasured;
    }
    gates[metric] = gate;
  }
  return gates;
}

function pageGates(
  config: unknown,
  aggregates: readonly Aggregate[],
  invalid: InvalidCasesText | undefined,
): PageGate[] {
  const gates = gatesOf(config);
  const failures = checkGates(gates, aggregates);
  const out: PageGate[] = [];
  for (const metric of Object.keys(gates).sort()) {
    for (const key of GATE_KEYS) {
      const threshold = gates[metric]![key];
      if (threshold === undefined) continue;
      const failure = failures.find((f) =>
        f.metric === metric && f.gate === key
      );
      const aggregate = aggregates.find((a) => a.metric === metric);
      // The figure a held gate was compared with, as checkGates reads it.
      const actual = failure?.actual ?? (aggregate === undefined ? null : ({
        allow_unmeasured: null,
        min_mean: aggregate.mean,
        min_mean_lower_bound: aggregate.ci95?.[0] ?? null,
        min_pass_rate: aggregate.pass_rate,
        min_coverage: aggregate.coverage,
        max_errors: aggregate.errors,
        max_blocked: aggregate.blocked,
        min_accuracy: aggregate.classification?.accuracy ?? null,
        min_macro_f1: aggregate.classification?.macro_f1 ?? null,
      })[key]);
      out.push({
        metric,
        gate: key,
        threshold,
        actual,
        held: failure === undefined,
        message: failure?.message ?? `${metric}: ${key} ${threshold} held`,
      });
    }
  }
  // A metric that measured nothing fails the run, gated or not.
  for (const f of failures) {
    if (f.gate !== "allow_unmeasured") continue;
    out.push({
      metric: f.metric,
      gate: "nothing measured",
      threshold: null,
      actual: null,
      held: false,
      // As run's stderr words it: invalid cases are a dataset to fix.
      message: unmeasuredMessage(f, invalid),
    });
  }
  return out;
}

/** A URL without its userinfo: a password in a config is never shown. */
function noUserinfo(text: string): string {
  return text.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, "$1");
}

function duration(from: string | undefined, to: string | null | undefined) {
  if (from === undefined || to === undefined || to === null) return undefined;
  const ms = Date.parse(to) - Date.parse(from);
  if (!Number.isFinite(ms)) return undefined;
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** A number the target's record gives as its cost, when it does. */
function costOf(target: unknown): number | undefined {
  if (!isObject(target)) return undefined;
  for (const v of [target.cost_usd, target.cost]) {
    if (typeof v === "number" && Number.isFinite(v)) return v;
  }
  const usage = target.usage;
  if (isObject(usage)) {
    for (const v of [usage.cost_usd, usage.cost]) {
      if (typeof v === "number" && Number.isFinite(v)) return v;
    }
  }
  return undefined;
}

/** A target's config as one line: its type and where it runs. */
function targetText(target: Record<string, unknown>): string | undefined {
  const where = target.cmd ?? target.url ?? target.base_url;
  return typeof target.type === "string"
    ? `${target.type}${
      typeof where === "string" ? `: ${noUserinfo(where)}` : ""
    }`
    : undefined;
}

/**
 * What a run's facts and charts need of its units and Scores, gathered one at
 * a time: counts, the models named, the spend, each metric's values.
 */
export class RunTally {
  /** Whether the run has units (a record), not Scores alone. */
  readonly hasUnits: boolean;
  units = 0;
  scores = 0;
  /** The first five models the units name, each once, in order. */
  readonly models: string[] = [];
  readonly spend: SpendTally = new SpendTally();
  /** The units' own costs, and how many units gave one. */
  cost = 0;
  priced = 0;
  /** Each metric's aggregatable values, in order. */
  readonly values: Map<string, number[]> = new Map();
  /** Every metric a Score names. */
  readonly metrics: Set<string> = new Set();
  /** The examples blocked as invalid cases. */
  readonly invalid: InvalidCaseTally = new InvalidCaseTally();

  constructor(hasUnits: boolean) {
    this.hasUnits = hasUnits;
  }

  /** The tally of a run read whole. */
  static of(run: ReportRun): RunTally {
    const tally = new RunTally(run.units !== undefined);
    for (const u of run.units ?? []) tally.addUnit(u);
    for (const s of run.scores) tally.addScore(s);
    return tally;
  }

  addUnit(u: ReportUnit): void {
    this.units++;
    const m = isObject(u.target) ? u.target.model : undefined;
    if (
      typeof m === "string" && this.models.length < 5 &&
      !this.models.includes(m)
    ) this.models.push(m);
    this.spend.addUnit(u);
    const c = costOf(u.target);
    if (c !== undefined) {
      this.cost += c;
      this.priced++;
    }
  }

  addScore(s: Score): void {
    this.scores++;
    this.metrics.add(s.metric);
    this.spend.addScore(s);
    if (!aggregatable(s)) return this.invalid.add(s);
    let list = this.values.get(s.metric);
    if (list === undefined) this.values.set(s.metric, list = []);
    list.push(s.value as number);
  }
}

function facts(run: ReportRun, tally: RunTally): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const add = (name: string, value: unknown) => {
    if (value === undefined || value === null || value === "") return;
    out.push([name, typeof value === "string" ? value : JSON.stringify(value)]);
  };
  const config = isObject(run.config) ? run.config : {};
  const target = isObject(config.target) ? config.target : {};
  add("run", run.run_id);
  add("config", run.config_path);
  add("dataset", config.dataset);
  add("target", targetText(target));
  const models = new Set<string>();
  if (typeof target.model === "string") models.add(target.model);
  if (!isObject(config.target) && isObject(config.targets)) {
    for (const t of Object.values(config.targets)) {
      if (isObject(t) && typeof t.model === "string") models.add(t.model);
    }
  }
  // The units' models, while fewer than five are named.
  for (const m of tally.models) if (models.size < 5) models.add(m);
  // A matrix config (not split per target): each of its targets.
  if (!isObject(config.target) && isObject(config.targets)) {
    for (const [name, t] of Object.entries(config.targets)) {
      add(`target ${name}`, isObject(t) ? targetText(t) : undefined);
    }
  }
  if (Array.isArray(config.matrix)) add("matrix", config.matrix.join(", "));
  add("model", [...models].join(", "));
  add("started", run.started_at);
  add("finished", run.finished_at ?? undefined);
  add("duration", duration(run.started_at, run.finished_at));
  if (run.complete !== undefined) add("complete", run.complete ? "yes" : "no");
  const spend = tally.spend.result();
  if (hasSpend(spend)) add("cost", formatSpend(spend).slice("cost: ".length));
  if (run.budget !== undefined) {
    add(
      "budget",
      `${run.budget.refused > 0 ? "reached: " : ""}${budgetText(run.budget)}`,
    );
  }
  if (run.baseline !== undefined) {
    const regressed = runFailures({ baseline: run.baseline });
    add(
      "baseline",
      regressed.length > 0
        ? regressed.map((f) => f.message).join("; ")
        : `no regression against baseline ${JSON.stringify(run.baseline.path)}`,
    );
  }
  add("epochs", config.epochs);
  add("concurrency", config.concurrency);
  if (tally.hasUnits) add("units", String(tally.units));
  add("scores", String(tally.scores));
  const { cost, priced } = tally;
  if (priced > 0) {
    add(
      "cost",
      `${cost.toFixed(4)}${
        priced < tally.units
          ? ` (${counted(priced, "unit")} priced of ${tally.units})`
          : ""
      }`,
    );
  }
  return out;
}

const BINS = 10;

function charts(
  values: ReadonlyMap<string, readonly number[]>,
  aggregates: readonly Aggregate[],
): PageChart[] {
  return aggregates.map((a) => {
    const list = values.get(a.metric) ?? [];
    let lo = 0;
    let hi = 1;
    for (const v of list) {
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    const bins = new Array<number>(BINS).fill(0);
    for (const v of list) {
      const i = Math.min(BINS - 1, Math.floor((v - lo) / (hi - lo) * BINS));
      bins[i]!++;
    }
    return {
      metric: a.metric,
      lo,
      hi,
      bins,
      mean: a.mean,
      ci95: a.ci95,
      bounds: a.mean_bounds,
    };
  });
}

function aggregatesOf(run: ReportRun): Aggregate[] {
  if (run.aggregates !== undefined) return [...run.aggregates];
  const ranges = run.value_ranges;
  const aggregator = new Aggregator({
    grouped: true,
    ...valueRangeOption(ranges),
  });
  for (const s of run.scores) aggregator.add(s);
  return aggregator.results();
}

/** Each evaluator version once: a page of 100,000 units names few. */
class Interned {
  readonly list: string[] = [];
  #index = new Map<string, number>();
  of(text: string): number {
    let i = this.#index.get(text);
    if (i === undefined) {
      this.#index.set(text, i = this.list.length);
      this.list.push(text);
    }
    return i;
  }
}

function pageScore(s: Score, evaluators: Interned): PageScore {
  const p: PageScore = { v: s.value, ev: evaluators.of(s.evaluator_version) };
  if (s.status !== "scored") p.st = s.status;
  if (s.validity !== "valid") p.va = s.validity;
  if (s.passed !== undefined) p.p = s.passed;
  if (s.reason !== undefined) p.r = s.reason;
  if (s.diagnostics.length > 0) p.d = s.diagnostics;
  return p;
}

/** A unit of a run as the page keys it, with what the page holds of it. */
interface Keyed<U = PageUnit> {
  id: string;
  ex: string;
  ep?: number;
  unit: U;
}

/**
 * A run's units in the page's order, whatever order they come in: each
 * unit's id (a later unit of the same id takes its Scores, and its row keeps
 * the first unit's fields), then each id only Scores name, in the order they
 * first come.
 */
class Keying<U> {
  #byId = new Map<string, Keyed<U>>();
  #units: Keyed<U>[] = [];
  #scoreOnly = new Map<string, Keyed<U>>();
  #scores = 0;
  #fresh: () => U;
  #clear: (unit: U) => void;

  /**
   * @param fresh What the page holds of a unit not yet filled.
   * @param clear Drops the Scores of what `fresh` made.
   */
  constructor(fresh: () => U, clear: (unit: U) => void) {
    this.#fresh = fresh;
    this.#clear = clear;
  }

  /** Keys a unit: its fields go into the returned `unit`. */
  unit(u: ReportUnit): Keyed<U> {
    const id = String(
      u.unit_id ?? u.example_id ?? `#${this.#units.length + 1}`,
    );
    const keyed: Keyed<U> = {
      id,
      ex: String(u.example_id ?? id),
      unit: this.#fresh(),
    };
    if (typeof u.epoch === "number") keyed.ep = u.epoch;
    const earlier = this.#byId.get(id);
    if (earlier === undefined) {
      this.#units.push(keyed);
    } else if (this.#scoreOnly.delete(id)) {
      // Its Scores came before it: they are its own.
      keyed.unit = earlier.unit;
      this.#units.push(keyed);
    } else {
      // A second unit of an id takes its Scores, early ones too.
      this.#clear(earlier.unit);
    }
    this.#byId.set(id, keyed);
    return keyed;
  }

  /** Keys a Score: it goes into the returned `unit`. */
  score(s: Score): Keyed<U> {
    const n = ++this.#scores;
    const id = s.unit_id ?? s.example_id ?? `score ${n}`;
    let keyed = this.#byId.get(id);
    if (keyed === undefined) {
      keyed = { id, ex: s.example_id ?? id, unit: this.#fresh() };
      const at = /@(\d+)$/.exec(id);
      if (at !== null && s.example_id !== undefined) keyed.ep = Number(at[1]);
      this.#byId.set(id, keyed);
      this.#scoreOnly.set(id, keyed);
    }
    return keyed;
  }

  /** The units in the page's order. */
  order(): Keyed<U>[] {
    return [...this.#units, ...this.#scoreOnly.values()];
  }
}

/** A run's units in order, each with its Scores by metric index. */
function keyedUnits(
  run: ReportRun,
  metrics: readonly string[],
  evaluators: Interned,
): Keyed[] {
  const index = new Map(metrics.map((m, i) => [m, i]));
  const keying = new Keying<PageUnit>(
    () => ({ s: metrics.map(() => null) }),
    (unit) => unit.s.fill(null),
  );
  for (const u of run.units ?? []) copyUnit(u, keying.unit(u).unit);
  for (const s of run.scores) {
    keying.score(s).unit.s[index.get(s.metric)!] = pageScore(s, evaluators);
  }
  return keying.order();
}

/** A unit of the page as JSON text: its fields after its Scores, and its Scores'. */
interface UnitText {
  /** `,"in":…,"out":…`, or empty. */
  fields: string;
  /** Metric and PageScore JSON, by turns. */
  scores: string[];
}

/** The JSON of the page's data, in pieces: before its rows, each row, after them. */
export interface PageText {
  head: string;
  rows: Iterable<string>;
  tail: string;
}

/**
 * The page of one run that is not a matrix, gathered a unit and a Score at a
 * time and held as JSON text, not objects: what a record too big to hold
 * whole is shown with. It gives the bytes {@linkcode pageData} gives.
 */
export class OneRunPage {
  #tally: RunTally;
  #evaluators = new Interned();
  #keying = new Keying<UnitText>(
    () => ({ fields: "", scores: [] }),
    (unit) => (unit.scores = []),
  );

  /** @param hasUnits Whether the run has units (a record), not Scores alone. */
  constructor(hasUnits: boolean) {
    this.#tally = new RunTally(hasUnits);
  }

  addUnit(u: ReportUnit): void {
    this.#tally.addUnit(u);
    const unit: PageUnit = { s: [] };
    copyUnit(u, unit);
    const json = JSON.stringify(unit);
    this.#keying.unit(u).unit.fields = json.slice(EMPTY_UNIT.length - 1, -1);
  }

  addScore(s: Score): void {
    this.#tally.addScore(s);
    const { scores } = this.#keying.score(s).unit;
    const text = JSON.stringify(pageScore(s, this.#evaluators));
    const at = metricAt(scores, s.metric);
    // A metric's later Score of the unit takes its place.
    if (at >= 0) scores[at + 1] = text;
    else scores.push(s.metric, text);
  }

  /**
   * The page's data as JSON text.
   *
   * @param run The run's header (its Scores and units are those added).
   * @param aggregates Its aggregates.
   * @param title The page's title.
   */
  text(
    run: ReportRun,
    aggregates: readonly Aggregate[],
    title: string,
  ): PageText {
    const metrics = [
      ...new Set([...aggregates.map((x) => x.metric), ...this.#tally.metrics]),
    ].sort();
    const head = JSON.stringify({
      title,
      metrics,
      runs: [pageRun(run, "", aggregates, "run", this.#tally)],
      diff: null,
      comparison: null,
    });
    const keyed = this.#keying.order();
    // Each row's text made as it is written, not all held at once.
    function* rows(): Generator<string> {
      for (const [i, k] of keyed.entries()) {
        yield (i > 0 ? "," : "") + rowText(k, metrics);
      }
    }
    return {
      head: `${head.slice(0, -1)},"rows":[`,
      rows: rows(),
      tail: `],"evaluators":${JSON.stringify(this.#evaluators.list)}}`,
    };
  }
}

const EMPTY_UNIT = '{"s":[]}';

/** Where a unit's Score of `metric` is in its `scores`, or -1. */
function metricAt(scores: readonly string[], metric: string): number {
  for (let i = 0; i < scores.length; i += 2) if (scores[i] === metric) return i;
  return -1;
}

/** A row of one run's page as JSON, as `row(k, k.unit)` gives it. */
function rowText(k: Keyed<UnitText>, metrics: readonly string[]): string {
  const { fields, scores } = k.unit;
  const s = metrics.map((m) => {
    const at = metricAt(scores, m);
    return at >= 0 ? scores[at + 1]! : "null";
  });
  const unit = `{"s":[${s.join(",")}]${fields}}`;
  // The row around its unit: id, then unit, then example id and epoch.
  const json = JSON.stringify(row(k, null));
  const id = `{"id":${JSON.stringify(k.id)}`;
  return `${id},"a":${unit}${json.slice(id.length + ',"a":null'.length)}`;
}

function copyUnit(u: ReportUnit, unit: PageUnit): void {
  if (u.input !== undefined) unit.in = u.input;
  if (u.expected !== undefined) unit.exp = u.expected;
  if (u.context !== undefined && u.context !== null) unit.ctx = u.context;
  if (u.metadata !== undefined) unit.meta = u.metadata;
  if (u.output !== undefined) unit.out = u.output;
  const calls = toolCallLines(u.tool_calls);
  if (calls.length > 0) unit.tc = calls;
  if (u.target !== undefined) unit.t = u.target;
}

/** Per metric, per example: did it pass (epochs reduced as `diffScores` does)? */
function passes(scores: readonly Score[]): Map<string, Map<string, boolean>> {
  const counts = new Map<string, Map<string, [number, number]>>();
  for (const s of scores) {
    const id = s.example_id ?? s.unit_id;
    if (id === undefined || !aggregatable(s)) continue;
    let m = counts.get(s.metric);
    if (m === undefined) counts.set(s.metric, m = new Map());
    const c = m.get(id) ?? [0, 0];
    c[0] += s.passed === true ? 1 : 0;
    c[1]++;
    m.set(id, c);
  }
  const out = new Map<string, Map<string, boolean>>();
  for (const [metric, m] of counts) {
    out.set(
      metric,
      new Map([...m].map(([id, [p, n]]) => [id, p * 2 >= n])),
    );
  }
  return out;
}

/** Per example: -1 when a metric newly fails in B, else 1 when one newly passes. */
function changes(a: ReportRun, b: ReportRun): Map<string, number> {
  const pa = passes(a.scores);
  const pb = passes(b.scores);
  const out = new Map<string, number>();
  for (const [metric, ma] of pa) {
    const mb = pb.get(metric);
    if (mb === undefined) continue;
    for (const [id, x] of ma) {
      const y = mb.get(id);
      if (y === undefined || x === y) continue;
      if (x && !y) out.set(id, -1);
      else if (out.get(id) !== -1) out.set(id, 1);
    }
  }
  return out;
}

function pageRun(
  run: ReportRun,
  label: string,
  aggregates: readonly Aggregate[],
  noun: PageRun["noun"] = "run",
  tally: RunTally = RunTally.of(run),
): PageRun {
  const gates = pageGates(run.config, aggregates, tally.invalid.result());
  return {
    noun,
    label,
    facts: facts(run, tally),
    aggregates: aggregates.map(({ sums: _, ...rest }) => rest),
    gates,
    outcome: gates.length === 0
      ? "none"
      : gates.every((g) => g.held)
      ? "passed"
      : "failed",
    charts: charts(tally.values, aggregates),
    units: tally.hasUnits,
  };
}

/**
 * What the page shows for one run, or for two compared (A the baseline), as
 * JSON text: one run that is not a matrix a row at a time
 * ({@linkcode OneRunPage}), as a record read a line at a time gives it.
 */
export function pageText(
  a: ReportRun,
  b: ReportRun | undefined,
  title: string,
): PageText {
  const targets = b === undefined ? splitMatrixRun(a) : undefined;
  if (b === undefined && targets === undefined) {
    const page = new OneRunPage(a.units !== undefined);
    for (const u of a.units ?? []) page.addUnit(u);
    for (const s of a.scores) page.addScore(s);
    return page.text(a, aggregatesOf(a), title);
  }
  const data = b === undefined
    ? matrixData(a, targets!, title)
    : twoRunData(a, b, title);
  return { head: JSON.stringify(data), rows: [], tail: "" };
}

/**
 * When a run's case passes over its epochs: its config's `epochs.require`,
 * `all` when it sets none, as `diff` reads a record; without a config (a
 * Scores file) its sidecar's, else `undefined`, which `diff` judges by
 * majority too.
 */
function requireOf(run: ReportRun): CaseRequirement | undefined {
  if (run.config === undefined) return run.require;
  const epochs = run.config.epochs;
  const require = typeof epochs === "object" && epochs !== null
    ? (epochs as { require?: unknown }).require
    : undefined;
  return require === "majority" || require === "any" ? require : "all";
}

/** What the page shows for two runs compared (A the baseline). */
function twoRunData(a: ReportRun, b: ReportRun, title: string): PageData {
  const aggA = aggregatesOf(a);
  const aggB = aggregatesOf(b);
  const metrics = [
    ...new Set([
      ...aggA.map((x) => x.metric),
      ...aggB.map((x) => x.metric),
      ...a.scores.map((s) => s.metric),
      ...b.scores.map((s) => s.metric),
    ]),
  ].sort();
  const evaluators = new Interned();
  const unitsA = keyedUnits(a, metrics, evaluators);
  const unitsB = keyedUnits(b, metrics, evaluators);
  const byIdB = new Map(unitsB.map((k) => [pairKey(k), k]));
  const byIdA = new Map(unitsA.map((k) => [pairKey(k), k]));
  const change = changes(a, b);
  const rows: PageRow[] = [];
  for (const k of unitsA) {
    const other = byIdB.get(pairKey(k));
    const r = row(other ?? k, k.unit);
    r.b = other?.unit ?? null;
    r.ch = change.get(r.ex ?? r.id) ?? 0;
    rows.push(r);
  }
  for (const k of unitsB) {
    if (byIdA.has(pairKey(k))) continue;
    const r = row(k, null);
    r.b = k.unit;
    r.ch = change.get(r.ex ?? r.id) ?? 0;
    rows.push(r);
  }
  const sorted = changedFirst(rows);
  return {
    title,
    metrics,
    runs: [pageRun(a, "A", aggA), pageRun(b, "B", aggB)],
    // Two matrix runs compare target by target, and a case passes over its
    // epochs as its run's config requires (B's, then A's), as `diff` does.
    diff: diffScores(a.scores, b.scores, {
      ...valueRangeOption(a.value_ranges, b.value_ranges),
      byTarget: true,
      require: requireOf(b) ?? requireOf(a),
    }).map(({ regressions: _, ...rest }) => rest),
    comparison: null,
    rows: sorted,
    evaluators: evaluators.list,
  };
}

/**
 * What pairs a unit of A with one of B: its id, a run of one epoch's unit
 * (`d#1`, `d#1~v2`) read as epoch 1 (`d#1@1`, `d#1@1~v2`), so that runs of
 * different epochs still line up, as `diff` pairs their examples.
 */
function pairKey(k: Keyed): string {
  if (!k.id.startsWith(k.ex)) return k.id;
  const rest = k.id.slice(k.ex.length);
  return /^@\d+/.test(rest) ? k.id : `${k.ex}@1${rest}`;
}

function row(k: Keyed<unknown>, a: PageUnit | null): PageRow {
  const r: PageRow = { id: k.id, a };
  if (k.ex !== k.id) r.ex = k.ex;
  if (k.ep !== undefined) r.ep = k.ep;
  return r;
}

/** Newly failing cases first, then newly passing, then the rest in order. */
function changedFirst(rows: readonly PageRow[]): PageRow[] {
  const rank = (ch: number | undefined) => ch === -1 ? 0 : ch === 1 ? 1 : 2;
  return rows
    .map((r, i) => [r, i] as const)
    .sort(([p, i], [q, j]) => rank(p.ch) - rank(q.ch) || i - j)
    .map(([r]) => r);
}

/**
 * A matrix run: a summary per target, the comparison of every target with
 * the first, and a row per case with each target's unit.
 */
function matrixData(
  run: ReportRun,
  targets: readonly ReportRun[],
  title: string,
): PageData {
  // splitMatrixRun's order: a Scores file has no config to name them.
  const names = targetOrder(run).filter((t) =>
    run.scores.some((s) => s.target_name === t)
  );
  // The record's own aggregates, computed by the run; else from the Scores.
  const aggregates = targets.map((t, i) =>
    run.aggregates !== undefined
      ? run.aggregates.filter((x) => x.target_name === names[i])
        .map(({ target_name: _, ...x }) => x)
      : aggregatesOf(t)
  );
  const metrics = [
    ...new Set([
      ...aggregates.flatMap((list) => list.map((x) => x.metric)),
      ...run.scores.map((s) => s.metric),
    ]),
  ].sort();
  const evaluators = new Interned();
  const units = targets.map((t) =>
    new Map(keyedUnits(t, metrics, evaluators).map((k) => [k.id, k]))
  );
  // Every case once, in the order the targets first name it.
  const order = new Map<string, Keyed>();
  for (const byId of units) {
    for (const [id, k] of byId) if (!order.has(id)) order.set(id, k);
  }
  const change = targets.slice(1).map((t) => changes(targets[0]!, t));
  const rows = [...order.values()].map((k) => {
    const r = row(k, units[0]!.get(k.id)?.unit ?? null);
    r.rest = units.slice(1).map((byId) => byId.get(k.id)?.unit ?? null);
    const ex = r.ex ?? r.id;
    const flips = change.map((c) => c.get(ex) ?? 0);
    r.ch = flips.includes(-1) ? -1 : flips.includes(1) ? 1 : 0;
    return r;
  });
  return {
    title,
    metrics,
    runs: targets.map((t, i) =>
      pageRun(t, names[i]!, aggregates[i]!, "target")
    ),
    diff: null,
    comparison: matrixComparison(run) ?? null,
    rows: changedFirst(rows),
    evaluators: evaluators.list,
  };
}
