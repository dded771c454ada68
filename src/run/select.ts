/**
 * Choosing the examples a run runs: its shard (`--shard k/n`, by a stable
 * hash of the example id) and its subset (`--filter`, `--sample`,
 * `--limit`). A shard drops the examples of other shards (they are theirs);
 * a subset keeps the examples it leaves out as `skipped` Scores, written
 * after the Scores of the examples that ran, so that nothing is silently
 * absent.
 *
 * @module
 */

import { InputError } from "../base/errors.ts";
import { nfcKey } from "../base/nfc.ts";
import { fingerprint } from "../fingerprint/fingerprint.ts";
import type { Example } from "../dataset/case.ts";
import type { SelectionTally, ShardInfo, Subset } from "../record/selection.ts";
import { subsetFlags } from "../record/selection.ts";
import { type Score, skipped } from "../score/mod.ts";

/**
 * A `--shard` that cannot be used: malformed, out of range, or `auto` with
 * no index in the environment. The command line exits 2.
 *
 * @example
 * ```ts
 * import { parseShard, ShardError } from "./mod.ts";
 * const error = (() => { try { parseShard("4/3"); } catch (e) { return e; } })();
 * if (!(error instanceof ShardError) || error.exitCode !== 2) throw new Error("unexpected");
 * ```
 */
export class ShardError extends InputError {
  /**
   * Creates the error.
   *
   * @param message What is wrong.
   */
  constructor(message: string) {
    super(message);
    this.name = "ShardError";
  }
}

/**
 * The environment variables `--shard auto/n` reads its index from, in this
 * order, each with the number its first shard has.
 *
 * @example Kubernetes counts from 0
 * ```ts
 * import { SHARD_INDEX_VARIABLES } from "./mod.ts";
 * const k8s = SHARD_INDEX_VARIABLES.find((v) => v.name === "JOB_COMPLETION_INDEX");
 * if (k8s?.base !== 0) throw new Error("unexpected");
 * ```
 */
export const SHARD_INDEX_VARIABLES: ReadonlyArray<
  { name: string; base: 0 | 1; engine: string }
> = [
  { name: "EVALPIPE_SHARD_INDEX", base: 1, engine: "evalpipe's recipes" },
  {
    name: "JOB_COMPLETION_INDEX",
    base: 0,
    engine: "a Kubernetes Indexed Job",
  },
  { name: "CI_NODE_INDEX", base: 1, engine: "GitLab CI's parallel:" },
];

/**
 * Reads `--shard k/n` (k from 1) or `--shard auto/n` (k from the engine's
 * environment: {@linkcode SHARD_INDEX_VARIABLES}).
 *
 * @param text The flag's value.
 * @param env Reads an environment variable.
 * @returns The shard.
 * @throws {ShardError} When it is malformed, out of range, or `auto` finds no index.
 *
 * @example A Kubernetes Indexed Job's third pod runs shard 3 of 4
 * ```ts
 * import { parseShard } from "./mod.ts";
 * const env = (name: string) => name === "JOB_COMPLETION_INDEX" ? "2" : undefined;
 * const shard = parseShard("auto/4", env);
 * if (shard.index !== 3 || shard.count !== 4) throw new Error("unexpected");
 * ```
 */
export function parseShard(
  text: string,
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): ShardInfo {
  const m = /^(auto|\d+)\/(\d+)$/.exec(text);
  if (m === null) {
    throw new ShardError(
      `--shard takes k/n or auto/n (k from 1 to n), not ${
        JSON.stringify(text)
      }`,
    );
  }
  const count = Number(m[2]);
  if (!Number.isSafeInteger(count) || count < 1) {
    throw new ShardError(
      `--shard ${
        JSON.stringify(text)
      }: the number of shards must be at least 1`,
    );
  }
  if (m[1] !== "auto") {
    const index = Number(m[1]);
    if (!(index >= 1 && index <= count)) {
      throw new ShardError(
        `--shard ${JSON.stringify(text)}: k must be from 1 to ${count}`,
      );
    }
    return { index, count };
  }
  for (const v of SHARD_INDEX_VARIABLES) {
    const raw = env(v.name);
    if (raw === undefined || raw === "") continue;
    const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
    const index = value + 1 - v.base;
    if (!(index >= 1 && index <= count)) {
      throw new ShardError(
        `--shard ${JSON.stringify(text)}: ${v.name} is ${
          JSON.stringify(raw)
        }, not a shard of ${count} (${v.engine} counts from ${v.base}, so ${v.base}..${
          count - 1 + v.base
        })`,
      );
    }
    return { index, count };
  }
  throw new ShardError(
    `--shard ${JSON.stringify(text)}: no shard index in the environment (set ${
      SHARD_INDEX_VARIABLES.map((v) => `${v.name} (from ${v.base})`).join(
        ", ",
      )
    }), or give --shard k/${count}`,
  );
}

/**
 * The shard an example belongs to: a stable hash of its id (SHA-256, the
 * first 48 bits, modulo the count), the same on every machine and run. The
 * id is hashed in Unicode NFC, as every other comparison of ids is: one
 * written with "é" as "e" and a combining accent goes to the shard of its
 * one-code-point spelling (an ASCII id is hashed as it is).
 *
 * @param exampleId The example id.
 * @param count How many shards.
 * @returns Its shard, from 1.
 *
 * @example
 * ```ts
 * import { shardOf } from "./mod.ts";
 * const k = shardOf("cases.jsonl#1", 4);
 * if (k < 1 || k > 4 || shardOf("cases.jsonl#1", 4) !== k) throw new Error("unexpected");
 * ```
 */
export function shardOf(exampleId: string, count: number): number {
  const hex = fingerprint("evalpipe shard", nfcKey(exampleId)).slice(7, 19);
  return (parseInt(hex, 16) % count) + 1;
}

/** An example's sampling key: smaller is drawn first. */
function sampleKey(seed: string, exampleId: string): string {
  return fingerprint("evalpipe sample", seed, nfcKey(exampleId));
}

/**
 * Compiles `--filter`: a regular expression over example ids and metadata
 * values, both it and them read in Unicode NFC, so that an "é" typed one
 * way matches an id or a value written the other.
 *
 * @param pattern The expression.
 * @returns Whether an example matches.
 * @throws {InputError} When it does not compile.
 */
function compileFilter(pattern: string): (example: Example) => boolean {
  let re: RegExp;
  try {
    re = new RegExp(nfcKey(pattern), "u");
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    throw new InputError(
      `--filter ${JSON.stringify(pattern)} is not a regular expression: ${
        error.message.replace(/^Invalid regular expression: /, "")
      }`,
    );
  }
  return (example) => {
    if (re.test(nfcKey(example.example_id))) return true;
    const metadata = example.case?.metadata;
    if (metadata === undefined || metadata === null) return false;
    for (const value of Object.values(metadata)) {
      const text = typeof value === "string" ? value : JSON.stringify(value);
      if (text !== undefined && re.test(nfcKey(text))) return true;
    }
    return false;
  };
}

/**
 * Options of {@linkcode Selection}.
 *
 * @example Shard 1 of 2, the first 3 examples of it
 * ```ts
 * import { Selection, type SelectionOptions } from "./mod.ts";
 * const options: SelectionOptions = { shard: { index: 1, count: 2 }, subset: { limit: 3 } };
 * if (new Selection(options).shard?.count !== 2) throw new Error("unexpected");
 * ```
 */
export interface SelectionOptions {
  /**
   * Run only this shard's examples.
   * @default {undefined}
   */
  shard?: ShardInfo | undefined;
  /**
   * Run only this subset; the rest are `skipped`.
   * @default {undefined}
   */
  subset?: Subset | undefined;
  /**
   * With `subset.sample`: the examples drawn (by id), from
   * {@linkcode drawSample}.
   * @default {undefined}
   */
  sampled?: ReadonlySet<string> | undefined;
}

/**
 * Draws `--sample N --seed S` from a suite's examples: the N (after the
 * filter) whose hash of seed and id is smallest, so that the same seed draws
 * the same examples everywhere, and a larger N draws a superset.
 *
 * @param examples Every example of the suite, in order.
 * @param subset The subset (its `filter`, `sample` and `seed`).
 * @returns The ids drawn.
 *
 * @example Two examples of four, twice the same
 * ```ts
 * import { drawSample } from "./mod.ts";
 * const examples = () => ReadableStream.from([["a", "b", "c", "d"].map((id, i) => ({ example_id: `d#${id}`, line: i + 1, case: { input: id } }))]);
 * const one = await drawSample(examples(), { sample: 2, seed: "7" });
 * const two = await drawSample(examples(), { sample: 2, seed: "7" });
 * if (one.size !== 2 || [...one].join() !== [...two].join()) throw new Error("unexpected");
 * ```
 */
export async function drawSample(
  examples: ReadableStream<Example[]>,
  subset: Subset,
): Promise<Set<string>> {
  const keep = subset.filter === undefined
    ? () => true
    : compileFilter(subset.filter);
  const seed = subset.seed ?? "0";
  const keyed: Array<[string, string]> = [];
  for await (const batch of examples) {
    for (const example of batch) {
      if (keep(example)) {
        keyed.push([sampleKey(seed, example.example_id), example.example_id]);
      }
    }
  }
  keyed.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return new Set(keyed.slice(0, subset.sample ?? 0).map(([, id]) => id));
}

/**
 * The examples a run runs, as a stage over the dataset's batches, with the
 * tally of what it kept and left out.
 *
 * @example A limit of 1 on two examples: one runs, one is skipped
 * ```ts
 * import { Selection } from "./mod.ts";
 * const selection = new Selection({ subset: { limit: 1 } });
 * const batches = ReadableStream.from([[{ example_id: "d#1", line: 1, case: { input: "a" } }, { example_id: "d#2", line: 2, case: { input: "b" } }]]);
 * const ran = (await Array.fromAsync(batches.pipeThrough(selection.stage()))).flat();
 * const tally = selection.tally();
 * if (ran.length !== 1 || tally.skipped !== 1 || selection.skippedIds().join() !== "d#2") throw new Error("unexpected");
 * ```
 */
export class Selection {
  /** The shard, when the run is one. */
  readonly shard: ShardInfo | undefined;
  /** The subset, when the run chose one. */
  readonly subset: Subset | undefined;
  #filter: ((example: Example) => boolean) | undefined;
  #sampled: ReadonlySet<string> | undefined;
  #seen = 0;
  #chosen = 0;
  #ran = 0;
  #skippedIds: string[] = [];
  #skippedAt: number[] = [];
  #ranAt = new Map<string, number>();

  /**
   * Creates the selection.
   *
   * @param options The shard and subset.
   */
  constructor(options: SelectionOptions = {}) {
    this.shard = options.shard;
    const subset = options.subset;
    // A subset of fields all undefined (`{ limit: flags.limit }`) is none.
    this.subset = subset !== undefined &&
        Object.values(subset).some((v) => v !== undefined)
      ? subset
      : undefined;
    if (this.subset?.filter !== undefined) {
      this.#filter = compileFilter(this.subset.filter);
    }
    this.#sampled = options.sampled;
  }

  /** Whether the subset keeps an example (the limit counted as it goes). */
  #inSubset(example: Example): boolean {
    const subset = this.subset;
    if (subset === undefined) return true;
    if (this.#filter !== undefined && !this.#filter(example)) return false;
    if (
      this.#sampled !== undefined && !this.#sampled.has(example.example_id)
    ) return false;
    if (subset.limit !== undefined) {
      if (this.#chosen >= subset.limit) return false;
    }
    this.#chosen++;
    return true;
  }

  /**
   * The stage: passes on the examples to run, in order.
   *
   * @returns A TransformStream of example batches.
   */
  stage(): TransformStream<Example[], Example[]> {
    return new TransformStream<Example[], Example[]>({
      transform: (batch, controller) => {
        const keep: Example[] = [];
        for (const example of batch) {
          const at = this.#seen++;
          // The subset is the whole suite's, whichever shard runs: shards
          // of a subset merge into the unsharded run of that subset.
          const chosen = this.#inSubset(example);
          if (
            this.shard !== undefined &&
            shardOf(example.example_id, this.shard.count) !== this.shard.index
          ) continue;
          if (chosen) {
            this.#ran++;
            if (this.shard !== undefined) {
              this.#ranAt.set(example.example_id, at);
            }
            keep.push(example);
          } else {
            this.#skippedIds.push(example.example_id);
            this.#skippedAt.push(at);
          }
        }
        if (keep.length > 0) controller.enqueue(keep);
      },
    });
  }

  /**
   * The examples left out so far, in dataset order.
   *
   * @returns Their ids.
   */
  skippedIds(): readonly string[] {
    return this.#skippedIds;
  }

  /**
   * The `skipped` Scores of the examples left out: one per unit and metric,
   * in dataset order, each saying which subset left it out.
   *
   * @param metrics Each metric with its `evaluator_version`, in output order.
   * @param epochs The run's epochs.
   * @param targets A matrix run's targets, in order: each left-out unit is
   *   one per target, as the units that ran are (`d#1@2~v2`, with its
   *   `target_name`), so each target's aggregates count it.
   * @returns The Scores.
   */
  skippedScores(
    metrics: ReadonlyArray<{ metric: string; version: string }>,
    epochs: number,
    targets?: readonly string[],
  ): Score[] {
    if (this.subset === undefined) return [];
    const reason = `skipped: not in the subset ${subsetFlags(this.subset)}`;
    const scores: Score[] = [];
    for (const example_id of this.#skippedIds) {
      for (const target of targets ?? [undefined]) {
        for (let epoch = 1; epoch <= epochs; epoch++) {
          const id = epochs === 1 ? example_id : `${example_id}@${epoch}`;
          const unit_id = target === undefined ? id : `${id}~${target}`;
          for (const m of metrics) {
            const score = skipped(m.metric, {
              reason,
              evaluator_version: m.version,
              example_id,
              unit_id,
            });
            if (target !== undefined) score.target_name = target;
            scores.push(score);
          }
        }
      }
    }
    return scores;
  }

  /**
   * What the run saw, ran and left out; for a shard, each example's place
   * in the unsharded run's output.
   *
   * @returns The tally.
   */
  tally(): SelectionTally {
    const tally: SelectionTally = {
      examples: this.#seen,
      ran: this.#ran,
      skipped: this.#skippedIds.length,
    };
    if (this.shard !== undefined) {
      // Ids are data: "__proto__" must be a key like any other.
      const order: Record<string, number> = Object.create(null);
      for (const [id, at] of this.#ranAt) order[id] = at;
      // Skipped examples come after every example that ran, in order.
      this.#skippedIds.forEach((id, i) => {
        order[id] = this.#seen + this.#skippedAt[i]!;
      });
      tally.order = order;
    }
    return tally;
  }
}
