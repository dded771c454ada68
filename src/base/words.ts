/**
 * Words near a typo: what a misspelt flag, command, config key or metric was
 * most likely meant to be, for the "did you mean" of a message.
 *
 * @module
 */

/**
 * The edit distance between two words (insertions, deletions, substitutions
 * and swaps of neighbours each cost 1), for suggesting what a typo meant.
 *
 * @param a One word.
 * @param b The other.
 * @returns The distance.
 *
 * @example
 * ```ts
 * import { editDistance } from "./words.ts";
 * if (editDistance("concurency", "concurrency") !== 1) throw new Error();
 * if (editDistance("rnu", "run") !== 1) throw new Error();
 * ```
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    d[i] = [i];
    for (let j = 1; j <= b.length; j++) {
      d[i]![j] = i === 0 ? j : Math.min(
        d[i - 1]![j]! + 1,
        d[i]![j - 1]! + 1,
        d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      if (
        i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]
      ) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The known word closest to a typo, when it is close enough to be what was
 * meant: within a third of its length, at least one edit.
 *
 * @param typo What was written.
 * @param known The words it could have meant.
 * @returns The nearest, or `undefined`.
 *
 * @example
 * ```ts
 * import { nearest } from "./words.ts";
 * if (nearest("concurency", ["concurrency", "out"]) !== "concurrency") throw new Error();
 * if (nearest("zzz", ["run", "score"]) !== undefined) throw new Error();
 * ```
 */
export function nearest(
  typo: string,
  known: Iterable<string>,
): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(typo.length / 3)) + 1;
  for (const word of known) {
    const distance = editDistance(typo, word);
    if (distance < bestDistance) [best, bestDistance] = [word, distance];
  }
  return best;
}

/**
 * A count with its noun, the noun plural unless the count is 1, for a
 * message that counts: `1 example`, `0 examples`, `20 examples`.
 *
 * @param n The count.
 * @param noun The noun for one.
 * @param plural The noun for several, when it is not `noun` + "s".
 * @returns The count and the noun.
 *
 * @example
 * ```ts
 * import { counted } from "./words.ts";
 * if (counted(1, "example") !== "1 example") throw new Error();
 * if (counted(0, "unit") !== "0 units") throw new Error();
 * if (counted(2, "Score") !== "2 Scores") throw new Error();
 * ```
 */
export function counted(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}
