// The progress line `run` and `score` draw on stderr when it is a terminal:
// units done of the total (or a counter when the total is unknown), rate,
// ETA, errors so far, units in flight, and what holds the network calls
// back. Redrawn in place at most ten times a second; ended with a newline.

import type { FlowWatch } from "../net/flow.ts";
import { ProgressLine } from "../run/progress_line.ts";
import { writeStderr } from "./_stderr.ts";

export type {
  ProgressLineOptions,
  ProgressNumbers,
} from "../run/progress_line.ts";
export {
  flowNote,
  formatDuration,
  formatFrame,
  ProgressLine,
} from "../run/progress_line.ts";

/** The columns of the terminal on stderr; one that reports none gets 120. */
function stderrColumns(): number {
  try {
    const { columns } = Deno.consoleSize();
    return columns > 0 ? columns : 120;
  } catch (error) {
    // No console to ask (stdin, stdout and stderr are not terminals here).
    if (!(error instanceof Error)) throw error;
    return 120;
  }
}

/**
 * The progress line on stderr, when stderr is a terminal; `undefined`
 * otherwise (nothing is drawn at all then). Colours unless `NO_COLOR` is
 * set and not empty.
 *
 * @param flow The run's flow watch, when its network calls are watched.
 * @returns The line, not yet begun.
 */
export function progressOnStderr(flow?: FlowWatch): ProgressLine | undefined {
  if (!Deno.stderr.isTerminal()) return undefined;
  const noColor = Deno.env.get("NO_COLOR");
  return new ProgressLine({
    write: writeStderr,
    columns: stderrColumns,
    color: noColor === undefined || noColor === "",
    ...(flow !== undefined ? { flow } : {}),
  });
}
