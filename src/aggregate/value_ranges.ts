/**
 * Each metric's declared value range, as records and sidecars keep them,
 * turned into the `valueRange` option aggregation and comparison take.
 *
 * @module
 */

import type { ValueRange } from "./types.ts";

/**
 * The `valueRange` option for a table of ranges by metric (a RunRecord's or
 * a sidecar's `value_ranges`), so aggregates computed again clamp as the
 * run did; `{}` without a table. Given the tables of two runs (as `diff`
 * compares them), a metric's range is the range spanning both, or the one
 * that declares it.
 *
 * @param tables Metric → `[low, high]`, or `undefined`, one per run.
 * @returns `{ valueRange }`, or `{}`.
 *
 * @example
 * ```ts
 * import { valueRangeOption } from "./mod.ts";
 * const { valueRange } = valueRangeOption({ stars: [1, 5] });
 * if (valueRange?.("stars")?.[1] !== 5 || valueRange("other") !== undefined) throw new Error();
 * if ("valueRange" in valueRangeOption(undefined)) throw new Error();
 * const both = valueRangeOption({ m: [0, 1] }, { m: [-1, 1], n: [1, 5] }).valueRange;
 * if (both?.("m")?.join() !== "-1,1" || both("n")?.join() !== "1,5") throw new Error();
 * ```
 */
export function valueRangeOption(
  ...tables: Array<Readonly<Record<string, ValueRange>> | undefined>
): { valueRange?: (metric: string) => ValueRange | undefined } {
  const known = tables.filter((t) => t !== undefined);
  if (known.length === 0) return {};
  return {
    valueRange: (metric) => {
      let out: ValueRange | undefined;
      for (const ranges of known) {
        if (!Object.hasOwn(ranges, metric)) continue;
        const r = ranges[metric]!;
        out = out === undefined
          ? r
          : [Math.min(out[0], r[0]), Math.max(out[1], r[1])];
      }
      return out;
    },
  };
}
