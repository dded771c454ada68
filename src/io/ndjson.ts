/**
 * NDJSON: parsing numbered lines into values, and a sink that writes one
 * value per line as they come, in few system calls.
 *
 * @module
 */

import { countOption } from "../base/_count.ts";
import { inertJson } from "./inert_json.ts";
import { skipSpace, skipValue } from "./_json_scan.ts";
import type { Line } from "./line_stream.ts";
import { type ByteWriter, TextWriter } from "./text_writer.ts";

export type { ByteWriter } from "./text_writer.ts";
export { releasing } from "./text_writer.ts";

/**
 * One parsed NDJSON line: its value, or why it could not be parsed.
 *
 * @example Keep the values, report the rest by line
 * ```ts
 * import { LineStream, NdjsonParseStream, type ParsedLine } from "./mod.ts";
 * const bytes = new TextEncoder().encode('{"input":"2+2?"}\n{"input":\n');
 * const parsed: ParsedLine[] = await Array.fromAsync(
 *   ReadableStream.from([bytes]).pipeThrough(new LineStream()).pipeThrough(new NdjsonParseStream()),
 * );
 * const problems = parsed.filter((p) => p.error !== undefined).map((p) => `line ${p.line}: ${p.error}`);
 * if (problems.length !== 1 || !problems[0]!.startsWith("line 2: Cannot parse JSON")) throw new Error("unexpected");
 * ```
 */
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
 * if (out.length !== 2 || out[1]?.error === undefined || out[1].line !== 3) throw new Error("unexpected");
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
        // Blank: nothing but white space (JSON's, or what else trim() knows:
        // a form feed, a vertical tab, Unicode's), only looked for beyond
        // JSON's when the line ends in a control or non-ASCII character.
        const end = lastNonSpace(line.text);
        if (
          end === -1 || ((end < 32 || end > 126) && line.text.trim() === "")
        ) return;
        // A line of an indented document, as jq prints, holds no whole
        // value: said so without JSON.parse's throw, which costs V8
        // microseconds a line.
        const partial = partOfValue(line.text);
        if (partial !== undefined) {
          controller.enqueue({
            line: line.line,
            text: line.text,
            error: partial,
          });
          return;
        }
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

/**
 * Options of {@linkcode ndjsonSink} and {@linkcode ndjsonBatchSink}.
 *
 * @example Write Scores with their canonical line
 * ```ts
 * import { ndjsonSink, type NdjsonSinkOptions } from "./mod.ts";
 * import { type Score, scored, scoreLine } from "../score/mod.ts";
 * let text = "";
 * const dest = { write: (p: Uint8Array) => (text += new TextDecoder().decode(p), Promise.resolve(p.length)) };
 * const options: NdjsonSinkOptions<Score> = { stringify: scoreLine, flushChars: 1 << 16 };
 * await ReadableStream.from([scored("m", 1)]).pipeTo(ndjsonSink(dest, options));
 * if (text !== scoreLine(scored("m", 1)) + "\n") throw new Error(text);
 * ```
 */
export interface NdjsonSinkOptions<T = unknown> {
  /**
   * Buffered text that forces a write before the next value is taken (a
   * whole number of at least 1).
   * @default {65536}
   */
  flushChars?: number | undefined;
  /**
   * Turns a value into its line's JSON text, such as
   * {@linkcode import("../score/mod.ts").scoreLine} for Scores; its text is
   * written as it returns it. The default is `JSON.stringify` with what a
   * terminal could act on escaped ({@linkcode inertJson}).
   * @default {inertJson(JSON.stringify(value))}
   */
  stringify?: ((value: T) => string) | undefined;
}

/**
 * A sink writing each value as one line of compact JSON. A lone line is
 * written once the microtasks that made it are done, so output appears as it
 * is produced; lines that come while a write is under way go out together
 * when it ends. Only whole lines are ever written.
 *
 * @param dest Where to write.
 * @param options The buffer size and how a value becomes JSON text.
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
export function ndjsonSink<T = unknown>(
  dest: ByteWriter,
  options: NdjsonSinkOptions<T> = {},
): WritableStream<T> {
  return textSink(dest, options, lineMaker(options.stringify));
}

/**
 * Like {@linkcode ndjsonSink}, for a stream of batches: each value of each
 * batch becomes one line, and a batch is written in one go.
 *
 * @param dest Where to write.
 * @param options The buffer size and how a value becomes JSON text.
 * @returns The sink.
 *
 * @example Two batches, three lines
 * ```ts
 * import { ndjsonBatchSink } from "./mod.ts";
 * let text = "";
 * const dest = { write: (p: Uint8Array) => (text += new TextDecoder().decode(p), Promise.resolve(p.length)) };
 * await ReadableStream.from([[{ a: 1 }, { a: 2 }], [{ a: 3 }]]).pipeTo(ndjsonBatchSink(dest));
 * if (text !== '{"a":1}\n{"a":2}\n{"a":3}\n') throw new Error(text);
 * ```
 */
export function ndjsonBatchSink<T = unknown>(
  dest: ByteWriter,
  options: NdjsonSinkOptions<T> = {},
): WritableStream<readonly T[]> {
  const line = lineMaker(options.stringify);
  return textSink(dest, options, (batch: readonly T[]) => {
    let text = "";
    for (const value of batch) text += line(value);
    return text;
  });
}

/** JSON.stringify, with what a terminal could act on escaped. */
function inertStringify(value: unknown): string {
  const json = JSON.stringify(value) as string | undefined;
  return json === undefined ? json as unknown as string : inertJson(json);
}

/** One NDJSON line; undefined, functions and symbols have no JSON text. */
function lineMaker<T>(
  stringify: (value: T) => string = inertStringify,
): (value: T) => string {
  return (value) => {
    const line = stringify(value) as string | undefined;
    if (line === undefined) {
      throw new TypeError(`Cannot write ${typeof value} as NDJSON`);
    }
    return line + "\n";
  };
}

function textSink<T>(
  dest: ByteWriter,
  options: { flushChars?: number | undefined },
  toText: (chunk: T) => string,
): WritableStream<T> {
  const flushChars = options.flushChars;
  const out = new TextWriter(
    dest,
    flushChars === undefined
      ? undefined
      : countOption("flushChars", flushChars),
  );
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

/** The last character of `text` that is not white space, as a code; -1 for none. */
function lastNonSpace(text: string): number {
  for (let i = text.length - 1; i >= 0; i--) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 13 && c !== 10) return c;
  }
  return -1;
}

/**
 * Why a line is a part of a JSON value rather than one (a line of `jq .`
 * output), when that shows at its ends; `undefined` when it may be a value.
 * Only what JSON.parse would refuse is named here.
 */
function partOfValue(text: string): string | undefined {
  const end = lastNonSpace(text);
  if (end === 44 || end === 123 || end === 91 || end === 58) {
    return ENDS_BEFORE_VALUE[end];
  }
  const start = skipSpace(text, 0);
  const first = text.charCodeAt(start);
  if (first === 125 || first === 93) return STARTS_CLOSED[first];
  // `"name": value`, an object's member: a string followed by a colon.
  if (first === 34 && end !== -1) {
    const after = skipSpace(text, skipValue(text, start));
    if (text.charCodeAt(after) === 58) return MEMBER;
  }
  return undefined;
}

/** A message of partOfValue, made once: an indented input has one a line. */
function partMessage(what: string): string {
  return `Cannot parse JSON: ${what} (one JSON value a line: jq -c writes so)`;
}
const ENDS_BEFORE_VALUE: Record<number, string> = Object.fromEntries(
  [44, 123, 91, 58].map((c) => [
    c,
    partMessage(
      `the line ends with "${String.fromCharCode(c)}" before its value does`,
    ),
  ]),
);
const STARTS_CLOSED: Record<number, string> = Object.fromEntries(
  [125, 93].map((c) => [
    c,
    partMessage(
      `the line starts with "${
        String.fromCharCode(c)
      }", which closes a value begun on an earlier line`,
    ),
  ]),
);
const MEMBER = partMessage(
  'the line is an object\'s member ("name": value), not a whole value',
);
