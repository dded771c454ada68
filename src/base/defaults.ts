/**
 * The defaults the stages and `run` share: a script assembled from the
 * stages and `evalpipe run` behave alike when neither says otherwise.
 *
 * @module
 */

/**
 * The shape of {@linkcode DEFAULTS}.
 *
 * @example
 * ```ts
 * import type { Defaults } from "./defaults.ts";
 * const mine: Defaults = { concurrency: 2, epochs: 3 };
 * if (mine.concurrency !== 2) throw new Error();
 * ```
 */
export interface Defaults {
  /**
   * Calls in flight at once in each concurrent stage: target calls in
   * `runTarget`, units being scored in `scoreUnits`, and the same in `run`.
   */
  readonly concurrency: number;
  /** How many times each example is run. */
  readonly epochs: number;
}

/**
 * The defaults of the target and scoring stages and of `run` (where a
 * config's `concurrency` and `epochs`, then the flags, override them).
 * Concurrency 8 is what `run` used before the stages shared its defaults
 * (they had 4); synchronous targets and scorers (a replay, the built-ins)
 * run the same at any concurrency, since nothing of theirs is ever in
 * flight.
 *
 * @example
 * ```ts
 * import { DEFAULTS } from "./defaults.ts";
 * if (DEFAULTS.concurrency !== 8 || DEFAULTS.epochs !== 1) throw new Error();
 * ```
 */
export const DEFAULTS: Defaults = Object.freeze({ concurrency: 8, epochs: 1 });
