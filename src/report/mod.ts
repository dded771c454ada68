/**
 * Reports for people: summary tables, diffs, Scores grouped by the call they
 * measured (control characters in model output escaped), and the one-file
 * HTML report.
 *
 * @example Write the HTML report of a run
 * ```ts
 * import { htmlReport } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const html = htmlReport({ scores: [scored("exact_match", 1, { example_id: "d#1", unit_id: "d#1" })] });
 * if (!html.includes("Content-Security-Policy")) throw new Error("unexpected");
 * ```
 *
 * @module
 */

export { formatDiff, formatSummary } from "./summary.ts";
export { formatClassification } from "./classification.ts";
export type { HtmlReportOptions } from "./html.ts";
export type { ReportRun, ReportUnit } from "./report_run.ts";
export { htmlReport, htmlReportFile, reportPolicy } from "./html.ts";
export type { UnitView } from "./view.ts";
export { escapeControl, groupByCall, renderByCall } from "./view.ts";
export type { CaseOutcome, UnitCase } from "./cases.ts";
export { caseOutcome, unitCases } from "./cases.ts";
export { junitReport, junitReportFile, xmlAttr, xmlText } from "./junit.ts";
export type { MarkdownOptions } from "./markdown.ts";
export {
  markdownCell,
  markdownReport,
  markdownReportFile,
} from "./markdown.ts";
export type { RunFailure } from "./run_failures.ts";
export { runFailures } from "./run_failures.ts";
export {
  annotations,
  escapeCommandData,
  escapeCommandProperty,
} from "./annotations.ts";
export {
  formatBaseline,
  formatCases,
  formatComparison,
  formatRegression,
} from "./comparison.ts";
export { matrixComparison, splitMatrixRun } from "./matrix_runs.ts";
export type { InvalidCases, InvalidCasesText } from "./gate_lines.ts";
export { gateLine, invalidCasesText } from "./gate_lines.ts";
