/**
 * An input's bytes whose read errors name the input: stdin redirected from a
 * folder (`< units/`), or a disk that fails mid-file, is an input error with
 * a message, not a crash.
 *
 * @module
 */

import { InputError, osErrorText } from "../base/errors.ts";
import { inputName } from "../base/place.ts";

/**
 * `bytes`, with a failed read turned into an {@linkcode InputError} that
 * names the input: `Cannot read stdin: it is a folder`. Linux opens a folder
 * for reading (stdin may be one), and only reading it fails.
 *
 * @param bytes The input's bytes.
 * @param name The input as given: `-` for stdin (named so), or its path (quoted:
 *   a file named `stdin` is a file).
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
 * const error = await new Response(namedReads(failing, "-")).text().then(() => undefined, (e: unknown) => e);
 * if (!(error instanceof Error) || error.message !== "Cannot read stdin: Is a directory (os error 21)") throw error;
 * ```
 */
export function namedReads(
  bytes: ReadableStream<Uint8Array>,
  name: string,
): ReadableStream<Uint8Array> {
  const reader = bytes.getReader();
  const read = async () => {
    try {
      return await reader.read();
    } catch (error) {
      throw readError(error, name);
    }
  };
  // Until the first bytes are checked: a byte-order mark is two bytes
  // (UTF-16) or four (UTF-32), so up to four are held back.
  let checked = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk = await read();
      if (!checked) {
        checked = true;
        const parts: Uint8Array[] = [];
        let held = 0;
        while (!chunk.done) {
          parts.push(chunk.value);
          held += chunk.value.length;
          if (held >= 4) break;
          chunk = await read();
        }
        const first = parts.length === 1 ? parts[0]! : concat(parts, held);
        const problem = notUtf8(first.subarray(0, 4));
        if (problem !== undefined) {
          await reader.cancel();
          throw new InputError(
            `Cannot read ${inputName(name)}: ${problem}`,
          );
        }
        if (held > 0) controller.enqueue(first);
        if (!chunk.done) return;
      }
      if (chunk.done) {
        // Let go of the input at its end, as a pipe does: stdin may be read
        // again in the same process (a second `main()`, a script).
        reader.releaseLock();
        controller.close();
        return;
      }
      controller.enqueue(chunk.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/** The parts as one array of `size` bytes. */
function concat(parts: readonly Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * Why text starting with these (up to four) bytes is UTF-16 or UTF-32, not
 * UTF-8, or `undefined`. Read as UTF-8, each of its lines would be a
 * malformed record of NUL bytes, and its last newline's other bytes one more
 * (Windows PowerShell's `>` writes UTF-16). No JSON text holds a NUL byte.
 * UTF-32's marks come first: the little-endian one starts as UTF-16's does.
 */
function notUtf8(first: Uint8Array): string | undefined {
  const [a, b, c, d] = first;
  if (
    (a === 0 && b === 0 && c === 0xfe && d === 0xff) ||
    (a === 0xff && b === 0xfe && c === 0 && d === 0)
  ) {
    return "it is UTF-32 text (it starts with a UTF-32 byte-order mark), not UTF-8; convert it with iconv -f UTF-32 -t UTF-8";
  }
  if ((a === 0xff && b === 0xfe) || (a === 0xfe && b === 0xff)) {
    return "it is UTF-16 text (it starts with a UTF-16 byte-order mark), not UTF-8; save it as UTF-8";
  }
  if (first.length === 4 && b === 0 && c === 0 && (a === 0) !== (d === 0)) {
    // One byte in four set: ASCII in UTF-32 without a mark, either order.
    return `it holds NUL bytes (UTF-32 text?), not UTF-8 text; convert it with iconv -f ${
      a === 0 ? "UTF-32BE" : "UTF-32LE"
    } -t UTF-8`;
  }
  if (a === 0 || b === 0) {
    return "it holds NUL bytes (UTF-16 text?), not UTF-8 text; save it as UTF-8";
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
  return new InputError(
    `Cannot read ${inputName(name)}: ${osErrorText(error)}`,
    {
      cause: error,
    },
  );
}
