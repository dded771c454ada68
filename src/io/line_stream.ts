/**
 * Splitting a byte stream into numbered lines, each decoded on its own so
 * that invalid UTF-8 or an oversized line is reported with its line number.
 *
 * @module
 */

import { countOption } from "../base/_count.ts";

/**
 * One line of input, without its line terminator.
 *
 * @example Invalid UTF-8 is reported on its line, not thrown
 * ```ts
 * import { type Line, LineStream } from "./mod.ts";
 * const bytes = new Uint8Array([...new TextEncoder().encode("ok\n"), 0xff, 10]);
 * const lines: Line[] = await Array.fromAsync(ReadableStream.from([bytes]).pipeThrough(new LineStream()));
 * if (lines[0]?.text !== "ok" || lines[1]?.line !== 2 || lines[1].error === undefined) throw new Error("unexpected");
 * ```
 */
export interface Line {
  /** The 1-based line number. */
  line: number;
  /** The decoded text; invalid bytes are replaced when `error` is set. */
  text: string;
  /** Why the line cannot be trusted (invalid UTF-8, too long). */
  error?: string;
}

/**
 * Options of {@linkcode LineStream}.
 *
 * @example An oversized line becomes an error line
 * ```ts
 * import { LineStream, type LineStreamOptions } from "./mod.ts";
 * const options: LineStreamOptions = { maxLineBytes: 4 };
 * const bytes = new TextEncoder().encode("abc\nabcdefgh\n");
 * const lines = await Array.fromAsync(ReadableStream.from([bytes]).pipeThrough(new LineStream(options)));
 * if (lines[0]?.error !== undefined || lines[1]?.error === undefined) throw new Error("unexpected");
 * ```
 */
export interface LineStreamOptions {
  /**
   * The longest line kept, in bytes (a whole number of at least 1); a
   * longer one becomes an error line.
   * @default {33554432}
   */
  maxLineBytes?: number | undefined;
}

/** The cap a line stream's options give, checked. */
function maxLineBytesOf(options: LineStreamOptions): number | undefined {
  const max = options.maxLineBytes;
  return max === undefined ? undefined : countOption("maxLineBytes", max);
}

const NEWLINE = 10;
/** The `error` of a line whose bytes are not UTF-8 (its text decoded leniently). */
export const INVALID_UTF8 = "Invalid UTF-8";
/** How the `error` of a line longer than the splitter's cap begins. */
export const TOO_LONG = "Line is longer than ";

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lenient = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * The line splitting behind {@linkcode LineStream}: bytes in, numbered lines
 * out. Complete lines of a chunk are decoded in one call when they are valid
 * UTF-8 and short enough, line by line otherwise, so an invalid byte or an
 * oversized line is reported with its line number.
 */
export class LineSplitter {
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;
  #overflow = false;
  #line = 0;
  #max: number;

  /**
   * Creates the splitter.
   *
   * @param maxLineBytes The longest line kept.
   */
  constructor(maxLineBytes = 32 * 1024 * 1024) {
    this.#max = maxLineBytes;
  }

  /**
   * Splits a chunk, appending its complete lines to `out`.
   *
   * @param chunk Bytes.
   * @param out Where lines go.
   */
  push(chunk: Uint8Array, out: Line[]): void {
    const last = chunk.lastIndexOf(NEWLINE);
    if (last < 0) {
      this.#keep(chunk);
      return;
    }
    const head = chunk.subarray(0, last);
    if (!this.#overflow && this.#pendingBytes + head.length <= this.#max) {
      const region = this.#pendingBytes === 0 ? head : this.#join(head);
      if (this.#fast(region, out)) {
        this.#pending = [];
        this.#pendingBytes = 0;
        this.#keep(chunk.subarray(last + 1));
        return;
      }
    }
    this.#slow(chunk, out);
  }

  /**
   * Ends the input: a last line without a newline is emitted too.
   *
   * @param out Where the line goes.
   */
  end(out: Line[]): void {
    if (this.#pendingBytes > 0 || this.#overflow) {
      this.#emit(new Uint8Array(0), out);
    }
  }

  /** Decodes complete lines in one call; `false` when a line is not valid UTF-8. */
  #fast(region: Uint8Array, out: Line[]): boolean {
    let text: string;
    try {
      text = strict.decode(region);
    } catch (error) {
      // The fatal decoder throws TypeError on invalid UTF-8 only.
      if (!(error instanceof TypeError)) throw error;
      return false;
    }
    let start = 0;
    for (;;) {
      const nl = text.indexOf("\n", start);
      const end = nl < 0 ? text.length : nl;
      let line = text.slice(start, end);
      if (line.charCodeAt(line.length - 1) === 13) line = line.slice(0, -1);
      if (this.#line === 0 && line.charCodeAt(0) === 0xfeff) {
        line = line.slice(1);
      }
      out.push({ line: ++this.#line, text: line });
      if (nl < 0) return true;
      start = nl + 1;
    }
  }

  #slow(chunk: Uint8Array, out: Line[]): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl < 0) break;
      this.#emit(chunk.subarray(start, nl), out);
      start = nl + 1;
    }
    this.#keep(chunk.subarray(start));
  }

  #keep(rest: Uint8Array): void {
    if (rest.length === 0) return;
    if (this.#pendingBytes + rest.length > this.#max) {
      this.#overflow = true;
      this.#pending = [];
      this.#pendingBytes = 0;
    } else if (!this.#overflow) {
      // Copy: the source may reuse its buffer for the next chunk.
      this.#pending.push(rest.slice());
      this.#pendingBytes += rest.length;
    }
  }

  #join(tail: Uint8Array): Uint8Array {
    const bytes = new Uint8Array(this.#pendingBytes + tail.length);
    let offset = 0;
    for (const part of this.#pending) {
      bytes.set(part, offset);
      offset += part.length;
    }
    bytes.set(tail, offset);
    return bytes;
  }

  #emit(tail: Uint8Array, out: Line[]): void {
    const line = ++this.#line;
    const size = this.#pendingBytes + tail.length;
    if (this.#overflow || size > this.#max) {
      this.#overflow = false;
      this.#pending = [];
      this.#pendingBytes = 0;
      out.push({
        line,
        text: "",
        error: `${TOO_LONG}${this.#max} bytes`,
      });
      return;
    }
    let bytes = this.#pending.length > 0 ? this.#join(tail) : tail;
    this.#pending = [];
    this.#pendingBytes = 0;
    if (bytes.length > 0 && bytes[bytes.length - 1] === 13) {
      bytes = bytes.subarray(0, -1);
    }
    if (
      line === 1 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf
    ) {
      bytes = bytes.subarray(3);
    }
    try {
      out.push({ line, text: strict.decode(bytes) });
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
      out.push({ line, text: lenient.decode(bytes), error: INVALID_UTF8 });
    }
  }
}

/**
 * Splits bytes into lines on `\n` (a trailing `\r` is dropped), numbering
 * them from 1. A final line without a newline is emitted too.
 *
 * @example
 * ```ts
 * import { LineStream } from "./line_stream.ts";
 * const bytes = new TextEncoder().encode("a\r\nb\n\nc");
 * const lines = await Array.fromAsync(ReadableStream.from([bytes]).pipeThrough(new LineStream()));
 * if (lines.map((l) => l.text).join("|") !== "a|b||c") throw new Error("unexpected");
 * ```
 */
export class LineStream extends TransformStream<Uint8Array, Line> {
  /**
   * Creates the instance.
   *
   * @param options The line length cap.
   */
  constructor(options: LineStreamOptions = {}) {
    const splitter = new LineSplitter(maxLineBytesOf(options));
    const pass = (
      lines: Line[],
      controller: TransformStreamDefaultController<Line>,
    ) => {
      for (const line of lines) controller.enqueue(line);
    };
    super({
      transform(chunk, controller) {
        const lines: Line[] = [];
        splitter.push(chunk, lines);
        pass(lines, controller);
      },
      flush(controller) {
        const lines: Line[] = [];
        splitter.end(lines);
        pass(lines, controller);
      },
    });
  }
}

/**
 * Like {@linkcode LineStream}, but emits the lines of each chunk together as
 * one array: far fewer stream steps when there are many short lines.
 *
 * @example
 * ```ts
 * import { LineBatchStream } from "./line_stream.ts";
 * const bytes = new TextEncoder().encode("a\nb\nc");
 * const batches = await Array.fromAsync(ReadableStream.from([bytes]).pipeThrough(new LineBatchStream()));
 * if (batches.flat().map((l) => l.text).join("|") !== "a|b|c") throw new Error("unexpected");
 * ```
 */
export class LineBatchStream extends TransformStream<Uint8Array, Line[]> {
  /**
   * Creates the instance.
   *
   * @param options The line length cap.
   */
  constructor(options: LineStreamOptions = {}) {
    const splitter = new LineSplitter(maxLineBytesOf(options));
    super({
      transform(chunk, controller) {
        const lines: Line[] = [];
        splitter.push(chunk, lines);
        if (lines.length > 0) controller.enqueue(lines);
      },
      flush(controller) {
        const lines: Line[] = [];
        splitter.end(lines);
        if (lines.length > 0) controller.enqueue(lines);
      },
    });
  }
}
