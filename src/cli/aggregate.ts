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
  summary: "Aggregate Scores (NDJSON on stdin) per metric",
  usage: "[options] < scores.ndjson",
  description:
    `Reads Scores (NDJSON) on stdin and writes one Aggregate per metric, sorted by
metric: counts by status, mean over scored and valid Scores, its standard
error and 95% interval, pass rate and its Wilson interval. Scores are reduced
per example first (epochs averaged), which expects the Scores of one example
to be adjacent, as evalpipe writes them. Aggregate lines in the input (from
shards split between examples) are merged exactly. An evalglass
runrecord.json piped in (as evalglass writes it, or as one line) is read as
its Scores; what is not mapped is named on stderr.`,
  flags: {
    grouped: {
      type: "boolean",
      help:
        "Gather each example's Scores wherever they stand in the input (memory grows with the number of examples)",
    },
  },
  async run(flags) {
    const [
      { aggregateLines },
      { LineStream },
      { NdjsonParseStream, ndjsonSink },
      { stdoutWriter },
      { evalglassLines },
      { sayEvalglass },
    ] = await Promise.all([
      import("../aggregate/lines.ts"),
      import("../io/line_stream.ts"),
      import("../io/ndjson.ts"),
      import("../io/stdout.ts"),
      import("../evalglass/lines.ts"),
      import("./_results.ts"),
    ]);
    let malformed = 0;
    try {
      await Deno.stdin.readable
        .pipeThrough(new LineStream())
        .pipeThrough(new NdjsonParseStream())
        .pipeThrough(evalglassLines({
          onRecord: (read, line) => sayEvalglass(`stdin line ${line}`, read),
        }))
        .pipeThrough(aggregateLines({
          grouped: flags.grouped,
          onMalformed(line, message) {
            malformed++;
            say(`evalpipe: Malformed Score on stdin line ${line}: ${message}`);
          },
        }))
        .pipeTo(ndjsonSink(stdoutWriter()));
    } catch (error) {
      if (!isBrokenPipe(error)) throw error;
    }
    return malformed > 0 ? 2 : 0;
  },
});
