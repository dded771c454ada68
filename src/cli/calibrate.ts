/**
 * `evalpipe calibrate CONFIG`: how well a suite's judges agree with people,
 * on cases that carry a recorded output and a human label.
 *
 * @module
 */

import { defineCommand } from "./command.ts";
import { UsageError } from "./flags.ts";
import { isBrokenPipe, say, saySurplusLines, writeStdout } from "./_output.ts";
import type { CalibrationLine, HumanLabel } from "../aggregate/calibration.ts";
import { counted } from "../base/words.ts";

/** The `calibrate` command. */
export const calibrate = defineCommand({
  name: "calibrate",
  summary:
    "Measure a suite's judges against human labels: agreement and Cohen's kappa",
  usage: "CONFIG.yaml [options]",
  description:
    `Runs the suite's scorers on each case's recorded "output" (the target is not
called) and compares each Score's verdict (passed: "pass", else "fail") with
the case's human label in metadata.human: "pass" or "fail" (or true or false)
for every scorer, or an object of them by metric ({"faithfulness": "pass"}).
Only scored, valid Scores of labelled cases are compared. Writes one NDJSON
line per metric on stdout: n, the percent agreement with its Wilson 95%
interval, Cohen's kappa with a 95% interval (kappa +- 1.96 large-sample
standard errors, Fleiss, Cohen and Everitt 1969), each label's counts,
precision and recall, the confusion table (rows human, columns judge), the
cases left out and why, and the disagreements; a table on stderr. A case
without an output or with an unreadable label is reported on stderr, and the
command exits 2 at the end.`,
  positionals: {
    names: ["CONFIG.yaml"],
    error: "calibrate takes one config file",
  },
  flags: {
    metric: {
      type: "string",
      repeatable: true,
      value: "NAME",
      help: "Calibrate only the scorer of this metric",
      defaultText: "every scorer of the suite",
    },
    concurrency: {
      type: "integer",
      help: "Cases scored at once",
      defaultText: "the config's, else 8",
    },
    timeout: {
      type: "number",
      value: "SECONDS",
      help: "Every scorer's timeout, over the config's",
    },
  },
  async run(flags, [configPath]) {
    const [
      { suiteScorers },
      { folderOf },
      { loadDataset },
      { replayTarget },
      { runTarget },
      { scoreUnits },
      { Calibration, humanLabel, HumanLabelError },
      { inertJson },
      { onInterrupt, signalExitCode },
    ] = await Promise.all([
      import("./_suite_scorers.ts"),
      import("../config/config.ts"),
      import("../dataset/dataset.ts"),
      import("../targets/replay_target.ts"),
      import("../targets/target.ts"),
      import("../scorers/score_units.ts"),
      import("../aggregate/calibration.ts"),
      import("../io/inert_json.ts"),
      import("../run/interrupt.ts"),
    ]);
    const suite = await suiteScorers(configPath, flags.timeout);
    let scorers = suite.scorers;
    if (flags.metric.length > 0) {
      const names = scorers.map((s) => s.name);
      const unknown = flags.metric.find((m) => !names.includes(m));
      if (unknown !== undefined) {
        await Promise.all(scorers.map((s) => s.close?.()));
        throw new UsageError(
          `--metric ${JSON.stringify(unknown)} names no scorer of ${
            JSON.stringify(configPath)
          }; its metrics are ${names.map((n) => JSON.stringify(n)).join(", ")}`,
        );
      }
      const chosen = scorers.filter((s) => flags.metric.includes(s.name));
      await Promise.all(
        scorers.filter((s) => !chosen.includes(s)).map((s) => s.close?.()),
      );
      scorers = chosen;
    }
    const config = suite.config;
    // One dataset of labelled outputs (`datasets:` is for suites that run).
    const dataset = config.dataset;
    if (dataset === undefined) {
      throw new UsageError(
        'calibrate reads one dataset of labelled outputs: give the suite "dataset:", not "datasets:"',
      );
    }
    const fromStdin = dataset === "-";
    const path = fromStdin || dataset.startsWith("/")
      ? dataset
      : `${folderOf(configPath)}/${dataset}`;
    const metrics = scorers.map((s) => s.name);
    const calibration = new Calibration(metrics);
    // Each example's label per metric, until its Scores are in.
    const labels = new Map<string, Map<string, HumanLabel | undefined>>();
    let problems = 0;
    const problem = (message: string) => {
      problems++;
      say(`evalpipe: ${message}`);
    };
    const controller = new AbortController();
    const interrupt = onInterrupt(controller, controller, {
      onSignal(sig, again) {
        if (!again) return;
        say(`evalpipe: interrupted again by ${sig}: stopped at once`);
        Deno.exit(signalExitCode(sig));
      },
    });
    try {
      const examples = await loadDataset(path, {
        name: fromStdin ? "stdin" : dataset,
      });
      await examples
        .pipeThrough(
          new TransformStream({
            transform(example, out) {
              const id = example.example_id;
              if (example.case === null) {
                problem(
                  `Invalid case ${JSON.stringify(id)}: ${
                    example.invalid ?? ""
                  }`,
                );
              } else if (typeof example.case.output !== "string") {
                problem(
                  `Case ${
                    JSON.stringify(id)
                  } has no "output": calibrate scores recorded outputs`,
                );
              } else {
                const human = example.case.metadata?.human;
                const byMetric = new Map<string, HumanLabel | undefined>();
                // One label for every metric is one problem, said once.
                const said = new Set<string>();
                for (const m of metrics) {
                  try {
                    byMetric.set(m, humanLabel(human, m));
                  } catch (error) {
                    if (!(error instanceof HumanLabelError)) throw error;
                    if (said.has(error.message)) continue;
                    said.add(error.message);
                    problem(
                      `Case ${JSON.stringify(id)}: ${error.message}`,
                    );
                  }
                }
                labels.set(id, byMetric);
              }
              out.enqueue(example);
            },
          }),
        )
        .pipeThrough(runTarget(replayTarget()))
        .pipeThrough(
          scoreUnits(scorers, {
            concurrency: flags.concurrency ?? suite.concurrency,
            signal: controller.signal,
          }),
        )
        .pipeTo(
          new WritableStream({
            write(score) {
              const id = score.example_id ?? "";
              calibration.add(score, labels.get(id)?.get(score.metric));
            },
          }),
          { signal: controller.signal },
        );
    } catch (error) {
      const sig = interrupt.signal;
      if (sig !== undefined) return signalExitCode(sig);
      throw error;
    } finally {
      interrupt.dispose();
      await Promise.all(scorers.map((s) => s.close?.()));
    }
    // Shifted verdicts pair each label with another case's: bad input, as
    // for run and score. Counted up to each process's end: closed now.
    const shifted = scorers.flatMap((s) => {
      const n = s.surplusLines?.() ?? 0;
      return n > 0 ? [[s.name, n] as const] : [];
    });
    const lines = calibration.results();
    try {
      await writeStdout(
        inertJson(lines.map((l) => JSON.stringify(l) + "\n").join("")),
      );
    } catch (error) {
      if (!isBrokenPipe(error)) throw error;
    }
    say(formatCalibration(lines));
    for (const [name, n] of shifted) {
      problems++;
      saySurplusLines(name, n);
    }
    if (lines.every((l) => l.n === 0)) {
      problem(
        'No case has both a measured Score and a human label (metadata.human: "pass" or "fail")',
      );
    }
    return problems > 0 ? 2 : 0;
  },
});

/** A share as `0.700`, or `-` when there is none. */
function share(x: number | null): string {
  return x === null ? "-" : x.toFixed(3);
}

function interval(ci: readonly [number, number] | null): string {
  return ci === null ? "" : ` [${ci[0].toFixed(3)}, ${ci[1].toFixed(3)}]`;
}

/** The calibration as a table for people. */
function formatCalibration(lines: readonly CalibrationLine[]): string {
  const out: string[] = [];
  for (const l of lines) {
    const left = [
      l.unlabelled > 0 ? `${l.unlabelled} unlabelled` : "",
      l.errors > 0 ? counted(l.errors, "error") : "",
      l.blocked > 0 ? `${l.blocked} blocked` : "",
      l.invalid > 0 ? `${l.invalid} invalid` : "",
      l.not_applicable > 0 ? `${l.not_applicable} not applicable` : "",
      l.skipped > 0 ? `${l.skipped} skipped` : "",
    ].filter((s) => s !== "");
    out.push(
      `${l.metric}: n ${l.n}, agreement ${share(l.agreement)}${
        interval(l.agreement_ci95)
      }, kappa ${share(l.kappa)}${interval(l.kappa_ci95)}${
        left.length > 0 ? ` (left out: ${left.join(", ")})` : ""
      }`,
    );
    const width = Math.max(5, ...l.labels.map((x) => x.length));
    const cell = (s: string) => s.padStart(width);
    out.push(
      `  ${"human \\ judge".padEnd(13)} ${l.labels.map(cell).join(" ")}`,
    );
    l.labels.forEach((label, i) => {
      out.push(
        `  ${label.padEnd(13)} ${
          l.confusion[i]!.map((c) => cell(String(c))).join(" ")
        }`,
      );
    });
    for (const p of l.per_label) {
      out.push(
        `  ${p.label}: human ${p.human}, judge ${p.judge}, both ${p.both}, precision ${
          share(p.precision)
        }, recall ${share(p.recall)}`,
      );
    }
  }
  return out.join("\n");
}
