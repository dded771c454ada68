/**
 * `evalpipe diff A B`: two runs compared case by case.
 *
 * @module
 */

import { defineCommand } from "./command.ts";
import { say, writeStdout } from "./_output.ts";
import { readResults, type Results } from "./_results.ts";
import type { Score } from "../score/mod.ts";
import { escapeControl } from "../base/terminal.ts";
import { inputName } from "../base/place.ts";

/** The `diff` command. */
export const diff = defineCommand({
  name: "diff",
  summary: "Compare two runs case by case (paired differences)",
  usage: "A B [--fail-on-regression] | diff MATRIX_RECORD",
  description:
    `Compares two runs (RunRecords or Scores files), pairing Scores by example id
and metric (epochs averaged per example). Writes one NDJSON line per metric
on stdout (pairs, mean_a, mean_b, delta = B - A, its paired stderr, ci95
clamped to what a difference can be when the runs declare the metric's range
and ci95_unclamped, improved, regressed, newly_passing, newly_failing, only_a,
only_b, regressions) and a table on stderr. A case passes over its epochs as
its run's config requires (a record's epochs.require, or the one a Scores
file's sidecar keeps; B's when the two differ; majority when neither says),
and one that passed in A and has only error or blocked Scores in B is newly
failing. Given one matrix run (a record or Scores file of run --matrix),
compares its targets instead: one "comparison" line per metric, its cases
judged by the run's require.`,
  positionals: {
    names: ["A", "B"],
    min: 1,
    error: "diff takes two files: A (baseline) and B",
  },
  flags: {
    "fail-on-regression": {
      type: "boolean",
      help:
        "Exit 1 when a metric got significantly worse (the 95% interval of delta lies below 0), or when the runs cannot be compared (a metric with no pairs, or under half of the examples shared)",
    },
  },
  async run(flags, [pathA, pathB]) {
    // --- one matrix run: its targets compared (issue 14) ---
    if (pathB === undefined) return await compareMatrix(pathA);
    // --- end issue 14 ---
    (await import("./flags.ts")).stdinOnce(
      "diff",
      [pathA, pathB],
      ": give it as A or B",
    );
    const [a, b] = await Promise.all([readResults(pathA), readResults(pathB)]);
    await pairableByPosition(a, pathA, b, pathB);
    const [
      {
        diffLabel,
        diffScores,
        pairingOf,
        significantlyWorse,
        unfitComparison,
      },
      { formatDiff },
      { inertJson },
      { evaluatorsChanged },
    ] = await Promise.all([
      import("../diff/diff.ts"),
      import("../report/summary.ts"),
      import("../io/inert_json.ts"),
      import("../diff/_evaluators.ts"),
    ]);
    // A case passes as its run judged it (a record's `epochs.require`, a
    // Scores file's sidecar's), B's when the two disagree, as `run
    // --baseline` judges both by the run's; `majority` when neither file
    // says (Scores files without a sidecar, or an older one).
    const require = b.require ?? a.require ?? "majority";
    if (
      a.require !== undefined && b.require !== undefined &&
      a.require !== b.require
    ) {
      say(
        `evalpipe: A judges a case over its epochs by require ${a.require} and B by require ${b.require}: newly_passing and newly_failing judge both runs by B's, require ${b.require}`,
      );
    } else if (
      (a.require === undefined) !== (b.require === undefined) &&
      [a.scores, b.scores].some(severalEpochs)
    ) {
      // One side's requirement is not known: not taken in silence.
      const [said, unsaid] = a.require === undefined ? ["B", "A"] : ["A", "B"];
      say(
        `evalpipe: ${unsaid} does not say when a case passes over its epochs: newly_passing and newly_failing judge both runs by ${said}'s, require ${require}`,
      );
    }
    // The intervals clamp to the ranges the runs declare (their records,
    // their sidecars), as their aggregates do.
    const lines = diffScores(a.scores, b.scores, {
      ...(await import("../aggregate/value_ranges.ts")).valueRangeOption(
        a.value_ranges ?? a.record?.value_ranges,
        b.value_ranges ?? b.record?.value_ranges,
      ),
      require,
      // Two matrix runs compare target by target: one target's regression
      // is not averaged away by another's gain.
      byTarget: true,
    });
    await writeStdout(
      inertJson(lines.map((l) => JSON.stringify(l) + "\n").join("")),
    );
    say(await formatDiff(lines));
    // A difference may be the evaluator's: said, as run --baseline says it.
    for (const e of evaluatorsChanged(a.scores, b.scores)) {
      const versions = (list: string[]) => list.map(escapeControl).join(", ");
      say(
        `evalpipe: the evaluator of ${
          escapeControl(e.metric)
        } differs from A to B (${versions(e.a)} → ${
          versions(e.b)
        }): its cases are compared all the same, so a change may be the evaluator's`,
      );
    }
    // A case edited between the runs, its id kept: said, for its change
    // may be the case's. Only runs that kept their cases can tell.
    const [casesA, casesB] = [a, b].map((r) => r.cases ?? r.record?.units);
    if (casesA !== undefined && casesB !== undefined) {
      const { casesChanged, casesChangedText } = await import(
        "../diff/cases.ts"
      );
      // A baseline written before evalpipe kept context, metadata and
      // number text compares by what it kept: what both runs kept.
      const [keptA, keptB] = [a.casesKept ?? {}, b.casesKept ?? {}];
      const fields = keptA.fields === undefined || keptB.fields === undefined
        ? keptA.fields ?? keptB.fields
        : keptA.fields.filter((f) => keptB.fields!.includes(f));
      const changed = casesChanged(casesA, casesB, {
        fields,
        numbersAsWritten: keptA.numbersAsWritten !== false &&
          keptB.numbersAsWritten !== false,
      });
      if (changed !== undefined) {
        say(`evalpipe: ${casesChangedText(changed, "A", "B")}`);
      }
    }
    const pairing = pairingOf(a.scores, b.scores);
    if (pairing.datasets !== undefined) {
      say(
        `evalpipe: A names the dataset ${
          JSON.stringify(pairing.datasets[0])
        } and B ${
          JSON.stringify(pairing.datasets[1])
        }: examples are paired by their case id`,
      );
    }
    // What cannot be compared is no evidence of "no regression".
    const unfit = unfitComparison(a.scores, b.scores, lines);
    for (const why of unfit) say(`evalpipe: cannot compare: ${why}`);
    if (a.problems.length + b.problems.length > 0) return 2;
    if (flags["fail-on-regression"] && unfit.length > 0) return 1;
    const worse = lines.filter(significantlyWorse);
    for (const l of worse) {
      say(
        `evalpipe: ${
          escapeControl(diffLabel(l))
        } got significantly worse: delta ${l.delta!.toFixed(3)}, 95% CI [${
          l.ci95![0].toFixed(3)
        }, ${l.ci95![1].toFixed(3)}]`,
      );
    }
    return flags["fail-on-regression"] && worse.length > 0 ? 1 : 0;
  },
});

/**
 * Refuses two runs whose Scores cannot be paired: one carries no ids (and
 * was read by position) and the other does, or neither does and a metric
 * has not as many Scores in one as in the other.
 */
async function pairableByPosition(
  a: Results,
  pathA: string,
  b: Results,
  pathB: string,
): Promise<void> {
  if (a.byPosition === undefined && b.byPosition === undefined) return;
  const { InputError } = await import("../base/errors.ts");
  const [nameA, nameB] = [inputName(pathA), inputName(pathB)];
  if (a.byPosition === undefined || b.byPosition === undefined) {
    const [without, withIds] = a.byPosition ? [nameA, nameB] : [nameB, nameA];
    throw new InputError(
      `Cannot pair ${nameA} with ${nameB}: no Score in ${without} carries an example id (an older evalglass record) and those in ${withIds} do, so no example can be paired; compare it with a run read by position too`,
    );
  }
  const { positionMismatch } = await import("../evalglass/positions.ts");
  const why = positionMismatch(a.scores, b.scores);
  if (why !== undefined) {
    throw new InputError(
      `Cannot pair ${nameA} with ${nameB} by position: no Score in either carries an example id, and ${why}, so the k-th Score of one need not be the k-th example of the other`,
    );
  }
  say(
    `evalpipe: ${nameA} and ${nameB} are paired by position: the k-th Score of each metric in A with the k-th in B`,
  );
}

/** Whether Scores hold an example's several epochs (`<example_id>@<k>`). */
function severalEpochs(scores: readonly Score[]): boolean {
  return scores.some((s) =>
    s.example_id !== undefined && s.unit_id !== undefined &&
    s.unit_id.startsWith(`${s.example_id}@`)
  );
}

/** `diff MATRIX_RECORD`: the comparison of one matrix run's targets. */
async function compareMatrix(path: string): Promise<number> {
  const [file, { compareTargets, targetsOf }, { formatComparison }, {
    inertJson,
  }, { UsageError }] = await Promise.all([
    readResults(path),
    import("../diff/compare.ts"),
    import("../report/comparison.ts"),
    import("../io/inert_json.ts"),
    import("./flags.ts"),
  ]);
  const targets = targetsOf(file.scores);
  if (targets.length === 0) {
    throw new UsageError(
      `diff takes two files: A (baseline) and B; one file only when it is a matrix run (run --matrix), and ${
        inputName(path)
      } has Scores of one target`,
    );
  }
  const ranges = file.value_ranges ?? file.record?.value_ranges;
  if (file.require === undefined && severalEpochs(file.scores)) {
    // Not taken in silence: a sidecar of an evalpipe before session 23.
    say(
      `evalpipe: ${
        inputName(path)
      } does not say when a case passes over its epochs (no settings.require beside it: a Scores file written before evalpipe kept it, or without its sidecar): newly_passing and newly_failing judge each case by require majority`,
    );
  }
  const lines = compareTargets(file.scores, {
    targets,
    // As the run judged its cases; `majority` when the file does not say.
    ...(file.require !== undefined ? { require: file.require } : {}),
    ...(await import("../aggregate/value_ranges.ts")).valueRangeOption(
      ranges,
    ),
  });
  await writeStdout(
    inertJson(lines.map((l) => JSON.stringify(l) + "\n").join("")),
  );
  say(await formatComparison(lines));
  return file.problems.length > 0 ? 2 : 0;
}
