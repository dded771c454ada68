/**
 * `evalpipe aggregate`: Scores (and shards' Aggregates) on stdin, one
 * Aggregate per metric on stdout.
 *
 * @module
 */

import { defineCommand } from "./command.ts";
import { stdinOnce, UsageError } from "./flags.ts";
import { InputError } from "../base/errors.ts";
import { inputName } from "../base/place.ts";
import { isBrokenPipe, say } from "./_output.ts";
import type { ParsedLine } from "../io/ndjson.ts";
import { INVALID_UTF8, TOO_LONG } from "../io/line_stream.ts";
import { isRunRecord } from "../record/_sniff.ts";

/** How many Scores given twice are named one by one. */
const SHOWN_DUPLICATES = 3;

/** The `aggregate` command. */
export const aggregate = defineCommand({
  name: "aggregate",
  summary: "Aggregate Scores (NDJSON files or stdin) per metric",
  usage: "[SCORES...] [options]",
  description:
    `Reads Scores (NDJSON) from the files named, in order, or from stdin when
none is named (or one is -), and writes one Aggregate per metric, sorted by
metric: counts by status, mean over scored and valid Scores, its standard
error and 95% interval, pass rate and its Wilson interval. Scores are reduced
per example first (epochs averaged), which expects the Scores of one example
to be adjacent, as evalpipe writes them: an example whose Scores stand apart
stops aggregate with a message (use --grouped). Aggregate lines in the input (from
shards split between examples) are merged exactly, with the value range each
declares. Scores do not carry their scorer's range: give it with --range to
clamp the mean's interval to it, as run does for its scorers. An evalpipe
RunRecord (run --record) among the inputs is read as its Scores, with the
ranges it keeps. An evalglass runrecord.json (as evalglass writes it, or as one
line) is read as its Scores, with the ranges evalpipe's export keeps in it;
what is not mapped is named on stderr. So is a baseline (run --save-baseline).`,
  positionals: {
    names: ["[SCORES...]"],
    error: "aggregate takes Scores files",
    files: true,
  },
  flags: {
    range: {
      type: "string",
      repeatable: true,
      value: "METRIC=LOW..HIGH",
      help:
        "The range the values of METRIC lie within, e.g. faithfulness=0..1, as its scorer declares it: the mean's 95% interval is clamped to it; LOW..HIGH alone is every metric's",
    },
    grouped: {
      type: "boolean",
      help:
        "Gather each example's Scores wherever they stand in the input (memory grows with the number of examples)",
    },
  },
  async run(flags, paths) {
    stdinOnce("aggregate", paths);
    const valueRange = rangesOf(flags.range);
    const [
      { aggregateLines },
      { inputLines, placeOf },
      { ndjsonSink },
      { stdoutWriter },
      { evalglassLines },
      { sayEvalglass, sayPositions },
      { positionIds },
    ] = await Promise.all([
      import("../aggregate/lines.ts"),
      import("./_inputs.ts"),
      import("../io/ndjson.ts"),
      import("../io/stdout.ts"),
      import("../evalglass/lines.ts"),
      import("./_results.ts"),
      import("../evalglass/positions.ts"),
    ]);
    let malformed = 0;
    let duplicates = 0;
    // An evalglass record is one JSON document over many lines: each input
    // is read for one on its own, and for an evalpipe RunRecord.
    const recordRanges = new Map<string, readonly [number, number]>();
    // A document that is the whole file is named as view and diff name it
    // ("run.json"); one further into a stream, by the line it starts on.
    const documentPlace = (path: string, line: number) =>
      line !== 1 ? placeOf({ name: path, line }) : inputName(path);
    const input = inputLines(paths, (name, path) => {
      const glass = evalglassLines({
        onDocument: (value, line) =>
          documentLines(value, path, documentPlace(path, line), recordRanges),
        onRecord: (read, line) => {
          // The ranges evalpipe's export kept, as a RunRecord's are kept.
          for (
            const [metric, range] of Object.entries(read.value_ranges ?? {})
          ) {
            if (!recordRanges.has(metric)) recordRanges.set(metric, range);
          }
          sayEvalglass(documentPlace(path, line), read);
          // Each Score without ids counts as an example of its own, as
          // view and diff take its position for one: say so as they do.
          if (positionIds(read.scores) !== undefined) {
            sayPositions(documentPlace(path, line));
          }
        },
      });
      const records = runRecordLines(name, recordRanges, (message) => {
        malformed++;
        say(`evalpipe: ${message}`);
      });
      return {
        writable: glass.writable,
        readable: glass.readable.pipeThrough(records),
      };
    });
    // A matrix run's Scores (issue 14): after the Aggregates, one
    // "comparison" line per metric, its targets compared with the first.
    const matrix: import("../score/mod.ts").Score[] = [];
    const comparison = new TransformStream<unknown, unknown>({
      async flush(controller) {
        if (matrix.length === 0) return;
        const { compareTargets } = await import("../diff/compare.ts");
        for (const line of compareTargets(matrix, { valueRange })) {
          controller.enqueue(line);
        }
      },
    });
    // Ctrl-C reaches every process of a pipeline: `run` finishes the cases
    // running and closes its stdout, so the Scores it wrote are still
    // aggregated, and the exit then says the input was interrupted. A
    // second signal stops at once.
    let interrupted: "SIGINT" | "SIGTERM" | undefined;
    const signals = (["SIGINT", "SIGTERM"] as const).map((sig) => {
      const handler = () => {
        if (interrupted !== undefined) Deno.exit(sig === "SIGINT" ? 130 : 143);
        interrupted = sig;
        say(
          `evalpipe: ${sig}: aggregating the Scores read until the input ends (again to stop at once)`,
        );
      };
      Deno.addSignalListener(sig, handler);
      return [sig, handler] as const;
    });
    try {
      await input.lines
        .pipeThrough(aggregateLines({
          grouped: flags.grouped,
          // A flag's range, else the one a RunRecord among the inputs keeps.
          valueRange: (metric) =>
            valueRange(metric) ?? recordRanges.get(metric),
          onScattered(line, exampleId, metric) {
            throw new InputError(
              `The Scores of example ${JSON.stringify(exampleId)} (metric ${
                JSON.stringify(metric)
              }) are not adjacent: ${
                placeOf(input.where(line))
              } comes after other examples' Scores, so it would count as a second example. Run aggregate --grouped to gather each example wherever it stands (and to count once a Score the input holds twice), or sort the input by example_id`,
            );
          },
          onDuplicate(line, score) {
            // A file given twice would name every line: the first few do.
            if (++duplicates > SHOWN_DUPLICATES) return;
            say(
              `evalpipe: Score given twice in ${
                placeOf(input.where(line))
              }: unit ${
                JSON.stringify(score.unit_id)
              } already has a Score of metric ${JSON.stringify(score.metric)}${
                score.target_name === undefined
                  ? ""
                  : ` for target ${JSON.stringify(score.target_name)}`
              }; counted once`,
            );
          },
          onScore(score) {
            if (score.target_name !== undefined) matrix.push(score);
          },
          onMalformed(line, message) {
            malformed++;
            say(
              `evalpipe: Malformed Score in ${
                placeOf(input.where(line))
              }: ${message}`,
            );
          },
        }))
        .pipeThrough(comparison)
        .pipeTo(ndjsonSink(stdoutWriter()));
    } catch (error) {
      if (!isBrokenPipe(error)) throw error;
    } finally {
      for (const [sig, handler] of signals) {
        Deno.removeSignalListener(sig, handler);
      }
    }
    if (duplicates > SHOWN_DUPLICATES) {
      say(
        `evalpipe: ${duplicates} Scores in all were given twice (same unit, metric and target); each counted once`,
      );
    }
    if (interrupted !== undefined) return interrupted === "SIGINT" ? 130 : 143;
    return malformed + duplicates > 0 ? 2 : 0;
  },
});

/**
 * A baseline file (`run --save-baseline`) among the inputs, or a RunRecord
 * laid out otherwise than evalpipe writes it (indented by `jq .` or an
 * editor), as its Scores, each example's together, the record's ranges kept;
 * `undefined` for any other document.
 */
async function documentLines(
  value: unknown,
  path: string,
  where: string,
  ranges: Map<string, readonly [number, number]>,
): Promise<unknown[] | undefined> {
  if (typeof value !== "object" || value === null) return undefined;
  if ("evalpipe_run_record" in value) {
    const { parseRunRecord } = await import("../record/run_record.ts");
    let record: import("../record/run_record.ts").RunRecord;
    try {
      // Parsed already: its text is written again compactly, for the
      // record's own reader.
      record = parseRunRecord(JSON.stringify(value), path);
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      return [named(error, path)];
    }
    for (const [metric, range] of Object.entries(record.value_ranges ?? {})) {
      if (!ranges.has(metric)) ranges.set(metric, range);
    }
    return groupedByExample(record.scores);
  }
  if (!("evalpipe_baseline" in value)) return undefined;
  const { baselineScores } = await import("../run/baseline.ts");
  let scores: import("../score/mod.ts").Score[];
  try {
    scores = baselineScores(value, path).scores;
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    return [named(error, path)];
  }
  (await import("./_results.ts")).sayBaseline(where, scores.length);
  return groupedByExample(scores);
}

/**
 * `error`, its input named as every message names it (`stdin`, unquoted, for
 * `-`; a file named `stdin` quoted), as view's and diff's readers are.
 */
function named(error: Error, path: string): Error {
  error.message = error.message.replaceAll(
    JSON.stringify(path),
    inputName(path),
  );
  return error;
}

/**
 * Scores with each example's together, examples in the order they first
 * come: what aggregate's stream expects of a file that is not written in
 * that order (a record's units end as they finish).
 */
function groupedByExample(
  scores: readonly import("../score/mod.ts").Score[],
): import("../score/mod.ts").Score[] {
  const byExample = new Map<string, import("../score/mod.ts").Score[]>();
  for (const score of scores) {
    const key = score.example_id ?? "";
    const list = byExample.get(key);
    if (list === undefined) byExample.set(key, [score]);
    else list.push(score);
  }
  return [...byExample.values()].flat();
}

/**
 * Reads an evalpipe RunRecord among the inputs as the Scores it holds, each
 * example's together, and keeps the ranges it declares; any other input
 * passes as it is. The record is one JSON document laid out a unit a line.
 */
function runRecordLines(
  name: string,
  ranges: Map<string, readonly [number, number]>,
  onInvalid: (message: string) => void,
): TransformStream<ParsedLine, ParsedLine> {
  let first = true;
  let document: string[] | undefined;
  let start = 0;
  // A line the splitter could not read (not UTF-8, too long): its text is
  // not the file's, so the record is read as the record's readers read it,
  // up to that line when it is the last, refused when lines follow it.
  let unread: { line: number; error: string; followed?: true } | undefined;
  return new TransformStream({
    transform(parsed, controller) {
      if (document !== undefined) {
        if (unread !== undefined) {
          if (parsed.text.trim() !== "") unread.followed = true;
        } else if (
          parsed.error === INVALID_UTF8 || parsed.error?.startsWith(TOO_LONG)
        ) {
          unread = { line: parsed.line, error: parsed.error };
        } else document.push(parsed.text);
        return;
      }
      if (first && isRunRecord(parsed.text)) {
        document = [parsed.text];
        start = parsed.line;
      } else controller.enqueue(parsed);
      first = false;
    },
    async flush(controller) {
      if (document === undefined) return;
      const [{ parseRunRecord }, { notLastMessage, unreadable }] = await Promise
        .all([
          import("../record/run_record.ts"),
          import("../record/_record_lines.ts"),
        ]);
      if (unread?.followed) {
        return onInvalid(
          notLastMessage(name, unread.line, unreadable(unread.error)),
        );
      }
      let record: import("../record/run_record.ts").RunRecord;
      try {
        record = parseRunRecord(document.join("\n"), name);
      } catch (error) {
        // The record's error names the file and the line wrong.
        if (!(error instanceof SyntaxError)) throw error;
        return onInvalid(error.message);
      }
      for (const [metric, range] of Object.entries(record.value_ranges ?? {})) {
        if (!ranges.has(metric)) ranges.set(metric, range);
      }
      // Units end in the order they finish: an example's epochs are
      // gathered, in the order they came.
      for (const value of groupedByExample(record.scores)) {
        controller.enqueue({ line: start, text: "", value });
      }
    },
  });
}

/** The `--range` flags as a lookup: a metric's own range, else the one for all. */
function rangesOf(
  flags: readonly string[],
): (metric: string) => readonly [number, number] | undefined {
  const ranges = new Map<string | undefined, readonly [number, number]>();
  for (const flag of flags) {
    const match = /^(?:(.+)=)?([^=]+?)\.\.([^=.][^=]*)$/.exec(flag);
    const low = Number(match?.[2]);
    const high = Number(match?.[3]);
    if (
      match === null || match[2]!.trim() === "" || match[3]!.trim() === "" ||
      !Number.isFinite(low) || !Number.isFinite(high) || low > high
    ) {
      throw new UsageError(
        `--range ${
          JSON.stringify(flag)
        } is not a range: write LOW..HIGH or METRIC=LOW..HIGH, low to high, e.g. 0..1`,
      );
    }
    const earlier = ranges.get(match[1]);
    if (earlier !== undefined) {
      // Two ranges for one metric: which was meant cannot be guessed.
      throw new UsageError(
        `--range ${JSON.stringify(flag)}: ${
          match[1] === undefined
            ? "the range of every metric"
            : `the range of ${JSON.stringify(match[1])}`
        } is given twice (${
          earlier.join("..")
        } and ${low}..${high}); give it once`,
      );
    }
    ranges.set(match[1], [low, high]);
  }
  const all = ranges.get(undefined);
  return (metric) => ranges.get(metric) ?? all;
}
