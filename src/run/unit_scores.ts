// Joins each unit to its Scores on the way to the RunRecord: a unit waits
// here from the moment the target answers until its last Score is written,
// so only the units between the two stages are held. Scores may come in any
// order (an interrupted run writes what finishes as it finishes).

import type { Unit } from "../dataset/unit.ts";
import type { Score } from "../score/mod.ts";

/** A unit and its Scores; `undefined` for Scores whose unit is not known. */
export type UnitEntry = [Unit | undefined, Score[]];

interface Waiting {
  unit: Unit;
  scores: Score[];
  want: number;
}

/** Units waiting for their Scores, by unit id, in the order they came. */
export class UnitScores {
  #waiting = new Map<string, Waiting>();
  /** Units that get no Score (all their metrics were scored before). */
  #none: UnitEntry[] = [];
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
   * @param units The units.
   */
  push(units: readonly Unit[]): void {
    for (const unit of units) {
      const want = this.#want(unit.unit_id);
      if (want <= 0) this.#none.push([unit, []]);
      else this.#waiting.set(unit.unit_id, { unit, scores: [], want });
    }
  }

  /**
   * Takes Scores as they are written and returns the units they complete,
   * each with its Scores, after any unit that gets none. Scores of a unit
   * that is not waiting (or one whose Scores outnumber its metrics) come back
   * without a unit.
   *
   * @param scores The Scores, as they are written.
   * @returns The entries to write, in order.
   */
  take(scores: readonly Score[]): UnitEntry[] {
    let out: UnitEntry[] = [];
    if (this.#none.length > 0) {
      out = this.#none;
      this.#none = [];
    }
    for (const score of scores) {
      const id = score.unit_id;
      const waiting = id === undefined ? undefined : this.#waiting.get(id);
      if (waiting === undefined) {
        out.push([undefined, [score]]);
        continue;
      }
      waiting.scores.push(score);
      if (waiting.scores.length >= waiting.want) {
        out.push([waiting.unit, waiting.scores]);
        this.#waiting.delete(id!);
      }
    }
    return out;
  }

  /**
   * At the end of a run, the units still waiting that have some of their
   * Scores, with them. A unit none of whose Scores came was not scored (an
   * interrupted run dropped it): it is left out, and a resume runs it.
   *
   * @returns The entries to write, in the order the units came.
   */
  rest(): UnitEntry[] {
    const out = this.#none;
    this.#none = [];
    for (const { unit, scores } of this.#waiting.values()) {
      if (scores.length > 0) out.push([unit, scores]);
    }
    this.#waiting.clear();
    return out;
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
