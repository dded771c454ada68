// Reading a RunRecord or Scores file for `view` and `diff`, its problems
// reported on stderr.

import type { ScoresFile } from "../record/scores_file.ts";
import { say } from "./_output.ts";

/** Reads a RunRecord or Scores file, reporting malformed lines and an unfinished run. */
export async function readResults(path: string): Promise<ScoresFile> {
  const { readScoresFile } = await import("../record/scores_file.ts");
  const file = await readScoresFile(path);
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
