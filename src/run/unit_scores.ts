// Joins each unit to its Scores on the way to the RunRecord: units wait here
// in output order from the moment the target answers until their last Score
// is written, so only the units between the two stages are held.

import type { Unit } from "../dataset/unit.ts";
import type { Score } from "../score/mod.ts";

/** A unit and its Scores; `undefined` for Scores whose unit is not known. */
export type UnitEntry = [Unit | undefined, Score[]];

/** Units waiting for their Scores, in output order. */
export class UnitScores {
  #queue: Unit[] = [];
  #head = 0;
  #current: Score[] = [];
  #want: (unitId: string) => number;

  /**
   * Creates the queue.
   *
   * @param want How many Scores a unit gets (its metrics still to score).
   */
  constructor(want: (unitId: string) => number) {
    this.#want = want;
  }

  /**
   * Adds units as the target stage emits them.
   *
   * @param units The units, in output order.
   */
  push(units: readonly Unit[]): void {
    for (const unit of units) this.#queue.push(unit);
  }

  /**
   * Takes Scores as they are written and returns the units they complete,
   * each with its Scores. Scores of a unit that is not waiting (or one
   * whose Scores outnumber its metrics) come back without a unit.
   *
   * @param scores The Scores, in output order.
   * @returns The entries to write, in order.
   */
  take(scores: readonly Score[]): UnitEntry[] {
    const out: UnitEntry[] = [];
    for (const score of scores) {
      const at = this.#find(score.unit_id);
      if (at < 0) {
        out.push([undefined, [score]]);
        continue;
      }
      // Units before it got no Score at all: they are complete as they are.
      while (this.#head < at) {
        out.push([this.#queue[this.#head++]!, this.#current]);
        this.#current = [];
      }
      this.#current.push(score);
      const unit = this.#queue[this.#head]!;
      if (this.#current.length >= this.#want(unit.unit_id)) {
        out.push([unit, this.#current]);
        this.#current = [];
        this.#head++;
      }
    }
    // Drop what was taken now and then, not on every Score.
    if (this.#head > 1024) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    return out;
  }

  /**
   * The units still waiting, with the Scores they have: at the end of a run.
   *
   * @returns The entries to write, in order.
   */
  rest(): UnitEntry[] {
    const out: UnitEntry[] = [];
    while (this.#head < this.#queue.length) {
      out.push([this.#queue[this.#head++]!, this.#current]);
      this.#current = [];
    }
    return out;
  }

  #find(unitId: string | undefined): number {
    for (let i = this.#head; i < this.#queue.length; i++) {
      if (this.#queue[i]!.unit_id === unitId) return i;
    }
    return -1;
  }
}

/**
 * Joins adjacent entries without a unit that belong to one unit id (as the
 * `skipped` Scores of a subset come), so that each is one line of the record.
 *
 * @param entries Entries as {@linkcode UnitScores.take} returns them.
 * @returns The same Scores, in the same order, in fewer entries.
 */
export function joinLoose(entries: UnitEntry[]): UnitEntry[] {
  const out: UnitEntry[] = [];
  for (const entry of entries) {
    const last = out.at(-1);
    if (
      entry[0] === undefined && last !== undefined && last[0] === undefined &&
      last[1].length > 0 && entry[1].length > 0 &&
      last[1][0]!.unit_id === entry[1][0]!.unit_id
    ) {
      last[1].push(...entry[1]);
    } else out.push(entry); // take() makes fresh arrays: extending one is safe
  }
  return out;
}
