// The metrics that two runs measured with other evaluators (a judge's prompt,
// a scorer's options or script, evalpipe's reading of them changed): `diff`
// pairs their cases all the same and says so, as `run --baseline` does, for
// a difference may be the evaluator's and not the system's.

import type { Score } from "../score/mod.ts";

/** A metric measured by other evaluators in B than in A. */
export interface EvaluatorsChanged {
  /** The metric. */
  metric: string;
  /** Its `evaluator_version`s in A, sorted. */
  a: string[];
  /** Its `evaluator_version`s in B, sorted. */
  b: string[];
}

function versionsOf(scores: readonly Score[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const s of scores) {
    let versions = out.get(s.metric);
    if (versions === undefined) out.set(s.metric, versions = new Set());
    versions.add(s.evaluator_version);
  }
  return out;
}

/**
 * The metrics of both runs whose Scores carry other evaluator versions in B
 * than in A, sorted by metric. A metric in one run only is not among them:
 * it has no pair, which `unfitComparison` says.
 */
export function evaluatorsChanged(
  a: readonly Score[],
  b: readonly Score[],
): EvaluatorsChanged[] {
  const before = versionsOf(a);
  const changes: EvaluatorsChanged[] = [];
  for (const [metric, versions] of versionsOf(b)) {
    const was = before.get(metric);
    if (
      was === undefined ||
      (was.size === versions.size && [...versions].every((v) => was.has(v)))
    ) continue;
    changes.push({ metric, a: [...was].sort(), b: [...versions].sort() });
  }
  return changes.sort((x, y) =>
    x.metric < y.metric ? -1 : x.metric > y.metric ? 1 : 0
  );
}
