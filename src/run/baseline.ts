/**
 * Baselines: a run's accepted results kept as a small, reviewable file to
 * commit with the suite (`run --save-baseline NAME` writes
 * `.evalpipe/baselines/NAME.json` in the config's folder), and later runs
 * compared with it case by case (`run --baseline NAME`).
 *
 * @module
 */

import type { CaseRequirement } from "../aggregate/types.ts";
import type { RecordedCaseChange } from "../record/run_checks.ts";
import { fisherExactLower } from "../aggregate/stats.ts";
import { evaluatorsChanged } from "../diff/_evaluators.ts";
import {
  cannotOpen,
  InputError,
  isOsError,
  osErrorText,
  outputErrorOf,
} from "../base/errors.ts";
import { nfcKey } from "../base/nfc.ts";
import type { Unit } from "../dataset/unit.ts";
import { keepVerbatimExpected } from "../dataset/case.ts";
import type { CaseField, CasesChangedOptions } from "../diff/cases.ts";
import { elementSpans, memberSpan } from "../io/_json_scan.ts";
import { expectedAsWritten } from "../io/_number_text.ts";
import {
  caseIdOf,
  casePasses,
  diffLabel,
  type DiffLine,
  type DiffOptions,
  diffScores,
  significantlyWorse,
  unfitComparison,
} from "../diff/diff.ts";
import { resolveIn } from "../process/command.ts";
import { replaceFile } from "../io/replace_file.ts";
import {
  isRunRecord,
  readRunRecord,
  RunRecordError,
} from "../record/run_record.ts";
import { aggregatable, parseScore, type Score } from "../score/mod.ts";

/** What a baseline name may be: a file name, without a folder. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/**
 * The p-value below which a flaky case's fall counts as a regression.
 *
 * @example
 * ```ts
 * import { FLAKY_ALPHA } from "./mod.ts";
 * if (FLAKY_ALPHA !== 0.05) throw new Error("unexpected");
 * ```
 */
export const FLAKY_ALPHA = 0.05;

/**
 * A Score as a baseline keeps it: its verdict, value and version, without
 * the ids (its unit has them) or the diagnostics.
 *
 * @example
 * ```ts
 * import type { BaselineScore } from "./mod.ts";
 * const s: BaselineScore = { metric: "exact_match", status: "scored", validity: "valid", value: 1, passed: true, evaluator_version: "exact_match@1" };
 * if (s.passed !== true) throw new Error("unexpected");
 * ```
 */
export interface BaselineScore {
  /** The metric. */
  metric: string;
  /** The Score's status. */
  status: Score["status"];
  /** The Score's validity. */
  validity: Score["validity"];
  /** The value; `null` unless scored. */
  value: number | null;
  /** The verdict, when there is one. */
  passed?: boolean;
  /** The reason, when known. */
  reason?: string;
  /** The evaluator and its version. */
  evaluator_version: string;
}

/**
 * One unit of a baseline: what the system said, and its Scores.
 *
 * @example
 * ```ts
 * import type { BaselineUnit } from "./mod.ts";
 * const unit: BaselineUnit = { example_id: "d#1", unit_id: "d#1", input: "2+2?", output: "4", scores: [] };
 * if (unit.output !== "4") throw new Error("unexpected");
 * ```
 */
export interface BaselineUnit {
  /** The example. */
  example_id: string;
  /** The unit. */
  unit_id: string;
  /** In a matrix run, the target. */
  target_name?: string;
  /** The epoch, with several. */
  epoch?: number;
  /** The case's input, when the unit was known. */
  input?: unknown;
  /**
   * The case's expected answer, when it has one, its numbers as the
   * dataset wrote them (`1.0`, an integer past 2^53).
   */
  expected?: unknown;
  /** The case's context, when it has one. */
  context?: unknown;
  /** The case's metadata, when it has some. */
  metadata?: unknown;
  /** What the system said; `null` when the call failed. */
  output?: string | null;
  /** The target's error, when the call failed. */
  error?: string;
  /** The unit's Scores, in output order. */
  scores: BaselineScore[];
}

/**
 * A baseline file: pretty-printed JSON, keys in a fixed order, nothing that
 * changes from one identical run to the next (no run id, no times, no
 * latencies), and no secrets (outputs are redacted as everywhere else).
 *
 * @example
 * ```ts
 * import type { BaselineFile } from "./mod.ts";
 * const file: BaselineFile = { evalpipe_baseline: 1, epochs: 1, require: "all", units: [] };
 * if (file.units.length !== 0) throw new Error("unexpected");
 * ```
 */
export interface BaselineFile {
  /** The format's version. */
  evalpipe_baseline: 1;
  /** How many epochs each example ran. */
  epochs: number;
  /** When a case passed. */
  require: CaseRequirement;
  /** In a matrix run, the targets in order. */
  targets?: string[];
  /**
   * The fields of a case its units keep, which a later run's cases are
   * compared by; a file without it (an evalpipe before it kept context and
   * metadata) keeps `input` and `expected`.
   */
  case_fields?: CaseField[];
  /** The units, in the order the run wrote them. */
  units: BaselineUnit[];
}

/** The fields of a case a baseline keeps now. */
const CASE_FIELDS: CaseField[] = ["input", "expected", "context", "metadata"];

/**
 * Where a baseline lives: a bare name (`main`) is
 * `.evalpipe/baselines/<name>.json` in the config's folder; anything with a
 * `/` or ending `.json` is a path, relative to the current folder.
 *
 * @param nameOrPath The name or path.
 * @param configFolder The config file's folder.
 * @returns The file's path.
 * @throws {InputError} For a name that cannot be a file name.
 *
 * @example
 * ```ts
 * import { baselinePath } from "./mod.ts";
 * if (baselinePath("main", "suite") !== "suite/.evalpipe/baselines/main.json") throw new Error(baselinePath("main", "suite"));
 * if (baselinePath("out/b.json", "suite") !== "out/b.json") throw new Error("unexpected");
 * ```
 */
export function baselinePath(nameOrPath: string, configFolder: string): string {
  if (nameOrPath.includes("/") || nameOrPath.endsWith(".json")) {
    return nameOrPath;
  }
  if (!NAME.test(nameOrPath)) {
    throw new InputError(
      `Baseline name ${
        JSON.stringify(nameOrPath)
      } must be letters, digits, "_", "." and "-" (or a path to a .json file)`,
    );
  }
  return resolveIn(configFolder, `.evalpipe/baselines/${nameOrPath}.json`);
}

/**
 * Gathers what a baseline keeps as a run goes: each unit as the target
 * answers it, each Score as it is written.
 *
 * @example Two Scores of one unit, kept as one baseline unit
 * ```ts
 * import { BaselineCollector } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const c = new BaselineCollector();
 * c.addUnit({ example_id: "d#1", unit_id: "d#1", input: "q", output: "a", target: { latency_ms: 12 } });
 * c.addScore(scored("m", 1, { example_id: "d#1", unit_id: "d#1" }));
 * c.addScore(scored("n", 0, { example_id: "d#1", unit_id: "d#1" }));
 * const file = c.file({ epochs: 1, require: "all" });
 * if (file.units.length !== 1 || file.units[0]?.scores.length !== 2 || "target" in file.units[0]!) throw new Error();
 * ```
 */
export class BaselineCollector {
  #units = new Map<string, Unit>();
  #scores = new Map<string, Score[]>();
  #all: Score[] = [];

  /**
   * Keeps a unit's ids, input and output.
   *
   * @param unit The unit.
   */
  addUnit(unit: Unit): void {
    this.#units.set(unit.unit_id, unit);
  }

  /**
   * Keeps a Score, beside its unit.
   *
   * @param score The Score.
   */
  addScore(score: Score): void {
    this.#all.push(score);
    const id = score.unit_id ?? score.example_id ?? "";
    const list = this.#scores.get(id);
    if (list === undefined) this.#scores.set(id, [score]);
    else list.push(score);
  }

  /**
   * The units kept, each with its case's input and expected answer.
   *
   * @returns The units, in the order answered.
   */
  units(): Iterable<Unit> {
    return this.#units.values();
  }

  /**
   * Every Score kept, in the order written.
   *
   * @returns The Scores.
   */
  scores(): readonly Score[] {
    return this.#all;
  }

  /**
   * The baseline file of what was kept.
   *
   * @param settings The run's epochs, reducer and targets.
   * @returns The file's value.
   */
  file(
    settings: { epochs: number; require: CaseRequirement; targets?: string[] },
  ): BaselineFile {
    const units: BaselineUnit[] = [];
    for (const [id, scores] of this.#scores) {
      const unit = this.#units.get(id);
      const first = scores[0]!;
      // Keys in a fixed order, as a reviewer reads them.
      const entry = {
        example_id: unit?.example_id ?? first.example_id ?? id,
        unit_id: id,
      } as BaselineUnit;
      const target = unit?.target_name ?? first.target_name;
      if (target !== undefined) entry.target_name = target;
      if (unit?.epoch !== undefined && settings.epochs > 1) {
        entry.epoch = unit.epoch;
      }
      if (unit !== undefined) {
        entry.input = unit.input;
        if (unit.expected !== undefined) {
          entry.expected = expectedAsWritten(unit);
        }
        if (unit.context !== undefined) entry.context = unit.context;
        if (unit.metadata !== undefined) entry.metadata = unit.metadata;
        entry.output = unit.output;
        const error = unit.target?.error;
        if (typeof error === "string") entry.error = error;
      }
      entry.scores = scores.map(baselineScore);
      units.push(entry);
    }
    return {
      evalpipe_baseline: 1,
      epochs: settings.epochs,
      require: settings.require,
      ...(settings.targets !== undefined ? { targets: settings.targets } : {}),
      case_fields: CASE_FIELDS,
      units,
    };
  }
}

/**
 * How a baseline file's cases compare with a later run's: by the fields it
 * names. One without `case_fields` (an older evalpipe's) kept `input` and
 * `expected`, its numbers as `JSON.parse` read them (`1.0` as `1`): compared
 * so, or an unchanged dataset would be said to have changed.
 *
 * @param file The baseline, parsed.
 * @returns The options of `casesChanged`.
 *
 * @example A script saying what `run --baseline` says of an older baseline
 * ```ts
 * import { casesChanged } from "../diff/mod.ts";
 * import { type BaselineFile, casesKept } from "./mod.ts";
 * const older: BaselineFile = { evalpipe_baseline: 1, epochs: 1, require: "all", units: [{ example_id: "d#1", unit_id: "d#1", input: "q", expected: 1, scores: [] }] };
 * const now = [{ example_id: "d#1", input: "q", expected: 1, context: ["c"] }];
 * if (casesChanged(older.units, now, casesKept(older)) !== undefined) throw new Error("unexpected");
 * ```
 */
export function casesKept(file: BaselineFile): CasesChangedOptions {
  return Array.isArray(file.case_fields)
    ? { fields: file.case_fields }
    : { fields: ["input", "expected"], numbersAsWritten: false };
}

function baselineScore(s: Score): BaselineScore {
  // Keys in the Score's canonical order.
  return {
    metric: s.metric,
    status: s.status,
    validity: s.validity,
    value: s.value,
    ...(s.passed !== undefined ? { passed: s.passed } : {}),
    ...(s.reason !== undefined ? { reason: s.reason } : {}),
    evaluator_version: s.evaluator_version,
  };
}

/**
 * A baseline's settings as a recorded config states them: the epochs as
 * run, when a case passes, and a matrix's targets in order (what `run`
 * records in its RunRecord's `config`).
 *
 * @param config The `config` of a RunRecord.
 * @returns The epochs, the requirement when the config set one (the
 *   default is `all`) and the targets.
 *
 * @example
 * ```ts
 * import { baselineSettings } from "./mod.ts";
 * const s = baselineSettings({ epochs: { n: 3, require: "any" }, matrix: ["a", "b"] });
 * if (s.epochs !== 3 || s.require !== "any" || s.targets?.join() !== "a,b") throw new Error();
 * ```
 */
export function baselineSettings(
  config: Record<string, unknown>,
): { epochs: number; require?: CaseRequirement; targets?: string[] } {
  const epochs = config.epochs as
    | number
    | { n?: number; require?: CaseRequirement }
    | undefined;
  const matrix = config.matrix;
  return {
    epochs: (typeof epochs === "number" ? epochs : epochs?.n) ?? 1,
    ...(typeof epochs === "object" && epochs.require !== undefined
      ? { require: epochs.require }
      : {}),
    ...(Array.isArray(matrix) && matrix.length > 1
      ? { targets: matrix.map(String) }
      : {}),
  };
}

/**
 * The text of a baseline file: two-space JSON, one final line break.
 *
 * @param file The baseline.
 * @returns Its text.
 *
 * @example
 * ```ts
 * import { baselineText } from "./mod.ts";
 * const text = baselineText({ evalpipe_baseline: 1, epochs: 1, require: "all", units: [] });
 * if (!text.startsWith('{\n  "evalpipe_baseline": 1,') || !text.endsWith("}\n")) throw new Error(text);
 * ```
 */
export function baselineText(file: BaselineFile): string {
  return JSON.stringify(file, null, 2) + "\n";
}

/**
 * Writes a baseline file, creating its folder: whole, through a fresh file
 * renamed over it, so a reader never sees half a baseline and a disk that
 * refuses it leaves none behind.
 *
 * @param path Where.
 * @param file The baseline.
 * @throws {InputError} When its folder cannot be made or written in.
 * @throws {OutputError} When the disk refuses it (full, read-only).
 *
 * @example Write a baseline and read its Scores back
 * ```ts
 * import { readBaseline, writeBaseline } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await writeBaseline(`${dir}/b/main.json`, { evalpipe_baseline: 1, epochs: 1, require: "all", units: [
 *   { example_id: "d#1", unit_id: "d#1", input: "q", output: "a", scores: [
 *     { metric: "m", status: "scored", validity: "valid", value: 1, passed: true, evaluator_version: "m@1" }] }] });
 * const { scores } = await readBaseline(`${dir}/b/main.json`);
 * await Deno.remove(dir, { recursive: true });
 * if (scores[0]?.unit_id !== "d#1" || scores[0].value !== 1) throw new Error("unexpected");
 * ```
 */
export async function writeBaseline(
  path: string,
  file: BaselineFile,
): Promise<void> {
  const name = `baseline ${JSON.stringify(path)}`;
  const slash = path.lastIndexOf("/");
  const folder = path.slice(0, slash);
  try {
    if (slash > 0) await Deno.mkdir(folder, { recursive: true });
  } catch (error) {
    const failure = outputErrorOf(error, name);
    if (failure !== undefined) throw failure;
    // A file stands where a folder would be made: mkdir says EEXIST when it
    // is the last, ENOTDIR when it is one above; either way, named.
    if (
      error instanceof Deno.errors.AlreadyExists ||
      error instanceof Deno.errors.NotADirectory
    ) {
      const file = await fileInTheWay(folder) ??
        (error instanceof Deno.errors.AlreadyExists ? folder : undefined);
      if (file !== undefined) {
        throw new InputError(
          `Cannot write ${name}: ${
            JSON.stringify(file)
          } is a file, not a folder`,
        );
      }
    }
    if (!cannotOpen(error)) throw error;
    throw new InputError(`Cannot write ${name}: ${osErrorText(error)}`);
  }
  await replaceFile(path, baselineText(file), { name: "baseline" });
}

/** The first folder on `folder`'s path that is there but is no folder. */
async function fileInTheWay(folder: string): Promise<string | undefined> {
  const parts = folder.split("/");
  for (let i = 1; i <= parts.length; i++) {
    const prefix = parts.slice(0, i).join("/");
    if (prefix === "") continue; // The root of an absolute path.
    try {
      if (!(await Deno.stat(prefix)).isDirectory) return prefix;
    } catch (error) {
      // Missing, or not to be looked into: no file in the way up to there.
      if (cannotOpen(error)) return undefined;
      throw error;
    }
  }
  return undefined;
}

/**
 * Reads a baseline file back as its Scores, each with its unit's ids; a
 * RunRecord or a Scores file (`run --out`'s) serves as one too.
 *
 * @param path The file.
 * @returns The baseline and its Scores; for a RunRecord, its units as
 *   `cases` (the baseline it makes keeps none), whose inputs a run checks.
 * @throws {InputError} When it is missing or not a baseline: a RunRecord of
 *   a run that did not finish, a Scores file with a line that is not a Score,
 *   no Score, a Score without ids, or a sidecar that says its run stopped.
 *
 * @example A missing baseline says how to make one
 * ```ts
 * import { readBaseline } from "./mod.ts";
 * const error = await readBaseline("no/such/baseline.json").then(() => undefined, (e) => e as Error & { exitCode?: number });
 * if (error?.exitCode !== 2 || !error.message.includes("--save-baseline")) throw new Error(error?.message);
 * ```
 */
export async function readBaseline(
  path: string,
): Promise<{ file: BaselineFile; scores: Score[]; cases?: Unit[] }> {
  const bad = (why: string) =>
    new InputError(`Invalid baseline ${JSON.stringify(path)}: ${why}`);
  // Told by its start, so that a record or a Scores file is read once, by
  // its own reader; only a baseline file, or a file whose start does not
  // say, is read whole here, on from its start: a pipe (`/dev/stdin`,
  // `<(git show …)`) gives its text once.
  using head = await readOrSay(path, () => FileStart.open(path));
  const start = head.text;
  if (isRunRecord(start)) return await recordBaseline(path, bad);
  if (BASELINE_START.test(start)) {
    return parsedBaseline(await readOrSay(path, () => head.whole()));
  }
  // A line of Scores (`run --out`) is one JSON object; a baseline or a
  // record edited by hand (keys sorted, `jq -S`) is one JSON document.
  const newline = start.indexOf("\n");
  const line = newline >= 0
    ? jsonOrUndefined(start.slice(0, newline))
    : undefined;
  if (isPlainObject(line) && !isDocument(line)) {
    return await scoresBaseline(path, bad);
  }
  const text = await readOrSay(path, () => head.whole());
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    // An empty file holds no Score, and Scores whose first line is torn
    // still read as Scores: each is said so, naming the line.
    if (text.trim() === "" || looksLikeJsonLines(text)) {
      return await scoresBaseline(path, bad);
    }
    throw bad(
      `it is neither a baseline (run --save-baseline), a RunRecord (run --record) nor Scores (run --out): not one JSON document (${error.message}), nor one JSON object a line`,
    );
  }
  if (isDocument(document) && "evalpipe_baseline" in document) {
    return parsedBaseline(text, document);
  }
  if (isDocument(document)) {
    return await recordBaseline(path, bad);
  }
  return await scoresBaseline(path, bad);

  function parsedBaseline(
    text: string,
    parsed?: unknown,
  ): { file: BaselineFile; scores: Score[] } {
    let value = parsed;
    if (value === undefined) {
      try {
        value = JSON.parse(text);
      } catch (error) {
        if (!(error instanceof SyntaxError)) throw error;
        throw bad(error.message);
      }
    }
    const read = baselineScores(value, path);
    keepExpectedText(read.file, text);
    return read;
  }
}

/** How a saved baseline starts, as `run --save-baseline` writes it. */
const BASELINE_START = /^\s*\{\s*"evalpipe_baseline"\s*:/;

/** Enough of a file's start to tell what it is, and its first line. */
const START_BYTES = 64 * 1024;

/**
 * A file's first {@linkcode START_BYTES}, as text, and the whole of it when
 * asked, read on from the same opening: a pipe can be read only once.
 */
class FileStart implements Disposable {
  /** The start, as text: a character cut at its end reads as U+FFFD. */
  readonly text: string;
  #path: string;
  #file: Deno.FsFile;
  #bytes: Uint8Array;
  #ended: boolean;

  private constructor(
    path: string,
    file: Deno.FsFile,
    bytes: Uint8Array,
    ended: boolean,
  ) {
    this.#path = path;
    this.#file = file;
    this.#bytes = bytes;
    this.#ended = ended;
    this.text = new TextDecoder().decode(bytes);
  }

  /** Opens a file and reads its start. */
  static async open(path: string): Promise<FileStart> {
    const file = await Deno.open(path);
    try {
      const buffer = new Uint8Array(START_BYTES);
      let filled = 0;
      let ended = false;
      while (filled < buffer.length) {
        const n = await file.read(buffer.subarray(filled));
        if (n === null) {
          ended = true;
          break;
        }
        filled += n;
      }
      return new FileStart(path, file, buffer.subarray(0, filled), ended);
    } catch (error) {
      file.close();
      throw error;
    }
  }

  /**
   * The whole file as text, as `Deno.readTextFile` reads it (a BOM kept): a
   * file read again whole, a pipe read on from its start.
   */
  async whole(): Promise<string> {
    if ((await this.#file.stat()).isFile) {
      return await Deno.readTextFile(this.#path);
    }
    const chunks = [this.#bytes];
    let size = this.#bytes.length;
    while (!this.#ended) {
      const chunk = new Uint8Array(1 << 20);
      const n = await this.#file.read(chunk);
      if (n === null) this.#ended = true;
      else {
        chunks.push(chunk.subarray(0, n));
        size += n;
      }
    }
    const all = new Uint8Array(size);
    let at = 0;
    for (const chunk of chunks) {
      all.set(chunk, at);
      at += chunk.length;
    }
    return new TextDecoder("utf-8", { ignoreBOM: true }).decode(all);
  }

  [Symbol.dispose](): void {
    this.#file.close();
  }
}

/** Reads, naming in words a file the system refuses: never a trace. */
async function readOrSay<T>(path: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    // Any refusal of the system's (symlinks that loop, a path through a
    // file, a socket) is the user's to fix, named in words: never a trace.
    if (!isOsError(error)) throw error;
    const { notAFileText } = await import("../io/_not_a_file.ts");
    throw new InputError(
      `Cannot read baseline ${JSON.stringify(path)}: ${
        await notAFileText(path) ?? osErrorText(error)
      }${
        error instanceof Deno.errors.NotFound
          ? " (save one with run --save-baseline NAME)"
          : ""
      }`,
    );
  }
}

/**
 * A run's record as its baseline: a merged shard run's, an earlier run's
 * kept by CI. Read a line at a time, as `diff` reads it, so its units keep
 * their expected answers' number text.
 */
async function recordBaseline(
  path: string,
  bad: (why: string) => InputError,
): Promise<{ file: BaselineFile; scores: Score[]; cases: Unit[] }> {
  let record;
  try {
    record = await readRunRecord(path);
  } catch (error) {
    if (!(error instanceof RunRecordError)) throw error;
    throw bad(error.message);
  }
  if (!record.complete) {
    throw bad(
      "the run it records did not finish, so cases it never ran would count as removed (resume it, or merge every shard)",
    );
  }
  const settings = baselineSettings(record.config);
  return {
    file: {
      evalpipe_baseline: 1,
      epochs: settings.epochs,
      require: settings.require ?? "all",
      ...(settings.targets !== undefined ? { targets: settings.targets } : {}),
      units: [],
    },
    scores: record.scores,
    cases: record.units,
  };
}

function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    return undefined;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A saved baseline or a RunRecord, whatever order its keys are in. */
function isDocument(value: unknown): value is Record<string, unknown> {
  return isPlainObject(value) &&
    ("evalpipe_baseline" in value || "evalpipe_run_record" in value);
}

/**
 * Whether one of a text's first five lines that hold anything is a JSON
 * object: Scores, one a line, a line of them torn. Lines of a JSON document
 * sorted or cut apart are keys, brackets and values, never an object whole.
 */
function looksLikeJsonLines(text: string): boolean {
  let seen = 0;
  for (const line of text.split("\n", 1000)) {
    if (line.trim() === "") continue;
    if (isPlainObject(jsonOrUndefined(line))) return true;
    if (++seen === 5) return false;
  }
  return false;
}

/**
 * Attaches to each unit of a parsed baseline its expected answer's text as
 * the file writes it, which `JSON.parse` reads `1.0` as `1` and rounds an
 * integer past 2^53 in.
 */
function keepExpectedText(file: BaselineFile, text: string): void {
  const span = memberSpan(text, "units");
  if (span === undefined) return;
  const units = text.slice(span[0], span[1]);
  for (const [i, [start, end]] of elementSpans(units).entries()) {
    const unit = file.units[i];
    if (unit !== undefined) keepVerbatimExpected(unit, units, start, end);
  }
}

/**
 * A Scores file as a baseline: every line a Score with its unit's ids, of a
 * run that finished when its sidecar says. It keeps no cases, so no case
 * edited since is named.
 */
async function scoresBaseline(
  path: string,
  bad: (why: string) => InputError,
): Promise<{ file: BaselineFile; scores: Score[] }> {
  const [{ readScoresFile }, { readMeta }] = await Promise.all([
    import("../record/scores_file.ts"),
    import("./resume.ts"),
  ]);
  const { scores, problems } = await readScoresFile(path);
  const problem = problems[0];
  if (problem !== undefined) {
    // A baseline with a line missing would count its case as removed.
    throw new InputError(
      `Invalid baseline ${
        JSON.stringify(path)
      } line ${problem.line}: ${problem.message}${
        problems.length > 1 ? ` (and ${problems.length - 1} more lines)` : ""
      }`,
    );
  }
  if (scores.length === 0) {
    throw bad(
      "it holds no Score (save a baseline with run --save-baseline NAME, or give run --out's Scores file)",
    );
  }
  const anonymous =
    scores.filter((s) => s.example_id === undefined && s.unit_id === undefined)
      .length;
  if (anonymous > 0) {
    throw bad(
      `${anonymous} ${
        anonymous === 1 ? "Score carries" : "Scores carry"
      } no "example_id", so no case of the run pairs with ${
        anonymous === 1 ? "it" : "them"
      } (save a baseline with run --save-baseline NAME)`,
    );
  }
  const meta = await readMeta(path);
  if (meta?.complete === false) {
    throw bad(
      "the run that wrote it did not finish (its sidecar says), so cases it never ran would count as removed (resume it, or save a baseline with run --save-baseline NAME)",
    );
  }
  return {
    file: {
      evalpipe_baseline: 1,
      epochs: meta?.settings?.epochs ?? 1,
      require: meta?.settings?.require ?? "all",
      units: [],
    },
    scores,
  };
}

/**
 * A parsed baseline file as its Scores, each with its unit's ids: what
 * {@linkcode readBaseline} reads, for a reader that has parsed it already.
 *
 * @param value The parsed file.
 * @param path The file, for messages.
 * @returns The baseline and its Scores.
 * @throws {InputError} When it is not a baseline.
 *
 * @example
 * ```ts
 * import { baselineScores } from "./baseline.ts";
 * const { scores } = baselineScores({
 *   evalpipe_baseline: 1, epochs: 1, require: "all",
 *   units: [{ example_id: "d#1", unit_id: "d#1", scores: [{ metric: "m", status: "scored", validity: "valid", value: 1, evaluator_version: "m@1" }] }],
 * }, "b.json");
 * if (scores[0]?.unit_id !== "d#1" || scores[0].value !== 1) throw new Error("unexpected");
 * ```
 */
export function baselineScores(
  value: unknown,
  path: string,
): { file: BaselineFile; scores: Score[] } {
  const bad = (why: string) =>
    new InputError(`Invalid baseline ${JSON.stringify(path)}: ${why}`);
  const file = value as BaselineFile;
  if (
    typeof value !== "object" || value === null ||
    file.evalpipe_baseline !== 1 || !Array.isArray(file.units)
  ) {
    throw bad('not a baseline ("evalpipe_baseline": 1 and "units" expected)');
  }
  const scores: Score[] = [];
  for (const [i, unit] of file.units.entries()) {
    if (
      typeof unit !== "object" || unit === null ||
      typeof unit.unit_id !== "string" || typeof unit.example_id !== "string" ||
      !Array.isArray(unit.scores)
    ) {
      throw bad(`unit ${i + 1} needs "example_id", "unit_id" and "scores"`);
    }
    for (const s of unit.scores) {
      try {
        scores.push(parseScore({
          ...s,
          example_id: unit.example_id,
          unit_id: unit.unit_id,
          ...(unit.target_name !== undefined
            ? { target_name: unit.target_name }
            : {}),
        }));
      } catch (error) {
        if (!(error instanceof SyntaxError)) throw error;
        throw bad(`unit ${i + 1} (${unit.unit_id}): ${error.message}`);
      }
    }
  }
  return { file, scores };
}

/**
 * A case whose verdict on one metric changed, or whose epochs disagree: one
 * shape in the run and in its record.
 *
 * @example
 * ```ts
 * import type { CaseChange } from "./mod.ts";
 * const change: CaseChange = { case: "d#1", metric: "m", baseline: [5, 5], now: [0, 5], p_value: 1 / 252 };
 * if (change.now[0] !== 0) throw new Error("unexpected");
 * ```
 */
export type CaseChange = RecordedCaseChange;

/**
 * A run compared with its baseline.
 *
 * @example
 * ```ts
 * import { compareWithBaseline, type BaselineComparison } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const a = [scored("m", 1, { example_id: "d#1", unit_id: "d#1" })];
 * const b = [scored("m", 0, { example_id: "d#1", unit_id: "d#1" })];
 * const c: BaselineComparison = compareWithBaseline(a, b, "all");
 * if (c.newly_failing.length !== 1 || !c.failed) throw new Error("unexpected");
 * ```
 */
export interface BaselineComparison {
  /** Cases that failed in the baseline and pass now. */
  fixed: CaseChange[];
  /**
   * Cases that passed in the baseline and fail now (a flaky one only when
   * its pass fraction fell significantly): regressions.
   */
  newly_failing: CaseChange[];
  /** Cases whose epochs disagree, not counted as regressions. */
  flaky: CaseChange[];
  /** Cases run now and not in the baseline. */
  new_cases: string[];
  /** Cases in the baseline and not run now. */
  removed_cases: string[];
  /**
   * The paired difference per metric, as `diff` gives it: per target and
   * metric in a matrix, each line with its `target_name`.
   */
  metrics: DiffLine[];
  /**
   * Metrics of both runs whose Scores carry other `evaluator_version`s now
   * than in the baseline (a judge's prompt, a scorer's options, evalpipe's
   * reading of them changed): their cases are compared all the same, and a
   * change may be the evaluator's. Absent when none changed.
   */
  evaluators_changed?: EvaluatorChange[];
  /**
   * Cases kept by both runs with another input or expected answer now than
   * in the baseline (the dataset edited, ids kept): compared all the same,
   * so a change may be the case's. Set by `runSuite`, for a baseline file
   * or a RunRecord given as the baseline; absent when none differs, and
   * from {@linkcode compareWithBaseline}, whose Scores carry no case.
   */
  cases_changed?: {
    /** How many examples. */
    count: number;
    /** The first few, as the run wrote them. */
    examples: string[];
  };
  /**
   * The metrics whose paired difference is significantly negative, named
   * after their target in a matrix (`large: exact_match`).
   */
  worse: string[];
  /**
   * Why the run cannot be compared with the baseline, if it cannot (few
   * cases in common, a metric measured in no case of both), as `diff` says.
   */
  unfit: string[];
  /**
   * Whether the run regressed (a newly failing case, a worse metric) or
   * cannot be compared: that is no evidence of "no regression".
   */
  failed: boolean;
}

/**
 * A metric measured by another evaluator now than in the baseline.
 *
 * @example
 * ```ts
 * import type { EvaluatorChange } from "./mod.ts";
 * const change: EvaluatorChange = { metric: "exact_match", baseline: ["exact_match@1"], now: ["exact_match@1+ignore_case"] };
 * if (change.now[0] === change.baseline[0]) throw new Error("unexpected");
 * ```
 */
export interface EvaluatorChange {
  /** The metric. */
  metric: string;
  /** Its `evaluator_version`s in the baseline, sorted. */
  baseline: string[];
  /** Its `evaluator_version`s now, sorted. */
  now: string[];
}

/**
 * The metrics of both runs whose evaluator versions differ, by metric: the
 * same comparison as `diff`'s, named for a baseline.
 */
function evaluatorChanges(
  baseline: readonly Score[],
  now: readonly Score[],
): EvaluatorChange[] {
  return evaluatorsChanged(baseline, now).map((c) => ({
    metric: c.metric,
    baseline: c.a,
    now: c.b,
  }));
}

/** A case's passes and trials on one metric. */
type Tally = [number, number];

/**
 * Each case's tallies by metric, keyed by its id in Unicode NFC (two runs
 * may write an "é" two ways), and each id as the run wrote it.
 */
function tallies(
  scores: readonly Score[],
): [Map<string, Map<string, Tally>>, Map<string, string>] {
  const out = new Map<string, Map<string, Tally>>();
  const written = new Map<string, string>();
  for (const s of scores) {
    const raw = caseIdOf(s);
    if (raw === undefined) continue;
    const id = nfcKey(raw);
    if (!written.has(id)) written.set(id, raw);
    let metrics = out.get(id);
    if (metrics === undefined) out.set(id, metrics = new Map());
    let t = metrics.get(s.metric);
    if (t === undefined) metrics.set(s.metric, t = [0, 0]);
    // An error and a blocked Score fail, as in the pass rate; an invalid,
    // skipped or non_evaluable one is no trial.
    if (aggregatable(s)) {
      t[1]++;
      if (s.passed === true) t[0]++;
    } else if (s.status === "error" || s.status === "blocked") t[1]++;
  }
  return [out, written];
}

// Where pass flips are counted too (`diff`): re-exported for scripts that
// imported it from here.
export { casePasses };

/**
 * Compares a run with its baseline, case by case and metric by metric. A
 * case's verdict on a metric follows `require` over its epochs. A case
 * whose epochs disagree (in either run) is flaky: it is a regression only
 * when its pass fraction fell significantly (Fisher's exact test,
 * one-sided, p < 0.05); otherwise one that passed and fails now is a
 * regression. Cases pair by id in Unicode NFC, and are named as the run
 * (or, removed ones, the baseline) wrote them. A metric whose paired
 * difference's 95% interval lies below
 * zero is one too. A run that shares under half of its cases with the
 * baseline, or a metric measured in no case of both, cannot be compared,
 * which fails as a regression does.
 *
 * @param baseline The baseline's Scores.
 * @param now The run's Scores.
 * @param require When a case passes.
 * @param options The metrics' ranges, which clamp each paired
 *   difference's interval as `diff` clamps it.
 * @returns What changed.
 *
 * @example A case fixed, one removed, one new
 * ```ts
 * import { compareWithBaseline } from "./mod.ts";
 * import { scored } from "../score/mod.ts";
 * const s = (id: string, v: number) => scored("m", v, { example_id: id, unit_id: id });
 * const c = compareWithBaseline([s("d#1", 0), s("d#2", 1)], [s("d#1", 1), s("d#3", 1)], "all");
 * if (c.fixed[0]?.case !== "d#1" || c.removed_cases[0] !== "d#2" || c.new_cases[0] !== "d#3" || c.failed) throw new Error();
 * ```
 */
export function compareWithBaseline(
  baseline: readonly Score[],
  now: readonly Score[],
  require: CaseRequirement,
  options: DiffOptions = {},
): BaselineComparison {
  const [before, writtenBefore] = tallies(baseline);
  const [after, written] = tallies(now);
  const fixed: CaseChange[] = [];
  const newlyFailing: CaseChange[] = [];
  const flaky: CaseChange[] = [];
  for (const [id, metrics] of after) {
    const old = before.get(id);
    if (old === undefined) continue;
    for (const [metric, t] of metrics) {
      const b = old.get(metric);
      if (b === undefined || b[1] === 0 || t[1] === 0) continue;
      const change: CaseChange = {
        case: written.get(id)!,
        metric,
        baseline: [b[0], b[1]],
        now: [t[0], t[1]],
      };
      const wasPassing = casePasses(b[0], b[1], require);
      const passes = casePasses(t[0], t[1], require);
      const disagree = (x: Tally) => x[0] > 0 && x[0] < x[1];
      if (disagree(b) || disagree(t)) {
        change.p_value = fisherExactLower(b[0], b[1], t[0], t[1]);
        if (change.p_value < FLAKY_ALPHA) newlyFailing.push(change);
        else if (disagree(t)) flaky.push(change);
        else if (!wasPassing && passes) fixed.push(change);
        else flaky.push(change);
      } else if (wasPassing && !passes) newlyFailing.push(change);
      else if (!wasPassing && passes) fixed.push(change);
    }
  }
  // Target by target in a matrix: one target's regression is not averaged
  // away by another's gain.
  const metrics = diffScores(baseline, now, {
    ...options,
    require,
    byTarget: true,
  });
  const worse = metrics.filter(significantlyWorse).map(diffLabel);
  const unfit = unfitComparison(baseline, now, metrics);
  const evaluators = evaluatorChanges(baseline, now);
  return {
    fixed,
    newly_failing: newlyFailing,
    flaky,
    new_cases: [...after.keys()].filter((id) => !before.has(id))
      .map((id) => written.get(id)!),
    removed_cases: [...before.keys()].filter((id) => !after.has(id))
      .map((id) => writtenBefore.get(id)!),
    metrics,
    worse,
    unfit,
    ...(evaluators.length > 0 ? { evaluators_changed: evaluators } : {}),
    failed: newlyFailing.length > 0 || worse.length > 0 || unfit.length > 0,
  };
}
