/**
 * The Score model: one metric result, its value separated from its meaning.
 *
 * A Score has a `status` (does a value exist?) and a `validity` (can it be
 * trusted?). Only a `scored` Score carries a number, and only a `scored` and
 * `valid` Score enters aggregation. Anything else carries `value: null`: an
 * error is never a 0.0.
 *
 * @module
 */

/** Whether a value exists: `scored` is the only status that carries one. */
export type ScoreStatus = "scored" | "skipped" | "not_applicable" | "error";

/** Whether a value can be trusted: only `valid` values are aggregated. */
export type ScoreValidity = "valid" | "invalid";

/** The statuses, in the order the design lists them. */
export const SCORE_STATUSES: readonly ScoreStatus[] = [
  "scored",
  "skipped",
  "not_applicable",
  "error",
];

/** The validities, in the order the design lists them. */
export const SCORE_VALIDITIES: readonly ScoreValidity[] = ["valid", "invalid"];

/** A note attached to a Score, such as the message of the error behind it. */
export interface Diagnostic {
  /** How serious the note is. */
  level: "error" | "warning" | "info";
  /** What happened, for a person. */
  message: string;
}

/** One metric result for one unit. */
export interface Score {
  /** The metric's name, e.g. `exact_match` or `faithfulness`. */
  metric: string;
  /** Whether a value exists. */
  status: ScoreStatus;
  /** Whether the value can be trusted. */
  validity: ScoreValidity;
  /** A finite number exactly when `status` is `scored`, else `null`. */
  value: number | null;
  /** The verdict; `false` for an error, `null` when skipped or not applicable. */
  passed: boolean | null;
  /** A human-readable explanation, present only when known. */
  reason?: string;
  /** The evaluator and its version, never empty, e.g. `exact_match@1`. */
  evaluator_version: string;
  /** The example this Score measured, stamped by the pipeline. */
  example_id?: string;
  /** The unit (one target call) this Score measured, stamped by the pipeline. */
  unit_id?: string;
  /** Notes on how the Score came about. */
  diagnostics: Diagnostic[];
  /** References to evidence behind the Score (trace ids, file paths). */
  evidence_refs: string[];
  /** Where the Score came from (judge model, prompt hash, ...), when known. */
  provenance?: Record<string, unknown>;
}

/** Several related Scores from one pass of one evaluator, each independently statused. */
export interface ScoreBatch {
  /** The Scores, one per declared metric. */
  scores: Score[];
}

/** Thrown when a Score would break the Score rules. */
export class ScoreError extends TypeError {
  /**
   * Creates the instance.
   *
   * @param message What rule was broken.
   */
  constructor(message: string) {
    super(message);
    this.name = "ScoreError";
  }
}

/** The fields every constructor takes besides the metric and the value. */
export interface ScoreOptions {
  /**
   * The evaluator and its version.
   * @default {`${metric}@1`}
   */
  evaluator_version?: string;
  /**
   * A human-readable explanation.
   * @default {undefined}
   */
  reason?: string;
  /**
   * The example this Score measured.
   * @default {undefined}
   */
  example_id?: string;
  /**
   * The unit this Score measured.
   * @default {undefined}
   */
  unit_id?: string;
  /**
   * Notes on how the Score came about.
   * @default {[]}
   */
  diagnostics?: Diagnostic[];
  /**
   * References to evidence.
   * @default {[]}
   */
  evidence_refs?: string[];
  /**
   * Where the Score came from.
   * @default {undefined}
   */
  provenance?: Record<string, unknown>;
}

/** Options of {@linkcode scored}. */
export interface ScoredOptions extends ScoreOptions {
  /**
   * The verdict.
   * @default {value >= 0.5}
   */
  passed?: boolean;
  /**
   * Whether the value can be trusted.
   * @default {"valid"}
   */
  validity?: ScoreValidity;
}

/** Whether JSON carries `value` unchanged, so a Score survives its own NDJSON line. */
function isJsonValue(value: unknown, ancestors: Set<object>): boolean {
  if (
    value === null || typeof value === "string" || typeof value === "boolean"
  ) return true;
  if (typeof value === "number") return Number.isFinite(value);
  // The depth bound keeps a hostile value from overflowing the stack.
  if (
    typeof value !== "object" || ancestors.has(value) || ancestors.size >= 1000
  ) return false;
  const proto = Object.getPrototypeOf(value);
  const isArray = Array.isArray(value);
  if (!isArray && proto !== Object.prototype && proto !== null) return false;
  ancestors.add(value);
  let ok = true;
  if (isArray) {
    for (let i = 0; ok && i < value.length; i++) {
      ok = i in value && isJsonValue(value[i], ancestors);
    }
  } else {
    for (const v of Object.values(value)) {
      if (!(ok = isJsonValue(v, ancestors))) break;
    }
  }
  ancestors.delete(value);
  return ok;
}

function problemPath(s: { status: ScoreStatus; value: number | null }): string {
  if (s.status === "scored" && s.value === null) return "value";
  if (s.status !== "scored" && s.value !== null) return "value";
  return "passed";
}

/** The no-0.0 rule and its companions, on an object whose field types are right. */
function ruleViolation(
  s: { status: ScoreStatus; value: number | null; passed: boolean | null },
): string | undefined {
  if (s.status === "scored") {
    if (s.value === null) return 'A "scored" Score must carry a finite number';
    if (s.passed === null) {
      return 'A "scored" Score must carry a boolean "passed"';
    }
  } else if (s.value !== null) {
    return `A "${s.status}" Score must carry a null value, not ${s.value}`;
  }
  if (s.status === "error" && s.passed !== false) {
    return 'An "error" Score must carry "passed": false';
  }
  return undefined;
}

/**
 * Builds a Score in the canonical key order, checking every rule.
 *
 * @param fields The Score's fields.
 * @returns The Score.
 * @throws {ScoreError} When the fields break a Score rule.
 *
 * @example Build a Score by hand
 * ```ts
 * import { makeScore } from "./score.ts";
 * const s = makeScore({ metric: "m", status: "skipped", validity: "valid", value: null,
 *   passed: null, evaluator_version: "m@1", diagnostics: [], evidence_refs: [] });
 * if (s.value !== null) throw new Error("unreachable");
 * ```
 */
export function makeScore(fields: Score): Score {
  const score = quickScore(fields);
  if (score === undefined) throw new ScoreError(explainScore(fields));
  return score;
}

/**
 * Checks every rule by hand and builds the Score in the canonical key order
 * (copies of the lists and of the provenance, unknown keys dropped), or
 * returns `undefined` for {@linkcode explainScore} to say what is wrong.
 */
function quickScore(v: unknown, identity?: Identity): Score | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const s = v as Record<string, unknown>;
  const { metric, status, validity, value, passed, reason, evaluator_version } =
    s;
  if (typeof metric !== "string" || metric === "") return undefined;
  if (typeof evaluator_version !== "string" || evaluator_version === "") {
    return undefined;
  }
  if (validity !== "valid" && validity !== "invalid") return undefined;
  if (status === "scored") {
    if (
      typeof value !== "number" || !Number.isFinite(value) ||
      typeof passed !== "boolean"
    ) {
      return undefined;
    }
  } else if (status === "error") {
    if (value !== null || passed !== false) return undefined;
  } else if (status === "skipped" || status === "not_applicable") {
    if (value !== null || (passed !== null && typeof passed !== "boolean")) {
      return undefined;
    }
  } else return undefined;
  if (reason !== undefined && typeof reason !== "string") return undefined;
  const { example_id, unit_id, diagnostics, evidence_refs, provenance } = s;
  // The unit's identity, when given, replaces whatever ids the value carried.
  if (identity === undefined) {
    if (example_id !== undefined && typeof example_id !== "string") {
      return undefined;
    }
    if (unit_id !== undefined && typeof unit_id !== "string") return undefined;
  }
  if (provenance !== undefined && !isProvenance(provenance)) return undefined;
  const diags: Diagnostic[] = [];
  if (diagnostics !== undefined) {
    if (!Array.isArray(diagnostics)) return undefined;
    for (const d of diagnostics) {
      if (typeof d !== "object" || d === null) return undefined;
      const { level, message } = d as Record<string, unknown>;
      if (level !== "error" && level !== "warning" && level !== "info") {
        return undefined;
      }
      if (typeof message !== "string") return undefined;
      diags.push({ level, message });
    }
  }
  let refs: string[] = [];
  if (evidence_refs !== undefined) {
    if (
      !Array.isArray(evidence_refs) ||
      !evidence_refs.every((r) => typeof r === "string")
    ) {
      return undefined;
    }
    refs = [...evidence_refs];
  }
  // Built in the canonical key order, once.
  const out = {
    metric,
    status,
    validity,
    value: value === 0 ? 0 : value as number | null,
    passed: passed as boolean | null,
  } as Score;
  if (reason !== undefined) out.reason = reason;
  out.evaluator_version = evaluator_version;
  const exampleId = identity !== undefined
    ? identity.example_id
    : example_id as string | undefined;
  const unitId = identity !== undefined
    ? identity.unit_id
    : unit_id as string | undefined;
  if (exampleId !== undefined) out.example_id = exampleId;
  if (unitId !== undefined) out.unit_id = unitId;
  out.diagnostics = diags;
  out.evidence_refs = refs;
  // A JSON copy: validated JSON-safe, it no longer aliases the caller's object.
  if (provenance !== undefined) {
    out.provenance = JSON.parse(JSON.stringify(provenance));
  }
  return out;
}

/** A mapping of JSON values, as `provenance` must be. */
function isProvenance(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null &&
    !Array.isArray(value) && isJsonValue(value, new Set());
}

const PROVENANCE_RULE =
  "a mapping of JSON values only (no NaN, ±Infinity, undefined, BigInt, functions, class instances, holes or cycles)";

/**
 * Says what keeps a value from being a Score: every field that breaks its
 * rule, then the no-0.0 rule and its companions. Only called on failure.
 */
function explainScore(v: unknown, identity?: Identity): string {
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    return `A Score must be an object, not ${
      Array.isArray(v) ? "a list" : describeValue(v)
    }`;
  }
  const s = v as Record<string, unknown>;
  const problems: string[] = [];
  const check = (key: string, ok: boolean, rule: string) => {
    if (ok) return;
    problems.push(
      s[key] === undefined
        ? `"${key}" is missing`
        : `"${key}" must be ${rule}, not ${describeValue(s[key])}`,
    );
  };
  const optional = (key: string, ok: (x: unknown) => boolean, rule: string) => {
    if (s[key] !== undefined && !ok(s[key])) {
      problems.push(`"${key}" must be ${rule}, not ${describeValue(s[key])}`);
    }
  };
  const text = (x: unknown) => typeof x === "string" && x !== "";
  check("metric", text(s.metric), "a non-empty string");
  check(
    "status",
    (SCORE_STATUSES as readonly unknown[]).includes(s.status),
    `one of ${SCORE_STATUSES.join(", ")}`,
  );
  check(
    "validity",
    (SCORE_VALIDITIES as readonly unknown[]).includes(s.validity),
    `one of ${SCORE_VALIDITIES.join(", ")}`,
  );
  check(
    "value",
    s.value === null ||
      (typeof s.value === "number" && Number.isFinite(s.value)),
    "a finite number or null",
  );
  check(
    "passed",
    s.passed === null || typeof s.passed === "boolean",
    "a boolean or null",
  );
  optional("reason", (x) => typeof x === "string", "a string");
  check("evaluator_version", text(s.evaluator_version), "a non-empty string");
  if (identity === undefined) {
    optional("example_id", (x) => typeof x === "string", "a string");
    optional("unit_id", (x) => typeof x === "string", "a string");
  }
  optional(
    "diagnostics",
    (x) =>
      Array.isArray(x) && x.every((d) =>
        typeof d === "object" && d !== null &&
        ["error", "warning", "info"].includes(d.level) &&
        typeof d.message === "string"
      ),
    'a list of {"level": "error" | "warning" | "info", "message": string}',
  );
  optional(
    "evidence_refs",
    (x) => Array.isArray(x) && x.every((r) => typeof r === "string"),
    "a list of strings",
  );
  optional("provenance", isProvenance, PROVENANCE_RULE);
  if (problems.length > 0) return problems.join("; ");
  const fields = s as {
    status: ScoreStatus;
    value: number | null;
    passed: boolean | null;
  };
  const rule = ruleViolation(fields);
  return rule !== undefined
    ? `"${problemPath(fields)}": ${rule}`
    : "Not a valid Score";
}

/** Which unit a Score measured. */
export interface Identity {
  /** The example. */
  example_id: string;
  /** The unit. */
  unit_id: string;
}

/**
 * Validates a Score and stamps a unit's identity on it, replacing whatever
 * ids it carried: what the pipeline does with every Score a scorer returns.
 *
 * @param value Anything claiming to be a Score.
 * @param identity The unit's ids.
 * @returns The Score with those ids, keys in canonical order.
 * @throws {ScoreSyntaxError} Naming the field and the rule broken.
 */
export function parseScoreFor(value: unknown, identity: Identity): Score {
  const score = quickScore(value, identity);
  if (score === undefined) {
    throw new ScoreSyntaxError(explainScore(value, identity));
  }
  return score;
}

function base(
  metric: string,
  status: ScoreStatus,
  validity: ScoreValidity,
  value: number | null,
  passed: boolean | null,
  options: ScoreOptions,
): Score {
  const fields = { metric, status, validity, value, passed } as Score;
  if (options.reason !== undefined) fields.reason = options.reason;
  fields.evaluator_version = options.evaluator_version ?? `${metric}@1`;
  if (options.example_id !== undefined) fields.example_id = options.example_id;
  if (options.unit_id !== undefined) fields.unit_id = options.unit_id;
  fields.diagnostics = options.diagnostics ?? [];
  fields.evidence_refs = options.evidence_refs ?? [];
  if (options.provenance !== undefined) fields.provenance = options.provenance;
  return fields;
}

/**
 * Builds a `scored` Score: a finite number that exists.
 *
 * @param metric The metric's name.
 * @param value A finite number; NaN, ±Infinity and booleans are rejected.
 * @param options The verdict, validity, reason and provenance.
 * @returns The Score.
 * @throws {ScoreError} When `value` is not a finite number.
 *
 * @example A passing Score
 * ```ts
 * import { scored } from "./score.ts";
 * const s = scored("exact_match", 1);
 * if (!s.passed || s.value !== 1) throw new Error("unexpected");
 * ```
 */
export function scored(
  metric: string,
  value: number,
  options: ScoredOptions = {},
): Score {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new ScoreError(
      `A "scored" Score must carry a finite number, not ${
        describeValue(value)
      }`,
    );
  }
  return makeScore(
    base(
      metric,
      "scored",
      options.validity ?? "valid",
      value,
      options.passed ?? value >= 0.5,
      options,
    ),
  );
}

/**
 * Builds an `error` Score: no value, a failed verdict, the message as reason
 * and as an error diagnostic.
 *
 * @param metric The metric's name.
 * @param message The full reason, e.g. `scorer error: ...`.
 * @param options Version, identity and further diagnostics.
 * @returns The Score.
 *
 * @example A scorer that crashed
 * ```ts
 * import { errored } from "./score.ts";
 * const s = errored("faithfulness", "scorer error: exit status 1");
 * if (s.value !== null || s.passed !== false) throw new Error("unexpected");
 * ```
 */
export function errored(
  metric: string,
  message: string,
  options: Omit<ScoreOptions, "reason"> = {},
): Score {
  return makeScore(
    base(metric, "error", "valid", null, false, {
      ...options,
      reason: message,
      diagnostics: [...(options.diagnostics ?? []), {
        level: "error",
        message,
      }],
    }),
  );
}

/**
 * Builds a `skipped` Score: the evaluator chose not to measure this unit.
 *
 * @param metric The metric's name.
 * @param options Reason, version and identity.
 * @returns The Score.
 *
 * @example
 * ```ts
 * import { skipped } from "./score.ts";
 * if (skipped("m", { reason: "sampled out" }).value !== null) throw new Error();
 * ```
 */
export function skipped(metric: string, options: ScoreOptions = {}): Score {
  return makeScore(base(metric, "skipped", "valid", null, null, options));
}

/**
 * Builds a `not_applicable` Score: the metric does not apply to this unit
 * (say, `exact_match` on a case without `expected`).
 *
 * @param metric The metric's name.
 * @param options Reason, version and identity.
 * @returns The Score.
 *
 * @example
 * ```ts
 * import { notApplicable } from "./score.ts";
 * if (notApplicable("m").status !== "not_applicable") throw new Error();
 * ```
 */
export function notApplicable(
  metric: string,
  options: ScoreOptions = {},
): Score {
  return makeScore(
    base(metric, "not_applicable", "valid", null, null, options),
  );
}

/**
 * Builds a batch of related Scores from one evaluator pass.
 *
 * @param scores The Scores.
 * @returns The batch.
 *
 * @example
 * ```ts
 * import { scoreBatch, scored } from "./score.ts";
 * const batch = scoreBatch([scored("precision", 0.5), scored("recall", 1)]);
 * if (batch.scores.length !== 2) throw new Error();
 * ```
 */
export function scoreBatch(scores: Score[]): ScoreBatch {
  return { scores };
}

/**
 * Tells whether a value is a {@linkcode ScoreBatch}.
 *
 * @param value Anything.
 * @returns `true` for an object with a `scores` array.
 *
 * @example
 * ```ts
 * import { isScoreBatch } from "./score.ts";
 * if (!isScoreBatch({ scores: [] })) throw new Error();
 * ```
 */
export function isScoreBatch(value: unknown): value is ScoreBatch {
  return typeof value === "object" && value !== null &&
    Array.isArray((value as { scores?: unknown }).scores);
}

/**
 * Tells whether a Score enters aggregation: `scored` and `valid`.
 *
 * @param score The Score.
 * @returns `true` only for a scored and valid Score.
 *
 * @example
 * ```ts
 * import { aggregatable, errored, scored } from "./score.ts";
 * if (!aggregatable(scored("m", 0)) || aggregatable(errored("m", "boom"))) throw new Error();
 * ```
 */
export function aggregatable(score: Score): boolean {
  return score.status === "scored" && score.validity === "valid";
}

/** Thrown by {@linkcode parseScore} for a value that is not a valid Score. */
export class ScoreSyntaxError extends SyntaxError {
  /**
   * Creates the instance.
   *
   * @param message What is wrong.
   */
  constructor(message: string) {
    super(message);
    this.name = "ScoreSyntaxError";
  }
}

/**
 * Validates an untrusted value (a parsed NDJSON line, a function scorer's
 * return) as a Score. Unknown keys are dropped; `diagnostics` and
 * `evidence_refs` default to empty lists.
 *
 * @param value Anything.
 * @returns The Score, keys in canonical order.
 * @throws {ScoreSyntaxError} Naming the field and the rule broken.
 *
 * @example
 * ```ts
 * import { parseScore } from "./score.ts";
 * const s = parseScore(JSON.parse('{"metric":"m","status":"error","validity":"valid","value":null,"passed":false,"evaluator_version":"m@1"}'));
 * if (s.status !== "error") throw new Error();
 * ```
 */
export function parseScore(value: unknown): Score {
  const score = quickScore(value);
  if (score === undefined) throw new ScoreSyntaxError(explainScore(value));
  return score;
}

/**
 * Describes a value for an error message without dumping it whole.
 *
 * @param value Anything.
 * @returns A short description such as `NaN`, `true` or `"0.5"`.
 */
function describeValue(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return JSON.stringify(value.slice(0, 40));
  if (value === null || typeof value === "boolean") return String(value);
  return typeof value;
}

// The JSON text of the last few strings written: the Scores of a run repeat
// their metric, version and ids (a unit's Scores share their ids, and an id
// built by concatenation must be flattened before it can be escaped).
const lastText: string[] = ["", "", ""];
const lastJson: string[] = ['""', '""', '""'];

/** JSON.stringify of `text`, remembered in `slot`. */
function jsonOf(text: string, slot: number): string {
  if (text !== lastText[slot]) {
    lastText[slot] = text;
    lastJson[slot] = JSON.stringify(text);
  }
  return lastJson[slot]!;
}

/**
 * The JSON text of a Score, its keys in the canonical order: the same text as
 * `JSON.stringify` gives for a Score this module built (by a constructor or
 * by validation), written field by field, which is faster for the many
 * Scores of a run.
 *
 * @param score A valid Score.
 * @returns Its JSON text, without a line break.
 *
 * @example
 * ```ts
 * import { scored, scoreLine } from "./score.ts";
 * const s = scored("exact_match", 1, { example_id: "d#1", unit_id: "d#1" });
 * if (scoreLine(s) !== JSON.stringify(s)) throw new Error(scoreLine(s));
 * ```
 */
export function scoreLine(score: Score): string {
  const { reason, example_id, unit_id, diagnostics, evidence_refs } = score;
  let text = `{"metric":${
    jsonOf(score.metric, 0)
  },"status":"${score.status}","validity":"${score.validity}","value":${
    score.value === null ? "null" : String(score.value)
  },"passed":${score.passed}`;
  if (reason !== undefined) text += `,"reason":${JSON.stringify(reason)}`;
  text += `,"evaluator_version":${jsonOf(score.evaluator_version, 1)}`;
  if (example_id !== undefined) {
    text += `,"example_id":${jsonOf(example_id, 2)}`;
  }
  if (unit_id !== undefined) text += `,"unit_id":${jsonOf(unit_id, 2)}`;
  text += `,"diagnostics":${
    diagnostics.length === 0 ? "[]" : JSON.stringify(diagnostics)
  },"evidence_refs":${
    evidence_refs.length === 0 ? "[]" : JSON.stringify(evidence_refs)
  }`;
  if (score.provenance !== undefined) {
    text += `,"provenance":${JSON.stringify(score.provenance)}`;
  }
  return text + "}";
}
