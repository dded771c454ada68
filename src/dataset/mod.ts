/**
 * Datasets: cases read from JSONL, JSON, YAML or CSV files (or NDJSON on
 * stdin), and the unit records a target emits and `score` reads.
 *
 * @example Load a JSONL dataset as examples
 * ```ts
 * import { loadDataset } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/cases.jsonl`, '{"input":"2+2?","expected":"4"}\n');
 * const examples = await Array.fromAsync(await loadDataset(`${dir}/cases.jsonl`, { name: "cases.jsonl" }));
 * if (examples[0]?.example_id !== "cases.jsonl#1") throw new Error("unexpected");
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @module
 */

export type { Case, Example } from "./case.ts";
export { CaseError, parseCase } from "./case.ts";
export { expectedJson } from "../io/_expected_text.ts";
export type {
  MalformedLine,
  ReadUnitsOptions,
  TargetInfo,
  ToolCall,
  Unit,
} from "./unit.ts";
export { parseUnit, readUnitBatches, readUnits, unitLine } from "./unit.ts";
export type { DatasetFormat, LoadDatasetOptions } from "./dataset.ts";
export { DatasetError, loadDataset, loadDatasetBatches } from "./dataset.ts";
