/**
 * RunRecords and Scores files: what a run leaves behind, written as the run
 * goes and read back by every command.
 *
 * @module
 */

export type { Fingerprints, RunRecord, RunRecordHeader } from "./run_record.ts";
export {
  isRunRecord,
  parseRunRecord,
  readRunRecord,
  RunRecordError,
  RunRecordWriter,
} from "./run_record.ts";
export type { RunRecordSummary, RunRecordVisitor } from "./record_entries.ts";
export { visitRunRecord } from "./record_entries.ts";
export type { ScoresFile } from "./scores_file.ts";
export { readScoresFile, ScoresFileError } from "./scores_file.ts";
export type { SelectionTally, ShardInfo, Subset } from "./selection.ts";
export { subsetFlags } from "./selection.ts";
export type { MergedRun, MergeOptions, ShardPart } from "./merge.ts";
export { MergeError, mergeShards } from "./merge.ts";
export type { Spend, SpendSide } from "./spend.ts";
export type {
  RecordedBaseline,
  RecordedBudget,
  RecordedCaseChange,
  RecordedMetricChange,
  RunChecks,
} from "./run_checks.ts";
export { recordedBaseline, runChecksAt } from "./run_checks.ts";
export {
  formatSpend,
  hasSpend,
  isPriced,
  judgeSpendOf,
  SpendTally,
} from "./spend.ts";
