/**
 * The aggregation stages: Scores in, one Aggregate per metric out; or Scores
 * passed through while an aggregator counts them.
 *
 * @module
 */

import { Aggregator } from "./aggregator.ts";
import type { Aggregate, ValueRange } from "./types.ts";
import { ScoreOrder } from "./_score_order.ts";
import type { Score } from "../score/mod.ts";

/**
 * Options of {@linkcode aggregate}.
 *
 * @example Epochs of an example apart, as after a resume: gathered
 * ```ts
 * import { aggregate, type AggregateOptions } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const at = (e: string, k: number) => ({ example_id: e, unit_id: `${e}@${k}` });
 * const scores = [scored("m", 1, at("d#1", 1)), scored("m", 1, at("d#2", 1)), scored("m", 0, at("d#1", 2))];
 * const options: AggregateOptions = { grouped: true };
 * const [m] = await Array.fromAsync(ReadableStream.from(scores).pipeThrough(aggregate(options)));
 * if (m?.examples !== 2 || m.mean !== 0.75) throw new Error("unexpected");
 * ```
 */
export interface AggregateOptions {
  /**
   * Where to count; pass your own to read it afterwards. When given,
   * `grouped` and `valueRange` are the aggregator's own.
   * @default {a new Aggregator}
   */
  aggregator?: Aggregator | undefined;
  /**
   * Gather each example's Scores wherever they stand in the stream (memory
   * grows with the number of examples) instead of expecting them adjacent,
   * as `aggregate --grouped` does.
   * @default {false}
   */
  grouped?: boolean | undefined;
  /**
   * The range each metric's values lie within, as their scorer declares it
   * (`undefined` for none): the mean's interval is clamped to it.
   * @default {none}
   */
  valueRange?: ((metric: string) => ValueRange | undefined) | undefined;
  /**
   * Called, when not `grouped`, for a Score of an example whose Scores of
   * the same metric ended earlier in the stream (`at`, its 1-based position
   * among the Scores): counted where it stands, that example would count
   * twice. When it returns, the Score is counted as a new example.
   * @default {throws a ScoreOrderError, as the `aggregate` command stops}
   */
  onScattered?:
    | ((at: number, exampleId: string, metric: string) => void)
    | undefined;
  /**
   * Called for a Score whose unit already has one of the same metric (and
   * target) in the stream, as a file read twice gives: the Score is not
   * counted, as the `aggregate` command counts it once.
   * @default {throws a ScoreOrderError, as the `aggregate` command exits 2}
   */
  onDuplicate?: ((at: number, score: Score) => void) | undefined;
}

/**
 * The Scores given to {@linkcode aggregate} in an order that would count
 * some twice: an example's Scores apart, or a unit's Score given twice.
 * The command line exits 2 on it.
 *
 * @example A file read twice
 * ```ts
 * import { aggregate, ScoreOrderError } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const one = scored("m", 1, { example_id: "d#1", unit_id: "d#1" });
 * const error = await Array.fromAsync(ReadableStream.from([one, one]).pipeThrough(aggregate()))
 *   .then(() => undefined, (e) => e);
 * if (!(error instanceof ScoreOrderError) || error.at !== 2 || error.exitCode !== 2) throw new Error(String(error));
 * ```
 */
export class ScoreOrderError extends RangeError {
  /** The exit code the command line ends with: an input error. */
  readonly exitCode: number = 2;
  /** The 1-based position of the Score at fault among the Scores. */
  readonly at: number;

  /**
   * Creates the instance.
   *
   * @param at The 1-based position of the Score at fault.
   * @param message What is wrong.
   */
  constructor(at: number, message: string) {
    super(message);
    this.name = "ScoreOrderError";
    this.at = at;
  }
}

/**
 * Whether `options` is an Aggregator rather than options: by its methods, so
 * that one made by a second copy of this module (another version of evalpipe
 * in a script's dependency tree, an import with a query) is not taken for
 * options, which would count into a fresh Aggregator and leave it empty.
 */
function isAggregator(
  options: AggregateOptions | Aggregator,
): options is Aggregator {
  if (options instanceof Aggregator) return true;
  const o = options as Partial<Record<"add" | "results", unknown>>;
  return typeof o.add === "function" && typeof o.results === "function";
}

/**
 * A stage that consumes Scores and, when they end, emits one Aggregate per
 * metric, sorted by metric. It counts what the `aggregate` command counts:
 * the Scores of an example must be adjacent (unless `grouped`), and a unit
 * has one Score per metric; by default a Score that breaks either errors the
 * stream with a {@linkcode ScoreOrderError} (counted, it would count twice).
 * Scores without ids are not checked.
 *
 * @param options The options, or the {@linkcode Aggregator} to count into.
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
  options: AggregateOptions | Aggregator = {},
): TransformStream<Score, Aggregate> {
  const given = isAggregator(options) ? { aggregator: options } : options;
  const aggregator = given.aggregator ??
    new Aggregator({ grouped: given.grouped, valueRange: given.valueRange });
  const order = new ScoreOrder(
    aggregator.grouped,
    given.onScattered ?? ((at, exampleId, metric) => {
      throw new ScoreOrderError(
        at,
        `The Scores of example ${JSON.stringify(exampleId)} (metric ${
          JSON.stringify(metric)
        }) are not adjacent: Score ${at} comes after other examples' Scores, so it would count as a second example. Aggregate with { grouped: true } to gather each example wherever it stands, or sort the Scores by example_id`,
      );
    }),
    given.onDuplicate ?? ((at, score) => {
      throw new ScoreOrderError(
        at,
        `Score ${at} is given twice: unit ${
          JSON.stringify(score.unit_id)
        } already has a Score of metric ${JSON.stringify(score.metric)}${
          score.target_name === undefined
            ? ""
            : ` for target ${JSON.stringify(score.target_name)}`
        }. Aggregate with onDuplicate to count it once and go on`,
      );
    }),
  );
  let at = 0;
  return new TransformStream({
    transform(score) {
      if (order.counts(++at, score)) aggregator.add(score);
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
 * aggregates. Unlike {@linkcode aggregate}, it checks no order: give it a
 * pipeline's Scores (one per unit and metric), and a grouped Aggregator when
 * an example's Scores may stand apart.
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
