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
 * run did; `{}` without a table.
 *
 * @param ranges Metric → `[low, high]`, or `undefined`.
 * @returns `{ valueRange }`, or `{}`.
 *
 * @example
 * ```ts
 * import { valueRangeOption } from "./mod.ts";
 * const { valueRange } = valueRangeOption({ stars: [1, 5] });
 * if (valueRange?.("stars")?.[1] !== 5 || valueRange("other") !== undefined) throw new Error();
 * if ("valueRange" in valueRangeOption(undefined)) throw new Error();
 * ```
 */
export function valueRangeOption(
  ranges: Readonly<Record<string, ValueRange>> | undefined,
): { valueRange?: (metric: string) => ValueRange | undefined } {
  if (ranges === undefined) return {};
  return {
    valueRange: (metric) =>
      Object.hasOwn(ranges, metric) ? ranges[metric] : undefined,
  };
}
