/**
 * Reading a RunRecord a unit at a time: what `export` and `report` need of a
 * record of any size, without holding every unit and Score at once.
 *
 * @module
 */

import { isReadError, osErrorText } from "../base/errors.ts";
import { Aggregator } from "../aggregate/mod.ts";
import { valueRangeOption } from "../aggregate/value_ranges.ts";
import { CaseError } from "../dataset/case.ts";
import { parseUnit, type Unit } from "../dataset/unit.ts";
import { FieldError } from "../io/fields.ts";
import { LineStream } from "../io/line_stream.ts";
import { parseScore, type Score } from "../score/mod.ts";
import { type RunChecks, runChecksAt } from "./run_checks.ts";
import {
  readHeader,
  readRunRecord,
  type RunRecord,
  RunRecordError,
  type RunRecordHeader,
} from "./run_record.ts";
import { selectionAt } from "./selection.ts";

/**
 * What a RunRecord says besides its units and Scores.
 *
 * @example
 * ```ts
 * import type { RunRecordSummary } from "./mod.ts";
 * const summary: RunRecordSummary = {
 *   run_id: "r1", started_at: "2026-12-01T08:00:00.000Z", config_path: "evalpipe.yaml", config: {},
 *   fingerprints: { config: "sha256:aa", dataset: null, target: "sha256:cc", scorers: {} },
 *   aggregates: [], finished_at: null, complete: false,
 * };
 * if (summary.complete) throw new Error("unexpected");
 * ```
 */
export type RunRecordSummary = Omit<RunRecord, "units" | "scores">;

/**
 * What {@linkcode visitRunRecord} tells as it reads: the header first, then
 * each line of the record (a unit with its Scores, or Scores alone).
 *
 * @example Count the Scores of each metric
 * ```ts
 * import type { RunRecordVisitor } from "./mod.ts";
 * const counts = new Map<string, number>();
 * const visitor: RunRecordVisitor = {
 *   entry(scores) {
 *     for (const s of scores) counts.set(s.metric, (counts.get(s.metric) ?? 0) + 1);
 *   },
 * };
 * visitor.entry([], undefined);
 * if (counts.size !== 0) throw new Error("unexpected");
 * ```
 */
export interface RunRecordVisitor {
  /** The record's header, before any entry. */
  header?(header: RunRecordHeader): void;
  /**
   * One line of the record: its Scores, in file order, and its unit when the
   * line holds one (a record written before units were kept, and Scores a
   * resumed run carried over, have none).
   */
  entry(scores: readonly Score[], unit: Unit | undefined): void | Promise<void>;
}

/**
 * Reads a RunRecord file as {@linkcode readRunRecord} does, with the same
 * checks and errors, but hands each unit and its Scores to `visitor` as it
 * goes instead of keeping them: memory holds one line at a time (and what
 * the aggregates keep per example). A file not laid out as evalpipe writes
 * it (edited by hand) is read whole, then visited. Nothing is returned
 * until the whole file is checked: a record found invalid throws, after
 * the visitor has seen the lines before the fault.
 *
 * @param path The file.
 * @param visitor What to do with the header and each line.
 * @returns Everything else the record says: its header, aggregates (computed
 *   from its Scores), when it finished, whether it completed.
 * @throws {RunRecordError} As {@linkcode readRunRecord} throws.
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
  try {
    const read = await visitLines(path, visitor);
    if (read !== undefined) return read;
  } catch (error) {
    if (!isReadError(error)) throw error;
    throw new RunRecordError(
      `Cannot read run record ${JSON.stringify(path)}: ${osErrorText(error)}`,
    );
  }
  // Not as evalpipe writes it: read whole, then handed on unit by unit.
  const { units, scores, ...summary } = await readRunRecord(path);
  visitor.header?.(summary);
  const byUnit = new Map<string, Unit>();
  for (const unit of units) byUnit.set(unit.unit_id, unit);
  for (const score of scores) {
    const id = score.unit_id;
    const unit = id === undefined ? undefined : byUnit.get(id);
    if (id !== undefined) byUnit.delete(id);
    await visitor.entry([score], unit);
  }
  for (const unit of byUnit.values()) await visitor.entry([], unit);
  return summary;
}

const HEADER =
  /^\s*\{\s*"evalpipe_run_record"\s*:\s*([12])\s*,.*"(units|scores)":\[$/;

/** The line-at-a-time read; `undefined` when the file is not laid out for it. */
async function visitLines(
  path: string,
  visitor: RunRecordVisitor,
): Promise<RunRecordSummary | undefined> {
  const file = await Deno.open(path);
  const lines = file.readable.pipeThrough(
    new LineStream({ maxLineBytes: 256 * 1024 * 1024 }),
  );
  const invalid = (message: string) =>
    new RunRecordError(
      `Invalid run record ${JSON.stringify(path)}: ${message}`,
    );
  let value: Record<string, unknown> | undefined;
  let head: RunRecordHeader | undefined;
  let aggregator: Aggregator | undefined;
  let version = 2;
  let ignored = false;
  let torn = true;
  let entries = 0;
  let scoreCount = 0;
  // As readRunRecord checks the whole: a damaged unit is reported before a
  // damaged Score, each the first of its kind.
  let unitError: RunRecordError | undefined;
  let scoreError: RunRecordError | undefined;
  const take = async (entry: unknown) => {
    entries++;
    const raw: unknown[] = [];
    let unit: Unit | undefined;
    if (version === 1) {
      raw.push(entry);
    } else {
      if (unitError !== undefined) return;
      if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
        unitError = invalid(`unit ${entries}: must be an object`);
        return;
      }
      const { scores: own, ...rest } = entry as Record<string, unknown>;
      if (!Array.isArray(own)) {
        unitError = invalid(`unit ${entries}: "scores" must be a list`);
        return;
      }
      raw.push(...own);
      // An entry without an input holds Scores only: its unit was not known.
      if (rest.input !== undefined || rest.invalid !== undefined) {
        try {
          unit = parseUnit(rest, `${path}#${entries}`);
        } catch (error) {
          if (!(error instanceof CaseError)) throw error;
          unitError = invalid(`unit ${entries}: ${error.message}`);
          return;
        }
      }
    }
    if (scoreError !== undefined) {
      scoreCount += raw.length;
      return;
    }
    const scores: Score[] = [];
    for (const s of raw) {
      scoreCount++;
      try {
        scores.push(parseScore(s));
      } catch (error) {
        if (!(error instanceof SyntaxError)) throw error;
        scoreError = invalid(`score ${scoreCount}: ${error.message}`);
        return;
      }
    }
    for (const s of scores) aggregator!.add(s);
    await visitor.entry(scores, unit);
  };
  // Leaving the loop cancels the stream, which closes the file.
  for await (const line of lines) {
    if (value === undefined) {
      const m = line.error === undefined ? HEADER.exec(line.text) : null;
      if (m === null) return undefined;
      try {
        value = JSON.parse(`${line.text}]}`) as Record<string, unknown>;
      } catch (error) {
        if (!(error instanceof SyntaxError)) throw error;
        return undefined;
      }
      version = Number(m[1]);
      // A body named other than its version's is not read, as readRunRecord
      // reads the version's own (none).
      ignored = m[2] !== (version === 1 ? "scores" : "units");
      head = headerOf(value, path);
      aggregator = new Aggregator({
        grouped: true, // a resumed run appends epochs apart
        ...valueRangeOption(head.value_ranges),
      });
      visitor.header?.(head);
      continue;
    }
    // Only the last line can be torn by a crash; it is dropped.
    if (line.error !== undefined) break;
    if (line.text.startsWith("]")) {
      try {
        Object.assign(value, JSON.parse(`{${line.text.slice(2)}`));
        torn = false;
      } catch (error) {
        if (!(error instanceof SyntaxError)) throw error;
      }
      break;
    }
    const json = line.text.endsWith(",") ? line.text.slice(0, -1) : line.text;
    if (json.trim() === "") continue;
    let entry: unknown;
    try {
      entry = JSON.parse(json);
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      break;
    }
    if (!ignored) await take(entry);
  }
  if (value === undefined || head === undefined) return undefined;
  let checks: RunChecks = {};
  let selection;
  try {
    selection = torn ? undefined : selectionAt(value);
    if (!torn) checks = runChecksAt(value);
  } catch (error) {
    if (!(error instanceof FieldError)) throw error;
    throw invalid(error.message);
  }
  if (unitError !== undefined) throw unitError;
  if (scoreError !== undefined) throw scoreError;
  return {
    ...head,
    aggregates: aggregator!.results(),
    finished_at: !torn && typeof value.finished_at === "string"
      ? value.finished_at
      : null,
    complete: !torn && value.complete === true,
    ...(selection !== undefined ? { selection } : {}),
    ...checks,
  };
}

/** The header, or the error readRunRecord gives for it. */
function headerOf(value: unknown, path: string): RunRecordHeader {
  try {
    return readHeader(value);
  } catch (error) {
    if (!(error instanceof FieldError)) throw error;
    throw new RunRecordError(
      `Invalid run record ${JSON.stringify(path)}: ${error.message}`,
    );
  }
}
