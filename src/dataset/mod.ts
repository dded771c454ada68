/**
 * Datasets: cases read from JSONL, JSON, YAML or CSV files, and the unit
 * records a target emits.
 *
 * @module
 */

export * from "./case.ts";
export * from "./unit.ts";
export * from "./dataset.ts";
