// Reading a RunRecord or Scores file for `view` and `diff` (or an evalglass
// runrecord.json), its problems reported on stderr.

import type { ScoresFile } from "../record/scores_file.ts";
import type { EvalglassImport } from "../evalglass/import.ts";
import { say } from "./_output.ts";

/**
 * Says, once per file, what evalpipe read of an evalglass record and what it
 * left behind.
 */
export function sayEvalglass(where: string, read: EvalglassImport): void {
  const n = read.scores.length;
  say(
    `evalpipe: ${where} is an evalglass RunRecord (run ${
      JSON.stringify(read.run_id)
    }): ${n} ${
      n === 1 ? "Score" : "Scores"
    } read, aggregates computed from them${
      read.derivedPassed > 0
        ? `, "passed" derived for ${read.derivedPassed} (value >= 0.5; false for error and blocked)`
        : ""
    }`,
  );
  if (read.contradicted.length > 0) {
    say(
      `evalpipe: ${where}: the Scorecard's aggregate of ${
        read.contradicted.map((m) => JSON.stringify(m)).join(", ")
      } contradicts its Scores (evalglass would reject the record); evalpipe uses the Scores`,
    );
  }
  if (read.unmapped.length > 0) {
    say(`evalpipe: not mapped from ${where}: ${read.unmapped.join(", ")}`);
  }
}

/** Reads a RunRecord or Scores file, reporting malformed lines and an unfinished run. */
export async function readResults(path: string): Promise<ScoresFile> {
  const [{ readScoresFile }, { readEvalglassRunRecord }] = await Promise.all([
    import("../record/scores_file.ts"),
    import("../evalglass/import.ts"),
  ]);
  const evalglass = await readEvalglassRunRecord(path);
  if (evalglass !== undefined) {
    sayEvalglass(JSON.stringify(path), evalglass);
    return {
      scores: evalglass.scores,
      ...(evalglass.value_ranges !== undefined
        ? { value_ranges: evalglass.value_ranges }
        : {}),
      problems: [],
    };
  }
  const file = await readScoresFile(path);
  if (file.record === undefined && path !== "-") {
    // A Scores file's sidecar keeps the ranges a record would.
    const { readMeta } = await import("../run/resume.ts");
    const ranges = (await readMeta(path))?.value_ranges;
    if (ranges !== undefined) file.value_ranges = ranges;
  }
  for (const p of file.problems) {
    say(
      `evalpipe: Malformed Score in ${
        JSON.stringify(path)
      } line ${p.line}: ${p.message}`,
    );
  }
  if (file.record !== undefined && !file.record.complete) {
    say(
      `evalpipe: ${
        JSON.stringify(path)
      } is the record of a run that did not finish`,
    );
  }
  return file;
}
