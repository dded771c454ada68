/**
 * The Score rules, checked: building a Score in the canonical key order from
 * untrusted fields, or saying which field breaks which rule.
 *
 * @module
 */

import { codeOfReason } from "./codes.ts";
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
  type ScoreValidity,
  type UnitScore,
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

/** The statuses and validities, for quick membership tests. */
const STATUSES: ReadonlySet<unknown> = new Set(SCORE_STATUSES);
const VALIDITIES: ReadonlySet<unknown> = new Set(SCORE_VALIDITIES);
const SEVERITIES: ReadonlySet<unknown> = new Set(["info", "warning", "error"]);

/**
 * A status and validity read from outside, in today's vocabulary, or
 * `undefined` for an unknown word or a pair the design's table rules out.
 * A `scored` Score is `valid` or `invalid`; a `non_evaluable` one
 * `not_applicable`; an `error`, `blocked` or `skipped` one `not_measured`.
 * The earlier vocabulary is read as today's: the status `not_applicable` is
 * `non_evaluable`, and a Score without a value that called itself `valid`
 * or `invalid` (the only validities before `not_measured`; evalglass's own
 * `word_count_bounds` still writes `error` + `invalid`) takes its status's
 * validity.
 */
function readMeaning(
  status: unknown,
  validity: unknown,
): [ScoreStatus, ScoreValidity] | undefined {
  if (status === "scored") {
    return validity === "valid" || validity === "invalid"
      ? [status, validity]
      : undefined;
  }
  let st = status as ScoreStatus;
  if (status === "not_applicable") st = "non_evaluable";
  else if (!STATUSES.has(status)) return undefined;
  const v = validityOf(st);
  return validity === v || validity === "valid" || validity === "invalid"
    ? [st, v]
    : undefined;
}

/** The one validity a Score of a status other than `scored` carries. */
function validityOf(status: ScoreStatus): ScoreValidity {
  return status === "non_evaluable" ? "not_applicable" : "not_measured";
}

/**
 * The verdict a Score carries, filled in where the rules fix it: a scored
 * Score without one passes at `value >= 0.5` (as evalglass's Scores, which
 * have none, are read), an error or a blocked Score fails, and a skipped or
 * a non-evaluable Score has none. `null` is absent, as older files wrote
 * it. `false` as the second element means the field breaks a rule: a
 * `passed` that is no boolean, `true` on an error or a blocked Score, any
 * verdict on a skipped or a non-evaluable one written in today's vocabulary
 * (in the earlier one, `earlier`, it is read as none).
 */
function readPassed(
  status: ScoreStatus,
  value: number,
  passed: unknown,
  earlier: boolean,
): [boolean | undefined, boolean] {
  const absent = passed === undefined || passed === null;
  if (!absent && typeof passed !== "boolean") return [undefined, false];
  if (status === "scored") {
    return [absent ? value >= 0.5 : passed as boolean, true];
  }
  if (status === "error" || status === "blocked") {
    return [false, passed !== true];
  }
  // Files of the earlier vocabulary kept a function scorer's verdict on a
  // skipped or not-applicable Score: read as none, not refused.
  return [undefined, absent || earlier];
}

/**
 * Whether a skipped or a not-applicable Score is written in the earlier
 * vocabulary: the status `not_applicable`, or `skipped` with `valid` or
 * `invalid` (the only validities there were).
 */
function isEarlier(status: unknown, validity: unknown): boolean {
  return status === "not_applicable" ||
    (status === "skipped" && (validity === "valid" || validity === "invalid"));
}

/** Whether `value` is a mapping of JSON values. */
function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null &&
    !Array.isArray(value) && isJsonValue(value, new Set());
}

/** The message of a diagnostic that came with an empty one. */
const NO_MESSAGE = "(no message)";

/**
 * A diagnostic read from outside in the canonical key order (empty details
 * and evidence lists dropped, as evalglass writes them), or `undefined` when
 * it breaks the shape. A diagnostic of the earlier shape, `{level, message}`,
 * keeps a code it carries; without one, an `error` gets a code from its
 * message's prefix (else `legacy.error`), a `warning` or an `info`
 * `legacy.<level>`. An empty message becomes {@linkcode NO_MESSAGE}.
 */
function readDiagnostic(d: unknown): Diagnostic | undefined {
  if (typeof d !== "object" || d === null || Array.isArray(d)) {
    return undefined;
  }
  const {
    code,
    severity,
    level,
    message: given,
    location,
    details,
    cause,
    evidence_refs,
  } = d as Record<string, unknown>;
  if (typeof given !== "string") return undefined;
  // evalglass's reader and its schema refuse an empty message; what a
  // function scorer gave, or an older file holds, is read as this one.
  const message = given === "" ? NO_MESSAGE : given;
  let out: Diagnostic;
  if (severity !== undefined) {
    if (!SEVERITIES.has(severity)) return undefined;
    if (typeof code !== "string" || code === "") return undefined;
    out = { code, severity: severity as Diagnostic["severity"], message };
  } else if (SEVERITIES.has(level)) {
    const sev = level as Diagnostic["severity"];
    const legacy = `legacy.${sev}`;
    out = {
      code: typeof code === "string" && code !== ""
        ? code
        : sev === "error"
        ? codeOfReason(message, legacy)
        : legacy,
      severity: sev,
      message,
    };
  } else return undefined;
  if (location !== undefined && location !== null) {
    if (typeof location !== "string") return undefined;
    out.location = location;
  }
  if (details !== undefined && details !== null) {
    if (!isMapping(details)) return undefined;
    if (Object.keys(details).length > 0) {
      out.details = JSON.parse(JSON.stringify(details));
    }
  }
  if (cause !== undefined && cause !== null) {
    if (typeof cause !== "string") return undefined;
    out.cause = cause;
  }
  if (evidence_refs !== undefined && evidence_refs !== null) {
    if (!isStringList(evidence_refs)) return undefined;
    if (evidence_refs.length > 0) out.evidence_refs = [...evidence_refs];
  }
  return out;
}

function isStringList(value: unknown): value is string[] {
  if (!Array.isArray(value)) return false;
  for (let i = 0; i < value.length; i++) {
    if (typeof value[i] !== "string") return false;
  }
  return true;
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
 * const s = makeScore({ metric: "m", status: "skipped", validity: "not_measured", value: null,
 *   evaluator_version: "m@1", diagnostics: [], evidence_refs: [] });
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
 * (copies of the lists and of the provenance, unknown keys dropped, the
 * earlier vocabulary read as today's), or returns `undefined` for
 * {@linkcode explainScore} to say what is wrong.
 */
function quickScore(v: unknown, identity?: Identity): Score | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const s = v as Record<string, unknown>;
  const { metric, value, reason, evaluator_version } = s;
  if (typeof metric !== "string" || metric === "") return undefined;
  if (typeof evaluator_version !== "string" || evaluator_version === "") {
    return undefined;
  }
  const meaning = readMeaning(s.status, s.validity);
  if (meaning === undefined) return undefined;
  const [status, validity] = meaning;
  if (status === "scored") {
    if (typeof value !== "number" || !Number.isFinite(value)) return undefined;
  } else if (value !== null) return undefined;
  const [passed, passedOk] = readPassed(
    status,
    value as number,
    s.passed,
    isEarlier(s.status, s.validity),
  );
  if (!passedOk) return undefined;
  if (reason !== undefined && reason !== null && typeof reason !== "string") {
    return undefined;
  }
  const { example_id, unit_id, diagnostics, evidence_refs, provenance } = s;
  // The unit's identity, when given, replaces whatever ids the value carried.
  if (identity === undefined) {
    if (example_id != null && typeof example_id !== "string") return undefined;
    if (unit_id != null && typeof unit_id !== "string") return undefined;
  }
  // Checked JSON-safe and copied in one walk (a judge gives one with every
  // Score): the copy no longer aliases the caller's object.
  let provenanceCopy: Record<string, unknown> | undefined;
  if (provenance != null) {
    if (typeof provenance !== "object" || Array.isArray(provenance)) {
      return undefined;
    }
    const copy = jsonCopy(provenance, 0);
    if (copy === NOT_JSON) return undefined;
    provenanceCopy = copy as Record<string, unknown>;
  }
  // Stamped by the pipeline, as the ids are: a scorer's own is dropped.
  const targetName = identity !== undefined ? undefined : s.target_name;
  if (targetName != null && typeof targetName !== "string") return undefined;
  const diags: Diagnostic[] = [];
  if (diagnostics != null) {
    if (!Array.isArray(diagnostics)) return undefined;
    for (const d of diagnostics) {
      const read = readDiagnostic(d);
      if (read === undefined) return undefined;
      diags.push(read);
    }
  }
  let refs: string[] = [];
  if (evidence_refs != null) {
    if (!isStringList(evidence_refs)) return undefined;
    refs = [...evidence_refs];
  }
  // Built in the canonical key order, once.
  const out = {
    metric,
    status,
    validity,
    value: value === 0 ? 0 : value as number | null,
  } as Score;
  if (passed !== undefined) out.passed = passed;
  if (typeof reason === "string") out.reason = reason;
  out.evaluator_version = evaluator_version;
  const exampleId = identity !== undefined ? identity.example_id : example_id;
  const unitId = identity !== undefined ? identity.unit_id : unit_id;
  if (typeof exampleId === "string") out.example_id = exampleId;
  if (typeof unitId === "string") out.unit_id = unitId;
  if (typeof targetName === "string") out.target_name = targetName;
  out.diagnostics = diags;
  out.evidence_refs = refs;
  if (provenanceCopy !== undefined) out.provenance = provenanceCopy;
  return out;
}

/** What {@linkcode jsonCopy} returns for a value JSON would not carry unchanged. */
const NOT_JSON = Symbol("not JSON");

/**
 * What `JSON.parse(JSON.stringify(value))` makes of a value that
 * `isJsonValue` accepts, built field by field in one walk that also checks
 * it (four to five times cheaper than the check, the text and the parse);
 * {@linkcode NOT_JSON} for a value `isJsonValue` rejects. Nesting past
 * 1,000 levels is rejected as `isJsonValue` rejects it, which also ends a
 * cycle.
 */
function jsonCopy(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      // JSON writes -0 as 0.
      return Number.isFinite(value) ? value === 0 ? 0 : value : NOT_JSON;
    case "object": {
      if (value === null) return null;
      if (depth >= 1000) return NOT_JSON;
      if (Array.isArray(value)) {
        const out: unknown[] = [];
        for (let i = 0; i < value.length; i++) {
          if (!(i in value)) return NOT_JSON; // a hole
          const item = jsonCopy(value[i], depth + 1);
          if (item === NOT_JSON) return NOT_JSON;
          out.push(item);
        }
        return out;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return NOT_JSON;
      const out: Record<string, unknown> = {};
      // Own enumerable string keys, in the order JSON.stringify writes them.
      for (const key of Object.keys(value)) {
        const item = jsonCopy(
          (value as Record<string, unknown>)[key],
          depth + 1,
        );
        if (item === NOT_JSON) return NOT_JSON;
        if (key === "__proto__") {
          // An own key, as JSON.parse makes it, not the prototype.
          Object.defineProperty(out, key, {
            value: item,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        } else out[key] = item;
      }
      return out;
    }
    default:
      return NOT_JSON;
  }
}

/** A Score's keys in canonical order, and which of them may be absent. */
const KEYS = [
  "metric",
  "status",
  "validity",
  "value",
  "passed",
  "reason",
  "evaluator_version",
  "example_id",
  "unit_id",
  "target_name",
  "diagnostics",
  "evidence_refs",
];
const OPTIONAL = KEYS.map((k) =>
  k === "passed" || k === "reason" || k === "example_id" || k === "unit_id" ||
  k === "target_name"
);

/** A diagnostic's keys a canonical one may have as it is, in order. */
const DIAGNOSTIC_KEYS = ["code", "severity", "message", "location", "cause"];

/**
 * Tells whether a value already is what {@linkcode parseScore} would make of
 * it: a plain object that obeys every rule, with exactly a Score's keys in
 * canonical order, today's vocabulary, plain lists, diagnostics of plain
 * strings only, and no provenance (whose copy is left to `parseScore`). Such
 * a value can pass a validation stage as it is, without a copy. Its fields
 * are taken to be data properties: `parseScore` reads a getter once, this
 * leaves it.
 *
 * The rules are checked here again rather than shared with `quickScore`: a
 * shared function would share its property reads' type feedback with every
 * shape `quickScore` is given, and reads that see many shapes are slow (the
 * validation stage took 30 ms more over 200,000 Scores that way).
 *
 * @param value Anything.
 * @returns Whether `parseScore(value)` would deep-equal `value`.
 */
export function isCanonicalScore(value: unknown): value is Score {
  if (typeof value !== "object" || value === null) return false;
  const s = value as Record<string, unknown>;
  // Cheaper than reading the prototype; an own "constructor" key fails below.
  if (s.constructor !== Object) return false;
  let k = 0;
  let optional = 0;
  for (const key in s) {
    while (KEYS[k] !== key) {
      // An unknown key, a key out of order, or a required one missing.
      if (k === KEYS.length || !OPTIONAL[k]) return false;
      k++;
    }
    if (OPTIONAL[k]) optional++;
    k++;
  }
  if (k !== KEYS.length) return false;
  const { metric, status, validity, value: v, passed, evaluator_version } = s;
  if (typeof metric !== "string" || metric === "") return false;
  if (typeof evaluator_version !== "string" || evaluator_version === "") {
    return false;
  }
  let present = 0;
  if (status === "scored") {
    if (
      typeof v !== "number" || !Number.isFinite(v) || Object.is(v, -0) ||
      typeof passed !== "boolean" ||
      (validity !== "valid" && validity !== "invalid")
    ) return false;
    present++;
  } else {
    if (v !== null) return false;
    if (status === "error" || status === "blocked") {
      if (passed !== false || validity !== "not_measured") return false;
      present++;
    } else if (status === "skipped") {
      if (passed !== undefined || validity !== "not_measured") return false;
    } else if (status === "non_evaluable") {
      if (passed !== undefined || validity !== "not_applicable") return false;
    } else return false;
  }
  // Each optional key seen must hold a string: parseScore drops undefined.
  const { reason, example_id, unit_id } = s;
  if (reason !== undefined) {
    if (typeof reason !== "string") return false;
    present++;
  }
  if (example_id !== undefined) {
    if (typeof example_id !== "string") return false;
    present++;
  }
  if (unit_id !== undefined) {
    if (typeof unit_id !== "string") return false;
    present++;
  }
  const targetName = s.target_name;
  if (targetName !== undefined) {
    if (typeof targetName !== "string") return false;
    present++;
  }
  if (present !== optional) return false;
  const { diagnostics, evidence_refs: refs } = s;
  if (!Array.isArray(diagnostics) || diagnostics.constructor !== Array) {
    return false;
  }
  if (!Array.isArray(refs) || refs.constructor !== Array) return false;
  for (let i = 0; i < diagnostics.length; i++) {
    const d = diagnostics[i];
    if (typeof d !== "object" || d === null || d.constructor !== Object) {
      return false;
    }
    let n = 0;
    let j = 0;
    for (const key in d) {
      while (DIAGNOSTIC_KEYS[j] !== key) {
        if (j < 3 || j === DIAGNOSTIC_KEYS.length) return false;
        j++;
      }
      if (typeof (d as Record<string, unknown>)[key] !== "string") {
        return false;
      }
      j++;
      n++;
    }
    const { code, severity, message } = d as Record<string, unknown>;
    if (n < 3 || code === "" || message === "") return false;
    if (severity !== "error" && severity !== "warning" && severity !== "info") {
      return false;
    }
  }
  // A hole is no string (parseScore's copy would hold undefined there).
  for (let i = 0; i < refs.length; i++) {
    if (typeof refs[i] !== "string") return false;
  }
  return true;
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
    if (s[key] != null && !ok(s[key])) {
      problems.push(`"${key}" must be ${rule}, not ${describeValue(s[key])}`);
    }
  };
  const text = (x: unknown) => typeof x === "string" && x !== "";
  check("metric", text(s.metric), "a non-empty string");
  check(
    "status",
    STATUSES.has(s.status) || s.status === "not_applicable",
    `one of ${SCORE_STATUSES.join(", ")}`,
  );
  check(
    "validity",
    VALIDITIES.has(s.validity),
    `one of ${SCORE_VALIDITIES.join(", ")}`,
  );
  check(
    "value",
    s.value === null ||
      (typeof s.value === "number" && Number.isFinite(s.value)),
    s.value === Infinity || s.value === -Infinity
      ? "a finite number or null (in JSON, a number beyond ±1.8e308, such as 1e400, reads as Infinity)"
      : "a finite number or null",
  );
  optional(
    "passed",
    (x) => x === null || typeof x === "boolean",
    "a boolean",
  );
  optional("reason", (x) => x === null || typeof x === "string", "a string");
  check("evaluator_version", text(s.evaluator_version), "a non-empty string");
  if (identity === undefined) {
    optional("example_id", (x) => typeof x === "string", "a string");
    optional("unit_id", (x) => typeof x === "string", "a string");
  }
  optional("target_name", (x) => typeof x === "string", "a string");
  if (s.diagnostics != null) {
    if (!Array.isArray(s.diagnostics)) {
      problems.push(
        `"diagnostics" must be ${DIAGNOSTICS_RULE}, not ${
          describeValue(s.diagnostics)
        }`,
      );
    } else {
      // Which diagnostic, and which of its fields: a list of many is read
      // by a person looking for the one that is wrong.
      s.diagnostics.forEach((d, i) => {
        if (readDiagnostic(d) !== undefined) return;
        problems.push(`"diagnostics" item ${i + 1}: ${explainDiagnostic(d)}`);
      });
    }
  }
  optional(
    "evidence_refs",
    (x) => Array.isArray(x) && x.every((r) => typeof r === "string"),
    "a list of strings",
  );
  optional("provenance", isProvenance, PROVENANCE_RULE);
  if (problems.length > 0) return problems.join("; ");
  const rule = ruleViolation(
    s.status,
    s.validity,
    s.value as number | null,
    s.passed,
  );
  return rule !== undefined ? `"${rule[0]}": ${rule[1]}` : "Not a valid Score";
}

const DIAGNOSTICS_RULE =
  'a list of {"code": string, "severity": "info" | "warning" | "error", "message": string, "location"?: string, "details"?: object}';

/** Says which field keeps a value from being a diagnostic. Only called on failure. */
function explainDiagnostic(d: unknown): string {
  if (typeof d !== "object" || d === null || Array.isArray(d)) {
    return `a diagnostic must be an object, not ${
      Array.isArray(d) ? "a list" : describeValue(d)
    }`;
  }
  const o = d as Record<string, unknown>;
  const problems: string[] = [];
  const bad = (key: string, rule: string) =>
    problems.push(
      o[key] === undefined
        ? `"${key}" is missing`
        : `"${key}" must be ${rule}, not ${describeValue(o[key])}`,
    );
  const optional = (key: string, ok: boolean, rule: string) => {
    if (o[key] != null && !ok) bad(key, rule);
  };
  if (o.severity !== undefined || !SEVERITIES.has(o.level)) {
    if (typeof o.code !== "string" || o.code === "") {
      bad("code", "a non-empty string");
    }
    if (!SEVERITIES.has(o.severity)) {
      bad("severity", "one of info, warning, error");
    }
  }
  if (typeof o.message !== "string") bad("message", "a string");
  optional("location", typeof o.location === "string", "a string");
  optional("details", isMapping(o.details), "a mapping of JSON values");
  optional("cause", typeof o.cause === "string", "a string");
  optional(
    "evidence_refs",
    isStringList(o.evidence_refs),
    "a list of strings",
  );
  return problems.length > 0 ? problems.join(", ") : "not a diagnostic";
}

/**
 * The no-0.0 rule and its companions (the validity a status carries, the
 * verdict it may carry), on fields whose types are right.
 */
function ruleViolation(
  status: unknown,
  validity: unknown,
  value: number | null,
  passed: unknown,
): [string, string] | undefined {
  const st =
    (status === "not_applicable" ? "non_evaluable" : status) as ScoreStatus;
  // Judged as today's status, named as the line wrote it: a file of the
  // earlier vocabulary says `not_applicable`, which its reader looks for.
  const named = status as string;
  const article = st === "error" ? "An" : "A";
  if (st === "scored") {
    if (value === null) {
      return ["value", 'A "scored" Score must carry a finite number'];
    }
    if (validity !== "valid" && validity !== "invalid") {
      return [
        "validity",
        `A "scored" Score must be "valid" or "invalid", not "${validity}"`,
      ];
    }
    return undefined;
  }
  if (value !== null) {
    return [
      "value",
      `A "${named}" Score must carry a null value, not ${value}`,
    ];
  }
  const v = validityOf(st);
  if (validity !== v && validity !== "valid" && validity !== "invalid") {
    return [
      "validity",
      `${article} "${named}" Score must be "${v}", not "${validity}"`,
    ];
  }
  if ((st === "error" || st === "blocked") && passed === true) {
    return ["passed", `${article} "${named}" Score must carry "passed": false`];
  }
  if (
    (st === "skipped" || st === "non_evaluable") &&
    typeof passed === "boolean" && !isEarlier(status, validity)
  ) {
    return [
      "passed",
      `${article} "${named}" Score has no verdict: "passed" must be absent, not ${passed}`,
    ];
  }
  return undefined;
}

/**
 * Validates a Score by {@linkcode parseScore}'s rules and stamps a unit's
 * identity on it, replacing whatever ids it carried and dropping a
 * `target_name` (the pipeline stamps that too): what the pipeline does with
 * every Score a scorer returns.
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
export function parseScoreFor(
  value: unknown,
  identity: Identity,
): UnitScore {
  const score = quickScore(value, identity);
  if (score === undefined) {
    throw new ScoreSyntaxError(explainScore(value, identity));
  }
  // quickScore stamps the identity's ids whenever one is given.
  return score as UnitScore;
}

/**
 * Tells whether a value is a {@linkcode ScoreBatch}.
 *
 * @param value Anything.
 * @returns `true` for an object with a `scores` array (its `evaluator` may
 *   be missing: a scorer's batch is read as that scorer's).
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
 * return) as a Score: each status with the validity the design's table
 * gives it (`scored` with `valid` or `invalid`, `non_evaluable` with
 * `not_applicable`, the others with `not_measured`), and a verdict only
 * where one can exist (none on a `skipped` or a `non_evaluable` Score). The
 * earlier vocabulary is read as today's: the status `not_applicable`, a
 * Score without a value that called itself `valid` or `invalid` (read as
 * its status's validity), `"passed": null`, diagnostics with a `level`. Unknown keys are dropped; `diagnostics` and
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
