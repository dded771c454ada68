// The ids a dataset has used so far, and the line of each, for duplicate
// checks over millions of cases. Ids that are small canonical integers (the
// common `"id": 17`, or a case named by its line) live in a dense typed array,
// four bytes each; other ids in a Map by text.

/** Below this, a numeric id always fits the dense array. */
const MIN_DENSE = 1 << 16;

/** Where each id was first seen: `get` and `set` by the id's text. */
export class SeenIds {
  /** line + 1 by numeric id; 0 = unseen. */
  #dense = new Uint32Array(1024);
  #count = 0;
  /** Numeric ids too large for the dense array when they came. */
  #bigNumbers = new Map<number, number>();
  #byText = new Map<string, number>();

  /** The line where `id` was first seen, if it was. */
  get(id: string): number | undefined {
    const n = smallInteger(id);
    return n < 0 ? this.#byText.get(id) : this.getSmall(n);
  }

  /**
   * `get(String(n))` for an integer `0 <= n < 2^31`, whose text is
   * canonical: an id that came as a JSON number, or a line number.
   */
  getSmall(n: number): number | undefined {
    if (n < this.#dense.length) {
      const v = this.#dense[n]!;
      return v === 0 ? undefined : v - 1;
    }
    return this.#bigNumbers.get(n);
  }

  /** Records that `id` was first seen at `line`. */
  set(id: string, line: number): void {
    const n = smallInteger(id);
    if (n < 0) {
      this.#byText.set(id, line);
      return;
    }
    this.setSmall(n, line);
  }

  /** `set(String(n), line)` for an integer `0 <= n < 2^31`. */
  setSmall(n: number, line: number): void {
    this.#count++;
    // The array grows with the ids stored, never to one id's size alone.
    if (n >= this.#dense.length && n < Math.max(MIN_DENSE, 4 * this.#count)) {
      this.#grow(n);
    }
    if (n < this.#dense.length) this.#dense[n] = line + 1;
    else this.#bigNumbers.set(n, line);
  }

  #grow(n: number): void {
    let size = this.#dense.length;
    while (size <= n) size *= 2;
    const grown = new Uint32Array(size);
    grown.set(this.#dense);
    this.#dense = grown;
    // Ids that were too large before may fit now: one place per id.
    for (const [k, line] of this.#bigNumbers) {
      if (k < size) {
        grown[k] = line + 1;
        this.#bigNumbers.delete(k);
      }
    }
  }
}

/** `id` as a number when it is a canonical integer below 2^31, else -1. */
function smallInteger(id: string): number {
  const length = id.length;
  if (length === 0 || length > 10) return -1;
  let n = 0;
  for (let i = 0; i < length; i++) {
    const digit = id.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9 || (digit === 0 && i === 0 && length > 1)) {
      return -1;
    }
    n = n * 10 + digit;
  }
  return n < 2 ** 31 ? n : -1;
}
