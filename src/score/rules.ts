/**
 * The Score rules, checked: building a Score in the canonical key order from
 * untrusted fields, or saying which field breaks which rule.
 *
 * @module
 */

import {
  type Diagnostic,
  type Identity,
  type Score,
  SCORE_STATUSES,
  SCORE_VALIDITIES,
  type ScoreBatch,
  ScoreError,
  type ScoreStatus,
  ScoreSyntaxError,
} from "./types.ts";

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
 * import { makeScore } from "./mod.ts";
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

/**
 * Validates a Score and stamps a unit's identity on it, replacing whatever
 * ids it carried: what the pipeline does with every Score a scorer returns.
 *
 * @param value Anything claiming to be a Score.
 * @param identity The unit's ids.
 * @returns The Score with those ids, keys in canonical order.
 * @throws {ScoreSyntaxError} Naming the field and the rule broken.
 *
 * @example A function scorer's plain object becomes a Score of its unit
 * ```ts
 * import { parseScoreFor } from "./mod.ts";
 * const returned = { metric: "short", status: "scored", validity: "valid", value: 1, passed: true, evaluator_version: "short@1", unit_id: "stale" };
 * const s = parseScoreFor(returned, { example_id: "d#1", unit_id: "d#1" });
 * if (s.unit_id !== "d#1" || s.diagnostics.length !== 0) throw new Error("unexpected");
 * ```
 */
export function parseScoreFor(value: unknown, identity: Identity): Score {
  const score = quickScore(value, identity);
  if (score === undefined) {
    throw new ScoreSyntaxError(explainScore(value, identity));
  }
  return score;
}

/**
 * Tells whether a value is a {@linkcode ScoreBatch}.
 *
 * @param value Anything.
 * @returns `true` for an object with a `scores` array.
 *
 * @example
 * ```ts
 * import { isScoreBatch } from "./mod.ts";
 * if (!isScoreBatch({ scores: [] })) throw new Error("unexpected");
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
 * import { aggregatable, errored, scored } from "./mod.ts";
 * if (!aggregatable(scored("m", 0)) || aggregatable(errored("m", "boom"))) throw new Error("unexpected");
 * ```
 */
export function aggregatable(score: Score): boolean {
  return score.status === "scored" && score.validity === "valid";
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
 * import { parseScore } from "./mod.ts";
 * const s = parseScore(JSON.parse('{"metric":"m","status":"error","validity":"valid","value":null,"passed":false,"evaluator_version":"m@1"}'));
 * if (s.status !== "error") throw new Error("unexpected");
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
export function describeValue(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return JSON.stringify(value.slice(0, 40));
  if (value === null || typeof value === "boolean") return String(value);
  return typeof value;
}
