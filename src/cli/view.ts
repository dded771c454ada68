/**
 * `evalpipe view FILE`: a RunRecord or Scores file as a summary, or Scores
 * grouped by the unit they measured.
 *
 * @module
 */

import { defineCommand } from "./command.ts";
import { writeStdout } from "./_output.ts";
import { readResults } from "./_results.ts";
import { counted } from "../base/words.ts";

/** The `view` command. */
export const view = defineCommand({
  name: "view",
  summary: "Show a RunRecord or Scores file: a summary, or --by-call",
  usage: "RECORD_OR_SCORES [--by-call] [--json] [--width N]",
  description:
    `Shows a RunRecord (--record) or an NDJSON file of Scores. Without --by-call,
the summary table per metric. With --by-call, the Scores grouped by example
and unit, each metric's status, value, verdict and reason side by side,
failing units first; a RunRecord's units show their input and output.
Control characters in model output are escaped.`,
  positionals: {
    names: ["FILE"],
    error: "view takes one RunRecord or Scores file",
  },
  flags: {
    "by-call": {
      type: "boolean",
      help: "Group Scores by the unit they measured",
    },
    json: {
      type: "boolean",
      help:
        "JSON instead of a table: one Aggregate per metric (NDJSON), or with --by-call one object per unit",
    },
    width: {
      type: "integer",
      help: "Columns to fit",
      defaultText: "the terminal's, else 120",
    },
  },
  async run(flags, [path]) {
    const file = await readResults(path);
    const status = file.problems.length > 0 ? 2 : 0;
    if (!flags["by-call"]) {
      const [{ Aggregator }, { formatSummary }] = await Promise.all([
        import("../aggregate/aggregator.ts"),
        import("../report/summary.ts"),
      ]);
      // A whole file is in memory anyway: gather each example wherever it stands.
      const ranges = file.value_ranges ?? file.record?.value_ranges;
      const aggregator = new Aggregator({
        grouped: true,
        // A record keeps its scorers' ranges: clamp as the run did.
        ...(await import("../aggregate/value_ranges.ts")).valueRangeOption(
          ranges,
        ),
      });
      for (const s of file.scores) aggregator.add(s);
      if (flags.json) {
        const { inertJson } = await import("../io/inert_json.ts");
        await writeStdout(
          inertJson(
            aggregator.results().map((a) => JSON.stringify(a) + "\n").join(""),
          ),
        );
        return status;
      }
      await writeStdout(`${await formatSummary(aggregator.results())}\n`);
      return status;
    }
    const { groupByCall, renderByCall } = await import("../report/view.ts");
    const units = groupByCall(file.scores, file.record?.units);
    if (flags.json) {
      const { inertJson } = await import("../io/inert_json.ts");
      await writeStdout(
        inertJson(units.map((u) => JSON.stringify(u) + "\n").join("")),
      );
      return status;
    }
    // A terminal that reports no size (0 columns, as some do) gets 120.
    const columns = Deno.stdout.isTerminal() ? Deno.consoleSize().columns : 0;
    const width = flags.width ?? (columns > 0 ? columns : 120);
    const failed = units.filter((u) => u.failed).length;
    const lines = renderByCall(units, Math.max(20, width));
    await writeStdout(
      `${lines.join("\n")}\n\n${
        counted(units.length, "unit")
      }, ${failed} with a failure\n`,
    );
    return status;
  },
});
