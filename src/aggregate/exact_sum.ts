/**
 * Exact floating-point summation (Shewchuk's non-overlapping partials).
 *
 * The partials represent the sum of every added number without rounding, so
 * adding the same numbers in any order, or merging the partials of shards,
 * gives bit-identical totals: what makes aggregates mergeable exactly.
 *
 * @module
 */

/** An exact running sum, kept as non-overlapping partials. */
export class ExactSum {
  #partials: number[];

  /**
   * Creates the instance.
   *
   * @param partials Partials from {@linkcode ExactSum.partials} of another sum.
   */
  constructor(partials: readonly number[] = []) {
    this.#partials = [];
    for (const p of partials) this.add(p);
  }

  /**
   * Adds a finite number.
   *
   * @param x The number.
   */
  add(x: number): void {
    const partials = this.#partials;
    const n = partials.length;
    let i = 0;
    for (let k = 0; k < n; k++) {
      let y = partials[k]!;
      if (Math.abs(x) < Math.abs(y)) {
        const t = x;
        x = y;
        y = t;
      }
      const hi = x + y;
      const lo = y - (hi - x);
      if (lo !== 0) partials[i++] = lo;
      x = hi;
    }
    // The common case, no partial left over (integers, or a sum that stays
    // exact): the list keeps its length, and is not cut and grown again.
    if (i < n) {
      partials[i] = x;
      if (i + 1 < n) partials.length = i + 1;
    } else partials.push(x);
  }

  /**
   * Adds every partial of another sum.
   *
   * @param other The other sum.
   */
  merge(other: ExactSum): void {
    for (const p of other.#partials) this.add(p);
  }

  /**
   * Subtracts every partial of another sum.
   *
   * @param other The other sum.
   */
  subtract(other: ExactSum): void {
    for (const p of other.#partials) this.add(-p);
  }

  /**
   * The partials, to serialise and merge later: one list for one sum, in
   * whatever order its numbers were added.
   */
  get partials(): number[] {
    // Non-overlapping partials of a sum are not unique; its greedy expansion
    // (the rounded sum, then the rounded remainder, ...) is.
    const rest = new ExactSum();
    rest.#partials = [...this.#partials];
    const expansion: number[] = [];
    for (let v = rest.value; v !== 0; v = rest.value) {
      // An overflowed sum has no exact expansion to give.
      if (!Number.isFinite(v)) return [...this.#partials];
      expansion.unshift(v);
      rest.add(-v);
    }
    return expansion;
  }

  /** The exact sum, correctly rounded to a double. */
  get value(): number {
    const partials = this.#partials;
    let n = partials.length;
    if (n === 0) return 0;
    let hi = partials[--n]!;
    let lo = 0;
    while (n > 0) {
      const x = hi;
      const y = partials[--n]!;
      hi = x + y;
      lo = y - (hi - x);
      if (lo !== 0) break;
    }
    // Round half-way cases the way the exact sum says (as Python's fsum does).
    if (
      n > 0 &&
      ((lo < 0 && partials[n - 1]! < 0) || (lo > 0 && partials[n - 1]! > 0))
    ) {
      const y = lo * 2;
      const x = hi + y;
      if (y === x - hi) hi = x;
    }
    return hi;
  }
}
