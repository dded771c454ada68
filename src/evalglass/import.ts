/**
 * Reading an evalglass `runrecord.json`: its Scores become evalpipe Scores,
 * and what evalpipe has no place for is named.
 *
 * @module
 */

import { isOsError } from "../base/errors.ts";
import { parseScore, type Score } from "../score/mod.ts";
import { isRunRecord, RunRecordError } from "../record/run_record.ts";
import { elementSpans, memberSpan } from "../io/_json_scan.ts";
import { jsonSyntaxPlace } from "../io/_json_syntax.ts";
import { restoreVerdict } from "./_verdict.ts";

/**
 * An evalglass RunRecord read by evalpipe.
 *
 * @example
 * ```ts
 * import { type EvalglassImport, fromEvalglass } from "./mod.ts";
 * const read: EvalglassImport = fromEvalglass({
 *   run_id: "r1", scorecard: { verdict: { verdict: "informational" }, metrics: [], authority: {} },
 *   scores: [{ metric: "m", status: "scored", validity: "valid", value: 0.4, evaluator_version: "m@1", example_id: "d#1" }],
 *   provenance: { dimensions: {} },
 * }, "runrecord.json");
 * if (read.scores[0]?.passed !== false || read.derivedPassed !== 1) throw new Error("unexpected");
 * ```
 */
export interface EvalglassImport {
  /** The record's run id. */
  run_id: string;
  /** Its Scores, in file order. */
  scores: Score[];
  /**
   * What evalpipe does not map, one phrase each (`scorecard.verdict
   * "informational"`, `evidence (3 records)`, ...).
   */
  unmapped: string[];
  /** How many Scores had no `passed` and got `value >= 0.5` (or `false`). */
  derivedPassed: number;
  /**
   * The metrics whose stored aggregate contradicts the Scores (value,
   * included count or counts by status, recomputed as evalglass does): a
   * record evalglass's own reader rejects.
   */
  contradicted: string[];
  /**
   * Each metric's declared value range, as evalpipe's export keeps it (in
   * the details of its `evalpipe.export` diagnostic); absent for a record
   * evalglass wrote itself, whose Scores do not say.
   */
  value_ranges?: Record<string, [number, number]>;
}

/**
 * Tells an evalglass RunRecord by its shape: an object with `run_id`,
 * `scorecard`, `scores` and `provenance`, and not evalpipe's own record.
 *
 * @param value A parsed JSON value.
 * @returns Whether it is one.
 *
 * @example
 * ```ts
 * import { isEvalglassRunRecord } from "./mod.ts";
 * if (!isEvalglassRunRecord({ run_id: "r", scorecard: {}, scores: [], provenance: {} })) throw new Error("unexpected");
 * if (isEvalglassRunRecord({ metric: "m" })) throw new Error("unexpected");
 * ```
 */
export function isEvalglassRunRecord(
  value: unknown,
): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return false;
  }
  const o = value as Record<string, unknown>;
  return !("evalpipe_run_record" in o) && "run_id" in o && "scorecard" in o &&
    Array.isArray(o.scores) && "provenance" in o;
}

/** The Scorecard keys evalpipe recomputes from the Scores rather than reads. */
const RECOMPUTED = new Set(["metrics", "estimates", "populations", "clusters"]);

function describe(key: string, value: unknown): string {
  if (Array.isArray(value)) {
    return `${key} (${value.length} ${
      value.length === 1 ? "entry" : "entries"
    })`;
  }
  if (typeof value === "string") return `${key} ${JSON.stringify(value)}`;
  return key;
}

/** evalglass's `_reduce`: the aggregation of a metric's scored and valid values. */
function reduce(kind: unknown, values: number[]): number | null {
  if (values.length === 0 || kind === "none") return null;
  // reduce, not Math.min(...values): spread as arguments, 130,000 values
  // overflow the call stack.
  if (kind === "min") return values.reduce((a, b) => Math.min(a, b));
  if (kind === "max") return values.reduce((a, b) => Math.max(a, b));
  if (kind === "median") {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1
      ? sorted[mid]!
      : (sorted[mid - 1]! + sorted[mid]!) / 2;
  }
  return values.reduce((a, b) => a + b, 0) / values.length; // mean, rate
}

function close(a: unknown, b: number | null): boolean {
  if (a === null || b === null) return a === b;
  return typeof a === "number" &&
    Math.abs(a - b) <=
      Math.max(1e-9 * Math.max(Math.abs(a), Math.abs(b)), 1e-12);
}

/** The metrics of the Scorecard that the Scores contradict, as evalglass checks them. */
function contradictedMetrics(
  scorecard: unknown,
  scores: readonly Score[],
): string[] {
  const metrics = (scorecard as { metrics?: unknown })?.metrics;
  if (!Array.isArray(metrics)) return [];
  const found: string[] = [];
  for (const m of metrics) {
    if (typeof m !== "object" || m === null) continue;
    const { metric, aggregation, value, included_count, status_counts } =
      m as Record<string, unknown>;
    const own = scores.filter((s) => s.metric === metric);
    const values = own.filter((s) =>
      s.status === "scored" && s.validity === "valid"
    )
      .map((s) => s.value as number);
    const counts: Record<string, number> = {};
    for (const s of own) counts[s.status] = (counts[s.status] ?? 0) + 1;
    const stored = (status_counts ?? {}) as Record<string, unknown>;
    const sameCounts =
      Object.keys(counts).length === Object.keys(stored).length &&
      Object.entries(counts).every(([k, n]) => stored[k] === n);
    if (
      !close(value, reduce(aggregation, values)) ||
      included_count !== values.length || !sameCounts
    ) found.push(String(metric));
  }
  return found;
}

/** The parts of an evalglass record evalpipe leaves behind, in file order. */
function unmappedParts(o: Record<string, unknown>): string[] {
  const parts: string[] = [];
  const scorecard = o.scorecard;
  if (typeof scorecard === "object" && scorecard !== null) {
    for (const [key, value] of Object.entries(scorecard)) {
      if (RECOMPUTED.has(key)) continue;
      if (key === "verdict" && typeof value === "object" && value !== null) {
        parts.push(
          describe(
            "scorecard.verdict",
            (value as { verdict?: unknown }).verdict,
          ),
        );
      } else parts.push(describe(`scorecard.${key}`, value));
    }
  }
  for (const [key, value] of Object.entries(o)) {
    if (key === "run_id" || key === "scores" || key === "scorecard") continue;
    parts.push(
      key === "provenance" ? "provenance.dimensions" : describe(key, value),
    );
  }
  return parts;
}

/**
 * Reads an evalglass RunRecord's Scores as evalpipe Scores: the vocabulary
 * is the same; a Score without `passed` gets `value >= 0.5` when scored,
 * `false` when an error or blocked. The Scorecard's verdict and authority,
 * the provenance dimensions, the judge evidence and the other parts evalpipe
 * has no place for are listed in `unmapped`; the aggregates are computed
 * from the Scores again.
 *
 * @param value The parsed `runrecord.json`.
 * @param path The file, for messages; `""` when the caller's message names
 *   the place itself.
 * @returns Its Scores and what was left out.
 * @param scorePlace Where the Score at an index stands, for its error
 *   (`"runrecord.json" line 14`; `""` when the caller names the place);
 *   without it, the record's `path`.
 * @throws {RunRecordError} When it is not an evalglass record or a Score in it is invalid.
 *
 * @example An error Score keeps its diagnostics and fails
 * ```ts
 * import { fromEvalglass } from "./mod.ts";
 * const { scores, unmapped } = fromEvalglass({
 *   run_id: "r1", scorecard: { verdict: { verdict: "blocked" }, metrics: [], authority: {} },
 *   scores: [{ metric: "m", status: "error", validity: "not_measured", value: null, evaluator_version: "m@1",
 *     diagnostics: [{ code: "judge.timeout", severity: "error", message: "the judge timed out" }] }],
 *   provenance: { dimensions: {} },
 * }, "runrecord.json");
 * if (scores[0]?.passed !== false || scores[0].diagnostics[0]?.code !== "judge.timeout") throw new Error("unexpected");
 * if (unmapped[0] !== 'scorecard.verdict "blocked"') throw new Error(unmapped.join());
 * ```
 */
export function fromEvalglass(
  value: unknown,
  path: string,
  scorePlace?: (index: number) => string,
): EvalglassImport {
  // "" when the caller's message names the place (a file and a line).
  const where = `Invalid evalglass run record${
    path === "" ? "" : ` ${JSON.stringify(path)}`
  }`;
  if (!isEvalglassRunRecord(value)) {
    throw new RunRecordError(
      `${where}: expected an object with "run_id", "scorecard", "scores" and "provenance"`,
    );
  }
  if (typeof value.run_id !== "string" || value.run_id === "") {
    throw new RunRecordError(`${where}: "run_id" must be a non-empty string`);
  }
  let derivedPassed = 0;
  const scores = (value.scores as unknown[]).map((read, i) => {
    const raw = restoreVerdict(read);
    if (typeof raw === "object" && raw !== null && !("passed" in raw)) {
      const status = (raw as { status?: unknown }).status;
      if (status === "scored" || status === "error" || status === "blocked") {
        derivedPassed++;
      }
    }
    try {
      refuseNulls(raw);
      return parseScore(raw);
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      const place = scorePlace?.(i);
      throw new RunRecordError(
        place === undefined
          ? `${where}: score ${i + 1}: ${error.message}`
          : `Invalid evalglass run record${
            place === "" ? "" : ` ${place}`
          }: score ${i + 1}: ${error.message}`,
      );
    }
  });
  const ranges = exportedRanges(value.scorecard);
  return {
    run_id: value.run_id,
    scores,
    unmapped: unmappedParts(value),
    derivedPassed,
    contradicted: contradictedMetrics(value.scorecard, scores),
    ...(ranges !== undefined ? { value_ranges: ranges } : {}),
  };
}

/**
 * Refuses a list or mapping given as `null`, as evalglass's reader does
 * ("must be a list when present"), though evalpipe's own Scores may read
 * it as absent: a record evalglass refuses is an input error here too.
 */
function refuseNulls(raw: unknown): void {
  if (typeof raw !== "object" || raw === null) return;
  const s = raw as Record<string, unknown>;
  const refuse = (field: string, kind: string) => {
    throw new SyntaxError(`${field} must be ${kind} when present, not null`);
  };
  if (s.diagnostics === null) refuse('"diagnostics"', "a list");
  if (s.evidence_refs === null) refuse('"evidence_refs"', "a list");
  if (s.provenance === null) refuse('"provenance"', "a mapping");
  if (!Array.isArray(s.diagnostics)) return;
  s.diagnostics.forEach((d: unknown, i) => {
    const o = d as Record<string, unknown> | null;
    if (typeof o !== "object" || o === null) return;
    const item = `"diagnostics" item ${i + 1}: `;
    if (o.details === null) refuse(`${item}"details"`, "a mapping");
    if (o.evidence_refs === null) refuse(`${item}"evidence_refs"`, "a list");
  });
}

/** The value ranges evalpipe's export put in its `evalpipe.export` diagnostic, when they are well formed. */
function exportedRanges(
  scorecard: unknown,
): Record<string, [number, number]> | undefined {
  const diagnostics = (scorecard as { diagnostics?: unknown })?.diagnostics;
  if (!Array.isArray(diagnostics)) return undefined;
  const mine = diagnostics.find((d) => d?.code === "evalpipe.export");
  const raw = mine?.details?.value_ranges;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return undefined;
  }
  const ranges: Record<string, [number, number]> = {};
  for (const [metric, r] of Object.entries(raw)) {
    // A range that is not one is left out: its metric is then not clamped.
    if (
      Array.isArray(r) && r.length === 2 && Number.isFinite(r[0]) &&
      Number.isFinite(r[1]) && r[0] <= r[1]
    ) ranges[metric] = [r[0], r[1]];
  }
  return ranges;
}

/** How a baseline `run --save-baseline` wrote opens. */
const BASELINE_START = /^\{\s*"evalpipe_baseline"\s*:/;

/** How much of a file is read to tell whether it may be an evalglass record. */
const SNIFF_BYTES = 65536;

/**
 * Reads a file as an evalglass RunRecord when it is one, and only then reads
 * it whole: a file whose first line is `{` alone (a JSON document written
 * with an indent, as evalglass writes it, never NDJSON) or a single line
 * that mentions `"scorecard"` is parsed and tested by its shape; anything
 * else (NDJSON of Scores, evalpipe's RunRecord) is left to the caller.
 *
 * @param path The file.
 * @returns Its Scores and what was left out, or `undefined` when it is not an evalglass record.
 * @throws {RunRecordError} When it is an evalglass record with an invalid Score.
 *
 * @example A Scores file is not an evalglass record
 * ```ts
 * import { readEvalglassRunRecord } from "./mod.ts";
 * const path = await Deno.makeTempFile();
 * await Deno.writeTextFile(path, '{"metric":"m","status":"skipped","validity":"not_measured","value":null,"evaluator_version":"m@1"}\n');
 * const read = await readEvalglassRunRecord(path);
 * await Deno.remove(path);
 * if (read !== undefined) throw new Error("unexpected");
 * ```
 */
export async function readEvalglassRunRecord(
  path: string,
): Promise<EvalglassImport | undefined> {
  let head: string;
  try {
    using file = await Deno.open(path);
    const buffer = new Uint8Array(SNIFF_BYTES);
    let filled = 0;
    while (filled < buffer.length) {
      const n = await file.read(buffer.subarray(filled));
      if (n === null) break;
      filled += n;
    }
    head = new TextDecoder().decode(buffer.subarray(0, filled), {
      stream: true,
    });
  } catch (error) {
    // The caller's own reading reports a file that cannot be read.
    if (isOsError(error)) return undefined;
    throw error;
  }
  const start = head.replace(/^\uFEFF/, "").trimStart();
  if (!start.startsWith("{") || isRunRecord(start)) return undefined;
  const newline = start.indexOf("\n");
  const firstLine = newline < 0 ? start : start.slice(0, newline);
  const candidate = firstLine.trim() === "{" ||
    ((newline < 0 || newline === start.trimEnd().length) &&
      firstLine.includes('"scorecard"'));
  if (!candidate) return undefined;
  let value: unknown;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(
      await Deno.readFile(path),
    ).replace(/^\uFEFF/, "");
  } catch (error) {
    // Not UTF-8: the caller reads it as what else it may be and says so.
    if (error instanceof TypeError) return undefined;
    throw error;
  }
  try {
    value = JSON.parse(text);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    const place = jsonSyntaxPlace(text);
    // Several documents (NDJSON, `jq .` output), or a baseline, whose reader
    // names its own errors: the caller reads it as what else it may be.
    if (
      place === undefined || place.afterValue ||
      BASELINE_START.test(start)
    ) return undefined;
    // One JSON document cut short or broken: read line by line, each of
    // its lines would be named as a malformed Score.
    throw new RunRecordError(
      `Cannot parse ${
        /^\s*"(?:run_id|scorecard)":/m.test(head) ? "evalglass run record " : ""
      }${
        JSON.stringify(path)
      } line ${place.line} column ${place.column}: ${place.problem}`,
    );
  }
  return isEvalglassRunRecord(value)
    ? fromEvalglass(
      value,
      path,
      (i) => `${JSON.stringify(path)} line ${scoreLineIn(text, i, 1)}`,
    )
    : undefined;
}

/**
 * The line the Score at `index` of a record's top-level `scores` starts on,
 * counted from `firstLine` (the line the document starts on).
 *
 * @param text The record's JSON text.
 * @param index The Score's index.
 * @param firstLine The number of the document's first line.
 * @returns The line, or `firstLine` when it cannot be found.
 */
export function scoreLineIn(
  text: string,
  index: number,
  firstLine: number,
): number {
  const span = memberSpan(text, "scores");
  if (span === undefined) return firstLine;
  const element = elementSpans(text.slice(span[0], span[1]))[index];
  if (element === undefined) return firstLine;
  const at = span[0] + element[0];
  let line = firstLine;
  for (
    let i = text.indexOf("\n");
    i >= 0 && i < at;
    i = text.indexOf("\n", i + 1)
  ) {
    line++;
  }
  return line;
}
