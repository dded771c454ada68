/**
 * The subprocess scorer, protocol v0: a command run once per unit, the case
 * as JSON on stdin, a verdict as JSON on stdout.
 *
 * @module
 */

import { Sha256 } from "../fingerprint/_sha256.ts";
import { expectedJson } from "../io/_expected_text.ts";
import { memberNames } from "../io/_json_scan.ts";
import {
  failureMessage,
  notUtf8,
  notUtf8Warning,
  runCommand,
} from "../process/run_command.ts";
import type { RunResult } from "../process/types.ts";
import {
  defaultScorerName,
  refuseMissingScript,
  resolveIn,
  scriptOf,
} from "../process/command.ts";

export { defaultScorerName, scriptOf };
import type { Score } from "../score/mod.ts";
import {
  scoreFromVerdict,
  type Scorer,
  type ScorerContext,
  UNIT_RANGE,
  type Verdict,
} from "./scorer.ts";
import type { Unit } from "../dataset/unit.ts";
import { clip } from "../base/terminal.ts";

/**
 * Options of {@linkcode subprocessScorer}.
 *
 * @example Name the metric, run in a folder, with a timeout and output caps
 * ```ts
 * import { subprocessScorer, type SubprocessScorerOptions } from "./mod.ts";
 * const options: SubprocessScorerOptions = { name: "ok", cwd: "/", timeout: 10, maxStdoutBytes: 4096, maxStderrBytes: 4096 };
 * const s = subprocessScorer(`cat >/dev/null; echo '{"score": 1, "reason": "fine"}'`, options);
 * const score = await s.score({ example_id: "a#1", unit_id: "a#1", input: "q", output: "a" }, {});
 * if ("scores" in score || score.metric !== "ok" || !s.version.startsWith("ok@")) throw new Error("unexpected");
 * ```
 */
export interface SubprocessScorerOptions {
  /**
   * The metric name.
   * @default {the file name, without extension, of the script the command runs; for a command that names none, its program's (`sh` for `sh -c '...'`)}
   */
  name?: string | undefined;
  /**
   * The folder the command runs in (`sh -c` there).
   * @default {Deno.cwd()}
   */
  cwd?: string | undefined;
  /**
   * Seconds a run may take before its process group is killed.
   * @default {60}
   */
  timeout?: number | undefined;
  /**
   * The most stdout read from one run; more is an error.
   * @default {1048576}
   */
  maxStdoutBytes?: number | undefined;
  /**
   * The most stderr read from one run; more is an error.
   * @default {1048576}
   */
  maxStderrBytes?: number | undefined;
  /**
   * What a cap's error names as raising it, when the caps come from a
   * setting of the caller's own (a suite's `max_output_bytes`, a tool's
   * flag) rather than these options.
   * @default {the option of the stream's cap: "maxStdoutBytes" or "maxStderrBytes"}
   */
  capSetting?: string | undefined;
}

/**
 * A scorer failure, with the protocol's exact message.
 *
 * @example A scorer that exits non-zero
 * ```ts
 * import { subprocessScorer, SubprocessScorerError } from "./mod.ts";
 * const s = subprocessScorer("cat >/dev/null; exit 1", { name: "broken" });
 * const error = await Promise.resolve(s.score({ example_id: "a#1", unit_id: "a#1", input: "q", output: "a" }, {}))
 *   .then(() => undefined, (e: unknown) => e);
 * if (!(error instanceof SubprocessScorerError) || !error.message.includes("exit")) throw new Error(String(error));
 * ```
 */
export class SubprocessScorerError extends Error {
  /**
   * Creates the instance.
   *
   * @param message The protocol's message, e.g. `scorer "x" printed invalid verdict JSON: "no"`.
   */
  constructor(message: string, code = "scorer.error") {
    super(message);
    this.name = "SubprocessScorerError";
    this.code = code;
  }

  /** The diagnostic code of the failure, e.g. `scorer.timeout`. */
  readonly code: string;
}

/**
 * The diagnostic code of a run that did not end in exit status 0 (see
 * {@linkcode failureMessage} for its message).
 *
 * @param result How the run ended.
 * @returns The code, e.g. `scorer.timeout`.
 *
 * @example
 * ```ts
 * import { failureCode } from "./subprocess_scorer.ts";
 * if (failureCode({ kind: "timeout", ms: 5000 }) !== "scorer.timeout") throw new Error("unexpected");
 * ```
 */
export function failureCode(result: RunResult): string {
  switch (result.kind) {
    case "spawn_failed":
      return "scorer.spawn_failed";
    case "timeout":
      return "scorer.timeout";
    case "overflow":
      return "scorer.output_cap";
    case "aborted":
      return "scorer.interrupted";
    case "exited":
      return "scorer.exit_status";
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The protocol v0 payload for a unit: compact JSON with the keys `context`
 * (only when the unit has a context list), `expected` (verbatim, `null` when
 * absent), `input` (a string: a list of chat messages as its JSON text) and
 * `output` (a string: `""` for a null output), in that order.
 *
 * @param unit The unit.
 * @returns The JSON text.
 *
 * @example
 * ```ts
 * import { scorerPayload } from "./subprocess_scorer.ts";
 * const p = scorerPayload({ example_id: "a#1", unit_id: "a#1", input: "q", output: "a" });
 * if (p !== '{"expected":null,"input":"q","output":"a"}') throw new Error(p);
 * ```
 */
export function scorerPayload(unit: Unit): string {
  const context = Array.isArray(unit.context)
    ? `"context":${JSON.stringify(unit.context)},`
    : "";
  // Protocol v0's input is a string: a list of chat messages goes as its
  // JSON text, which a scorer can read back (json.loads) or search as text.
  const input = typeof unit.input === "string"
    ? unit.input
    : JSON.stringify(unit.input);
  // Its output is a string too: a unit a script built with `output: null`
  // (no target error) is read as the built-in scorers read it, "".
  return `{${context}"expected":${expectedJson(unit)},"input":${
    JSON.stringify(input)
  },` +
    `"output":${JSON.stringify(unit.output ?? "")}}`;
}

function quote(text: string, max = 1000): string {
  return JSON.stringify(clip(text, max));
}

/**
 * Reads a verdict from a scorer's stdout, as protocol v0 says: trimmed, one
 * JSON object, `score` a number within 0..1, `passed` a boolean and `reason`
 * a string when present; other fields are ignored. `"passed": null` and
 * `"reason": null` are absent, as EvalCore's reference reader takes them
 * (Python's `None`): `passed` then defaults to `score >= 0.5`.
 *
 * @param cmd The command, for messages.
 * @param stdout What it printed.
 * @returns The verdict.
 * @throws {SubprocessScorerError} With the protocol's message.
 *
 * @example
 * ```ts
 * import { parseVerdict, SubprocessScorerError } from "./mod.ts";
 * const verdict = parseVerdict("./judge.sh", ' {"score": 0.5, "passed": true, "extra": 1}\n');
 * if (verdict.score !== 0.5 || verdict.passed !== true || "extra" in verdict) throw new Error();
 * const none = parseVerdict("./judge.py", '{"score": 0.7, "passed": null, "reason": null}');
 * if ("passed" in none || "reason" in none) throw new Error("null is absent");
 * try {
 *   parseVerdict("./judge.sh", '{"score": 2}');
 *   throw new Error("accepted");
 * } catch (error) {
 *   if (!(error instanceof SubprocessScorerError) || !error.message.includes("outside")) throw error;
 * }
 * ```
 */
export function parseVerdict(cmd: string, stdout: string): Verdict {
  const text = trimmed(stdout);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    if (error instanceof SyntaxError) {
      throw invalidVerdict(cmd, text, notJsonHint(text));
    }
    throw error;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidVerdict(cmd, text, shapeHint(value, text));
  }
  const { score, passed, reason } = value as Record<string, unknown>;
  if (typeof score !== "number" || !Number.isFinite(score)) {
    throw invalidVerdict(cmd, text, scoreHint(value as object, score));
  }
  // null is absent (serde's Option), anything else must have its type.
  if (passed != null && typeof passed !== "boolean") {
    throw invalidVerdict(
      cmd,
      text,
      ` ("passed" is ${clip(JSON.stringify(passed), 40)}: true, false or null)`,
    );
  }
  if (reason != null && typeof reason !== "string") {
    throw invalidVerdict(
      cmd,
      text,
      ` ("reason" is ${clip(JSON.stringify(reason), 40)}: a string or null)`,
    );
  }
  // A field given twice: which was meant cannot be known (EvalCore's serde
  // refuses it; JSON.parse would keep the last).
  const twice = repeatedField(text);
  if (twice !== undefined) {
    throw invalidVerdict(cmd, text, ` (it gives "${twice}" twice)`);
  }
  if (score < 0 || score > 1) {
    throw new SubprocessScorerError(
      `scorer ${JSON.stringify(cmd)} returned score ${score} outside 0.0..=1.0`,
      "scorer.out_of_range",
    );
  }
  // Built without spreads: this runs once per case.
  const verdict: Verdict = { score };
  if (passed != null) verdict.passed = passed as boolean;
  if (reason != null) verdict.reason = reason as string;
  return verdict;
}

function invalidVerdict(
  cmd: string,
  text: string,
  why = "",
): SubprocessScorerError {
  return new SubprocessScorerError(
    `scorer ${JSON.stringify(cmd)} printed invalid verdict JSON: ${
      quote(text)
    }${why}`,
    "scorer.invalid_verdict",
  );
}

/**
 * A note for a scorer that printed a good verdict and then exited non-zero
 * without a word on stderr, as one does that takes its exit status for the
 * case's pass or fail (a crash says why on stderr, and needs no note).
 */
function verdictBeforeExit(cmd: string, result: RunResult): string {
  if (
    result.kind !== "exited" || result.signal !== null ||
    decoder.decode(result.stderr).trim() !== ""
  ) return "";
  try {
    parseVerdict(cmd, decoder.decode(result.stdout));
  } catch (error) {
    if (error instanceof SubprocessScorerError) return "";
    throw error;
  }
  return ' (after a verdict on stdout: a non-zero exit is a scorer error, not a failing case; say that with "passed": false and exit 0)';
}

/**
 * What a scorer author would most likely have to change, for stdout that is
 * not JSON: the usual slips of a first scorer. Only for a refused verdict.
 */
function notJsonHint(text: string): string {
  if (text === "") {
    return ' (stdout is empty: print one JSON object, {"score": …})';
  }
  // The score alone, as a line of text (`Score: 0.8`, `score=1`).
  const line = /^score\s*[:=]\s*(\S+)$/i.exec(text);
  if (line !== null) {
    const number = plainDecimal(line[1]!);
    return ` (a verdict is a JSON object: {"score": ${
      number !== undefined && number >= 0 && number <= 1 ? number : "…"
    }})`;
  }
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== "");
  let objects = 0;
  for (const line of lines) {
    try {
      const value = JSON.parse(line);
      if (typeof value === "object" && value !== null) objects++;
    } catch (error) {
      // Not JSON: a log line.
      if (!(error instanceof SyntaxError)) throw error;
    }
  }
  if (objects > 1) {
    return ` (it printed ${objects} JSON objects, one a line: print one verdict)`;
  }
  if (objects === 1) {
    return " (a verdict line among other lines: write logs and debug lines to stderr, and only the verdict to stdout)";
  }
  // No JSON verdict line: a dict or object printed as the language shows
  // it, on any line (a log line may come first).
  if (/^\{\s*'/m.test(text)) {
    return " (a Python dict, not JSON: print json.dumps(verdict))";
  }
  if (/^\{\s*[A-Za-z_$][\w$]*\s*:/m.test(text)) {
    return " (a JavaScript object, not JSON: print JSON.stringify(verdict))";
  }
  // Where a value stands (Python's json.dumps writes them so), not a word
  // of a log line ("checking for NaN") beside a good verdict.
  if (/[:,[]\s*-?(?:NaN|Infinity)\s*[,}\]]/.test(text)) {
    return " (NaN and Infinity are neither JSON nor a score: a scorer that cannot score a case exits non-zero, saying why on stderr)";
  }
  return "";
}

/** Why a JSON value that is no object is no verdict. */
function shapeHint(value: unknown, text: string): string {
  if (typeof value === "number" && value >= 0 && value <= 1) {
    return ` (a verdict is a JSON object: {"score": ${text}})`;
  }
  if (typeof value === "string" && /^\s*\{/.test(value)) {
    return " (a JSON string holding a verdict: its JSON was encoded twice; print the object once)";
  }
  return ' (a verdict is a JSON object: {"score": …})';
}

/** Why a verdict object's `score` is no score. */
function scoreHint(verdict: object, score: unknown): string {
  if (!("score" in verdict)) return noScoreHint(verdict);
  if (typeof score === "string") {
    const quoted = JSON.stringify(clip(score, 40));
    const number = plainDecimal(score);
    if (number === undefined) {
      return ` ("score" is the string ${quoted}, not a number)`;
    }
    return number >= 0 && number <= 1
      ? ` ("score" is the string ${quoted}: write the number, ${number})`
      : ` ("score" is the string ${quoted}, and a score is a number within 0..1)`;
  }
  if (typeof score === "boolean") {
    return ` ("score" is ${score}, not a number: write ${
      score ? 1 : 0
    }, and "passed": ${score} if it says whether the case passes)`;
  }
  if (score === null) {
    return ' ("score" is null: a scorer that cannot score a case exits non-zero, saying why on stderr)';
  }
  return typeof score === "number"
    ? ' ("score" is too large a number)'
    : ' ("score" is not a number)';
}

/**
 * The key to use, for a verdict without `score`: one that reads like it
 * (`value`, `Score`, `faithfulness_score`) is to be named so, and one that
 * says only whether the case passed (`passed`, `pass`) needs a `score`
 * beside it. Only the three fields are read, as protocol v0 says.
 */
function noScoreHint(verdict: object): string {
  const entries = Object.entries(verdict);
  const near = (number: boolean) =>
    entries.find(([key, value]) =>
      NEAR_SCORE.test(key) && (typeof value === "number") === number
    );
  const number = near(true);
  if (number !== undefined) {
    // Renamed, a value outside 0..1 (`{"value": 85}`, a percentage) would
    // only be refused again, as out of range.
    const value = number[1] as number;
    return ` (it has no "score"; it gives ${JSON.stringify(number[0])}: ${
      value >= 0 && value <= 1
        ? 'name it "score")'
        : `name it "score", and give a number within 0..1, not ${value})`
    }`;
  }
  // A pass beside a key that holds no number (`"score_reason"`): the pass
  // says what the score is; that key would be no score renamed.
  const pass = entries.find(([key, value]) =>
    NEAR_PASSED.test(key) && typeof value === "boolean"
  );
  if (pass !== undefined) {
    return ` (it has no "score", which every verdict gives: {"score": ${
      pass[1] ? 1 : 0
    }, "passed": ${pass[1]}})`;
  }
  const other = near(false);
  return other === undefined
    ? ' (it has no "score")'
    : ` (it has no "score"; it gives ${
      JSON.stringify(other[0])
    }: a verdict's number is its "score")`;
}

const NEAR_SCORE = /score|^(?:value|result|rating|grade|verdict)$/i;
const NEAR_PASSED = /^(?:pass(?:ed)?|ok|success|correct)$/i;

/**
 * The number a string writes as a plain decimal (`"0.8"`, `" .5 "`, `"85"`),
 * the only kind taken for the number its author meant: `"0x1"`, `"1e3"` and
 * `"Infinity"` are numbers to `Number()`, but no score anyone wrote by hand.
 */
function plainDecimal(text: string): number | undefined {
  return /^\s*-?(?:\d+(?:\.\d*)?|\.\d+)\s*$/.test(text)
    ? Number(text)
    : undefined;
}

/**
 * Stdout trimmed as EvalCore trims it (Rust's `str::trim`: Unicode
 * White_Space, so NEL U+0085 too). `String.prototype.trim` differs only in
 * U+0085 and in also taking the BOM U+FEFF, which evalpipe keeps taking: a
 * verdict a Windows tool wrote with a BOM is no less a verdict.
 */
function trimmed(stdout: string): string {
  const text = stdout.trim();
  return text.includes("\u0085") ? text.replace(NEL_ENDS, "").trim() : text;
}

const NEL_ENDS = /^[\s\u0085]+|[\s\u0085]+$/g;

/** The verdict field (`score`, `passed`, `reason`) the object gives twice. */
function repeatedField(text: string): string | undefined {
  // Each name's text once at most, and no \u escape that could spell one:
  // no field is repeated (the usual case, for a few searches).
  let maybe = text.includes("\\u");
  for (let i = 0; i < VERDICT_FIELDS.length && !maybe; i++) {
    const quoted = `"${VERDICT_FIELDS[i]}"`;
    const at = text.indexOf(quoted);
    maybe = at >= 0 && text.indexOf(quoted, at + 1) >= 0;
  }
  if (!maybe) return undefined;
  const seen = new Set<string>();
  for (const name of memberNames(text)) {
    if (!VERDICT_FIELDS.includes(name)) continue;
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
}

const VERDICT_FIELDS = ["score", "passed", "reason"];

/**
 * What a subprocess scorer is, in either mode: its folder, metric name,
 * version and timeout (checked).
 *
 * @param built What is being built (`subprocessScorer`), for messages.
 * @param cmd The command.
 * @param options Its name, folder and timeout.
 * @returns The settings with their defaults.
 * @throws {RangeError} When the timeout is not a positive number.
 * @throws {InputError} When the script the command names does not exist.
 */
export function subprocessScorerSetup(
  built: string,
  cmd: string,
  options: {
    name?: string | undefined;
    cwd?: string | undefined;
    timeout?: number | undefined;
  },
): { cwd: string; name: string; version: string; timeout: number } {
  const cwd = options.cwd ?? Deno.cwd();
  refuseMissingScript(built, cmd, cwd);
  const name = options.name ?? defaultScorerName(cmd, cwd);
  const timeout = options.timeout ?? 60;
  if (!(timeout > 0) || !Number.isFinite(timeout)) {
    throw new RangeError(
      `The timeout must be a positive number of seconds, not ${timeout}`,
    );
  }
  return {
    cwd,
    name,
    version: subprocessScorerVersion(name, cmd, cwd),
    timeout,
  };
}

/**
 * A subprocess scorer's `evaluator_version`: its name and a short hash of
 * its command and of the script file the command runs.
 *
 * @param name The metric name.
 * @param cmd The command.
 * @param cwd The folder it runs in.
 * @returns E.g. `faithfulness@3f2a9c1d`.
 */
export function subprocessScorerVersion(
  name: string,
  cmd: string,
  cwd: string,
): string {
  const hash = new Sha256().update(cmd).update("\0");
  const script = scriptOf(cmd, cwd);
  if (script !== undefined) {
    hash.update(Deno.readFileSync(resolveIn(cwd, script)));
  }
  return `${name}@${hash.hex().slice(0, 8)}`;
}

/**
 * A scorer that runs `cmd` via `sh -c` once per unit, in its own process
 * group, per the subprocess scorer protocol v0. Its `evaluator_version` is
 * its name plus a short hash of the command and of the script file the
 * command names, so editing the script changes it.
 *
 * Failures are thrown as {@linkcode SubprocessScorerError} with the
 * protocol's message; the scoring stage turns them into `error` Scores.
 *
 * @param cmd The command.
 * @param options Name, folder, timeout and output caps.
 * @returns The scorer.
 * @throws {InputError} When the script the command names does not exist
 *   (`python3 scorers/grade.py` with no such file under `cwd`), as a config
 *   naming it is refused.
 * @throws {RangeError} When the timeout is not a positive number.
 *
 * @example
 * ```ts
 * import { subprocessScorer } from "./subprocess_scorer.ts";
 * const s = subprocessScorer(`cat >/dev/null; echo '{"score": 1}'`, { name: "always" });
 * const score = await s.score({ example_id: "a#1", unit_id: "a#1", input: "q", output: "a" }, {});
 * if ("scores" in score || score.value !== 1) throw new Error("unexpected");
 * ```
 */
export function subprocessScorer(
  cmd: string,
  options: SubprocessScorerOptions = {},
): Scorer {
  const { cwd, name, version, timeout } = subprocessScorerSetup(
    "subprocessScorer",
    cmd,
    options,
  );
  const maxStdoutBytes = options.maxStdoutBytes ?? 1024 * 1024;
  const maxStderrBytes = options.maxStderrBytes ?? 1024 * 1024;
  const capSetting = options.capSetting;
  const timeoutMs = timeout * 1000;
  return {
    name,
    version,
    range: UNIT_RANGE,
    async score(unit: Unit, context: ScorerContext): Promise<Score> {
      const stdin = encoder.encode(scorerPayload(unit));
      const signal = context.signal;
      // One options object per case, made without spreads.
      const result = await runCommand(
        cmd,
        signal === undefined
          ? { cwd, stdin, timeoutMs, maxStdoutBytes, maxStderrBytes }
          : { cwd, stdin, timeoutMs, maxStdoutBytes, maxStderrBytes, signal },
      );
      // The common case first: exit status 0 needs no failure message.
      if (
        result.kind !== "exited" || result.code !== 0 || result.signal !== null
      ) {
        // Any other ending has its message.
        throw new SubprocessScorerError(
          failureMessage("scorer", cmd, result, timeout, { capSetting })! +
            verdictBeforeExit(cmd, result),
          failureCode(result),
        );
      }
      const text = decoder.decode(result.stdout);
      const score = scoreFromVerdict(name, version, parseVerdict(cmd, text));
      if (notUtf8(text, result.stdout)) {
        score.diagnostics.push(notUtf8Warning(cmd));
      }
      return score;
    },
  };
}
