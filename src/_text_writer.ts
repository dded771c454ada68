/**
 * Buffered text output: text that arrives together is written together, and
 * a lone piece is written as soon as the event loop turns (or, for writers of
 * large batches, once the microtasks queued with it are done), so output
 * appears as it is produced in few system calls.
 *
 * @module
 */

/** Where bytes go: `Deno.stdout`, a `Deno.FsFile`, or anything with `write`. */
export interface ByteWriter {
  /** Writes some of `p`, resolving to how many bytes were written. */
  write(p: Uint8Array): Promise<number>;
}

const encoder = new TextEncoder();

async function writeAll(dest: ByteWriter, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    offset += await dest.write(bytes.subarray(offset));
  }
}

/** A text buffer in front of a {@linkcode ByteWriter}; each `write` lands whole. */
export class TextWriter {
  #dest: ByteWriter;
  #flushChars: number;
  #pending = "";
  #timer: ReturnType<typeof setTimeout> | undefined;
  #microtask: boolean;
  #scheduled = false;
  #chain: Promise<void> = Promise.resolve();
  /** Writes queued and not yet done. */
  #writing = 0;
  #failure: unknown;

  /**
   * Creates the writer.
   *
   * @param dest Where the bytes go.
   * @param flushChars Buffered text that forces a write.
   * @param microtask Write a lone piece after the current microtasks rather
   *   than on the next turn: for writers whose pieces are whole batches. It
   *   also keeps Deno's global timers unloaded (they load the Node layer:
   *   megabytes of start-up for a run that needs no other timer).
   */
  constructor(dest: ByteWriter, flushChars = 65536, microtask = false) {
    this.#dest = dest;
    this.#flushChars = flushChars;
    this.#microtask = microtask;
  }

  /**
   * Appends text. Returns a promise when the buffer was full and is being
   * written, or when an earlier write is still under way (await it for
   * backpressure), else `undefined`.
   *
   * @param text Whole lines (or whatever unit must not be torn).
   * @returns The pending write, when there is one to wait for.
   * @throws What an earlier background write failed with.
   */
  write(text: string): Promise<void> | undefined {
    if (this.#failure !== undefined) throw this.#failure;
    this.#pending += text;
    if (this.#pending.length >= this.#flushChars) return this.flush();
    if (!this.#scheduled) {
      this.#scheduled = true;
      // A failed background write is reported by the next write or flush.
      const flush = () => {
        if (this.#scheduled) this.flush().catch((e) => (this.#failure = e));
      };
      if (this.#microtask) queueMicrotask(flush);
      else this.#timer = setTimeout(flush, 0);
    }
    // While an earlier write is under way, the caller waits for it: text
    // must not pile up faster than the destination takes it.
    return this.#writing > 0 ? this.#settled() : undefined;
  }

  /**
   * Writes everything buffered.
   *
   * @returns When it is written.
   */
  flush(): Promise<void> {
    this.#stopSchedule();
    if (this.#pending !== "") {
      const bytes = encoder.encode(this.#pending);
      this.#pending = "";
      this.#writing++;
      const done = () => void this.#writing--;
      this.#chain = this.#chain.then(() => writeAll(this.#dest, bytes))
        .then(done, (error) => {
          done();
          throw error;
        });
    }
    return this.#settled();
  }

  /** When every write queued so far is done; rejects if one failed. */
  #settled(): Promise<void> {
    return this.#chain.then(() => {
      if (this.#failure !== undefined) throw this.#failure;
    });
  }

  /** Drops what is buffered and stops the timer: for a stream that failed. */
  discard(): void {
    this.#stopSchedule();
    this.#pending = "";
  }

  #stopSchedule(): void {
    this.#scheduled = false;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
