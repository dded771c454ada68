/**
 * Reading a RunRecord a unit at a time: what `export` and `report` need of a
 * record of any size, without holding every unit and Score at once.
 *
 * @module
 */

import {
  readRecord,
  RunRecordError,
  type RunRecordSummary,
  type RunRecordVisitor,
} from "./run_record.ts";

export type { RunRecordSummary, RunRecordVisitor };

/**
 * Reads a RunRecord file as `readRunRecord` does, with the same
 * checks and errors, but hands each unit and its Scores to `visitor` as it
 * goes instead of keeping them: memory holds one line at a time (and what
 * the aggregates keep per example). A file not laid out as evalpipe writes
 * it (edited by hand) is read whole, then visited a line of its units at a
 * time. Nothing is returned until the whole file is checked: a record found
 * invalid throws, after the visitor has seen the lines before the fault.
 *
 * @param path The file.
 * @param visitor What to do with the header and each line.
 * @returns Everything else the record says: its header, aggregates (computed
 *   from its Scores), when it finished, whether it completed.
 * @throws {RunRecordError} As `readRunRecord` throws.
 *
 * @example Count a record's failing units, one line at a time
 * ```ts
 * import { RunRecordWriter, visitRunRecord } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const dir = await Deno.makeTempDir();
 * const file = await Deno.open(`${dir}/run.json`, { write: true, create: true });
 * const writer = new RunRecordWriter(file, {
 *   run_id: "r1", started_at: "2026-12-01T08:00:00.000Z", config_path: "evalpipe.yaml", config: {},
 *   fingerprints: { config: "sha256:aa", dataset: null, target: "sha256:cc", scorers: {} },
 * });
 * for (const [i, v] of [1, 0, 1].entries()) {
 *   const id = `d#${i + 1}`;
 *   await writer.addUnit({ example_id: id, unit_id: id, epoch: 1, input: "q", output: "a" }, [scored("m", v, { example_id: id, unit_id: id })]);
 * }
 * await writer.finish([], true);
 * file.close();
 * let failing = 0;
 * const record = await visitRunRecord(`${dir}/run.json`, {
 *   entry(scores) { if (scores.some((s) => s.passed === false)) failing++; },
 * });
 * await Deno.remove(dir, { recursive: true });
 * if (failing !== 1 || record.aggregates[0]?.mean !== 2 / 3) throw new Error("unexpected");
 * ```
 */
export async function visitRunRecord(
  path: string,
  visitor: RunRecordVisitor,
): Promise<RunRecordSummary> {
  const { head, end } = await readRecord(path, visitor);
  return { ...head, ...end };
}

/**
 * Refuses a record that changed between two reads of a reader that reads it
 * twice (its counts, then its items, as the evalglass export and the JUnit
 * report do): the second read found fewer items than the first counted, or
 * another run's record. One a run is still writing has only grown: the
 * reader takes the first `counted` items of its second read.
 *
 * @param path The record file.
 * @param runId The run id the first read found.
 * @param again What the second read found.
 * @param missing How many items the first read counted that the second did
 *   not find.
 * @param cannot What failed, before the path (`Cannot export`).
 * @param redo What to do, after the reason (`export it again`).
 * @throws {RunRecordError} When the record changed so.
 */
export function refuseChangedRecord(
  path: string,
  runId: string,
  again: RunRecordSummary,
  missing: number,
  cannot: string,
  redo: string,
): void {
  if (missing === 0 && again.run_id === runId) return;
  throw new RunRecordError(
    `${cannot} ${
      JSON.stringify(path)
    }: it changed while it was read (another run's record was written over it); ${redo}`,
  );
}
