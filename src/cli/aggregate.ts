/**
 * `evalpipe aggregate`: Scores (and shards' Aggregates) on stdin, one
 * Aggregate per metric on stdout.
 *
 * @module
 */

import { defineCommand } from "./command.ts";
import { isBrokenPipe, say } from "./_output.ts";

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
to be adjacent, as evalpipe writes them. Aggregate lines in the input (from
shards split between examples) are merged exactly. An evalglass
runrecord.json among the inputs (as evalglass writes it, or as one line) is
read as its Scores; what is not mapped is named on stderr.`,
  positionals: {
    names: ["[SCORES...]"],
    error: "aggregate takes Scores files",
    files: true,
  },
  flags: {
    grouped: {
      type: "boolean",
      help:
        "Gather each example's Scores wherever they stand in the input (memory grows with the number of examples)",
    },
  },
  async run(flags, paths) {
    const [
      { aggregateLines },
      { inputLines, placeOf },
      { ndjsonSink },
      { stdoutWriter },
      { evalglassLines },
      { sayEvalglass },
    ] = await Promise.all([
      import("../aggregate/lines.ts"),
      import("./_inputs.ts"),
      import("../io/ndjson.ts"),
      import("../io/stdout.ts"),
      import("../evalglass/lines.ts"),
      import("./_results.ts"),
    ]);
    let malformed = 0;
    // An evalglass record is one JSON document over many lines: each input
    // is read for one on its own.
    const input = inputLines(paths, (name) =>
      evalglassLines({
        source: name,
        onRecord: (read, line) => sayEvalglass(placeOf({ name, line }), read),
      }));
    try {
      await input.lines
        .pipeThrough(aggregateLines({
          grouped: flags.grouped,
          onMalformed(line, message) {
            malformed++;
            say(
              `evalpipe: Malformed Score on ${
                placeOf(input.where(line))
              }: ${message}`,
            );
          },
        }))
        .pipeTo(ndjsonSink(stdoutWriter()));
    } catch (error) {
      if (!isBrokenPipe(error)) throw error;
    }
    return malformed > 0 ? 2 : 0;
  },
});
