/**
 * What aggregating expects of the order of Scores: an example's Scores of a
 * metric adjacent (unless grouped), and no unit scored twice for a metric.
 * One check for the `aggregate` command's lines and the library's stage, so
 * that a script and the command count the same Scores.
 *
 * @module
 */

import type { Score } from "../score/types.ts";
import { nfcKey } from "../base/nfc.ts";

/** Told of a Score whose example's Scores of its metric ended earlier. */
export type OnScattered = (
  at: number,
  exampleId: string,
  metric: string,
) => void;

/** Told of a Score whose unit already has one of its metric (and target). */
export type OnDuplicate = (at: number, score: Score) => void;

/**
 * Follows Scores in the order they come and says which count. Knowing a
 * scattered example holds every example id seen, per metric; knowing a
 * duplicate, the unit ids of the example being read (grouped, of all).
 */
export class ScoreOrder {
  readonly #grouped: boolean;
  readonly #scattered: OnScattered | undefined;
  readonly #duplicate: OnDuplicate | undefined;
  // Per metric (and target): the example whose Scores come now, those that
  // ended, and the units scored so far (of that example; grouped, of all).
  readonly #seen = new Map<
    string,
    { open: string; key: string; ended: Set<string>; units: Set<string> }
  >();

  /**
   * @param grouped Whether an example's Scores may stand anywhere.
   * @param onScattered Told of an example out of place (not when grouped).
   * @param onDuplicate Told of a unit's second Score of a metric.
   */
  constructor(
    grouped: boolean,
    onScattered: OnScattered | undefined,
    onDuplicate: OnDuplicate | undefined,
  ) {
    this.#grouped = grouped;
    this.#scattered = grouped ? undefined : onScattered;
    this.#duplicate = onDuplicate;
  }

  /**
   * Whether the Score counts: it is not a unit's second of its metric. A
   * Score out of place goes to `onScattered` first (which may throw).
   *
   * @param at Where the Score stands, for the callbacks.
   * @param score The Score.
   * @returns `false` for a duplicate, which is not to be counted.
   */
  counts(at: number, score: Score): boolean {
    const id = score.example_id ?? score.unit_id;
    const scattered = this.#scattered;
    const duplicate = this.#duplicate;
    if (
      id === undefined || (scattered === undefined && duplicate === undefined)
    ) {
      return true;
    }
    // A matrix run's targets are aggregated apart: adjacent per target.
    const key = score.target_name === undefined
      ? score.metric
      : `${score.target_name}\u0000${score.metric}`;
    let state = this.#seen.get(key);
    if (state === undefined) {
      state = { open: id, key: nfcKey(id), ended: new Set(), units: new Set() };
      this.#seen.set(key, state);
    } else if (state.open !== id) {
      // Ids compared in NFC, as the aggregator gathers them: the open
      // example in another spelling continues it.
      const example = nfcKey(id);
      state.open = id;
      if (example !== state.key) {
        if (!this.#grouped) state.units.clear();
        if (scattered !== undefined) state.ended.add(state.key);
        state.key = example;
        if (state.ended.has(example)) scattered!(at, id, score.metric);
      }
    }
    const unit = score.unit_id;
    if (duplicate === undefined || unit === undefined) return true;
    // One unit in two spellings is one unit scored twice.
    const unitKey = nfcKey(unit);
    if (state.units.has(unitKey)) {
      duplicate(at, score);
      return false;
    }
    state.units.add(unitKey);
    return true;
  }
}
