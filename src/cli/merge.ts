/**
 * `evalpipe merge SHARD...`: the shards of one run (`run --shard k/n`) back
 * into the run one machine would have made.
 *
 * @module
 */

import { defineCommand } from "./command.ts";
import { stdinOnce, UsageError } from "./flags.ts";
import { say, stdoutIsFile } from "./_output.ts";
import { counted } from "../base/words.ts";
import type { ShardPart } from "../record/merge.ts";
import type { Gate } from "../aggregate/gates.ts";
import type { Score } from "../score/mod.ts";
import type { RecordedBudget } from "../record/run_checks.ts";
import type { RunFailure } from "../report/run_failures.ts";

/** Reads one shard: a RunRecord, or a Scores file with its sidecar. */
async function readShard(path: string): Promise<ShardPart> {
  const [
    { isRunRecord, parseRunRecord },
    { readScoresFile },
    { readMeta, metaPath },
    { InputError },
  ] = await Promise.all([
    import("../record/run_record.ts"),
    import("../record/scores_file.ts"),
    import("../run/resume.ts"),
    import("../base/errors.ts"),
  ]);
  let record;
  if (path === "-") {
    const text = await new Response(Deno.stdin.readable).text();
    if (!isRunRecord(text)) {
      throw new InputError(
        "merge: stdin holds Scores, not a RunRecord: Scores say which shard they are only in the sidecar beside their --out file, so give that file (or the shard's --record) instead",
      );
    }
    try {
      record = parseRunRecord(text, "-");
    } catch (error) {
      // Named as every message names stdin: `stdin line 4`, unquoted.
      if (!(error instanceof Error)) throw error;
      error.message = error.message.replace('"-"', "stdin");
      throw error;
    }
  } else {
    if (path.endsWith(".meta.json")) {
      // `shard-*.json` matches `shard-1.ndjson.meta.json` too: say so.
      throw new InputError(
        `${
          JSON.stringify(path)
        } is the sidecar of a Scores file, not a shard: give merge the records (or the Scores files beside their sidecars)`,
      );
    }
    // A record is read a line at a time; a missing file is named.
    const file = await readScoresFile(path);
    if (file.record !== undefined) record = file.record;
    else {
      if (file.problems.length > 0) {
        const p = file.problems[0]!;
        throw new InputError(
          `Malformed Score in ${
            JSON.stringify(path)
          } line ${p.line}: ${p.message}`,
        );
      }
      const meta = await readMeta(path);
      if (meta === undefined || meta === null) {
        throw new InputError(
          `${JSON.stringify(path)} is a Scores file without ${
            meta === null ? "a readable" : "its"
          } sidecar ${
            JSON.stringify(metaPath(path))
          } (run --out writes it): merge cannot tell which shard it is`,
        );
      }
      return {
        name: path,
        fingerprints: meta.fingerprints,
        complete: meta.complete === true,
        scores: file.scores,
        ...(meta.settings?.shard !== undefined
          ? { shard: meta.settings.shard }
          : {}),
        ...(meta.settings?.subset !== undefined
          ? { subset: meta.settings.subset }
          : {}),
        ...(meta.selection !== undefined ? { selection: meta.selection } : {}),
        ...(meta.value_ranges !== undefined
          ? { value_ranges: meta.value_ranges }
          : {}),
        ...(meta.gates !== undefined ? { gates: meta.gates } : {}),
        ...(meta.budget !== undefined ? { budget: meta.budget } : {}),
        ...(meta.settings?.require !== undefined
          ? { require: meta.settings.require }
          : {}),
        ...(meta.settings !== undefined
          ? { epochs: meta.settings.epochs }
          : {}),
      };
    }
  }
  return {
    name: path === "-" ? "stdin" : path,
    fingerprints: record.fingerprints,
    complete: record.complete,
    scores: record.scores,
    record,
    ...(record.shard !== undefined ? { shard: record.shard } : {}),
    ...(record.subset !== undefined ? { subset: record.subset } : {}),
    ...(record.selection !== undefined ? { selection: record.selection } : {}),
    gates: (record.config as { gates?: Record<string, Gate> }).gates ?? {},
    ...(record.budget !== undefined ? { budget: record.budget } : {}),
    epochs: epochsOfConfig(record.config),
  };
}

/**
 * A temporary record file, removed when the scope that holds it ends, or
 * when SIGINT or SIGTERM ends the merge (a cancelled job): a signal exits
 * without unwinding that scope.
 */
async function temporaryRecord(): Promise<
  AsyncDisposable & { readonly path: string }
> {
  const path = await Deno.makeTempFile({
    prefix: "evalpipe-record-",
    suffix: ".json",
  });
  const handlers = (["SIGINT", "SIGTERM"] as const).map((sig) => {
    const handler = () => {
      try {
        Deno.removeSync(path);
      } catch (error) {
        // Already gone (a temp folder cleaned meanwhile): nothing to remove.
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
      // The exit code the signal would have given.
      Deno.exit(sig === "SIGINT" ? 130 : 143);
    };
    Deno.addSignalListener(sig, handler);
    return [sig, handler] as const;
  });
  return {
    path,
    async [Symbol.asyncDispose]() {
      try {
        await Deno.remove(path);
      } catch (error) {
        // Already gone (a temp folder cleaned meanwhile): nothing to remove.
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      } finally {
        for (const [sig, handler] of handlers) {
          Deno.removeSignalListener(sig, handler);
        }
      }
    },
  };
}

/** How many epochs a record's resolved config ran (1 when it sets none). */
function epochsOfConfig(config: unknown): number {
  const epochs = (config as { epochs?: number | { n?: number } }).epochs;
  return (typeof epochs === "number" ? epochs : epochs?.n) ?? 1;
}

/** The `merge` command. */
export const merge = defineCommand({
  name: "merge",
  summary: "Merge the shards of a run (run --shard k/n) into one",
  usage:
    "SHARD... [--record FILE] [--allow-partial] [--save-baseline NAME] [--baseline NAME]",
  description:
    `Merges the shards of one run, given as their RunRecords or their Scores
files (each with the .meta.json sidecar run --out writes beside it; - reads a
record on stdin). Writes the merged Scores on stdout, in the order one
unsharded run writes them, the merged RunRecord to --record (equal to the
unsharded run's but for its times and run id; its budget the shards' summed),
and a summary on stderr; the config's gates are checked as run checks them
(exit 1), and a budget a shard ran out of fails as run's does (exit 1).
--save-baseline and --baseline keep or compare the merged run as run's flags
do (a bare name is .evalpipe/baselines/NAME.json beside the config the shards
ran). Under GitHub Actions it annotates the merged run and appends its
Markdown to the step summary, as run does. Refuses shards of
different configs or datasets, a missing shard, one given twice, or one that
did not finish.`,
  positionals: {
    names: ["SHARD..."],
    error: "merge takes the shards' records or Scores files",
    files: true,
  },
  flags: {
    record: {
      type: "string",
      value: "FILE",
      help:
        "Write the merged RunRecord to FILE (every shard must then be a record)",
      dash: { refused: "merge's stdout is for the merged Scores" },
    },
    "allow-partial": {
      type: "boolean",
      help:
        "Merge even when shards are missing or did not finish, saying what is missing; the merged run is marked incomplete and its gates undecided (exit 2)",
    },
    "save-baseline": {
      type: "string",
      value: "NAME",
      help:
        "Keep the merged run's Scores and outputs as a baseline, as run --save-baseline does (every shard must be a record)",
    },
    baseline: {
      type: "string",
      value: "NAME",
      help:
        "Compare the merged run with a baseline, as run --baseline does; exit 1 on a case that passed there and fails now, or a metric significantly worse",
    },
    annotations: {
      type: "boolean",
      help:
        "Print GitHub Actions workflow commands on stderr, as run does: ::error for each failed gate, a regression against --baseline, a spent budget and a subset that chose nothing, ::warning per metric with error or blocked Scores",
      defaultText: "on when GITHUB_ACTIONS=true",
    },
    "no-annotations": {
      type: "boolean",
      help: "Print no workflow commands, even under GitHub Actions",
    },
  },
  async run(flags, given) {
    const paths: readonly string[] = given;
    if (paths.length === 0) {
      throw new UsageError("merge takes the shards' records or Scores files");
    }
    stdinOnce("merge", paths);
    if (flags.annotations && flags["no-annotations"]) {
      throw new UsageError("--annotations and --no-annotations disagree");
    }
    const annotate = !flags["no-annotations"] &&
      (flags.annotations || Deno.env.get("GITHUB_ACTIONS") === "true");
    const stepSummary = Deno.env.get("GITHUB_STEP_SUMMARY") || undefined;
    // The inputs no output of the merge may be written over.
    const shards = paths.filter((p) => p !== "-").map((path) => ({
      name: "a shard",
      path,
    }));
    if (flags.record !== undefined) {
      // Read whole before --record is opened, but a shard is still not to
      // be overwritten by the merge.
      const { refuseSameFile } = await import("../io/same_file.ts");
      // The merged Scores go to stdout: `--record /dev/stdout > f` would
      // write the two over each other.
      const scores = await stdoutIsFile()
        ? [{ name: "the Scores on stdout", path: "/dev/stdout" }]
        : [];
      await refuseSameFile(
        [...scores, { name: "--record", path: flags.record }],
        shards,
      );
    }
    const parts: ShardPart[] = [];
    for (const path of paths) parts.push(await readShard(path));
    // Baselines: where they are, and the one to compare with, read before
    // anything is written (a missing baseline is a mistake to hear first).
    const baselines = flags["save-baseline"] !== undefined ||
        flags.baseline !== undefined
      ? await import("../run/baseline.ts")
      : undefined;
    const configPath = parts.find((p) => p.record !== undefined)?.record
      ?.config_path;
    // Found as run finds them (a path as given, a name beside the config
    // the shards ran, which only their records name).
    const configFolder = async (flag: string, nameOrPath: string) => {
      if (nameOrPath.includes("/") || nameOrPath.endsWith(".json")) return ".";
      if (configPath === undefined) {
        throw new UsageError(
          `${flag} ${
            JSON.stringify(nameOrPath)
          }: a baseline name is found beside the shards' config, which only their records name: give the shards' records, or a path to the baseline`,
        );
      }
      const { folderOf } = await import("../config/config.ts");
      return folderOf(configPath);
    };
    const savePath = flags["save-baseline"] === undefined
      ? undefined
      : baselines!.baselinePath(
        flags["save-baseline"],
        await configFolder("--save-baseline", flags["save-baseline"]),
      );
    if (savePath !== undefined) {
      const [{ refuseSameFile }, { refuseFolder }] = await Promise.all([
        import("../io/same_file.ts"),
        import("./_reports.ts"),
      ]);
      await refuseFolder("baseline", savePath);
      await refuseSameFile(
        [
          { name: "--save-baseline", path: savePath },
          ...(flags.record !== undefined
            ? [{ name: "--record", path: flags.record }]
            : []),
        ],
        shards,
      );
      const scoresOnly = parts.filter((p) => p.record === undefined);
      if (scoresOnly.length > 0) {
        throw new UsageError(
          `--save-baseline needs every shard's RunRecord, which holds the outputs a baseline keeps: ${
            scoresOnly.map((p) => JSON.stringify(p.name)).join(", ")
          } ${
            scoresOnly.length === 1 ? "is a Scores file" : "are Scores files"
          }`,
        );
      }
    }
    const comparePath = flags.baseline === undefined
      ? undefined
      : await (await import("../run/_baseline_to_read.ts")).baselineToRead(
        flags.baseline,
        await configFolder("--baseline", flags.baseline),
      );
    const baseline = comparePath === undefined
      ? undefined
      : await baselines!.readBaseline(comparePath);
    const [
      { mergeShards },
      { newRunId, RunRecordWriter },
      { openOut },
      { scoreLine },
      { formatSummary },
      { checkGates },
      { TextWriter },
      { stdoutWriter },
    ] = await Promise.all([
      import("../record/merge.ts"),
      import("../record/run_record.ts"),
      import("../io/out_file.ts"),
      import("../score/line.ts"),
      import("../report/summary.ts"),
      import("../aggregate/gates.ts"),
      import("../io/text_writer.ts"),
      import("../io/stdout.ts"),
    ]);
    const merged = mergeShards(parts, { allowPartial: flags["allow-partial"] });
    if (flags.record !== undefined && merged.header === undefined) {
      const scoresOnly = parts.filter((p) => p.record === undefined);
      throw new UsageError(
        `--record needs every shard's RunRecord: ${
          scoresOnly.map((p) => JSON.stringify(p.name)).join(", ")
        } ${scoresOnly.length === 1 ? "is a Scores file" : "are Scores files"}`,
      );
    }
    for (const m of merged.missing) say(`evalpipe: partial merge: ${m}`);
    // The merged run as one run's baseline keeps it, and compares it: the
    // comparison goes in the merged record too, as run's does.
    const settings = baselines?.baselineSettings(merged.header?.config ?? {});
    const unsaid = parts.filter((p) =>
      p.record === undefined && p.require === undefined
    );
    // Scores files: as their sidecars say the shards judged their cases;
    // records: as their config says, `all` when it sets none (as run
    // judges it). Only an older sidecar's silence falls to the baseline's.
    const require = settings?.require ?? merged.require ??
      (unsaid.length === 0 ? "all" : undefined);
    if (baseline !== undefined && unsaid.length > 0) {
      // Not taken in silence: an older evalpipe's sidecar does not say.
      say(
        `evalpipe: the sidecars of ${
          unsaid.map((p) => JSON.stringify(p.name)).join(", ")
        } do not say when a case passes over its epochs (written before evalpipe kept settings.require): the merged run is compared with the baseline by ${
          require !== undefined
            ? `the other shards' require ${require}`
            : `the baseline's require ${baseline.file.require}`
        }`,
      );
    }
    const compared = baseline === undefined ? undefined : baselines!
      .compareWithBaseline(
        baseline.scores,
        merged.scores,
        require ?? baseline.file.require,
        (await import("../aggregate/value_ranges.ts")).valueRangeOption(
          merged.value_ranges,
        ),
      );
    // The comparison as the merged record keeps it and the annotations say it.
    const recorded = compared === undefined
      ? undefined
      : (await import("../record/run_checks.ts")).recordedBaseline(
        comparePath!,
        compared,
      );
    // Under GitHub Actions the step summary is the merged record's Markdown,
    // as run's is its record's: without --record, a temporary record.
    // Removed however the merge ends: a failure further on (a baseline that
    // cannot be written, a full disk) left it in the temp folder.
    await using temp = stepSummary !== undefined &&
        flags.record === undefined && merged.header !== undefined
      ? await temporaryRecord()
      : undefined;
    const recordPath = flags.record ?? temp?.path;
    if (recordPath !== undefined && merged.header !== undefined) {
      const out = await openOut(recordPath, {
        name: flags.record !== undefined
          ? `--record ${JSON.stringify(flags.record)}`
          : "the record behind the step summary",
      });
      try {
        const started = new Date(merged.header.started_at);
        const writer = new RunRecordWriter(out, {
          ...merged.header,
          run_id: newRunId(
            Number.isNaN(started.getTime()) ? new Date() : started,
          ),
        });
        // What the model calls cost, summed again over every shard's units
        // and Scores, as the unsharded run sums them.
        const { hasSpend, SpendTally } = await import("../record/spend.ts");
        const tally = new SpendTally();
        for (const [unit, scores] of merged.entries) {
          if (unit !== undefined) tally.addUnit(unit);
          for (const score of scores) tally.addScore(score);
          const pending = unit === undefined
            ? writer.addScores(scores)
            : writer.addUnit(unit, scores);
          if (pending !== undefined) await pending;
        }
        const spend = tally.result();
        await writer.finish(
          merged.aggregates,
          merged.complete,
          merged.selection,
          hasSpend(spend) ? spend : undefined,
          {
            ...(recorded === undefined ? {} : { baseline: recorded }),
            ...(merged.budget !== undefined ? { budget: merged.budget } : {}),
          },
        );
      } finally {
        out.close();
      }
    }
    const stdout = new TextWriter(stdoutWriter());
    try {
      let text = "";
      for (const score of merged.scores) {
        text += scoreLine(score) + "\n";
        if (text.length > 65536) {
          const pending = stdout.write(text);
          text = "";
          if (pending !== undefined) await pending;
        }
      }
      stdout.write(text);
      await stdout.flush();
    } catch (error) {
      // A reader that went away (`| head`) got what it wanted.
      if (!(error instanceof Deno.errors.BrokenPipe)) throw error;
    }
    say(await formatSummary(merged.aggregates));
    const n = merged.shards;
    say(
      `merged ${n} ${n === 1 ? "shard" : "shards"}: ${
        counted(merged.scores.length, "score")
      }${merged.complete ? "" : " (partial: the merged run is incomplete)"}${
        flags.record !== undefined ? `; record written to ${flags.record}` : ""
      }`,
    );
    // The shards ran one config (their fingerprints say so): its gates are
    // in each record, and in each sidecar but those of an older evalpipe.
    const gates = parts.find((p) => p.gates !== undefined)?.gates;
    const unknown = parts.filter((p) => p.gates === undefined);
    if (unknown.length > 0 && gates === undefined) {
      say(
        `evalpipe: the config's gates are not checked: the sidecars of ${
          unknown.map((p) => JSON.stringify(p.name)).join(", ")
        } do not keep them (written by an older evalpipe); merge the shards' records, or run them again`,
      );
    }
    // A subset that chose nothing evaluated nothing, as `run` says: its
    // gates failed only for that, which its one line says.
    const subset = parts[0]?.subset;
    const emptySubset = subset !== undefined && merged.complete
      ? (await import("./_selection.ts")).emptySubsetLine(
        subset,
        merged.selection,
      )
      : undefined;
    // A partial merge measured part of the examples: its gates are
    // undecided (as its evalglass export blocks them), not passed or failed
    // on that part. Missing input decides, as a malformed record does
    // (exit 2). A metric no gate names that measured nothing still fails.
    const { undecidedGates } = await import("../record/_undecided_gates.ts");
    const undecided = undecidedGates({
      complete: merged.complete,
      config: { gates: gates ?? {} },
    });
    const undecidedLine = undecided.length === 0
      ? undefined
      : `evalpipe: gates undecided: ${
        undecided.join(", ")
      }: the merged run is incomplete (a partial merge), and part of its examples decides no gate; merge every shard to check them`;
    const failures = emptySubset !== undefined
      ? []
      : checkGates(gates ?? {}, merged.aggregates).filter((f) =>
        undecided.length === 0 || f.ungated === true
      );
    if (failures.length > 0) {
      // Worded as run words them: a metric no gate names is no gate failed.
      const [{ gateLine }, { invalidCasesOfScores }] = await Promise.all([
        import("../report/gate_lines.ts"),
        import("../report/_unmeasured.ts"),
      ]);
      // As run says it: a metric the invalid cases left unmeasured is a
      // dataset to fix, not a gate to set.
      const invalid = failures.some((f) => f.unmeasured !== undefined)
        ? invalidCasesOfScores(merged.scores)
        : undefined;
      for (const f of failures) say(gateLine(f, invalid));
    }
    // Each shard kept its own budget (in its record or its sidecar): a
    // merged run whose shards refused calls fails as the run whose budget
    // ran out does.
    const budgeted = parts.filter((p) => p.budget !== undefined);
    if (budgeted.length > 0 && merged.budget === undefined) {
      const without = parts.filter((p) => p.budget === undefined);
      say(
        `evalpipe: the merged run keeps no budget: ${
          without.map((p) => JSON.stringify(p.name)).join(", ")
        } ${
          without.length === 1 ? "keeps" : "keep"
        } none (a record or a sidecar of an older evalpipe), so what the shards spent together is not known`,
      );
    }
    // A shard that refused calls blocked their Scores whatever the others
    // kept: its budget ran out, as a run's does.
    const spentOut: Array<{ budget: RecordedBudget; name?: string }> =
      merged.budget !== undefined
        ? merged.budget.refused > 0 ? [{ budget: merged.budget }] : []
        : budgeted.filter((p) => p.budget!.refused > 0).map((p) => ({
          budget: p.budget!,
          name: p.name,
        }));
    // Each said once, on stderr and as an annotation alike: every shard
    // that ran out when their sum is not known.
    const budgetFailures: RunFailure[] = [];
    if (spentOut.length > 0) {
      const { budgetText } = await import("../report/run_failures.ts");
      for (const { budget, name } of spentOut) {
        const where = name !== undefined ? `${JSON.stringify(name)}: ` : "";
        budgetFailures.push({
          kind: "budget",
          message: `${where}budget reached: ${budgetText(budget)}`,
        });
      }
    }
    for (const f of budgetFailures) say(`evalpipe: ${f.message}`);
    // A shard compared with a baseline did not fail for it: the merged run
    // is what `--baseline` checks, and it is not checked unasked.
    const shardBaseline = parts.find((p) => p.record?.baseline !== undefined)
      ?.record?.baseline?.path;
    if (flags.baseline === undefined && shardBaseline !== undefined) {
      say(
        `evalpipe: the shards were compared with the baseline ${
          JSON.stringify(shardBaseline)
        }, which only merge --baseline checks: the merged run is not compared with it`,
      );
    }
    let regressed = false;
    if (baselines !== undefined) {
      if (savePath !== undefined) {
        const collector = new baselines.BaselineCollector();
        for (const [unit, scores] of merged.entries) {
          if (unit !== undefined) collector.addUnit(unit);
          for (const score of scores) collector.addScore(score);
        }
        await baselines.writeBaseline(
          savePath,
          collector.file({ ...settings!, require: settings!.require ?? "all" }),
        );
        say(`baseline saved to ${savePath}`);
      }
      if (compared !== undefined) {
        const { formatBaseline, formatRegression } = await import(
          "../report/comparison.ts"
        );
        // Nothing evaluated compares with nothing: said once, as that.
        if (emptySubset === undefined) {
          say(formatBaseline(compared, comparePath!));
          const line = formatRegression(compared, comparePath!);
          if (line !== undefined) {
            say(line);
            regressed = true;
          }
        }
      }
    }
    if (emptySubset !== undefined) say(emptySubset);
    if (undecidedLine !== undefined) say(undecidedLine);
    // Under GitHub Actions, what run says there: the merge is what gates a
    // sharded run.
    if (stepSummary !== undefined && recordPath !== undefined) {
      const { appendStepSummary } = await import("./_reports.ts");
      const warning = await appendStepSummary(
        {
          file: recordPath,
          ...(flags.record !== undefined ? { recordPath: flags.record } : {}),
        },
        stepSummary,
      );
      if (warning !== undefined) say(`evalpipe: ${warning}`);
    }
    if (annotate) {
      const [
        { annotations, nothingEvaluatedCommand, undecidedGatesCommand },
        { runFailures },
      ] = await Promise.all([
        import("../report/annotations.ts"),
        import("../report/run_failures.ts"),
      ]);
      const firstFailures = new Map<string, Score>();
      for (const score of merged.scores) {
        if (score.status !== "error" && score.status !== "blocked") continue;
        const key = score.target_name === undefined
          ? score.metric
          : `${score.target_name}: ${score.metric}`;
        if (!firstFailures.has(key)) firstFailures.set(key, score);
      }
      const lines = annotations(
        failures,
        merged.aggregates,
        firstFailures,
        [
          ...runFailures(
            recorded !== undefined && emptySubset === undefined
              ? { baseline: recorded }
              : {},
          ),
          ...budgetFailures,
        ],
      );
      for (const line of lines) say(line);
      if (emptySubset !== undefined) {
        say(nothingEvaluatedCommand(emptySubset));
      }
      if (undecidedLine !== undefined) {
        say(undecidedGatesCommand(undecidedLine));
      }
    }
    if (emptySubset !== undefined || undecidedLine !== undefined) return 2;
    return failures.length > 0 || regressed || spentOut.length > 0 ? 1 : 0;
  },
});
