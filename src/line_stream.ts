/**
 * Splitting a byte stream into numbered lines, each decoded on its own so
 * that invalid UTF-8 or an oversized line is reported with its line number.
 *
 * @module
 */

/** One line of input, without its line terminator. */
export interface Line {
  /** The 1-based line number. */
  line: number;
  /** The decoded text; invalid bytes are replaced when `error` is set. */
  text: string;
  /** Why the line cannot be trusted (invalid UTF-8, too long). */
  error?: string;
}

/** Options of {@linkcode LineStream}. */
export interface LineStreamOptions {
  /**
   * The longest line kept, in bytes; a longer one becomes an error line.
   * @default {33554432}
   */
  maxLineBytes?: number;
}

const NEWLINE = 10;
const strict = new TextDecoder("utf-8", { fatal: true });
const lenient = new TextDecoder("utf-8");

/**
 * Splits bytes into lines on `\n` (a trailing `\r` is dropped), numbering
 * them from 1. A final line without a newline is emitted too.
 *
 * @example
 * ```ts
 * import { LineStream } from "./line_stream.ts";
 * const bytes = new TextEncoder().encode("a\r\nb\n\nc");
 * const lines = await Array.fromAsync(ReadableStream.from([bytes]).pipeThrough(new LineStream()));
 * if (lines.map((l) => l.text).join("|") !== "a|b||c") throw new Error();
 * ```
 */
export class LineStream extends TransformStream<Uint8Array, Line> {
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;
  #overflow = false;
  #line = 0;
  #max: number;

  /**
   * Creates the instance.
   *
   * @param options The line length cap.
   */
  constructor(options: LineStreamOptions = {}) {
    super({
      transform: (chunk, controller) => this.#split(chunk, controller),
      flush: (controller) => {
        if (this.#pendingBytes > 0 || this.#overflow) {
          this.#emit(new Uint8Array(0), controller);
        }
      },
    });
    this.#max = options.maxLineBytes ?? 32 * 1024 * 1024;
  }

  #split(
    chunk: Uint8Array,
    controller: TransformStreamDefaultController<Line>,
  ): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl < 0) break;
      this.#emit(chunk.subarray(start, nl), controller);
      start = nl + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
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
  }

  #emit(
    tail: Uint8Array,
    controller: TransformStreamDefaultController<Line>,
  ): void {
    const line = ++this.#line;
    const size = this.#pendingBytes + tail.length;
    if (this.#overflow || size > this.#max) {
      this.#overflow = false;
      this.#pending = [];
      this.#pendingBytes = 0;
      controller.enqueue({
        line,
        text: "",
        error: `Line is longer than ${this.#max} bytes`,
      });
      return;
    }
    let bytes = tail;
    if (this.#pending.length > 0) {
      bytes = new Uint8Array(size);
      let offset = 0;
      for (const part of this.#pending) {
        bytes.set(part, offset);
        offset += part.length;
      }
      bytes.set(tail, offset);
      this.#pending = [];
      this.#pendingBytes = 0;
    }
    if (bytes.length > 0 && bytes[bytes.length - 1] === 13) {
      bytes = bytes.subarray(0, -1);
    }
    try {
      controller.enqueue({ line, text: strict.decode(bytes) });
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
      // The fatal decoder throws TypeError on invalid UTF-8 only.
      controller.enqueue({
        line,
        text: lenient.decode(bytes),
        error: "Invalid UTF-8",
      });
    }
  }
}
