/**
 * Merging the shards of one run (`run --shard k/n`) back into the run one
 * machine would have made: the Scores in its order, the units beside them,
 * the aggregates computed as it computed them (exact sums, so bit for bit),
 * after checking that the shards are of one suite, each there once and
 * finished.
 *
 * @module
 */

import { Aggregator } from "../aggregate/mod.ts";
import type { Aggregate } from "../aggregate/mod.ts";
import type { CaseRequirement } from "../aggregate/types.ts";
import type { Gate } from "../aggregate/gates.ts";
import { InputError } from "../base/errors.ts";
import { nfcKey } from "../base/nfc.ts";
import { counted } from "../base/words.ts";
import type { Unit } from "../dataset/unit.ts";
import type { Fingerprints } from "../fingerprint/fingerprint.ts";
import type { Score } from "../score/mod.ts";
import type { RunRecord, RunRecordHeader } from "./run_record.ts";
import type { RecordedBudget } from "./run_checks.ts";
import { roundUsd } from "../net/budget.ts";
import type { SelectionTally, ShardInfo, Subset } from "./selection.ts";
import { valueRangeOption } from "../aggregate/value_ranges.ts";

/**
 * One shard as {@linkcode mergeShards} takes it: read from its RunRecord, or
 * from a Scores file and the sidecar `run --out` writes beside it.
 *
 * @example A shard read from its record
 * ```ts
 * import type { RunRecord, ShardPart } from "./mod.ts";
 * const shardPartOf = (name: string, record: RunRecord): ShardPart => ({
 *   name, fingerprints: record.fingerprints, complete: record.complete, scores: record.scores, record,
 *   ...(record.shard !== undefined ? { shard: record.shard } : {}),
 *   ...(record.subset !== undefined ? { subset: record.subset } : {}),
 *   ...(record.selection !== undefined ? { selection: record.selection } : {}),
 * });
 * if (typeof shardPartOf !== "function") throw new Error("unexpected");
 * ```
 */
export interface ShardPart {
  /** The file as given (`stdin` for `-`), for messages. */
  name: string;
  /** What the shard's run depended on. */
  fingerprints: Fingerprints;
  /** Which shard it is; absent for a run that was not sharded. */
  shard?: ShardInfo;
  /** The subset it ran, if any. */
  subset?: Subset;
  /** What it ran, once it finished. */
  selection?: SelectionTally;
  /** Whether it finished, every unit run. */
  complete: boolean;
  /** Its Scores, in its output order. */
  scores: Score[];
  /** Its record, when it was read from one. */
  record?: RunRecord;
  /** Each metric's declared range, from its record or its sidecar. */
  value_ranges?: Record<string, [number, number]>;
  /**
   * The config's gates, from its record or its sidecar (`{}` for none);
   * absent from a sidecar written before they were kept.
   */
  gates?: Record<string, Gate>;
  /**
   * Its budget and what it spent, from its sidecar (a record's is its
   * `record.budget`, read when this is absent); absent when the config set
   * no `budget_usd`, and from a sidecar written before budgets were kept.
   */
  budget?: RecordedBudget;
  /**
   * When a case passes over its epochs, from its sidecar
   * (`settings.require`); absent for a record (its config says) and for a
   * sidecar written before it was kept (evalpipe before session 23).
   */
  require?: CaseRequirement;
  /**
   * How many times it ran each example (`--epochs`, else the config's, else
   * 1), from its record's resolved config or its sidecar's
   * `settings.epochs`: the config's fingerprint does not see the flag.
   */
  epochs?: number;
}

/**
 * Options of {@linkcode mergeShards}.
 *
 * @example Merge what is there, saying what is not
 * ```ts
 * import type { MergeOptions } from "./mod.ts";
 * const options: MergeOptions = { allowPartial: true };
 * if (!options.allowPartial) throw new Error("unexpected");
 * ```
 */
export interface MergeOptions {
  /**
   * Merge even when a shard is missing or did not finish; what is missing
   * is listed in the result's `missing`, and the merged run is incomplete.
   * @default {false}
   */
  allowPartial?: boolean | undefined;
}

/**
 * The merged run.
 *
 * @example What a merge returns
 * ```ts
 * import type { MergedRun } from "./mod.ts";
 * const empty: MergedRun = { scores: [], entries: [], aggregates: [], complete: true, missing: [], shards: 0 };
 * if (empty.complete !== true) throw new Error("unexpected");
 * ```
 */
export interface MergedRun {
  /** Every Score, in the order the unsharded run writes them. */
  scores: Score[];
  /**
   * The record's lines: each unit (when known) with its Scores, in order.
   * Empty unless every shard was read from its record.
   */
  entries: Array<[Unit | undefined, Score[]]>;
  /** The aggregates, computed from the Scores in that order. */
  aggregates: Aggregate[];
  /**
   * The merged record's header (no shard, the earliest start), when every
   * shard was read from its record; its `run_id` is the caller's to set.
   */
  header?: RunRecordHeader;
  /** The merged selection (a subset's counts), when the shards had a subset. */
  selection?: SelectionTally;
  /** Whether every shard was there and finished. */
  complete: boolean;
  /** With `allowPartial`: what is missing, one sentence each. */
  missing: string[];
  /** How many shard files were merged. */
  shards: number;
  /** Each metric's declared range, as the shards' records or sidecars keep it. */
  value_ranges?: Record<string, [number, number]>;
  /**
   * The shards' budgets summed, when every shard's record or sidecar
   * keeps one (the config set `budget_usd`): each shard ran under the
   * whole `budget_usd` on its own, so `limit_usd` is what they were
   * allowed together, the sum of their limits, `spent_usd` what they spent
   * together and `refused` the calls they refused.
   */
  budget?: RecordedBudget;
  /**
   * When a case passes over its epochs, as the shards' sidecars keep it
   * (`settings.require`): absent when none keeps it.
   */
  require?: CaseRequirement;
}

/**
 * Shards that cannot be merged: of different suites, one missing, one given
 * twice, one unfinished, two that scored one example. Its message names the
 * files; the command line exits 2.
 *
 * @example
 * ```ts
 * import { MergeError, mergeShards } from "./mod.ts";
 * const error = (() => { try { mergeShards([]); } catch (e) { return e; } })();
 * if (!(error instanceof MergeError) || error.exitCode !== 2) throw new Error("unexpected");
 * ```
 */
export class MergeError extends InputError {
  /**
   * Creates the error.
   *
   * @param message What is wrong, naming the files.
   */
  constructor(message: string) {
    super(message);
    this.name = "MergeError";
  }
}

/** The epoch a Score's unit id names (1 when it names none). */
function epochOf(score: Score): number {
  const example = score.example_id;
  const unit = score.unit_id;
  if (unit === undefined || example === undefined || unit === example) return 1;
  if (unit.startsWith(`${example}@`)) {
    const n = Number(unit.slice(example.length + 1));
    if (Number.isSafeInteger(n)) return n;
  }
  return 0;
}

const q = JSON.stringify;

/** Refuses parts that are not shards of one suite, split one way. */
function checkSameRun(parts: readonly ShardPart[]): void {
  const [first] = parts;
  if (first === undefined) {
    throw new MergeError("merge takes the shards to merge: none were given");
  }
  for (const part of parts) {
    if (part.shard === undefined) {
      throw new MergeError(
        `${q(part.name)} is not a shard: it was run without --shard`,
      );
    }
  }
  const a = first.fingerprints;
  for (const part of parts.slice(1)) {
    const b = part.fingerprints;
    const differ = (what: string) =>
      new MergeError(
        `${q(first.name)} and ${
          q(part.name)
        } are shards of different ${what}: they cannot be merged`,
      );
    if (a.config !== b.config) throw differ("configs");
    if (a.dataset !== b.dataset) throw differ("datasets");
    if (a.target !== b.target) throw differ("targets");
    if (q(a.scorers) !== q(b.scorers)) throw differ("scorers");
    if (q(first.subset ?? {}) !== q(part.subset ?? {})) {
      throw differ("subsets (--filter, --sample, --limit)");
    }
    if (part.shard!.count !== first.shard!.count) {
      throw new MergeError(
        `${q(first.name)} is shard ${first.shard!.index}/${
          first.shard!.count
        } and ${q(part.name)} is shard ${part.shard!.index}/${
          part.shard!.count
        }: shards of one run are split the same number of ways`,
      );
    }
    const kept = parts.find((p) => p.require !== undefined);
    if (
      kept !== undefined && part.require !== undefined &&
      part.require !== kept.require
    ) {
      throw new MergeError(
        `${
          q(kept.name)
        } judges a case over its epochs by require ${kept.require} and ${
          q(part.name)
        } by require ${part.require}: shards of one run judge them alike (resume a shard as it was started)`,
      );
    }
    const [na, nb] = [first.epochs, part.epochs];
    if (na !== undefined && nb !== undefined && na !== nb) {
      const times = (n: number) => `${n} ${n === 1 ? "time" : "times"}`;
      throw new MergeError(
        `${q(first.name)} ran each example ${times(na)} and ${q(part.name)} ${
          times(nb)
        } (--epochs): shards of one run run each example as many times`,
      );
    }
    const [ea, eb] = [first.selection?.examples, part.selection?.examples];
    if (ea !== undefined && eb !== undefined && ea !== eb) {
      throw new MergeError(
        `${q(first.name)} saw ${counted(ea, "example")} and ${
          q(part.name)
        } ${eb}: they read different datasets`,
      );
    }
  }
}

/** The parts by shard index; refuses a shard given twice. */
function byIndex(parts: readonly ShardPart[]): Map<number, ShardPart> {
  const seen = new Map<number, ShardPart>();
  for (const part of parts) {
    const { index, count } = part.shard!;
    const other = seen.get(index);
    if (other !== undefined) {
      throw new MergeError(
        `${q(other.name)} and ${
          q(part.name)
        } are both shard ${index}/${count}: give each shard once`,
      );
    }
    seen.set(index, part);
  }
  return seen;
}

/**
 * Merges the shards of one run into the run one machine would have made:
 * the Scores in its order (each shard's record says where each of its
 * examples stands), the aggregates computed from them as the run computes
 * them, and, when every shard is a record, the record's lines and header.
 *
 * @param parts The shards, in any order.
 * @param options Whether to merge what is there when some is missing.
 * @returns The merged run.
 * @throws {MergeError} For shards of different suites, a shard missing or given twice, an unfinished one, two that scored one example.
 *
 * @example Two shards of a two-example run, given in reverse
 * ```ts
 * import { mergeShards, type ShardPart } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const fingerprints = { config: "sha256:a", dataset: "sha256:b", target: "sha256:c", scorers: { m: "m@1" } };
 * const part = (index: number, id: string, at: number, value: number): ShardPart => ({
 *   name: `s${index}.json`, fingerprints, shard: { index, count: 2 }, complete: true,
 *   selection: { examples: 2, ran: 1, skipped: 0, order: { [id]: at } },
 *   scores: [scored("m", value, { example_id: id, unit_id: id })],
 * });
 * const merged = mergeShards([part(2, "d#2", 1, 0), part(1, "d#1", 0, 1)]);
 * if (merged.scores.map((s) => s.example_id).join() !== "d#1,d#2" || merged.aggregates[0]?.mean !== 0.5) throw new Error();
 * ```
 */
export function mergeShards(
  parts: readonly ShardPart[],
  options: MergeOptions = {},
): MergedRun {
  checkSameRun(parts);
  const seen = byIndex(parts);
  const count = parts[0]!.shard!.count;
  const missing: string[] = [];
  for (let index = 1; index <= count; index++) {
    if (!seen.has(index)) missing.push(`shard ${index}/${count} is missing`);
  }
  const ordered = [...seen.keys()].sort((a, b) => a - b).map((k) =>
    seen.get(k)!
  );
  for (const part of ordered) {
    if (!part.complete || part.selection?.order === undefined) {
      missing.push(
        `${q(part.name)} (shard ${
          part.shard!.index
        }/${count}) did not finish: resume it (run --resume) and merge again`,
      );
    } else {
      const short = cutShort(part);
      if (short !== undefined) missing.push(short);
    }
  }
  if (missing.length > 0 && !options.allowPartial) {
    throw new MergeError(
      `Cannot merge: ${
        missing.join("; ")
      } (--allow-partial merges what is there)`,
    );
  }
  // Each Score's place: its example's place in the unsharded output, then
  // its epoch, then where its shard wrote it. An unfinished shard's
  // examples whose place is not known come last, as written.
  const keyed: Keyed[] = [];
  const places = ordered.map((part) => placesOf(part.selection?.order));
  let i = 0;
  for (let p = 0; p < ordered.length; p++) {
    const placeOf = places[p]!;
    for (const score of ordered[p]!.scores) {
      const at = placeOf(score.example_id ?? score.unit_id ?? "");
      keyed.push({ score, at, epoch: epochOf(score), i: i++, part: p });
    }
  }
  keyed.sort((a, b) => a.at - b.at || a.epoch - b.epoch || a.i - b.i);
  checkOwners(keyed, ordered, places);
  const scores = keyed.map((k) => k.score);
  const records = ordered.every((p) => p.record !== undefined)
    ? ordered.map((p) => p.record!)
    : undefined;
  const ranges = ordered[0]?.record?.value_ranges ?? ordered[0]?.value_ranges;
  const aggregator = new Aggregator({
    grouped: missing.length > 0, // an unfinished shard's tail is out of order
    ...valueRangeOption(ranges),
  });
  for (const score of scores) aggregator.add(score);
  const entries: Array<[Unit | undefined, Score[]]> = [];
  if (records !== undefined) {
    // By unit id in NFC: a resumed shard's Scores may write an id the other
    // way than its units do (nfcKey passes an ASCII id as it is).
    const units = new Map<string, Unit>();
    for (const record of records) {
      for (const unit of record.units) units.set(nfcKey(unit.unit_id), unit);
    }
    let lastId: string | undefined;
    for (const score of scores) {
      const id = nfcKey(score.unit_id ?? "");
      const last = entries.at(-1);
      if (last !== undefined && lastId === id) last[1].push(score);
      else entries.push([units.get(id), [score]]);
      lastId = id;
    }
  }
  const subset = parts[0]!.subset;
  let selection: SelectionTally | undefined;
  if (subset !== undefined) {
    selection = {
      examples: ordered[0]!.selection?.examples ?? 0,
      ran: ordered.reduce((n, p) => n + (p.selection?.ran ?? 0), 0),
      skipped: ordered.reduce((n, p) => n + (p.selection?.skipped ?? 0), 0),
    };
  }
  const require = ordered.find((p) => p.require !== undefined)?.require;
  let header: RunRecordHeader | undefined;
  if (records !== undefined) {
    const { shard: _shard, ...first } = headerOf(records[0]!);
    const started = records.map((r) => r.started_at).sort()[0]!;
    header = { ...first, started_at: started };
  }
  return {
    scores,
    entries,
    aggregates: aggregator.results(),
    ...(header !== undefined ? { header } : {}),
    ...(selection !== undefined ? { selection } : {}),
    complete: missing.length === 0,
    missing,
    shards: ordered.length,
    ...(ranges !== undefined ? { value_ranges: ranges } : {}),
    ...budgetOf(ordered),
    ...(require !== undefined ? { require } : {}),
  };
}

/** A Score with its place in the merged run, and its shard's index. */
interface Keyed {
  score: Score;
  at: number;
  epoch: number;
  i: number;
  part: number;
}

/** A shard's claim to an example: the id as it writes it, and its place. */
interface Claim {
  part: ShardPart;
  id: string;
  /** Its place in the shard's `order`; `Infinity` when the order lacks it. */
  at: number;
}

/**
 * Refuses an example two shards scored: every example is one shard's, all its
 * epochs and targets too, and two shards that both scored one would count it
 * twice (an old shard file holding an id written in NFD, which an evalpipe
 * before session 24 split as written, resumed after the split gave it to
 * another shard; files of two runs given as shards of one). An example's
 * place in the run is one number whichever shard's order gives it (ids
 * compared in Unicode NFC), so once sorted, two shards' Scores of a placed
 * example stand side by side: no map of every example is made (a million
 * entries would cost a merge more than its sort). Only the Scores no order
 * places (a shard that did not finish, or an example its order lacks) are
 * looked up, by NFC id, among each other and in the other shards' orders.
 */
function checkOwners(
  keyed: readonly Keyed[],
  parts: readonly ShardPart[],
  places: ReadonlyArray<(id: string) => number>,
): void {
  const claim = (k: Keyed): Claim => ({
    part: parts[k.part]!,
    id: k.score.example_id ?? k.score.unit_id ?? "",
    at: k.at,
  });
  const unplaced = new Map<string, Keyed>();
  for (let n = 0; n < keyed.length; n++) {
    const k = keyed[n]!;
    if (k.score.example_id === undefined && k.score.unit_id === undefined) {
      continue;
    }
    if (k.at !== Infinity) {
      const before = keyed[n - 1];
      if (
        before !== undefined && before.at === k.at && before.part !== k.part
      ) {
        const [a, b] = before.part < k.part ? [before, k] : [k, before];
        throw scoredTwice(claim(a), claim(b));
      }
      continue;
    }
    const id = k.score.example_id ?? k.score.unit_id!;
    const key = nfcKey(id);
    const first = unplaced.get(key);
    if (first === undefined) unplaced.set(key, k);
    else if (first.part !== k.part) throw scoredTwice(claim(first), claim(k));
    else continue;
    // Another shard's order places it: that shard scored it (the sorted
    // Scores before this one are the placed ones, already checked).
    for (let p = 0; p < parts.length; p++) {
      if (p === k.part) continue;
      const at = places[p]!(id);
      if (at !== Infinity) {
        const owner = keyed.find((o) => o.part === p && o.at === at);
        if (owner !== undefined) {
          const [a, b] = p < k.part ? [owner, k] : [k, owner];
          throw scoredTwice(claim(a), claim(b));
        }
      }
    }
  }
}

/** The error for an example two shards scored. */
function scoredTwice(a: Claim, b: Claim): MergeError {
  const where = (p: ShardPart) =>
    `${q(p.name)} (shard ${p.shard!.index}/${p.shard!.count})`;
  const spelled = a.id === b.id
    ? ""
    : ` (written ${q(b.id)} there, the same id in Unicode NFC)`;
  // Of two finished shards, the one whose end listed the example is the one
  // the split gives it to: the other holds it from an earlier split.
  const ended = a.part.selection?.order !== undefined &&
    b.part.selection?.order !== undefined;
  const stale = !ended
    ? undefined
    : a.at === Infinity && b.at !== Infinity
    ? a.part
    : b.at === Infinity && a.at !== Infinity
    ? b.part
    : undefined;
  return new MergeError(
    `Cannot merge: example ${q(a.id)} is scored in both ${where(a.part)} and ${
      where(b.part)
    }${spelled}, but an example belongs to one shard: ${
      stale !== undefined
        ? `${
          q(stale.name)
        } holds it from an earlier split; run its shard again without --resume`
        : "run the shards again without --resume"
    }`,
  );
}

/**
 * Where each example of a shard stands in the unsharded run, by example id:
 * as the shard's `order` writes it, else in Unicode NFC (an id written "é"
 * in one place and "e" and a combining accent in the other is one example).
 * The NFC keys are made only at the first id not found as written.
 */
function placesOf(
  order: Record<string, number> | undefined,
): (id: string) => number {
  if (order === undefined) return () => Infinity;
  let nfc: Map<string, number> | undefined;
  return (id) => {
    if (Object.hasOwn(order, id)) return order[id]!;
    nfc ??= new Map(Object.keys(order).map((k) => [nfcKey(k), order[k]!]));
    return nfc.get(nfcKey(id)) ?? Infinity;
  };
}

/**
 * Why a finished shard's Scores are fewer than it wrote, if they are: a
 * Scores file cut short after the run (a copy or an upload that stopped)
 * beside a sidecar that says it finished. Each of its examples has Scores
 * (a skipped one too), each as many (epochs × targets × metrics).
 */
function cutShort(part: ShardPart): string | undefined {
  const order = part.selection?.order;
  if (order === undefined) return undefined;
  const counts = new Map<string, number>();
  for (const score of part.scores) {
    const id = score.example_id ?? score.unit_id ?? "";
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  // A suite has a scorer: each example of the shard has a Score at least.
  let most = 1;
  for (const n of counts.values()) if (n > most) most = n;
  // By id as written, else in NFC (a resumed shard may write it the other way).
  let nfc: Map<string, number> | undefined;
  const countOf = (id: string) => {
    const n = counts.get(id);
    if (n !== undefined) return n;
    if (nfc === undefined) {
      nfc = new Map();
      for (const [k, v] of counts) {
        nfc.set(nfcKey(k), (nfc.get(nfcKey(k)) ?? 0) + v);
      }
    }
    return nfc.get(nfcKey(id)) ?? 0;
  };
  const short = Object.keys(order).filter((id) => countOf(id) < most);
  if (short.length === 0) return undefined;
  return `${q(part.name)} (shard ${part.shard!.index}/${
    part.shard!.count
  }) says it finished but lacks Scores of its examples (${
    short.slice(0, 3).map((id) => q(id)).join(", ")
  }${
    short.length > 3 ? `, ${short.length - 3} more` : ""
  }): the file was cut short after the run; copy it whole, or run the shard again`;
}

/**
 * The shards' budgets summed, when each shard's record or sidecar has one;
 * `{}` when any lacks it (a record or a sidecar written before budgets were
 * kept), for a part of the spend would be unknown.
 */
function budgetOf(parts: readonly ShardPart[]): { budget?: RecordedBudget } {
  const budgets = parts.map((p) => p.budget ?? p.record?.budget);
  if (budgets.length === 0 || budgets.some((b) => b === undefined)) return {};
  let limit = 0;
  let spent = 0;
  let refused = 0;
  for (const b of budgets as RecordedBudget[]) {
    limit += b.limit_usd;
    spent += b.spent_usd;
    refused += b.refused;
  }
  // Sums of dollars rounded as the run rounds its spend.
  return {
    budget: {
      limit_usd: roundUsd(limit),
      spent_usd: roundUsd(spent),
      refused,
    },
  };
}

/** A record's header, in the order the writer writes it. */
function headerOf(record: RunRecord): RunRecordHeader {
  return {
    run_id: record.run_id,
    started_at: record.started_at,
    config_path: record.config_path,
    config: record.config,
    fingerprints: record.fingerprints,
    ...(record.value_ranges !== undefined
      ? { value_ranges: record.value_ranges }
      : {}),
    ...(record.shard !== undefined ? { shard: record.shard } : {}),
    ...(record.subset !== undefined ? { subset: record.subset } : {}),
  };
}
