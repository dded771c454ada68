/**
 * What part of a suite a run ran: which shard of how many, which subset
 * (`--limit`, `--sample`, `--filter`), and how many examples that left in
 * and out. A RunRecord (and the sidecar of a Scores file) carries it, so
 * that shards can be merged back into one run and a subset is never taken
 * for the whole suite.
 *
 * @module
 */

import { FieldError, mappingAt } from "../io/fields.ts";

/**
 * One shard of a suite split `count` ways (`run --shard index/count`).
 *
 * @example The second of three shards
 * ```ts
 * import type { ShardInfo } from "./mod.ts";
 * const shard: ShardInfo = { index: 2, count: 3 };
 * if (shard.index > shard.count) throw new Error("unexpected");
 * ```
 */
export interface ShardInfo {
  /** Which shard, from 1. */
  index: number;
  /** How many shards the suite is split into. */
  count: number;
}

/**
 * The subset of a suite a run chose: `--filter`, then `--sample`, then
 * `--limit`, each applied to what the one before left.
 *
 * @example The first ten examples whose id or metadata matches "math"
 * ```ts
 * import type { Subset } from "./mod.ts";
 * const subset: Subset = { filter: "math", limit: 10 };
 * if (subset.sample !== undefined) throw new Error("unexpected");
 * ```
 */
export interface Subset {
  /** A regular expression an example's id or a metadata value must match. */
  filter?: string | undefined;
  /** How many examples to draw, by a stable hash of the seed and the id. */
  sample?: number | undefined;
  /** The seed of `sample`. */
  seed?: string | undefined;
  /** Run only the first N examples (of those left). */
  limit?: number | undefined;
}

/**
 * How many examples a run saw and what it did with them, written at the end
 * of its record.
 *
 * @example A shard that ran 2 examples and skipped 1 of a 10-example suite
 * ```ts
 * import type { SelectionTally } from "./mod.ts";
 * const tally: SelectionTally = { examples: 10, ran: 2, skipped: 1, order: { "d#1": 0, "d#4": 3, "d#9": 18 } };
 * if (tally.ran + tally.skipped !== Object.keys(tally.order ?? {}).length) throw new Error("unexpected");
 * ```
 */
export interface SelectionTally {
  /** Examples in the suite's datasets (every shard's). */
  examples: number;
  /** Examples this run ran. */
  ran: number;
  /** Examples this run left out (their Scores are `skipped`). */
  skipped: number;
  /**
   * A shard's only: each of its examples' place in the unsharded run's
   * output (its position in the datasets; after every example that ran when
   * it was skipped), so that merged Scores come in that order.
   */
  order?: Record<string, number>;
}

/** `o.shard`, checked; `undefined` when absent. */
export function shardAt(o: Record<string, unknown>): ShardInfo | undefined {
  if (o.shard === undefined) return undefined;
  const s = mappingAt(o.shard, "shard");
  const { index, count } = s;
  if (!Number.isSafeInteger(count) || (count as number) < 1) {
    throw new FieldError("shard.count", "a whole number from 1", count);
  }
  if (
    !Number.isSafeInteger(index) || (index as number) < 1 ||
    (index as number) > (count as number)
  ) {
    throw new FieldError("shard.index", `a whole number 1..${count}`, index);
  }
  return { index: index as number, count: count as number };
}

/** `o.subset`, checked; `undefined` when absent. */
export function subsetAt(o: Record<string, unknown>): Subset | undefined {
  if (o.subset === undefined) return undefined;
  const s = mappingAt(o.subset, "subset");
  const out: Subset = {};
  for (const key of ["filter", "seed"] as const) {
    if (s[key] === undefined) continue;
    if (typeof s[key] !== "string") {
      throw new FieldError(`subset.${key}`, "a string", s[key]);
    }
    out[key] = s[key] as string;
  }
  for (const key of ["sample", "limit"] as const) {
    if (s[key] === undefined) continue;
    if (!Number.isSafeInteger(s[key]) || (s[key] as number) < 0) {
      throw new FieldError(`subset.${key}`, "a whole number", s[key]);
    }
    out[key] = s[key] as number;
  }
  return out;
}

/** `o.selection`, checked; `undefined` when absent. */
export function selectionAt(
  o: Record<string, unknown>,
): SelectionTally | undefined {
  if (o.selection === undefined) return undefined;
  const s = mappingAt(o.selection, "selection");
  const count = (key: "examples" | "ran" | "skipped") => {
    if (!Number.isSafeInteger(s[key]) || (s[key] as number) < 0) {
      throw new FieldError(`selection.${key}`, "a whole number", s[key]);
    }
    return s[key] as number;
  };
  const tally: SelectionTally = {
    examples: count("examples"),
    ran: count("ran"),
    skipped: count("skipped"),
  };
  if (s.order !== undefined) {
    // Ids are data: "__proto__" must be a key like any other.
    const order: Record<string, number> = Object.create(null);
    for (
      const [id, at] of Object.entries(mappingAt(s.order, "selection.order"))
    ) {
      if (!Number.isSafeInteger(at) || (at as number) < 0) {
        throw new FieldError(`selection.order.${id}`, "a whole number", at);
      }
      order[id] = at as number;
    }
    tally.order = order;
  }
  return tally;
}

/**
 * Describes a subset as the flags that choose it.
 *
 * @param subset The subset.
 * @returns E.g. `--filter "math" --limit 10`.
 *
 * @example
 * ```ts
 * import { subsetFlags } from "./mod.ts";
 * if (subsetFlags({ sample: 50, seed: "7" }) !== "--sample 50 --seed 7") throw new Error("unexpected");
 * ```
 */
export function subsetFlags(subset: Subset): string {
  const parts: string[] = [];
  if (subset.filter !== undefined) {
    parts.push(`--filter ${JSON.stringify(subset.filter)}`);
  }
  if (subset.sample !== undefined) {
    parts.push(`--sample ${subset.sample} --seed ${subset.seed ?? "0"}`);
  }
  if (subset.limit !== undefined) parts.push(`--limit ${subset.limit}`);
  return parts.join(" ");
}
