/**
 * A run as Markdown, for a pull request or a CI step summary: the summary
 * table, the gates, the worst failing cases with their reasons.
 *
 * @module
 */

import type { Aggregate } from "../aggregate/mod.ts";
import { checkGates, type Gate, type GateFailure } from "../aggregate/gates.ts";
import type { RunRecord } from "../record/run_record.ts";
import { undecidedGates } from "../record/_undecided_gates.ts";
import {
  refuseChangedRecord,
  type RunRecordSummary,
  visitRunRecord,
} from "../record/record_entries.ts";
import type { Unit } from "../dataset/unit.ts";
import type { Score } from "../score/mod.ts";
import { failsCase, type UnitCase, unitCases } from "./cases.ts";
import { escapeControl } from "../base/terminal.ts";
import {
  formatSpend,
  hasSpend,
  type Spend,
  SpendTally,
} from "../record/spend.ts";
import { classificationHeadline, MATRIX_LABELS } from "./classification.ts";
import {
  COMPARISON_HEADER,
  comparisonRows,
  fixed,
  interval,
  signed,
} from "./comparison.ts";
import { matrixComparison, targetOrder } from "./matrix_runs.ts";
import { toolCallNames } from "./_tool_calls.ts";
import {
  type InvalidCasesText,
  InvalidCaseTally,
  unmeasuredMessage,
} from "./_unmeasured.ts";
import { budgetText, type RunFailure, runFailures } from "./run_failures.ts";
import type {
  RecordedBaseline,
  RecordedBudget,
  RecordedCaseChange,
} from "../record/run_checks.ts";

// What GitHub links in rendered text whatever its escapes, as it would in
// a pull request comment made of the report: a mention (`@name`, `@org/team`,
// which notifies them), an e-mail address, an issue or pull request
// (`#123`, `GH-123`, `owner/repo#123`, which also cross-references it).
// Matched on the escaped text, where "#" is "\#".
const MENTION = /(^|\W)@(?=[A-Za-z0-9])|@(?=[\w-]+(?:\.[\w-]+)+)/g;
const REFERENCE =
  /(^|\W)((?:(?:[A-Za-z0-9.-]|\\_)+\/(?:[A-Za-z0-9.-]|\\_)+)?\\#|GH-)(?=\d)/gi;
// A zero-width space, as a character reference: it shows nothing, and no
// name or number follows the sign any more (Renovate does the same).
const ZWSP = "&#8203;";

/**
 * Escapes text for a Markdown table cell: Markdown and HTML syntax are
 * backslash-escaped (so model output renders as the text it is, never as
 * markup, a link or an image), line breaks become `⏎`, control characters
 * are shown escaped, and the text is cut at `max` characters. GitHub's
 * mentions and references (`@name`, `#123`, `GH-123`, `owner/repo#123`,
 * `a@b.com`) get a
 * zero-width space after their sign, so that a step summary or a comment
 * made of the report notifies no one and references no issue; an example id
 * (`data.jsonl#12`, `d#1@2`) is left as it is.
 *
 * @param text Any text.
 * @param max The most characters to keep.
 * @returns Text for one cell.
 *
 * @example
 * ```ts
 * import { markdownCell } from "./markdown.ts";
 * if (markdownCell("<img src=x> | *hi*\n") !== "\\<img src=x\\> \\| \\*hi\\*⏎") throw new Error(markdownCell("<img src=x> | *hi*\n"));
 * if (markdownCell("cc @octocat, #12") !== "cc @&#8203;octocat, \\#&#8203;12") throw new Error(markdownCell("cc @octocat, #12"));
 * if (markdownCell("see my_org/deno#12") !== "see my\\_org/deno\\#&#8203;12") throw new Error(markdownCell("see my_org/deno#12"));
 * ```
 */
export function markdownCell(text: string, max = 200): string {
  return marked(escapedCell(text, max));
}

/**
 * A name the user wrote (an example id, a file's path) escaped for a cell as
 * {@linkcode markdownCell} escapes text, without the zero-width spaces: an id
 * such as `data.jsonl#GH-12` or `@scope/data.jsonl#1` is copied from the
 * summary as it is written.
 */
function markdownName(text: string, max = 200): string {
  return escapedCell(text, max);
}

/**
 * A message escaped as {@linkcode markdownCell} escapes text, but for the
 * names it quotes as the user wrote them (an example id, the baseline's path),
 * each escaped as {@linkcode markdownName} escapes it: a regression's headline
 * names `datasets/qa.jsonl#2` as its table rows do.
 */
function markdownMessage(
  text: string,
  names: readonly string[] | undefined,
  max: number,
): string {
  if (names === undefined || names.length === 0) return markdownCell(text, max);
  const cut = cutCell(text, max);
  // The longest first, where one name starts another.
  const sorted = [...new Set(names)].filter((n) => n !== "")
    .sort((a, b) => b.length - a.length);
  let out = "";
  let from = 0;
  for (;;) {
    let at = -1;
    let name = "";
    for (const n of sorted) {
      const i = cut.indexOf(n, from);
      if (i >= 0 && (at < 0 || i < at)) [at, name] = [i, n];
    }
    if (at < 0) break;
    out += marked(escapeCell(cut.slice(from, at))) + escapeCell(name);
    from = at + name.length;
  }
  return out + marked(escapeCell(cut.slice(from)));
}

/** Escaped text with GitHub's mentions and references made inert. */
function marked(escaped: string): string {
  return escaped.replace(MENTION, `$1@${ZWSP}`)
    .replace(REFERENCE, `$1$2${ZWSP}`);
}

/** Text escaped for a cell, cut at `max` characters. */
function escapedCell(text: string, max: number): string {
  return escapeCell(cutCell(text, max));
}

/** Text on one line, cut at `max` characters. */
function cutCell(text: string, max: number): string {
  const flat = text.replace(/\r?\n/g, "⏎");
  const chars = [...flat];
  return chars.length > max ? `${chars.slice(0, max - 1).join("")}…` : flat;
}

/** Text escaped for a cell: Markdown and HTML syntax, control characters. */
function escapeCell(text: string): string {
  // ":" too, so that no "https://" in model output becomes a link.
  return escapeControl(text).replace(/[\\`*_{}[\]()<>#+!|~&:]/g, "\\$&");
}

/**
 * Options of {@linkcode markdownReport}.
 *
 * @example Name the record in the line on the HTML report
 * ```ts
 * import { type MarkdownOptions } from "./mod.ts";
 * const options: MarkdownOptions = { recordPath: "run.json", worst: 5 };
 * if (options.worst !== 5) throw new Error();
 * ```
 */
export interface MarkdownOptions {
  /**
   * The record's file, for the line that says how to open the HTML report.
   * @default {undefined (the line says to keep a record with --record)}
   */
  recordPath?: string | undefined;
  /**
   * How the reader starts evalpipe, for the command lines the report quotes
   * (`deno run -A cli.ts` for a clone that is not installed).
   * @default {"evalpipe"}
   */
  command?: string | undefined;
  /**
   * How many failing cases to list.
   * @default {10}
   */
  worst?: number | undefined;
  /**
   * Why the run fails besides its gates (a regression against its
   * baseline, a spent budget; `runFailures`): the headline says each.
   * @default {what the record keeps of them (`runFailures(record)`)}
   */
  failures?: readonly RunFailure[] | undefined;
}

function percent(x: number | null): string {
  return x === null ? "–" : `${(x * 100).toFixed(1)}%`;
}

/** Each classification metric: its headline, a table per label, the confusion matrix. */
function classificationTables(aggregates: readonly Aggregate[]): string[] {
  const lines: string[] = [];
  for (const a of aggregates) {
    const c = a.classification;
    if (c === undefined) continue;
    const label = (l: string) => markdownCell(l, 60);
    lines.push(
      "",
      `### Classification: ${markdownCell(a.metric, 60)}${
        a.target_name !== undefined
          ? ` (target ${markdownCell(a.target_name, 60)})`
          : ""
      }`,
      "",
      markdownCell(classificationHeadline(a.metric, c), 400),
      "",
      "| label | precision | recall | F1 | support |",
      "|---|--:|--:|--:|--:|",
      ...c.per_label.map((l) =>
        `| ${label(l.label)} | ${fixed(l.precision)} | ${fixed(l.recall)} | ${
          fixed(l.f1)
        } | ${l.support} |`
      ),
    );
    if (c.labels.length > MATRIX_LABELS) continue;
    lines.push(
      "",
      "Confusion matrix, rows true, columns predicted:",
      "",
      `| true \\ predicted | ${c.labels.map(label).join(" | ")} | invalid |`,
      `|---|${c.labels.map(() => "--:|").join("")}--:|`,
      ...c.confusion.map((row, i) =>
        `| ${label(c.labels[i]!)} | ${row.join(" | ")} | ${
          c.invalid_by_label[i]
        } |`
      ),
    );
  }
  return lines;
}

function summaryTable(aggregates: readonly Aggregate[]): string[] {
  // A matrix run: a row per target and metric.
  const matrix = aggregates.some((a) => a.target_name !== undefined);
  const lines = [
    `| ${
      matrix ? "target | " : ""
    }metric | mean ± 95% CI | failures as low…high | pass rate | coverage | scored | error | blocked | skipped | non_evaluable | invalid |`,
    `|${matrix ? "---|" : ""}---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|`,
  ];
  for (const a of aggregates) {
    // An interval clamped to the metric's range is no longer symmetric:
    // then its ends, as the run's summary prints them.
    const half = a.ci95 === null || a.mean === null
      ? ""
      : Math.abs(a.ci95[1] - a.mean - (a.mean - a.ci95[0])) < 1e-9
      ? ` ± ${fixed(a.ci95[1] - a.mean)}`
      : ` [${fixed(a.ci95[0])}, ${fixed(a.ci95[1])}]`;
    const bounds = a.errors + a.blocked === 0 || a.mean_bounds === null
      ? "–"
      : `${fixed(a.mean_bounds[0])}…${fixed(a.mean_bounds[1])}`;
    const scored = a.n - a.errors - a.blocked - a.skipped - a.non_evaluable;
    lines.push(
      `| ${matrix ? `${markdownCell(a.target_name ?? "–", 60)} | ` : ""}${
        markdownCell(a.metric, 60)
      } | ${fixed(a.mean)}${half} | ${bounds} | ${percent(a.pass_rate)} | ${
        percent(a.coverage)
      } (${a.aggregatable}/${a.n}) | ${scored} | ${a.errors} | ${a.blocked} | ${a.skipped} | ${a.non_evaluable} | ${a.invalid} |`,
    );
  }
  return lines;
}

function gatesOf(config: Record<string, unknown>): Record<string, Gate> {
  const gates = config.gates;
  return typeof gates === "object" && gates !== null && !Array.isArray(gates)
    ? gates as Record<string, Gate>
    : {};
}

/**
 * The gates' failures, as the run checks them: in a matrix run each target
 * meets the gates on its own, its failures' messages naming it.
 */
function gateFailures(
  record: MarkdownRecord,
): Array<[string | undefined, GateFailure[]]> {
  const gates = gatesOf(record.config);
  const targets = targetOrder(record);
  if (targets.length === 0) {
    return [[undefined, checkGates(gates, record.aggregates)]];
  }
  const failures = checkGates(gates, record.aggregates, { targets });
  return targets.map((t) => [t, failures.filter((f) => f.target_name === t)]);
}

function gatesTable(
  record: MarkdownRecord,
  invalid: InvalidCasesText | undefined,
  undecided: ReadonlySet<string>,
): string[] {
  const gates = gatesOf(record.config);
  const rows: string[] = [];
  const perTarget = gateFailures(record);
  const matrix = perTarget[0]?.[0] !== undefined;
  // As run's stderr words it: invalid cases are a dataset to fix.
  const failed = (f: GateFailure) =>
    `❌ failed: ${markdownCell(unmeasuredMessage(f, invalid), 400)}`;
  for (const [target, failures] of perTarget) {
    const who = matrix ? `${markdownCell(target!, 60)} | ` : "";
    const shown = new Set<unknown>();
    for (const metric of Object.keys(gates).sort()) {
      for (const [key, threshold] of Object.entries(gates[metric] ?? {})) {
        if (key === "allow_unmeasured") continue;
        const failure = failures.find((f) =>
          f.metric === metric && f.gate === key
        );
        shown.add(failure);
        rows.push(
          `| ${who}${markdownCell(metric, 60)} | ${key} | ${threshold} | ${
            undecided.has(metric)
              ? "❌ undecided: the run did not finish"
              : failure === undefined
              ? "✅ held"
              : failed(failure)
          } |`,
        );
      }
    }
    // What fails without a gate of its own: a metric that measured nothing.
    for (const f of failures) {
      if (shown.has(f) || undecided.has(f.metric)) continue;
      rows.push(
        `| ${who}${markdownCell(f.metric, 60)} | ${
          f.gate === "allow_unmeasured" ? "nothing measured" : f.gate
        } | – | ${failed(f)} |`,
      );
    }
  }
  if (rows.length === 0) return ["No gates in the config."];
  return [
    `| ${matrix ? "target | " : ""}metric | gate | threshold | outcome |`,
    `|${matrix ? "---|" : ""}---|---|--:|---|`,
    ...rows,
  ];
}

/** A matrix run: per metric each target's mean, each against the first. */
function comparisonTable(record: MarkdownRecord): string[] {
  const lines = matrixComparison(record);
  if (lines === undefined) return [];
  const first = lines[0]?.targets[0]?.target ?? "";
  return [
    "",
    `### Targets compared, each against ${markdownCell(first, 60)}`,
    "",
    "Paired by example: Δ is the target's mean − the first's over the examples both measured, with its 95% interval; pass→fail and fail→pass count the verdicts that flipped.",
    "",
    `| ${COMPARISON_HEADER.join(" | ")} |`,
    "|---|---|--:|--:|--:|--:|--:|",
    ...comparisonRows(lines, (t) => markdownCell(t, 60)).map((r) =>
      `| ${r.join(" | ")} |`
    ),
  ];
}

function worstTable(
  shown: readonly ShownCase[],
  failing: number,
): string[] {
  if (failing === 0) return ["No failing cases."];
  const lines = [
    `${shown.length} of ${failing} failing ${
      failing === 1 ? "case" : "cases"
    }, errors and blocked first, in turn, then the lowest values:`,
    "",
    "| case | metric | status | value | reason | output |",
    "|---|---|---|--:|---|---|",
  ];
  for (const c of shown) {
    const names = toolCallNames(c.unit?.tool_calls);
    const called = names.length > 0 ? ` (called ${names.join(", ")})` : "";
    const output = c.unit === undefined
      ? "–"
      : c.unit.output === null
      ? markdownCell(`(none)${called}`, 200)
      : `${markdownCell(c.unit.output, 80)}${markdownCell(called, 120)}`;
    for (const s of c.scores.filter(failsCase)) {
      lines.push(
        `| ${markdownName(c.unit_id, 80)} | ${
          markdownCell(s.metric, 40)
        } | ${s.status} | ${fixed(s.value)} | ${
          s.reason !== undefined ? markdownCell(s.reason) : "–"
        } | ${output} |`,
      );
    }
  }
  return lines;
}

/**
 * Writes a run as Markdown: a headline (how many units, whether every gate
 * held, and any other reason the run fails: a regression against its
 * baseline, a spent budget), what it spent of its budget, the summary table
 * per metric with its counts by status (for a matrix run, per target and
 * metric, then the comparison of each target with the first as the run's
 * summary prints it), the gates (per target) and their outcome, the run
 * against its baseline when it had one (each metric's paired difference,
 * the cases whose verdict changed), the worst failing cases (errors and
 * blocked cases first, in turn, then the lowest values) with their reasons and outputs, and a line on how
 * to open the HTML report. Text from cases is escaped: it renders as text,
 * never as Markdown or HTML.
 *
 * @param record The run.
 * @param options The record's path and how many cases to list.
 * @returns The Markdown, ending with a newline.
 *
 * @example
 * ```ts
 * import { markdownReport } from "./mod.ts";
 * import { parseRunRecord } from "../record/mod.ts";
 * const record = parseRunRecord(JSON.stringify({
 *   evalpipe_run_record: 1, run_id: "r1", started_at: "2026-12-01T08:00:00.000Z", config_path: "suite.yaml",
 *   config: { gates: { m: { min_mean: 0.5 } } },
 *   fingerprints: { config: "sha256:aa", dataset: null, target: "sha256:cc", scorers: {} },
 *   scores: [{ metric: "m", status: "scored", validity: "valid", value: 0, passed: false, reason: "wrong", evaluator_version: "m@1", example_id: "d#1", unit_id: "d#1" }],
 *   aggregates: [], finished_at: "2026-12-01T08:00:01.000Z", complete: true,
 * }), "run.json");
 * const text = markdownReport(record, { recordPath: "run.json" });
 * if (!text.includes("| m | min_mean | 0.5 | ❌ failed") || !text.includes("evalpipe report run.json --html report.html")) throw new Error(text);
 * ```
 */
export function markdownReport(
  record: RunRecord,
  options: MarkdownOptions = {},
): string {
  const tally = new MarkdownTally();
  for (const unit of record.units) tally.addUnit(unit);
  for (const score of record.scores) tally.addScore(score);
  const shown = tally.worst(options.worst ?? 10);
  const cases = unitCases(
    record.scores.filter((s) =>
      shown.has(s.unit_id ?? s.example_id ?? "(no id)")
    ),
    record.units.filter((u) => shown.has(u.unit_id)),
  );
  return markdownOf(tally.run(record, cases), options);
}

/**
 * The Markdown report of the RunRecord file at `path`, as
 * {@linkcode markdownReport} writes it from the record, read a unit at a
 * time: twice, once for the counts and once for the worst cases' Scores and
 * outputs, never holding every unit and Score.
 *
 * @param path The RunRecord file.
 * @param options The record's path as the report names it, and how many cases to list.
 * @returns The Markdown, and the record besides its units and Scores.
 *
 * @example
 * ```ts
 * import { markdownReportFile } from "./mod.ts";
 * import { RunRecordWriter } from "../record/mod.ts";
 * import { scored } from "../score/mod.ts";
 * const dir = await Deno.makeTempDir();
 * const file = await Deno.open(`${dir}/run.json`, { write: true, create: true });
 * const writer = new RunRecordWriter(file, {
 *   run_id: "r1", started_at: "2026-12-01T08:00:00.000Z", config_path: "suite.yaml", config: {},
 *   fingerprints: { config: "sha256:aa", dataset: null, target: "sha256:cc", scorers: {} },
 * });
 * const unit = { example_id: "d#1", unit_id: "d#1", epoch: 1, input: "q", output: "no" };
 * await writer.addUnit(unit, [scored("m", 0, { example_id: "d#1", unit_id: "d#1", passed: false })]);
 * await writer.finish([], true);
 * file.close();
 * const { text } = await markdownReportFile(`${dir}/run.json`);
 * await Deno.remove(dir, { recursive: true });
 * if (!text.includes("1 of 1 failing case")) throw new Error(text);
 * ```
 */
export async function markdownReportFile(
  path: string,
  options: MarkdownOptions = {},
): Promise<{ text: string; record: RunRecordSummary }> {
  const tally = new MarkdownTally();
  const record = await visitRunRecord(path, {
    entry(scores, unit) {
      if (unit !== undefined) tally.addUnit(unit);
      for (const score of scores) tally.addScore(score);
    },
  });
  const shown = tally.worst(options.worst ?? 10);
  // The worst cases' Scores and units, in the record's order, as
  // markdownReport takes them from the whole record.
  const scores: Score[] = [];
  const units: Unit[] = [];
  if (shown.size > 0) {
    const found = new Set<string>();
    const again = await visitRunRecord(path, {
      entry(own, unit) {
        if (unit !== undefined && shown.has(unit.unit_id)) units.push(unit);
        for (const s of own) {
          const id = s.unit_id ?? s.example_id ?? "(no id)";
          if (shown.has(id)) {
            scores.push(s);
            found.add(id);
          }
        }
      },
    });
    // A record a run is still writing has only grown; one written over
    // between the reads (cases gone, another run's) would mix two runs.
    refuseChangedRecord(
      path,
      record.run_id,
      again,
      shown.size - found.size,
      "Cannot write the Markdown report of",
      "write the report again",
    );
  }
  const run = tally.run(record, unitCases(scores, units));
  return { text: markdownOf(run, options), record };
}

/** What the report reads of the record besides its units and Scores. */
type MarkdownRecord =
  & Pick<
    RunRecordSummary,
    | "config_path"
    | "run_id"
    | "complete"
    | "config"
    | "aggregates"
    | "budget"
    | "baseline"
    | "value_ranges"
    | "shard"
    | "subset"
    | "selection"
  >
  & {
    /** A matrix run's Scores (those naming a target), for its comparison. */
    scores: readonly Score[];
  };

/** A case the report lists: its unit id, its record, its Scores. */
type ShownCase = Pick<UnitCase, "unit_id" | "unit" | "scores">;

/** Everything the Markdown shows, gathered a unit at a time. */
interface MarkdownRun {
  record: MarkdownRecord;
  /** Units with Scores. */
  cases: number;
  /** Of them, those that failed or erred. */
  failing: number;
  /** The worst failing cases, worst first. */
  shown: ShownCase[];
  /** The run's spend on model calls. */
  spend: Spend;
  /** The run's invalid cases, if any. */
  invalid: InvalidCasesText | undefined;
}

/** What a case's Scores say, kept compact: one per unit. */
interface CaseTally {
  /** The order it first appears in. */
  index: number;
  /** A Score is an error or blocked. */
  error: boolean;
  /** A Score is blocked: the target failed, the case is invalid, the budget ran out. */
  blocked: boolean;
  /** A Score fails it. */
  fails: boolean;
  /** The lowest value of its Scores, at most 1. */
  min: number;
}

/**
 * The counts the Markdown report needs, a Score at a time: per unit a few
 * numbers (not its Scores), the spend, and a matrix run's Scores.
 */
class MarkdownTally {
  #cases = new Map<string, CaseTally>();
  #spend = new SpendTally();
  #matrix: Score[] = [];
  #invalid = new InvalidCaseTally();
  /** What {@linkcode worst} chose, worst first. */
  #shown = new Set<string>();

  addUnit(unit: Unit): void {
    this.#spend.addUnit(unit);
  }

  addScore(s: Score): void {
    this.#spend.addScore(s);
    if (s.target_name !== undefined) this.#matrix.push(s);
    const id = s.unit_id ?? s.example_id ?? "(no id)";
    let c = this.#cases.get(id);
    if (c === undefined) {
      c = {
        index: this.#cases.size,
        error: false,
        blocked: false,
        fails: false,
        min: 1,
      };
      this.#cases.set(id, c);
    }
    if (s.status === "error" || s.status === "blocked") {
      c.error = true;
      if (s.status === "blocked") c.blocked = true;
      this.#invalid.add(s);
    }
    if (failsCase(s)) c.fails = true;
    if (s.value !== null && s.value < c.min) c.min = s.value;
  }

  /**
   * The unit ids of the worst failing cases, worst first: errors and blocked
   * cases first, a blocked one and an error in turn (a blocked case has no
   * value to rank by, and a scorer that erred on every case pushed every
   * failed call of the target out of the list), each kind by its lowest
   * value; then the lowest values.
   */
  worst(count: number): Set<string> {
    const byValue = (
      [, a]: [string, CaseTally],
      [, b]: [string, CaseTally],
    ) => a.min - b.min || a.index - b.index;
    const failing = this.#failing();
    const blocked = failing.filter(([, c]) => c.blocked).sort(byValue);
    const errors = failing.filter(([, c]) => c.error && !c.blocked)
      .sort(byValue);
    const failed = failing.filter(([, c]) => !c.error).sort(byValue);
    const first: Array<[string, CaseTally]> = [];
    for (let i = 0; i < Math.max(blocked.length, errors.length); i++) {
      if (i < blocked.length) first.push(blocked[i]!);
      if (i < errors.length) first.push(errors[i]!);
    }
    this.#shown = new Set(
      [...first, ...failed].slice(0, count).map(([id]) => id),
    );
    return this.#shown;
  }

  #failing(): Array<[string, CaseTally]> {
    return [...this.#cases].filter(([, c]) => c.error || c.fails);
  }

  /** The run, with the worst cases (their Scores and units) given. */
  run(
    record: Omit<MarkdownRecord, "scores">,
    cases: readonly UnitCase[],
  ): MarkdownRun {
    const rank = new Map([...this.#shown].map((id, i) => [id, i]));
    return {
      record: { ...record, scores: this.#matrix },
      cases: this.#cases.size,
      failing: this.#failing().length,
      shown: [...cases].sort((a, b) =>
        (rank.get(a.unit_id) ?? rank.size) - (rank.get(b.unit_id) ?? rank.size)
      ),
      spend: this.#spend.result(),
      invalid: this.#invalid.result(),
    };
  }
}

/** The Markdown of a run gathered by {@linkcode MarkdownTally}. */
function markdownOf(run: MarkdownRun, options: MarkdownOptions): string {
  const { record, failing } = run;
  // A run that did not finish (a partial merge, one cut short) decides no
  // gate of the config's, as merge and the evalglass export say.
  const undecided = undecidedGates(record);
  const failedGates = gateFailures(record).flatMap(([, f]) => f).filter((f) =>
    undecided.length === 0 || f.ungated === true
  );
  const failures = options.failures ?? runFailures(record);
  const worst = options.worst ?? 10;
  const gated = Object.keys(gatesOf(record.config)).length > 0;
  // A metric that measured nothing though no gate names it fails the run,
  // but no gate of the config's.
  const gateFailed = failedGates.filter((f) => !f.ungated).length;
  const unmeasured = [
    ...new Set(failedGates.filter((f) => f.ungated).map((f) => f.metric)),
  ];
  // A shard checks nothing of the run's (its gates would be judged on part
  // of the examples): the merge of its shards does.
  const shard = record.shard;
  // A subset that chose none of the examples evaluated nothing: that is
  // the one failure, as stderr and its annotation say, not its gates (which
  // fail on nothing) nor its baseline (which cannot compare with nothing).
  const selection = record.selection;
  const nothingEvaluated = shard === undefined &&
    record.subset !== undefined && selection !== undefined &&
    selection.ran === 0 && selection.examples > 0;
  const self = options.command ?? "evalpipe";
  const verdict = shard !== undefined
    ? `shard ${shard.index}/${shard.count}: gates, budget and baseline are checked on the merged run (\`${self} merge\`)`
    : nothingEvaluated
    ? `❌ nothing evaluated: the subset chose none of the ${selection.examples} ${
      selection.examples === 1 ? "example" : "examples"
    }`
    : [
      ...(gateFailed > 0
        ? [`❌ ${gateFailed} ${gateFailed === 1 ? "gate" : "gates"} failed`]
        : []),
      ...(undecided.length > 0
        ? [
          `❌ gates undecided, the run did not finish: ${
            markdownCell(undecided.join(", "), 400)
          }`,
        ]
        : []),
      ...(unmeasured.length > 0
        ? [`❌ nothing measured: ${markdownCell(unmeasured.join(", "), 400)}`]
        : []),
      ...failures.map((f) => `❌ ${markdownMessage(f.message, f.names, 400)}`),
      ...(failedGates.length > 0 || undecided.length > 0
        ? []
        : gated
        ? ["✅ every gate held"]
        : failures.length > 0
        ? []
        : ["✅ no gate failed (the config sets none)"]),
    ].join(" · ");
  const open = options.recordPath !== undefined
    ? `Open every case with its answer: \`${self} report ${
      shellWord(options.recordPath)
    } --html report.html\`, then open \`report.html\` in a browser.`
    : `Keep the run's record (\`--record run.json\`) to open every case with its answer: \`${self} report run.json --html report.html\`.`;
  return [
    `## evalpipe: ${markdownName(record.config_path, 120)}`,
    "",
    `${verdict} · ${run.cases} ${
      run.cases === 1 ? "unit" : "units"
    }, ${failing} failing · run \`${record.run_id.replace(/`/g, "")}\`${
      record.complete ? "" : " · **incomplete**"
    }`,
    "",
    ...costLine(run.spend),
    ...budgetLine(record.budget),
    "### Summary",
    "",
    ...summaryTable(record.aggregates),
    ...comparisonTable(record),
    ...classificationTables(record.aggregates),
    "",
    "### Gates",
    "",
    ...(shard === undefined ? [] : [
      `On this shard's examples alone, for a look: \`${self} merge\` checks them on the whole run.`,
      "",
    ]),
    // Nothing evaluated: no gate held or failed, and nothing compares with
    // the baseline; the headline says why.
    ...(nothingEvaluated
      ? ["Not checked: nothing was evaluated."]
      : gatesTable(record, run.invalid, new Set(undecided))),
    ...(nothingEvaluated ? [] : baselineSection(record.baseline, worst)),
    "",
    "### Worst failing cases",
    "",
    ...worstTable(run.shown, failing),
    "",
    open,
    "",
  ].join("\n");
}

/** The run's spend on model calls, with a blank line, when it made any. */
function costLine(spend: Spend): string[] {
  return hasSpend(spend)
    ? [`**${formatSpend(spend).replace(/^cost/, "Cost")}**`, ""]
    : [];
}

/** What the run spent of its budget, with a blank line, when it had one. */
function budgetLine(budget: RecordedBudget | undefined): string[] {
  if (budget === undefined) return [];
  return [
    `**Budget:** ${budget.refused > 0 ? "❌ reached: " : ""}${
      markdownCell(budgetText(budget), 400)
    }`,
    "",
  ];
}

/** Passes of trials: `1/1`. */
function tally([passes, trials]: readonly [number, number]): string {
  return `${passes}/${trials}`;
}

/**
 * The run against its baseline (`run --baseline`), as its record keeps it:
 * the verdict, each metric's paired difference, the cases whose verdict
 * changed (`worst` at most of each kind), the cases new and removed.
 */
function baselineSection(
  b: RecordedBaseline | undefined,
  worst: number,
): string[] {
  if (b === undefined) return [];
  const why = [
    ...(b.newly_failing.length > 0
      ? [`${b.newly_failing.length} newly failing`]
      : []),
    ...b.worse.map((m) => `${markdownCell(m, 60)} significantly worse`),
    ...b.unfit.map((u) => `cannot compare: ${markdownCell(u)}`),
  ];
  const lines = [
    "",
    "### Against the baseline",
    "",
    `Compared with baseline ${markdownName(JSON.stringify(b.path))}: ${
      b.failed ? `❌ ${why.join(", ") || "regressed"}` : "✅ no regression"
    }`,
  ];
  if (b.metrics.length > 0) {
    lines.push(
      "",
      "| metric | pairs | baseline | now | Δ now − baseline (95% CI) | |",
      "|---|--:|--:|--:|--:|---|",
      ...b.metrics.map((m) => {
        // A matrix's lines are per target, named as `worse` names them.
        const name = m.target_name === undefined
          ? m.metric
          : `${m.target_name}: ${m.metric}`;
        return `| ${markdownCell(name, 60)} | ${m.pairs} | ${
          fixed(m.mean_a)
        } | ${fixed(m.mean_b)} | ${signed(m.delta)}${
          interval(m.ci95, signed)
        } | ${b.worse.includes(name) ? "❌ significantly worse" : ""} |`;
      }),
    );
  }
  const kinds: Array<[string, string, readonly RecordedCaseChange[]]> = [
    ["❌ newly failing", "newly failing", b.newly_failing],
    ["✅ fixed", "fixed", b.fixed],
    ["flaky, epochs disagree (not a regression)", "flaky", b.flaky],
  ];
  const rows: string[] = [];
  const more: string[] = [];
  for (const [kind, plain, changes] of kinds) {
    for (const c of changes.slice(0, worst)) {
      rows.push(
        `| ${markdownName(c.case, 80)} | ${
          markdownCell(c.metric, 40)
        } | ${kind} | ${tally(c.baseline)} | ${tally(c.now)} |`,
      );
    }
    if (changes.length > worst) {
      more.push(`${changes.length - worst} more ${plain}`);
    }
  }
  if (rows.length > 0) {
    lines.push(
      "",
      "| case | metric | change | passed in baseline | passed now |",
      "|---|---|---|--:|--:|",
      ...rows,
    );
  }
  const ids = (title: string, list: readonly string[]) =>
    list.length === 0 ? [] : [
      `${title} (${list.length}): ${
        list.slice(0, worst).map((id) => markdownName(id, 80)).join(", ")
      }${list.length > worst ? ", …" : ""}`,
    ];
  const rest = [
    ...more,
    ...ids("new cases", b.new_cases),
    ...ids("removed cases", b.removed_cases),
  ];
  if (rows.length === 0 && b.new_cases.length + b.removed_cases.length === 0) {
    rest.push("No case changed.");
  }
  if (rest.length > 0) lines.push("", rest.join(" · "));
  return lines;
}

/** A path as one shell word, quoted when it needs to be. */
function shellWord(path: string): string {
  const plain = /^[A-Za-z0-9_./@%+=:,-]+$/.test(path);
  return (plain ? path : `'${path.replace(/'/g, "'\\''")}'`).replace(/`/g, "");
}
