/**
 * `evalpipe export --to evalglass RECORD DIR`: a RunRecord as an evalglass
 * run directory.
 *
 * @module
 */

import { defineCommand } from "./command.ts";
import { UsageError } from "./flags.ts";
import { say, writeStdout } from "./_output.ts";

/** The formats `export --to` writes. */
const FORMATS = ["evalglass"];

/** The `export` command. */
export const exportRun = defineCommand({
  name: "export",
  summary: "Write a RunRecord in another tool's format (--to evalglass)",
  usage: "--to evalglass RECORD DIR",
  description:
    `Writes the RunRecord (run --record) as evalglass's result store writes a run:
DIR/<run id>/ with runrecord.json (the Scorecard, every Score, the provenance
dimensions), scorecard.json, manifest.json (the SHA-256 of both) and
run.complete (the manifest's SHA-256), each file readable by its owner only.
The run id becomes the folder name as evalglass makes it (characters other
than letters, digits, ".", "_" and "-" become "_"). Prints the path of
runrecord.json, which "evalglass view --record" and "evalglass baseline
update --from" take.`,
  positionals: {
    names: ["RECORD", "DIR"],
    error: "export takes a RunRecord and an output folder",
  },
  flags: {
    to: {
      type: "string",
      value: "FORMAT",
      help: "The format to write: evalglass",
    },
  },
  async run(flags, [recordPath, dir]) {
    if (flags.to === undefined) {
      throw new UsageError("export needs --to evalglass");
    }
    if (!FORMATS.includes(flags.to)) {
      throw new UsageError(
        `Unknown export format ${JSON.stringify(flags.to)}; expected evalglass`,
      );
    }
    if (dir === "-") {
      // Among the outputs `-` is never a name (README, Commands and flags).
      throw new UsageError(
        'export writes a folder, not stdout ("-"); write ./- for a folder named "-"',
      );
    }
    const [{ isRunRecordFile }, { writeEvalglassRunFile }] = await Promise.all([
      import("./_record_file.ts"),
      import("../evalglass/store.ts"),
    ]);
    if (!(await isRunRecordFile(recordPath))) {
      // Not a record, or not readable: the Scores reader names what it is.
      const { readScoresFile, ScoresFileError } = await import(
        "../record/scores_file.ts"
      );
      await readScoresFile(recordPath);
      throw new ScoresFileError(
        `Cannot export ${
          JSON.stringify(recordPath)
        }: not a RunRecord (write one with "run --record FILE")`,
      );
    }
    // Read twice, never whole: the Scorecard first, then each Score written.
    const { paths, record } = await writeEvalglassRunFile(dir, recordPath);
    if (!record.complete) {
      // As the export decides, in the one place that decides it: a shard's
      // gates are its merge's to decide.
      const { undecidedGates } = await import("../record/_undecided_gates.ts");
      const gated = undecidedGates(record).length > 0;
      say(
        `evalpipe: ${
          JSON.stringify(recordPath)
        } is the record of a run that did not finish${
          gated
            ? ': its gates are undecided, so the export blocks them (verdict "blocked")'
            : ""
        }; the export says so in its Scorecard`,
      );
    }
    if (record.shard !== undefined) {
      say(
        `evalpipe: ${
          JSON.stringify(recordPath)
        } is shard ${record.shard.index} of ${record.shard.count} of a run: its gates are checked on the merged run (evalpipe merge), so the export decides none; export the merged record for the run's verdict`,
      );
    }
    await writeStdout(`${paths.runrecord}\n`);
    return 0;
  },
});
