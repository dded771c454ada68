/**
 * Scores that carry no ids, as an evalglass record written before its
 * Scores had them holds them, given the only identity they have: their
 * position.
 *
 * @module
 */

import type { Score } from "../score/mod.ts";

/**
 * Gives Scores none of which carries an `example_id` or a `unit_id` (an
 * older evalglass record's) the ids of their position: the k-th Score of a
 * metric (of a target, in a matrix run) is example and unit `#k`. `view`
 * groups them so, `diff` pairs the k-th of a metric in one run with the
 * k-th in the other, and `aggregate` counts each as an example of its own,
 * as it counts any Score without ids.
 *
 * @param scores Scores, in the order of their file.
 * @returns Copies with those ids; `undefined` when any Score carries an id,
 *   or when there are none.
 *
 * @example Two metrics over three examples, written example by example
 * ```ts
 * import { positionIds } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const read = positionIds([scored("a", 1), scored("b", 0), scored("a", 0), scored("b", 1)]);
 * if (read?.map((s) => `${s.metric}${s.example_id}`).join() !== "a#1,b#1,a#2,b#2") throw new Error();
 * ```
 */
export function positionIds(scores: readonly Score[]): Score[] | undefined {
  if (scores.length === 0) return undefined;
  for (const s of scores) {
    if (s.example_id !== undefined || s.unit_id !== undefined) return undefined;
  }
  const seen = new Map<string, number>();
  return scores.map((s) => {
    const key = s.target_name === undefined
      ? s.metric
      : `${s.metric}\u0000${s.target_name}`;
    const k = (seen.get(key) ?? 0) + 1;
    seen.set(key, k);
    const id = `#${k}`;
    // The ids stand where a Score's own stand, before its target.
    const {
      metric,
      status,
      validity,
      value,
      passed,
      reason,
      evaluator_version,
      ...rest
    } = s;
    return {
      metric,
      status,
      validity,
      value,
      ...(passed !== undefined ? { passed } : {}),
      ...(reason !== undefined ? { reason } : {}),
      evaluator_version,
      example_id: id,
      unit_id: id,
      ...rest,
    };
  });
}

/**
 * Says why two runs' Scores without ids cannot be paired by position: a
 * metric (of a target) both runs measured, but not as many times, so the
 * k-th Score of one need not be the k-th case of the other.
 *
 * @param a The Scores of run A, as its file holds them.
 * @param b The Scores of run B.
 * @returns The first such metric and its counts; `undefined` when every
 *   metric both runs hold has as many Scores in each.
 *
 * @example
 * ```ts
 * import { positionMismatch } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const why = positionMismatch([scored("m", 1)], [scored("m", 1), scored("m", 0)]);
 * if (why !== 'A has 1 Score of "m" and B 2') throw new Error(why);
 * ```
 */
export function positionMismatch(
  a: readonly Score[],
  b: readonly Score[],
): string | undefined {
  const counts = (scores: readonly Score[]) => {
    const out = new Map<string, number>();
    for (const s of scores) {
      const key = JSON.stringify([s.metric, s.target_name ?? null]);
      out.set(key, (out.get(key) ?? 0) + 1);
    }
    return out;
  };
  const inB = counts(b);
  for (const [key, n] of counts(a)) {
    const m = inB.get(key);
    if (m === undefined || m === n) continue;
    const [metric, target] = JSON.parse(key) as [string, string | null];
    return `A has ${n} ${n === 1 ? "Score" : "Scores"} of ${
      JSON.stringify(metric)
    }${
      target === null ? "" : ` for target ${JSON.stringify(target)}`
    } and B ${m}`;
  }
  return undefined;
}
