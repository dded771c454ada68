/**
 * RunRecords and Scores files: what a run leaves behind, written as it goes
 * and read back.
 *
 * @module
 */

export * from "./run_record.ts";
export * from "./scores_file.ts";
