/**
 * The rule that every scorer has its own metric name: Scores are told apart
 * by metric, so two scorers with one name would mix their Scores.
 *
 * @module
 */

/**
 * A metric name two scorers share, and where each stands.
 *
 * @example Name the two scorers in an error message
 * ```ts
 * import { type DuplicateScorerName, duplicateScorerName } from "./mod.ts";
 * const twice: DuplicateScorerName | undefined = duplicateScorerName(["grounded", "grounded"]);
 * if (twice === undefined || `scorers ${twice.first + 1} and ${twice.second + 1}` !== "scorers 1 and 2") {
 *   throw new Error("unexpected");
 * }
 * ```
 */
export interface DuplicateScorerName {
  /** The name. */
  name: string;
  /** The 0-based position of the first scorer with it. */
  first: number;
  /** The 0-based position of the second. */
  second: number;
}

/**
 * Finds the first metric name that two scorers share: the one rule the
 * config check, the config's scorer builder and the `score` command apply.
 *
 * @param names Each scorer's metric name, in order; `undefined` for one not
 * known yet (a subprocess scorer's, before its command is resolved), skipped.
 * @returns The first name given twice, or `undefined` when all differ.
 *
 * @example
 * ```ts
 * import { duplicateScorerName } from "./mod.ts";
 * const twice = duplicateScorerName(["exact_match", undefined, "exact_match"]);
 * if (twice?.name !== "exact_match" || twice.second !== 2) throw new Error();
 * if (duplicateScorerName(["a", "b"]) !== undefined) throw new Error();
 * ```
 */
export function duplicateScorerName(
  names: readonly (string | undefined)[],
): DuplicateScorerName | undefined {
  const seen = new Map<string, number>();
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    if (name === undefined) continue;
    const first = seen.get(name);
    if (first !== undefined) return { name, first, second: i };
    seen.set(name, i);
  }
  return undefined;
}
