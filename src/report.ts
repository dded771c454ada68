/**
 * Reports for people: the summary table `run` prints on stderr.
 *
 * @module
 */

import type { Aggregate } from "./aggregate.ts";

function fixed(x: number | null, digits = 3): string {
  return x === null ? "–" : x.toFixed(digits);
}

function percent(x: number | null): string {
  return x === null ? "–" : `${(x * 100).toFixed(1)}%`;
}

/**
 * Formats aggregates as an aligned table: metric, mean ± half the 95%
 * interval, pass rate, coverage (aggregatable / n) and errors.
 *
 * @param aggregates The aggregates.
 * @returns The table, lines joined with `\n`, without a trailing newline.
 *
 * @example
 * ```ts
 * import { formatSummary } from "./report.ts";
 * import { Aggregator } from "./aggregate.ts";
 * import { scored } from "./score.ts";
 * const agg = new Aggregator();
 * agg.add(scored("exact_match", 1));
 * if (!formatSummary(agg.results()).includes("exact_match")) throw new Error();
 * ```
 */
export function formatSummary(aggregates: readonly Aggregate[]): string {
  const header = ["metric", "mean ± 95% CI", "pass rate", "coverage", "errors"];
  const rows = aggregates.map((a) => {
    const half = a.ci95 !== null && a.mean !== null
      ? ` ± ${fixed(a.ci95[1] - a.mean)}`
      : "";
    return [
      a.metric,
      `${fixed(a.mean)}${half}`,
      percent(a.pass_rate),
      `${percent(a.coverage)} (${a.aggregatable}/${a.n})`,
      String(a.errors),
    ];
  });
  const widths = header.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => r[i]!.length))
  );
  return [header, ...rows]
    .map((r) =>
      r.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd()
    )
    .join("\n");
}
