// Writing the HTML report for `run --html` and `report --html`.

import type { RunRecordSummary } from "../record/record_entries.ts";
import type { ScoresFile } from "../record/scores_file.ts";
import type { ReportRun } from "../report/report_run.ts";

/**
 * What a results file gives the report: the record when it is one, else its
 * Scores, with the metrics' ranges its sidecar names (as `diff` reads them).
 */
export function reportRunOf(file: ScoresFile): ReportRun {
  return file.record ?? {
    scores: file.scores,
    ...(file.value_ranges !== undefined
      ? { value_ranges: file.value_ranges }
      : {}),
    // When a case passes over its epochs, as its sidecar says.
    ...(file.require !== undefined ? { require: file.require } : {}),
  };
}

/**
 * Writes the report to `path` whole or not at all: into a fresh file beside
 * it, renamed over it when complete.
 */
export async function writeHtmlReport(
  path: string,
  a: ReportRun,
  b?: ReportRun,
): Promise<void> {
  const [{ htmlReport }, { replaceFile }] = await Promise.all([
    import("../report/html.ts"),
    import("../io/replace_file.ts"),
  ]);
  // A matrix record alone shows every target, each against the first.
  await replaceFile(path, htmlReport(a, b), { name: "HTML report" });
}

/**
 * Writes the report of the RunRecord file `record` to `path` whole or not at
 * all, the record read a line at a time.
 *
 * @returns What the record says besides its units and Scores.
 */
export async function writeHtmlReportFile(
  path: string,
  record: string,
): Promise<RunRecordSummary> {
  const [{ htmlReportFile }, { replaceFile }] = await Promise.all([
    import("../report/html.ts"),
    import("../io/replace_file.ts"),
  ]);
  let summary: RunRecordSummary | undefined;
  await replaceFile(path, async (write) => {
    summary = await htmlReportFile(record, write);
  }, { name: "HTML report" });
  return summary!;
}
