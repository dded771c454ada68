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
import { FieldError, mappingAt, stringAt, stringMapAt } from "../io/fields.ts";
import { parseScore, type Score, scoreLine } from "../score/mod.ts";
import { inertJson } from "../io/inert_json.ts";
import type { Fingerprints } from "../fingerprint/fingerprint.ts";

export type { Fingerprints };

/** `o.fingerprints`, checked and copied. */
export function fingerprintsAt(o: Record<string, unknown>): Fingerprints {
  const f = mappingAt(o.fingerprints, "fingerprints");
  const dataset = f.dataset;
  if (dataset !== null && typeof dataset !== "string") {
    throw new FieldError("fingerprints.dataset", "a string or null", dataset);
  }
  return {
    config: stringAt(f, "config", "fingerprints."),
    dataset,
    target: stringAt(f, "target", "fingerprints."),
    scorers: stringMapAt(f, "scorers", "fingerprints."),
  };
}

/**
 * What a RunRecord says before its Scores.
 *
 * @example Start a record with its header, read the header back
 * ```ts
 * import { parseRunRecord, type RunRecordHeader, RunRecordWriter } from "./mod.ts";
 * const header: RunRecordHeader = {
 *   run_id: "20261201T080000Z-3f2a9c",
 *   started_at: "2026-12-01T08:00:00.000Z",
 *   config_path: "evalpipe.yaml",
 *   config: { dataset: "cases.jsonl" },
 *   fingerprints: { config: "sha256:aa", dataset: "sha256:bb", target: "sha256:cc", scorers: { m: "m@1" } },
 * };
 * let text = "";
 * const dest = { write: (p: Uint8Array) => (text += new TextDecoder().decode(p), Promise.resolve(p.length)) };
 * await new RunRecordWriter(dest, header).finish([], true);
 * const record = parseRunRecord(text, "run.json");
 * if (record.run_id !== header.run_id || record.fingerprints.scorers.m !== "m@1") throw new Error("unexpected");
 * ```
 */
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
  /**
   * The range `[low, high]` of each metric whose scorer declares one, so
   * that aggregates computed again from the Scores clamp as the run did.
   */
  value_ranges?: Record<string, [number, number]>;
}

/**
 * One run: its config, fingerprints, Scores and aggregates.
 *
 * @example Summarise a finished run from its record
 * ```ts
 * import { parseRunRecord, type RunRecord } from "./mod.ts";
 * const text = JSON.stringify({
 *   evalpipe_run_record: 1, run_id: "r1", started_at: "2026-12-01T08:00:00.000Z", config_path: "evalpipe.yaml", config: {},
 *   fingerprints: { config: "sha256:aa", dataset: null, target: "sha256:cc", scorers: {} },
 *   scores: [{ metric: "m", status: "scored", validity: "valid", value: 1, passed: true, evaluator_version: "m@1", example_id: "d#1" }],
 *   aggregates: [], finished_at: "2026-12-01T08:00:01.000Z", complete: true,
 * });
 * const record: RunRecord = parseRunRecord(text, "run.json");
 * if (!record.complete || record.aggregates[0]?.mean !== 1) throw new Error("unexpected");
 * ```
 */
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
    ...(o.value_ranges !== undefined
      ? { value_ranges: valueRangesAt(o.value_ranges) }
      : {}),
  };
}

/** A record's `value_ranges`: metric → `[low, high]`. */
function valueRangesAt(value: unknown): Record<string, [number, number]> {
  const ranges: Record<string, [number, number]> = {};
  for (const [metric, r] of Object.entries(mappingAt(value, "value_ranges"))) {
    if (
      !Array.isArray(r) || r.length !== 2 || typeof r[0] !== "number" ||
      typeof r[1] !== "number" || !(r[0] <= r[1])
    ) {
      throw new FieldError(
        `value_ranges.${metric}`,
        "two numbers, low to high",
        r,
      );
    }
    ranges[metric] = [r[0], r[1]];
  }
  return ranges;
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

/**
 * A JSON replacer that masks the password of every URL in a string
 * (`http://user:***@host/`): the record keeps which user, never the secret.
 */
function hidePasswords(_key: string, value: unknown): unknown {
  if (typeof value !== "string" || !value.includes("@")) return value;
  // Userinfo holds no "/", "?", "#" or "@" (they are percent-encoded).
  return value.replace(
    /([a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*):[^\s/?#@]*@/gi,
    "$1:***@",
  );
}

/**
 * Writes a RunRecord as the run goes. The header's strings keep no URL
 * password: `http://user:secret@host` is written `http://user:***@host`.
 *
 * @example A run that dies before `finish` still leaves a readable record
 * ```ts
 * import { parseRunRecord, type RunRecordHeader, RunRecordWriter } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const header: RunRecordHeader = {
 *   run_id: "20261201T080000Z-3f2a9c",
 *   started_at: "2026-12-01T08:00:00.000Z",
 *   config_path: "evalpipe.yaml",
 *   config: { dataset: "cases.jsonl" },
 *   fingerprints: { config: "sha256:aa", dataset: "sha256:bb", target: "sha256:cc", scorers: { m: "m@1" } },
 * };
 * let text = "";
 * const dest = { write: (p: Uint8Array) => (text += new TextDecoder().decode(p), Promise.resolve(p.length)) };
 * const writer = new RunRecordWriter(dest, header);
 * await writer.add(scored("m", 1, { example_id: "d#1", unit_id: "d#1" }));
 * await writer.add(scored("m", 0, { example_id: "d#2", unit_id: "d#2" }));
 * await new Promise((resolve) => setTimeout(resolve, 0)); // the lines reach `dest`; no finish: a crash
 * const record = parseRunRecord(text, "run.json");
 * if (record.complete || record.scores.length !== 2 || record.aggregates[0]?.mean !== 0.5) throw new Error("unexpected");
 * ```
 */
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
    const text = inertJson(
      JSON.stringify({ evalpipe_run_record: 1, ...header }, hidePasswords),
    );
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
    return this.#out.write(sep + scoreLine(score));
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
    this.#out.write(`\n],${inertJson(JSON.stringify(tail)).slice(1)}\n`);
    await this.#out.flush();
  }
}

/**
 * A file that is not a RunRecord, or one too damaged to read. Its message
 * names the file (and the Score at fault), and the command line exits 2.
 *
 * @example A RunRecord whose first Score has no value
 * ```ts
 * import { parseRunRecord, RunRecordError } from "./mod.ts";
 * const text = '{"evalpipe_run_record":1,"run_id":"r1","started_at":"2026-12-01T08:00:00.000Z","config_path":"evalpipe.yaml",' +
 *   '"config":{},"fingerprints":{"config":"sha256:aa","dataset":null,"target":"sha256:cc","scorers":{}},' +
 *   '"scores":[{"metric":"m","status":"scored","validity":"valid","passed":true,"evaluator_version":"m@1"}]}';
 * const error = (() => { try { parseRunRecord(text, "run.json"); } catch (e) { return e; } })();
 * if (!(error instanceof RunRecordError) || error.exitCode !== 2) throw new Error("unexpected");
 * if (!error.message.startsWith('Invalid run record "run.json": score 1: ')) throw new Error(error.message);
 * ```
 */
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
 *
 * @example A RunRecord, and a line of Scores NDJSON
 * ```ts
 * import { isRunRecord } from "./mod.ts";
 * if (!isRunRecord('{"evalpipe_run_record":1,"run_id":"r1"')) throw new Error("a RunRecord");
 * if (isRunRecord('{"metric":"m","status":"scored"}')) throw new Error("NDJSON of Scores");
 * ```
 */
export function isRunRecord(text: string): boolean {
  return /^\s*\{\s*"evalpipe_run_record"\s*:/.test(text);
}

/**
 * Reads a RunRecord, validating it. A record cut short by a crash is read up
 * to its last whole Score and marked incomplete. The aggregates of any record
 * are computed from the Scores it holds, not read from the file.
 *
 * @param text The file's text.
 * @param path The file, for messages.
 * @returns The record.
 * @throws {RunRecordError} When it is not a RunRecord or a Score in it is invalid.
 *
 * @example A record torn inside its second Score is read up to the first
 * ```ts
 * import { parseRunRecord } from "./mod.ts";
 * const text = '{"evalpipe_run_record":1,"run_id":"r1","started_at":"2026-12-01T08:00:00.000Z",' +
 *   '"config_path":"evalpipe.yaml","config":{},' +
 *   '"fingerprints":{"config":"sha256:aa","dataset":null,"target":"sha256:cc","scorers":{}},"scores":[\n' +
 *   '{"metric":"m","status":"scored","validity":"valid","value":1,"passed":true,"evaluator_version":"m@1"},\n' +
 *   '{"metric":"m","status":"sco';
 * const record = parseRunRecord(text, "run.json");
 * if (record.complete || record.finished_at !== null || record.scores.length !== 1) throw new Error("unexpected");
 * ```
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
  const ranges = head.value_ranges;
  const aggregator = new Aggregator({
    grouped: true, // a resumed run appends epochs apart
    ...(ranges !== undefined
      ? {
        valueRange: (metric: string) =>
          Object.hasOwn(ranges, metric) ? ranges[metric] : undefined,
      }
      : {}),
  });
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
