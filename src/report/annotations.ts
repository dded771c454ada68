/**
 * GitHub Actions workflow commands (`::error` and `::warning`) for a run's
 * failed gates and its errors, escaped as GitHub's toolkit escapes them.
 *
 * @module
 */

import type { Aggregate } from "../aggregate/mod.ts";
import type { GateFailure } from "../aggregate/gates.ts";
import type { Score } from "../score/mod.ts";
import type { RunFailure } from "./run_failures.ts";

/**
 * Escapes a workflow command's message: `%`, `\r` and `\n` as `%25`, `%0D`
 * and `%0A`, as GitHub documents (and `@actions/core` does).
 *
 * @param text The message.
 * @returns The escaped message.
 *
 * @example
 * ```ts
 * import { escapeCommandData } from "./annotations.ts";
 * if (escapeCommandData("100%\nok") !== "100%25%0Aok") throw new Error();
 * ```
 */
export function escapeCommandData(text: string): string {
  return text.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

/**
 * Escapes a workflow command's property value (`title=…`): as a message,
 * and `:` and `,` as `%3A` and `%2C`.
 *
 * @param text The value.
 * @returns The escaped value.
 *
 * @example
 * ```ts
 * import { escapeCommandProperty } from "./annotations.ts";
 * if (escapeCommandProperty("a:b,c") !== "a%3Ab%2Cc") throw new Error();
 * ```
 */
export function escapeCommandProperty(text: string): string {
  return escapeCommandData(text).replace(/:/g, "%3A").replace(/,/g, "%2C");
}

/** The title of the `::error` for each reason a run fails besides its gates. */
const FAILURE_TITLES: Readonly<Record<RunFailure["kind"], string>> = {
  regression: "evalpipe regression",
  budget: "evalpipe budget reached",
};

/** One workflow command line, without its line break. */
function command(kind: "error" | "warning", title: string, message: string) {
  return `::${kind} title=${escapeCommandProperty(title)}::${
    escapeCommandData(message)
  }`;
}

/**
 * What a run reports to GitHub Actions, as workflow command lines: an
 * `::error` per failed gate and per other reason the run fails (a
 * regression, a spent budget), and per metric with error or blocked Scores a
 * `::warning` that counts them and quotes the first (one line per metric, so
 * a big run does not flood the annotations GitHub keeps).
 *
 * @param gateFailures The gates that did not hold.
 * @param aggregates The run's aggregates, one per metric (in a matrix run,
 *   per target and metric: each line then names its target).
 * @param firstFailures The first error or blocked Score of each metric,
 *   keyed by metric (in a matrix run, by `<target>: <metric>`).
 * @param failures Why the run fails besides its gates (`runFailures`).
 * @returns The lines, without line breaks.
 *
 * @example
 * ```ts
 * import { annotations } from "./mod.ts";
 * import { Aggregator, checkGates } from "../aggregate/mod.ts";
 * import { errored } from "../score/mod.ts";
 * const score = errored("m", "scorer error: exit 1", { code: "scorer.exit_status", example_id: "d#1" });
 * const agg = new Aggregator();
 * agg.add(score);
 * const lines = annotations(checkGates({ m: { max_errors: 0 } }, agg.results()), agg.results(), new Map([["m", score]]));
 * if (lines[0] !== "::error title=evalpipe gate failed%3A m::m: nothing measured: 1 error of 1 Score (allow it with gates.m.allow_unmeasured: true)") throw new Error(lines[0]);
 * if (lines[1] !== "::error title=evalpipe gate failed%3A m::m: errors 1 > max_errors 0") throw new Error(lines[1]);
 * if (lines[2] !== "::warning title=evalpipe%3A m::1 error Score (first, d#1: scorer error: exit 1)") throw new Error(lines[2]);
 * ```
 */
export function annotations(
  gateFailures: readonly GateFailure[],
  aggregates: readonly Aggregate[],
  firstFailures: ReadonlyMap<string, Score>,
  failures: readonly RunFailure[] = [],
): string[] {
  const lines = [
    ...gateFailures.map((f) =>
      command(
        "error",
        `evalpipe ${f.ungated ? "nothing measured" : "gate failed"}: ${
          failureKey(f.metric, f.target_name)
        }`,
        f.message,
      )
    ),
    ...failures.map((f) => command("error", FAILURE_TITLES[f.kind], f.message)),
  ];
  for (const a of aggregates) {
    if (a.errors + a.blocked === 0) continue;
    const counts = [
      ...(a.errors > 0
        ? [`${a.errors} error ${a.errors === 1 ? "Score" : "Scores"}`]
        : []),
      ...(a.blocked > 0
        ? [`${a.blocked} blocked ${a.blocked === 1 ? "Score" : "Scores"}`]
        : []),
    ].join(", ");
    const key = failureKey(a.metric, a.target_name);
    const first = firstFailures.get(key);
    const quote = first === undefined
      ? ""
      : ` (first, ${first.unit_id ?? first.example_id ?? "?"}: ${
        first.reason ?? first.status
      })`;
    lines.push(command("warning", `evalpipe: ${key}`, counts + quote));
  }
  return lines;
}

/**
 * The `::error` for a run that evaluated nothing (a subset that chose no
 * example), quoting its stderr line without the `evalpipe: ` prefix.
 *
 * @param line The line `run` or `merge` printed.
 * @returns The workflow command, without its line break.
 *
 * @example
 * ```ts
 * import { nothingEvaluatedCommand } from "./annotations.ts";
 * const line = nothingEvaluatedCommand("evalpipe: subset --limit 0 chose none of the 2 examples: nothing was evaluated");
 * if (line !== "::error title=evalpipe nothing evaluated::subset --limit 0 chose none of the 2 examples: nothing was evaluated") throw new Error(line);
 * ```
 */
export function nothingEvaluatedCommand(line: string): string {
  return `::error title=evalpipe nothing evaluated::${
    escapeCommandData(line.replace(/^evalpipe: /, ""))
  }`;
}

/**
 * The `::error` for a run whose gates its Scores cannot decide (a partial
 * merge), quoting its stderr line without the `evalpipe: ` prefix.
 *
 * @param line The line `merge` printed.
 * @returns The workflow command, without its line break.
 *
 * @example
 * ```ts
 * import { undecidedGatesCommand } from "./annotations.ts";
 * const line = undecidedGatesCommand("evalpipe: gates undecided: m: the merged run is incomplete");
 * if (line !== "::error title=evalpipe gates undecided::gates undecided: m: the merged run is incomplete") throw new Error(line);
 * ```
 */
export function undecidedGatesCommand(line: string): string {
  return `::error title=evalpipe gates undecided::${
    escapeCommandData(line.replace(/^evalpipe: /, ""))
  }`;
}

/** A metric's name in a line, and its first failure's key. */
function failureKey(metric: string, target?: string): string {
  return target === undefined ? metric : `${target}: ${metric}`;
}
