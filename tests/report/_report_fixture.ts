/** Runs for the HTML report's tests and benchmark: units with answers, and hostile ones. */

import type { ReportRun, ReportUnit } from "../../src/report/mod.ts";
import {
  blocked,
  errored,
  nonEvaluable,
  type Score,
  scored,
} from "../../src/score/mod.ts";

/** Payloads that would run or restyle something if treated as markup. */
export const HOSTILE: readonly string[] = [
  "<script>window.__pwned = 1; alert(1)</script>",
  '<img src=x onerror="window.__pwned = 2; alert(2)">',
  '<a href="javascript:window.__pwned = 3">click me</a> javascript:window.__pwned=3',
  "</script><script>window.__pwned = 4</script><!-- <script>",
  "\u202Eevil\u202C trailing \u2066isolate",
  '"><svg onload="window.__pwned = 5">',
  "{{constructor.constructor('window.__pwned = 6')()}}",
];

/** A run whose Scores and units a test may add to. */
export interface FixtureRun extends ReportRun {
  scores: Score[];
  units: ReportUnit[];
}

/** Options of {@linkcode makeRun}. */
export interface MakeRunOptions {
  /** Units. */
  n: number;
  /** Put a hostile payload in every field of every 7th unit. */
  hostile?: boolean;
  /** Shift verdicts (for a second run to compare with). */
  shift?: number;
  /** A run id. */
  runId?: string;
}

/**
 * A run of `n` units with two metrics: `exact_match` passes on units whose
 * index is even (shifted), `judge` scores `i % 10 / 10`; every 25th unit's
 * judge errored, every 40th unit was blocked (target error), every 50th
 * exact_match is non_evaluable. Latency is `(i * 37) % 1000`.
 */
export function makeRun(options: MakeRunOptions): FixtureRun {
  const { n, shift = 0 } = options;
  const units: ReportUnit[] = [];
  const scores: Score[] = [];
  for (let i = 1; i <= n; i++) {
    const bad = options.hostile === true && i % 7 === 0
      ? HOSTILE[(i / 7) % HOSTILE.length]!
      : undefined;
    const id = `cases.jsonl#${bad !== undefined && i % 2 === 0 ? bad : i}`;
    const ids = { example_id: id, unit_id: id };
    const failedTarget = i % 40 === 0;
    units.push({
      ...ids,
      epoch: 1,
      input: bad ?? `question ${i} about refunds`,
      expected: bad ?? `answer ${i}`,
      context: [bad ?? `policy ${i}`, "refunds take 5 days"],
      metadata: { topic: bad ?? (i % 3 === 0 ? "shipping" : "refunds") },
      output: failedTarget
        ? null
        : bad ?? `the answer is ${(i + shift) % 2 === 0 ? i : "unknown"}`,
      target: failedTarget
        ? { latency_ms: (i * 37) % 1000, error: bad ?? "HTTP 503" }
        : {
          latency_ms: (i * 37) % 1000,
          model: bad ?? "fake-model",
          usage: { prompt_tokens: 12, completion_tokens: 7 },
          cached: i % 5 === 0,
        },
    });
    if (failedTarget) {
      const why = `target error: ${bad ?? "HTTP 503"}`;
      scores.push(
        blocked("exact_match", why, { ...ids, code: "target.error" }),
      );
      scores.push(blocked("judge", why, { ...ids, code: "target.error" }));
      continue;
    }
    scores.push(
      i % 50 === 0
        ? nonEvaluable("exact_match", {
          ...ids,
          reason: "not applicable: no expected",
        })
        : scored("exact_match", (i + shift) % 2 === 0 ? 1 : 0, {
          ...ids,
          reason: bad ?? ((i + shift) % 2 === 0 ? "equal" : "differs"),
        }),
    );
    scores.push(
      i % 25 === 0
        ? errored("judge", `scorer error: ${bad ?? "timed out after 60 s"}`, {
          ...ids,
          code: "scorer.timeout",
        })
        : scored("judge", (i % 10) / 10, {
          ...ids,
          ...(bad !== undefined ? { reason: bad } : { reason: `judged ${i}` }),
        }),
    );
  }
  return {
    run_id: options.runId ?? "20261201T080000Z-aaaaaa",
    started_at: "2026-12-01T08:00:00.000Z",
    finished_at: "2026-12-01T08:01:30.000Z",
    complete: true,
    config_path: "evalpipe.yaml",
    config: {
      dataset: "cases.jsonl",
      target: {
        type: "openai",
        model: "fake-model",
        base_url: "http://user:secret@127.0.0.1:9/v1",
      },
      gates: { exact_match: { min_pass_rate: 0.4 }, judge: { max_errors: 0 } },
      epochs: 1,
      concurrency: 8,
    },
    scores,
    units,
  };
}
