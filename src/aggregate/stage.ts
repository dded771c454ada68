/**
 * The aggregation stage: Scores in, one Aggregate per metric out.
 *
 * @module
 */

import { Aggregator } from "./aggregator.ts";
import type { Aggregate } from "./types.ts";
import type { Score } from "../score/mod.ts";

/**
 * A stage that consumes Scores and, when they end, emits one Aggregate per
 * metric, sorted by metric.
 *
 * @param aggregator Where to count; pass your own to read it afterwards.
 * @returns The stage.
 *
 * @example
 * ```ts
 * import { aggregate } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const out = await Array.fromAsync(
 *   ReadableStream.from([scored("m", 1), scored("m", 0.5)]).pipeThrough(aggregate()),
 * );
 * if (out[0]?.mean !== 0.75) throw new Error("unexpected");
 * ```
 */
export function aggregate(
  aggregator: Aggregator = new Aggregator(),
): TransformStream<Score, Aggregate> {
  return new TransformStream({
    transform(score) {
      aggregator.add(score);
    },
    flush(controller) {
      for (const a of aggregator.results()) controller.enqueue(a);
    },
  });
}
