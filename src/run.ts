/**
 * Running a suite: the stages assembled from a config, end to end.
 *
 * @module
 */

import { type Aggregate, Aggregator } from "./aggregate.ts";
import type { Example } from "./case.ts";
import {
  buildScorers,
  buildTarget,
  folderOf,
  loadConfig,
  type SuiteConfig,
} from "./config.ts";
import { formatOf, loadDataset } from "./dataset.ts";
import type { Score } from "./score.ts";
import { scoreUnits } from "./score_units.ts";
import { runTarget } from "./target.ts";

/** Options of {@linkcode runSuite}. */
export interface RunSuiteOptions {
  /** Where Scores go, one at a time, as they are produced. */
  sink: WritableStream<Score>;
  /**
   * Units in flight at once; overrides the config's `concurrency`.
   * @default {the config's, else 8}
   */
  concurrency?: number;
  /**
   * Every scorer's timeout in seconds; overrides the config.
   * @default {the config's}
   */
  timeout?: number;
  /**
   * Aborting stops the run: running commands are killed.
   * @default {undefined}
   */
  signal?: AbortSignal;
  /**
   * Called for each malformed dataset record (its Scores are `invalid case`
   * errors) with a message naming the file and line.
   * @default {undefined}
   */
  onInvalidRecord?: (message: string, example: Example) => void;
  /**
   * Called for each Score, after it is validated and before it is written.
   * @default {undefined}
   */
  onScore?: (score: Score) => void;
  /**
   * Where `-` as the dataset reads from.
   * @default {Deno.stdin.readable}
   */
  stdin?: ReadableStream<Uint8Array>;
}

/** What a finished run reports. */
export interface RunSummary {
  /** The aggregates, one per metric, sorted by metric. */
  aggregates: Aggregate[];
  /** Scores written. */
  scores: number;
  /** Malformed dataset records seen. */
  invalidRecords: number;
}

/**
 * Runs the suite a config file describes: load the dataset, call the target,
 * run the scorers, validate every Score, write it to the sink, aggregate.
 * Paths and commands resolve against the config file's folder.
 *
 * @param configPath The YAML config file.
 * @param options The sink and overrides.
 * @returns The summary.
 * @throws {import("./config.ts").ConfigError} For a config that cannot be used.
 * @throws {import("./dataset.ts").DatasetError} For a dataset that cannot be read at all.
 */
export async function runSuite(
  configPath: string,
  options: RunSuiteOptions,
): Promise<RunSummary> {
  const config: SuiteConfig = await loadConfig(configPath);
  const cwd = folderOf(configPath);
  const scorers = buildScorers(config, configPath, {
    cwd,
    ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
  });
  const target = buildTarget(config, cwd);
  const datasetPath = config.dataset === "-" || config.dataset.startsWith("/")
    ? config.dataset
    : `${cwd}/${config.dataset}`;
  const datasetName = config.dataset === "-" ? "stdin" : config.dataset;
  const where = formatOf(config.dataset) === "jsonl" ? "line" : "record";
  const examples = await loadDataset(datasetPath, {
    name: datasetName,
    ...(options.stdin !== undefined ? { stdin: options.stdin } : {}),
  });
  const concurrency = options.concurrency ?? config.concurrency ?? 8;
  const signal = options.signal;
  const aggregator = new Aggregator();
  let invalidRecords = 0;
  let scores = 0;
  await examples
    .pipeThrough(
      new TransformStream<Example, Example>({
        transform(example, controller) {
          if (example.invalid !== undefined) {
            invalidRecords++;
            options.onInvalidRecord?.(
              `Invalid case in ${
                JSON.stringify(datasetName)
              } ${where} ${example.line}: ${example.invalid}`,
              example,
            );
          }
          controller.enqueue(example);
        },
      }),
    )
    .pipeThrough(
      runTarget(target, { concurrency, ...(signal ? { signal } : {}) }),
    )
    .pipeThrough(
      scoreUnits(scorers, { concurrency, ...(signal ? { signal } : {}) }),
    )
    .pipeThrough(
      new TransformStream<Score, Score>({
        transform(score, controller) {
          scores++;
          aggregator.add(score);
          options.onScore?.(score);
          controller.enqueue(score);
        },
      }),
    )
    .pipeTo(options.sink, signal !== undefined ? { signal } : {});
  return { aggregates: aggregator.results(), scores, invalidRecords };
}
