/**
 * Unit records: one target call for one example, what a target emits and
 * what scorers read.
 *
 * @module
 */

import { nfcKey } from "../base/nfc.ts";
import { placeOf } from "../base/place.ts";
import {
  CaseError,
  checkId,
  keepVerbatimExpected,
  keepVerbatimId,
  overflowingNumber,
  readContext,
} from "./case.ts";
import { expectedJson } from "../io/_expected_text.ts";
import { inertJson } from "../io/inert_json.ts";
import { appearsTwice, repeatedKey } from "../io/_json_scan.ts";
import { type Line, LineBatchStream, LineStream } from "../io/line_stream.ts";
import { NdjsonParseStream, type ParsedLine } from "../io/ndjson.ts";
import type { ToolCall } from "../net/tool_calls.ts";

export type { ToolCall };

/**
 * What a target reports about its call.
 *
 * @example A failed call: no output, the error in `target`
 * ```ts
 * import { parseUnit, type TargetInfo } from "./mod.ts";
 * const target: TargetInfo = { latency_ms: 1200, error: "target error: HTTP 503" };
 * const unit = parseUnit({ input: "hi", target }, "stdin#1");
 * if (unit.output !== null || unit.target?.error !== target.error) throw new Error("unexpected");
 * ```
 */
export interface TargetInfo {
  /** How long the call took. */
  latency_ms?: number;
  /** Why the call failed; the unit then has no usable output. */
  error?: string;
  /**
   * The failure's own diagnostic code, when it has one (`budget.exhausted`,
   * `cache.miss`); its Scores carry it instead of `target.error`.
   */
  error_code?: string;
  /** Anything else a target records (model, token usage, ...). */
  [key: string]: unknown;
}

/**
 * One target call for one example.
 *
 * @example A unit, scored
 * ```ts
 * import type { Unit } from "./mod.ts";
 * import { exactMatch, scoreUnits } from "../scorers/mod.ts";
 * const unit: Unit = { example_id: "d#1", unit_id: "d#1", input: "2+2?", output: "4", expected: "4" };
 * const [score] = await Array.fromAsync(ReadableStream.from([unit]).pipeThrough(scoreUnits([exactMatch()])));
 * if (score?.value !== 1 || score.unit_id !== "d#1") throw new Error("unexpected");
 * ```
 */
export interface Unit {
  /** The example, e.g. `datasets/grounded.jsonl#1`. */
  example_id: string;
  /** The call: equal to `example_id` with one epoch, `<example_id>@<epoch>` with several. */
  unit_id: string;
  /** In a matrix run, the name of the target that made the call (`targets:`). */
  target_name?: string;
  /** Which repetition of the example this call is, from 1. */
  epoch?: number;
  /** The case's input, as sent to the target. */
  input: string | unknown[];
  /** The target's output text; `null` when the target failed. */
  output: string | null;
  /**
   * The tool calls the system made or asked for, in order: its trajectory.
   * Absent when the target records none (an empty list: it called nothing).
   */
  tool_calls?: ToolCall[];
  /** The case's reference answer. */
  expected?: unknown;
  /** The case's retrieved context chunks; a record's one string is read as one chunk. */
  context?: string[];
  /** The case's metadata. */
  metadata?: Record<string, unknown>;
  /** What the target reports about the call. */
  target?: TargetInfo;
  /** Set when the dataset record was malformed: its Scores are `invalid case` errors. */
  invalid?: string;
}

/**
 * Validates a parsed unit record (a line of `score`'s input). A record
 * without ids gets `fallbackId` as both; one without a `unit_id` gets its
 * `example_id`, or `<example_id>@<epoch>` for an `epoch` past the first (as
 * a run of several epochs names its units).
 *
 * @param value A parsed NDJSON value.
 * @param fallbackId The id to use when the record has none, e.g. `stdin#3`.
 * @returns The unit (the same object, so verbatim `expected` stays attached).
 * @throws {CaseError} Naming the field that is wrong.
 *
 * @example
 * ```ts
 * import { parseUnit } from "./unit.ts";
 * const u = parseUnit({ input: "hi", output: "hello" }, "stdin#1");
 * if (u.unit_id !== "stdin#1") throw new Error("unexpected");
 * const e = parseUnit({ example_id: "d#1", epoch: 2, input: "hi", output: "hello" }, "stdin#2");
 * if (e.unit_id !== "d#1@2") throw new Error("unexpected");
 * ```
 */
export function parseUnit(value: unknown, fallbackId: string): Unit {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new CaseError("A unit record must be an object");
  }
  const record = value as Record<string, unknown>;
  for (const key of ["example_id", "unit_id", "target_name"]) {
    if (record[key] !== undefined && typeof record[key] !== "string") {
      throw new CaseError(`"${key}" must be a string`, key);
    }
  }
  // An id that names the record must be one, as a dataset case's must:
  // `"id": false` was taken for no id, the record named by its line.
  if (record.example_id === undefined) checkId(record.id);
  record.example_id ??= fallbackId;
  if (record.unit_id === undefined) {
    // As a run names them: an epoch past the first is one of several.
    const epoch = record.epoch;
    record.unit_id = typeof epoch === "number" && Number.isInteger(epoch) &&
        epoch >= 2
      ? `${record.example_id}@${epoch}`
      : record.example_id;
  }
  const { input, output, target } = record;
  if (input === undefined && typeof record.invalid === "string") {
    record.input = "";
    record.output = null;
    return record as unknown as Unit;
  }
  if (input === undefined) throw new CaseError('"input" is missing', "input");
  if (typeof input !== "string" && !Array.isArray(input)) {
    throw new CaseError(
      '"input" must be a string or a list of messages',
      "input",
    );
  }
  if (target !== undefined && (typeof target !== "object" || target === null)) {
    throw new CaseError('"target" must be an object', "target");
  }
  const targetError = (target as TargetInfo | undefined)?.error;
  if (targetError !== undefined && typeof targetError !== "string") {
    throw new CaseError('"target.error" must be a string', "target.error");
  }
  if (record.invalid !== undefined) {
    // A unit of a malformed dataset record, as `run --units` writes it: its
    // Scores are blocked, whatever else it holds.
    if (typeof record.invalid !== "string") {
      throw new CaseError('"invalid" must be a string', "invalid");
    }
    record.output = typeof output === "string" ? output : null;
    return record as unknown as Unit;
  }
  if (targetError === undefined) {
    if (output === undefined) {
      throw new CaseError('"output" is missing', "output");
    }
    if (typeof output !== "string") {
      throw new CaseError('"output" must be a string', "output");
    }
  } else if (output === undefined) {
    record.output = null;
  }
  readContext(record);
  if (record.tool_calls !== undefined) readToolCalls(record.tool_calls);
  const { epoch, metadata } = record;
  if (epoch !== undefined && !(Number.isInteger(epoch) && Number(epoch) >= 1)) {
    throw new CaseError('"epoch" must be a whole number from 1', "epoch");
  }
  if (
    metadata !== undefined &&
    (typeof metadata !== "object" || metadata === null ||
      Array.isArray(metadata))
  ) {
    throw new CaseError('"metadata" must be an object', "metadata");
  }
  return record as unknown as Unit;
}

/** Checks a unit record's `tool_calls`: a list of calls, each with a name. */
function readToolCalls(calls: unknown): void {
  if (!Array.isArray(calls)) {
    throw new CaseError('"tool_calls" must be a list', "tool_calls");
  }
  for (const [i, call] of calls.entries()) {
    const at = `tool_calls[${i}]`;
    if (typeof call !== "object" || call === null || Array.isArray(call)) {
      throw new CaseError(`"${at}" must be an object`, at);
    }
    const c = call as Record<string, unknown>;
    if (typeof c.name !== "string") {
      throw new CaseError(`"${at}.name" must be a string`, `${at}.name`);
    }
    for (const key of ["arguments_error", "id"]) {
      if (c[key] !== undefined && typeof c[key] !== "string") {
        throw new CaseError(`"${at}.${key}" must be a string`, `${at}.${key}`);
      }
    }
    c.arguments ??= null;
  }
}

/**
 * The JSON text of a unit record, as `run --units` and the RunRecord write
 * it and {@linkcode parseUnit} reads it back: `example_id`, `unit_id`,
 * `epoch`, `input`, `expected` (verbatim, when the case has one), `context`,
 * `metadata`, `output`, `tool_calls`, `target`, and `invalid` for a
 * malformed dataset record. Characters a terminal could act on are `\u` escapes.
 *
 * @param unit The unit.
 * @returns One line of JSON, without a line break.
 *
 * @example A unit record read back as the same unit
 * ```ts
 * import { parseUnit, unitLine } from "./mod.ts";
 * const line = unitLine({ example_id: "d#1", unit_id: "d#1", epoch: 1, input: "2+2?", output: "4", target: { latency_ms: 3 } });
 * if (line !== '{"example_id":"d#1","unit_id":"d#1","epoch":1,"input":"2+2?","output":"4","target":{"latency_ms":3}}') throw new Error(line);
 * if (parseUnit(JSON.parse(line), "x#1").output !== "4") throw new Error("unexpected");
 * ```
 */
export function unitLine(unit: Unit): string {
  let text = `{"example_id":${JSON.stringify(unit.example_id)},"unit_id":${
    JSON.stringify(unit.unit_id)
  }`;
  if (unit.target_name !== undefined) {
    text += `,"target_name":${JSON.stringify(unit.target_name)}`;
  }
  if (unit.epoch !== undefined) text += `,"epoch":${unit.epoch}`;
  text += `,"input":${JSON.stringify(unit.input)}`;
  if (unit.expected !== undefined) text += `,"expected":${expectedJson(unit)}`;
  if (unit.context !== undefined) {
    text += `,"context":${JSON.stringify(unit.context)}`;
  }
  if (unit.metadata !== undefined) {
    text += `,"metadata":${JSON.stringify(unit.metadata)}`;
  }
  text += `,"output":${JSON.stringify(unit.output)}`;
  if (unit.tool_calls !== undefined) {
    text += `,"tool_calls":${JSON.stringify(unit.tool_calls)}`;
  }
  if (unit.target !== undefined) {
    text += `,"target":${JSON.stringify(unit.target)}`;
  }
  if (unit.invalid !== undefined) {
    text += `,"invalid":${JSON.stringify(unit.invalid)}`;
  }
  return inertJson(`${text}}`);
}

/**
 * A unit record line that could not be used.
 *
 * @example Report malformed lines instead of stopping
 * ```ts
 * import { type MalformedLine, readUnits } from "./mod.ts";
 * const bytes = new TextEncoder().encode('{"input":"q","output":"a"}\n{"input":"q"}\n');
 * const malformed: MalformedLine[] = [];
 * await Array.fromAsync(readUnits(ReadableStream.from([bytes]), "stdin", (m) => malformed.push(m)));
 * if (malformed[0]?.line !== 2 || malformed[0].message !== '"output" is missing') throw new Error("unexpected");
 * ```
 */
export interface MalformedLine {
  /** The 1-based line number. */
  line: number;
  /** Why. */
  message: string;
}

/**
 * Options of {@linkcode readUnits} and {@linkcode readUnitBatches}.
 *
 * @example Refuse a unit id repeated across two inputs
 * ```ts
 * import { type MalformedLine, readUnits, type ReadUnitsOptions } from "./mod.ts";
 * const bytes = () => ReadableStream.from([new TextEncoder().encode('{"unit_id":"u1","input":"q","output":"a"}\n')]);
 * const options: ReadUnitsOptions = { seen: new Map() };
 * const malformed: MalformedLine[] = [];
 * await Array.fromAsync(readUnits(bytes(), "a.jsonl", (m) => malformed.push(m), options));
 * await Array.fromAsync(readUnits(bytes(), "b.jsonl", (m) => malformed.push(m), options));
 * if (!malformed[0]?.message.includes('(first at "a.jsonl" line 1)')) throw new Error(malformed[0]?.message);
 * ```
 */
export interface ReadUnitsOptions {
  /**
   * The unit ids read so far (in Unicode NFC, so that "café" written two
   * ways is one id), each with where (`stdin line 3`): give one map to
   * several inputs to refuse an id repeated across them. Read units are
   * added to it.
   *
   * @default {a new map: this input's ids alone}
   */
  seen?: Map<string, string> | undefined;
  /**
   * The input as messages name it: its path, `-` for stdin (a file may be
   * called `stdin`).
   *
   * @default {`-` when `source` is `stdin`, else `source`}
   */
  place?: string | undefined;
}

/** The options with their defaults, read once per input, not per line. */
function unitsOptions(
  source: string,
  options: ReadUnitsOptions,
): { seen: Map<string, string>; place: string } {
  return {
    seen: options.seen ?? new Map(),
    place: options.place ?? (source === "stdin" ? "-" : source),
  };
}

/**
 * Reads unit records from NDJSON bytes (what `score` reads on stdin). A
 * record without ids gets `<source>#<id>` when it has an `id`, as a dataset
 * case does, else `<source>#<line>`; `expected` is kept verbatim. A
 * malformed line is passed to `onMalformed` and becomes a unit marked
 * `invalid` (its Scores are blocked `invalid case: …` Scores, as `run`
 * makes them), so that no line goes missing from the output.
 *
 * @param bytes The NDJSON.
 * @param source The name in fallback ids, e.g. `stdin`.
 * @param onMalformed Called for each malformed line, and for each unit
 *   whose `unit_id` was read before (it becomes an `invalid` unit).
 * @param options The unit ids read before, and how messages name the input.
 * @returns The units.
 *
 * @example
 * ```ts
 * import { readUnits } from "./unit.ts";
 * const bytes = new TextEncoder().encode('{"input":"q","output":"a"}\n{"input":1}\n');
 * const bad: number[] = [];
 * const units = await Array.fromAsync(readUnits(ReadableStream.from([bytes]), "stdin", (m) => bad.push(m.line)));
 * if (units[0]?.unit_id !== "stdin#1" || bad.join() !== "2") throw new Error("unexpected");
 * if (units[1]?.invalid === undefined || units[1].unit_id !== "stdin#2") throw new Error("unexpected");
 * ```
 */
export function readUnits(
  bytes: ReadableStream<Uint8Array>,
  source: string,
  onMalformed: (malformed: MalformedLine) => void,
  options: ReadUnitsOptions = {},
): ReadableStream<Unit> {
  const { seen, place } = unitsOptions(source, options);
  return bytes
    .pipeThrough(new LineStream())
    .pipeThrough(new NdjsonParseStream())
    .pipeThrough(
      new TransformStream<ParsedLine, Unit>({
        transform(parsed, controller) {
          const unit = unitOf(parsed, source, onMalformed);
          controller.enqueue(
            uniqueUnit(unit, source, place, parsed.line, seen, onMalformed),
          );
        },
      }),
    );
}

/**
 * Like {@linkcode readUnits}, but the units of each chunk of bytes come
 * together as one array (never an empty one): one stream step per chunk
 * rather than per unit, as `score` reads stdin.
 *
 * @param bytes The NDJSON.
 * @param source The name in fallback ids, e.g. `stdin`.
 * @param onMalformed Called for each malformed line, and for each unit
 *   whose `unit_id` was read before.
 * @param options The unit ids read before, and how messages name the input.
 * @returns The units, in batches.
 *
 * @example
 * ```ts
 * import { readUnitBatches } from "./mod.ts";
 * const bytes = new TextEncoder().encode('{"input":"q","output":"a"}\n\n{"input":1}\n');
 * const bad: number[] = [];
 * const batches = await Array.fromAsync(readUnitBatches(ReadableStream.from([bytes]), "stdin", (m) => bad.push(m.line)));
 * if (batches.length !== 1 || batches[0]!.length !== 2 || bad.join() !== "3") throw new Error("unexpected");
 * ```
 */
export function readUnitBatches(
  bytes: ReadableStream<Uint8Array>,
  source: string,
  onMalformed: (malformed: MalformedLine) => void,
  options: ReadUnitsOptions = {},
): ReadableStream<Unit[]> {
  const { seen, place } = unitsOptions(source, options);
  return bytes
    .pipeThrough(new LineBatchStream())
    .pipeThrough(
      new TransformStream<Line[], Unit[]>({
        transform(lines, controller) {
          const units: Unit[] = [];
          for (let i = 0; i < lines.length; i++) {
            const parsed = parsedLine(lines[i]!);
            if (parsed !== undefined) {
              units.push(
                uniqueUnit(
                  unitOf(parsed, source, onMalformed),
                  source,
                  place,
                  parsed.line,
                  seen,
                  onMalformed,
                ),
              );
            }
          }
          if (units.length > 0) controller.enqueue(units);
        },
      }),
    );
}

/** A line as {@linkcode NdjsonParseStream} parses it; a blank one is none. */
function parsedLine(line: Line): ParsedLine | undefined {
  if (line.error !== undefined) {
    return { line: line.line, text: line.text, error: line.error };
  }
  if (line.text.trim() === "") return undefined;
  try {
    return { line: line.line, text: line.text, value: JSON.parse(line.text) };
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    return {
      line: line.line,
      text: line.text,
      error: `Cannot parse JSON: ${error.message}`,
    };
  }
}

/**
 * The unit, or, when its unit id was read before, an `invalid` unit named
 * by where it stands (`stdin#line-7`) that says so: two units under one id
 * would give Scores no reader can tell apart.
 */
function uniqueUnit(
  unit: Unit,
  source: string,
  place: string,
  line: number,
  seen: Map<string, string>,
  onMalformed: (malformed: MalformedLine) => void,
): Unit {
  const where = placeOf(place, line);
  // In NFC, as the readers of the Scores compare unit ids.
  const key = nfcKey(unit.unit_id);
  const first = seen.get(key);
  if (first === undefined) {
    seen.set(key, where);
    return unit;
  }
  const id = placeId(source, line, where, seen);
  if (unit.invalid !== undefined) {
    // Malformed already, and said so: named by where it stands, its reason
    // kept.
    return { ...unit, example_id: id, unit_id: id };
  }
  const message = `Duplicate unit_id ${
    JSON.stringify(unit.unit_id)
  } (first at ${first}): unit ids must be unique`;
  onMalformed({ line, message });
  return {
    example_id: id,
    unit_id: id,
    input: "",
    output: null,
    invalid: message,
  };
}

/**
 * The id of a unit named by where it stands, `<source>#line-N`, with
 * `-invalid` added while a unit read before has it; marked as seen at `where`.
 */
function placeId(
  source: string,
  line: number,
  where: string,
  seen: Map<string, string>,
): string {
  let id = `${source}#line-${line}`;
  while (seen.has(nfcKey(id))) id += "-invalid";
  seen.set(nfcKey(id), where);
  return id;
}

/** The unit of a parsed line: its record, or an `invalid` unit that says why. */
function unitOf(
  parsed: ParsedLine,
  source: string,
  onMalformed: (malformed: MalformedLine) => void,
): Unit {
  // A key given twice (JSON.parse keeps the last): which was meant cannot
  // be known, nor, when it is one of them, the record's ids.
  const notes = { infinite: false };
  const twice = parsed.error === undefined &&
      typeof parsed.value === "object" && parsed.value !== null &&
      !Array.isArray(parsed.value)
    ? repeatedKey(parsed.text, parsed.value, 0, parsed.text.length, notes)
    : undefined;
  const trusted = twice === undefined || !UNIT_IDS.includes(twice.path)
    ? parsed.value
    : undefined;
  if (typeof trusted === "object" && trusted !== null) {
    keepVerbatimId(trusted, parsed.text);
  }
  const fallback = `${source}#${idOf(trusted) ?? parsed.line}`;
  const invalid = (message: string): Unit => {
    onMalformed({ line: parsed.line, message });
    const known = knownIds(trusted);
    const example_id = known.example_id ?? fallback;
    return {
      example_id,
      unit_id: known.unit_id ?? example_id,
      input: "",
      output: null,
      invalid: message,
    };
  };
  if (parsed.error !== undefined) return invalid(parsed.error);
  if (twice !== undefined) {
    return invalid(appearsTwice(twice.path));
  }
  // `1e400`: read as Infinity, which JSON text can only write as null.
  if (notes.infinite) {
    const overflow = overflowingNumber(parsed.value);
    if (overflow !== undefined) return invalid(overflow);
  }
  try {
    const unit = parseUnit(parsed.value, fallback);
    keepVerbatimExpected(unit, parsed.text);
    return unit;
  } catch (error) {
    if (!(error instanceof CaseError)) throw error;
    return invalid(error.message);
  }
}

/** The keys a unit record's ids are read from. */
const UNIT_IDS = ["id", "example_id", "unit_id"];

/** A record's own `id` (a non-empty string or a finite number), if any. */
function idOf(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const id = (value as { id?: unknown }).id;
  if (typeof id === "string" && id !== "") return id;
  if (typeof id === "number" && Number.isFinite(id)) return String(id);
  return undefined;
}

/** The ids a malformed record still names well, to keep its Scores in place. */
function knownIds(value: unknown): { example_id?: string; unit_id?: string } {
  if (typeof value !== "object" || value === null) return {};
  const { example_id, unit_id } = value as Record<string, unknown>;
  return {
    ...(typeof example_id === "string" && example_id !== ""
      ? { example_id }
      : {}),
    ...(typeof unit_id === "string" && unit_id !== "" ? { unit_id } : {}),
  };
}
