/**
 * A run as JUnit XML, for CI systems that show test results: a test suite
 * per run, a test case per unit.
 *
 * @module
 */

import type { RunRecord } from "../record/run_record.ts";
import { aggregatable, type Score } from "../score/mod.ts";
import { type UnitCase, unitCases } from "./cases.ts";
import { hasSpend, isPriced, SpendTally } from "../record/spend.ts";
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
  for (const s of errors) {
    const code = s.diagnostics.find((d) => d.severity === "error")?.code ??
      s.status;
    xml += `      <error message="${
      xmlAttr(`${s.metric}: ${s.reason ?? s.status}`)
    }" type="${xmlAttr(code)}">${xmlText(scoreText(s))}</error>\n`;
  }
  for (const s of failures) {
    xml += `      <failure message="${
      xmlAttr(`${s.metric}: ${s.reason ?? `value ${s.value}`}`)
    }" type="${xmlAttr(s.metric)}">${xmlText(scoreText(s))}</failure>\n`;
  }
  if (c.outcome === "skipped") {
    xml += `      <skipped message="${
      xmlAttr(
        c.scores.map((s) =>
          `${s.metric}: ${
            s.status === "scored" ? `scored but ${s.validity}` : s.status
          }${s.reason !== undefined ? ` (${s.reason})` : ""}`
        ).join("; "),
      )
    }"/>\n`;
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
  const epochs = cases.some((c) => (c.epoch ?? 1) > 1);
  const count = (o: UnitCase["outcome"]) =>
    cases.filter((c) => c.outcome === o).length;
  const counts = [
    cases.length,
    count("failed"),
    count("error"),
    count("skipped"),
  ];
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
  const tally = new SpendTally();
  for (const unit of units) tally.addUnit(unit);
  for (const score of scores) tally.addScore(score);
  const spend = tally.result();
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
  xml += `    </properties>\n`;
  for (const c of cases) xml += testcase(c, name, epochs);
  return { xml: `${xml}  </testsuite>\n`, counts };
}

function countText(counts: readonly number[], time: string): string {
  const [tests, failures, errors, skipped] = counts;
  return `tests="${tests}" failures="${failures}" errors="${errors}" skipped="${skipped}" time="${time}"`;
}

/**
 * Writes a run as JUnit XML: one `<testsuite>` per run (named by its config
 * file) in a `<testsuites>`, one `<testcase>` per unit named by its example
 * id (and its epoch when the run has several). A matrix run has a
 * `<testsuite>` per target, named `<config> (target <name>)` (its cases'
 * classname too), so CI shows which target failed. A unit gets an `<error>`
 * per Score that is an error or blocked, a `<failure>` per Score that was
 * measured and did not pass (each with the metric and its reason), a
 * `<skipped>` when nothing was measured, and the target's output in
 * `<system-out>`. A test case is counted once: as an error if it has one,
 * else as a failure, so `tests` = passed + `failures` + `errors` + `skipped`.
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
  const started = Date.parse(record.started_at);
  const finished = record.finished_at === null
    ? NaN
    : Date.parse(record.finished_at);
  const time = seconds(
    Number.isFinite(started) && Number.isFinite(finished)
      ? finished - started
      : 0,
  );
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
        `${record.config_path} (target ${t})`,
        record.scores.filter((s) => s.target_name === t),
        record.units.filter((u) => u.target_name === t),
        t,
        time,
      )
    );
  const total = [0, 1, 2, 3].map((i) =>
    suites.reduce((sum, s) => sum + s.counts[i]!, 0)
  );
  return `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<testsuites name="evalpipe" ${countText(total, time)}>\n` +
    suites.map((s) => s.xml).join("") + `</testsuites>\n`;
}
