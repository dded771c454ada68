/**
 * A suite's datasets: `dataset:` (one file) or `datasets:` (a list, each
 * with its path and an optional name), checked beyond their shape, and read
 * as one list.
 *
 * @module
 */

import { nfcKey } from "../base/nfc.ts";
import { ConfigError } from "./_check.ts";
import type { DatasetConfig, SuiteConfig } from "./types.ts";

/**
 * The name a dataset's example ids start with: its `name`, else its path as
 * written (`stdin` for `-`).
 *
 * @param dataset The dataset.
 * @returns The prefix of its example ids, before `#`.
 *
 * @example
 * ```ts
 * import { datasetName } from "./mod.ts";
 * if (datasetName({ path: "a.jsonl", name: "easy" }) !== "easy" || datasetName({ path: "a.jsonl" }) !== "a.jsonl") throw new Error();
 * ```
 */
export function datasetName(dataset: DatasetConfig): string {
  return dataset.name ?? (dataset.path === "-" ? "stdin" : dataset.path);
}

/**
 * A suite's datasets as one list: `dataset: x` is `[{ path: x }]`.
 *
 * @param config A validated config.
 * @returns Its datasets, in order.
 *
 * @example
 * ```ts
 * import { checkConfigText, datasetsOf } from "./mod.ts";
 * const one = await checkConfigText("dataset: a.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n", "s.yaml");
 * if (datasetsOf(one)[0]?.path !== "a.jsonl") throw new Error("unexpected");
 * ```
 */
export function datasetsOf(config: SuiteConfig): DatasetConfig[] {
  if (config.datasets !== undefined) return config.datasets;
  return config.dataset === undefined ? [] : [{ path: config.dataset }];
}

/**
 * Refuses a config without a dataset, with both `dataset` and `datasets`,
 * with stdin in a list, with two datasets whose example ids would share a
 * name, or with one file listed twice.
 *
 * @param config A validated config.
 * @param file The config file, for messages.
 * @param lineOf Finds the line of a path.
 * @throws {ConfigError} On the first problem, at its line.
 */
export function checkDatasets(
  config: SuiteConfig,
  file: string,
  lineOf: (path: readonly PropertyKey[]) => number | undefined,
): void {
  if (config.dataset !== undefined && config.datasets !== undefined) {
    throw new ConfigError(
      file,
      lineOf(["datasets"]),
      'give "dataset" (one file) or "datasets" (a list), not both',
    );
  }
  if (config.dataset === undefined && config.datasets === undefined) {
    throw new ConfigError(
      file,
      undefined,
      'missing key "dataset" (a file of cases; or "datasets", a list of them)',
    );
  }
  const seen = new Map<string, number>();
  const files = new Map<string, number>();
  for (const [i, dataset] of (config.datasets ?? []).entries()) {
    if (dataset.path === "-") {
      throw new ConfigError(
        file,
        lineOf(["datasets", i, "path"]),
        'stdin ("-") cannot be one of "datasets": give it as dataset: "-"',
      );
    }
    if (dataset.name !== undefined && dataset.name.includes("#")) {
      throw new ConfigError(
        file,
        lineOf(["datasets", i, "name"]),
        `a dataset's name cannot hold "#" (it ends the name in example ids), not ${
          JSON.stringify(dataset.name)
        }`,
      );
    }
    const name = datasetName(dataset);
    if (nfcKey(name) === "stdin") {
      // Piped input's ids (`dataset: "-"`): diff and a baseline would pair
      // this file's examples with a piped run's as if one source.
      throw new ConfigError(
        file,
        lineOf(["datasets", i, dataset.name !== undefined ? "name" : "path"]),
        `a dataset cannot be named "stdin": example ids "stdin#…" are piped input's (dataset: "-"), and diff would pair the two; give it another "name"`,
      );
    }
    // In NFC, as every reader of the Scores compares example ids: "café"
    // written two ways names the examples of both alike.
    const first = seen.get(nfcKey(name));
    if (first !== undefined) {
      throw new ConfigError(
        file,
        lineOf(["datasets", i]),
        `datasets ${first + 1} and ${i + 1} would both name their examples ${
          JSON.stringify(`${name}#…`)
        }: give one a different "name"`,
      );
    }
    seen.set(nfcKey(name), i);
    // The same file under two spellings (or names) would run every case
    // of it twice, counted as two examples each.
    const path = samePath(dataset.path);
    const again = files.get(path);
    if (again !== undefined) {
      throw new ConfigError(
        file,
        lineOf(["datasets", i, "path"]),
        `datasets ${again + 1} and ${i + 1} are the same file, ${
          JSON.stringify(path)
        }: each case would run twice; list it once (epochs: N runs each case N times)`,
      );
    }
    files.set(path, i);
  }
}

/** A relative or absolute path with `.`, `..` and doubled slashes resolved as far as text allows. */
function samePath(path: string): string {
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === ".." && parts.length > 0 && parts.at(-1) !== "..") {
      parts.pop();
    } else parts.push(part);
  }
  return `${path.startsWith("/") ? "/" : ""}${parts.join("/")}`;
}
