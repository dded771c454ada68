/**
 * A RunRecord's header as a run writes it, for the tests that write records
 * of their own: one place to change when the header gains a field.
 */

import type { RunRecordHeader } from "../../src/record/mod.ts";

/** A header of run `r1` with these scorers' versions and this config. */
export function recordHeader(
  { config = {}, scorers = {} }: {
    config?: Record<string, unknown>;
    scorers?: Record<string, string>;
  } = {},
): RunRecordHeader {
  return {
    run_id: "r1",
    started_at: "2026-12-01T08:00:00.000Z",
    config_path: "evalpipe.yaml",
    config,
    fingerprints: {
      config: "sha256:aa",
      dataset: null,
      target: "sha256:cc",
      scorers,
    },
  };
}
