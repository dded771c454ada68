// How many units' Scores reached stdout, counted as the bytes are written:
// what `score` tells a person it was interrupted after.

import {
  type ByteWriter,
  RELEASES_BYTES,
  releasesBytes,
  writeSome,
} from "../io/text_writer.ts";
import type { Score } from "../score/mod.ts";

const NEWLINE = 10;

/**
 * A writer that passes bytes on to `dest` and counts the units whose Scores
 * it has written in full. {@linkcode WrittenUnits.counter} marks, in the
 * Score stream before the sink, where each batch's units end; the writer
 * counts the lines that reached `dest` and so the units behind them.
 */
export class WrittenUnits implements ByteWriter {
  #dest: ByteWriter;
  #lines = 0;
  #units = 0;
  // Pairs of (lines so far, units so far) at the end of each batch not yet
  // written in full, oldest first, read from #next.
  #marks: number[] = [];
  #next = 0;
  #queuedLines = 0;
  #queuedUnits = 0;

  /** @param dest Where the bytes go. */
  constructor(dest: ByteWriter) {
    this.#dest = dest;
  }

  /** Done with the bytes of a write when `dest` is: it awaits `dest`. */
  get [RELEASES_BYTES](): boolean {
    return releasesBytes(this.#dest);
  }

  /** Units whose every Score line has been written. */
  get units(): number {
    return this.#units;
  }

  /** Writes to `dest`, then counts the lines that went. */
  async write(p: Uint8Array): Promise<number> {
    const n = await writeSome(this.#dest, p);
    for (let i = p.indexOf(NEWLINE); i !== -1 && i < n;) {
      this.#lines++;
      i = p.indexOf(NEWLINE, i + 1);
    }
    const marks = this.#marks;
    while (this.#next < marks.length && marks[this.#next]! <= this.#lines) {
      this.#units = marks[this.#next + 1]!;
      this.#next += 2;
    }
    if (this.#next > 1024 && this.#next * 2 > marks.length) {
      marks.splice(0, this.#next);
      this.#next = 0;
    }
    return n;
  }

  /**
   * The stage that marks each batch of Scores (whole units, as
   * `scoreUnitBatches` emits them) on its way to the sink.
   *
   * @param onBatch Told of each batch and how many units it holds (a
   *   progress line counts them).
   * @returns The stage.
   */
  counter(
    onBatch?: (scores: readonly Score[], units: number) => void,
  ): TransformStream<Score[], Score[]> {
    return new TransformStream({
      transform: (batch, controller) => {
        let units = 0;
        let last: string | undefined;
        for (let i = 0; i < batch.length; i++) {
          const id = batch[i]!.unit_id;
          if (i === 0 || id !== last) units++;
          last = id;
        }
        this.#queuedLines += batch.length;
        this.#queuedUnits += units;
        this.#marks.push(this.#queuedLines, this.#queuedUnits);
        onBatch?.(batch, units);
        controller.enqueue(batch);
      },
    });
  }
}
