/**
 * Why a finished run fails other than by a gate: a regression against its
 * baseline, a spent budget. `run` exits 1 for either, so the Markdown's
 * headline and the GitHub annotations say which, as they do for a gate.
 *
 * @module
 */

import type { RecordedBaseline, RecordedBudget } from "../record/run_checks.ts";
import { escapeControl } from "../base/terminal.ts";
import { usdText } from "../net/budget.ts";

/** The most newly failing cases a regression's message names. */
const CASES_NAMED = 5;

/**
 * A reason a run fails besides its gates.
 *
 * @example
 * ```ts
 * import type { RunFailure } from "./mod.ts";
 * const failure: RunFailure = { kind: "budget", message: "budget reached: $2.0031 spent of budget_usd $2" };
 * if (!failure.message.startsWith("budget")) throw new Error();
 * ```
 */
export interface RunFailure {
  /** Which: a regression against the baseline, or a budget that refused calls. */
  kind: "regression" | "budget";
  /** What happened, in one line: which cases and metrics, what was spent. */
  message: string;
  /**
   * The names `message` quotes as the user wrote them (the baseline's path,
   * example ids), so that a report can leave each as written where it marks
   * text (the Markdown's mentions and issue references).
   */
  names?: readonly string[] | undefined;
}

/**
 * The reasons a finished run fails besides its gates: a regression against
 * its baseline (the newly failing cases, the first few named, and the
 * metrics significantly worse) or a run that cannot be compared with it,
 * then a budget that refused calls.
 *
 * @param summary The run's baseline comparison and budget, as `runSuite`
 *   gives them or its RunRecord keeps them.
 * @returns The reasons, none when the run fails only by its gates or not at all.
 *
 * @example
 * ```ts
 * import { runFailures } from "./mod.ts";
 * const [failure] = runFailures({ budget: { limit_usd: 2, spent_usd: 2.0031, refused: 41 } });
 * if (failure?.message !== "budget reached: $2.0031 spent of budget_usd $2; 41 calls were not made, their Scores are blocked (budget.exhausted)") {
 *   throw new Error(failure?.message);
 * }
 * ```
 */
export function runFailures(
  summary: {
    readonly baseline?: Pick<
      RecordedBaseline,
      "path" | "failed" | "newly_failing" | "worse" | "unfit"
    >;
    readonly budget?: RecordedBudget;
  },
): RunFailure[] {
  const failures: RunFailure[] = [];
  const baseline = summary.baseline;
  if (baseline?.failed) {
    const failing = baseline.newly_failing;
    const path = JSON.stringify(baseline.path);
    const cases = failing.slice(0, CASES_NAMED).map((c) =>
      escapeControl(c.case)
    );
    const named = failing.slice(0, CASES_NAMED).map((c, i) =>
      `${cases[i]} on ${escapeControl(c.metric)}`
    );
    const more = failing.length - named.length;
    const why = [
      ...(failing.length > 0
        ? [
          `${failing.length} newly failing (${named.join(", ")}${
            more > 0 ? ` and ${more} more` : ""
          })`,
        ]
        : []),
      ...baseline.worse.map((m) => `${escapeControl(m)} significantly worse`),
    ];
    if (why.length > 0) {
      failures.push({
        kind: "regression",
        message: `regressed against baseline ${path}: ${why.join(", ")}`,
        names: [path, ...cases],
      });
    }
    // A comparison that cannot be made is no evidence of "no regression".
    for (const reason of baseline.unfit) {
      failures.push({
        kind: "regression",
        message: `cannot compare with baseline ${path}: ${
          escapeControl(reason)
        }`,
        names: [path],
      });
    }
  }
  const budget = summary.budget;
  if (budget !== undefined && budget.refused > 0) {
    failures.push({
      kind: "budget",
      message: `budget reached: ${budgetText(budget)}`,
    });
  }
  return failures;
}

/**
 * What a run spent of its budget, and the calls it refused when it ran out:
 * the words of the run's budget line, its Markdown and its HTML report.
 *
 * @param budget The budget and what was spent.
 * @returns One line.
 *
 * @example
 * ```ts
 * import { budgetText } from "./run_failures.ts";
 * if (budgetText({ limit_usd: 2, spent_usd: 0.5, refused: 0 }) !== "$0.5 spent of budget_usd $2") throw new Error();
 * ```
 */
export function budgetText(budget: RecordedBudget): string {
  const { limit_usd, spent_usd, refused } = budget;
  return `$${usdText(spent_usd)} spent of budget_usd $${usdText(limit_usd)}${
    refused === 0
      ? ""
      : `; ${refused} ${
        refused === 1 ? "call was" : "calls were"
      } not made, their Scores are blocked (budget.exhausted)`
  }`;
}
