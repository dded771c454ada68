// A suite's datasets (`dataset:` or `datasets:`) as the run reads them: each
// resolved against the config's folder, fingerprinted, and loaded one after
// another as one stream of examples.

import { datasetName, datasetsOf } from "../config/_datasets.ts";
import type { SuiteConfig } from "../config/types.ts";
import type { Example } from "../dataset/case.ts";
import {
  DatasetError,
  formatOf,
  loadDatasetBatches,
} from "../dataset/dataset.ts";
import { cannotOpen, osErrorText } from "../base/errors.ts";
import { fileFingerprint, fingerprint } from "../fingerprint/fingerprint.ts";

/** One dataset of a suite, ready to read. */
export interface DatasetSource {
  /** The path as the config writes it. */
  written: string;
  /** The file, resolved against the config's folder (`-` for stdin). */
  path: string;
  /** The name its example ids start with. */
  name: string;
}

/** A suite's datasets, resolved against its folder. */
export function datasetSources(
  config: SuiteConfig,
  cwd: string,
): DatasetSource[] {
  return datasetsOf(config).map((d) => ({
    written: d.path,
    // Messages name the path: beside a config in the current folder, as
    // the config writes it (`data.jsonl`, not `./data.jsonl`).
    path: d.path === "-" || d.path.startsWith("/") || cwd === "."
      ? d.path
      : `${cwd}/${d.path}`,
    name: datasetName(d),
  }));
}

/**
 * The fingerprint of the datasets' bytes: one file's own, or of each file's
 * with its name, in order; `null` for stdin.
 */
export async function datasetsFingerprint(
  sources: readonly DatasetSource[],
): Promise<string | null> {
  if (sources.length === 1 && sources[0]!.path === "-") return null;
  const prints: string[] = [];
  for (const s of sources) {
    try {
      prints.push(await fileFingerprint(s.path));
    } catch (error) {
      // Linux opens a folder for reading: only reading it fails. A path
      // through a file, or through symlinks that loop, cannot be opened.
      if (!cannotOpen(error)) throw error;
      throw new DatasetError(
        `Cannot open dataset ${JSON.stringify(s.path)}: ${osErrorText(error)}`,
      );
    }
  }
  if (sources.length === 1) return prints[0]!;
  return fingerprint(...sources.flatMap((s, i) => [s.name, prints[i]!]));
}

/**
 * The examples of every dataset, one dataset after another; once `stop`
 * aborts, none more are read: the stream ends and its datasets are closed,
 * a read still waiting on stdin too.
 */
export async function loadSources(
  sources: readonly DatasetSource[],
  stdin: ReadableStream<Uint8Array> | undefined,
  stop?: AbortSignal,
): Promise<ReadableStream<Example[]>> {
  const examples = await loadAll(sources, stdin);
  return stop === undefined ? examples : untilStopped(examples, stop);
}

async function loadAll(
  sources: readonly DatasetSource[],
  stdin: ReadableStream<Uint8Array> | undefined,
): Promise<ReadableStream<Example[]>> {
  const streams: ReadableStream<Example[]>[] = [];
  try {
    // Every file opened before any is read: a missing one fails the run
    // before anything is written.
    for (const s of sources) {
      streams.push(
        await loadDatasetBatches(s.path, {
          name: s.name,
          ...(stdin !== undefined ? { stdin } : {}),
        }),
      );
    }
  } catch (error) {
    await Promise.all(streams.map((s) => s.cancel()));
    throw error;
  }
  if (streams.length === 1) return streams[0]!;
  async function* chain() {
    let i = 0;
    try {
      for (; i < streams.length; i++) yield* streams[i]!;
    } finally {
      // Stopped early: the files not reached yet are closed too.
      for (let j = i + 1; j < streams.length; j++) await streams[j]!.cancel();
    }
  }
  return ReadableStream.from(chain());
}

/**
 * `source` until `stop` aborts, then cancelled: a run that takes no new
 * cases stops reading, where reading on would wait for a stdin that sends
 * nothing (`sleep 100 | evalpipe run`) or go through the rest of a file.
 */
function untilStopped<T>(
  source: ReadableStream<T>,
  stop: AbortSignal,
): ReadableStream<T> {
  const reader = source.getReader();
  // The cancel ends a read that waits: it resolves as done.
  let cancelled: Promise<void> | undefined;
  const cancel = () => (cancelled ??= reader.cancel(stop.reason));
  return new ReadableStream<T>({
    start() {
      stop.addEventListener("abort", cancel, { once: true });
    },
    async pull(controller) {
      const { done, value } = stop.aborted
        ? { done: true, value: undefined }
        : await reader.read();
      if (!done) {
        controller.enqueue(value);
        return;
      }
      stop.removeEventListener("abort", cancel);
      // A dataset that fails to close fails the run, as a failed read does.
      if (stop.aborted) await cancel();
      controller.close();
    },
    cancel(reason) {
      stop.removeEventListener("abort", cancel);
      return cancelled ?? reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
}

/**
 * The dataset an example came from (its path as the config writes it, `-`
 * for stdin), and how its records are counted.
 */
export function whereOf(
  sources: readonly DatasetSource[],
  example: Example,
): { name: string; where: "line" | "record" } {
  const source =
    sources.find((s) => example.example_id.startsWith(`${s.name}#`)) ??
      sources[0]!;
  return {
    // The file to open, as validate names it, not the `name` its ids take;
    // `-` is stdin, which every message names `stdin line 2`.
    name: source.written,
    where: formatOf(source.written) === "jsonl" || source.written === "-"
      ? "line"
      : "record",
  };
}
