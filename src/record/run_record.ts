/**
 * The RunRecord: everything about one run in one JSON file, written as the
 * run goes, so that a run that dies leaves a record that can still be read
 * (marked incomplete).
 *
 * The file is one JSON object whose `units` array has one line per unit:
 * what went in, what the target answered, and the unit's Scores.
 *
 * ```text
 * {"evalpipe_run_record":2,"run_id":…,"started_at":…,"config_path":…,"config":{…},"fingerprints":{…},"units":[
 * {"example_id":…,"unit_id":…,"epoch":1,"input":…,"expected":…,"output":…,"target":{…},"scores":[{…Score…},{…Score…}]},
 * {…unit…,"scores":[…]}
 * ],"aggregates":[…],"finished_at":…,"complete":true}
 * ```
 *
 * Records written before units were kept (`"evalpipe_run_record":1`, a
 * `scores` array with one Score per line) are read as well.
 *
 * @module
 */

import { isRunRecord } from "./_sniff.ts";
import { isReadError, osErrorText } from "../base/errors.ts";
import { type Aggregate, Aggregator } from "../aggregate/mod.ts";
import { maskQueryCredentials } from "../net/template.ts";
import { writtenCredentials } from "../net/_url_secrets.ts";
import { type ByteWriter, TextWriter } from "../io/text_writer.ts";
import { FieldError, mappingAt, stringAt, stringMapAt } from "../io/fields.ts";
import { parseScore, type Score, scoreLine } from "../score/mod.ts";
import { inertJson } from "../io/inert_json.ts";
import type { Fingerprints } from "../fingerprint/fingerprint.ts";
import { CaseError, keepVerbatimExpected } from "../dataset/case.ts";
import { attachVerbatimExpected, expectedJson } from "../io/_expected_text.ts";
import { parseUnit, type Unit, unitLine } from "../dataset/unit.ts";
import { LineStream } from "../io/line_stream.ts";
import {
  bodyLine,
  type HeaderLine,
  headerLine,
  notLastMessage,
} from "./_record_lines.ts";
import {
  selectionAt,
  type SelectionTally,
  shardAt,
  type ShardInfo,
  type Subset,
  subsetAt,
} from "./selection.ts";
import { judgeSpendOf, type Spend } from "./spend.ts";
import { valueRangeOption } from "../aggregate/value_ranges.ts";
import {
  type RecordedBaseline,
  type RecordedBudget,
  type RunChecks,
  runChecksAt,
} from "./run_checks.ts";

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
  /** Which shard of how many the run is (`run --shard k/n`). */
  shard?: ShardInfo;
  /** The subset the run chose (`--filter`, `--sample`, `--limit`). */
  subset?: Subset;
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
  /**
   * Every unit the record holds, in output order: ids, epoch, input,
   * expected, context, metadata, output and the target's record. Empty for
   * a record written before units were kept.
   */
  units: Unit[];
  /** Every Score, in output order. */
  scores: Score[];
  /** One per metric, sorted by metric. */
  aggregates: Aggregate[];
  /** When it finished; `null` when it did not. */
  finished_at: string | null;
  /** Whether every unit was run: `false` after an interruption or a crash. */
  complete: boolean;
  /**
   * What a shard or a subset ran and left out, once it finished (absent
   * for a run of the whole suite).
   */
  selection?: SelectionTally;
  /**
   * The run compared with its baseline (`run --baseline`), once it
   * finished; absent in a record written before records kept it.
   */
  baseline?: RecordedBaseline;
  /** The run's budget and what it spent, when the config set `budget_usd`. */
  budget?: RecordedBudget;
}

/** The header of a parsed record, checked and copied in its order. */
export function readHeader(value: unknown): RunRecordHeader {
  const o = mappingAt(value, "");
  if (o.evalpipe_run_record !== 1 && o.evalpipe_run_record !== 2) {
    throw new FieldError(
      "evalpipe_run_record",
      "1 or 2",
      o.evalpipe_run_record,
    );
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
    ...selectedPart(o),
  };
}

/** A header's shard and subset, checked, when it has them. */
function selectedPart(
  o: Record<string, unknown>,
): { shard?: ShardInfo; subset?: Subset } {
  const shard = shardAt(o);
  const subset = subsetAt(o);
  return {
    ...(shard !== undefined ? { shard } : {}),
    ...(subset !== undefined ? { subset } : {}),
  };
}

/** A record's (or a sidecar's) `value_ranges`: metric → `[low, high]`, checked. */
export function valueRangesAt(
  value: unknown,
): Record<string, [number, number]> {
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

export { newRunId } from "./_run_id.ts";

/**
 * A JSON replacer that masks the password of every URL in a string
 * (`http://user:***@host/`), each credential of its query (`?key=***`) and
 * each credential a config's `headers` write out rather than read from a
 * `${NAME}` (`authorization: "Bearer ***"`): the record keeps which user,
 * which parameter and which header, never the secret.
 */
function hidePasswords(key: string, value: unknown): unknown {
  if (
    key === "headers" && typeof value === "object" && value !== null &&
    !Array.isArray(value)
  ) {
    return hideWrittenCredentials(value as Record<string, unknown>);
  }
  if (typeof value !== "string") return value;
  // Userinfo holds no "/", "?", "#" or "@" (they are percent-encoded).
  const kept = value.includes("@")
    ? value.replace(
      /([a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*):[^\s/?#@]*@/gi,
      "$1:***@",
    )
    : value;
  return maskQueryCredentials(kept);
}

/** A `${…}` in a header's value, kept by `split`; `WHOLE_REFERENCE` is one. */
const REFERENCE = /(\$\{[^}]*\})/;
const WHOLE_REFERENCE = /^\$\{[^}]*\}$/;

/** A copy of a config's headers with each written-out credential as `***`. */
function hideWrittenCredentials(
  headers: Record<string, unknown>,
): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== "string") {
      shown[name] = value;
      continue;
    }
    // What a `${…}` holds is a variable's name, or what the config's
    // masking left of a key pasted there (`${hf_Q…}`): kept as it is.
    shown[name] = value.split(REFERENCE).map((part) => {
      if (WHOLE_REFERENCE.test(part)) return part;
      let text = part;
      for (const secret of writtenCredentials(name, part)) {
        text = text.replaceAll(secret, "***");
      }
      return text;
    }).join("");
  }
  return shown;
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
      JSON.stringify({ evalpipe_run_record: 2, ...header }, hidePasswords),
    );
    this.#out.write(`${text.slice(0, -1)},"units":[`);
  }

  /**
   * Appends a unit with its Scores, on one line.
   *
   * @param unit The unit: ids, epoch, input, expected, output, target.
   * @param scores Its Scores, in output order.
   * @returns A promise to await for backpressure, when there is one.
   */
  addUnit(unit: Unit, scores: readonly Score[]): Promise<void> | undefined {
    const line = unitLine(unit);
    // What the unit's judges spent, beside what its target did.
    const judge = judgeSpendOf(scores);
    return this.#line(
      judge === undefined
        ? line
        : `${line.slice(0, -1)},"judge":${JSON.stringify(judge)}}`,
      scores,
    );
  }

  /**
   * Appends a Score whose unit is not known (as when a resumed run's earlier
   * Scores come from a Scores file), on its own line.
   *
   * @param score The Score.
   * @returns A promise to await for backpressure, when there is one.
   */
  add(score: Score): Promise<void> | undefined {
    return this.addScores([score]);
  }

  /**
   * Appends Scores of one unit whose unit record is not known, on one line.
   *
   * @param scores The Scores, of one unit.
   * @returns A promise to await for backpressure, when there is one.
   */
  addScores(scores: readonly Score[]): Promise<void> | undefined {
    const first = scores[0];
    const ids = first === undefined
      ? "{"
      : `{${
        first.example_id !== undefined
          ? `"example_id":${inertJson(JSON.stringify(first.example_id))},`
          : ""
      }${
        first.unit_id !== undefined
          ? `"unit_id":${inertJson(JSON.stringify(first.unit_id))},`
          : ""
      }`;
    return this.#line(ids.length > 1 ? ids.slice(0, -1) + "}" : "{}", scores);
  }

  /** Writes `entry` (a JSON object's text) with `"scores"` added, on its own line. */
  #line(entry: string, scores: readonly Score[]): Promise<void> | undefined {
    const sep = this.#first ? "\n" : ",\n";
    this.#first = false;
    let text = entry.length > 2
      ? `${entry.slice(0, -1)},"scores":[`
      : '{"scores":[';
    for (let i = 0; i < scores.length; i++) {
      text += (i > 0 ? "," : "") + scoreLine(scores[i]!);
    }
    return this.#out.write(`${sep}${text}]}`);
  }

  /**
   * Ends the record with the aggregates and whether the run completed.
   *
   * @param aggregates The aggregates.
   * @param complete Whether every unit was run.
   * @param selection What a shard or subset ran and left out.
   * @param cost What the run's model calls cost, when it made any.
   * @param checks Its comparison with a baseline and its budget, when it had them.
   * @returns When it is written.
   */
  async finish(
    aggregates: readonly Aggregate[],
    complete: boolean,
    selection?: SelectionTally,
    cost?: Spend,
    checks: RunChecks = {},
  ): Promise<void> {
    this.#out.write(ending({
      aggregates,
      ...(selection !== undefined ? { selection } : {}),
      ...(cost !== undefined ? { cost } : {}),
      ...(checks.baseline !== undefined ? { baseline: checks.baseline } : {}),
      ...(checks.budget !== undefined ? { budget: checks.budget } : {}),
      finished_at: new Date().toISOString(),
      complete,
    }));
    await this.#out.flush();
  }
}

/** What closes the record's units and the record: the fields of `tail`. */
function ending(tail: Record<string, unknown>): string {
  return `\n],${inertJson(JSON.stringify(tail)).slice(1)}\n`;
}

const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;

/**
 * The text that ends a record its run cannot finish, for a process that must
 * stop at once (a second Ctrl-C): appended to the record, it makes the file
 * parse, marked incomplete, with every unit already in it. Its aggregates are
 * left out, as a reader computes them from the Scores.
 *
 * @param last The last byte of the record written so far, `undefined` when
 *   nothing was: the header ends with `[`, a unit with `}`, and a finished
 *   record with a newline.
 * @returns The text to append, or `undefined` when there is nothing to end:
 *   a record not begun, or finished already.
 *
 * @example End a record whose run stopped after its first unit
 * ```ts
 * import { cutShortEnding, parseRunRecord, RunRecordWriter } from "./run_record.ts";
 * import { scored } from "../score/mod.ts";
 * let text = "";
 * const dest = { write: (p: Uint8Array) => (text += new TextDecoder().decode(p), Promise.resolve(p.length)) };
 * const writer = new RunRecordWriter(dest, {
 *   run_id: "r1", started_at: "2026-12-01T08:00:00.000Z", config_path: "evalpipe.yaml", config: {},
 *   fingerprints: { config: "sha256:aa", dataset: null, target: "sha256:cc", scorers: {} },
 * });
 * await writer.add(scored("m", 1, { example_id: "d#1", unit_id: "d#1" }));
 * await new Promise((resolve) => setTimeout(resolve, 0)); // the line reaches `dest`
 * text += cutShortEnding(text.charCodeAt(text.length - 1));
 * const raw = JSON.parse(text);
 * if (raw.complete !== false || parseRunRecord(text, "run.json").scores.length !== 1) throw new Error("unexpected");
 * if (cutShortEnding(text.charCodeAt(text.length - 1)) !== undefined) throw new Error("ended twice");
 * ```
 */
export function cutShortEnding(last: number | undefined): string | undefined {
  if (last !== OPEN_BRACKET && last !== CLOSE_BRACE) return undefined;
  return ending({ finished_at: new Date().toISOString(), complete: false });
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
 * if (!error.message.startsWith('Invalid run record "run.json": scores[0]: ')) throw new Error(error.message);
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

// What tells a RunRecord from Scores NDJSON, where readers look first.
export { isRunRecord };

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
 * What a reader of a RunRecord tells as it reads: the header first, then
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

/** What a record says after its units: everything its summary adds to its header. */
export type RunRecordEnd = Omit<RunRecordSummary, keyof RunRecordHeader>;

/**
 * One record's parts checked as they are read, whatever reads them: its
 * header, each entry of its body, and how it ends. A damaged unit is reported
 * before a damaged Score, each the first of its kind, once the whole record
 * is read.
 */
class RecordCheck {
  /** The header, checked. */
  readonly head: RunRecordHeader;
  /** The list the record's version keeps its entries in. */
  readonly body: "units" | "scores";
  #path: string;
  #read: boolean;
  #aggregator: Aggregator;
  #entries = 0;
  #unitError: RunRecordError | undefined;
  #scoreError: RunRecordError | undefined;

  /**
   * @param fields The header's fields (or the whole record's).
   * @param path The file, for messages.
   * @param body The list the entries come from, when it is named: a body
   *   other than the version's own is not read.
   */
  constructor(
    fields: unknown,
    path: string,
    body?: "units" | "scores",
  ) {
    this.#path = path;
    try {
      this.head = readHeader(fields);
    } catch (error) {
      if (!(error instanceof FieldError)) throw error;
      throw this.#invalid(error.message);
    }
    this.body = (fields as Record<string, unknown>).evalpipe_run_record === 1
      ? "scores"
      : "units";
    this.#read = (body ?? this.body) === this.body;
    this.#aggregator = new Aggregator({
      grouped: true, // a resumed run appends epochs apart
      ...valueRangeOption(this.head.value_ranges),
    });
  }

  #invalid(message: string): RunRecordError {
    return new RunRecordError(
      `Invalid run record ${JSON.stringify(this.#path)}: ${message}`,
    );
  }

  /**
   * One entry of the body, checked.
   *
   * @param value The entry, parsed.
   * @param text Its line, when it was read as one: its unit's expected
   *   answer keeps its number text (`1.0`, an integer past 2^53).
   * @returns Its Scores and unit, or `undefined` when it is not to be handed
   *   on (a body not read, or a record already found damaged).
   */
  entry(
    value: unknown,
    text?: string,
  ): { scores: Score[]; unit: Unit | undefined } | undefined {
    if (!this.#read) return undefined;
    // Messages say where as a JSON path (jq's, units[1].scores[0]): the
    // same whether the record is read a line at a time or whole, indented.
    const n = ++this.#entries;
    let raw: readonly unknown[];
    let unit: Unit | undefined;
    if (this.body === "scores") {
      raw = [value];
    } else {
      if (this.#unitError !== undefined) return undefined;
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        this.#unitError = this.#invalid(
          `units[${n - 1}]: must be an object`,
        );
        return undefined;
      }
      const { scores: own, ...rest } = value as Record<string, unknown>;
      if (!Array.isArray(own)) {
        this.#unitError = this.#invalid(
          `units[${n - 1}]: "scores" must be a list`,
        );
        return undefined;
      }
      raw = own;
      // An entry without an input holds Scores only: its unit was not known.
      if (rest.input !== undefined || rest.invalid !== undefined) {
        try {
          unit = parseUnit(rest, `${this.#path}#${n}`);
          // A string's text can differ only in escapes, which compare
          // equal: not kept (looking cost 60 MB at 100,000 units).
          if (text !== undefined && typeof unit.expected !== "string") {
            keepNumberText(unit, text);
          }
        } catch (error) {
          if (!(error instanceof CaseError)) throw error;
          this.#unitError = this.#invalid(
            `units[${n - 1}]: ${error.message}`,
          );
          return undefined;
        }
      }
    }
    if (this.#scoreError !== undefined) return undefined;
    const scores: Score[] = [];
    for (let i = 0; i < raw.length; i++) {
      try {
        scores.push(parseScore(raw[i]));
      } catch (error) {
        if (!(error instanceof SyntaxError)) throw error;
        this.#scoreError = this.#invalid(
          `${
            this.body === "scores"
              ? `scores[${n - 1}]`
              : `units[${n - 1}].scores[${i}]`
          }: ${error.message}`,
        );
        return undefined;
      }
    }
    for (const s of scores) this.#aggregator.add(s);
    return { scores, unit };
  }

  /**
   * How the record ends, checked, once every entry is read.
   *
   * @param fields The record's fields after its units, `undefined` when it
   *   was cut short.
   * @throws {RunRecordError} The first fault found in the record.
   */
  end(fields: Record<string, unknown> | undefined): RunRecordEnd {
    let selection: SelectionTally | undefined;
    let checks: RunChecks = {};
    try {
      if (fields !== undefined) {
        selection = selectionAt(fields);
        checks = runChecksAt(fields);
      }
    } catch (error) {
      if (!(error instanceof FieldError)) throw error;
      throw this.#invalid(error.message);
    }
    if (this.#unitError !== undefined) throw this.#unitError;
    if (this.#scoreError !== undefined) throw this.#scoreError;
    return {
      aggregates: this.#aggregator.results(),
      finished_at: typeof fields?.finished_at === "string"
        ? fields.finished_at
        : null,
      complete: fields?.complete === true,
      ...(selection !== undefined ? { selection } : {}),
      ...checks,
    };
  }
}

/**
 * A record's text, split and its header checked: the entries of its body
 * and its fields after them (`undefined` when it was cut short).
 */
function splitText(
  text: string,
  path: string,
): {
  check: RecordCheck;
  entries: readonly unknown[];
  end: Record<string, unknown> | undefined;
} {
  let value: Record<string, unknown> | undefined;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // Not whole: read up to its last whole line.
    if (!(error instanceof SyntaxError)) throw error;
  }
  if (value !== undefined) {
    const check = new RecordCheck(value, path);
    const entries = value[check.body];
    return {
      check,
      entries: Array.isArray(entries) ? entries : [],
      end: value,
    };
  }
  const body = /^\s*\{\s*"evalpipe_run_record"\s*:\s*1\s*,/.test(text)
    ? "scores"
    : "units";
  const marker = text.indexOf(`"${body}":[`);
  if (marker < 0 || !isRunRecord(text)) {
    throw new RunRecordError(
      `Cannot read run record ${JSON.stringify(path)}: not a run record`,
    );
  }
  let head: Record<string, unknown>;
  try {
    head = JSON.parse(`${text.slice(0, marker)}"${body}":[]}`);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    throw new RunRecordError(
      `Cannot read run record ${JSON.stringify(path)}: its header is damaged`,
    );
  }
  const check = new RecordCheck(head, path, body);
  const entries: unknown[] = [];
  // The body's first line is the header's.
  const first = text.slice(0, marker).split("\n").length;
  // CRLF too, as the line-at-a-time reader splits: a CR left on a line
  // would make every line before the last one that is not JSON.
  const lines = text.slice(marker + body.length + 4).split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const read = bodyLine(lines[i]!);
    if (read === undefined) continue;
    // A record that did not parse whole is read as cut short, its end or
    // not, when the line it ends at is its last.
    if ("end" in read) {
      if (read.end === undefined && lines.slice(i + 1).some((l) => l.trim())) {
        throw new RunRecordError(notLastMessage(path, first + i, read.torn));
      }
      break;
    }
    entries.push(read.entry);
  }
  return { check, entries, end: undefined };
}

/** Gathers what a reader hands on into a whole record. */
class Gathered {
  readonly units: Unit[] = [];
  readonly scores: Score[] = [];

  entry(scores: readonly Score[], unit: Unit | undefined): void {
    for (const s of scores) this.scores.push(s);
    if (unit !== undefined) this.units.push(unit);
  }

  record(head: RunRecordHeader, end: RunRecordEnd): RunRecord {
    return { ...head, units: this.units, scores: this.scores, ...end };
  }
}

/**
 * Keeps a unit's expected answer's text from its record line only where it
 * differs from what `JSON.stringify` writes (`1.0`, an integer past 2^53),
 * as a copy: the text sliced from the line kept the whole line alive, +260
 * MB peak at 100,000 units whose expected answer is an object.
 */
function keepNumberText(unit: Unit, line: string): void {
  // Only a number's text can differ (escapes and spaces compare equal), so
  // an answer holding none is not looked for in the line: most are not.
  if (!holdsNumber(unit.expected)) return;
  const probe = { expected: unit.expected };
  keepVerbatimExpected(probe, line);
  const text = expectedJson(probe);
  if (text !== JSON.stringify(unit.expected)) {
    attachVerbatimExpected(unit, JSON.parse(JSON.stringify(text)));
  }
}

/** Whether a JSON value is or holds a number. */
function holdsNumber(value: unknown): boolean {
  if (typeof value === "number") return true;
  if (typeof value !== "object" || value === null) return false;
  for (const v of Array.isArray(value) ? value : Object.values(value)) {
    if (holdsNumber(v)) return true;
  }
  return false;
}

/**
 * Reads a RunRecord, validating it. A record cut short by a crash (its last
 * line torn) is read up to its last whole Score and marked incomplete. The
 * aggregates of any record are computed from the Scores it holds, not read
 * from the file.
 *
 * @param text The file's text.
 * @param path The file, for messages.
 * @returns The record.
 * @throws {RunRecordError} When it is not a RunRecord, a Score in it is
 *   invalid, or a line before its last is not JSON (`Invalid run record
 *   "run.json" line 3: it is not JSON (...), and lines follow it`).
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
  const { check, entries, end } = splitText(text, path);
  const gathered = new Gathered();
  for (const entry of entries) {
    const read = check.entry(entry);
    if (read !== undefined) gathered.entry(read.scores, read.unit);
  }
  return gathered.record(check.head, check.end(end));
}

/**
 * Reads a RunRecord file as {@linkcode parseRunRecord} reads its text, a line
 * at a time: a record of a million units is larger than the longest string
 * the runtime can hold, and is read all the same. A file whose first line is
 * not a record's header as evalpipe writes it (one edited by hand, say) is
 * read whole.
 *
 * @param path The file.
 * @returns The record.
 * @throws {RunRecordError} When it is not a RunRecord, a unit or Score in
 *   it is invalid or a line before its last is not JSON (as
 *   {@linkcode parseRunRecord} throws), or when it cannot be read (`Cannot
 *   read run record "run.json": no such file`, `it is a folder`).
 *
 * @example Read back a record written as the run went
 * ```ts
 * import { readRunRecord, RunRecordWriter } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const dir = await Deno.makeTempDir();
 * const file = await Deno.open(`${dir}/run.json`, { write: true, create: true });
 * const writer = new RunRecordWriter(file, {
 *   run_id: "r1", started_at: "2026-12-01T08:00:00.000Z", config_path: "evalpipe.yaml", config: {},
 *   fingerprints: { config: "sha256:aa", dataset: null, target: "sha256:cc", scorers: {} },
 * });
 * const unit = { example_id: "d#1", unit_id: "d#1", epoch: 1, input: "q", output: "a" };
 * await writer.addUnit(unit, [scored("m", 1, { example_id: "d#1", unit_id: "d#1" })]);
 * await writer.finish([], true);
 * file.close();
 * const record = await readRunRecord(`${dir}/run.json`);
 * await Deno.remove(dir, { recursive: true });
 * if (!record.complete || record.units[0]?.output !== "a" || record.scores.length !== 1) throw new Error();
 * ```
 */
export async function readRunRecord(path: string): Promise<RunRecord> {
  const gathered = new Gathered();
  const { head, end } = await readRecord(path, gathered);
  return gathered.record(head, end);
}

/**
 * Reads a RunRecord file a line at a time, handing `visitor` the header and
 * then each line's unit and Scores as they are checked; what
 * {@linkcode readRunRecord} and `visitRunRecord` share. A file not laid out
 * as evalpipe writes it is read whole, then handed on a line of its body at a
 * time. Nothing is returned until the whole file is checked.
 *
 * @param path The file.
 * @param visitor What to do with the header and each line.
 * @returns The header, and what the record says after its units.
 * @throws {RunRecordError} As {@linkcode readRunRecord} throws.
 */
export async function readRecord(
  path: string,
  visitor: RunRecordVisitor,
): Promise<{ head: RunRecordHeader; end: RunRecordEnd }> {
  try {
    return await readRecordFile(path, visitor);
  } catch (error) {
    // The visitor's own (a report it writes on a full disk) is not the
    // record's.
    if (error instanceof VisitorError) throw error.error;
    // A record that is there but invalid says so itself; a file that cannot
    // be read is named in a few words, as readScoresFile names it, not as
    // Deno's "No such file or directory (os error 2): open 'run.json'".
    if (!isReadError(error)) throw error;
    throw new RunRecordError(
      `Cannot read run record ${JSON.stringify(path)}: ${osErrorText(error)}`,
    );
  }
}

/** What a visitor threw, carried out of the reader as it was. */
class VisitorError {
  constructor(readonly error: unknown) {}
}

/**
 * Calls the visitor, marking what it throws as its own; a visitor that does
 * not wait (readRunRecord's) is not waited for.
 */
function visiting(call: () => void | Promise<void>): Promise<void> | undefined {
  let result;
  try {
    result = call();
  } catch (error) {
    throw new VisitorError(error);
  }
  return result?.catch((error: unknown) => {
    throw new VisitorError(error);
  });
}

async function readRecordFile(
  path: string,
  visitor: RunRecordVisitor,
): Promise<{ head: RunRecordHeader; end: RunRecordEnd }> {
  const file = await Deno.open(path);
  const lines = file.readable.pipeThrough(
    new LineStream({ maxLineBytes: 256 * 1024 * 1024 }),
  );
  let header: HeaderLine | undefined;
  let check: RecordCheck | undefined;
  let end: Record<string, unknown> | undefined;
  // A line that is not JSON ends the record only when it is the last.
  let torn: { line: number; why: string } | undefined;
  let at = 0;
  // Leaving the loop cancels the stream, which closes the file.
  for await (const line of lines) {
    at++;
    if (torn !== undefined) {
      if (line.error !== undefined || line.text.trim() !== "") {
        throw new RunRecordError(notLastMessage(path, torn.line, torn.why));
      }
      continue;
    }
    if (check === undefined) {
      header = line.error === undefined ? headerLine(line.text) : undefined;
      if (header === undefined) break;
      check = new RecordCheck(header.fields, path, header.body);
      const head = check.head;
      await visiting(() => visitor.header?.(head));
      continue;
    }
    const read = bodyLine(line.text, line.error);
    if (read === undefined) continue;
    if ("end" in read) {
      if (read.end === undefined) {
        torn = { line: at, why: read.torn };
        continue;
      }
      end = { ...header!.fields, ...read.end };
      break;
    }
    const entry = check.entry(read.entry, line.text);
    if (entry !== undefined) {
      const wait = visiting(() => visitor.entry(entry.scores, entry.unit));
      if (wait !== undefined) await wait;
    }
  }
  if (check !== undefined) return { head: check.head, end: check.end(end) };
  // Not as evalpipe writes it: read whole, then handed on entry by entry.
  const split = splitText(await Deno.readTextFile(path), path);
  await visiting(() => visitor.header?.(split.check.head));
  for (const value of split.entries) {
    const entry = split.check.entry(value);
    if (entry !== undefined) {
      await visiting(() => visitor.entry(entry.scores, entry.unit));
    }
  }
  return { head: split.check.head, end: split.check.end(split.end) };
}
