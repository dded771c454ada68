/**
 * The RunRecord: everything about one run in one JSON file, written as the
 * run goes, so that a run that dies leaves a record that can still be read
 * (marked incomplete).
 *
 * The file is one JSON object whose `scores` array has one Score per line:
 *
 * ```text
 * {"evalpipe_run_record":1,"run_id":…,"started_at":…,"config_path":…,"config":{…},"fingerprints":{…},"scores":[
 * {…Score…},
 * {…Score…}
 * ],"aggregates":[…],"finished_at":…,"complete":true}
 * ```
 *
 * @module
 */

import { type Aggregate, Aggregator } from "../aggregate/mod.ts";
import { type ByteWriter, TextWriter } from "../io/text_writer.ts";
import {
  FieldError,
  fingerprintsAt,
  mappingAt,
  stringAt,
} from "../io/fields.ts";
import { parseScore, type Score } from "../score/mod.ts";
import type { Fingerprints } from "../fingerprint/fingerprint.ts";

export type { Fingerprints };

/** What a RunRecord says before its Scores. */
export interface RunRecordHeader {
  /** A unique id for the run. */
  run_id: string;
  /** When it started (ISO 8601). */
  started_at: string;
  /** The config file as given. */
  config_path: string;
  /** The resolved config. */
  config: Record<string, unknown>;
  /** What the run depended on. */
  fingerprints: Fingerprints;
}

/** One run: its config, fingerprints, Scores and aggregates. */
export interface RunRecord extends RunRecordHeader {
  /** Every Score, in output order. */
  scores: Score[];
  /** One per metric, sorted by metric. */
  aggregates: Aggregate[];
  /** When it finished; `null` when it did not. */
  finished_at: string | null;
  /** Whether every unit was run: `false` after an interruption or a crash. */
  complete: boolean;
}

/** The header of a parsed record, checked and copied in its order. */
function readHeader(value: unknown): RunRecordHeader {
  const o = mappingAt(value, "");
  if (o.evalpipe_run_record !== 1) {
    throw new FieldError("evalpipe_run_record", "1", o.evalpipe_run_record);
  }
  return {
    run_id: stringAt(o, "run_id"),
    started_at: stringAt(o, "started_at"),
    config_path: stringAt(o, "config_path"),
    config: { ...mappingAt(o.config, "config") },
    fingerprints: fingerprintsAt(o),
  };
}

/**
 * A fresh run id: the start time and a random suffix.
 *
 * @param started The start time.
 * @returns E.g. `20261130T013844Z-3f2a9c`.
 */
export function newRunId(started: Date): string {
  const stamp = started.toISOString().replace(/[-:]/g, "").replace(
    /\.\d+Z$/,
    "Z",
  );
  const random = crypto.getRandomValues(new Uint8Array(3));
  return `${stamp}-${
    [...random].map((b) => b.toString(16).padStart(2, "0")).join("")
  }`;
}

/** Writes a RunRecord as the run goes. */
export class RunRecordWriter {
  #out: TextWriter;
  #first = true;

  /**
   * Starts a record: writes everything before the Scores.
   *
   * @param dest Where the record goes.
   * @param header The run's header.
   */
  constructor(dest: ByteWriter, header: RunRecordHeader) {
    this.#out = new TextWriter(dest);
    const text = JSON.stringify({ evalpipe_run_record: 1, ...header });
    this.#out.write(`${text.slice(0, -1)},"scores":[`);
  }

  /**
   * Appends a Score on its own line.
   *
   * @param score The Score.
   * @returns A promise to await for backpressure, when there is one.
   */
  add(score: Score): Promise<void> | undefined {
    const sep = this.#first ? "\n" : ",\n";
    this.#first = false;
    return this.#out.write(sep + JSON.stringify(score));
  }

  /**
   * Ends the record with the aggregates and whether the run completed.
   *
   * @param aggregates The aggregates.
   * @param complete Whether every unit was run.
   * @returns When it is written.
   */
  async finish(
    aggregates: readonly Aggregate[],
    complete: boolean,
  ): Promise<void> {
    const tail = {
      aggregates,
      finished_at: new Date().toISOString(),
      complete,
    };
    this.#out.write(`\n],${JSON.stringify(tail).slice(1)}\n`);
    await this.#out.flush();
  }
}

/** A file that is not a RunRecord, or one too damaged to read. */
export class RunRecordError extends SyntaxError {
  /** The exit code the command line ends with: an input error. */
  readonly exitCode: number = 2;
  /**
   * Creates the error.
   *
   * @param message What is wrong, naming the file.
   */
  constructor(message: string) {
    super(message);
    this.name = "RunRecordError";
  }
}

/**
 * Tells whether a text is a RunRecord rather than NDJSON of Scores.
 *
 * @param text The file's text.
 * @returns Whether it starts like a RunRecord.
 */
export function isRunRecord(text: string): boolean {
  return /^\s*\{\s*"evalpipe_run_record"\s*:/.test(text);
}

/**
 * Reads a RunRecord, validating it. A record cut short by a crash is read up
 * to its last whole Score and marked incomplete; its aggregates are computed
 * from the Scores it holds.
 *
 * @param text The file's text.
 * @param path The file, for messages.
 * @returns The record.
 * @throws {RunRecordError} When it is not a RunRecord or a Score in it is invalid.
 */
export function parseRunRecord(text: string, path: string): RunRecord {
  let value: Record<string, unknown>;
  let torn = false;
  try {
    value = JSON.parse(text);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    value = repair(text, path);
    torn = true;
  }
  let head: RunRecordHeader;
  try {
    head = readHeader(value);
  } catch (error) {
    if (!(error instanceof FieldError)) throw error;
    throw new RunRecordError(
      `Invalid run record ${JSON.stringify(path)}: ${error.message}`,
    );
  }
  const rawScores = Array.isArray(value.scores) ? value.scores : [];
  const scores = rawScores.map((s, i) => {
    try {
      return parseScore(s);
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      throw new RunRecordError(
        `Invalid run record ${JSON.stringify(path)}: score ${
          i + 1
        }: ${error.message}`,
      );
    }
  });
  const aggregator = new Aggregator({ grouped: true }); // a resumed run appends epochs apart
  for (const s of scores) aggregator.add(s);
  return {
    ...head,
    scores,
    aggregates: aggregator.results(),
    finished_at: !torn && typeof value.finished_at === "string"
      ? value.finished_at
      : null,
    complete: !torn && value.complete === true,
  };
}

/** Rebuilds a record cut short: the header, then every whole Score line. */
function repair(text: string, path: string): Record<string, unknown> {
  const marker = text.indexOf('"scores":[');
  if (marker < 0 || !isRunRecord(text)) {
    throw new RunRecordError(
      `Cannot read run record ${JSON.stringify(path)}: not a run record`,
    );
  }
  let head: Record<string, unknown>;
  try {
    head = JSON.parse(`${text.slice(0, marker)}"scores":[]}`);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    throw new RunRecordError(
      `Cannot read run record ${JSON.stringify(path)}: its header is damaged`,
    );
  }
  const scores: unknown[] = [];
  for (const line of text.slice(marker + 10).split("\n")) {
    if (line.startsWith("]")) break;
    const body = line.endsWith(",") ? line.slice(0, -1) : line;
    if (body.trim() === "") continue;
    try {
      scores.push(JSON.parse(body));
    } catch (error) {
      // Only the last line can be torn by a crash; it is dropped.
      if (!(error instanceof SyntaxError)) throw error;
      break;
    }
  }
  return { ...head, scores };
}
