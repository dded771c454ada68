/**
 * Reading a file of results: a RunRecord, or NDJSON of Scores.
 *
 * @module
 */

import type { CaseRequirement } from "../aggregate/types.ts";
import { readJsonValues } from "../io/_json_syntax.ts";
import { InputError, osErrorText } from "../base/errors.ts";
import { nfcKey } from "../base/nfc.ts";
import { isRunRecord, readRunRecord, type RunRecord } from "./run_record.ts";
import { parseScore, type Score } from "../score/mod.ts";

/**
 * The Scores of a results file, and its RunRecord when it is one.
 *
 * @example Aggregate the Scores of a results file, whichever kind it is
 * ```ts
 * import { readScoresFile, type ScoresFile } from "./mod.ts";
 * import { Aggregator } from "../aggregate/mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/scores.ndjson`, '{"metric":"m","status":"scored","validity":"valid","value":1,"passed":true,"evaluator_version":"m@1"}\n');
 * const file: ScoresFile = await readScoresFile(`${dir}/scores.ndjson`);
 * await Deno.remove(dir, { recursive: true });
 * const aggregator = new Aggregator();
 * for (const s of file.scores) aggregator.add(s);
 * if (file.record !== undefined || aggregator.results()[0]?.mean !== 1) throw new Error("unexpected");
 * ```
 */
export interface ScoresFile {
  /** The Scores, in file order. */
  scores: Score[];
  /** The record, when the file is a RunRecord. */
  record?: RunRecord;
  /**
   * Each metric's declared value range, when the file says: a RunRecord's
   * `value_ranges`. A Scores file's are in its sidecar (`readMeta`,
   * `src/run/`), an evalglass record's are read by
   * `readEvalglassRunRecord` (`src/evalglass/`).
   */
  value_ranges?: Record<string, [number, number]>;
  /** Lines that are not Scores, with their 1-based line numbers and why. */
  problems: Array<{ line: number; message: string }>;
  /**
   * When its run judged a case over its epochs, when the file says: a
   * record's config (`epochs.require`, else `all`, the run's default). A
   * Scores file does not say (its sidecar's `settings` do: `readMeta`,
   * `src/run/`), and this reader
   * reads no baseline file (`readBaseline`, `src/run/`, gives its
   * `require`).
   */
  require?: CaseRequirement;
}

/**
 * A results file that cannot be read at all. Its message names the file, and
 * the command line exits 2.
 *
 * @example A results file that is not there
 * ```ts
 * import { readScoresFile, ScoresFileError } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * const error = await readScoresFile(`${dir}/scores.ndjson`).then(() => undefined, (e) => e);
 * await Deno.remove(dir, { recursive: true });
 * if (!(error instanceof ScoresFileError) || error.exitCode !== 2) throw new Error("unexpected");
 * if (error.message !== `Cannot read "${dir}/scores.ndjson": no such file`) throw new Error(error.message);
 * ```
 */
export class ScoresFileError extends InputError {
  /**
   * Creates the error.
   *
   * @param message What is wrong, naming the file.
   */
  constructor(message: string) {
    super(message);
    this.name = "ScoresFileError";
  }
}

/**
 * Reads a RunRecord or an NDJSON file of Scores. In NDJSON, a line that is
 * not a valid Score is listed in `problems` and skipped, and so is a Score
 * whose unit has one of that metric (and target) on an earlier line (unit
 * ids compared in Unicode NFC).
 *
 * @param path The file.
 * @returns Its Scores.
 * @throws {ScoresFileError} When the file cannot be read.
 * @throws {import("./run_record.ts").RunRecordError} When a RunRecord is invalid.
 *
 * @example A line that is not a Score is listed, and the rest is read
 * ```ts
 * import { readScoresFile } from "./mod.ts";
 * import { scored, scoreLine } from "../score/mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/scores.ndjson`, `${scoreLine(scored("m", 1))}\n{"metric":"m"}\n`);
 * const { scores, problems } = await readScoresFile(`${dir}/scores.ndjson`);
 * await Deno.remove(dir, { recursive: true });
 * if (scores.length !== 1 || problems[0]?.line !== 2) throw new Error("unexpected");
 * ```
 */
export async function readScoresFile(path: string): Promise<ScoresFile> {
  let text: string;
  try {
    // A record is read a line at a time: a big one outgrows any string.
    if (await startsLikeRunRecord(path)) {
      const record = await readRunRecord(path);
      return {
        scores: record.scores,
        record,
        ...(record.value_ranges !== undefined
          ? { value_ranges: record.value_ranges }
          : {}),
        problems: [],
        require: requirementOf(record),
      };
    }
    const decoder = new TextDecoder("utf-8", { fatal: true });
    // A crash can cut a RunRecord inside a character: its torn last line is
    // dropped anyway, so only elsewhere is an unfinished character an error.
    text = decoder.decode(await Deno.readFile(path), { stream: true });
    if (!isRunRecord(text)) text += decoder.decode();
  } catch (error) {
    // A record that is there but invalid says so itself.
    if (error instanceof SyntaxError) throw error;
    throw new ScoresFileError(
      `Cannot read ${JSON.stringify(path)}: ${osErrorText(error)}`,
    );
  }
  const scores: Score[] = [];
  const problems: ScoresFile["problems"] = [];
  // Each unit's Score of a metric (and target) once: a file whose lines
  // came twice (`cat a a >`) would double every count.
  const seen = new SeenScores();
  const take = (json: string | { value: unknown }, line: number) => {
    let score: Score;
    try {
      score = parseScore(
        typeof json === "string" ? JSON.parse(json) : json.value,
      );
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      problems.push({ line, message: error.message });
      return;
    }
    const unit = score.unit_id;
    if (
      unit !== undefined &&
      // In NFC, as the Aggregator, diff, resume and merge compare ids: one
      // unit written in two spellings is one unit given twice.
      !seen.add(
        nfcKey(unit),
        score.target_name === undefined
          ? score.metric
          : `${score.metric}\u0000${score.target_name}`,
      )
    ) {
      problems.push({
        line,
        message: `unit ${JSON.stringify(unit)} already has a Score of metric ${
          JSON.stringify(score.metric)
        } on an earlier line: it is counted once`,
      });
      return;
    }
    scores.push(score);
  };
  if (INDENTED.test(text)) {
    // `jq .` (indented objects, one after another) or `jq -s .` (one list):
    // no NDJSON line is a bracket alone.
    for (const read of readJsonValues(text)) {
      if (read.broken !== undefined) {
        const { line, column, problem } = read.broken;
        problems.push({
          line,
          message: column === undefined
            ? problem
            : `column ${column}: ${problem}`,
        });
        continue;
      }
      for (
        const item of Array.isArray(read.value) ? read.value : [read.value]
      ) {
        take({ value: item }, read.line);
      }
    }
    return { scores, problems };
  }
  text.split("\n").forEach((raw, i) => {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim() !== "") take(line, i + 1);
  });
  return { scores, problems };
}

/**
 * When a recorded run judged a case over its epochs: its config's
 * `epochs.require`, else `all`, the run's default.
 */
function requirementOf(record: RunRecord): CaseRequirement {
  const epochs = record.config.epochs;
  const require = typeof epochs === "object" && epochs !== null
    ? (epochs as { require?: unknown }).require
    : undefined;
  return require === "majority" || require === "any" ? require : "all";
}

/**
 * A text whose first line is `{` or `[` alone, or that opens a list (`jq
 * -sc .`, `[]`): JSON documents, not NDJSON, where no Score is a list.
 */
const INDENTED = /^\uFEFF?\s*(?:\{[ \t]*\r?\n|\[)/;

/**
 * The (unit, metric) pairs seen: per unit, a bit for each metric (a run has
 * a few), so a Score costs a lookup and no string or array of its own; past
 * 30 metrics, a key per pair.
 */
class SeenScores {
  #bits = new Map<string, number>();
  #metrics = new Map<string, number>();
  #rest = new Set<string>();

  /** Adds a pair; `false` when it was there already. */
  add(unit: string, metric: string): boolean {
    let index = this.#metrics.get(metric);
    if (index === undefined) {
      this.#metrics.set(metric, index = this.#metrics.size);
    }
    if (index >= 30) {
      const key = `${unit}\u0000${metric}`;
      if (this.#rest.has(key)) return false;
      this.#rest.add(key);
      return true;
    }
    const bit = 1 << index;
    const bits = this.#bits.get(unit) ?? 0;
    if ((bits & bit) !== 0) return false;
    this.#bits.set(unit, bits | bit);
    return true;
  }
}

/** Whether the file starts as a RunRecord does. */
async function startsLikeRunRecord(path: string): Promise<boolean> {
  const file = await Deno.open(path);
  try {
    const head = new Uint8Array(256);
    let n = 0;
    while (n < head.length) {
      const read = await file.read(head.subarray(n));
      if (read === null) break;
      n += read;
    }
    return isRunRecord(new TextDecoder().decode(head.subarray(0, n)));
  } finally {
    file.close();
  }
}
