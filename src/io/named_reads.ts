/**
 * An input's bytes whose read errors name the input: stdin redirected from a
 * folder (`< units/`), or a disk that fails mid-file, is an input error with
 * a message, not a crash.
 *
 * @module
 */

import { InputError, osErrorText } from "../base/errors.ts";

/**
 * `bytes`, with a failed read turned into an {@linkcode InputError} that
 * names the input: `Cannot read stdin: it is a folder`. Linux opens a folder
 * for reading (stdin may be one), and only reading it fails.
 *
 * @param bytes The input's bytes.
 * @param name `stdin`, or the path as given.
 * @returns The same bytes.
 *
 * @example
 * ```ts
 * import { namedReads } from "./named_reads.ts";
 * const failing = new ReadableStream<Uint8Array>({
 *   pull() {
 *     throw Object.assign(new Error("Is a directory (os error 21)"), { code: "EISDIR" });
 *   },
 * });
 * const error = await new Response(namedReads(failing, "stdin")).text().then(() => undefined, (e: unknown) => e);
 * if (!(error instanceof Error) || error.message !== "Cannot read stdin: Is a directory (os error 21)") throw error;
 * ```
 */
export function namedReads(
  bytes: ReadableStream<Uint8Array>,
  name: string,
): ReadableStream<Uint8Array> {
  const reader = bytes.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        throw readError(error, name);
      }
      if (chunk.done) {
        // Let go of the input at its end, as a pipe does: stdin may be read
        // again in the same process (a second `main()`, a script).
        reader.releaseLock();
        controller.close();
      } else controller.enqueue(chunk.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/** The operating system's errors carry a `code` (`EISDIR`, `EIO`); others are bugs. */
function readError(error: unknown, name: string): unknown {
  if (
    !(error instanceof Error) ||
    typeof (error as { code?: unknown }).code !== "string"
  ) {
    return error;
  }
  const where = name === "stdin" ? name : JSON.stringify(name);
  return new InputError(`Cannot read ${where}: ${osErrorText(error)}`, {
    cause: error,
  });
}
