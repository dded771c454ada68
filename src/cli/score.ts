/**
 * `evalpipe score --scorer CMD ...` or `evalpipe score --config SUITE`:
 * scores unit records from stdin with subprocess scorers, or with a suite's
 * scorers.
 *
 * @module
 */

import { placeOf } from "../base/place.ts";
import { InputError } from "../base/errors.ts";
import { defineCommand } from "./command.ts";
import { stdinOnce, UsageError } from "./flags.ts";
import {
  isBrokenPipe,
  progress,
  say,
  saySurplusLines,
  stdoutIsFile,
} from "./_output.ts";
import type { Scorer } from "../scorers/scorer.ts";
import type { Unit } from "../dataset/unit.ts";
import type { Score } from "../score/mod.ts";
import { clip } from "../base/terminal.ts";

/** The `score` command. */
export const score = defineCommand({
  name: "score",
  summary:
    "Score unit records (NDJSON on stdin) with subprocess scorers or a suite's",
  usage:
    "(--scorer CMD [--scorer CMD ...] | --config SUITE.yaml) [options] [UNITS...] (or < units.ndjson)",
  description:
    `Reads unit records (NDJSON: input, output, expected?, context?, example_id?,
unit_id?, as run --units writes them) from the files named, in order (- is
stdin), or from stdin when none is, and runs each subprocess scorer
(protocol v0) on each, or with --config the scorers of a suite (built-in,
llm_judge, subprocess, persistent) as run would. Writes Scores on stdout:
units in input order, scorers in the order given.`,
  positionals: {
    names: ["[UNITS...]"],
    error: "score takes unit record files",
    files: true,
  },
  flags: {
    config: {
      type: "string",
      value: "SUITE.yaml",
      help:
        "Run the scorers of this suite (its target and dataset are not used); its concurrency and timeout apply unless given here",
    },
    scorer: {
      type: "string",
      repeatable: true,
      value: "CMD",
      help: "A scorer command, run via sh -c once per unit",
    },
    name: {
      type: "string",
      repeatable: true,
      value: "NAME",
      help: "The metric name of the scorer at the same position",
      defaultText: "the script's file name",
    },
    timeout: {
      type: "number",
      value: "SECONDS",
      help: "Each scorer run's timeout",
      defaultText: "60",
    },
    persistent: {
      type: "boolean",
      help:
        "Run each scorer as one long-lived process that reads a payload per line and writes a verdict per line (an extension of protocol v0; see the README)",
    },
    concurrency: {
      type: "integer",
      help: "Units scored at once",
      defaultText: "4; 1024 with --persistent",
    },
  },
  async run(flags, given) {
    const paths: readonly string[] = given;
    stdinOnce("score", paths);
    const cmds = flags.scorer;
    const names = flags.name;
    if (flags.config !== undefined) {
      if (cmds.length > 0 || names.length > 0 || flags.persistent) {
        throw new UsageError(
          "--config takes the suite's scorers: it goes without --scorer, --name and --persistent",
        );
      }
      // Only --config loads the config modules (and YAML): not --scorer.
      const { suiteScorers } = await import("./_suite_scorers.ts");
      const suite = await suiteScorers(flags.config, flags.timeout);
      return await scoreWith(
        suite.scorers,
        flags.concurrency ?? suite.concurrency,
        paths,
        suite.guard,
      );
    }
    if (cmds.length === 0) {
      throw new UsageError("score needs at least one --scorer CMD");
    }
    if (names.length > cmds.length) {
      throw new UsageError("There are more --name than --scorer options");
    }
    // A metric is named: an empty name would make every Score malformed.
    if (names.some((name) => name.trim() === "")) {
      throw new UsageError("--name must not be empty: it names the metric");
    }
    // Command-specific modules load with their command: no YAML, no config.
    const [
      make,
      { duplicateScorerName },
      { missingScript, scriptName },
    ] = await Promise.all([
      flags.persistent
        ? import("../scorers/persistent_scorer.ts").then((m) =>
          m.persistentScorer
        )
        : import("../scorers/subprocess_scorer.ts").then((m) =>
          m.subprocessScorer
        ),
      import("../scorers/scorer_names.ts"),
      import("../process/command.ts"),
    ]);
    const scorers: Scorer[] = cmds.map((cmd, i) => {
      // A typo in the script's path would fail every unit the same way: say
      // it once, before any work, as run does for a suite's scorer.
      const missing = missingScript(cmd, Deno.cwd());
      if (missing !== undefined) {
        throw new InputError(
          `--scorer ${JSON.stringify(clip(cmd, 60))} runs ${
            JSON.stringify(missing)
          }, which does not exist (paths resolve against the current folder)`,
        );
      }
      const name = names[i] ?? scriptName(cmd, Deno.cwd());
      if (name === undefined) {
        throw new UsageError(
          `--scorer ${
            JSON.stringify(clip(cmd, 60))
          } names no script file to take a metric name from: give it a --name`,
        );
      }
      return make(cmd, {
        name,
        // No flag raises a cap: a suite's key does, scored with --config.
        capSetting: "max_output_bytes, in a suite scored with --config,",
        ...(flags.timeout !== undefined ? { timeout: flags.timeout } : {}),
        // A persistent scorer starts while the rest of the command loads.
        ...(flags.persistent ? { startNow: true } : {}),
      });
    });
    const twice = duplicateScorerName(scorers.map((s) => s.name));
    if (twice !== undefined) {
      throw new UsageError(
        `Two scorers are named ${
          JSON.stringify(twice.name)
        }: give one a --name`,
      );
    }
    return await scoreWith(
      scorers,
      // A persistent scorer answers in order through one pipe: keep it fed.
      flags.concurrency ?? (flags.persistent ? 1024 : 4),
      paths,
    );
  },
});

/**
 * Scores the unit records of the inputs (stdin when none is named) with
 * `scorers`; Scores on stdout.
 */
async function scoreWith(
  scorers: Scorer[],
  concurrency: number,
  paths: readonly string[],
  guard?: () => TransformStream<Score[], Score[]>,
): Promise<number> {
  const [
    { readUnitBatches },
    { scoreUnitBatches },
    { ndjsonBatchSink },
    { stdoutWriter },
    { scoreLine },
    { onInterrupt, signalExitCode },
    { WrittenUnits },
    { endOfCases },
    { namedReads },
  ] = await Promise.all([
    import("../dataset/unit.ts"),
    import("../scorers/score_units.ts"),
    import("../io/ndjson.ts"),
    import("../io/stdout.ts"),
    import("../score/line.ts"),
    import("../run/interrupt.ts"),
    import("./_written_units.ts"),
    import("../scorers/_unit_path.ts"),
    import("../io/named_reads.ts"),
  ]);
  // What reached stdout, a unit at a time: the count an interrupt reports.
  const written = new WrittenUnits(stdoutWriter());
  const stopped = (sig: string, how: string) =>
    say(
      `evalpipe: interrupted by ${sig}; ${how}: ${written.units} unit${
        written.units === 1 ? "" : "s"
      } scored (their Scores are on stdout), the rest were not`,
    );
  // Stdin has no total to count: the line counts units.
  const bar = await progress(true);
  const run = bar.run;
  const start = run?.start?.bind(run);
  const controller = new AbortController();
  const interrupt = onInterrupt(controller, controller, {
    onSignal(sig, again) {
      if (!again) return;
      bar.done();
      stopped(sig, "again, stopped at once");
      Deno.exit(signalExitCode(sig));
    },
  });
  let malformed = 0;
  // Once every unit read has started, no case will come: a persistent
  // scorer's process may then see the end of its input while it answers
  // the last cases, rather than after their Scores are written.
  let read = 0;
  let started = 0;
  let inputEnded = false;
  const lastCase = () => {
    if (inputEnded && started === read) {
      inputEnded = false; // once
      for (const s of scorers) endOfCases(s);
    }
  };
  const onStart = () => {
    started++;
    start?.(1);
    lastCase();
  };
  let code: number;
  try {
    // Each input in turn, its units' ids (when they have none) and its
    // messages named after it: `units.ndjson#3`, `stdin#3`.
    const inputs = paths.length === 0 ? ["-"] : paths;
    // Files named: their reader loads (stdin alone, the usual filter, needs
    // none of it and starts faster).
    const named = paths.length === 0 ? undefined : await import("./_inputs.ts");
    await named?.checkInputs(inputs);
    // `score < u.ndjson >> u.ndjson` would score its own Scores, without end.
    if (await stdoutIsFile()) {
      const { refuseStdoutOnInput } = await import("../io/same_file.ts");
      await refuseStdoutOnInput(
        inputs.map((path) => ({ name: "the input", path })),
      );
    }
    // One unit id, one unit, across every input.
    const seen = new Map<string, string>();
    const units = async function* (): AsyncGenerator<Unit[]> {
      for (const path of inputs) {
        const source = path === "-" ? "stdin" : path;
        const batches = readUnitBatches(
          named !== undefined
            ? await named.openInput(path)
            : namedReads(Deno.stdin.readable, "-"),
          source,
          ({ line, message }) => {
            malformed++;
            say(
              `evalpipe: Malformed unit record in ${
                placeOf(path, line)
              }: ${message}`,
            );
          },
          // Named as the messages above name it: a file may be called stdin.
          { seen, place: path },
        );
        if (path !== "stdin") {
          yield* batches;
          continue;
        }
        // Its ids would be piped input's, and diff would pair the two. Said
        // once it read as units: a file that cannot be read names none.
        let noted = false;
        for await (const batch of batches) {
          if (!noted) {
            noted = true;
            say(
              'evalpipe: note: "stdin" is a file here, and its records without ids are named stdin#<line>, as piped input\'s are: give it as ./stdin for ids of its own (./stdin#<line>)',
            );
          }
          yield batch;
        }
      }
    };
    let scores: ReadableStream<Score[]> = ReadableStream.from(units())
      .pipeThrough(
        new TransformStream<Unit[], Unit[]>({
          transform(units, c) {
            read += units.length;
            c.enqueue(units);
          },
          flush() {
            inputEnded = true;
            lastCase();
          },
        }),
      )
      // The units of a read, in one batch: a stream step per read, not per
      // unit. A unit's Scores still leave together (the pool never splits
      // them), so a unit is written whole or not at all.
      .pipeThrough(scoreUnitBatches(scorers, {
        concurrency,
        signal: controller.signal,
        ...(run?.flow !== undefined ? { flow: run.flow } : {}),
        onStart,
      }));
    if (guard !== undefined) scores = scores.pipeThrough(guard());
    // score makes no target call: a unit is in flight from its scoring's
    // start until its Scores are written. No terminal, no observer.
    const counted = run === undefined
      ? undefined
      : (batch: readonly Score[], units: number) => {
        run.done?.(batch);
        run.end?.(units);
      };
    await scores
      .pipeThrough(written.counter(counted))
      .pipeTo(ndjsonBatchSink(written, { stringify: scoreLine }), {
        signal: controller.signal,
      });
    bar.done();
    code = malformed > 0 ? 2 : 0;
  } catch (error) {
    bar.done();
    const sig = interrupt.signal;
    if (sig !== undefined) {
      stopped(sig, "running scorers were stopped");
      code = signalExitCode(sig);
    } else if (isBrokenPipe(error)) {
      controller.abort(error);
      return 0;
    } else throw error;
  } finally {
    interrupt.dispose();
    await Promise.all(scorers.map((s) => s.close?.()));
  }
  // Counted up to each process's end: complete now that they are closed.
  // Shifted verdicts are bad input, as a malformed unit record is (an
  // interrupt keeps its own code).
  for (const s of scorers) {
    const lines = s.surplusLines?.() ?? 0;
    if (lines === 0) continue;
    saySurplusLines(s.name, lines);
    if (code === 0) code = 2;
  }
  return code;
}
