// Reading a RunRecord or Scores file for `view` and `diff` (or an evalglass
// runrecord.json), its problems reported on stderr.

import type { ScoresFile } from "../record/scores_file.ts";
import type { EvalglassImport } from "../evalglass/import.ts";
import { say } from "./_output.ts";
import { namedReads } from "../io/named_reads.ts";
import { InputError, isOsError, osErrorText } from "../base/errors.ts";
import { inputName, placeOf } from "../base/place.ts";

/** Says, once per file, that it is a baseline and how many Scores it gave. */
export function sayBaseline(where: string, scores: number): void {
  say(
    `evalpipe: ${where} is a baseline (run --save-baseline): ${scores} ${
      scores === 1 ? "Score" : "Scores"
    } read`,
  );
}

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

/**
 * Says, once per file, that no Score in it carries an id and how its Scores
 * are told apart: `view`, `diff` and `aggregate` say the same.
 */
export function sayPositions(where: string): void {
  say(
    `evalpipe: ${where}: no Score carries an example id (an older evalglass record): the k-th Score of each metric is taken as example "#k"`,
  );
}

/** A results file as `view` and `diff` read it. */
export interface Results extends ScoresFile {
  /** Its Scores carried no ids and were given their positions'. */
  byPosition?: true;
  /** It was an evalglass record. */
  evalglass?: true;
  /** The cases a baseline file kept, with its units (a record keeps its own). */
  cases?: import("../diff/cases.ts").KeptCase[];
  /** How a baseline file's cases compare: the fields it kept, and how. */
  casesKept?: import("../diff/cases.ts").CasesChangedOptions;
}

/**
 * Reads a RunRecord or Scores file, reporting malformed lines and an
 * unfinished run. An evalglass record's Scores of which none carries an id
 * (an older record's) get their positions' (`positionIds`), and stderr says
 * so; a Scores file of another's without ids is not paired by position: its
 * order says nothing of which case a Score is. `-` is stdin; stdin, a pipe (`/dev/stdin`, `<(...)`) or a
 * FIFO is first copied to a file of its own, since the readers look at a
 * file's start before they read it all and a pipe can be read only once.
 */
export async function readResults(path: string): Promise<Results> {
  const read: Results = await readResultsOf(path);
  if (read.evalglass !== true) return read;
  const { positionIds } = await import("../evalglass/positions.ts");
  const positioned = positionIds(read.scores);
  if (positioned === undefined) return read;
  sayPositions(inputName(path));
  read.scores = positioned;
  read.byPosition = true;
  return read;
}

async function readResultsOf(path: string): Promise<Results> {
  if (!(await isPipe(path))) return await readResultsAt(path, path);
  const copy = await Deno.makeTempFile({ prefix: "evalpipe-input-" });
  try {
    {
      const source = namedReads(
        path === "-" ? Deno.stdin.readable : (await openNamed(path)).readable,
        path,
      );
      const sink = await Deno.open(copy, { write: true, truncate: true });
      await source.pipeTo(sink.writable);
    }
    return await readResultsAt(copy, path);
  } catch (error) {
    // The readers name the file they read: the one the user gave, stdin
    // as every command names it.
    if (error instanceof Error) {
      error.message = error.message
        .replaceAll(JSON.stringify(copy), inputName(path))
        .replaceAll(copy, path === "-" ? "stdin" : path);
    }
    throw error;
  } finally {
    await Deno.remove(copy).catch(() => {});
  }
}

/**
 * Opens a path that is neither a file nor a folder (a FIFO, a device); one
 * the system will not open (a socket) is named in words, not a trace.
 */
async function openNamed(path: string): Promise<Deno.FsFile> {
  try {
    return await Deno.open(path);
  } catch (error) {
    if (!isOsError(error)) throw error;
    const { notAFileText } = await import("../io/_not_a_file.ts");
    throw new InputError(
      `Cannot read ${inputName(path)}: ${
        await notAFileText(path) ?? osErrorText(error)
      }`,
      { cause: error },
    );
  }
}

/** Whether a path is stdin or a file that can be read only once. */
async function isPipe(path: string): Promise<boolean> {
  if (path === "-") return true;
  try {
    const info = await Deno.stat(path);
    return !info.isFile && !info.isDirectory;
  } catch (error) {
    // Missing, unreadable: the reader that opens it next names why, in its
    // words. Anything else is a bug.
    if (!isOsError(error)) throw error;
    return false;
  }
}

async function readResultsAt(
  file: string,
  path: string,
): Promise<Results> {
  const [{ readScoresFile }, { readEvalglassRunRecord }] = await Promise.all([
    import("../record/scores_file.ts"),
    import("../evalglass/import.ts"),
  ]);
  const evalglass = await readEvalglassRunRecord(file);
  if (evalglass !== undefined) {
    sayEvalglass(inputName(path), evalglass);
    return {
      scores: evalglass.scores,
      ...(evalglass.value_ranges !== undefined
        ? { value_ranges: evalglass.value_ranges }
        : {}),
      problems: [],
      evalglass: true,
    };
  }
  if (await isBaseline(file)) {
    // A file `run --save-baseline` wrote: one JSON document, its units'
    // Scores with the ids of their unit.
    const { casesKept, readBaseline } = await import("../run/baseline.ts");
    const { scores, file: baseline } = await readBaseline(file);
    sayBaseline(inputName(path), scores.length);
    return {
      scores,
      problems: [],
      require: baseline.require,
      cases: baseline.units,
      casesKept: casesKept(baseline),
    };
  }
  const read = await readScoresFile(file);
  if (read.record === undefined && file === path) {
    // A Scores file's sidecar keeps the ranges a record would, and when a
    // case passes over its epochs.
    const { readMeta } = await import("../run/resume.ts");
    const meta = await readMeta(path);
    if (meta?.value_ranges !== undefined) read.value_ranges = meta.value_ranges;
    const require = meta?.settings?.require;
    if (require !== undefined) read.require = require;
  }
  for (const p of read.problems) {
    say(`evalpipe: Malformed Score in ${placeOf(path, p.line)}: ${p.message}`);
  }
  if (read.record !== undefined && !read.record.complete) {
    say(
      `evalpipe: ${inputName(path)} is the record of a run that did not finish`,
    );
  }
  return read;
}

/** Whether the file opens as `run --save-baseline` writes one. */
async function isBaseline(file: string): Promise<boolean> {
  let head: Uint8Array;
  try {
    using handle = await Deno.open(file);
    head = new Uint8Array(256);
    const n = await handle.read(head);
    head = head.subarray(0, n ?? 0);
  } catch (error) {
    // Missing, a folder, unreadable: the Scores reader that opens it next
    // names why. Anything else is a bug.
    if (!isOsError(error)) throw error;
    return false;
  }
  return /^\s*\{\s*"evalpipe_baseline"\s*:/.test(
    new TextDecoder().decode(head),
  );
}
