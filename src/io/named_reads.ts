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
  // The first two bytes, until they are checked (then `null`).
  let head: number[] | null = [];
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
        return;
      }
      if (head !== null) {
        for (const byte of chunk.value.subarray(0, 2 - head.length)) {
          head.push(byte);
        }
        if (head.length === 2) {
          const problem = utf16(head[0]!, head[1]!);
          head = null;
          if (problem !== undefined) {
            await reader.cancel();
            throw new InputError(
              `Cannot read ${
                name === "stdin" ? name : JSON.stringify(name)
              }: ${problem}; save it as UTF-8`,
            );
          }
        }
      }
      controller.enqueue(chunk.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/**
 * Why text starting with these two bytes is UTF-16, not UTF-8, or
 * `undefined`. Read as UTF-8, each of its lines would be a malformed record
 * of NUL bytes, and its last newline's second byte one more (Windows
 * PowerShell's `>` writes UTF-16). No JSON text holds a NUL byte.
 */
function utf16(first: number, second: number): string | undefined {
  if (
    (first === 0xff && second === 0xfe) || (first === 0xfe && second === 0xff)
  ) {
    return "it is UTF-16 text (it starts with a UTF-16 byte-order mark), not UTF-8";
  }
  if (first === 0 || second === 0) {
    return "it holds NUL bytes (UTF-16 text?), not UTF-8 text";
  }
  return undefined;
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
