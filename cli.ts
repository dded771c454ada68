/**
 * The evalpipe command line: `run`, `score` and `aggregate`.
 *
 * Stdout carries data only (NDJSON); everything for people goes to stderr.
 * Exit codes: 0 success, 1 the run finished but a gate failed, 2 usage,
 * config or input error.
 *
 * @module
 */

import {
  Aggregator,
  looksLikeAggregate,
  parseAggregate,
} from "./src/aggregate/mod.ts";
import { parseArgs, UsageError } from "./src/cli/args.ts";
import { LineStream } from "./src/io/line_stream.ts";
import {
  type ByteWriter,
  ndjsonBatchSink,
  NdjsonParseStream,
  ndjsonSink,
} from "./src/io/ndjson.ts";
import { formatDiff, formatSummary } from "./src/report/summary.ts";
import type { ScoresFile } from "./src/record/scores_file.ts";
import { TextWriter } from "./src/io/text_writer.ts";
import { escapeControl, groupByCall, renderByCall } from "./src/report/view.ts";
import { parseScore, scoreLine } from "./src/score/mod.ts";
import { scoreUnits } from "./src/scorers/score_units.ts";
import type { Scorer } from "./src/scorers/scorer.ts";
import { readUnits } from "./src/dataset/unit.ts";
import { scriptName } from "./src/process/command.ts";

const HELP: Record<string, string> = {
  main: `evalpipe: evaluate LLM systems as streams

Usage: evalpipe <command> [options]

Commands:
  run CONFIG.yaml   Run a suite; Scores (NDJSON) on stdout, a summary on stderr
  score             Score unit records (NDJSON on stdin) with subprocess scorers
  aggregate         Aggregate Scores (NDJSON on stdin) per metric
  view FILE         Show a RunRecord or Scores file: a summary, or --by-call
  diff A B          Compare two runs case by case (paired differences)

Run "evalpipe <command> --help" for a command's options.
Exit codes: 0 success, 1 a gate failed, 2 usage, config or input error.`,
  run: `Usage: evalpipe run CONFIG.yaml [options]

Runs the suite the config describes: dataset -> target -> scorers. Writes one
Score per unit and metric as NDJSON on stdout (or to --out) as they are made,
and a summary table on stderr.

Options:
  --out FILE          Write Scores to FILE instead of stdout
  --resume            Continue the run whose Scores are in --out: units
                      already scored are skipped, the rest appended
  --force             With --resume: continue even if the config or dataset
                      changed since the file was started
  --max-processes N   The most child processes at once (default 64)
  --grace SECONDS     After SIGINT/SIGTERM, how long running units may finish
                      before they are killed (default 10)
  --record FILE       Write the RunRecord (config, fingerprints, Scores,
                      aggregates) to FILE, as the run goes
  --concurrency N     Units in flight at once (default: the config's, else 8)
  --epochs N          Run each example N times (default: the config's, else 1)
  --no-cache          Call network targets even when a cached answer exists
  --cache-dir DIR     The target cache's folder (default .evalpipe/cache)
  --timeout SECONDS   Every scorer's timeout (default: the config's, else 60)
  --help              Show this help`,
  score:
    `Usage: evalpipe score --scorer CMD [--scorer CMD ...] [options] < units.ndjson

Reads unit records (NDJSON: input, output, expected?, context?, example_id?,
unit_id?) on stdin and runs each subprocess scorer (protocol v0) on each.
Writes Scores on stdout: units in input order, scorers in the order given.

Options:
  --scorer CMD        A scorer command, run via sh -c once per unit (repeatable)
  --name NAME         The metric name of the scorer at the same position
                      (repeatable; default: the script's file name)
  --timeout SECONDS   Each scorer run's timeout (default 60)
  --persistent        Run each scorer as one long-lived process that reads a
                      payload per line and writes a verdict per line (an
                      extension of protocol v0; see the README)
  --concurrency N     Units scored at once (default 4; 64 with --persistent)
  --help              Show this help`,
  aggregate: `Usage: evalpipe aggregate < scores.ndjson

Reads Scores (NDJSON) on stdin and writes one Aggregate per metric, sorted by
metric: counts by status, mean over scored and valid Scores, its standard
error and 95% interval, pass rate and its Wilson interval. Scores are reduced
per example first (epochs averaged), which expects the Scores of one example
to be adjacent, as evalpipe writes them. Aggregate lines in the input (from
shards split between examples) are merged exactly.

Options:
  --grouped           Gather each example's Scores wherever they stand in the
                      input (memory grows with the number of examples)
  --help              Show this help`,
  view: `Usage: evalpipe view RECORD_OR_SCORES [--by-call] [--json] [--width N]

Shows a RunRecord (--record) or an NDJSON file of Scores. Without --by-call,
the summary table per metric. With --by-call, the Scores grouped by example
and unit, each metric's status, value, verdict and reason side by side,
failing units first. Control characters in model output are escaped.

Options:
  --by-call           Group Scores by the unit they measured
  --json              With --by-call: one JSON object per unit (NDJSON)
  --width N           Columns to fit (default: the terminal's, else 120)
  --help              Show this help`,
  diff: `Usage: evalpipe diff A B [--fail-on-regression]

Compares two runs (RunRecords or Scores files), pairing Scores by example id
and metric (epochs averaged per example). Writes one NDJSON line per metric
on stdout (pairs, mean_a, mean_b, delta = B - A, its paired stderr and ci95,
improved, regressed, newly_passing, newly_failing, only_a, only_b,
regressions) and a table on stderr.

Options:
  --fail-on-regression  Exit 1 when a metric got significantly worse (the
                        95% interval of delta lies below 0)
  --help                Show this help`,
};

const encoder = new TextEncoder();

/** Writes a message for people on stderr; text from cases cannot drive the terminal. */
function say(message: string): void {
  const safe = message.split("\n").map(escapeControl).join("\n");
  Deno.stderr.writeSync(encoder.encode(`${safe}\n`));
}

function isBrokenPipe(error: unknown): boolean {
  return error instanceof Deno.errors.BrokenPipe;
}

/** Opens the destination of Scores: a file, or stdout. */
async function openOut(
  path: string | undefined,
  append = false,
): Promise<ByteWriter & { close(): void }> {
  if (path === undefined) {
    const stdout = stdoutWriter();
    return { write: (p) => stdout.write(p), close: () => {} };
  }
  try {
    const file = await Deno.open(
      path,
      append
        ? { append: true, create: true }
        : { write: true, create: true, truncate: true },
    );
    // A file never waits for a reader: written at once, like stdout to one.
    return {
      write: (p) => Promise.resolve(file.writeSync(p)),
      close: () => file.close(),
    };
  } catch (error) {
    const { osErrorText } = await import("./src/base/errors.ts");
    throw new UsageError(
      `Cannot write ${JSON.stringify(path)}: ${osErrorText(error)}`,
    );
  }
}

/**
 * The first SIGINT or SIGTERM stops the intake (`stop`) and, after `graceMs`,
 * aborts what still runs (`abort`, which kills every child process group).
 * A second signal aborts at once and exits, leaving no child behind.
 */
function onInterrupt(
  stop: AbortController,
  abort: AbortController,
  graceMs: number,
): { dispose(): void; signal(): Deno.Signal | undefined } {
  let received: Deno.Signal | undefined;
  let grace: ReturnType<typeof setTimeout> | undefined;
  const handlers = (["SIGINT", "SIGTERM"] as const).map((sig) => {
    const handler = () => {
      const code = sig === "SIGINT" ? 130 : 143;
      if (received !== undefined) {
        abort.abort(new Error(`Interrupted twice by ${sig}`));
        say(`evalpipe: interrupted again by ${sig}: stopped at once`);
        Deno.exit(code);
      }
      received = sig;
      if (stop !== abort) {
        say(
          `evalpipe: ${sig}: taking no new cases, finishing the ones running (again to stop at once)`,
        );
      }
      stop.abort(new Error(`Interrupted by ${sig}`));
      grace = setTimeout(
        () => abort.abort(new Error(`Interrupted by ${sig}`)),
        graceMs,
      );
    };
    Deno.addSignalListener(sig, handler);
    return [sig, handler] as const;
  });
  return {
    dispose: () => {
      if (grace !== undefined) clearTimeout(grace);
      handlers.forEach(([sig, handler]) =>
        Deno.removeSignalListener(sig, handler)
      );
    },
    signal: () => received,
  };
}

function progress(): { tick(): void; done(): void } {
  if (!Deno.stderr.isTerminal()) return { tick() {}, done() {} };
  let count = 0;
  let last = 0;
  return {
    tick() {
      count++;
      const now = performance.now();
      if (now - last < 100) return;
      last = now;
      Deno.stderr.writeSync(encoder.encode(`\r\x1b[K${count} scores…`));
    },
    done() {
      Deno.stderr.writeSync(encoder.encode("\r\x1b[K"));
    },
  };
}

async function run(args: string[]): Promise<number> {
  const { flags, positionals } = parseArgs(args, {
    out: { type: "string" },
    record: { type: "string" },
    resume: { type: "boolean" },
    force: { type: "boolean" },
    concurrency: { type: "number" },
    epochs: { type: "number" },
    "no-cache": { type: "boolean" },
    "cache-dir": { type: "string" },
    timeout: { type: "number" },
    grace: { type: "number" },
    "max-processes": { type: "number" },
    help: { type: "boolean" },
  });
  if (flags.help) return help("run");
  if (positionals.length !== 1) {
    throw new UsageError("run takes one config file");
  }
  const configPath = positionals[0]!;
  const outPath = flags.out as string | undefined;
  if (flags.resume && outPath === undefined) {
    throw new UsageError("--resume continues the Scores file given with --out");
  }
  if (flags.force && !flags.resume) {
    throw new UsageError("--force goes with --resume");
  }
  // Command-specific modules load with their command: `score` needs no YAML.
  const [{ runSuite }, { prepareResume }] = await Promise.all([
    import("./src/run/run_suite.ts"),
    import("./src/run/resume.ts"),
  ]);
  const plan = flags.resume ? await prepareResume(outPath!) : undefined;
  if (plan?.dropped !== undefined) {
    say(
      `evalpipe: dropped a torn last line of ${
        JSON.stringify(outPath)
      } (${plan.dropped.length} characters)`,
    );
  }
  const out = await openOut(outPath, plan !== undefined);
  const record = flags.record === undefined
    ? undefined
    : await openOut(flags.record as string);
  const stop = new AbortController();
  const abort = new AbortController();
  const interrupt = onInterrupt(
    stop,
    abort,
    ((flags.grace as number | undefined) ?? 10) * 1000,
  );
  const bar = progress();
  const resumeHint = () =>
    outPath !== undefined
      ? `evalpipe: resume with: evalpipe run ${configPath} --out ${outPath} --resume`
      : "evalpipe: to be able to resume a run, give it --out FILE";
  try {
    const summary = await runSuite(configPath, {
      sink: ndjsonBatchSink(out, { stringify: scoreLine }),
      ...(record !== undefined ? { record } : {}),
      ...(outPath !== undefined ? { outPath } : {}),
      ...(plan !== undefined
        ? { resume: plan, force: flags.force === true }
        : {}),
      stop: stop.signal,
      signal: abort.signal,
      ...(flags.concurrency !== undefined
        ? { concurrency: Math.floor(flags.concurrency as number) }
        : {}),
      ...(flags.timeout !== undefined
        ? { timeout: flags.timeout as number }
        : {}),
      ...(flags.epochs !== undefined
        ? { epochs: Math.floor(flags.epochs as number) }
        : {}),
      ...(flags["max-processes"] !== undefined
        ? { maxProcesses: Math.floor(flags["max-processes"] as number) }
        : {}),
      ...(flags["no-cache"]
        ? { cacheDir: null }
        : flags["cache-dir"] !== undefined
        ? { cacheDir: flags["cache-dir"] as string }
        : {}),
      onInvalidRecord: (message) => say(`evalpipe: ${message}`),
      onScore: () => bar.tick(),
    });
    bar.done();
    say(formatSummary(summary.aggregates));
    const resumed = plan !== undefined && plan.scores > 0
      ? ` (after ${plan.scores} already there)`
      : "";
    say(
      `${summary.scores} scores${
        outPath !== undefined ? ` written to ${outPath}` : ""
      }${resumed}`,
    );
    if (summary.cache !== undefined) {
      const c = summary.cache;
      say(
        `target cache: ${c.hits} hits, ${c.misses} calls${
          c.writeErrors > 0
            ? `, ${c.writeErrors} answers could not be cached`
            : ""
        }`,
      );
    }
    const sig = interrupt.signal();
    if (sig !== undefined) {
      say(`evalpipe: interrupted by ${sig}; the run is incomplete`);
      say(resumeHint());
      return sig === "SIGINT" ? 130 : 143;
    }
    for (const failure of summary.gateFailures) {
      say(`evalpipe: gate failed: ${failure.message}`);
    }
    if (summary.invalidRecords > 0) return 2;
    return summary.gateFailures.length > 0 ? 1 : 0;
  } catch (error) {
    bar.done();
    const sig = interrupt.signal();
    if (sig !== undefined) {
      say(
        `evalpipe: interrupted by ${sig}; running commands were stopped, the run is incomplete`,
      );
      say(resumeHint());
      return sig === "SIGINT" ? 130 : 143;
    }
    // A reader that went away (`| head`) ends the run; stop its children too.
    if (isBrokenPipe(error)) {
      abort.abort(error);
      return 0;
    }
    throw error;
  } finally {
    interrupt.dispose();
    out.close();
    record?.close();
  }
}

async function score(args: string[]): Promise<number> {
  const { flags } = parseArgs(args, {
    scorer: { type: "string", multiple: true },
    persistent: { type: "boolean" },
    name: { type: "string", multiple: true },
    timeout: { type: "number" },
    concurrency: { type: "number" },
    help: { type: "boolean" },
  });
  if (flags.help) return help("score");
  const cmds = (flags.scorer ?? []) as string[];
  const names = (flags.name ?? []) as string[];
  if (cmds.length === 0) {
    throw new UsageError("score needs at least one --scorer CMD");
  }
  if (names.length > cmds.length) {
    throw new UsageError("There are more --name than --scorer options");
  }
  const seen = new Set<string>();
  // Command-specific modules load with their command: start-up is paid by every run.
  const make = flags.persistent
    ? (await import("./src/scorers/persistent_scorer.ts")).persistentScorer
    : (await import("./src/scorers/subprocess_scorer.ts")).subprocessScorer;
  const scorers: Scorer[] = cmds.map((cmd, i) => {
    const name = names[i] ?? scriptName(cmd, Deno.cwd());
    if (name === undefined) {
      throw new UsageError(
        `--scorer ${
          JSON.stringify(cmd.length > 60 ? `${cmd.slice(0, 60)}…` : cmd)
        } names no script file to take a metric name from: give it a --name`,
      );
    }
    const scorer = make(cmd, {
      name,
      ...(flags.timeout !== undefined
        ? { timeout: flags.timeout as number }
        : {}),
    });
    if (seen.has(scorer.name)) {
      throw new UsageError(
        `Two scorers are named ${
          JSON.stringify(scorer.name)
        }: give one a --name`,
      );
    }
    seen.add(scorer.name);
    return scorer;
  });
  const controller = new AbortController();
  const interrupt = onInterrupt(controller, controller, 0);
  let malformed = 0;
  try {
    await readUnits(Deno.stdin.readable, "stdin", ({ line, message }) => {
      malformed++;
      say(`evalpipe: Malformed unit record on stdin line ${line}: ${message}`);
    })
      .pipeThrough(scoreUnits(scorers, {
        // A persistent scorer answers in order through one pipe: keep it fed.
        concurrency: Math.floor(
          (flags.concurrency as number | undefined) ??
            (flags.persistent ? 64 : 4),
        ),
        signal: controller.signal,
      }))
      .pipeTo(ndjsonSink(stdoutWriter(), { stringify: scoreLine }), {
        signal: controller.signal,
      });
    return malformed > 0 ? 2 : 0;
  } catch (error) {
    const sig = interrupt.signal();
    if (sig !== undefined) return sig === "SIGINT" ? 130 : 143;
    if (isBrokenPipe(error)) {
      controller.abort(error);
      return 0;
    }
    throw error;
  } finally {
    interrupt.dispose();
    await Promise.all(scorers.map((s) => s.close?.()));
  }
}

/**
 * Stdout, written at once when it is a file or `/dev/null`, which never wait
 * for a reader (an asynchronous write costs a round trip to Deno's thread
 * pool, about a tenth of a trivial scorer's run); asynchronously when it is a
 * pipe, a terminal or a socket, so that a reader that stalls cannot hold up
 * the timeouts and signals of the runs under way.
 */
function stdoutWriter(): ByteWriter {
  let info: Deno.FileInfo | undefined;
  try {
    info = Deno.statSync("/proc/self/fd/1");
  } catch (error) {
    // No /proc, or no permission to look at it: asynchronous writes are
    // right for every kind of stdout.
    if (
      !(error instanceof Deno.errors.NotFound ||
        error instanceof Deno.errors.NotCapable ||
        error instanceof Deno.errors.PermissionDenied)
    ) throw error;
  }
  const neverWaits = info !== undefined &&
    (info.isFile || (info.isCharDevice === true && !Deno.stdout.isTerminal()));
  if (!neverWaits) return Deno.stdout;
  return { write: (p) => Promise.resolve(Deno.stdout.writeSync(p)) };
}

async function aggregateCommand(args: string[]): Promise<number> {
  const { flags } = parseArgs(args, {
    grouped: { type: "boolean" },
    help: { type: "boolean" },
  });
  if (flags.help) return help("aggregate");
  const aggregator = new Aggregator({ grouped: flags.grouped === true });
  let malformed = 0;
  const report = (line: number, message: string) => {
    malformed++;
    say(`evalpipe: Malformed Score on stdin line ${line}: ${message}`);
  };
  await Deno.stdin.readable
    .pipeThrough(new LineStream())
    .pipeThrough(new NdjsonParseStream())
    .pipeTo(
      new WritableStream({
        write(parsed) {
          if (parsed.error !== undefined) {
            return report(parsed.line, parsed.error);
          }
          try {
            if (looksLikeAggregate(parsed.value)) {
              aggregator.mergeAggregate(parseAggregate(parsed.value));
            } else aggregator.add(parseScore(parsed.value));
          } catch (error) {
            if (!(error instanceof SyntaxError)) throw error;
            report(parsed.line, error.message);
          }
        },
      }),
    );
  try {
    await ReadableStream.from(aggregator.results()).pipeTo(
      ndjsonSink(stdoutWriter()),
    );
  } catch (error) {
    if (!isBrokenPipe(error)) throw error;
  }
  return malformed > 0 ? 2 : 0;
}

async function readResults(path: string): Promise<ScoresFile> {
  const { readScoresFile } = await import("./src/record/scores_file.ts");
  const file = await readScoresFile(path);
  for (const p of file.problems) {
    say(
      `evalpipe: Malformed Score in ${
        JSON.stringify(path)
      } line ${p.line}: ${p.message}`,
    );
  }
  if (file.record !== undefined && !file.record.complete) {
    say(
      `evalpipe: ${
        JSON.stringify(path)
      } is the record of a run that did not finish`,
    );
  }
  return file;
}

async function writeStdout(text: string): Promise<void> {
  try {
    const w = new TextWriter(stdoutWriter());
    w.write(text);
    await w.flush();
  } catch (error) {
    if (!isBrokenPipe(error)) throw error;
  }
}

async function view(args: string[]): Promise<number> {
  const { flags, positionals } = parseArgs(args, {
    "by-call": { type: "boolean" },
    json: { type: "boolean" },
    width: { type: "number" },
    help: { type: "boolean" },
  });
  if (flags.help) return help("view");
  if (positionals.length !== 1) {
    throw new UsageError("view takes one RunRecord or Scores file");
  }
  const file = await readResults(positionals[0]!);
  const status = file.problems.length > 0 ? 2 : 0;
  if (!flags["by-call"]) {
    // A whole file is in memory anyway: gather each example wherever it stands.
    const aggregator = new Aggregator({ grouped: true });
    for (const s of file.scores) aggregator.add(s);
    await writeStdout(`${formatSummary(aggregator.results())}\n`);
    return status;
  }
  const units = groupByCall(file.scores);
  if (flags.json) {
    await writeStdout(units.map((u) => JSON.stringify(u) + "\n").join(""));
    return status;
  }
  const width = (flags.width as number | undefined) ??
    (Deno.stdout.isTerminal() ? Deno.consoleSize().columns : 120);
  const failed = units.filter((u) => u.failed).length;
  const lines = renderByCall(units, Math.max(20, Math.floor(width)));
  await writeStdout(
    `${lines.join("\n")}\n\n${units.length} units, ${failed} with a failure\n`,
  );
  return status;
}

async function diff(args: string[]): Promise<number> {
  const { flags, positionals } = parseArgs(args, {
    "fail-on-regression": { type: "boolean" },
    help: { type: "boolean" },
  });
  if (flags.help) return help("diff");
  if (positionals.length !== 2) {
    throw new UsageError("diff takes two files: A (baseline) and B");
  }
  const [a, b] = await Promise.all(positionals.map(readResults));
  const { diffScores, significantlyWorse } = await import("./src/diff/diff.ts");
  const lines = diffScores(a!.scores, b!.scores);
  await writeStdout(lines.map((l) => JSON.stringify(l) + "\n").join(""));
  say(formatDiff(lines));
  if (a!.problems.length + b!.problems.length > 0) return 2;
  const worse = lines.filter(significantlyWorse);
  for (const l of worse) {
    say(
      `evalpipe: ${l.metric} got significantly worse: delta ${
        l.delta!.toFixed(3)
      }, 95% CI [${l.ci95![0].toFixed(3)}, ${l.ci95![1].toFixed(3)}]`,
    );
  }
  return flags["fail-on-regression"] && worse.length > 0 ? 1 : 0;
}

/** Whether `error` is about the user's input: a message, exit code 2. */
async function isInputError(error: unknown): Promise<boolean> {
  // Loaded here, on failure only: each command loads what it needs.
  const [config, dataset, scoresFile, runRecord, resume] = await Promise.all([
    import("./src/config/config.ts"),
    import("./src/dataset/dataset.ts"),
    import("./src/record/scores_file.ts"),
    import("./src/record/run_record.ts"),
    import("./src/run/resume.ts"),
  ]);
  return error instanceof config.ConfigError ||
    error instanceof dataset.DatasetError ||
    error instanceof scoresFile.ScoresFileError ||
    error instanceof runRecord.RunRecordError ||
    error instanceof resume.ResumeError;
}

function help(topic: string): number {
  Deno.stdout.writeSync(encoder.encode(`${HELP[topic]}\n`));
  return 0;
}

/**
 * Runs the command line.
 *
 * @param args The arguments, without the program name.
 * @returns The exit code.
 */
export async function main(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  try {
    switch (command) {
      case "run":
        return await run(rest);
      case "score":
        return await score(rest);
      case "aggregate":
        return await aggregateCommand(rest);
      case "view":
        return await view(rest);
      case "diff":
        return await diff(rest);
      case "help":
      case "--help":
      case "-h":
        return help("main");
      case undefined:
        say(HELP.main!);
        return 2;
      default:
        throw new UsageError(`Unknown command ${JSON.stringify(command)}`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      say(`evalpipe: ${error.message}`);
      say(
        `Run "evalpipe ${
          command !== undefined && command in HELP ? `${command} ` : ""
        }--help" for usage.`,
      );
      return 2;
    }
    if (await isInputError(error)) {
      say(`evalpipe: ${(error as Error).message}`);
      return 2;
    }
    throw error;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
