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
    const [{ isRunRecord }, { writeEvalglassRunFile }] = await Promise.all([
      import("../record/run_record.ts"),
      import("../evalglass/store.ts"),
    ]);
    if (!isRunRecord(await head(recordPath))) {
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
      say(
        `evalpipe: ${
          JSON.stringify(recordPath)
        } is the record of a run that did not finish; the export says so in its Scorecard`,
      );
    }
    await writeStdout(`${paths.runrecord}\n`);
    return 0;
  },
});

/** The first 256 bytes of a file as text; empty when it cannot be read. */
async function head(path: string): Promise<string> {
  try {
    using file = await Deno.open(path);
    const bytes = new Uint8Array(256);
    let n = 0;
    while (n < bytes.length) {
      const read = await file.read(bytes.subarray(n));
      if (read === null) break;
      n += read;
    }
    return new TextDecoder().decode(bytes.subarray(0, n));
  } catch (error) {
    // The Scores reader, asked next, says why the file cannot be read.
    if (error instanceof Deno.errors.NotFound) return "";
    if (error instanceof Deno.errors.PermissionDenied) return "";
    if (error instanceof Deno.errors.IsADirectory) return "";
    throw error;
  }
}
