// Joins each unit to its Scores on the way to the RunRecord: a unit waits
// here from the moment the target answers until its last Score is written,
// so only the units between the two stages are held. Scores may come in any
// order (an interrupted run writes what finishes as it finishes).

import { nfcKey } from "../base/nfc.ts";
import type { Unit } from "../dataset/unit.ts";
import type { Score } from "../score/mod.ts";

/** A unit and its Scores; `undefined` for Scores whose unit is not known. */
export type UnitEntry = [Unit | undefined, Score[]];

/** A unit already written, out of order, still in the queue. */
const WRITTEN = { unit_id: "" } as Unit;

/**
 * Units waiting for their Scores, in the order they came. Scores usually
 * come in that order too, and cost one comparison each; out of order (an
 * interrupted run), a unit's Scores wait beside it until it is whole.
 */
export class UnitScores {
  #queue: Unit[] = [];
  #head = 0;
  /** The Scores of the unit at the head. */
  #current: Score[] = [];
  /** The Scores of units past the head, by unit id. */
  #early = new Map<string, Score[]>();
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
      if (this.#want(unit.unit_id) <= 0) this.#none.push([unit, []]);
      else this.#queue.push(unit);
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
      const at = this.#find(score.unit_id);
      if (at < 0) {
        out.push([undefined, [score]]);
        continue;
      }
      const unit = this.#queue[at]!;
      if (at === this.#head) {
        this.#current.push(score);
        if (this.#current.length >= this.#want(unit.unit_id)) {
          out.push([unit, this.#current]);
          this.#current = [];
          this.#advance();
        }
        continue;
      }
      // Past the head: out of order.
      let early = this.#early.get(unit.unit_id);
      if (early === undefined) this.#early.set(unit.unit_id, early = []);
      early.push(score);
      if (early.length >= this.#want(unit.unit_id)) {
        out.push([unit, early]);
        this.#early.delete(unit.unit_id);
        this.#queue[at] = WRITTEN;
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
   * At the end of a run, the units still waiting that have some of their
   * Scores, with them. A unit none of whose Scores came was not scored (an
   * interrupted run dropped it): it is left out, and a resume runs it.
   *
   * @returns The entries to write, in the order the units came.
   */
  rest(): UnitEntry[] {
    const out = this.#none;
    this.#none = [];
    for (let i = this.#head; i < this.#queue.length; i++) {
      const unit = this.#queue[i]!;
      if (unit === WRITTEN) continue;
      const scores = i === this.#head
        ? this.#current
        : this.#early.get(unit.unit_id) ?? [];
      if (scores.length > 0) out.push([unit, scores]);
    }
    this.#queue = [];
    this.#head = 0;
    this.#current = [];
    this.#early.clear();
    return out;
  }

  /** Moves the head past the unit just written and those written early. */
  #advance(): void {
    do this.#head++; while (this.#queue[this.#head] === WRITTEN);
    if (this.#early.size > 0 && this.#head < this.#queue.length) {
      const id = this.#queue[this.#head]!.unit_id;
      const early = this.#early.get(id);
      if (early !== undefined) {
        this.#current = early;
        this.#early.delete(id);
      }
    }
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

/**
 * The Scores an earlier run wrote for units its resume runs again (a scorer
 * added since, with `--force`): each joins its unit's new entry, so that the
 * unit is one line of the record, not two (its id compared in NFC, as the
 * resume skips units). Those whose unit does not come again (the resume was
 * stopped, or its example is gone) are written at the end, with the earlier
 * unit.
 */
export class EarlierScores {
  #held = new Map<string, UnitEntry>();

  /** Whether any unit is waiting: when none is, {@linkcode join} is skipped. */
  get size(): number {
    return this.#held.size;
  }

  /**
   * Keeps a unit's earlier Scores until its new entry comes.
   *
   * @param entry The earlier unit (when the record had it) and its Scores.
   */
  hold(entry: UnitEntry): void {
    const id = entry[1][0]?.unit_id;
    if (id !== undefined) this.#held.set(nfcKey(id), entry);
  }

  /**
   * Puts the earlier Scores of the entry's unit before its new ones.
   *
   * @param entry A new entry, as the run writes it.
   * @returns The entry, with the earlier Scores when there were some.
   */
  join(entry: UnitEntry): UnitEntry {
    const written = entry[0]?.unit_id ?? entry[1][0]?.unit_id;
    const id = written === undefined ? undefined : nfcKey(written);
    const earlier = id === undefined ? undefined : this.#held.get(id);
    if (earlier === undefined) return entry;
    this.#held.delete(id!);
    const [unit, scores] = entry;
    const before = earlier[0];
    // Answered from the cache, the unit replays the call the earlier run
    // paid for: its line keeps that call, as an uninterrupted run's would,
    // and a later resume of the record counts what was paid.
    const kept = unit !== undefined && unit.target?.cached === true &&
        before?.target !== undefined
      ? { ...unit, target: before.target }
      : unit ?? before;
    return [kept, [...earlier[1], ...scores]];
  }

  /**
   * The entries whose unit did not come again, in the order they were held.
   *
   * @returns The entries; none are kept after.
   */
  rest(): UnitEntry[] {
    const out = [...this.#held.values()];
    this.#held.clear();
    return out;
  }
}
