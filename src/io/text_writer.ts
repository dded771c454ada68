/**
 * Buffered text output: a lone piece is written once the microtasks queued
 * with it are done, and pieces that come while a write is under way gather
 * and go out together when it ends, so output appears as it is produced in
 * few system calls, without a timer.
 *
 * @module
 */

/**
 * Where bytes go: `Deno.stdout`, a `Deno.FsFile`, or anything with `write`.
 *
 * @example A file as the destination of Score lines
 * ```ts
 * import { type ByteWriter, ndjsonSink } from "./mod.ts";
 * import { scored, scoreLine } from "../score/mod.ts";
 * const dir = await Deno.makeTempDir();
 * const file = await Deno.open(`${dir}/scores.ndjson`, { write: true, create: true });
 * const dest: ByteWriter = file;
 * await ReadableStream.from([scored("m", 1), scored("m", 0)]).pipeTo(ndjsonSink(dest, { stringify: scoreLine }));
 * file.close();
 * const lines = (await Deno.readTextFile(`${dir}/scores.ndjson`)).trimEnd().split("\n");
 * await Deno.remove(dir, { recursive: true });
 * if (lines.length !== 2) throw new Error("unexpected");
 * ```
 */
export interface ByteWriter {
  /**
   * Writes `p`, or some of it: resolves to how many bytes were written (as
   * `Deno.FsFile` does; the rest is written next), or to nothing when all of
   * them were (as a writer around a Node stream may). `p` is the writer's to
   * keep: a writer that collects the chunks it is given gets bytes no later
   * output overwrites.
   */
  write(p: Uint8Array): Promise<number | void>;
}

/**
 * Writes `p`, or some of it, to `dest`.
 *
 * @param dest Where the bytes go.
 * @param p The bytes.
 * @returns How many were written: all of them when `dest` does not say.
 */
export async function writeSome(
  dest: ByteWriter,
  p: Uint8Array,
): Promise<number> {
  const n = await dest.write(p);
  return typeof n === "number" ? n : p.length;
}

/**
 * Marks a {@linkcode ByteWriter} of this package that is done with `p` once
 * its write settles (it wrote the bytes to a file or a pipe, or passed them
 * to such a writer and awaited it), so that a {@linkcode TextWriter} may fill
 * the same buffer again. Not exported from any `mod.ts`: a writer from
 * outside is given bytes of its own.
 */
export const RELEASES_BYTES: unique symbol = Symbol("evalpipe.releasesBytes");

/** Whether `dest` is done with the bytes of a write once it settles. */
export function releasesBytes(dest: ByteWriter): boolean {
  return dest === Deno.stdout || dest instanceof Deno.FsFile ||
    (dest as { [RELEASES_BYTES]?: boolean })[RELEASES_BYTES] === true;
}

/**
 * Marks `writer` as done with the bytes of a write once it settles (or not).
 *
 * @param writer A writer of this package.
 * @param releases Whether it is.
 * @returns `writer`.
 */
export function releasing<T extends ByteWriter>(
  writer: T,
  releases = true,
): T {
  (writer as { [RELEASES_BYTES]?: boolean })[RELEASES_BYTES] = releases;
  return writer;
}

const encoder = new TextEncoder();

async function writeAll(dest: ByteWriter, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    offset += await writeSome(dest, bytes.subarray(offset));
  }
}

/** A text buffer in front of a {@linkcode ByteWriter}; each `write` lands whole. */
export class TextWriter {
  #dest: ByteWriter;
  /** Whether `#dest` is done with a buffer once its write settles. */
  #reuse: boolean;
  #flushChars: number;
  /** The bytes gathered since the last write, encoded as they came. */
  #buffer: Uint8Array | undefined;
  #used = 0;
  /** Buffers whose writes ended, to be filled again. */
  #spare: Uint8Array[] = [];
  #scheduled = false;
  #chain: Promise<void> = Promise.resolve();
  /** Writes queued and not yet done. */
  #writing = 0;
  #failure: unknown;

  /**
   * Creates the writer. It uses no timer: Deno's global timers load its
   * Node layer, megabytes and milliseconds of start-up for a command that
   * needs no other timer.
   *
   * @param dest Where the bytes go.
   * @param flushChars Buffered text that forces a write.
   */
  constructor(dest: ByteWriter, flushChars = 65536) {
    this.#dest = dest;
    this.#reuse = releasesBytes(dest);
    this.#flushChars = flushChars;
  }

  /**
   * Appends text. Returns a promise when the buffer is full and being written
   * (await it for backpressure: at most one write waits behind the one under
   * way), else `undefined`.
   *
   * @param text Whole lines (or whatever unit must not be torn).
   * @returns The pending write, when there is one to wait for.
   * @throws What an earlier background write failed with.
   */
  write(text: string): Promise<void> | undefined {
    if (this.#failure !== undefined) throw this.#failure;
    this.#append(text);
    if (this.#used >= this.#flushChars) return this.flush();
    // While a write is under way, the text waits for it to end.
    if (this.#writing === 0) this.#schedule();
    return undefined;
  }

  /**
   * Encodes `text` after the bytes gathered, into a buffer that grows rather
   * than tear it: a write holds whole pieces only.
   */
  #append(text: string): void {
    let buffer = this.#buffer;
    if (buffer === undefined) {
      buffer = this.#buffer = this.#spare.pop() ??
        new Uint8Array(Math.max(this.#capacity(), text.length + 1024));
    }
    const { read, written } = encoder.encodeInto(
      text,
      buffer.subarray(this.#used),
    );
    this.#used += written;
    if (read === text.length) return;
    // UTF-8 takes at most three bytes per UTF-16 unit.
    const grown = new Uint8Array(
      Math.max(2 * buffer.length, this.#used + 3 * (text.length - read)),
    );
    grown.set(buffer.subarray(0, this.#used));
    this.#buffer = grown;
    this.#used += encoder.encodeInto(
      read === 0 ? text : text.slice(read),
      grown.subarray(this.#used),
    ).written;
  }

  /**
   * The size of a fresh buffer: room for a few times what forces a write,
   * as a batch of lines can come whole.
   */
  #capacity(): number {
    return Math.min(Math.max(4 * this.#flushChars, 1024), 1 << 20);
  }

  /**
   * Writes everything buffered.
   *
   * @returns When it is written.
   */
  flush(): Promise<void> {
    this.#scheduled = false;
    const buffer = this.#buffer;
    if (buffer !== undefined && this.#used > 0) {
      // A writer from outside may keep what it is given: a copy of its own
      // (the size of the text, not of the buffer), and the buffer stays.
      const reuse = this.#reuse;
      const bytes = reuse
        ? buffer.subarray(0, this.#used)
        : buffer.slice(0, this.#used);
      this.#buffer = reuse || buffer.length > 4 * this.#capacity()
        ? undefined
        : buffer;
      this.#used = 0;
      this.#writing++;
      this.#chain = this.#chain.then(() => writeAll(this.#dest, bytes)).then(
        () => {
          // Written: the buffer can be filled again (one grown far is let go).
          if (
            reuse && buffer.length <= 4 * this.#capacity() &&
            this.#spare.length < 2
          ) this.#spare.push(buffer);
          // What came meanwhile goes out in one write.
          if (--this.#writing === 0 && this.#used > 0) this.#schedule();
        },
        (error) => {
          this.#writing--;
          throw error;
        },
      );
    }
    return this.#chain.then(() => {
      if (this.#failure !== undefined) throw this.#failure;
    });
  }

  /** Drops what is buffered: for a stream that failed. */
  discard(): void {
    this.#scheduled = false;
    this.#used = 0;
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      // A failed background write is reported by the next write or flush.
      if (this.#scheduled) this.flush().catch((e) => (this.#failure = e));
    });
  }
}
