/**
 * The HTML report: one self-contained file that opens from `file://` with no
 * server and no network. Data, styles and script are inlined, a
 * Content-Security-Policy forbids every external load and lets only the
 * page's own script (by its hash) run, and everything a case holds is shown
 * as text, never as markup.
 *
 * @module
 */

import { Sha256 } from "../fingerprint/_sha256.ts";
import { inertJson } from "../io/inert_json.ts";
import { OneRunPage, type PageText, pageText } from "./_html_data.ts";
import { readRunRecord } from "../record/run_record.ts";
import {
  type RunRecordSummary,
  visitRunRecord,
} from "../record/record_entries.ts";
import { targetOrder } from "./matrix_runs.ts";
import { SCRIPT } from "./_html_script.ts";
import { STYLE } from "./_html_style.ts";
import type { ReportRun } from "./report_run.ts";

/**
 * Options of {@linkcode htmlReport}.
 *
 * @example
 * ```ts
 * import { htmlReport, type HtmlReportOptions } from "./mod.ts";
 * const options: HtmlReportOptions = { title: "nightly" };
 * if (!htmlReport({ scores: [] }, undefined, options).includes("<title>nightly</title>")) throw new Error();
 * ```
 */
export interface HtmlReportOptions {
  /**
   * The page's title.
   * @default {"evalpipe report"}
   */
  title?: string | undefined;
}

let hashes: { script: string; style: string } | undefined;

/** The CSP source of a text: `'sha256-<base64>'`. */
function cspHash(text: string): string {
  const hex = new Sha256().update(text).hex();
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) {
    bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  }
  return `'sha256-${btoa(String.fromCharCode(...bytes))}'`;
}

/**
 * The Content-Security-Policy the report carries: nothing loads from
 * anywhere, and only the page's own inlined script and styles apply.
 *
 * @returns The policy, as the page's meta tag has it.
 *
 * @example No source but the page's own hashes
 * ```ts
 * import { reportPolicy } from "./mod.ts";
 * const policy = reportPolicy();
 * if (!policy.startsWith("default-src 'none'; script-src 'sha256-")) throw new Error(policy);
 * ```
 */
export function reportPolicy(): string {
  hashes ??= { script: cspHash(SCRIPT), style: cspHash(STYLE) };
  return [
    "default-src 'none'",
    `script-src ${hashes.script}`,
    `style-src ${hashes.style}`,
    "img-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

/** Text for an HTML text node. */
function escapeText(text: string): string {
  return text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * JSON text that cannot end the script element it sits in, nor start a
 * comment in it: every `<` (and `>`, `&`) is a `\u` escape, as are the
 * characters a terminal or a text direction would act on. Each piece of a
 * document on its own gives the bytes the whole would.
 */
function embeddable(json: string): string {
  return inertJson(json).replace(
    /[<>&]/g,
    (c) => `\\u00${c.charCodeAt(0).toString(16)}`,
  );
}

/** The page up to its data. */
function pageStart(title: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${reportPolicy()}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${escapeText(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<noscript>This report needs JavaScript to show its cases.</noscript>
<div id="app"></div>
<script type="application/json" id="report-data">`;
}

/** The page after its data. */
function pageEnd(): string {
  return `</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
}

/** The page, a piece at a time: its start, its data's pieces, its end. */
function* pagePieces(title: string, text: PageText): Generator<string> {
  yield pageStart(title) + embeddable(text.head);
  for (const row of text.rows) yield embeddable(row);
  yield embeddable(text.tail) + pageEnd();
}

/**
 * Builds the one-file HTML report of a run, or of two runs compared (A the
 * baseline, B the candidate): the summary per metric, gates, run facts,
 * charts, every unit in a filterable table with its detail, and for two runs
 * the paired diff with the newly failing and newly passing cases first.
 *
 * @param a The run (or, with `b`, the baseline).
 * @param b The run compared with `a`, when there are two.
 * @param options The title.
 * @returns The page.
 *
 * @example Write a report of two runs
 * ```ts
 * import { htmlReport } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const a = { scores: [scored("m", 1, { example_id: "d#1", unit_id: "d#1" })] };
 * const b = { scores: [scored("m", 0, { example_id: "d#1", unit_id: "d#1" })] };
 * const html = htmlReport(a, b);
 * if (!html.startsWith("<!DOCTYPE html>") || !html.includes('"ch":-1')) throw new Error("d#1 newly fails");
 * ```
 */
export function htmlReport(
  a: ReportRun,
  b?: ReportRun,
  options: HtmlReportOptions = {},
): string {
  const title = options.title ?? "evalpipe report";
  let page = "";
  for (const piece of pagePieces(title, pageText(a, b, title))) page += piece;
  return page;
}

/**
 * Writes the HTML report of the RunRecord file at `path`, the bytes
 * {@linkcode htmlReport} gives for the whole record, in pieces: the record is
 * read a line at a time and its rows held as JSON text, not objects. A
 * matrix record is read whole, as its targets' units are paired.
 *
 * @param path The RunRecord file.
 * @param write Where each piece of the page goes, in order; what it returns
 *   is awaited.
 * @param options The title.
 * @returns The record besides its units and Scores.
 * @throws {RunRecordError} When the record cannot be read or is invalid.
 *
 * @example
 * ```ts
 * import { htmlReportFile } from "./mod.ts";
 * import { RunRecordWriter } from "../record/mod.ts";
 * import { scored } from "../score/mod.ts";
 * const dir = await Deno.makeTempDir();
 * const file = await Deno.open(`${dir}/run.json`, { write: true, create: true });
 * const writer = new RunRecordWriter(file, {
 *   run_id: "r1", started_at: "2026-12-01T08:00:00.000Z", config_path: "suite.yaml", config: {},
 *   fingerprints: { config: "sha256:aa", dataset: null, target: "sha256:cc", scorers: {} },
 * });
 * const unit = { example_id: "d#1", unit_id: "d#1", epoch: 1, input: "q", output: "4" };
 * await writer.addUnit(unit, [scored("m", 1, { example_id: "d#1", unit_id: "d#1" })]);
 * await writer.finish([], true);
 * file.close();
 * let html = "";
 * await htmlReportFile(`${dir}/run.json`, (piece) => { html += piece; });
 * await Deno.remove(dir, { recursive: true });
 * if (!html.startsWith("<!DOCTYPE html>") || !html.includes('"out":"4"')) throw new Error(html);
 * ```
 */
export async function htmlReportFile(
  path: string,
  write: (piece: string) => Promise<void> | void,
  options: HtmlReportOptions = {},
): Promise<RunRecordSummary> {
  const title = options.title ?? "evalpipe report";
  const gathered = await gatherPage(path);
  if (gathered === undefined) return await readWhole(path, title, write);
  const { page, summary } = gathered;
  const text = page.text({ ...summary, scores: [] }, summary.aggregates, title);
  for (const piece of pagePieces(title, text)) await write(piece);
  return summary;
}

/**
 * The page of a record that is not a matrix, gathered a line at a time, or
 * `undefined` for a matrix (its targets' units are paired: read whole).
 */
async function gatherPage(
  path: string,
): Promise<{ page: OneRunPage; summary: RunRecordSummary } | undefined> {
  const page = new OneRunPage(true);
  const targets = new Set<string>();
  let summary: RunRecordSummary;
  try {
    summary = await visitRunRecord(path, {
      header(header) {
        if (targetOrder({ config: header.config, scores: [] }).length > 1) {
          throw new ReadWhole();
        }
      },
      entry(scores, unit) {
        if (unit !== undefined) page.addUnit(unit);
        for (const s of scores) {
          if (s.target_name !== undefined) targets.add(s.target_name);
          page.addScore(s);
        }
      },
    });
  } catch (error) {
    if (!(error instanceof ReadWhole)) throw error;
    return undefined;
  }
  // Targets its config does not name, two or more: a matrix after all.
  return targets.size > 1 ? undefined : { page, summary };
}

/** Thrown to stop reading a record a line at a time: it is read whole. */
class ReadWhole extends Error {}

/** Writes the page of the record at `path` read whole. */
async function readWhole(
  path: string,
  title: string,
  write: (piece: string) => Promise<void> | void,
): Promise<RunRecordSummary> {
  const { units, scores, ...summary } = await readRunRecord(path);
  const run = { ...summary, units, scores };
  for (const piece of pagePieces(title, pageText(run, undefined, title))) {
    await write(piece);
  }
  return summary;
}
