/**
 * Aggregating NDJSON lines that are Scores, Aggregates, or both: what the
 * `aggregate` command does, as a stage.
 *
 * @module
 */

import { Aggregator } from "./aggregator.ts";
import type { Aggregate } from "./types.ts";
import { looksLikeAggregate, parseAggregate } from "./wire.ts";
import { parseScore, type Score } from "../score/mod.ts";
import { ScoreOrder } from "./_score_order.ts";
import type { ParsedLine } from "../io/ndjson.ts";

/**
 * Options of {@linkcode aggregateLines}.
 *
 * @example Count into an Aggregator of your own, and collect malformed lines
 * ```ts
 * import { aggregateLines, type AggregateLinesOptions, Aggregator } from "./mod.ts";
 * import type { ParsedLine } from "../io/mod.ts";
 * const aggregator = new Aggregator({ grouped: true });
 * const bad: string[] = [];
 * const options: AggregateLinesOptions = { aggregator, onMalformed: (line, message) => bad.push(`${line}: ${message}`) };
 * const lines: ParsedLine[] = [{ line: 1, text: "{", error: "Unexpected token" }];
 * await ReadableStream.from(lines).pipeThrough(aggregateLines(options)).pipeTo(new WritableStream());
 * if (bad[0] !== "1: Unexpected token" || aggregator.results().length !== 0) throw new Error("unexpected");
 * ```
 */
export interface AggregateLinesOptions {
  /**
   * Where to count; pass your own to read it afterwards. When given,
   * `grouped` and `valueRange` are the aggregator's own.
   * @default {a new Aggregator}
   */
  aggregator?: Aggregator | undefined;
  /**
   * Gather each example's Scores wherever they stand in the input (memory
   * grows with the number of examples) instead of expecting them adjacent.
   * @default {false}
   */
  grouped?: boolean | undefined;
  /**
   * The range each metric's values lie within, as their scorer declares it
   * (`undefined` for none); the mean's interval is clamped to it. When
   * `aggregator` is given, the aggregator's own.
   * @default {none: a range comes only with Aggregate lines that carry one}
   */
  valueRange?:
    | ((metric: string) => readonly [number, number] | undefined)
    | undefined;
  /**
   * Called for each line that is not JSON, not a Score and not an Aggregate;
   * the line is skipped.
   * @default {undefined}
   */
  onMalformed?: ((line: number, message: string) => void) | undefined;
  /**
   * Called, when not `grouped`, for a Score of an example whose Scores of the
   * same metric ended earlier in the input: counted where it stands, that
   * example would count twice. Throw from it to stop; when it returns, the
   * Score is counted as a new cluster. Knowing this holds every example id
   * seen, per metric.
   * @default {undefined: not checked}
   */
  onScattered?:
    | ((line: number, exampleId: string, metric: string) => void)
    | undefined;
  /**
   * Called for a Score whose unit already has one of the same metric (and
   * target) in the input, as `cat a.ndjson a.ndjson` or a file given twice
   * makes: the Score is not counted, so no unit counts twice. Knowing this
   * holds the unit ids of the example being read, per metric (with
   * `grouped`, of every example).
   * @default {undefined: not checked, every Score counted}
   */
  onDuplicate?: ((line: number, score: Score) => void) | undefined;
  /**
   * Called for each Score read (not for Aggregate lines), once it is valid.
   * @default {undefined}
   */
  onScore?: ((score: Score) => void) | undefined;
}

/**
 * A stage that reads parsed NDJSON lines (from {@linkcode NdjsonParseStream}),
 * each a Score or an Aggregate (from a shard, merged exactly), and when they
 * end emits one Aggregate per metric, sorted by metric. A malformed line goes
 * to `onMalformed` and the stream goes on.
 *
 * @param options The aggregator, grouping, and where malformed lines go.
 * @returns The stage.
 *
 * @example Scores and a shard's Aggregate in one stream
 * ```ts
 * import { aggregateLines } from "./mod.ts";
 * import { LineStream, NdjsonParseStream } from "../io/mod.ts";
 * const text = '{"metric":"m","status":"scored","validity":"valid","value":1,' +
 *   '"passed":true,"evaluator_version":"m@1"}\nnot json\n';
 * const bad: number[] = [];
 * const [m] = await Array.fromAsync(
 *   ReadableStream.from([new TextEncoder().encode(text)])
 *     .pipeThrough(new LineStream())
 *     .pipeThrough(new NdjsonParseStream())
 *     .pipeThrough(aggregateLines({ onMalformed: (line) => bad.push(line) })),
 * );
 * if (m?.mean !== 1 || bad[0] !== 2) throw new Error("unexpected");
 * ```
 */
export function aggregateLines(
  options: AggregateLinesOptions = {},
): TransformStream<ParsedLine, Aggregate> {
  const aggregator = options.aggregator ??
    new Aggregator({
      grouped: options.grouped ?? false,
      ...(options.valueRange !== undefined
        ? { valueRange: options.valueRange }
        : {}),
    });
  const report = options.onMalformed ?? (() => {});
  const order = new ScoreOrder(
    options.aggregator?.grouped ?? options.grouped === true,
    options.onScattered,
    options.onDuplicate,
  );
  return new TransformStream({
    transform(parsed) {
      if (parsed.error !== undefined) return report(parsed.line, parsed.error);
      // A matrix's comparison line, as this stage writes it: derived from
      // the Scores, nothing to merge.
      if ((parsed.value as { kind?: unknown } | null)?.kind === "comparison") {
        return;
      }
      try {
        if (looksLikeAggregate(parsed.value)) {
          aggregator.mergeAggregate(parseAggregate(parsed.value));
        } else {
          const score = parseScore(parsed.value);
          if (!order.counts(parsed.line, score)) return;
          aggregator.add(score);
          options.onScore?.(score);
        }
      } catch (error) {
        // Every validation failure is a SyntaxError naming the field.
        if (!(error instanceof SyntaxError)) throw error;
        report(parsed.line, error.message);
      }
    },
    flush(controller) {
      for (const a of aggregator.results()) controller.enqueue(a);
    },
  });
}
