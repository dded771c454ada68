/**
 * The aggregation stages: Scores in, one Aggregate per metric out; or Scores
 * passed through while an aggregator counts them.
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

/**
 * A stage that passes batches of Scores through unchanged, adding each Score
 * to `aggregator` on the way: the Scores go on to a sink, and the aggregates
 * are read from the aggregator once the stream has ended. This is how `run`
 * aggregates.
 *
 * @param aggregator Where to count.
 * @returns The stage.
 *
 * @example
 * ```ts
 * import { aggregateInto, Aggregator } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const aggregator = new Aggregator();
 * const batches = await Array.fromAsync(
 *   ReadableStream.from([[scored("m", 1), scored("m", 0.5)]]).pipeThrough(aggregateInto(aggregator)),
 * );
 * if (batches[0]?.length !== 2 || aggregator.results()[0]?.mean !== 0.75) throw new Error();
 * ```
 */
export function aggregateInto(
  aggregator: Aggregator,
): TransformStream<Score[], Score[]> {
  return new TransformStream({
    transform(batch, controller) {
      for (let i = 0; i < batch.length; i++) aggregator.add(batch[i]!);
      controller.enqueue(batch);
    },
  });
}
