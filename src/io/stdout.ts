/**
 * The write policy for stdout: at once when nothing can make a write wait,
 * asynchronously when a reader at the other end can.
 *
 * @module
 */

import { outputErrorOf } from "../base/errors.ts";
import { type ByteWriter, releasing } from "./text_writer.ts";

/**
 * Stdout as a {@linkcode ByteWriter}: written synchronously when it is a file
 * or `/dev/null`, which never wait for a reader (an asynchronous write costs
 * a round trip to Deno's thread pool, about a tenth of a trivial scorer's
 * run); asynchronously when it is a pipe, a terminal or a socket, so that a
 * reader that stalls cannot hold up the timeouts and signals of the runs
 * under way. Without `/proc` (or the permission to read it), always
 * asynchronously. A write to a file the disk refuses (ENOSPC, EROFS,
 * EDQUOT...) throws an `OutputError` (exit code 3) naming stdout; a reader
 * that went away throws `Deno.errors.BrokenPipe`.
 *
 * @returns The writer.
 *
 * @example
 * ```ts
 * import { stdoutWriter } from "./stdout.ts";
 * import { ndjsonSink } from "./ndjson.ts";
 * // Scores written to stdout, at once when it is a file.
 * await ReadableStream.from<unknown>([]).pipeTo(ndjsonSink(stdoutWriter()));
 * ```
 */
export function stdoutWriter(): ByteWriter {
  let info: Deno.FileInfo | undefined;
  try {
    info = Deno.statSync("/proc/self/fd/1");
  } catch (error) {
    // No /proc, or no permission to look at it: asynchronous writes are
    // right for every kind of stdout.
    if (
      !(error instanceof Deno.errors.NotFound ||
        error instanceof Deno.errors.NotCapable ||
        error instanceof Deno.errors.PermissionDenied)
    ) throw error;
  }
  const neverWaits = info !== undefined &&
    (info.isFile || (info.isCharDevice === true && !Deno.stdout.isTerminal()));
  // A pipe or a terminal is never full: no error to name on this side.
  if (!neverWaits) return Deno.stdout;
  return releasing({
    write(p) {
      try {
        return Promise.resolve(Deno.stdout.writeSync(p));
      } catch (error) {
        return Promise.reject(outputErrorOf(error, "stdout") ?? error);
      }
    },
  });
}
