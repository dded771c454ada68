/**
 * What a run tells a progress display as it goes: how many units it will
 * make, each unit that starts, is skipped or is done, and what holds its
 * network calls back.
 *
 * @module
 */

import type { FlowWatch } from "../net/flow.ts";
import type { Score } from "../score/mod.ts";
import {
  DatasetError,
  type DatasetFormat,
  loadDatasetBatches,
} from "../dataset/dataset.ts";
import { type Line, LineSplitter } from "../io/line_stream.ts";

/**
 * The observer {@linkcode import("./run_suite.ts").runSuite} tells of its
 * progress (the `progress` option). Every member is optional.
 *
 * @example Count what a run does
 * ```ts
 * import { runSuite, type RunProgress } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/d.jsonl`, '{"input":"q","output":"a"}\n{"input":"r","output":"b"}\n');
 * await Deno.writeTextFile(`${dir}/s.yaml`, "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n");
 * let total = 0, started = 0, done = 0;
 * const progress: RunProgress = {
 *   total: (units) => void (total = units),
 *   start: (units) => void (started += units),
 *   done: (scores) => void (done += scores.length),
 * };
 * await runSuite(`${dir}/s.yaml`, { sink: new WritableStream(), progress });
 * await Deno.remove(dir, { recursive: true });
 * if (total !== 2 || started !== 2 || done !== 2) throw new Error(`${total} ${started} ${done}`);
 * ```
 */
export interface RunProgress {
  /**
   * Given to the target and the scorers (`context.flow`): told when their
   * network requests wait for a rate limit, a `Retry-After`, a backoff or a
   * call slot.
   */
  readonly flow?: FlowWatch | undefined;
  /**
   * The units the run makes in all (examples times epochs, those a resume
   * skips included), once the dataset is counted, beside the run; never
   * called when it cannot be counted (a dataset on stdin).
   */
  total?(units: number): void;
  /** Units whose work starts: a target call, or a malformed record's units. */
  start?(units: number): void;
  /**
   * Units whose target call ended (returned or threw), or a malformed
   * record's units, told at once: the calls in flight are those started and
   * not ended, at most `concurrency` per target.
   */
  end?(units: number): void;
  /** Units a resume does not run again: their Scores are in the file. */
  skip?(units: number): void;
  /** The Scores of whole units, as they are written. */
  done?(scores: readonly Score[]): void;
}

/**
 * Counts the examples of a dataset file as the loader would make them: a
 * JSONL file's non-blank lines (without parsing them), the records of the
 * other formats. Stops early, with `undefined`, once `stop()` says so.
 *
 * @param path The dataset file.
 * @param format Its format.
 * @param stop Whether to stop counting (the run ended first).
 * @returns How many examples it holds, or `undefined` when it cannot be read.
 */
export async function countExamples(
  path: string,
  format: DatasetFormat,
  stop: () => boolean,
): Promise<number | undefined> {
  let n = 0;
  if (format === "jsonl") {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path);
    } catch (error) {
      // The run reports a dataset it cannot open; progress goes without a total.
      if (error instanceof Deno.errors.NotFound) return undefined;
      if (error instanceof Deno.errors.PermissionDenied) return undefined;
      throw error;
    }
    const splitter = new LineSplitter();
    const lines: Line[] = [];
    const count = () => {
      for (const line of lines) {
        if (line.error !== undefined || line.text.trim() !== "") n++;
      }
      lines.length = 0;
    };
    // Leaving the loop early cancels the stream, which closes the file.
    for await (const chunk of file.readable) {
      if (stop()) return undefined;
      splitter.push(chunk, lines);
      count();
    }
    splitter.end(lines);
    count();
    return n;
  }
  try {
    for await (const batch of await loadDatasetBatches(path, { format })) {
      if (stop()) return undefined;
      n += batch.length;
    }
  } catch (error) {
    // The run reports what is wrong with the dataset itself.
    if (error instanceof DatasetError) return undefined;
    throw error;
  }
  return n;
}
