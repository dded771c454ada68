// Writing the HTML report for `run --html` and `report --html`.

import type { ScoresFile } from "../record/scores_file.ts";
import type { ReportRun } from "../report/report_run.ts";

/** What a results file gives the report: the record when it is one, else its Scores. */
export function reportRunOf(file: ScoresFile): ReportRun {
  return file.record ?? { scores: file.scores };
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
  const [{ htmlReport }, { replaceFile }, { splitMatrixRun }] = await Promise
    .all([
      import("../report/html.ts"),
      import("../io/replace_file.ts"),
      import("../report/matrix_runs.ts"),
    ]);
  // A matrix record alone: its first two targets, compared as two runs.
  const targets = b === undefined ? splitMatrixRun(a) : undefined;
  await replaceFile(
    path,
    targets !== undefined
      ? htmlReport(targets[0]!, targets[1])
      : htmlReport(a, b),
    { name: "HTML report" },
  );
}
