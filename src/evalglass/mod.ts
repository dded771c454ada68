/**
 * Exchanging results with evalglass (`EvalGlass/evalglass-core`): an
 * evalpipe RunRecord written as evalglass's result store writes a run
 * (`runrecord.json`, `scorecard.json`, `manifest.json`, `run.complete`), and
 * evalglass's `runrecord.json` read back as evalpipe Scores.
 *
 * @example Export a run and read its Scores back
 * ```ts
 * import { readEvalglassRunRecord, writeEvalglassRun } from "./mod.ts";
 * import { parseRunRecord } from "../record/mod.ts";
 * const record = parseRunRecord(JSON.stringify({
 *   evalpipe_run_record: 1, run_id: "r1", started_at: "2026-12-01T08:00:00.000Z", config_path: "evalpipe.yaml", config: {},
 *   fingerprints: { config: "sha256:aa", dataset: null, target: "sha256:cc", scorers: { m: "m@1" } },
 *   scores: [{ metric: "m", status: "scored", validity: "valid", value: 0.75, passed: true, evaluator_version: "m@1",
 *     example_id: "d#1", unit_id: "d#1", diagnostics: [], evidence_refs: [] }],
 *   aggregates: [], finished_at: "2026-12-01T08:00:01.000Z", complete: true,
 * }), "run.json");
 * const dir = await Deno.makeTempDir();
 * const { runrecord } = await writeEvalglassRun(dir, record);
 * const back = await readEvalglassRunRecord(runrecord);
 * await Deno.remove(dir, { recursive: true });
 * if (back?.scores[0]?.value !== 0.75 || back.run_id !== "r1") throw new Error("unexpected");
 * ```
 *
 * @module
 */

export type { EvalglassRunRecord, EvalglassScore } from "./types.ts";
export type { EvalglassExport } from "./export.ts";
export { EVALGLASS_DIMENSIONS, evalglassScore, toEvalglass } from "./export.ts";
export type { EvalglassRunPaths } from "./store.ts";
export {
  evalglassRunDirName,
  writeEvalglassRun,
  writeEvalglassRunFile,
} from "./store.ts";
export type { EvalglassImport } from "./import.ts";
export {
  fromEvalglass,
  isEvalglassRunRecord,
  readEvalglassRunRecord,
} from "./import.ts";
export type { EvalglassLinesOptions } from "./lines.ts";
export { evalglassLines } from "./lines.ts";
export { positionIds, positionMismatch } from "./positions.ts";
