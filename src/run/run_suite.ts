/**
 * Running a suite: the stages assembled from a config, end to end.
 *
 * @module
 */

import type { Aggregate } from "../aggregate/mod.ts";
import { Aggregator } from "../aggregate/aggregator.ts";
import type { Example } from "../dataset/case.ts";
import {
  buildScorers,
  checkCommands,
  checkConfigText,
  folderOf,
  missingVariableError,
  namesSecrets,
  readConfigText,
  scorersCallModels,
  type SuiteConfig,
} from "../config/config.ts";
import { locateConfig } from "../config/_check.ts";
import { nfcKey } from "../base/nfc.ts";
import { DatasetError, formatOf } from "../dataset/dataset.ts";
import { commandFingerprint, fingerprint } from "../fingerprint/fingerprint.ts";
import { checkGates, type GateFailure } from "../aggregate/gates.ts";
import type { EarlierSpend, ResumePlan, RunMeta } from "./resume.ts";
import type {
  Fingerprints,
  RunRecordHeader,
  RunRecordWriter,
} from "../record/run_record.ts";
import { newRunId } from "../record/_run_id.ts";
import type { Score } from "../score/mod.ts";
import { metricsOf, type Scorer, valueRangesOf } from "../scorers/scorer.ts";
import { countOption, sizeOption } from "../base/_count.ts";
import { DEFAULTS } from "../base/defaults.ts";
import { exitCodeOf } from "../base/errors.ts";
import { resolveIn } from "../process/command.ts";
import { aggregateInto } from "../aggregate/stage.ts";
import { validateScoreBatches } from "../score/validate.ts";
import { scoreUnitBatches } from "../scorers/score_units.ts";
import { runTargetBatches } from "../targets/target.ts";
import { type ByteWriter, TextWriter } from "../io/text_writer.ts";
import type { Unit } from "../dataset/unit.ts";
import type { EarlierScores, UnitScores } from "./unit_scores.ts";
import {
  datasetsFingerprint,
  type DatasetSource,
  datasetSources,
  loadSources,
  whereOf,
} from "./datasets.ts";
import { type InvalidCase, invalidCaseText } from "../base/place.ts";
import type { SelectionTally, ShardInfo, Subset } from "../record/selection.ts";
// --- targets, matrix, baselines, reducers (issue 14) ---
import type { CaseRequirement } from "../aggregate/types.ts";
import type { ComparisonLine } from "../diff/compare.ts";
import {
  epochsOf,
  isNetworkTarget,
  type NamedTarget,
  selectTargets,
} from "../config/targets.ts";
import { buildTargetConfig, traceDirOf } from "../config/config.ts";
import { ENV_VARIABLES, keyLikeName } from "../net/_url_secrets.ts";
import type { TargetConfig } from "../config/types.ts";
import type { Target } from "../targets/target.ts";
import type {
  BaselineCollector,
  BaselineComparison,
  readBaseline as readBaselineType,
} from "./baseline.ts";
// --- end issue 14 ---
import type { CacheMode, TargetCache } from "../targets/cache.ts";
import { type Budget, roundUsd } from "../net/budget.ts";
import {
  hasSpend,
  type Spend,
  type SpendSide,
  SpendTally,
} from "../record/spend.ts";
import type { RunProgress } from "./progress.ts";
// What only some runs need (resuming, a record, a subset, a progress
// display, a template's error) is imported when the run needs it: a
// one-case run pays start-up only for the stages it pipes.

/**
 * Options of {@linkcode runSuite}.
 *
 * @example Collect the Scores, run each example twice, see each Score
 * ```ts
 * import { runSuite, type RunSuiteOptions } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/d.jsonl`, '{"input":"q","output":"a","expected":"a"}\n');
 * await Deno.writeTextFile(`${dir}/s.yaml`, "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n");
 * const seen: string[] = [];
 * const options: RunSuiteOptions = { sink: new WritableStream(), epochs: 2, onScore: (s) => seen.push(s.unit_id!) };
 * await runSuite(`${dir}/s.yaml`, options);
 * await Deno.remove(dir, { recursive: true });
 * if (seen.join() !== "d.jsonl#1@1,d.jsonl#1@2") throw new Error(seen.join());
 * ```
 */
export interface RunSuiteOptions {
  /** Where Scores go as they are produced, in batches of those ready together. */
  sink: WritableStream<Score[]>;
  /**
   * Where the RunRecord goes, written as the run goes.
   * @default {undefined}
   */
  record?: ByteWriter | undefined;
  /**
   * Where the unit records go, as NDJSON (the shape `score` reads), each as
   * the target answers it.
   * @default {undefined}
   */
  units?: ByteWriter | undefined;
  /**
   * When resuming with a record: the units the earlier run recorded, by unit
   * id, so that the new record keeps them beside their Scores. Read them
   * with `previousUnits(recordPath)` before the record is written over;
   * without them, the resumed units keep their Scores only.
   * @default {undefined}
   */
  previousUnits?: ReadonlyMap<string, Unit> | undefined;
  /**
   * Calls in flight at once in each stage (target calls, units being
   * scored); overrides the config's `concurrency`.
   * @default {the config's, else DEFAULTS.concurrency (8)}
   */
  concurrency?: number | undefined;
  /**
   * The most child processes at once; overrides the config's `max_processes`.
   * @default {the config's, else 64}
   */
  maxProcesses?: number | undefined;
  /**
   * How many times each example is run; overrides the config's `epochs`.
   * @default {the config's, else DEFAULTS.epochs (1)}
   */
  epochs?: number | undefined;
  /**
   * Every scorer's timeout in seconds; overrides the config.
   * @default {the config's}
   */
  timeout?: number | undefined;
  /**
   * The target's timeout in seconds (a `subprocess`, `openai` or `http`
   * target); overrides the config's `target.timeout`.
   * @default {undefined}
   */
  targetTimeout?: number | undefined;
  /**
   * Aborting ends the run: running commands are killed and what they were
   * doing is dropped (a resume runs it again); every Score that finished is
   * written and the run returns, `complete: false`.
   * @default {undefined}
   */
  signal?: AbortSignal | undefined;
  /**
   * Called for each malformed dataset record (its Scores are `invalid case`
   * errors) with a message naming the file and line, and the message's parts
   * (dataset, line, why) as data, for words of one's own.
   * @default {undefined}
   */
  onInvalidRecord?:
    | ((message: string, example: Example, invalid: InvalidCase) => void)
    | undefined;
  /**
   * Called for each Score, after it is validated and before it is written.
   * @default {undefined}
   */
  onScore?: ((score: Score) => void) | undefined;
  /**
   * The folder of the target cache (network targets only); `null` turns the
   * cache off. A relative path is the caller's (the current folder's).
   * @default {".evalpipe/cache" in the config file's folder}
   */
  cacheDir?: string | null | undefined;
  /**
   * How the cache of model calls (network targets, judges) is used;
   * overrides the config's `cache`. `cacheDir: null` is `off`.
   * @default {the config's, else "auto"}
   */
  cacheMode?: CacheMode | undefined;
  /**
   * Aborting stops the intake of new cases (the datasets are read no
   * further, a stdin that sends nothing included); units already in flight
   * finish and are written, and the summary says the run is not complete.
   * @default {undefined}
   */
  stop?: AbortSignal | undefined;
  /**
   * The file the sink writes to, if it is one: the run writes its metadata
   * (fingerprints) beside it, `<outPath>.meta.json`, so it can be resumed.
   * @default {undefined}
   */
  outPath?: string | undefined;
  /**
   * Continue the run whose Scores file this plan describes: units whose
   * Scores are all there are not run, Scores already there are not written
   * again, and the summary covers old and new. With a `record`, give
   * `previousUnits` too, or the units resumed keep no input and output.
   * @default {undefined}
   */
  resume?: ResumePlan | undefined;
  /**
   * The file `units` writes to, if it is one (`--units`): a resume under a
   * budget (`budget_usd`) starts it from what the earlier runs spent, which
   * is at least what the calls this file's units record cost
   * (`withUnitsSpend`). Read only then.
   * @default {undefined}
   */
  unitsPath?: string | undefined;
  /**
   * Resume even when the config or dataset changed since the file started.
   * @default {false}
   */
  force?: boolean | undefined;
  /**
   * Called once the config is checked and the dataset opened, before
   * anything is written (the sink, the record, the `outPath` sidecar), with
   * the files the suite reads: where a caller opens its outputs, and refuses
   * one that is an input, so that a suite refused for any reason leaves every
   * output file as it was. When resuming, `skips` tells the units the
   * resume skips (the file has each of their metrics): an earlier units file
   * keeps those, as the resume appends the others.
   * @default {undefined}
   */
  beforeWrite?:
    | ((
      files: SuiteFiles,
      skips?: (unitId: string) => boolean,
    ) => void | Promise<void>)
    | undefined;
  /**
   * Called once, just before the run writes its first byte anywhere (the
   * sink, the record, the units, the `outPath` sidecar): when its first unit
   * is answered or its first Score made, else when it ends. Where a caller
   * empties its output files: a run that fails before then (a dataset with
   * no cases), or is stopped (`stop`, `signal`) before then, leaves every
   * one of them as it was, and never calls it.
   * @default {undefined}
   */
  begin?: (() => void | Promise<void>) | undefined;
  /**
   * Where `-` as the dataset reads from.
   * @default {Deno.stdin.readable}
   */
  stdin?: ReadableStream<Uint8Array> | undefined;
  /**
   * Run only this shard's examples (`--shard k/n`): those whose stable hash
   * of example id falls to it. The record says which shard it is.
   * @default {undefined}
   */
  shard?: ShardInfo | undefined;
  /**
   * Run only this subset of the suite (`--filter`, `--sample`, `--limit`):
   * the examples it leaves out get `skipped` Scores, after the others.
   * @default {undefined}
   */
  subset?: Subset | undefined;
  // --- targets, matrix, baselines (issue 14) ---
  /**
   * One of the config's `targets` by name (`run --target NAME`).
   * @default {undefined}
   */
  target?: string | undefined;
  /**
   * Several of the config's `targets` by name, run side by side and
   * compared with the first (`run --matrix a,b`); overrides `matrix:`.
   * @default {the config's `matrix`}
   */
  matrix?: readonly string[] | undefined;
  /**
   * Keep the run's Scores and outputs as a baseline: a bare name is
   * `.evalpipe/baselines/<name>.json` in the config's folder, anything else
   * a path (`run --save-baseline NAME`).
   * @default {undefined}
   */
  saveBaseline?: string | undefined;
  /**
   * Compare the run with this baseline (a name or a path, as
   * `saveBaseline`); the summary's `baseline` says what changed.
   * @default {undefined}
   */
  baseline?: string | undefined;
  // --- end issue 14 ---
  /**
   * Told how many units the run makes and of each that starts, is skipped or
   * is done, and (its `flow`) of the network calls' waits: for a progress display.
   * @default {undefined}
   */
  progress?: RunProgress | undefined;
}

/**
 * The files a suite reads, as {@linkcode RunSuiteOptions.beforeWrite} is
 * given them.
 *
 * @example Refuse an output that is one of them
 * ```ts
 * import { runSuite, type SuiteFiles } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/d.jsonl`, '{"input":"q","output":"a","expected":"a"}\n');
 * await Deno.writeTextFile(`${dir}/s.yaml`, "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n");
 * let seen: SuiteFiles | undefined;
 * await runSuite(`${dir}/s.yaml`, { sink: new WritableStream(), beforeWrite: (files) => void (seen = files) });
 * await Deno.remove(dir, { recursive: true });
 * if (seen?.config !== `${dir}/s.yaml` || seen.datasets[0] !== `${dir}/d.jsonl`) throw new Error("unexpected");
 * ```
 */
export interface SuiteFiles {
  /** The config file, as given. */
  config: string;
  /**
   * Every dataset file the suite reads, resolved against the config's
   * folder (none when the dataset is stdin).
   */
  datasets: string[];
  /**
   * Whether a dataset is stdin (`dataset: "-"`).
   * @default {false}
   */
  stdin?: boolean;
  /**
   * The script files the targets called and the subprocess scorers run,
   * resolved against the config's folder: an output over one would change
   * the system under test or its judge.
   * @default {[]}
   */
  scripts?: string[];
}

/**
 * What a finished run reports.
 *
 * @example Read the mean and the gates of a run
 * ```ts
 * import { runSuite, type RunSummary } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/d.jsonl`, '{"input":"q","output":"a","expected":"b"}\n');
 * await Deno.writeTextFile(`${dir}/s.yaml`, "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n");
 * const summary: RunSummary = await runSuite(`${dir}/s.yaml`, { sink: new WritableStream() });
 * await Deno.remove(dir, { recursive: true });
 * if (!summary.complete || summary.scores !== 1 || summary.aggregates[0]?.mean !== 0) throw new Error();
 * ```
 */
export interface RunSummary {
  /** The run's id (as in its RunRecord). */
  runId: string;
  /** The aggregates, one per metric, sorted by metric. */
  aggregates: Aggregate[];
  /** Scores written. */
  scores: number;
  /** Malformed dataset records seen. */
  invalidRecords: number;
  /**
   * The scorers whose processes wrote lines on stdout when no case was
   * waiting for a verdict, and how many (`Scorer.surplusLines`): their
   * verdicts were likely shifted onto later cases. Absent when none did.
   */
  surplusLines?: { scorer: string; lines: number }[];
  /** Whether every unit was run (`false` when `stop` ended the intake early). */
  complete: boolean;
  /** The config's gates that did not hold. */
  gateFailures: GateFailure[];
  /** Target cache hits and misses, when the target was cached. */
  cache?: CacheCounts;
  /** With a shard or a subset: the examples seen, run and left out. */
  selection?: Omit<SelectionTally, "order">;
  // --- targets, matrix, baselines, reducers (issue 14) ---
  /** How many times each example ran. */
  epochs?: number;
  /** When a case passes over its epochs (the config's `epochs.require`). */
  require?: CaseRequirement;
  /** A matrix run's targets, in order; `aggregates` are then per target. */
  targets?: string[];
  /** A matrix run's comparison of its targets, per metric. */
  comparison?: ComparisonLine[];
  /** Where the baseline was saved (`saveBaseline`). */
  savedBaseline?: string;
  /**
   * Why the baseline could not be saved (`saveBaseline`), instead of
   * `savedBaseline`: an error naming the file, with the exit code it means
   * (3 for a disk that refuses it).
   */
  baselineError?: Error;
  /** The run compared with its baseline (`baseline`), and the file's path. */
  baseline?: BaselineComparison & { path: string };
  // --- end issue 14 ---
  /** The judges' cache hits and misses, when a judge was cached. */
  scorerCache?: CacheCounts;
  /** The cache's mode, when the run made cacheable calls. */
  cacheMode?: CacheMode;
  /** What the model calls cost, when the run made any (or found them cached). */
  spend?: Spend;
  /**
   * The config's `budget_usd`, what was spent against it, and how many
   * calls it refused (their units and Scores are blocked).
   */
  budget?: { limit_usd: number; spent_usd: number; refused: number };
  /**
   * A resume under a budget: what the file's earlier runs had spent, which
   * the budget started from, and whether that is exact or a lower bound.
   */
  budgetStart?: EarlierSpend;
}

/**
 * What a cache did in a run.
 *
 * @example
 * ```ts
 * import type { CacheCounts } from "./mod.ts";
 * const counts: CacheCounts = { hits: 3, misses: 1, missing: 0, writeErrors: 0 };
 * if (counts.hits + counts.misses !== 4) throw new Error();
 * ```
 */
export interface CacheCounts {
  /** Answers read from the cache. */
  hits: number;
  /** Calls made (not in the cache, or `live`). */
  misses: number;
  /** Calls a replaying cache could not answer: failed, not made. */
  missing: number;
  /** Answers that could not be stored. */
  writeErrors: number;
  /**
   * Stored answers not reused (kept by a version that read replies
   * differently): asked again, among `misses`.
   */
  stale?: number;
}

function countsOf(cache: TargetCache): CacheCounts {
  return {
    hits: cache.hits,
    misses: cache.misses,
    missing: cache.missing,
    writeErrors: cache.writeErrors,
    ...(cache.stale > 0 ? { stale: cache.stale } : {}),
  };
}

/**
 * The cases a run kept with another input or expected answer than its
 * baseline kept, as a comparison's `cases_changed`.
 */
async function casesChangedSince(
  baseline: Iterable<import("../diff/cases.ts").KeptCase>,
  now: Iterable<import("../diff/cases.ts").KeptCase>,
  kept: import("../diff/cases.ts").CasesChangedOptions,
): Promise<{ cases_changed?: import("../diff/cases.ts").CasesChanged }> {
  const { casesChanged } = await import("../diff/cases.ts");
  const changed = casesChanged(baseline, now, kept);
  return changed === undefined ? {} : { cases_changed: changed };
}

/**
 * Writes the units still waiting for Scores (none came: a unit without any),
 * and the earlier Scores of a resume whose units did not come again.
 */
async function writeRest(
  joiner: UnitScores | undefined,
  record: RunRecordWriter | undefined,
  earlier: EarlierScores | undefined,
): Promise<void> {
  if (record === undefined) return;
  const rest = joiner?.rest() ?? [];
  for (const [unit, scores] of [...rest, ...earlier?.rest() ?? []]) {
    await (unit === undefined
      ? record.addScores(scores)
      : record.addUnit(unit, scores));
  }
}

/** Whether `error` is a template's (its module is loaded if it could be). */
async function isTemplateError(error: unknown): Promise<boolean> {
  return error instanceof (await import("../net/template.ts")).TemplateError;
}

/** The spend, when the run made (or found cached) any model call. */
function spendIf(tally: SpendTally): Spend | undefined {
  const spend = tally.result();
  return hasSpend(spend) ? spend : undefined;
}

/**
 * A record's spend: the run's, and on a resume what the earlier units and
 * Scores the record keeps cost, summed side by side.
 */
function recordSpend(
  tally: SpendTally,
  earlier: SpendTally | undefined,
  replayed = 0,
): Spend | undefined {
  if (earlier === undefined) return spendIf(tally);
  const now = tally.result();
  const before = earlier.result();
  const side = (a: SpendSide, b: SpendSide): SpendSide => {
    const out: SpendSide = {
      calls: a.calls + b.calls,
      cached: a.cached + b.cached,
      input_tokens: a.input_tokens + b.input_tokens,
      output_tokens: a.output_tokens + b.output_tokens,
      cost_usd: roundUsd(a.cost_usd + b.cost_usd),
    };
    for (
      const key of [
        "cached_input_tokens",
        "cache_write_tokens",
        "unpriced_calls",
      ] as const
    ) {
      if (a[key] !== undefined || b[key] !== undefined) {
        out[key] = (a[key] ?? 0) + (b[key] ?? 0);
      }
    }
    return out;
  };
  const target = side(now.target, before.target);
  target.cached -= replayed;
  const judge = side(now.judge, before.judge);
  const spend = {
    target,
    judge,
    cost_usd: roundUsd(target.cost_usd + judge.cost_usd),
  };
  return hasSpend(spend) ? spend : undefined;
}

/** The cache's folder: the caller's, else `.evalpipe/cache` beside the config. */
function cacheFolder(options: RunSuiteOptions, cwd: string): string {
  // Like every path of a suite, the cache belongs to the config's folder:
  // the same suite run from another folder finds the answers it paid for.
  return options.cacheDir ?? resolveIn(cwd, ".evalpipe/cache");
}

/** A suite ready to run: its config resolved and its parts built. */
interface Prepared {
  config: SuiteConfig;
  cwd: string;
  scorers: Scorer[];
  sources: DatasetSource[];
  mode: CacheMode;
  budget: Budget | undefined;
  scorerCache: TargetCache | undefined;
  /** Made only for what keeps them: a record, `outPath`'s sidecar, a resume. */
  fingerprints: Fingerprints | undefined;
  /**
   * The config's fingerprint as evalpipe made it before `budget_usd` left
   * it (session 22): a file started then resumes as the same config.
   */
  configWithBudget: string | undefined;
  /** The targets the run calls; more than one is a matrix. */
  targets: NamedTarget[];
}

/** A target with the caller's target timeout, when there is one to set. */
function withTargetTimeout(
  target: TargetConfig,
  options: RunSuiteOptions,
): TargetConfig {
  const timeout = options.targetTimeout;
  if (
    timeout === undefined || target.type === "replay" ||
    target.type === "trace"
  ) return target;
  return { ...target, timeout };
}

/**
 * The config as the record keeps it: each target with its timeout, and a
 * variable's name that looks like a key pasted in its place (`api_key_env:
 * gsk_…`, a header's `${hf_…}`) by its first four characters, as its
 * error names it: a replay, which reads no variable, ran with it, and the
 * record keeps names of variables, never keys.
 */
function recordedConfig(
  config: SuiteConfig,
  targets: readonly NamedTarget[],
  options: RunSuiteOptions,
): SuiteConfig {
  const text = JSON.stringify(config);
  if (/"api_key_env"|"headers"/.test(text)) {
    config = JSON.parse(text, withoutPastedKeys) as SuiteConfig;
  }
  if (config.target !== undefined) {
    return { ...config, target: withTargetTimeout(config.target, options) };
  }
  const all = Object.entries(config.targets ?? {});
  return {
    ...config,
    targets: Object.fromEntries(
      all.map(([name, t]) => [name, withTargetTimeout(t, options)]),
    ),
    matrix: targets.map((t) => t.name!),
  };
}

/** A `JSON.parse` reviver that shortens the key-like names of variables. */
function withoutPastedKeys(key: string, value: unknown): unknown {
  const short = (name: string) =>
    keyLikeName(name) ? `${name.slice(0, 4)}…` : name;
  if (key === "api_key_env" && typeof value === "string") return short(value);
  if (key !== "headers" || value === null || typeof value !== "object") {
    return value;
  }
  return Object.fromEntries(
    Object.entries(value).map(([name, v]) => [
      name,
      typeof v === "string"
        ? v.replace(
          ENV_VARIABLES,
          (_, n: string) => `\${${short(n)}}`,
        )
        : v,
    ]),
  );
}

/** The fingerprint of what the run calls: its target, or a matrix's each. */
function targetFingerprint(target: TargetConfig, cwd: string): string {
  return target.type === "subprocess"
    ? fingerprint(
      JSON.stringify(target),
      commandFingerprint(target.cmd, cwd),
    )
    : fingerprint(JSON.stringify(target));
}

async function prepare(
  configPath: string,
  options: RunSuiteOptions,
): Promise<Prepared> {
  const text = await readConfigText(configPath);
  const config = await checkConfigText(text, configPath);
  const cwd = folderOf(configPath);
  // Before any scorer is built: a choice the config cannot give costs nothing.
  const targets = selectTargets(config, configPath, {
    ...(options.target !== undefined ? { target: options.target } : {}),
    ...(options.matrix !== undefined ? { matrix: options.matrix } : {}),
  });
  const mode: CacheMode = options.cacheDir === null
    ? "off"
    : options.cacheMode ?? config.cache ?? "auto";
  const budget = config.budget_usd === undefined
    ? undefined
    : new (await import("../net/budget.ts")).Budget(config.budget_usd);
  // Judges keep their answers beside the target's, counted apart. Made for
  // every run whose scorers call a model (it touches no file until a scorer
  // asks it), so any scorer that calls one through it gets the run's mode.
  const scorerCache = mode === "off" || !scorersCallModels(config)
    ? undefined
    : new (await import("../targets/cache.ts")).TargetCache(
      cacheFolder(options, cwd),
      { mode },
    );
  let scorers: Scorer[];
  try {
    scorers = await buildScorers(config, configPath, {
      cwd,
      ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
      cache: scorerCache,
      budget,
      // A replayed run calls nothing: a key it lacks is no error.
      optionalKey: mode === "replay",
    });
  } catch (error) {
    // A judge whose API key variable is not set cannot run: a config error.
    if (!await isTemplateError(error)) throw error;
    throw await missingVariableError((error as Error).message, configPath);
  }
  try {
    // As validate checks them: a command that cannot start fails every case.
    // The config is parsed again for a line only when one is wrong.
    checkCommands(
      config,
      targets,
      configPath,
      cwd,
      (path) => locateConfig(text, configPath).lineOf(path),
    );
  } catch (error) {
    await Promise.all(scorers.map((s) => s.close?.()));
    throw error;
  }
  // `dataset:` or `datasets:` (datasets.ts): read one after another.
  const sources = datasetSources(config, cwd);
  const dataset = options.record !== undefined || options.outPath !== undefined
    ? await datasetsFingerprint(sources)
    : null;
  const keepsPrints = options.record !== undefined ||
    options.outPath !== undefined || options.resume !== undefined;
  // What shapes the Scores, not how fast they come: a config that changed
  // only its concurrency or process cap is the same suite, and one that
  // changed its budget_usd too (what the run may spend: a resume under a
  // raised one makes the calls the earlier could not). Before session 22
  // budget_usd was in it: a resume of a file started then compares that.
  const configPrint = (budgetUsd?: number) =>
    fingerprint(JSON.stringify({
      ...config,
      concurrency: undefined,
      max_processes: undefined,
      cache: undefined,
      budget_usd: budgetUsd,
    }));
  return {
    config,
    cwd,
    scorers,
    sources,
    targets,
    mode,
    budget,
    scorerCache,
    configWithBudget:
      options.resume === undefined || config.budget_usd === undefined
        ? undefined
        : configPrint(config.budget_usd),
    fingerprints: !keepsPrints ? undefined : {
      config: configPrint(),
      dataset,
      target: targets.length === 1
        ? targetFingerprint(targets[0]!.config, cwd)
        : fingerprint(JSON.stringify(
          targets.map((t) => [t.name, targetFingerprint(t.config, cwd)]),
        )),
      scorers: Object.fromEntries(scorers.map((s) => [s.name, s.version])),
    },
  };
}

/**
 * Runs the suite a config file describes: load the dataset, call the target,
 * run the scorers, validate every Score, aggregate, write it to the sink (and
 * the RunRecord), check the gates. Paths and commands resolve against the
 * config file's folder.
 *
 * The pipeline is the exported stages, piped as a script can pipe them:
 * {@linkcode loadDatasetBatches} → {@linkcode runTargetBatches} →
 * {@linkcode scoreUnitBatches} → {@linkcode validateScoreBatches} →
 * {@linkcode aggregateInto} → the sink, with {@linkcode DEFAULTS} where
 * neither the config nor the options say otherwise.
 *
 * To resume (`resume`, from `prepareResume`) into a record, read
 * the earlier record's units first with `previousUnits` and pass them as
 * `previousUnits`, as `run --resume --record` does: the record keeps only
 * the units it is given or that this run calls.
 *
 * @param configPath The YAML config file.
 * @param options The sink, the record and overrides.
 * @returns The summary.
 * @throws {import("../config/config.ts").ConfigError} For a config that cannot be used.
 * @throws {DatasetError} For a dataset that cannot be read at all.
 * @throws {RangeError} For a `concurrency` or `epochs` that is not a whole number of at least 1.
 *
 * @example Run a replay suite and write its Scores as NDJSON
 * ```ts
 * import { runSuite } from "./mod.ts";
 * import { ndjsonBatchSink } from "../io/mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/d.jsonl`, '{"input":"2+2","output":"4","expected":"4"}\n{"input":"3+3","output":"7","expected":"6"}\n');
 * await Deno.writeTextFile(`${dir}/evalpipe.yaml`, "dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n  - type: exact_match\n");
 * let text = "";
 * const dest = { write: (p: Uint8Array) => (text += new TextDecoder().decode(p), Promise.resolve(p.length)) };
 * const summary = await runSuite(`${dir}/evalpipe.yaml`, { sink: ndjsonBatchSink(dest) });
 * await Deno.remove(dir, { recursive: true });
 * const [agg] = summary.aggregates;
 * if (agg?.metric !== "exact_match" || agg.mean !== 0.5 || text.split("\n").length !== 3) throw new Error(text);
 * ```
 */
export async function runSuite(
  configPath: string,
  options: RunSuiteOptions,
): Promise<RunSummary> {
  // Refused before anything starts or is written, as the stages would.
  if (options.concurrency !== undefined) {
    countOption("concurrency", options.concurrency);
  }
  if (options.epochs !== undefined) countOption("epochs", options.epochs);
  if (options.subset?.limit !== undefined) {
    sizeOption("subset.limit", options.subset.limit);
  }
  if (options.subset?.sample !== undefined) {
    sizeOption("subset.sample", options.subset.sample);
  }
  if (options.shard !== undefined) {
    const { index, count } = options.shard;
    countOption("shard.count", count);
    // A shard past the count would run nothing and say nothing.
    if (countOption("shard.index", index) > count) {
      throw new RangeError(
        `The "shard.index" option (${index}) is above "shard.count" (${count})`,
      );
    }
  }
  const started = new Date();
  const runId = newRunId(started);
  const {
    config,
    cwd,
    scorers,
    sources,
    fingerprints,
    configWithBudget,
    targets: selected,
    mode,
    budget,
    scorerCache,
  } = await prepare(configPath, options);
  // --- matrix and baselines (issue 14) ---
  const matrix = selected.length > 1 ? selected.map((t) => t.name!) : undefined;
  const require = epochsOf(config).require;
  const baselineModule = options.baseline !== undefined ||
      options.saveBaseline !== undefined
    ? await import("./baseline.ts")
    : undefined;
  let savePath: string | undefined;
  let comparePath: string | undefined;
  let baseline: Awaited<ReturnType<typeof readBaselineType>> | undefined;
  try {
    if (options.saveBaseline !== undefined) {
      savePath = baselineModule!.baselinePath(options.saveBaseline, cwd);
    }
    if (options.baseline !== undefined) {
      comparePath = await (await import("./_baseline_to_read.ts"))
        .baselineToRead(options.baseline, cwd);
      // Read before the run: a missing baseline costs no model call.
      baseline = await baselineModule!.readBaseline(comparePath);
    }
  } catch (error) {
    await Promise.all(scorers.map((s) => s.close?.()));
    throw error;
  }
  const collector: BaselineCollector | undefined =
    baselineModule !== undefined || matrix !== undefined
      ? new (baselineModule ?? await import("./baseline.ts"))
        .BaselineCollector()
      : undefined;
  // --- end issue 14 ---
  const resume = options.resume;
  const resuming = resume !== undefined || options.outPath !== undefined
    ? await import("./resume.ts")
    : undefined;
  if (resume !== undefined && !options.force) {
    resuming!.checkResume(
      resume,
      fingerprints!,
      configWithBudget === undefined ? [] : [configWithBudget],
    );
  }
  const epochs = options.epochs ?? epochsOf(config).n ?? DEFAULTS.epochs;
  // Shards and subsets (select.ts): which examples this run runs.
  // A subset of fields all undefined (`{ limit: flags.limit }`) is none.
  const subset = options.subset !== undefined &&
      Object.values(options.subset).some((v) => v !== undefined)
    ? options.subset
    : undefined;
  const settings = {
    epochs,
    ...(options.shard !== undefined ? { shard: options.shard } : {}),
    ...(subset !== undefined ? { subset } : {}),
    // As the record's config says it: `diff` of the Scores file reads it.
    require: require ?? "all",
  };
  if (resume !== undefined) resuming!.checkResumeSettings(resume, settings);
  // A file resumed without its sidecar (missing or damaged: only --force
  // gets here) gets one again, rebuilt from what its unit ids show and what
  // this run is, so the next resume is plain: only when the ids tell its
  // epochs and no shard or subset is in play, which the ids cannot show.
  const rebuilt: RunMeta | undefined = resume !== undefined &&
      resume.scores > 0 && resume.meta === undefined
    ? resuming!.rebuiltMeta(resume, settings, {
      run_id: runId,
      started_at: started.toISOString(),
      fingerprints: fingerprints!,
    })
    : undefined;
  const blockedByBudget = resuming?.blockedByBudget;
  // The budget holds across the runs of one file: a resume starts from what
  // the earlier ones spent. The calls they refused are made again (their
  // Scores are cut off the file), so their refusals are not carried.
  // Exact when the file's last run ended; else at least what the sidecar
  // noted, the blocked Scores say and the files' calls cost.
  // The units file is read for it only here: it can be hundreds of MB.
  const budgetStart = budget === undefined || resume === undefined
    ? undefined
    : resuming!.earlierSpend(
      options.unitsPath === undefined
        ? resume
        : await resuming!.withUnitsSpend(resume, options.unitsPath),
    );
  budget?.charge(budgetStart?.usd);
  let sampled: Set<string> | undefined;
  if (subset?.sample !== undefined) {
    if (config.dataset === "-") {
      throw new DatasetError(
        "--sample reads the dataset twice (to draw, then to run): it needs a dataset file, not stdin",
      );
    }
    sampled = await (await import("./select.ts")).drawSample(
      await loadSources(sources, undefined),
      subset,
    );
  }
  const selection = options.shard !== undefined || subset !== undefined
    ? new (await import("./select.ts")).Selection({
      ...(options.shard !== undefined ? { shard: options.shard } : {}),
      ...(subset !== undefined ? { subset } : {}),
      ...(sampled !== undefined ? { sampled } : {}),
    })
    : undefined;
  // Stopped, the run reads no more cases: none would run.
  const loaded = await loadSources(sources, options.stdin, options.stop);
  const examples = selection === undefined
    ? loaded
    : loaded.pipeThrough(selection.stage());
  const concurrency = options.concurrency ?? config.concurrency ??
    DEFAULTS.concurrency;
  const maxProcesses = options.maxProcesses ?? config.max_processes;
  if (maxProcesses !== undefined) {
    (await import("../process/run_command.ts")).setMaxProcesses(maxProcesses);
  }
  const signal = options.signal;
  const cache = mode === "off" ||
      !selected.some((t) => isNetworkTarget(t.config))
    ? undefined
    : new (await import("../targets/cache.ts")).TargetCache(
      cacheFolder(options, cwd),
      { mode },
    );
  // What the model calls cost, tallied as units and Scores go by.
  const tally = new SpendTally();
  // One cache for every target of a matrix: its keys hold each target's
  // settings, so their answers never mix.
  const built: Target[] = [];
  try {
    for (const t of selected) {
      built.push(
        await buildTargetConfig(
          withTargetTimeout(t.config, options),
          cwd,
          cache,
          {
            budget,
            optionalKey: mode === "replay",
            traceDir: traceDirOf(config, cwd),
          },
        ),
      );
    }
  } catch (error) {
    if (!await isTemplateError(error)) throw error;
    throw await missingVariableError((error as Error).message, configPath);
  }
  let target = built[0]!;
  // Resuming: the units whose every metric the file has are skipped.
  const done = resume === undefined
    ? undefined
    : (unitId: string) => resuming!.metricsScored(resume, unitId);
  const metrics = scorers.flatMap(metricsOf);
  // A malformed record's Scores may stand under the name an earlier
  // evalpipe gave it (`formerly`), some of them under today's.
  const unitDone = (unitId: string, formerly?: string) => {
    const have = done?.(unitId);
    const had = formerly === undefined ? undefined : done?.(formerly);
    return (have !== undefined || had !== undefined) &&
      metrics.every((m) => have?.has(m) === true || had?.has(m) === true);
  };
  if (options.beforeWrite !== undefined) {
    try {
      const { resolveIn, scriptOf } = await import("../process/command.ts");
      const commands = [
        ...selected.flatMap((t) =>
          t.config.type === "subprocess" ? [t.config.cmd] : []
        ),
        ...config.scorers.flatMap((sc) =>
          sc.type === "subprocess" ? [sc.cmd] : []
        ),
      ];
      await options.beforeWrite({
        config: configPath,
        datasets: sources.filter((s) => s.path !== "-").map((s) => s.path),
        ...(sources.some((s) => s.path === "-") ? { stdin: true } : {}),
        scripts: commands.flatMap((cmd) => {
          const script = scriptOf(cmd, cwd);
          return script === undefined
            ? []
            : [cwd === "." ? script : resolveIn(cwd, script)];
        }),
      }, resume !== undefined ? unitDone : undefined);
    } catch (error) {
      await examples.cancel(error);
      await Promise.all(scorers.map((s) => s.close?.()));
      throw error;
    }
  }
  const recordModule = options.record === undefined
    ? undefined
    : await import("../record/run_record.ts");
  const header: RunRecordHeader = {
    run_id: runId,
    started_at: started.toISOString(),
    config_path: configPath,
    config: {
      ...recordedConfig(config, selected, options),
      concurrency,
      // The count as run; with its requirement, when the config set one.
      epochs: require !== undefined ? { n: epochs, require } : epochs,
      ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
    } as unknown as Record<string, unknown>,
    fingerprints: fingerprints!,
    value_ranges: rangesByMetric(scorers),
    ...(options.shard !== undefined ? { shard: options.shard } : {}),
    ...(subset !== undefined ? { subset } : {}),
  };
  // A resumed run's Scores join the earlier ones, wherever each example's
  // epochs fell: gather them by example rather than by adjacency.
  const aggregatorOptions = {
    grouped: resume !== undefined,
    valueRange: valueRangesOf(scorers),
  };
  // A matrix's Scores carry their target: the aggregator keeps each apart.
  const aggregator = new Aggregator(aggregatorOptions);
  // A unit the resume runs again (a scorer added with --force) is one line
  // of the record, its earlier Scores joined to the new ones.
  const earlier = resume !== undefined && recordModule !== undefined
    ? new (await import("./unit_scores.ts")).EarlierScores()
    : undefined;
  let record: RunRecordWriter | undefined;
  // What the earlier units and Scores the record keeps cost: the record's
  // `cost` is its units', as an uninterrupted run's (and its reports') is.
  const earlierSpend = earlier === undefined ? undefined : new SpendTally();
  // This run's cache hits of units run again whose record line keeps the
  // earlier call (counted in earlierSpend): the record counts them once.
  let replayed = 0;
  // The earlier Scores, a unit at a time, beside the unit when it is known.
  const readEarlier = async (resume: ResumePlan) => {
    const previous = options.previousUnits;
    let group: Score[] = [];
    // A unit whose Scores stand apart (a scorer a resume added) is one
    // line of the record, its call counted once: gathered until the end.
    const split = resume.splitUnits;
    const gathered = new Map<string, Score[]>();
    const flush = async () => {
      if (group.length === 0) return;
      if (split !== undefined) {
        const id = nfcKey(group[0]!.unit_id!);
        if (split.has(id)) {
          const before = gathered.get(id);
          if (before === undefined) gathered.set(id, group);
          else before.push(...group);
          group = [];
          return;
        }
      }
      await flushUnit();
    };
    const flushUnit = async () => {
      const unit = previous?.get(group[0]?.unit_id ?? "");
      if (group.length === 0) return;
      // A baseline keeps the earlier units' inputs and outputs too.
      if (unit !== undefined && baselineModule !== undefined) {
        collector?.addUnit(unit);
      }
      // Paid for by the earlier run, also when the unit runs again (a
      // scorer added with --force): its earlier Scores join the new ones,
      // and its earlier target call was made whatever this run's costs.
      if (record !== undefined) {
        if (unit !== undefined) earlierSpend?.addUnit(unit);
        for (const score of group) earlierSpend?.addScore(score);
      }
      if (!unitDone(group[0]!.unit_id!)) {
        earlier!.hold([unit, group]);
        group = [];
        return;
      }
      await (unit !== undefined
        ? record?.addUnit(unit, group)
        : record?.addScores(group));
      group = [];
    };
    for await (const score of resuming!.readScoreLines(resume.path)) {
      // Cut off the file as the run begins: its unit runs again.
      if (resume.budgetBlocked !== undefined && blockedByBudget!(score)) {
        continue;
      }
      aggregator.add(score);
      collector?.addScore(score);
      if (record === undefined) continue;
      if (group.length > 0 && group[0]!.unit_id !== score.unit_id) {
        await flush();
      }
      group.push(score);
    }
    await flush();
    for (const scores of gathered.values()) {
      group = scores;
      await flushUnit();
    }
  };
  // Nothing is written before the run's first unit or Score (or its end):
  // a run that fails before then leaves every output as it was.
  let begun: Promise<void> | undefined;
  let ready = false;
  // The sidecar as the run goes on: the file's, without what is written
  // when a run ends (`complete`, a shard's tally), so that a run that does
  // not end leaves no sign that it did.
  const earlierMeta = resume !== undefined && resume.scores > 0
    ? resume.meta ?? rebuilt
    : undefined;
  const continued = earlierMeta !== undefined;
  // Resumed without a sidecar it could rebuild: none is made up from this
  // run's flags, which may not be the file's (its epochs, its subset).
  const noMeta = resume !== undefined && resume.scores > 0 && !continued;
  const metaNow = (): RunMeta => {
    const meta: RunMeta = continued ? { ...earlierMeta! } : {
      run_id: runId,
      started_at: started.toISOString(),
      fingerprints: fingerprints!,
    };
    delete meta.complete;
    delete meta.selection;
    return {
      ...meta,
      settings,
      ...rangesIf(scorers),
      gates: config.gates ?? {},
    };
  };
  /**
   * The sidecar as a run that ended writes it, for a shard, a subset or a
   * budget: a shard's Scores file says, beside it, what it ran (merge reads
   * it), and every file keeps what its budget spent (a resume starts from
   * it). Also when the run ended in an error (`complete: false`).
   */
  const endMeta = async (
    complete: boolean,
    selectionTally: SelectionTally | undefined,
  ): Promise<void> => {
    if (
      options.outPath === undefined || noMeta ||
      (selectionTally === undefined && budget === undefined)
    ) return;
    await resuming!.writeMeta(options.outPath, {
      ...(earlierMeta !== undefined ? earlierMeta : {
        run_id: runId,
        started_at: started.toISOString(),
        fingerprints: fingerprints!,
      }),
      settings,
      ...(selectionTally !== undefined ? { selection: selectionTally } : {}),
      complete,
      ...rangesIf(scorers),
      gates: config.gates ?? {},
      ...(budget !== undefined
        ? {
          budget: {
            limit_usd: budget.limit,
            spent_usd: budget.spent,
            refused: budget.refused,
          },
        }
        : {}),
    });
  };
  // With a budget, what it has spent, noted as the run goes on.
  let notes: import("./_spend_notes.ts").SpendNotes | undefined;
  const begin = (): Promise<void> =>
    begun ??= (async () => {
      await options.begin?.();
      // A resume with no Scores to continue starts the file afresh: without
      // its metadata, the next interruption could not be resumed.
      if (
        options.outPath !== undefined &&
        (resume === undefined || resume.scores === 0 || rebuilt !== undefined)
      ) {
        await resuming!.writeMeta(options.outPath, metaNow());
      }
      if (options.outPath !== undefined && budget !== undefined && !noMeta) {
        // A resume notes at once that a run is under way, its budget
        // starting where the earlier ones left it.
        const out = options.outPath;
        const { SpendNotes } = await import("./_spend_notes.ts");
        notes = new SpendNotes(budget, () =>
          resuming!.writeMeta(out, {
            ...metaNow(),
            budget: {
              limit_usd: budget.limit,
              spent_usd: budget.spent,
              refused: budget.refused,
            },
          }));
        await notes.start(continued);
      }
      if (recordModule !== undefined) {
        record = new recordModule.RunRecordWriter(options.record!, header);
      }
      if (resume !== undefined) await readEarlier(resume);
      ready = true;
    })();
  let invalidRecords = 0;
  let scores = 0;
  // Progress: the dataset counted beside the run, each unit's start and skip.
  const progress = options.progress;
  let counting: Promise<unknown> | undefined;
  let ended = false;
  // A shard or a subset runs part of the datasets: its total is not known
  // before the run, and the display counts instead.
  if (
    progress?.total !== undefined && selection === undefined &&
    sources.every((s) => s.path !== "-")
  ) {
    // The loader opened them: their formats are known.
    const { countExamples } = await import("./progress.ts");
    counting = Promise.all(
      sources.map((s) =>
        countExamples(s.path, formatOf(s.written)!, () => ended)
      ),
    ).then((counts) => {
      if (counts.every((n) => n !== undefined)) {
        const cases = counts.reduce((sum: number, n) => sum + n!, 0);
        progress.total!(cases * epochs * built.length);
      }
    });
  }
  if (progress?.start !== undefined) {
    // Called on it: an observer made by a class keeps its `this`.
    const start = progress.start.bind(progress);
    const end = progress.end?.bind(progress) ?? (() => {});
    // Every target of a matrix reports the units it starts and ends. A unit
    // whose call ended may wait for its scorers and its turn to be written
    // (in input order): it is no call in flight any more.
    for (const [i, inner] of built.entries()) {
      built[i] = {
        call: (testCase, context) => {
          start(1);
          let result;
          try {
            result = inner.call(testCase, context);
          } catch (error) {
            end(1);
            throw error;
          }
          if (!(result instanceof Promise)) {
            end(1);
            return result;
          }
          return result.finally(() => end(1));
        },
        ...(inner.timed !== undefined ? { timed: inner.timed } : {}),
      };
    }
    target = built[0]!;
  }
  const skipUnit = progress?.skip === undefined ? unitDone : (
    id: string,
    formerly?: string,
  ) => {
    const skip = unitDone(id, formerly);
    if (skip) progress.skip!(1);
    return skip;
  };
  const onInvalidRecord = (example: Example) => {
    progress?.start?.(epochs * built.length);
    progress?.end?.(epochs * built.length);
    invalidRecords++;
    if (options.onInvalidRecord === undefined) return;
    const { name, where } = whereOf(sources, example);
    const invalid: InvalidCase = {
      dataset: name,
      where,
      line: example.line,
      ...(example.at !== undefined ? { at: example.at } : {}),
      message: example.invalid ?? "",
    };
    options.onInvalidRecord(
      `Invalid case in ${invalidCaseText(invalid)}`,
      example,
      invalid,
    );
  };
  // The exported stages, piped as a script would pipe them; what is run's
  // own (resuming, the record, the callbacks) sits between them.
  const targetOptions = {
    concurrency,
    epochs,
    ...(signal !== undefined ? { signal, abandon: signal } : {}),
    ...(options.stop !== undefined ? { stop: options.stop } : {}),
    ...(done !== undefined ? { skip: skipUnit } : {}),
    ...(progress?.flow !== undefined ? { flow: progress.flow } : {}),
    onInvalidRecord,
  };
  const matrixModule = matrix === undefined
    ? undefined
    : await import("./matrix.ts");
  let units = matrixModule === undefined
    ? examples.pipeThrough(runTargetBatches(target, targetOptions))
    : examples.pipeThrough(
      matrixModule.runMatrixBatches(
        built.map((t, i) => ({ name: matrix![i]!, target: t })),
        targetOptions,
      ),
    );
  // A subprocess target or scorer inherits the environment: what it echoes
  // of the keys the config sends is hidden here, before anything is
  // written. Suites that send no secret keep their path without a stage.
  // (The module is loaded only for a config that may name one.)
  const guards = namesSecrets(config)
    ? await (await import("./_secrets.ts")).guardsFor(config)
    : undefined;
  if (guards !== undefined) units = units.pipeThrough(guards.units());
  // What the system said: each unit goes to `--units` as it is answered,
  // and waits beside the pipeline to join its Scores in the record.
  const unitsOut = options.units === undefined
    ? undefined
    : new TextWriter(options.units);
  const joining = recordModule === undefined
    ? undefined
    : await import("./unit_scores.ts");
  const joiner = joining === undefined ? undefined : new joining.UnitScores(
    (unitId) => metrics.filter((m) => !done?.(unitId)?.has(m)).length,
  );
  const keepUnits = baselineModule !== undefined ? collector : undefined;
  const unitLine = unitsOut === undefined
    ? undefined
    : (await import("../dataset/unit.ts")).unitLine;
  // Only a network target's units can carry a spend: a replay's run keeps
  // its fast path without this stage.
  const priced = selected.some((t) => isNetworkTarget(t.config));
  if (
    unitsOut !== undefined || joiner !== undefined || keepUnits !== undefined ||
    priced
  ) {
    units = units.pipeThrough(
      new TransformStream<Unit[], Unit[]>({
        async transform(batch, controller) {
          if (!ready) await begin();
          if (priced) {
            for (const unit of batch) tally.addUnit(unit);
          }
          if (keepUnits !== undefined) {
            for (const unit of batch) keepUnits.addUnit(unit);
          }
          if (unitsOut !== undefined) {
            let text = "";
            for (const unit of batch) text += unitLine!(unit) + "\n";
            const pending = unitsOut.write(text);
            if (pending !== undefined) await pending;
          }
          joiner?.push(batch);
          controller.enqueue(batch);
        },
      }),
    );
  }
  let valid = units
    .pipeThrough(scoreUnitBatches(scorers, {
      concurrency,
      // Interrupted, the stages write what finishes, in whatever order, and
      // after the grace period drop what still runs: resuming reruns it.
      ...(signal !== undefined ? { signal, abandon: signal } : {}),
      ...(options.stop !== undefined ? { unordered: options.stop } : {}),
      // An example's units (epochs, targets) stay together in the output.
      ...(epochs > 1 || matrix !== undefined
        ? { groupOf: (unit: Unit) => unit.example_id }
        : {}),
      ...(progress?.flow !== undefined ? { flow: progress.flow } : {}),
    }))
    .pipeThrough(validateScoreBatches());
  if (guards !== undefined) valid = valid.pipeThrough(guards.scores());
  if (selection?.subset !== undefined) {
    // What the subset left out: `skipped` Scores, after the others.
    const versions = scorers.flatMap((s) =>
      (s.metrics !== undefined && s.metrics.length > 0 ? s.metrics : [s.name])
        .map((metric) => ({ metric, version: s.version }))
    );
    valid = valid.pipeThrough(
      new TransformStream<Score[], Score[]>({
        flush(controller) {
          const rest = selection.skippedScores(versions, epochs, matrix);
          // Batches of whole units: each unit is one line of the record.
          const step = versions.length * 256;
          for (let i = 0; i < rest.length; i += step) {
            controller.enqueue(rest.slice(i, i + step));
          }
        },
      }),
    );
  }
  if (done !== undefined) {
    // Resuming: a Score the file already has is not written twice.
    valid = valid.pipeThrough(
      new TransformStream<Score[], Score[]>({
        transform(batch, controller) {
          const fresh = batch.filter((s) => !done(s.unit_id!)?.has(s.metric));
          if (fresh.length > 0) controller.enqueue(fresh);
        },
      }),
    );
  }
  try {
    await valid
      .pipeThrough(aggregateInto(aggregator))
      .pipeThrough(
        new TransformStream<Score[], Score[]>({
          async transform(batch, controller) {
            // Before this batch is written anywhere. Counted already: with a
            // resume the earlier Scores begin adds are gathered by example,
            // in any order.
            if (!ready) await begin();
            for (const score of batch) options.onScore?.(score);
            if (collector !== undefined) {
              for (const score of batch) collector.addScore(score);
            }
            for (const score of batch) tally.addScore(score);
            progress?.done?.(batch);
            if (joiner !== undefined) {
              // Await only a real write: an await per unit costs a turn each.
              for (
                let [unit, scores] of joining!.joinLoose(joiner.take(batch))
              ) {
                if (earlier !== undefined && earlier.size > 0) {
                  const joined = earlier.join([unit, scores]);
                  // Its cache hit stands for the earlier call, counted.
                  if (unit !== undefined && joined[0] !== unit) replayed++;
                  [unit, scores] = joined;
                }
                const pending = unit === undefined
                  ? record!.addScores(scores)
                  : record!.addUnit(unit, scores);
                if (pending !== undefined) await pending;
              }
            }
            scores += batch.length;
            controller.enqueue(batch);
          },
        }),
      )
      // Not given `signal`: the stages end themselves on it, so the sink
      // closes with every Score that finished.
      .pipeTo(options.sink);
  } catch (error) {
    ended = true;
    // Keep what was computed: the record ends, marked incomplete. A run
    // that wrote nothing yet leaves its outputs as they were; one that was
    // beginning them ends them (a failed start is the error itself).
    await begun?.then(() => {}, () => {});
    // Noting stops, all that was spent noted; the last note stands, as the
    // run did not end.
    await notes?.stop().catch(() => {
      // The run's own error is the one to report.
    });
    if (ready) {
      await writeRest(joiner, record, earlier);
      await record?.finish(
        aggregator.results(),
        false,
        selection?.tally(),
        recordSpend(tally, earlierSpend, replayed),
      );
      await unitsOut?.flush();
      // The run ended, not complete, as its record says: a resume's start
      // note took the earlier run's `complete` and tally off the sidecar,
      // and without them merge could not place this shard's Scores.
      await endMeta(false, selection?.tally()).catch((metaError) => {
        // A disk that refuses the sidecar now: the run's own error is the
        // one to report, and the sidecar keeps the last note (not ended).
        if (exitCodeOf(metaError) === undefined) throw metaError;
      });
    }
    throw error;
  } finally {
    // A run that read its whole dataset lets the count end; one that
    // stopped early stops it.
    if (options.stop?.aborted || signal?.aborted) ended = true;
    await counting;
    // Long-lived scorer processes end with the run, whatever ended it.
    await Promise.all(scorers.map((s) => s.close?.()));
  }
  // No call is made from here on: noting stops with all of the spend, so
  // that an error below leaves no timer running and a note that holds it.
  await notes?.stop();
  // Counted up to each process's end: complete now that they are closed.
  const surplusLines = scorers.flatMap((s) => {
    const lines = s.surplusLines?.() ?? 0;
    return lines > 0 ? [{ scorer: s.name, lines }] : [];
  });
  const stopped = (options.stop?.aborted ?? false) ||
    (signal?.aborted ?? false);
  // A run that made nothing still writes its outputs (every unit resumed),
  // unless it was stopped first: then it wrote nothing, and each output is
  // left as it was.
  const unbegun = stopped && !ready;
  if (!ready && !unbegun) await begin();
  const aggregates = aggregator.results();
  await writeRest(joiner, record, earlier);
  const selectionTally = selection?.tally();
  const spend = spendIf(tally);
  // --- baselines (issue 14) ---
  // A shard is compared with its own examples of the baseline: the others
  // are other shards', not cases removed (`merge --baseline` compares the
  // whole run).
  const shard = options.shard;
  const shardOf = shard === undefined || baseline === undefined
    ? undefined
    : (await import("./select.ts")).shardOf;
  const compared = baseline === undefined ? undefined : {
    path: comparePath!,
    ...baselineModule!.compareWithBaseline(
      shardOf === undefined ? baseline.scores : baseline.scores.filter((s) => {
        const id = s.example_id ?? s.unit_id;
        return id === undefined || shardOf(id, shard!.count) === shard!.index;
      }),
      collector!.scores(),
      // The run's own requirement, `all` unless its config sets one, as
      // its record and sidecar say: not the one the baseline was saved by.
      require ?? "all",
      { valueRange: valueRangesOf(scorers) },
    ),
    // A case edited since the baseline, its id kept: said, for its change
    // may be the case's, not the system's.
    ...await casesChangedSince(
      baseline.cases ?? baseline.file.units,
      collector!.units(),
      // A record keeps every field; a baseline file those it names, an
      // older one input and expected, by value.
      baseline.cases !== undefined
        ? {}
        : baselineModule!.casesKept(baseline.file),
    ),
  };
  // --- end issue 14 ---
  const budgetSpent = budget === undefined ? undefined : {
    limit_usd: budget.limit,
    spent_usd: budget.spent,
    refused: budget.refused,
  };
  // What the run is checked against besides its gates, for a report made
  // from the record later.
  await record?.finish(
    aggregates,
    !stopped,
    selectionTally,
    recordSpend(tally, earlierSpend, replayed),
    {
      ...(compared !== undefined && record !== undefined
        ? {
          baseline: (await import("../record/run_checks.ts")).recordedBaseline(
            compared.path,
            compared,
          ),
        }
        : {}),
      ...(budgetSpent !== undefined ? { budget: budgetSpent } : {}),
    },
  );
  await unitsOut?.flush();
  if (!unbegun) await endMeta(!stopped, selectionTally);
  // --- matrix and baselines (issue 14) ---
  let gateFailures: GateFailure[];
  let comparison: ComparisonLine[] | undefined;
  if (matrix !== undefined) {
    // Each target meets the gates on its own.
    gateFailures = checkGates(config.gates ?? {}, aggregates, {
      targets: matrix,
    });
    const { compareTargets } = await import("../diff/compare.ts");
    comparison = compareTargets(collector!.scores(), {
      targets: matrix,
      valueRange: valueRangesOf(scorers),
      require: require ?? "all",
    });
  } else gateFailures = checkGates(config.gates ?? {}, aggregates);
  const settings14 = {
    epochs,
    require: require ?? "all",
    ...(matrix !== undefined ? { targets: matrix } : {}),
  } as const;
  // The run is done: a baseline the disk refuses costs the baseline, and
  // the summary still tells everything else.
  let baselineError: Error | undefined;
  if (savePath !== undefined && !unbegun) {
    try {
      await baselineModule!.writeBaseline(
        savePath,
        collector!.file(settings14),
      );
    } catch (error) {
      if (exitCodeOf(error) === undefined) throw error;
      baselineError = error as Error;
    }
  }
  // --- end issue 14 ---
  return {
    runId,
    aggregates,
    scores,
    complete: !stopped,
    invalidRecords,
    ...(surplusLines.length > 0 ? { surplusLines } : {}),
    gateFailures,
    ...(selectionTally !== undefined
      ? {
        selection: {
          examples: selectionTally.examples,
          ran: selectionTally.ran,
          skipped: selectionTally.skipped,
        },
      }
      : {}),
    epochs,
    ...(require !== undefined ? { require } : {}),
    ...(matrix !== undefined && comparison !== undefined
      ? { targets: matrix, comparison }
      : {}),
    ...(savePath !== undefined && !unbegun
      ? baselineError === undefined
        ? { savedBaseline: savePath }
        : { baselineError }
      : {}),
    ...(compared !== undefined ? { baseline: compared } : {}),
    ...(cache !== undefined ? { cache: countsOf(cache) } : {}),
    ...(scorerCache !== undefined
      ? { scorerCache: countsOf(scorerCache) }
      : {}),
    ...(cache !== undefined || scorerCache !== undefined
      ? { cacheMode: mode }
      : {}),
    ...(spend !== undefined ? { spend } : {}),
    ...(budgetSpent !== undefined ? { budget: budgetSpent } : {}),
    ...(budgetStart !== undefined ? { budgetStart } : {}),
  };
}

/** Each metric's declared range, for the record. */
/** `{ value_ranges }` for a sidecar, when a scorer declares a range. */
function rangesIf(
  scorers: readonly Scorer[],
): { value_ranges?: Record<string, [number, number]> } {
  const ranges = rangesByMetric(scorers);
  return Object.keys(ranges).length > 0 ? { value_ranges: ranges } : {};
}

function rangesByMetric(
  scorers: readonly Scorer[],
): Record<string, [number, number]> {
  const range = valueRangesOf(scorers);
  const ranges: Record<string, [number, number]> = {};
  for (const s of scorers) {
    const metrics = s.metrics !== undefined && s.metrics.length > 0
      ? s.metrics
      : [s.name];
    for (const m of metrics) {
      const r = range(m);
      if (r !== undefined) ranges[m] = [r[0], r[1]];
    }
  }
  return ranges;
}
