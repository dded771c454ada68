/**
 * Resuming an interrupted run from its Scores file: what is already there,
 * what was torn, and whether the suite is still the same.
 *
 * @module
 */

import {
  exitCodeOf,
  InputError,
  isReadError,
  osErrorText,
  outputErrorOf,
} from "../base/errors.ts";
import { nfcKey } from "../base/nfc.ts";
import { mappingAt, stringAt } from "../io/fields.ts";
import { fingerprintsAt, valueRangesAt } from "../record/run_record.ts";
import { type RecordedBudget, runChecksAt } from "../record/run_checks.ts";
import { LineStream } from "../io/line_stream.ts";
import { roundUsd } from "../net/budget.ts";
import { replaceFile } from "../io/replace_file.ts";
import type { Fingerprints } from "../fingerprint/fingerprint.ts";
import type { Gate } from "../aggregate/gates.ts";
import type { CaseRequirement } from "../aggregate/types.ts";
import { parseScore, type Score } from "../score/mod.ts";
import {
  selectionAt,
  type SelectionTally,
  shardAt,
  type ShardInfo,
  type Subset,
  subsetAt,
} from "../record/selection.ts";

/**
 * What a run that writes `--out` records beside it, so it can be resumed
 * safely.
 *
 * @example The sidecar `<out>.meta.json`, read back by prepareResume
 * ```ts
 * import { prepareResume, type RunMeta } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * const meta: RunMeta = {
 *   run_id: "20261201T080000Z-3f2a9c",
 *   started_at: "2026-12-01T08:00:00.000Z",
 *   fingerprints: { config: "sha256:aa", dataset: "sha256:bb", target: "sha256:cc", scorers: {} },
 * };
 * await Deno.writeTextFile(`${dir}/scores.ndjson`, "");
 * await Deno.writeTextFile(`${dir}/scores.ndjson.meta.json`, JSON.stringify(meta));
 * const plan = await prepareResume(`${dir}/scores.ndjson`);
 * await Deno.remove(dir, { recursive: true });
 * if (plan.meta?.run_id !== meta.run_id) throw new Error("unexpected");
 * ```
 */
export interface RunMeta {
  /** The run that started the file. */
  run_id: string;
  /** When it started. */
  started_at: string;
  /** What it depended on. */
  fingerprints: Fingerprints;
  /**
   * The settings that shape its Scores beyond the config (absent in files
   * written before they were recorded).
   */
  settings?: RunSettings;
  /**
   * A shard's or a subset's tally, written when the run ends (absent while
   * it runs, and for a run of the whole suite).
   */
  selection?: SelectionTally;
  /**
   * Whether the run ended having run every unit it had to (once it ended):
   * `false` too for a run stopped (Ctrl-C) or failed with an error after it
   * began; absent while a run goes on, or after one was killed.
   */
  complete?: boolean;
  /**
   * The range `[low, high]` of each metric whose scorer declares one, as a
   * RunRecord keeps them, so aggregates computed again from the Scores
   * clamp their intervals as the run did.
   */
  value_ranges?: Record<string, [number, number]>;
  /**
   * The config's gates (`{}` when it sets none), so that `merge` of Scores
   * files checks them as `run` does; absent in files written before they
   * were kept.
   */
  gates?: Record<string, Gate>;
  /**
   * The run's budget (`budget_usd`) and what it spent against it, as its
   * RunRecord keeps them, so that `merge` of a shard's Scores file sums it
   * as `merge` of its record does, and a resume starts its budget from what
   * was spent; for a config with `budget_usd`, noted as the run goes on
   * (at most once a second, without `complete`: a lower bound) and written
   * when it ends (exact), and absent in files written before it was kept.
   */
  budget?: RecordedBudget;
}

/**
 * The settings of a run that shape its Scores, whatever the config says: kept
 * beside a Scores file (`<out>.meta.json`), and checked when it is resumed.
 *
 * @example A five-epoch run's file cannot be continued with one epoch
 * ```ts
 * import { prepareResume, ResumeError, type RunSettings } from "./mod.ts";
 * import { scored, scoreLine } from "../score/mod.ts";
 * import { checkResumeSettings } from "./resume.ts";
 * const dir = await Deno.makeTempDir();
 * const out = `${dir}/s.ndjson`;
 * await Deno.writeTextFile(out, scoreLine(scored("m", 1, { example_id: "d#1", unit_id: "d#1@1" })) + "\n");
 * const settings: RunSettings = { epochs: 5 };
 * await Deno.writeTextFile(`${out}.meta.json`, JSON.stringify({
 *   run_id: "r1", started_at: "2026-12-01T08:00:00.000Z", settings,
 *   fingerprints: { config: "sha256:a", dataset: "sha256:b", target: "sha256:c", scorers: { m: "m@1" } },
 * }));
 * const plan = await prepareResume(out);
 * let refused = false;
 * try {
 *   checkResumeSettings(plan, { epochs: 1 });
 * } catch (error) {
 *   refused = error instanceof ResumeError && error.message.includes("--epochs 5");
 * }
 * await Deno.remove(dir, { recursive: true });
 * if (!refused) throw new Error("unexpected");
 * ```
 */
export interface RunSettings {
  /** How many times each example runs: it names the units (`#id@k`). */
  epochs: number;
  /** The shard the run is, if it is one: a file is continued by the same shard. */
  shard?: ShardInfo | undefined;
  /** The subset the run chose, if it chose one. */
  subset?: Subset | undefined;
  /**
   * When a case passes over its epochs (the config's `epochs.require`, else
   * `all`), so that `diff` of the Scores file judges its cases as the run
   * did; absent in files written before it was kept.
   */
  require?: CaseRequirement | undefined;
}

/**
 * Refuses to resume a file whose run had other settings that shape Scores
 * (its epochs): the old and new Scores would not be of one run. Unlike a
 * changed config, `--force` cannot override this.
 *
 * @param plan The plan of the file to continue.
 * @param now This run's settings.
 * @throws {ResumeError} Naming the setting, both values and how to resume.
 */
export function checkResumeSettings(plan: ResumePlan, now: RunSettings): void {
  const then = plan.meta?.settings;
  if (plan.scores === 0 || then === undefined) return;
  if (then.epochs !== now.epochs) {
    throw new ResumeError(
      `${JSON.stringify(plan.path)} was started with epochs ${then.epochs}, ` +
        `this run has epochs ${now.epochs}: resume with --epochs ${then.epochs}, or start a new --out`,
    );
  }
  // A shard's file is continued by that shard, a subset's by that subset.
  const shardText = (s: RunSettings) =>
    s.shard === undefined
      ? "no --shard"
      : `--shard ${s.shard.index}/${s.shard.count}`;
  if (shardText(then) !== shardText(now)) {
    throw new ResumeError(
      `${JSON.stringify(plan.path)} was started with ${shardText(then)}, ` +
        `this run has ${
          shardText(now)
        }: resume it as it was started, or start a new --out`,
    );
  }
  const subsetText = (s: RunSettings) => JSON.stringify(s.subset ?? {});
  if (subsetText(then) !== subsetText(now)) {
    throw new ResumeError(
      `${JSON.stringify(plan.path)} was started with the subset ${
        subsetText(then)
      }, this run has ${
        subsetText(now)
      }: resume it with the same --filter, --sample, --seed and --limit, or start a new --out`,
    );
  }
}

/**
 * The sidecar of a Scores file resumed without one (missing, or damaged:
 * `--force`), rebuilt so that the next resume is plain: its epochs from the
 * Scores' unit ids, the rest from this run (its id, start, fingerprints and
 * settings). Never from this run's epochs alone: a file whose ids show
 * other epochs is refused, `--force` or not, as a sidecar's epochs are.
 *
 * @param plan The plan of the file, without `meta`.
 * @param now This run's settings.
 * @param run This run's id, start and fingerprints.
 * @returns The sidecar to write; `undefined` when the file cannot tell what
 *   it would hold: ids that do not read as their examples', epochs that could
 *   be more than the ids show, a shard or a subset (the ids show neither).
 * @throws {ResumeError} When the ids show other epochs than this run's.
 *
 * @example One-epoch ids, resumed with --epochs 3, are refused
 * ```ts
 * import { prepareResume, ResumeError } from "./mod.ts";
 * import { rebuiltMeta } from "./resume.ts";
 * import { scored, scoreLine } from "../score/mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/s.ndjson`, scoreLine(scored("m", 1, { example_id: "d#1", unit_id: "d#1" })) + "\n");
 * const plan = await prepareResume(`${dir}/s.ndjson`);
 * await Deno.remove(dir, { recursive: true });
 * const run = { run_id: "r2", started_at: "2026-12-07T08:00:00.000Z", fingerprints: { config: "sha256:a", dataset: "sha256:b", target: "sha256:c", scorers: { m: "m@1" } } };
 * if (rebuiltMeta(plan, { epochs: 1 }, run)?.settings?.epochs !== 1) throw new Error("unexpected");
 * let refused = false;
 * try {
 *   rebuiltMeta(plan, { epochs: 3 }, run);
 * } catch (error) {
 *   refused = error instanceof ResumeError && error.message.includes("--epochs 1");
 * }
 * if (!refused) throw new Error("unexpected");
 * ```
 */
export function rebuiltMeta(
  plan: ResumePlan,
  now: RunSettings,
  run: Pick<RunMeta, "run_id" | "started_at" | "fingerprints">,
): RunMeta | undefined {
  const seen = plan.epochsSeen;
  if (seen === undefined) return undefined;
  if (seen.exact ? seen.epochs !== now.epochs : seen.epochs > now.epochs) {
    throw new ResumeError(
      `${JSON.stringify(plan.path)} holds the Scores of ${
        seen.exact ? "one epoch" : `at least ${seen.epochs} epochs`
      } (its unit ids show it), this run has epochs ${now.epochs}: resume with --epochs ${seen.epochs}, or start a new --out`,
    );
  }
  if (
    seen.epochs !== now.epochs || now.shard !== undefined ||
    now.subset !== undefined
  ) return undefined;
  return { ...run, settings: now };
}

/**
 * A Scores file that cannot be resumed, or a suite that changed since. Its
 * message names the file (and the line at fault), and the command line exits 2.
 *
 * @example A whole line before the last that is not a Score
 * ```ts
 * import { prepareResume, ResumeError } from "./mod.ts";
 * import { scored, scoreLine } from "../score/mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/scores.ndjson`, `{"metric":"m"}\n${scoreLine(scored("m", 1, { unit_id: "d#1" }))}\n`);
 * const error = await prepareResume(`${dir}/scores.ndjson`).then(() => undefined, (e) => e);
 * await Deno.remove(dir, { recursive: true });
 * if (!(error instanceof ResumeError) || error.exitCode !== 2) throw new Error("unexpected");
 * if (!error.message.startsWith(`"${dir}/scores.ndjson" line 1 is not a Score (`)) throw new Error(error.message);
 * ```
 */
export class ResumeError extends InputError {
  /**
   * Creates the error.
   *
   * @param message What is wrong and what to do.
   * @param options The cause, if any.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ResumeError";
  }
}

/**
 * What a resumed run needs to know of the file it continues.
 *
 * @example Skip the units whose metrics are already scored
 * ```ts
 * import { metricsScored, prepareResume, type ResumePlan } from "./mod.ts";
 * import { scored, scoreLine } from "../score/mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/scores.ndjson`, scoreLine(scored("m", 1, { example_id: "d#1", unit_id: "d#1" })) + "\n");
 * const plan: ResumePlan = await prepareResume(`${dir}/scores.ndjson`);
 * await Deno.remove(dir, { recursive: true });
 * // Looked up in NFC, as the run looks units up: not plan.done.get(unit).
 * const todo = ["d#1", "d#2"].filter((unit) => !metricsScored(plan, unit)?.has("m"));
 * if (todo.join() !== "d#2" || plan.meta !== undefined) throw new Error("unexpected");
 * ```
 */
export interface ResumePlan {
  /** The Scores file. */
  path: string;
  /**
   * Metrics already scored, by unit id in Unicode NFC (`id.normalize("NFC")`;
   * an ASCII id as it is): {@linkcode metricsScored} looks a unit up.
   */
  done: Map<string, Set<string>>;
  /** Whole Score lines read (those in `budgetBlocked` too). */
  scores: number;
  /**
   * The lines (1-based) of the Scores a spent budget blocked (status
   * `blocked`, reason `budget: `): not done, so the resume runs their units
   * again, and {@linkcode dropTornLine} cuts them off the file first.
   * Absent when there are none.
   */
  budgetBlocked?: number[];
  /**
   * What the Scores in `budgetBlocked` say the run had spent: the largest
   * `($S so far)` of their reasons. A resume whose file's sidecar keeps no
   * `budget` (its run was killed, or an older evalpipe wrote it) starts its
   * budget from this, so the cap holds at least as far as it was reached.
   */
  budgetSpentAtLeast?: number;
  /**
   * What the calls the files on disk record cost, in US dollars: the
   * judges' (each Score's `provenance.cost_usd`) and, given the units file
   * (`--units`), the target's (each unit's `target.cost_usd`). Every one was
   * paid, so the run that wrote them spent this much at least. Absent when
   * they record no cost.
   */
  spentInFiles?: number;
  /**
   * Set once the units file's calls are in `spentInFiles`
   * ({@linkcode withUnitsSpend}, or `prepareResume`'s `units`): counting
   * them again is a no-op, so a script that gives both `prepareResume` its
   * units and `runSuite` its `unitsPath` is not charged twice.
   */
  unitsCounted?: true;
  /** The torn last line to drop, if there is one. */
  dropped?: string;
  /** With `dropped` or `budgetBlocked`: the bytes up to the last whole line. */
  keep?: number;
  /** With `dropped` or `budgetBlocked`: the file's size when it was read. */
  size?: number;
  /** The metadata the run that started the file wrote, if it is there. */
  meta?: RunMeta;
  /** Whether the metadata file is there but cannot be read (only `--force` resumes). */
  damagedMeta?: boolean;
  /**
   * The epochs the Scores' unit ids show (`d#1` with one epoch, `d#1@2`,
   * `d#1@2~target` with several), for a resume to rebuild a missing or
   * damaged sidecar from: `exact` when the ids are of a one-epoch run,
   * else the least the run had (the largest epoch seen, at least 2).
   * Absent when there are no Scores, or an id does not read as its
   * example's.
   */
  epochsSeen?: { epochs: number; exact: boolean };
  /**
   * The units (by id in Unicode NFC) whose Scores stand apart in the file,
   * other units' between them (a scorer added by a resume appends its
   * Scores at the end): a record gathers each into one line.
   */
  splitUnits?: Set<string>;
}

/** A unit id past its example id: `@epoch`, then `~target` in a matrix. */
const UNIT_SUFFIX = /^(?:@([1-9][0-9]*))?(?:~[^]*)?$/;

/**
 * Notes the epoch a Score's unit id shows in `seen`: `null` once an id
 * does not read as its example's (a file an older evalpipe or a script
 * wrote), when the epochs cannot be told from the file.
 */
function seeEpoch(
  seen: { epochs: number; exact: boolean } | null | undefined,
  score: Score,
): { epochs: number; exact: boolean } | null {
  if (seen === null || score.example_id === undefined) return null;
  const unit = score.unit_id!;
  const match = unit.startsWith(score.example_id)
    ? UNIT_SUFFIX.exec(unit.slice(score.example_id.length))
    : null;
  if (match === null) return null;
  const several = match[1] !== undefined;
  const epochs = several ? Math.max(2, Number(match[1])) : 1;
  if (seen === undefined) return { epochs, exact: !several };
  // One run names every unit alike: both forms cannot be of one run.
  if (seen.exact === several) return null;
  return epochs > seen.epochs ? { epochs, exact: seen.exact } : seen;
}

/**
 * The metrics a resumed file already has of a unit, its id compared in
 * Unicode NFC: a unit whose id the dataset now writes the other way ("é" as
 * one code point, or as "e" and a combining accent) is the same unit.
 *
 * @param plan The plan of the file.
 * @param unitId The unit's id, as the run writes it.
 * @returns Its metrics in the file; `undefined` when it has none there.
 *
 * @example An id written in NFD finds the Scores the file wrote in NFC
 * ```ts
 * import { metricsScored, prepareResume } from "./mod.ts";
 * import { scored, scoreLine } from "../score/mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/s.ndjson`, scoreLine(scored("m", 1, { example_id: "d#caf\u00e9", unit_id: "d#caf\u00e9" })) + "\n");
 * const plan = await prepareResume(`${dir}/s.ndjson`);
 * await Deno.remove(dir, { recursive: true });
 * if (!metricsScored(plan, "d#cafe\u0301")?.has("m")) throw new Error("unexpected");
 * ```
 */
export function metricsScored(
  plan: ResumePlan,
  unitId: string,
): Set<string> | undefined {
  return plan.done.get(nfcKey(unitId));
}

/** What a budget's refusal says was spent: `($0.0042 so far)` (Budget.claim). */
const SPENT_SO_FAR = /\(\$(\d+(?:\.\d+)?) so far\)/;

/**
 * Whether a Score was blocked because the run's budget (`budget_usd`) was
 * spent: its call was never made, so a resume runs it again (under the
 * budget the file's earlier runs left).
 *
 * @param score A Score.
 * @returns `true` for status `blocked` with a reason starting `budget: `.
 *
 * @example
 * ```ts
 * import { blockedByBudget } from "./resume.ts";
 * import { blocked } from "../score/mod.ts";
 * if (!blockedByBudget(blocked("m", "budget: the budget_usd of $1 is spent ($1 so far); no new call starts"))) throw new Error();
 * if (blockedByBudget(blocked("m", "target error: HTTP 503"))) throw new Error();
 * ```
 */
export function blockedByBudget(score: Score): boolean {
  return score.status === "blocked" &&
    score.reason?.startsWith("budget: ") === true;
}

/**
 * The sidecar file beside a Scores file that holds its {@linkcode RunMeta}.
 *
 * @param out The Scores file.
 * @returns `<out>.meta.json`.
 */
export function metaPath(out: string): string {
  return `${out}.meta.json`;
}

/**
 * Writes the metadata of a run beside its Scores file, through a fresh temp
 * file renamed into place: a run killed meanwhile leaves the old sidecar or
 * the new one, never a torn one, and a symlink planted at either name is not
 * followed. A Scores "file" that is a device or a pipe (`/dev/null`,
 * `/dev/stdout`) cannot be resumed and gets none.
 *
 * @param out The Scores file.
 * @param meta The run's id, start and fingerprints.
 * @throws {import("../base/errors.ts").OutputError} When the disk refuses it.
 */
export async function writeMeta(out: string, meta: RunMeta): Promise<void> {
  try {
    if (!(await Deno.stat(out)).isFile) return;
  } catch (error) {
    // Not created yet: it will be a file, which can be resumed.
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  await replaceFile(metaPath(out), JSON.stringify(meta, null, 2) + "\n", {
    name: "the --out sidecar",
  });
}

/**
 * Reads the sidecar of a Scores file (`<out>.meta.json`): its metrics'
 * `value_ranges` and `settings.require`, which `view` and `diff` take for
 * the file (`readScoresFile` reads the Scores alone). Unlike
 * {@linkcode prepareResume}, it reads no Score, so a file with a line that
 * is not one still has its sidecar.
 *
 * @param out The Scores file.
 * @returns Its metadata; `undefined` when there is none, `null` when it is damaged.
 *
 * @example A Scores file's ranges, for an Aggregator that clamps as the run did
 * ```ts
 * import { readMeta } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/scores.ndjson.meta.json`, JSON.stringify({
 *   run_id: "r1", started_at: "2026-12-01T08:00:00.000Z",
 *   fingerprints: { config: "sha256:aa", dataset: "sha256:bb", target: "sha256:cc", scorers: {} },
 *   settings: { epochs: 3, require: "majority" }, value_ranges: { m: [0, 1] },
 * }));
 * const meta = await readMeta(`${dir}/scores.ndjson`);
 * const none = await readMeta(`${dir}/other.ndjson`);
 * await Deno.remove(dir, { recursive: true });
 * if (meta?.value_ranges?.m?.[1] !== 1 || meta.settings?.require !== "majority" || none !== undefined) throw new Error("unexpected");
 * ```
 */
export async function readMeta(
  out: string,
): Promise<RunMeta | undefined | null> {
  let text: string;
  try {
    text = await Deno.readTextFile(metaPath(out));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    // A folder, a file this user may not read: no sidecar to go by.
    if (isReadError(error)) return null;
    throw error;
  }
  try {
    const meta = mappingAt(JSON.parse(text), "");
    const read: RunMeta = {
      run_id: stringAt(meta, "run_id"),
      started_at: stringAt(meta, "started_at"),
      fingerprints: fingerprintsAt(meta),
    };
    if (meta.settings !== undefined) {
      const epochs = mappingAt(meta.settings, "settings").epochs;
      if (!Number.isInteger(epochs) || (epochs as number) < 1) {
        throw new SyntaxError('"settings.epochs" must be a whole number');
      }
      read.settings = { epochs: epochs as number };
      const settings = mappingAt(meta.settings, "settings");
      const shard = shardAt(settings);
      const subset = subsetAt(settings);
      if (shard !== undefined) read.settings.shard = shard;
      if (subset !== undefined) read.settings.subset = subset;
      const require = settings.require;
      if (require !== undefined) {
        if (require !== "all" && require !== "majority" && require !== "any") {
          throw new SyntaxError(
            '"settings.require" must be "all", "majority" or "any"',
          );
        }
        read.settings.require = require as CaseRequirement;
      }
    }
    const selection = selectionAt(meta);
    if (selection !== undefined) read.selection = selection;
    if (typeof meta.complete === "boolean") read.complete = meta.complete;
    if (meta.value_ranges !== undefined) {
      read.value_ranges = valueRangesAt(meta.value_ranges);
    }
    if (meta.gates !== undefined) {
      // As the run's config check left them: each metric's a mapping.
      const gates = mappingAt(meta.gates, "gates");
      for (const metric of Object.keys(gates)) {
        mappingAt(gates[metric], `gates.${metric}`);
      }
      read.gates = gates as Record<string, Gate>;
    }
    // Read as a record's `budget` is, its fields checked the same way.
    const { budget } = runChecksAt({ budget: meta.budget });
    if (budget !== undefined) read.budget = budget;
    return read;
  } catch (error) {
    // FieldError is a SyntaxError too.
    if (!(error instanceof SyntaxError)) throw error;
    return null;
  }
}

/**
 * Refuses a Scores file whose sidecar's name is taken by a folder: a run
 * would need to replace it, and a folder of the user's is never replaced nor
 * removed, `--force` or not.
 */
async function refuseMetaFolder(out: string): Promise<void> {
  const meta = metaPath(out);
  let folder: boolean;
  try {
    folder = (await Deno.stat(meta)).isDirectory;
  } catch (error) {
    // Not there, or not reachable: readMeta says what that means.
    if (!isReadError(error)) throw error;
    return;
  }
  if (folder) {
    throw new ResumeError(
      `Cannot resume ${JSON.stringify(out)}: its sidecar ${
        JSON.stringify(meta)
      } is a folder, which evalpipe never replaces (--force neither); move it away, or give another --out`,
    );
  }
}

/**
 * A Scores file the system would not let the resume read or cut, as a
 * {@linkcode ResumeError} naming it (a full disk stays an output error,
 * exit 3); a bug, or an error already named, is thrown on as it is.
 */
function unreadable(path: string, error: unknown): unknown {
  if (exitCodeOf(error) !== undefined || !isReadError(error)) return error;
  return outputErrorOf(error, `Scores file ${JSON.stringify(path)}`) ??
    new ResumeError(
      `Cannot resume ${JSON.stringify(path)}: ${osErrorText(error)}`,
      { cause: error },
    );
}

/** Where a file's last whole line ends, and the torn line after it, if any. */
interface Tail {
  /** The file's size when it was read. */
  size: number;
  /** The bytes up to and including the last newline. */
  keep: number;
  /** The text after the last newline, when there is some. */
  torn?: string;
}

/** Finds a torn last line (no newline at its end) without changing the file. */
async function findTail(path: string): Promise<Tail> {
  const file = await Deno.open(path, { read: true });
  try {
    const size = (await file.stat()).size;
    // Walk back from the end to the last newline, a block at a time.
    const block = 64 * 1024;
    let end = size;
    const pieces: Uint8Array[] = [];
    while (end > 0) {
      const start = Math.max(0, end - block);
      const buf = new Uint8Array(end - start);
      await file.seek(start, Deno.SeekMode.Start);
      let read = 0;
      while (read < buf.length) {
        const n = await file.read(buf.subarray(read));
        if (n === null) break;
        read += n;
      }
      const nl = buf.lastIndexOf(10);
      if (nl >= 0) {
        pieces.unshift(buf.subarray(nl + 1));
        end = start + nl + 1;
        break;
      }
      pieces.unshift(buf);
      end = start;
    }
    if (end === size) return { size, keep: size };
    const torn = new TextDecoder().decode(
      new Uint8Array(pieces.flatMap((p) => [...p])),
    );
    return { size, keep: end, torn };
  } finally {
    file.close();
  }
}

/**
 * Whether a torn line is the start of a Score as evalpipe writes it (`metric`
 * first): anything else means the file is not a Scores file.
 */
function startsLikeScore(text: string): boolean {
  const head = '{"metric":';
  return text.startsWith(head) || head.startsWith(text);
}

/**
 * Cuts off the file what the resume runs again, as {@linkcode prepareResume}
 * found it: the torn last line, so that what is appended starts on a line of
 * its own, and the Scores a spent budget blocked (their units run again,
 * and their new Scores are appended). Done once the run is known to go
 * ahead (its config and dataset loaded, its outputs checked), so a run
 * refused for any reason leaves the file as it was. A torn line is cut off;
 * Scores the budget blocked are dropped by writing the Scores kept to a new
 * file beside it and renaming that over it: a crash, a kill or a full disk
 * meanwhile leaves the file as it was, which a resume continues. Open the
 * file to append to after this call: a handle opened before holds the file
 * replaced.
 *
 * @param plan The plan of the file.
 * @throws {ResumeError} When the file changed since it was read.
 *
 * @example A file refused by a check before the cut is left whole
 * ```ts
 * import { dropTornLine, prepareResume } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/s.ndjson`, '{"metric":"m","sta');
 * const plan = await prepareResume(`${dir}/s.ndjson`);
 * const untouched = await Deno.readTextFile(`${dir}/s.ndjson`);
 * await dropTornLine(plan);
 * const cut = await Deno.readTextFile(`${dir}/s.ndjson`);
 * await Deno.remove(dir, { recursive: true });
 * if (untouched !== '{"metric":"m","sta' || cut !== "") throw new Error("unexpected");
 * ```
 *
 * @example A Score the budget blocked goes, the others stay
 * ```ts
 * import { dropTornLine, prepareResume } from "./mod.ts";
 * import { blocked, scored, scoreLine } from "../score/mod.ts";
 * const dir = await Deno.makeTempDir();
 * const ids = (id: string) => ({ example_id: id, unit_id: id });
 * const kept = scoreLine(scored("m", 1, ids("d#1"))) + "\n";
 * const spent = scoreLine(blocked("m", "budget: the budget_usd of $1 is spent ($1 so far); no new call starts", ids("d#2"))) + "\n";
 * await Deno.writeTextFile(`${dir}/s.ndjson`, kept + spent + kept.replaceAll("d#1", "d#3"));
 * const plan = await prepareResume(`${dir}/s.ndjson`);
 * await dropTornLine(plan);
 * const text = await Deno.readTextFile(`${dir}/s.ndjson`);
 * await Deno.remove(dir, { recursive: true });
 * if (plan.budgetBlocked?.join() !== "2" || text !== kept + kept.replaceAll("d#1", "d#3")) throw new Error(text);
 * ```
 */
export async function dropTornLine(plan: ResumePlan): Promise<void> {
  const blocked = plan.budgetBlocked;
  if (plan.dropped === undefined && blocked === undefined) return;
  let file: Deno.FsFile;
  try {
    file = await Deno.open(plan.path, { read: true, write: true });
  } catch (error) {
    throw unreadable(plan.path, error);
  }
  try {
    if ((await file.stat()).size !== plan.size) {
      throw new ResumeError(
        `${JSON.stringify(plan.path)} changed while it was read; resume again`,
      );
    }
    if (blocked === undefined) {
      await file.truncate(plan.keep!);
      return;
    }
    // Written whole beside it and renamed over it, never cut in place: a
    // crash, a kill or a full disk meanwhile leaves the file as it was, so
    // no Score already computed (paid for) is lost.
    const dropped = new Set(blocked);
    await replaceFile(plan.path, async (write) => {
      let line = 0;
      for await (const text of wholeLines(file, plan.keep!)) {
        if (!dropped.has(++line)) await write(text);
      }
    }, { name: "Scores file" });
  } finally {
    file.close();
  }
}

/** The whole lines (each with its newline) in the first `end` bytes of a file. */
async function* wholeLines(
  file: Deno.FsFile,
  end: number,
): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const buffer = new Uint8Array(64 * 1024);
  let offset = 0;
  let rest = "";
  await file.seek(0, Deno.SeekMode.Start);
  while (offset < end) {
    const n = await file.read(
      buffer.subarray(0, Math.min(buffer.length, end - offset)),
    );
    if (n === null) break;
    offset += n;
    rest += decoder.decode(buffer.subarray(0, n), { stream: true });
    let from = 0;
    for (
      let nl = rest.indexOf("\n");
      nl !== -1;
      nl = rest.indexOf("\n", from)
    ) {
      yield rest.slice(from, nl + 1);
      from = nl + 1;
    }
    rest = rest.slice(from);
  }
}

/**
 * Reads a Scores file to resume the run that wrote it, without changing it:
 * checks that every whole line is a Score and that a torn last line (no
 * newline at its end) starts as one, notes that torn line (for
 * {@linkcode dropTornLine} to cut), and lists the metrics already scored per
 * unit: not those a spent budget blocked (their lines are noted in
 * `budgetBlocked`, for the resume to cut and run again). A file that does
 * not exist yet resumes nothing. A file that is not
 * Scores (a dataset given as `--out`) is refused, and left as it is.
 *
 * @param path The Scores file (`--out`).
 * @returns The plan.
 * @throws {ResumeError} When a whole line is not a Score, or the torn one
 * does not start as one.
 *
 * @example A run killed mid-line: the torn line is found, then dropped
 * ```ts
 * import { dropTornLine, prepareResume } from "./mod.ts";
 * import { scored, scoreLine } from "../score/mod.ts";
 * const dir = await Deno.makeTempDir();
 * const whole = scoreLine(scored("m", 1, { example_id: "d#1", unit_id: "d#1" })) + "\n";
 * await Deno.writeTextFile(`${dir}/scores.ndjson`, whole + '{"metric":"m","sta');
 * const plan = await prepareResume(`${dir}/scores.ndjson`);
 * const before = await Deno.readTextFile(`${dir}/scores.ndjson`);
 * await dropTornLine(plan);
 * const after = await Deno.readTextFile(`${dir}/scores.ndjson`);
 * await Deno.remove(dir, { recursive: true });
 * if (plan.scores !== 1 || plan.dropped !== '{"metric":"m","sta') throw new Error("unexpected");
 * if (before !== whole + '{"metric":"m","sta' || after !== whole) throw new Error("unexpected");
 * ```
 */
export async function prepareResume(
  path: string,
  options: PrepareResumeOptions = {},
): Promise<ResumePlan> {
  const done = new Map<string, Set<string>>();
  let tail: Tail;
  try {
    // Looked at before it is opened: opening a FIFO waits for a writer, and
    // a device (/dev/null) holds nothing to resume.
    const info = await Deno.stat(path);
    if (!info.isFile && !info.isDirectory) return { path, done, scores: 0 };
    tail = await findTail(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { path, done, scores: 0 };
    throw unreadable(path, error);
  }
  let scores = 0;
  let lines = 0;
  let budgetBlocked: number[] | undefined;
  let budgetSpentAtLeast: number | undefined;
  let spentInFiles = 0;
  let epochsSeen: { epochs: number; exact: boolean } | null | undefined;
  let splitUnits: Set<string> | undefined;
  let lastUnit: string | undefined;
  for await (const { score, line } of scoreLines(path, tail.keep)) {
    lines = line;
    if (score === undefined) continue;
    spentInFiles = roundUsd(spentInFiles + costOf(score.provenance));
    if (score.unit_id === undefined) {
      throw new ResumeError(
        `${
          JSON.stringify(path)
        } holds a Score without a unit_id; it cannot be resumed`,
      );
    }
    scores++;
    epochsSeen = seeEpoch(epochsSeen, score);
    // Never made: the resume makes it, if the budget now allows.
    if (blockedByBudget(score)) {
      (budgetBlocked ??= []).push(line);
      // A reason without the figure (NaN) raises nothing.
      const spent = Number(SPENT_SO_FAR.exec(score.reason!)?.[1]);
      if (spent > (budgetSpentAtLeast ?? -1)) budgetSpentAtLeast = spent;
      continue;
    }
    if (score.unit_id !== lastUnit) {
      lastUnit = score.unit_id;
      const id = nfcKey(lastUnit);
      if (done.has(id)) (splitUnits ??= new Set()).add(id);
    }
    // An earlier evalpipe's name of a malformed record is looked up by the
    // run, which knows it from the dataset (Example.formerly): the file
    // alone cannot tell it from a case's own id that reads the same.
    const id = nfcKey(score.unit_id);
    let metrics = done.get(id);
    if (metrics === undefined) done.set(id, metrics = new Set());
    metrics.add(score.metric);
  }
  if (tail.torn !== undefined && !startsLikeScore(tail.torn)) {
    throw new ResumeError(
      `${JSON.stringify(path)} line ${
        lines + 1
      } is not a Score (it does not start as one); it cannot be resumed`,
    );
  }
  await refuseMetaFolder(path);
  const meta = await readMeta(path);
  const plan: ResumePlan = {
    path,
    done,
    scores,
    ...(budgetBlocked !== undefined ? { budgetBlocked } : {}),
    ...(budgetSpentAtLeast !== undefined ? { budgetSpentAtLeast } : {}),
    ...(spentInFiles > 0 ? { spentInFiles } : {}),
    ...(tail.torn !== undefined ? { dropped: tail.torn } : {}),
    ...(tail.torn !== undefined || budgetBlocked !== undefined
      ? { keep: tail.keep, size: tail.size }
      : {}),
    ...(meta !== undefined && meta !== null ? { meta } : {}),
    ...(meta === null ? { damagedMeta: true } : {}),
    ...(epochsSeen !== undefined && epochsSeen !== null ? { epochsSeen } : {}),
    ...(splitUnits !== undefined ? { splitUnits } : {}),
  };
  return options.units === undefined
    ? plan
    : await withUnitsSpend(plan, options.units);
}

/**
 * The plan, with what the calls of the units in the units file (`--units`)
 * cost counted in its `spentInFiles`: read only for a resume that starts a
 * budget from it (`runSuite` reads it when the config has `budget_usd`), as
 * a units file can hold hundreds of megabytes. A line that is no unit
 * record adds nothing, nor does a file that is not there or not a regular
 * file, nor a trace target's unit (`target.trace_format`: no call was made).
 *
 * @param plan The plan of the Scores file.
 * @param units The units file the run writes beside it.
 * @returns A new plan; the plan itself when its file has no Scores (no
 *   earlier spend to start from, so the units file is not read).
 *
 * @example The units' calls add to what the Scores' judges cost
 * ```ts
 * import { earlierSpend, prepareResume, withUnitsSpend } from "./resume.ts";
 * import { scored, scoreLine } from "../score/mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/s.ndjson`, scoreLine(scored("m", 1, { example_id: "d#1", unit_id: "d#1" })) + "\n");
 * await Deno.writeTextFile(`${dir}/u.jsonl`, JSON.stringify({ unit_id: "d#1", input: "q", output: "a", target: { cost_usd: 0.25 } }) + "\n");
 * const plan = await withUnitsSpend(await prepareResume(`${dir}/s.ndjson`), `${dir}/u.jsonl`);
 * await Deno.remove(dir, { recursive: true });
 * if (earlierSpend(plan)?.usd !== 0.25) throw new Error("unexpected");
 * ```
 */
export async function withUnitsSpend(
  plan: ResumePlan,
  units: string,
): Promise<ResumePlan> {
  if (plan.scores === 0 || plan.unitsCounted) return plan;
  const spent = roundUsd((plan.spentInFiles ?? 0) + await unitsCost(units));
  return spent > 0
    ? { ...plan, spentInFiles: spent, unitsCounted: true }
    : { ...plan, unitsCounted: true };
}

/**
 * Options of {@linkcode prepareResume}.
 *
 * @example Count what the units file's calls cost too
 * ```ts
 * import { prepareResume, type PrepareResumeOptions } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/u.jsonl`, JSON.stringify({ unit_id: "d#1", input: "q", output: "a", target: { cost_usd: 0.25 } }) + "\n");
 * const options: PrepareResumeOptions = { units: `${dir}/u.jsonl` };
 * const plan = await prepareResume(`${dir}/s.ndjson`, options);
 * await Deno.remove(dir, { recursive: true });
 * // No Scores yet: nothing to resume, nor to count.
 * if (plan.scores !== 0 || plan.spentInFiles !== undefined) throw new Error("unexpected");
 * ```
 */
export interface PrepareResumeOptions {
  /**
   * The units file the run writes beside (`--units`): what its units' calls
   * cost counts in `spentInFiles`, as {@linkcode withUnitsSpend} counts it
   * (which reads the whole file: give it only for a budget to start from).
   * @default {undefined}
   */
  units?: string | undefined;
}

/** A call record's `cost_usd` (a unit's `target`, a Score's `provenance`), or 0. */
function costOf(info: unknown): number {
  const cost = typeof info === "object" && info !== null
    ? (info as { cost_usd?: unknown }).cost_usd
    : undefined;
  return typeof cost === "number" && Number.isFinite(cost) && cost > 0
    ? cost
    : 0;
}

/**
 * What the calls of the units in a units file cost, in US dollars: a line
 * that is no unit record adds nothing (the resume refuses the file later,
 * naming it), and so does a file that is not there or not a regular file,
 * and a trace target's unit (`target.trace_format`: no call was made).
 */
async function unitsCost(path: string): Promise<number> {
  let file: Deno.FsFile;
  try {
    // A pipe: read, it would lose what is sent to it (and opening it waits
    // for a writer).
    if (!(await Deno.stat(path)).isFile) return 0;
    file = await Deno.open(path);
  } catch (error) {
    // No units yet: they cost nothing. One that cannot be read is refused
    // by name when the resume reads it to keep its units.
    if (error instanceof Deno.errors.NotFound || isReadError(error)) return 0;
    throw error;
  }
  let sum = 0;
  for await (const line of file.readable.pipeThrough(new LineStream())) {
    if (line.error !== undefined || !line.text.includes('"cost_usd"')) continue;
    try {
      const unit: unknown = JSON.parse(line.text);
      const target = typeof unit === "object" && unit !== null
        ? (unit as { target?: unknown }).target
        : undefined;
      // A trace target's cost was spent when the trace was recorded: no
      // budget charged it, so it is no call this file's runs paid for.
      const traced = typeof target === "object" && target !== null &&
        "trace_format" in target;
      if (!traced) sum = roundUsd(sum + costOf(target));
    } catch (error) {
      // Not a unit record: keepSkippedUnits refuses the file, naming the line.
      if (!(error instanceof SyntaxError)) throw error;
    }
  }
  return sum;
}

/**
 * What the runs of a file had spent against their budget (`budget_usd`)
 * when a resume starts: the spend its sidecar kept when its last run ended,
 * which is exact; or, when that run did not end (killed, `kill -9`), or
 * kept none, the largest lower bound the files give: the spend the
 * sidecar noted while the run went on, the `($S so far)` its budget-blocked
 * Scores name, what the calls its files record cost.
 *
 * @param plan The plan of the file.
 * @returns The spend, whether it is exact, and where it comes from;
 *   `undefined` when the file has no Scores or nothing says.
 *
 * @example A run killed after its sidecar noted $0.5: at least that
 * ```ts
 * import { earlierSpend, prepareResume } from "./resume.ts";
 * import { scored, scoreLine } from "../score/mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/s.ndjson`, scoreLine(scored("m", 1, { example_id: "d#1", unit_id: "d#1" })) + "\n");
 * await Deno.writeTextFile(`${dir}/s.ndjson.meta.json`, JSON.stringify({
 *   run_id: "r1", started_at: "2026-12-01T08:00:00.000Z",
 *   fingerprints: { config: "sha256:a", dataset: "sha256:b", target: "sha256:c", scorers: { m: "m@1" } },
 *   budget: { limit_usd: 1, spent_usd: 0.5, refused: 0 },
 * }));
 * const spend = earlierSpend(await prepareResume(`${dir}/s.ndjson`));
 * await Deno.remove(dir, { recursive: true });
 * if (spend?.usd !== 0.5 || spend.exact || spend.from !== "note") throw new Error(JSON.stringify(spend));
 * ```
 */
export function earlierSpend(plan: ResumePlan): EarlierSpend | undefined {
  if (plan.scores === 0) return undefined;
  const kept = plan.meta?.budget;
  const ended = kept !== undefined && plan.meta?.complete !== undefined;
  // The spend kept when the last run ended is exact, unless the files show
  // more: a later run without a budget (which notes none) paid for calls,
  // and was killed before it wrote the sidecar.
  if (
    ended &&
    kept.spent_usd >= (plan.budgetSpentAtLeast ?? 0) &&
    kept.spent_usd >= (plan.spentInFiles ?? 0)
  ) {
    return { usd: kept.spent_usd, exact: true, from: "sidecar" };
  }
  let best: EarlierSpend | undefined;
  for (
    const [usd, from] of [
      [kept?.spent_usd, ended ? "sidecar" : "note"],
      [plan.budgetSpentAtLeast, "blocked"],
      [plan.spentInFiles, "files"],
    ] as const
  ) {
    if (usd !== undefined && usd > (best?.usd ?? -1)) {
      best = { usd, exact: false, from };
    }
  }
  return best;
}

/**
 * What a file's runs had spent, as {@linkcode earlierSpend} finds it.
 *
 * @example
 * ```ts
 * import type { EarlierSpend } from "./resume.ts";
 * const spend: EarlierSpend = { usd: 0.25, exact: false, from: "files" };
 * if (spend.exact) throw new Error();
 * ```
 */
export interface EarlierSpend {
  /** In US dollars. */
  usd: number;
  /** Whether it is what was spent, not a lower bound. */
  exact: boolean;
  /**
   * Where it comes from: the sidecar's spend kept when the run ended
   * (`sidecar`) or noted while it went on (`note`), the budget-blocked
   * Scores' `($S so far)` (`blocked`), the costs the files record (`files`).
   */
  from: "sidecar" | "note" | "blocked" | "files";
}

/**
 * Streams the Scores of an NDJSON file (all lines whole).
 *
 * @param path The file.
 * @returns The Scores, in file order.
 * @throws {ResumeError} Naming the first line that is not a Score.
 */
export async function* readScoreLines(path: string): AsyncGenerator<Score> {
  for await (const { score } of scoreLines(path, Infinity)) {
    if (score !== undefined) yield score;
  }
}

/** The first `limit` bytes of a stream. */
function firstBytes(limit: number): TransformStream<Uint8Array, Uint8Array> {
  let left = limit;
  return new TransformStream({
    transform(chunk, controller) {
      if (left <= 0) return;
      controller.enqueue(
        chunk.length <= left ? chunk : chunk.subarray(0, left),
      );
      left -= chunk.length;
    },
  });
}

/** The lines of a file's stream, an error reading it named as one. */
async function* named<T>(
  lines: ReadableStream<T>,
  path: string,
): AsyncGenerator<T> {
  try {
    yield* lines;
  } catch (error) {
    throw unreadable(path, error);
  }
}

/**
 * The Scores of the first `limit` bytes of a file, with their line numbers
 * (blank lines come without one).
 */
async function* scoreLines(
  path: string,
  limit: number,
): AsyncGenerator<{ score?: Score; line: number }> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path);
  } catch (error) {
    throw unreadable(path, error);
  }
  const bytes = limit === Infinity
    ? file.readable
    : file.readable.pipeThrough(firstBytes(limit));
  for await (const line of named(bytes.pipeThrough(new LineStream()), path)) {
    if (line.text.trim() === "" && line.error === undefined) {
      yield { line: line.line };
      continue;
    }
    try {
      if (line.error !== undefined) throw new SyntaxError(line.error);
      yield { score: parseScore(JSON.parse(line.text)), line: line.line };
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      throw new ResumeError(
        `${
          JSON.stringify(path)
        } line ${line.line} is not a Score (${error.message}); it cannot be resumed`,
      );
    }
  }
}

/**
 * Checks that a resumed run measures the same thing as the one that started
 * the file: the same config text and dataset bytes. A dataset read from
 * stdin cannot be checked, so it is refused too (`--force` continues).
 *
 * @param plan The plan, with the file's metadata.
 * @param now The fingerprints of the run about to resume.
 * @param alsoConfig Other fingerprints of the same config, as an older
 *   evalpipe made them (with `budget_usd` in it, before session 22).
 * @throws {ResumeError} When the metadata is missing or damaged, or a
 * fingerprint changed.
 */
export function checkResume(
  plan: ResumePlan,
  now: Fingerprints,
  alsoConfig: readonly string[] = [],
): void {
  const meta = plan.meta;
  // No Scores yet: nothing to mix, the run starts the file afresh.
  if (plan.scores === 0) return;
  if (plan.damagedMeta) {
    throw new ResumeError(
      `${
        JSON.stringify(metaPath(plan.path))
      } is damaged; resume with --force to write it again`,
    );
  }
  if (meta === undefined) {
    throw new ResumeError(
      `${
        JSON.stringify(metaPath(plan.path))
      } is missing, so nothing shows that the config and dataset are ` +
        "unchanged; resume with --force to continue anyway and write it again",
    );
  }
  if (now.dataset === null) {
    // Stdin has no bytes to fingerprint before it is read: a resume fed
    // other cases would append their Scores to the earlier ones unseen.
    throw new ResumeError(
      `the dataset is read from stdin, which cannot be checked against the one that started ${
        JSON.stringify(plan.path)
      }; resume with --force if stdin holds the same cases`,
    );
  }
  const changed = [
    ...(meta.fingerprints.config !== now.config &&
        !alsoConfig.includes(meta.fingerprints.config)
      ? ["the config"]
      : []),
    ...(meta.fingerprints.dataset !== now.dataset ? ["the dataset"] : []),
  ];
  if (changed.length > 0) {
    throw new ResumeError(
      `${changed.join(" and ")} changed since ${
        JSON.stringify(plan.path)
      } was started ` +
        `(run ${meta.run_id}); its Scores would mix two suites. Start a new --out, or resume with --force`,
    );
  }
}
