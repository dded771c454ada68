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
import { pageData } from "./_html_data.ts";
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
 * JSON that cannot end the script element it sits in, nor start a comment
 * in it: every `<` (and `>`, `&`) is a `\u` escape, as are the characters a
 * terminal or a text direction would act on.
 */
function embeddable(value: unknown): string {
  return inertJson(JSON.stringify(value)).replace(
    /[<>&]/g,
    (c) => `\\u00${c.charCodeAt(0).toString(16)}`,
  );
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
  const data = pageData(a, b, title);
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
<script type="application/json" id="report-data">${embeddable(data)}</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
