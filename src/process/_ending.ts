/**
 * How a run that ended before its command did reads as a {@linkcode RunResult}:
 * the one mapping both backends use.
 *
 * @module
 */

import type { RunCommandOptions, RunResult } from "./types.ts";

/** Why a run ended before its command did (beyond a backend's own failures). */
export type EarlyEnding = "timeout" | "aborted" | "stdout" | "stderr";

/**
 * The result of a run that ended early: aborted, timed out, or past an
 * output cap (the stream that overflowed and its cap); `undefined` when the
 * command ended on its own and its exit status is the result.
 */
export function earlyResult(
  ending: EarlyEnding | undefined,
  options: Pick<RunCommandOptions, "maxStdoutBytes" | "maxStderrBytes">,
  ms: number,
): RunResult | undefined {
  switch (ending) {
    case undefined:
      return undefined;
    case "aborted":
      return { kind: "aborted" };
    case "timeout":
      return { kind: "timeout", ms };
    case "stdout":
      return {
        kind: "overflow",
        stream: ending,
        limit: options.maxStdoutBytes,
        ms,
      };
    case "stderr":
      return {
        kind: "overflow",
        stream: ending,
        limit: options.maxStderrBytes,
        ms,
      };
  }
}
