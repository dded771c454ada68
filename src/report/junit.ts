/**
 * A run as JUnit XML, for CI systems that show test results: a test suite
 * per run, a test case per unit.
 *
 * @module
 */

import { readRunRecord, type RunRecord } from "../record/run_record.ts";
import {
  refuseChangedRecord,
  type RunRecordSummary,
  visitRunRecord,
} from "../record/record_entries.ts";
import type { Unit } from "../dataset/unit.ts";
import { aggregatable, type Score } from "../score/mod.ts";
import { type UnitCase, unitCases } from "./cases.ts";
import { hasSpend, isPriced, type Spend, SpendTally } from "../record/spend.ts";
import { targetOrder } from "./matrix_runs.ts";
import { toolCallLines } from "./_tool_calls.ts";
import { escapeControl } from "../base/terminal.ts";

// What XML 1.0 cannot carry at all (C0 controls but tab, newline and
// carriage return; U+FFFE, U+FFFF; lone surrogates): shown as `\u{…}` text.
const NOT_XML = new RegExp(
  "[\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\ufffe\\uffff]" +
    "|[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]",
  "g",
);

function visible(c: string): string {
  return `\\u{${c.charCodeAt(0).toString(16)}}`;
}

/**
 * Escapes text for an XML element's content. Characters XML 1.0 cannot
 * carry (C0 controls but tab, line feed and carriage return; U+FFFE and
 * U+FFFF; lone surrogates) are replaced by their code as text, `\u{1b}`, so
 * that a reader sees what was there.
 *
 * @param text Any text.
 * @returns Text safe inside an element.
 *
 * @example
 * ```ts
 * import { xmlText } from "./junit.ts";
 * if (xmlText("a < b && \x1b[2J") !== "a &lt; b &amp;&amp; \\u{1b}[2J") throw new Error(xmlText("a < b && \x1b[2J"));
 * ```
 */
export function xmlText(text: string): string {
  return text.replace(NOT_XML, visible)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    // A carriage return would be read back as a line feed.
    .replace(/\r/g, "&#13;");
}

/**
 * Escapes text for a double-quoted XML attribute value; tabs and line breaks
 * are character references, so a reader gets them back instead of spaces.
 *
 * @param text Any text.
 * @returns Text safe between double quotes.
 *
 * @example
 * ```ts
 * import { xmlAttr } from "./junit.ts";
 * if (xmlAttr('say "hi"\n') !== "say &quot;hi&quot;&#10;") throw new Error();
 * ```
 */
export function xmlAttr(text: string): string {
  return xmlText(text)
    .replace(/"/g, "&quot;")
    .replace(/\n/g, "&#10;")
    .replace(/\t/g, "&#9;");
}

/** A `<failure>`'s type: a Score measured and valid did not pass. */
const FAILED = "score.failed";

/** Seconds with millisecond precision, as JUnit's `time` attributes hold them. */
function seconds(ms: number): string {
  return (Math.max(0, ms) / 1000).toFixed(3);
}

/** One Score as a line of a failure's or error's text. */
function scoreText(s: Score): string {
  const value = s.value === null ? "" : ` value ${s.value}`;
  const reason = s.reason !== undefined ? `: ${s.reason}` : "";
  const codes = s.diagnostics.map((d) => d.code);
  return `${s.metric}: ${s.status}${value}${reason}${
    codes.length > 0 ? ` [${codes.join(", ")}]` : ""
  }`;
}

/** The name of a unit's test case: its example id, and its epoch when there are several. */
function caseName(c: UnitCase, epochs: boolean): string {
  return epochs && c.epoch !== undefined
    ? `${c.example_id} (epoch ${c.epoch})`
    : c.example_id;
}

function testcase(c: UnitCase, classname: string, epochs: boolean): string {
  const latency = c.unit?.target?.latency_ms;
  // Names are what a CI page lists: a bidi override or an invisible
  // character in an id is shown as its code, as the terminal and the
  // Markdown show it, so that no name can pass for another.
  let xml = `    <testcase name="${
    xmlAttr(escapeControl(caseName(c, epochs)))
  }" classname="${xmlAttr(escapeControl(classname))}" time="${
    seconds(typeof latency === "number" ? latency : 0)
  }">\n`;
  const errors = c.scores.filter((s) =>
    s.status === "error" || s.status === "blocked"
  );
  const failures = c.scores.filter((s) =>
    aggregatable(s) && s.passed === false
  );
  // One <error> or one <failure> per case, as the case is counted, naming
  // every Score that fails it. GitLab's reader (lib/gitlab/ci/parsers/test/
  // junit.rb) takes a <failure> before an <error>: a case with both would
  // show as a failed assertion, its error hidden. Its type is a code, never
  // a metric's name: GitLab reads `type` as Rails' Hash.from_xml does, which
  // refuses the whole file for `yaml` or `symbol` and turns the text into a
  // value for `date` or `integer`.
  const failing = [...errors, ...failures];
  if (failing.length > 0) {
    const kind = errors.length > 0 ? "error" : "failure";
    const type = errors.length > 0
      ? errors[0]!.diagnostics.find((d) => d.severity === "error")?.code ??
        errors[0]!.status
      : FAILED;
    const message = failing.map((s) =>
      `${s.metric}: ${
        s.reason ?? (s.status === "scored" ? `value ${s.value}` : s.status)
      }`
    ).join("; ");
    xml += `      <${kind} message="${xmlAttr(message)}" type="${
      xmlAttr(type)
    }">${xmlText(failing.map(scoreText).join("\n"))}</${kind}>\n`;
  }
  if (c.outcome === "skipped") {
    // The reason as the element's text, which every reader takes: GitLab
    // reads only the text, Jenkins' JUnit plugin the text when there is no
    // `message`, and the Jenkins schema allows <skipped> no attribute.
    xml += `      <skipped>${
      xmlText(
        c.scores.map((s) =>
          `${s.metric}: ${
            s.status === "scored" ? `scored but ${s.validity}` : s.status
          }${s.reason !== undefined ? ` (${s.reason})` : ""}`
        ).join("; "),
      )
    }</skipped>\n`;
  }
  const output = c.unit?.output;
  const calls = toolCallLines(c.unit?.tool_calls);
  if (typeof output === "string") {
    // The tool calls after the output, as `view` shows them.
    const text = calls.length > 0
      ? `${output}\n\ntool calls:\n${calls.join("\n")}`
      : output;
    xml += `      <system-out>${xmlText(text)}</system-out>\n`;
  } else if (c.unit?.target?.error !== undefined) {
    xml += `      <system-err>${
      xmlText(`target error: ${c.unit.target.error}`)
    }</system-err>\n`;
  } else if (c.unit?.invalid !== undefined) {
    xml += `      <system-err>${
      xmlText(`invalid case: ${c.unit.invalid}`)
    }</system-err>\n`;
  }
  return `${xml}    </testcase>\n`;
}

/** What a test suite's start says of its run. */
type SuiteRun = Pick<
  RunRecordSummary,
  "started_at" | "run_id" | "complete" | "fingerprints" | "aggregates"
>;

/** How many cases: tests, failures, errors, skipped. */
function caseCounts(cases: readonly UnitCase[]): number[] {
  const count = (o: UnitCase["outcome"]) =>
    cases.filter((c) => c.outcome === o).length;
  return [cases.length, count("failed"), count("error"), count("skipped")];
}

/** Whether a case's name shows its epoch: some case is of a later one. */
function showsEpochs(cases: readonly UnitCase[]): boolean {
  return cases.some((c) => (c.epoch ?? 1) > 1);
}

/** A `<testsuite>`'s start and properties, before its cases. */
function suiteHead(
  record: SuiteRun,
  name: string,
  counts: readonly number[],
  target: string | undefined,
  time: string,
  spend: Spend,
): string {
  let xml =
    `  <testsuite name="${xmlAttr(name)}" ${
      countText(counts, time)
    } timestamp="${xmlAttr(record.started_at)}" id="${
      xmlAttr(
        target === undefined
          ? record.run_id
          : `${record.run_id} (target ${target})`,
      )
    }">\n` +
    `    <properties>\n` +
    `      <property name="run_id" value="${xmlAttr(record.run_id)}"/>\n` +
    (target === undefined
      ? ""
      : `      <property name="target" value="${xmlAttr(target)}"/>\n`) +
    `      <property name="complete" value="${record.complete}"/>\n`;
  for (const [scorer, version] of Object.entries(record.fingerprints.scorers)) {
    xml += `      <property name="${xmlAttr(`scorer.${scorer}`)}" value="${
      xmlAttr(version)
    }"/>\n`;
  }
  // What the model calls cost, when the run made any and some had a price
  // (with none priced, 0 would read as free): totals, and each side.
  if (hasSpend(spend) && isPriced(spend)) {
    const unpriced = (spend.target.unpriced_calls ?? 0) +
      (spend.judge.unpriced_calls ?? 0);
    xml += `      <property name="cost_usd" value="${spend.cost_usd}"/>\n` +
      `      <property name="cost_usd.target" value="${spend.target.cost_usd}"/>\n` +
      `      <property name="cost_usd.judge" value="${spend.judge.cost_usd}"/>\n` +
      (unpriced > 0
        ? `      <property name="cost_usd.unpriced_calls" value="${unpriced}"/>\n`
        : "");
  }
  // A classification's figures belong to the run, not to one unit.
  for (const a of record.aggregates) {
    const c = a.classification;
    if (c === undefined || a.target_name !== target) continue;
    const figures = {
      accuracy: c.accuracy,
      macro_f1: c.macro_f1,
      micro_f1: c.micro_f1,
      weighted_f1: c.weighted_f1,
      invalid_predictions: c.invalid_predictions,
    };
    for (const [key, value] of Object.entries(figures)) {
      xml += `      <property name="${xmlAttr(`${a.metric}.${key}`)}" value="${
        value ?? ""
      }"/>\n`;
    }
  }
  return `${xml}    </properties>\n`;
}

const SUITE_END = "  </testsuite>\n";

/** One `<testsuite>`: its cases, counts, properties. */
function testsuite(
  record: RunRecord,
  name: string,
  scores: readonly Score[],
  units: RunRecord["units"],
  target: string | undefined,
  time: string,
): { xml: string; counts: number[] } {
  const cases = unitCases(scores, units);
  const epochs = showsEpochs(cases);
  const counts = caseCounts(cases);
  const tally = new SpendTally();
  for (const unit of units) tally.addUnit(unit);
  for (const score of scores) tally.addScore(score);
  let xml = suiteHead(record, name, counts, target, time, tally.result());
  for (const c of cases) xml += testcase(c, name, epochs);
  return { xml: xml + SUITE_END, counts };
}

function countText(counts: readonly number[], time: string): string {
  const [tests, failures, errors, skipped] = counts;
  return `tests="${tests}" failures="${failures}" errors="${errors}" skipped="${skipped}" time="${time}"`;
}

/** The run's time in seconds, as the `time` attributes hold it. */
function runTime(record: Pick<RunRecordSummary, "started_at" | "finished_at">) {
  const started = Date.parse(record.started_at);
  const finished = record.finished_at === null
    ? NaN
    : Date.parse(record.finished_at);
  return seconds(
    Number.isFinite(started) && Number.isFinite(finished)
      ? finished - started
      : 0,
  );
}

/**
 * The document's start, before its test suites. `<testsuites>` carries no
 * `skipped`: the Jenkins JUnit schema (which Jenkins' xUnit plugin checks
 * its input against) allows it on a `<testsuite>` only.
 */
function documentHead(total: readonly number[], time: string): string {
  const [tests, failures, errors] = total;
  return `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<testsuites name="evalpipe" tests="${tests}" failures="${failures}" errors="${errors}" time="${time}">\n`;
}

const DOCUMENT_END = "</testsuites>\n";

/**
 * Writes a run as JUnit XML: one `<testsuite>` per run (named by its config
 * file) in a `<testsuites>`, one `<testcase>` per unit named by its example
 * id (and its epoch when the run has several). A matrix run has a
 * `<testsuite>` per target, named `<config> (target <name>)` (its cases'
 * classname too), so CI shows which target failed. A unit that fails gets
 * one element, as it is counted: an `<error>` when a Score is an error or
 * blocked (its type the first one's diagnostic code), else a `<failure>`
 * when a Score that was measured and valid did not pass (its type
 * `score.failed`), either naming every Score that fails the unit with its
 * metric and reason; a `<skipped>` when nothing was measured, and the
 * target's output in `<system-out>`. A test case is counted once: as an
 * error if it has one, else as a failure, so `tests` = passed + `failures`
 * + `errors` + `skipped`.
 *
 * @param record The run.
 * @returns The XML document.
 *
 * @example
 * ```ts
 * import { junitReport } from "./mod.ts";
 * import { parseRunRecord } from "../record/mod.ts";
 * const record = parseRunRecord(JSON.stringify({
 *   evalpipe_run_record: 1, run_id: "r1", started_at: "2026-12-01T08:00:00.000Z", config_path: "suite.yaml", config: {},
 *   fingerprints: { config: "sha256:aa", dataset: null, target: "sha256:cc", scorers: {} },
 *   scores: [{ metric: "m", status: "scored", validity: "valid", value: 0, passed: false, reason: "wrong", evaluator_version: "m@1", example_id: "d#1", unit_id: "d#1" }],
 *   aggregates: [], finished_at: "2026-12-01T08:00:01.000Z", complete: true,
 * }), "run.json");
 * const xml = junitReport(record);
 * if (!xml.includes('<testsuite name="suite.yaml" tests="1" failures="1" errors="0" skipped="0"')) throw new Error(xml);
 * ```
 */
export function junitReport(record: RunRecord): string {
  const time = runTime(record);
  const targets = targetOrder(record);
  const suites = targets.length === 0
    ? [
      testsuite(
        record,
        record.config_path,
        record.scores,
        record.units,
        undefined,
        time,
      ),
    ]
    : targets.map((t) =>
      testsuite(
        record,
        suiteName(record, t),
        record.scores.filter((s) => s.target_name === t),
        record.units.filter((u) => u.target_name === t),
        t,
        time,
      )
    );
  const total = [0, 1, 2, 3].map((i) =>
    suites.reduce((sum, s) => sum + s.counts[i]!, 0)
  );
  return documentHead(total, time) + suites.map((s) => s.xml).join("") +
    DOCUMENT_END;
}

/** A matrix target's test suite name (and its cases' classname). */
function suiteName(record: Pick<RunRecord, "config_path">, target: string) {
  return `${record.config_path} (target ${target})`;
}

/** The Scores and unit of one line of a record that go in one test suite. */
interface SuitePart {
  scores: Score[];
  unit: Unit | undefined;
}

/**
 * One line of a record split by test suite: the one suite of a run, or a
 * matrix run's suite per target (what names no target is in none).
 */
function suiteParts(
  scores: readonly Score[],
  unit: Unit | undefined,
  matrix: boolean,
): Map<string | undefined, SuitePart> {
  const parts = new Map<string | undefined, SuitePart>();
  const part = (key: string | undefined) => {
    let p = parts.get(key);
    if (p === undefined) parts.set(key, p = { scores: [], unit: undefined });
    return p;
  };
  if (!matrix) {
    parts.set(undefined, { scores: [...scores], unit });
    return parts;
  }
  for (const s of scores) {
    if (s.target_name !== undefined) part(s.target_name).scores.push(s);
  }
  if (unit?.target_name !== undefined) part(unit.target_name).unit = unit;
  return parts;
}

/** The cases of one line's part of a suite, as the whole record's would be. */
function partCases(part: SuitePart): UnitCase[] {
  return unitCases(part.scores, part.unit === undefined ? [] : [part.unit]);
}

/**
 * What a test suite's start needs, gathered a line at a time: its counts,
 * whether its names show epochs, what its model calls cost; and whether each
 * of its cases lies on one line of the record, its unit with it, so that its
 * cases can be written a line at a time in the whole record's order.
 */
class SuiteTally {
  readonly counts: number[] = [0, 0, 0, 0];
  epochs = false;
  readonly spend: SpendTally = new SpendTally();
  byLine = true;
  #seen = new Set<string>();

  add(part: SuitePart): void {
    if (part.unit !== undefined) this.spend.addUnit(part.unit);
    for (const s of part.scores) this.spend.addScore(s);
    const cases = partCases(part);
    const ids = cases.map((c) => c.unit_id);
    if (part.unit !== undefined && !ids.includes(part.unit.unit_id)) {
      ids.push(part.unit.unit_id);
    }
    for (const id of ids) {
      if (this.#seen.has(id)) this.byLine = false;
      this.#seen.add(id);
    }
    const counts = caseCounts(cases);
    for (let i = 0; i < counts.length; i++) this.counts[i]! += counts[i]!;
    if (showsEpochs(cases)) this.epochs = true;
  }
}

/**
 * Writes the JUnit XML of the RunRecord file at `path`, the bytes
 * {@linkcode junitReport} gives for the whole record, a test case at a time:
 * the record is read a line at a time, once for the counts the document
 * starts with and once more for each test suite's cases, never whole. A
 * record whose cases do not each lie on one line (edited by hand) is read
 * whole.
 *
 * @param path The RunRecord file.
 * @param write Where each piece of the document goes, in order; what it
 *   returns is awaited.
 * @returns The record besides its units and Scores.
 * @throws {RunRecordError} When the record cannot be read or is invalid, or
 *   when it lost cases or became another run's between two of its reads (a
 *   record a run is still writing is reported as far as the first read saw).
 *
 * @example
 * ```ts
 * import { junitReportFile } from "./mod.ts";
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
 * let xml = "";
 * await junitReportFile(`${dir}/run.json`, (text) => { xml += text; });
 * await Deno.remove(dir, { recursive: true });
 * if (!xml.includes('tests="1" failures="1"') || !xml.endsWith("</testsuites>\n")) throw new Error(xml);
 * ```
 */
export async function junitReportFile(
  path: string,
  write: (text: string) => Promise<void> | void,
): Promise<RunRecordSummary> {
  let matrix = false;
  let whole = false;
  // The first Score of each target, in order: what targetOrder reads.
  const firsts: Score[] = [];
  const tallies = new Map<string | undefined, SuiteTally>();
  const record = await visitRunRecord(path, {
    header(header) {
      matrix = targetOrder({ config: header.config, scores: [] }).length > 0;
    },
    entry(scores, unit) {
      for (const s of scores) {
        if (
          s.target_name !== undefined &&
          !firsts.some((f) => f.target_name === s.target_name)
        ) firsts.push(s);
      }
      // Targets its config does not name: read whole below.
      whole ||= !matrix && firsts.length > 0;
      if (whole) return;
      for (const [key, part] of suiteParts(scores, unit, matrix)) {
        let tally = tallies.get(key);
        if (tally === undefined) tallies.set(key, tally = new SuiteTally());
        tally.add(part);
      }
    },
  });
  if (whole || [...tallies.values()].some((t) => !t.byLine)) {
    await write(junitReport(await readRunRecord(path)));
    return record;
  }
  const time = runTime(record);
  const targets = targetOrder({ config: record.config, scores: firsts });
  const suites = targets.length === 0
    ? [{ key: undefined, name: record.config_path }]
    : targets.map((t) => ({ key: t, name: suiteName(record, t) }));
  const empty = new SuiteTally();
  const tallyOf = (key: string | undefined) => tallies.get(key) ?? empty;
  const total = [0, 1, 2, 3].map((i) =>
    suites.reduce((sum, s) => sum + tallyOf(s.key).counts[i]!, 0)
  );
  await write(documentHead(total, time));
  for (const { key, name } of suites) {
    const tally = tallyOf(key);
    await write(
      suiteHead(record, name, tally.counts, key, time, tally.spend.result()),
    );
    if (tally.counts[0]! > 0) {
      // The cases the suite's start counted, the first `left`: a record a run
      // is still writing has grown since the first read. One that lost cases
      // or is another run's now would give a document its counts belie.
      let left = tally.counts[0]!;
      const again = await visitRunRecord(path, {
        async entry(scores, unit) {
          const part = left > 0
            ? suiteParts(scores, unit, matrix).get(key)
            : undefined;
          if (part === undefined) return;
          for (const c of partCases(part)) {
            if (left === 0) return;
            left--;
            await write(testcase(c, name, tally.epochs));
          }
        },
      });
      refuseChangedRecord(
        path,
        record.run_id,
        again,
        left,
        "Cannot write the JUnit report of",
        "write the report again",
      );
    }
    await write(SUITE_END);
  }
  await write(DOCUMENT_END);
  return record;
}
