/**
 * `evalpipe run CONFIG.yaml`: runs a suite, Scores on stdout or to `--out`.
 *
 * @module
 */

import { defineCommand } from "./command.ts";
import { UsageError } from "./flags.ts";
import { counted } from "../base/words.ts";
import {
  commandLine,
  progress,
  say,
  saySurplusLines,
  stdoutIsFile,
} from "./_output.ts";
import { exitCodeOf, isOsError, OUTPUT_EXIT_CODE } from "../base/errors.ts";
import { reportFlags } from "./_reports.ts";
import { CACHE_FLAG, cacheModeOf } from "./_cache_flag.ts";
import type { Score } from "../score/mod.ts";
import type { InterruptSignal } from "../run/interrupt.ts";
import type { Unit } from "../dataset/unit.ts";

/** Seconds a run may take, after the grace period, to write what finished. */
const LAST_WRITE_S = 5;

/** What `-` means to run's file flags but --out: stdout is the Scores'. */
const RUN_STDOUT = { refused: "run's stdout is for Scores alone" } as const;

/**
 * Opens a file a flag names; one that cannot be opened (no such folder,
 * permission denied) is an input error, exit 2, naming why.
 */
async function openFlagFile(
  path: string | undefined,
  options: import("../io/out_file.ts").OpenOutOptions,
) {
  const { openOut } = await import("../io/out_file.ts");
  const waiting = path === undefined
    ? undefined
    : await noteFifo(path, options.name ?? JSON.stringify(path));
  try {
    return await openOut(path, options);
  } finally {
    // Only when set: Deno's first clearTimeout, as its first setTimeout,
    // loads its Node compatibility layer (milliseconds of every run's start).
    if (waiting !== undefined) clearTimeout(waiting);
  }
}

/** Seconds an output FIFO may wait for its reader before stderr says so. */
const FIFO_NOTE_S = 1;

/**
 * A FIFO opens to write only once something reads it: `--out >(jq …)` at
 * once, a `mkfifo` nobody reads never. Allowed, as the reports write through
 * one, but a wait past a moment is said on stderr instead of a run that
 * hangs without a word before it starts.
 *
 * @returns The note's timer, to clear once the open is done.
 */
async function noteFifo(
  path: string,
  name: string,
): Promise<ReturnType<typeof setTimeout> | undefined> {
  const info = await Deno.stat(path).catch((error) => {
    // Not there (made by the open) or not reachable: the open says why.
    if (!isOsError(error)) throw error;
    return undefined;
  });
  if (!info?.isFifo) return undefined;
  const timer = setTimeout(() => {
    say(
      `evalpipe: ${name} is a FIFO: the run starts once something reads it`,
    );
  }, FIFO_NOTE_S * 1000);
  Deno.unrefTimer(timer);
  return timer;
}

/** Writes the HTML report of the run whose RunRecord is at `recordPath`. */
async function writeRunReport(recordPath: string, htmlPath: string) {
  const { writeHtmlReportFile } = await import("./_html.ts");
  await writeHtmlReportFile(htmlPath, recordPath);
}

/** The files a run's flags name, as messages name them: `--out "s.ndjson"`. */
function givenFiles(flags: Readonly<Record<string, unknown>>): string[] {
  return [
    "out",
    "record",
    "units",
    "html",
    "junit",
    "markdown",
    "save-baseline",
  ]
    .flatMap((name) =>
      typeof flags[name] === "string"
        ? [`--${name} ${JSON.stringify(flags[name])}`]
        : []
    );
}

/** `a`, `a and b`, `a, b and c`. */
function listed(items: readonly string[]): string {
  return items.length < 2
    ? items.join("")
    : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

/** The line of a run that stopped before it wrote to `kept`, its files. */
function nothingWritten(kept: readonly string[]): string {
  return `evalpipe: nothing was written: ${listed(kept)} ${
    kept.length === 1 ? "is" : "are"
  } as ${kept.length === 1 ? "it was" : "they were"}`;
}

/**
 * The command that resumes this run: the same config and every flag given
 * (the subset, the targets, the record, the reports...), `--resume` added.
 * A resume refuses a different subset or epochs, so all must be repeated.
 */
function resumeCommand(
  configPath: string,
  flags: Readonly<Record<string, unknown>>,
  spec: import("./flags.ts").FlagSpecs,
): string {
  const words = ["run", configPath];
  for (const [name, def] of Object.entries(spec)) {
    if (name === "resume" || name === "help") continue;
    const value = flags[name];
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) {
      if (v === undefined || v === false) continue;
      if (def.type !== "boolean" && v === def.default) continue;
      words.push(`--${name}`);
      if (v !== true) words.push(String(v));
    }
  }
  words.push("--resume");
  // Printed to be run as it is, from the user's shell.
  return commandLine(words);
}

/**
 * Whether `path` is a FIFO, a device or a socket: what went through it
 * cannot be read back, as a resume reads its Scores file. A path gone,
 * unreachable or a folder is left to the resume, which says what is wrong.
 */
function passesThrough(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFifo === true || info.isCharDevice === true ||
      info.isBlockDevice === true || info.isSocket === true;
  } catch (error) {
    if (!isOsError(error)) throw error;
    return false;
  }
}

/** The `run` command. */
export const run = defineCommand({
  name: "run",
  summary: "Run a suite; Scores (NDJSON) on stdout, a summary on stderr",
  usage: "CONFIG.yaml [options]",
  description:
    `Runs the suite the config describes: dataset -> target -> scorers. Writes one
Score per unit and metric as NDJSON on stdout (or to --out) as they are made,
and a summary table on stderr.`,
  positionals: { names: ["CONFIG.yaml"], error: "run takes one config file" },
  flags: {
    out: {
      type: "string",
      value: "FILE",
      short: "o",
      help: "Write Scores to FILE instead of stdout (- is stdout)",
      dash: "stdout",
    },
    resume: {
      type: "boolean",
      help:
        "Continue the run whose Scores are in --out: units already scored are skipped, the rest appended",
    },
    force: {
      type: "boolean",
      help:
        "With --resume: continue even if the config or dataset changed since the file was started",
    },
    "max-processes": {
      type: "integer",
      max: 4096,
      help: "The most child processes at once",
      defaultText: "the config's, else 64",
    },
    grace: {
      type: "number",
      value: "SECONDS",
      default: 10,
      help:
        "After SIGINT/SIGTERM, how long running units may finish before they are killed",
    },
    record: {
      type: "string",
      value: "FILE",
      help:
        "Write the RunRecord (config, fingerprints, each unit's input, output and target record with its Scores, aggregates) to FILE, as the run goes",
      dash: RUN_STDOUT,
    },
    units: {
      type: "string",
      value: "FILE",
      help:
        "Write each unit record (ids, epoch, input, expected, context, metadata, output, target) to FILE as NDJSON, the shape score reads",
      dash: RUN_STDOUT,
    },
    ...reportFlags(RUN_STDOUT),
    annotations: {
      type: "boolean",
      help:
        "Print GitHub Actions workflow commands on stderr: ::error for each failed gate, a regression against --baseline and a spent budget, ::warning per metric with error or blocked Scores (a shard prints none: merge annotates the whole run)",
      defaultText: "on when GITHUB_ACTIONS=true",
    },
    "no-annotations": {
      type: "boolean",
      help: "Print no workflow commands, even under GitHub Actions",
    },
    html: {
      type: "string",
      value: "FILE",
      help:
        "Write the one-file HTML report of the run to FILE (as `report RECORD --html FILE` would)",
      dash: RUN_STDOUT,
    },
    concurrency: {
      type: "integer",
      max: 1024,
      short: "c",
      help: "Units in flight at once",
      defaultText: "the config's, else 8",
    },
    epochs: {
      type: "integer",
      max: 1000,
      help: "Run each example N times",
      defaultText: "the config's, else 1",
    },
    ...CACHE_FLAG,
    "no-cache": {
      type: "boolean",
      help:
        "Call network targets and judges even when a cached answer exists (= --cache off)",
    },
    "cache-dir": {
      type: "string",
      value: "DIR",
      help: "The target cache's folder",
      defaultText: ".evalpipe/cache in the config's folder",
    },
    timeout: {
      type: "number",
      value: "SECONDS",
      help:
        "Every scorer's timeout, over each scorer's own timeout: in the config (the target's is --target-timeout)",
      defaultText: "the config's, else 60",
    },
    "env-file": {
      type: "string",
      repeatable: true,
      value: "FILE",
      help:
        "Read KEY=VALUE lines (dotenv's format) into the environment before the suite loads, for API keys; variables already set win",
    },
    "target-timeout": {
      type: "number",
      value: "SECONDS",
      help: "The target's timeout per call, over target.timeout in the config",
      defaultText:
        "the config's, else 120 for subprocess, 60 for openai and http",
    },
    // Shards and subsets (src/run/select.ts).
    shard: {
      type: "string",
      value: "K/N",
      help:
        "Run shard K of N (from 1): the examples whose hash of example id falls to it; auto/N reads K from EVALPIPE_SHARD_INDEX (from 1), JOB_COMPLETION_INDEX (from 0) or CI_NODE_INDEX (from 1). Merge the shards with `evalpipe merge`",
    },
    limit: {
      type: "integer",
      value: "N",
      zero: true,
      help:
        "Run only the first N examples (after --filter and --sample); the rest are skipped Scores",
    },
    sample: {
      type: "integer",
      value: "N",
      zero: true,
      help:
        "Run N examples drawn by a stable hash of --seed and the example id (the same N on every run); the rest are skipped Scores",
    },
    seed: {
      type: "string",
      value: "S",
      help: "The seed --sample draws with",
      defaultText: "0",
    },
    filter: {
      type: "string",
      value: "REGEX",
      help:
        "Run only the examples whose id or a metadata value matches REGEX; the rest are skipped Scores",
    },
    // --- targets, matrix, baselines (issue 14) ---
    target: {
      type: "string",
      value: "NAME",
      help: "Run the one of the config's targets: that NAME",
    },
    matrix: {
      type: "string",
      value: "A,B",
      help:
        "Run the same cases through several of the config's targets side by side, and compare each with the first",
      defaultText: "the config's matrix:",
    },
    "save-baseline": {
      type: "string",
      value: "NAME",
      help:
        "Keep the run's Scores and outputs in .evalpipe/baselines/NAME.json in the config's folder (or a path), to commit",
    },
    baseline: {
      type: "string",
      value: "NAME",
      help:
        "Compare with a saved baseline (a name, or the path of a baseline, a RunRecord or a Scores file); exit 1 on a case that passed there and fails now, or a metric significantly worse",
    },
    // --- end issue 14 ---
  },
  async run(flags, [configPath]) {
    if (flags["env-file"].length > 0) {
      const { loadEnvFile } = await import("../config/env_file.ts");
      for (const file of flags["env-file"]) await loadEnvFile(file);
    }
    const outPath = flags.out;
    if (flags.resume && outPath === undefined) {
      throw new UsageError(
        "--resume continues the Scores file given with --out",
      );
    }
    // A FIFO's or a device's Scores went through it: reading them back
    // would wait on it without a word.
    if (flags.resume && outPath !== undefined && passesThrough(outPath)) {
      throw new UsageError(
        `--resume reads back the Scores file given with --out, and ${
          JSON.stringify(outPath)
        } is not a regular file: resume a run written to a file`,
      );
    }
    if (flags.force && !flags.resume) {
      throw new UsageError("--force goes with --resume");
    }
    // Shards and subsets: checked before anything is read (and their
    // modules loaded only for a run that names one).
    const selecting = flags.shard !== undefined ||
        flags.filter !== undefined || flags.sample !== undefined ||
        flags.seed !== undefined || flags.limit !== undefined
      ? await import("./_selection.ts")
      : undefined;
    const selected: import("./_selection.ts").Selected =
      selecting?.selectionOptions(flags) ?? {};
    const cacheMode = cacheModeOf(flags.cache);
    if (flags["no-cache"] && cacheMode !== undefined && cacheMode !== "off") {
      throw new UsageError(`--no-cache and --cache ${cacheMode} disagree`);
    }
    if (flags.annotations && flags["no-annotations"]) {
      throw new UsageError("--annotations and --no-annotations disagree");
    }
    // Command-specific modules load with their command: `score` needs no YAML.
    // Resuming and the --out sidecar's name only with --out.
    const [
      { runSuite },
      resuming,
      { onInterrupt, signalExitCode },
      { ndjsonBatchSink, releasing },
      { scoreLine },
      { formatSummary },
    ] = await Promise.all([
      import("../run/run_suite.ts"),
      outPath !== undefined ? import("../run/resume.ts") : undefined,
      import("../run/interrupt.ts"),
      import("../io/ndjson.ts"),
      import("../score/line.ts"),
      import("../report/summary.ts"),
    ]);
    // Read only: the file is trimmed once the run is known to go ahead.
    const plan = flags.resume
      ? await resuming!.prepareResume(outPath!)
      : undefined;
    const outName = outPath !== undefined
      ? `--out ${JSON.stringify(outPath)}`
      : "stdout";
    const recordName = `--record ${JSON.stringify(flags.record)}`;
    // JUnit and Markdown are made from the record too, as the HTML report.
    const { appendStepSummary, wantsReports, writeReports } = await import(
      "./_reports.ts"
    );
    const stepSummary = Deno.env.get("GITHUB_STEP_SUMMARY") || undefined;
    const reportFiles = { junit: flags.junit, markdown: flags.markdown };
    const reports = wantsReports(reportFiles, stepSummary);
    const needRecord = flags.html !== undefined || reports;
    // The reports read the record back once it is written; a FIFO's has
    // gone by then, and the read would wait on it without a word.
    if (
      needRecord && flags.record !== undefined && passesThrough(flags.record)
    ) {
      throw new UsageError(
        `The reports are made from the run's record, read back once written, and ${recordName} is not a regular file: give --record a file, or leave it out`,
      );
    }
    // A shard annotates nothing: the merge of all shards is the step that
    // holds the run's verdict, and annotates each thing once, counted over
    // the whole run (a shard's would repeat it, with part of the counts).
    const annotate = !flags["no-annotations"] &&
      (flags.annotations || Deno.env.get("GITHUB_ACTIONS") === "true") &&
      selected.shard === undefined;
    const firstFailures = new Map<string, Score>();
    // The first invalid case, for the line on a metric that measured nothing.
    let firstInvalid: import("../base/place.ts").InvalidCase | undefined;
    // Resuming into a record keeps the units the earlier one holds.
    const previousUnits = new Map<string, Unit>();
    const unitsName = `--units ${JSON.stringify(flags.units)}`;
    // An output the disk refuses is dropped, the others still get every
    // Score; when none is left, the run takes no new cases.
    const failed: string[] = [];
    const outputs = flags.record === undefined ? 1 : 2;
    const onFailure = (name: string) => (error: Error) => {
      failed.push(name);
      say(`evalpipe: ${error.message}`);
      if (failed.filter((n) => n !== unitsName).length === outputs) {
        stop.abort(error);
      }
    };
    // Opened only once the config and the dataset are loaded, and emptied
    // only once the run begins (its first unit or Score): a suite that is
    // refused, or a dataset with no cases, leaves every output file as it was.
    let out: import("../io/out_file.ts").OutFile | undefined;
    let record: import("../io/out_file.ts").OutFile | undefined;
    let unitsFile: import("../io/out_file.ts").OutFile | undefined;
    // The HTML report is made from the RunRecord: a temporary one without
    // --record. Losing it costs the report, not the run.
    let recordPath = flags.record;
    let tempRecord: string | undefined;
    // The record's last byte written: its writes reach the file as they are
    // called (openOut), each of whole units, so a run that stops at once
    // can still end it after its last whole unit (cutShortEnding).
    let recordLast: number | undefined;
    let cutShortEnding:
      | typeof import("../record/run_record.ts").cutShortEnding
      | undefined;
    let htmlLost = false;
    // Whether the outputs were opened (every check passed) and begun: a
    // failure between the two (a dataset with no cases) has written nothing,
    // and says so; one before it is plain from its message.
    let opened = false;
    let began = false;
    const openUnits = (append: boolean) =>
      openFlagFile(flags.units!, {
        append,
        keep: true,
        name: unitsName,
        onFailure: (error) => {
          // Not a Scores output: the run goes on, and exits 3 at the end.
          failed.push(unitsName);
          say(`evalpipe: ${error.message}`);
        },
      });
    // Resuming with --units: the earlier file's units the resume keeps,
    // as the one read of it found them.
    let resumedUnits: import("./_resumed_units.ts").UnitsToKeep | undefined;
    const begin = async () => {
      began = true;
      if (outPath !== undefined || flags.units !== undefined) {
        // A run killed while it rewrote one of these files left its temp
        // file beside it: gone, unless a live run is still writing it.
        const { removeStaleTemps } = await import("../io/replace_file.ts");
        const files = [
          ...(outPath !== undefined
            ? [outPath, resuming!.metaPath(outPath)]
            : []),
          ...(flags.units !== undefined ? [flags.units] : []),
        ];
        for (const temp of await removeStaleTemps(files)) {
          say(
            `evalpipe: removed ${
              JSON.stringify(temp)
            }, what a run killed while it rewrote the file beside it left`,
          );
        }
      }
      if (resumedUnits !== undefined) {
        // The earlier units stay, each once; the resume appends the rest.
        const { keepSkippedUnits } = await import("./_resumed_units.ts");
        const replaced = await keepSkippedUnits(resumedUnits);
        const { dropped } = resumedUnits;
        if (replaced) {
          // Written anew and renamed over the one `unitsFile` has open:
          // what the resume appends goes to the new one.
          unitsFile!.close();
          unitsFile = await openUnits(true);
        }
        if (dropped > 0) {
          say(
            `evalpipe: ${unitsName}: dropped ${dropped} ${
              dropped === 1 ? "line" : "lines"
            } of units the resume runs again`,
          );
        }
      }
      if (plan?.dropped !== undefined || plan?.budgetBlocked !== undefined) {
        await resuming!.dropTornLine(plan);
      }
      if (plan?.budgetBlocked !== undefined) {
        // The Scores kept were written to a new file, renamed over the
        // one `out` has open: what the resume appends goes to the new one.
        out!.close();
        out = await openFlagFile(outPath!, {
          append: true,
          keep: true,
          name: outName,
          onFailure: onFailure(outName),
        });
      }
      if (plan?.dropped !== undefined) {
        say(
          `evalpipe: dropped a torn last line of ${
            JSON.stringify(outPath)
          } (${plan.dropped.length} characters)`,
        );
      }
      const blocked = plan?.budgetBlocked?.length ?? 0;
      if (blocked > 0) {
        say(
          `evalpipe: dropped ${blocked} ${
            blocked === 1 ? "Score" : "Scores"
          } of ${
            JSON.stringify(outPath)
          } that the spent budget blocked (budget.exhausted); their calls are made again, under the budget the earlier run left`,
        );
      }
      for (const file of [out, unitsFile, record]) await file?.begin();
    };
    // A report or the baseline lost once the run is done: named, and the
    // others still written. A disk that refuses it is an output lost (3); a
    // folder gone meanwhile, bad input (2).
    let reportRefused = false;
    const lose = (output: string, error: Error) => {
      say(`evalpipe: ${error.message}`);
      if (exitCodeOf(error) === OUTPUT_EXIT_CODE) failed.push(output);
      else reportRefused = true;
    };
    const beforeWrite = async (
      files: import("../run/run_suite.ts").SuiteFiles,
      skips?: (unitId: string) => boolean,
    ) => {
      // --- report folders (issue 14): refused before any call, as `report` does ---
      const { checkReportFolders, refuseFolder } = await import(
        "./_reports.ts"
      );
      await checkReportFolders({ html: flags.html, ...reportFiles });
      // Where --save-baseline writes, as the run will resolve it.
      const baselineFile = flags["save-baseline"] === undefined
        ? undefined
        : (await import("../run/baseline.ts")).baselinePath(
          flags["save-baseline"],
          (await import("../config/config.ts")).folderOf(files.config),
        );
      if (baselineFile !== undefined) {
        await refuseFolder("baseline", baselineFile);
      }
      // Written once the run begins, over whatever has its name: a folder
      // there is refused now, before --out is emptied.
      if (outPath !== undefined) {
        await refuseFolder("the --out sidecar", resuming!.metaPath(outPath));
      }
      const outputs = [
        ...(outPath !== undefined
          ? [{ name: "--out", path: outPath }, {
            name: "the --out sidecar",
            path: resuming!.metaPath(outPath),
          }]
          : []),
        ...(flags.record !== undefined
          ? [{ name: "--record", path: flags.record }]
          : []),
        ...(flags.html !== undefined
          ? [{ name: "--html", path: flags.html }]
          : []),
        ...(flags.units !== undefined
          ? [{ name: "--units", path: flags.units }]
          : []),
        ...Object.entries(reportFiles).flatMap(([flag, path]) =>
          path !== undefined ? [{ name: `--${flag}`, path }] : []
        ),
        ...(baselineFile !== undefined
          ? [{ name: "--save-baseline", path: baselineFile }]
          : []),
      ];
      const inputs = [
        { name: "the config", path: files.config },
        ...files.datasets.map((path) => ({ name: "the dataset", path })),
        ...(files.stdin ? [{ name: "the dataset", path: "-" }] : []),
        ...(files.scripts ?? []).map((path) => ({
          name: "a script the suite runs",
          path,
        })),
      ];
      // Scores on stdout that is a file are an output too: `--units
      // /dev/stdout > f` would write over them (as `--units -` would).
      if (outputs.length > 0 && outPath === undefined && await stdoutIsFile()) {
        outputs.unshift({ name: "the Scores on stdout", path: "/dev/stdout" });
      }
      // Stdout alone overwrites no file: only a stdout that is an input
      // (`>> data.jsonl`) is refused, or the run would read its own lines.
      if (outputs.length > 0 || await stdoutIsFile()) {
        const { refuseSameFile, refuseStdoutOnInput } = await import(
          "../io/same_file.ts"
        );
        await refuseStdoutOnInput(inputs);
        await refuseSameFile(outputs, inputs);
      }
      if (flags.units !== undefined && skips !== undefined) {
        // Read once, now (a file that is not units is refused), and
        // trimmed as this read found it once the run begins.
        const { readUnitsToKeep } = await import("./_resumed_units.ts");
        resumedUnits = await readUnitsToKeep(flags.units, skips);
      }
      out = await openFlagFile(outPath, {
        append: plan !== undefined,
        keep: true,
        name: outName,
        onFailure: onFailure(outName),
      });
      if (plan !== undefined && flags.record !== undefined) {
        const { previousUnits: read } = await import(
          "../run/previous_units.ts"
        );
        for (
          const [id, unit] of await read(flags.record, { name: recordName }) ??
            []
        ) {
          previousUnits.set(id, unit);
        }
      }
      if (flags.units !== undefined) {
        unitsFile = await openUnits(skips !== undefined);
      }
      if (flags.record !== undefined) {
        record = await openFlagFile(flags.record, {
          keep: true,
          name: recordName,
          onFailure: onFailure(recordName),
        });
        ({ cutShortEnding } = await import("../record/run_record.ts"));
      } else if (needRecord) {
        recordPath = tempRecord = await Deno.makeTempFile({
          prefix: "evalpipe-record-",
          suffix: ".json",
        });
        record = await openFlagFile(tempRecord, {
          name: "the record behind the reports",
          onFailure: (error) => {
            htmlLost = true;
            say(`evalpipe: ${error.message}; no reports`);
          },
        });
      }
      opened = true;
    };
    // Stopping at once waits on no child and no reader, but first ends the
    // record, incomplete (units still buffered are left out whole), or
    // removes a temporary one: synchronously, as the process exits next.
    const stopNow = (sig: InterruptSignal, why: string): never => {
      say(why);
      if (needRecord) {
        say("evalpipe: no reports: the run stopped before they were made");
      }
      // Stopped before the run's first unit: each output is as it was, and
      // one this run made (empty, not yet a record) goes, as on a refusal.
      const unbegun = opened && !began;
      if (unbegun) {
        for (const file of [out, unitsFile, record]) file?.close();
      }
      if (tempRecord !== undefined) {
        try {
          Deno.removeSync(tempRecord);
        } catch (error) {
          // Removed by someone else meanwhile: nothing is left.
          if (!(error instanceof Deno.errors.NotFound)) throw error;
        }
      } else if (
        record !== undefined && !unbegun && !failed.includes(recordName)
      ) {
        const ending = cutShortEnding?.(recordLast);
        if (ending !== undefined) {
          void record.write(new TextEncoder().encode(ending));
        }
      }
      const kept = unbegun ? givenFiles(flags) : [];
      if (kept.length > 0) say(nothingWritten(kept));
      // Called on a signal or a timer, long after resumeHint is defined.
      else if (outPath !== undefined) say(resumeHint());
      Deno.exit(signalExitCode(sig));
    };
    const stop = new AbortController();
    const abort = new AbortController();
    const interrupt = onInterrupt(stop, abort, {
      graceMs: flags.grace * 1000,
      onSignal(sig, again) {
        if (again) {
          stopNow(
            sig,
            `evalpipe: interrupted again by ${sig}: stopped at once`,
          );
        }
        say(
          `evalpipe: ${sig}: taking no new cases, finishing the ones running (again to stop at once)`,
        );
      },
    });
    // Once the grace period is over, the stages end at once; only a write
    // nobody reads (stdout into `less`, a stalled pipe) can hold the run
    // past it. A last few seconds, then it stops as a second signal would.
    abort.signal.addEventListener("abort", () => {
      const sig = interrupt.signal;
      if (sig === undefined) return;
      const timer = setTimeout(() => {
        stopNow(
          sig,
          `evalpipe: interrupted by ${sig}; the output was not taken within ${LAST_WRITE_S} s of the grace period's end (a stalled reader?): stopped`,
        );
      }, LAST_WRITE_S * 1000);
      Deno.unrefTimer(timer);
    }, { once: true });
    // Stopped before its first unit, the run wrote nothing (runSuite never
    // began the outputs): it says so in place of a summary and of a resume
    // command, as a second signal's stop does.
    const stoppedUnbegun = (sig: InterruptSignal): number => {
      say(
        `evalpipe: interrupted by ${sig} before the run's first unit${
          abort.signal.aborted ? "; running commands were stopped" : ""
        }`,
      );
      const kept = givenFiles(flags);
      if (kept.length > 0) say(nothingWritten(kept));
      return signalExitCode(sig);
    };
    const bar = await progress(outPath === undefined);
    const resumeHint = () =>
      outPath === undefined
        ? "evalpipe: to be able to resume a run, give it --out FILE"
        : passesThrough(outPath)
        ? `evalpipe: --out ${
          JSON.stringify(outPath)
        } is not a regular file: what went through it cannot be read back, so this run cannot be resumed; to be able to, give it --out FILE`
        : `evalpipe: resume with: ${
          resumeCommand(configPath!, flags, run.flags)
        }`;
    try {
      const summary = await runSuite(configPath, {
        // Each an OutFile of openFlagFile's, done with the bytes it writes.
        sink: ndjsonBatchSink(releasing({ write: (p) => out!.write(p) }), {
          stringify: scoreLine,
        }),
        ...(flags.record !== undefined || needRecord
          ? {
            record: releasing({
              write: (p) => {
                recordLast = p.at(-1);
                return record!.write(p);
              },
            }),
          }
          : {}),
        ...(flags.units !== undefined
          ? { units: releasing({ write: (p) => unitsFile!.write(p) }) }
          : {}),
        previousUnits,
        beforeWrite,
        begin,
        ...(outPath !== undefined ? { outPath } : {}),
        ...(plan !== undefined ? { resume: plan, force: flags.force } : {}),
        ...(flags.units !== undefined ? { unitsPath: flags.units } : {}),
        stop: stop.signal,
        signal: abort.signal,
        ...(flags.concurrency !== undefined
          ? { concurrency: flags.concurrency }
          : {}),
        ...(flags.timeout !== undefined ? { timeout: flags.timeout } : {}),
        ...(flags["target-timeout"] !== undefined
          ? { targetTimeout: flags["target-timeout"] }
          : {}),
        ...(flags.epochs !== undefined ? { epochs: flags.epochs } : {}),
        ...(flags["max-processes"] !== undefined
          ? { maxProcesses: flags["max-processes"] }
          : {}),
        ...(flags["no-cache"]
          ? { cacheDir: null }
          : flags["cache-dir"] !== undefined
          ? { cacheDir: flags["cache-dir"] }
          : {}),
        ...selected,
        // --- targets, matrix, baselines (issue 14) ---
        ...(flags.target !== undefined ? { target: flags.target } : {}),
        ...(flags.matrix !== undefined
          ? { matrix: flags.matrix.split(",").map((n) => n.trim()) }
          : {}),
        ...(flags["save-baseline"] !== undefined
          ? { saveBaseline: flags["save-baseline"] }
          : {}),
        ...(flags.baseline !== undefined ? { baseline: flags.baseline } : {}),
        // --- end issue 14 ---
        ...(cacheMode !== undefined ? { cacheMode } : {}),
        onInvalidRecord: (message, _example, invalid) => {
          firstInvalid ??= invalid;
          say(`evalpipe: ${message}`);
        },
        ...(bar.run !== undefined ? { progress: bar.run } : {}),
        ...(annotate
          ? {
            onScore: (score: Score) => {
              // Keyed as annotations() reads it: per target in a matrix.
              const key = score.target_name === undefined
                ? score.metric
                : `${score.target_name}: ${score.metric}`;
              if (
                (score.status === "error" || score.status === "blocked") &&
                !firstFailures.has(key)
              ) firstFailures.set(key, score);
            },
          }
          : {}),
      });
      bar.done();
      if (interrupt.signal !== undefined && !began) {
        return stoppedUnbegun(interrupt.signal);
      }
      // --- matrix, reducers, baselines (issue 14) ---
      const compare = summary.targets !== undefined ||
          (summary.epochs ?? 1) > 1 || summary.baseline !== undefined
        ? await import("../report/comparison.ts")
        : undefined;
      say(await formatSummary(summary.aggregates));
      const chosen = selecting?.describeSelection(
        selected,
        summary.selection,
        summary.complete,
      );
      if (chosen !== undefined) say(chosen);
      if (summary.targets !== undefined) {
        say("");
        say(await compare!.formatComparison(summary.comparison ?? []));
      }
      if ((summary.epochs ?? 1) > 1) {
        const cases = compare!.formatCases(
          summary.aggregates,
          summary.epochs!,
          summary.require ?? "all",
        );
        if (cases !== "") say(cases);
      }
      if (summary.savedBaseline !== undefined) {
        say(`baseline saved to ${summary.savedBaseline}`);
      }
      if (summary.baselineError !== undefined) {
        lose(
          `--save-baseline ${JSON.stringify(flags["save-baseline"])}`,
          summary.baselineError,
        );
      }
      // A subset that chose nothing evaluated nothing (a usage error, not
      // a pass; a shard may hold none of it, and merge judges the whole):
      // that is all it says, not a comparison with nothing.
      const emptySubset = selected.shard === undefined
        ? selecting?.emptySubsetLine(selected.subset, summary.selection)
        : undefined;
      if (summary.baseline !== undefined && emptySubset === undefined) {
        say(compare!.formatBaseline(summary.baseline, summary.baseline.path));
      }
      // --- end issue 14 ---
      const earlier = (plan?.scores ?? 0) -
        (plan?.budgetBlocked?.length ?? 0);
      const resumed = earlier > 0 ? ` (after ${earlier} already there)` : "";
      say(
        `${counted(summary.scores, "score")}${
          outPath !== undefined && !failed.includes(outName)
            ? ` written to ${outPath}`
            : ""
        }${resumed}`,
      );
      const cacheLine = (
        name: string,
        c: import("../run/run_suite.ts").CacheCounts,
      ) =>
        say(
          `${name} cache: ${c.hits} hit${
            c.hits === 1 ? "" : "s"
          }, ${c.misses} call${c.misses === 1 ? "" : "s"}${
            (c.stale ?? 0) > 0
              ? ` (${c.stale} stored answer${
                c.stale === 1 ? "" : "s"
              } not reused: kept by a version that read replies differently)`
              : ""
          }${c.missing > 0 ? `, ${c.missing} not in the cache (replay)` : ""}${
            c.writeErrors > 0
              ? `, ${c.writeErrors} answers could not be cached`
              : ""
          }${
            // A hit is an answer not asked for this time: say how to ask.
            c.hits > 0 ? "; --cache live calls the model again for them" : ""}`,
        );
      if (summary.cache !== undefined) cacheLine("target", summary.cache);
      if (
        summary.scorerCache !== undefined &&
        summary.scorerCache.hits + summary.scorerCache.misses +
              summary.scorerCache.missing > 0
      ) cacheLine("judge", summary.scorerCache);
      const missing = (summary.cache?.missing ?? 0) +
        (summary.scorerCache?.missing ?? 0);
      if (missing > 0) {
        say(
          `evalpipe: ${missing} ${
            missing === 1 ? "call was" : "calls were"
          } not in the cache and --cache replay makes none: their Scores are blocked or errors (cache.miss); record them with --cache auto`,
        );
      }
      const { formatSpend, hasSpend } = await import("../record/spend.ts");
      if (summary.spend !== undefined && hasSpend(summary.spend)) {
        // A resume's calls only, as its cache line counts them: said, as
        // its summary covers the earlier Scores too.
        say(
          formatSpend(summary.spend) +
            ((plan?.scores ?? 0) > 0
              ? `: this run's calls only, not those of the Scores ${outName} held before${
                flags.record !== undefined
                  ? ` (${recordName}'s cost counts both)`
                  : ""
              }`
              : ""),
        );
      }
      // Why the run fails besides its gates, for the Markdown and the
      // annotations too.
      // Loaded only for a run that has one: a plain run pays nothing.
      const failures = summary.baseline?.failed ||
          (summary.budget?.refused ?? 0) > 0
        ? (await import("../report/run_failures.ts")).runFailures(summary)
        : [];
      const overBudget = failures.find((f) => f.kind === "budget");
      if (overBudget !== undefined) say(`evalpipe: ${overBudget.message}`);
      // A --force resume without a sidecar writes one again only when the
      // unit ids show the file is this run's: said when they could not, or
      // the next plain resume's refusal would come as a surprise.
      if (
        plan !== undefined && plan.scores > 0 && plan.meta === undefined &&
        await resuming!.readMeta(outPath!).catch(() => null) == null
      ) {
        say(
          `evalpipe: ${
            JSON.stringify(resuming!.metaPath(outPath!))
          } was not written again: the Scores' unit ids cannot show that ${outName} is this run's (a part of the suite, more epochs than they show, or ids not of its examples); the next resume needs --force too`,
        );
      }
      const before = summary.budgetStart;
      if (
        summary.budget !== undefined && (plan?.scores ?? 0) > 0 &&
        before?.exact !== true
      ) {
        // What was spent before is a lower bound: said, with where it is from.
        const { usdText } = await import("../net/budget.ts");
        const usd = `$${usdText(before?.usd ?? 0)}`;
        say(
          `evalpipe: ${JSON.stringify(resuming!.metaPath(outPath!))} ${
            plan?.meta?.budget === undefined
              ? "keeps no budget (the run that wrote it did not end, or kept none)"
              : "keeps the budget a run noted as it went on, and that run did not end"
          }: ${
            before === undefined
              ? "the budget counted this run's calls only"
              : before.from === "blocked"
              ? `the budget started from the ${usd} its budget-blocked Scores say was spent, at least`
              : before.from === "files"
              ? `the budget started from the ${usd} the calls ${outName}${
                flags.units !== undefined ? ` and ${unitsName}` : ""
              } record cost, at least`
              : `the budget started from the ${usd} it last noted, at least`
          }`,
        );
      }
      for (const { scorer, lines } of summary.surplusLines ?? []) {
        saySurplusLines(scorer, lines);
      }
      if (reports && !htmlLost && recordPath !== undefined) {
        const input = {
          file: recordPath,
          ...(flags.record !== undefined ? { recordPath: flags.record } : {}),
          failures,
        };
        for (
          const { output, error } of await writeReports(input, reportFiles)
        ) {
          lose(output, error);
        }
        if (stepSummary !== undefined) {
          const warning = await appendStepSummary(input, stepSummary);
          if (warning !== undefined) say(`evalpipe: ${warning}`);
        }
      }
      if (flags.html !== undefined && !htmlLost && recordPath !== undefined) {
        const htmlName = `--html ${JSON.stringify(flags.html)}`;
        try {
          await writeRunReport(recordPath, flags.html);
          say(`evalpipe: HTML report written to ${flags.html}`);
        } catch (error) {
          // A pipe whose reader went away (`--html /dev/stdout | head`) took
          // what it wanted: no error, and not said to be written.
          if (!(error instanceof Deno.errors.BrokenPipe)) {
            if (exitCodeOf(error) === undefined) throw error;
            lose(htmlName, error as Error);
          }
        }
      }
      const sig = interrupt.signal;
      if (sig !== undefined) {
        say(
          `evalpipe: interrupted by ${sig}; ${
            abort.signal.aborted ? "running commands were stopped, " : ""
          }the run is incomplete`,
        );
        say(resumeHint());
        return signalExitCode(sig);
      }
      // A shard's gates hold over part of the suite: merge checks them on
      // the whole, and a shard that exits 1 would be retried by its engine.
      // A run that evaluated nothing failed its gates only for that, which
      // its one line says.
      const gateFailures = selected.shard !== undefined ||
          emptySubset !== undefined
        ? []
        : summary.gateFailures;
      if (selected.shard !== undefined && summary.gateFailures.length > 0) {
        say(
          "evalpipe: the gates are checked on the merged run (evalpipe merge), not on a shard",
        );
      }
      const invalid = firstInvalid === undefined ? undefined : {
        count: summary.invalidRecords,
        first: firstInvalid,
      };
      // The annotations say what the lines say (a metric the invalid cases
      // left unmeasured is a dataset to fix).
      let annotated = gateFailures;
      if (gateFailures.length > 0) {
        const { gateLine, invalidCasesText } = await import(
          "../report/gate_lines.ts"
        );
        const text = invalidCasesText(invalid);
        for (const failure of gateFailures) say(gateLine(failure, text));
        if (annotate && text !== undefined) {
          const { unmeasuredMessage } = await import(
            "../report/_unmeasured.ts"
          );
          annotated = gateFailures.map((f) => ({
            ...f,
            message: unmeasuredMessage(f, text),
          }));
        }
      }
      // --- baselines (issue 14) ---
      // Nothing evaluated compares with nothing: said once, as that.
      if (summary.baseline?.failed && emptySubset === undefined) {
        const { formatRegression } = await import("../report/comparison.ts");
        say(formatRegression(summary.baseline, summary.baseline.path)!);
      }
      // --- end issue 14 ---
      if (emptySubset !== undefined) say(emptySubset);
      if (annotate) {
        // GitHub's runner reads workflow commands on stderr as on stdout
        // (actions/runner, ScriptHandler.cs): stdout stays data.
        const { annotations, nothingEvaluatedCommand } = await import(
          "../report/annotations.ts"
        );
        for (
          const line of annotations(
            annotated,
            summary.aggregates,
            firstFailures,
            emptySubset === undefined
              ? failures
              : failures.filter((f) => f.kind !== "regression"),
          )
        ) say(line);
        // The job fails (exit 2): the pull request's view says why.
        if (emptySubset !== undefined) {
          say(nothingEvaluatedCommand(emptySubset));
        }
      }
      if (failed.length > 0) {
        const kept = [outName, ...(flags.record ? [recordName] : [])]
          .filter((name) => !failed.includes(name));
        say(
          `evalpipe: ${failed.join(" and ")} could not be written in full${
            kept.length > 0
              ? `; ${kept.join(" and ")} has every Score`
              : summary.complete
              ? ""
              : "; the run stopped taking cases"
          }`,
        );
        return OUTPUT_EXIT_CODE;
      }
      // Shifted verdicts are bad input, as a malformed record is: before a
      // gate, whose verdict they may have made.
      if (
        summary.invalidRecords > 0 || reportRefused ||
        summary.surplusLines !== undefined || emptySubset !== undefined
      ) return 2;
      // A regression or a spent budget fails the run as a gate does; a
      // shard's, like its gates, fails the merge instead: a shard that exits
      // 1 is retried by its engine, which pays the budget again (a resume
      // starts from what the file's run spent, and is refused the blocked
      // calls again) and finds the same regression. The record and sidecar
      // keep the budget for merge, and `merge --baseline` compares the whole.
      const failing = selected.shard !== undefined ? [] : failures;
      if (failing.length < failures.length) {
        if (failures.some((f) => f.kind === "budget")) {
          say(
            "evalpipe: the budget is checked on the merged run (evalpipe merge), not on a shard",
          );
        }
        if (failures.some((f) => f.kind === "regression")) {
          say(
            "evalpipe: the baseline is checked on the merged run (evalpipe merge --baseline), not on a shard",
          );
        }
      }
      return gateFailures.length > 0 || failing.length > 0 ? 1 : 0;
    } catch (error) {
      bar.done();
      const sig = interrupt.signal;
      if (sig !== undefined && opened && !began) return stoppedUnbegun(sig);
      if (sig !== undefined) {
        say(
          `evalpipe: interrupted by ${sig}; running commands were stopped, the run is incomplete`,
        );
        say(resumeHint());
        return signalExitCode(sig);
      }
      // A reader that went away (`| head`) ends the run; stop its children too.
      if (error instanceof Deno.errors.BrokenPipe) {
        abort.abort(error);
        return 0;
      }
      const code = exitCodeOf(error);
      const kept = !opened || began || code === undefined
        ? []
        : givenFiles(flags);
      if (kept.length === 0) throw error;
      say(`evalpipe: ${(error as Error).message}`);
      say(nothingWritten(kept));
      return code!;
    } finally {
      interrupt.dispose();
      out?.close();
      record?.close();
      unitsFile?.close();
      if (tempRecord !== undefined) await Deno.remove(tempRecord);
    }
  },
});
