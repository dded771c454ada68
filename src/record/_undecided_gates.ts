// Which of a run's gates its Scores cannot decide. One place decides it, so
// that merge's exit code and lines, the Markdown (and step summary) and the
// evalglass export give one verdict.

import type { RunRecordSummary } from "./run_record.ts";

/**
 * The metrics whose gates a record cannot decide, sorted: every gated metric
 * of a run that did not finish (cut short, a `merge --allow-partial`), which
 * measured part of its examples, so that a gate over them would pass or fail
 * on data the whole run may contradict; none for a run that finished. A
 * shard decides none of its gates either, but because its merge does (its
 * gates are checked there): it has none undecided here.
 *
 * @param record Whether the run finished, which shard it is, its config.
 * @returns The gated metrics left undecided, empty when every gate is decided.
 */
export function undecidedGates(
  record: Pick<RunRecordSummary, "complete" | "shard" | "config">,
): string[] {
  if (record.complete || record.shard !== undefined) return [];
  const gates = record.config.gates;
  if (typeof gates !== "object" || gates === null || Array.isArray(gates)) {
    return [];
  }
  return Object.entries(gates)
    .filter(([, gate]) => typeof gate === "object" && gate !== null)
    .map(([metric]) => metric)
    .sort();
}
