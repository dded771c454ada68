/**
 * `evalpipe report RECORD [RECORD_B] --html FILE --junit FILE --markdown
 * FILE`: reports people open, and reports CI reads.
 *
 * @module
 */

import { defineCommand } from "./command.ts";
import { exitCodeOf } from "../base/errors.ts";
import { inputName } from "../base/place.ts";
import { stdinOnce, UsageError } from "./flags.ts";
import { isBrokenPipe, say } from "./_output.ts";
import { readResults } from "./_results.ts";
import {
  checkReportFolders,
  REPORT_FORMATS,
  reportFlags,
  type ReportInput,
  writeReports,
} from "./_reports.ts";

/** What `-` means to report's flags: each report is a file of its own. */
const REPORT_STDOUT = {
  refused: "report writes files (on a pipe, name /dev/stdout)",
} as const;

/** The `report` command. */
export const report = defineCommand({
  name: "report",
  summary:
    "Write reports of a run, or of two compared: --html, --junit, --markdown",
  usage: "RECORD [RECORD_B] [--html FILE] [--junit FILE] [--markdown FILE]",
  description:
    `Writes reports of a RunRecord (or a Scores file). With --html, one
self-contained HTML file that opens from file:// without a server or the
network: the summary per metric, gates, run facts, charts, and every unit
with its input, output, Scores and reasons. With two files (A the baseline,
B the candidate), the paired diff per metric and the newly failing and newly
passing cases first, A's and B's outputs side by side. --junit (JUnit XML, a
test case per unit) and --markdown (the summary table, the gates, the worst
failing cases) describe one RunRecord. A matrix record (run --matrix) shows
every target: a summary per target and each target against the first, as
diff RECORD prints it; JUnit has a test suite per target.`,
  positionals: {
    names: ["RECORD", "[RECORD_B]"],
    min: 1,
    error:
      "report takes one RunRecord, or two to compare (A the baseline, then B)",
  },
  flags: {
    html: {
      type: "string",
      value: "FILE",
      help: "Write the one-file HTML report to FILE",
      dash: REPORT_STDOUT,
    },
    ...reportFlags(REPORT_STDOUT),
  },
  async run(flags, positionals) {
    const files: Record<string, string | undefined> = {
      junit: flags.junit,
      markdown: flags.markdown,
    };
    const ci = REPORT_FORMATS.some((f) => files[f.flag] !== undefined);
    if (flags.html === undefined && !ci) {
      throw new UsageError(
        `report needs a report to write: --html FILE, ${
          REPORT_FORMATS.map((f) => `--${f.flag} FILE`).join(", ")
        }`,
      );
    }
    // The second is optional: there may be one.
    const paths = positionals.filter((p) => p !== undefined);
    stdinOnce("report", paths);
    if (ci && paths.length > 1) {
      throw new UsageError(
        "--junit and --markdown describe one run: give them one RunRecord",
      );
    }
    await checkReportFolders({ html: flags.html, ...files });
    const outputs = Object.entries({ html: flags.html, ...files }).flatMap((
      [flag, path],
    ) => path !== undefined ? [{ name: `--${flag}`, path }] : []);
    const { refuseSameFile } = await import("../io/same_file.ts");
    await refuseSameFile(
      outputs,
      paths.filter((p) => p !== "-").map((path) => ({
        name: "the record",
        path,
      })),
    );
    // Each report on its own: one lost is named, the others still written.
    const lost: Error[] = [];
    if (
      paths.length === 1 &&
      await (await import("./_record_file.ts")).isRunRecordFile(paths[0]!)
    ) {
      // A record file: each report reads it a unit at a time, never whole.
      const input: ReportInput = { file: paths[0]!, recordPath: paths[0]! };
      for (const { error } of await writeReports(input, files)) {
        say(`evalpipe: ${error.message}`);
        lost.push(error);
      }
      let htmlWritten = false;
      if (flags.html !== undefined) {
        const { writeHtmlReportFile } = await import("./_html.ts");
        htmlWritten = await whole(async () => {
          input.summary = await writeHtmlReportFile(flags.html!, paths[0]!);
        });
      }
      if (input.summary?.complete === false) {
        say(
          `evalpipe: ${
            JSON.stringify(paths[0])
          } is the record of a run that did not finish`,
        );
      }
      if (htmlWritten) say(`evalpipe: HTML report written to ${flags.html}`);
      // A disk that refused one (3) over a folder gone meanwhile (2).
      return lost.length > 0 ? Math.max(...lost.map((e) => exitCodeOf(e)!)) : 0;
    }
    const read = await Promise.all(paths.map(readResults));
    if (ci) {
      const [file] = read;
      if (file?.record === undefined) {
        throw new UsageError(
          `${
            inputName(paths[0]!)
          } is not a RunRecord of evalpipe's: --junit and --markdown need the record (run --record FILE)`,
        );
      }
      const input = { record: file.record, recordPath: paths[0]! };
      for (const { error } of await writeReports(input, files)) {
        say(`evalpipe: ${error.message}`);
        lost.push(error);
      }
    }
    if (flags.html !== undefined) {
      const { reportRunOf, writeHtmlReport } = await import("./_html.ts");
      const [a, b] = read.map(reportRunOf);
      if (await whole(() => writeHtmlReport(flags.html!, a!, b))) {
        say(`evalpipe: HTML report written to ${flags.html}`);
      }
    }
    // A disk that refused one (3) over a folder gone meanwhile (2).
    if (lost.length > 0) return Math.max(...lost.map((e) => exitCodeOf(e)!));
    return read.some((f) => f.problems.length > 0) ? 2 : 0;
  },
});

/**
 * Runs a report's write: `false` when the pipe it went to was closed
 * (`--html /dev/stdout | head -c 20`). The reader took what it wanted, so it
 * is no error, but the report was not written whole and is not said to be.
 */
async function whole(write: () => Promise<void>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (error) {
    if (!isBrokenPipe(error)) throw error;
    return false;
  }
}
