/**
 * `evalpipe report RECORD [RECORD_B] --html FILE`: reports people open.
 *
 * @module
 */

import { defineCommand } from "./command.ts";
import { UsageError } from "./flags.ts";
import { say } from "./_output.ts";
import { readResults } from "./_results.ts";

/** The `report` command. */
export const report = defineCommand({
  name: "report",
  summary: "Write reports of a run, or of two compared: --html",
  usage: "RECORD [RECORD_B] --html FILE",
  description:
    `Writes reports of a RunRecord (or a Scores file). With --html, one
self-contained HTML file that opens from file:// without a server or the
network: the summary per metric, gates, run facts, charts, and every unit
with its input, output, Scores and reasons. With two files (A the baseline,
B the candidate), the paired diff per metric and the newly failing and newly
passing cases first, A's and B's outputs side by side.`,
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
    },
  },
  async run(flags, positionals) {
    if (flags.html === undefined) {
      throw new UsageError("report needs a report to write: --html FILE");
    }
    // The second is optional: there may be one.
    const files = await Promise.all(
      positionals.filter((p) => p !== undefined).map(readResults),
    );
    const { reportRunOf, writeHtmlReport } = await import("./_html.ts");
    const [a, b] = files.map(reportRunOf);
    await writeHtmlReport(flags.html, a!, b);
    say(`evalpipe: HTML report written to ${flags.html}`);
    return files.some((f) => f.problems.length > 0) ? 2 : 0;
  },
});
