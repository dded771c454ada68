/**
 * NDJSON: parsing numbered lines into values, and a sink that writes one
 * value per line as they come, in few system calls.
 *
 * @module
 */

import type { Line } from "./line_stream.ts";
import { type ByteWriter, TextWriter } from "./_text_writer.ts";

export type { ByteWriter } from "./_text_writer.ts";

/** One parsed NDJSON line: its value, or why it could not be parsed. */
export type ParsedLine =
  | { line: number; text: string; value: unknown; error?: undefined }
  | { line: number; text: string; value?: undefined; error: string };

/**
 * Parses each non-blank line as JSON; a line that is not JSON (or not UTF-8,
 * or too long) becomes an entry with `error`, and the stream goes on.
 *
 * @example
 * ```ts
 * import { LineStream } from "./line_stream.ts";
 * import { NdjsonParseStream } from "./ndjson.ts";
 * const bytes = new TextEncoder().encode('{"a":1}\n\nnope\n');
 * const out = await Array.fromAsync(
 *   ReadableStream.from([bytes]).pipeThrough(new LineStream()).pipeThrough(new NdjsonParseStream()),
 * );
 * if (out.length !== 2 || out[1]?.error === undefined || out[1].line !== 3) throw new Error();
 * ```
 */
export class NdjsonParseStream extends TransformStream<Line, ParsedLine> {
  constructor() {
    super({
      transform(line, controller) {
        if (line.error !== undefined) {
          controller.enqueue({
            line: line.line,
            text: line.text,
            error: line.error,
          });
          return;
        }
        if (line.text.trim() === "") return;
        try {
          controller.enqueue({
            line: line.line,
            text: line.text,
            value: JSON.parse(line.text),
          });
        } catch (error) {
          if (!(error instanceof SyntaxError)) throw error;
          controller.enqueue({
            line: line.line,
            text: line.text,
            error: `Cannot parse JSON: ${error.message}`,
          });
        }
      },
    });
  }
}

/** Options of {@linkcode ndjsonSink}. */
export interface NdjsonSinkOptions {
  /**
   * Buffered text that forces a write before the next value is taken.
   * @default {65536}
   */
  flushChars?: number;
}

/**
 * A sink writing each value as one line of compact JSON. Lines that arrive
 * together are written together; a lone line is written as soon as the
 * event loop turns, so output appears as it is produced. Only whole lines
 * are ever written.
 *
 * @param dest Where to write.
 * @param options The buffer size.
 * @returns The sink.
 *
 * @example
 * ```ts
 * import { ndjsonSink } from "./ndjson.ts";
 * const chunks: Uint8Array[] = [];
 * const dest = { write: (p: Uint8Array) => (chunks.push(p.slice()), Promise.resolve(p.length)) };
 * await ReadableStream.from([{ a: 1 }, { b: 2 }]).pipeTo(ndjsonSink(dest));
 * const text = new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
 * if (text !== '{"a":1}\n{"b":2}\n') throw new Error(text);
 * ```
 */
export function ndjsonSink(
  dest: ByteWriter,
  options: NdjsonSinkOptions = {},
): WritableStream<unknown> {
  return textSink(dest, options, false, lineOf);
}

/**
 * Like {@linkcode ndjsonSink}, for a stream of batches: each value of each
 * batch becomes one line, and a batch is written in one go.
 *
 * @param dest Where to write.
 * @param options The buffer size.
 * @returns The sink.
 */
export function ndjsonBatchSink(
  dest: ByteWriter,
  options: NdjsonSinkOptions = {},
): WritableStream<readonly unknown[]> {
  // A batch is already what arrived together: it is written once the
  // microtasks that made it are done, without waiting for a timer.
  return textSink(dest, options, true, (batch: readonly unknown[]) => {
    let text = "";
    for (const value of batch) text += lineOf(value);
    return text;
  });
}

/** One NDJSON line; undefined, functions and symbols have no JSON text. */
function lineOf(value: unknown): string {
  const line = JSON.stringify(value);
  if (line === undefined) {
    throw new TypeError(`Cannot write ${typeof value} as NDJSON`);
  }
  return line + "\n";
}

function textSink<T>(
  dest: ByteWriter,
  options: NdjsonSinkOptions,
  microtask: boolean,
  toText: (chunk: T) => string,
): WritableStream<T> {
  const out = new TextWriter(dest, options.flushChars, microtask);
  return new WritableStream<T>({
    write(chunk) {
      try {
        return out.write(toText(chunk));
      } catch (error) {
        // A throw errors the stream without a call to abort(): stop the timer here.
        out.discard();
        throw error;
      }
    },
    close() {
      return out.flush();
    },
    abort() {
      out.discard();
    },
  });
}
