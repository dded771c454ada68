// What a run with a budget has spent, noted in its `--out` sidecar while it
// goes on: a run killed (`kill -9`) before it ends leaves its last note, and
// the resume starts its budget from there (at least) rather than from what
// an earlier run kept. Written on a timer, never per call.

import { exitCodeOf } from "../base/errors.ts";
import type { Budget } from "../net/budget.ts";

/** How often, at most, the spend is noted: once a second. */
const EVERY_MS = 1000;

/**
 * Notes `budget`'s spend through `write`, each second when it changed (and
 * with `now`, at once), from {@linkcode SpendNotes.start} until
 * {@linkcode SpendNotes.stop}.
 */
export class SpendNotes {
  #budget: Budget;
  #write: () => Promise<void>;
  #timer: ReturnType<typeof setInterval> | undefined;
  #noted: number | undefined;
  #writing: Promise<void> | undefined;
  #failure: unknown;

  /**
   * Makes the notes.
   *
   * @param budget The run's budget.
   * @param write Writes the sidecar with the budget's spend as it is then.
   */
  constructor(budget: Budget, write: () => Promise<void>) {
    this.#budget = budget;
    this.#write = write;
  }

  /**
   * Starts noting.
   *
   * @param now Note at once, whatever was spent: the note is written when
   *   this returns (a resume's, that a run is under way, before its first
   *   unit is written).
   */
  async start(now: boolean): Promise<void> {
    if (!now) this.#noted = this.#budget.spent;
    this.#note();
    await this.#writing;
    const timer = setInterval(() => this.#note(), EVERY_MS);
    // A note never holds a run that is done.
    Deno.unrefTimer(timer);
    this.#timer = timer;
  }

  #note(): void {
    if (this.#writing !== undefined || this.#budget.spent === this.#noted) {
      return;
    }
    this.#noted = this.#budget.spent;
    this.#writing = this.#write().catch((error) => {
      // A disk that refuses a note refuses the sidecar the run writes at its
      // end too, and that write says so: a note is never worth a run.
      if (exitCodeOf(error) === undefined) this.#failure ??= error;
    }).finally(() => {
      this.#writing = undefined;
    });
  }

  /**
   * Stops noting, once the note under way is written, and notes the spend
   * once more when it changed since: no call is made after, so the last note
   * holds all of it (whatever then stops the run before its end writes the
   * sidecar), and no note lands after that write.
   *
   * @throws What a note met that is no disk's refusal (a bug).
   */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#writing;
    this.#note();
    await this.#writing;
    if (this.#failure !== undefined) throw this.#failure;
  }
}
