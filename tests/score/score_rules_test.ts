import assert from "node:assert/strict";
import {
  functionScorer,
  makeScore,
  parseScore,
  type Score,
  scored,
  ScoreError,
  type Scorer,
  ScoreSyntaxError,
  scoreUnits,
  type Unit,
  validateScore,
} from "../../mod.ts";

// A small seeded PRNG (mulberry32): every run sees the same candidates, and a
// failure message names the seed and index that reproduce it.
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Random = () => number;

function pick<T>(random: Random, pool: readonly T[]): T {
  return pool[Math.floor(random() * pool.length)]!;
}

const STATUSES = [
  "scored",
  "blocked",
  "non_evaluable",
  "skipped",
  "error",
] as const;
// What readers accept: today's statuses and the earlier `not_applicable`.
const READ_STATUSES = [...STATUSES, "not_applicable"] as const;
const VALIDITIES = [
  "valid",
  "invalid",
  "not_measured",
  "not_applicable",
] as const;
const LEVELS = ["error", "warning", "info"];

/** A diagnostic of today's shape or of the earlier one, now and then with extras. */
function randomDiagnostic(random: Random): Record<string, unknown> {
  const d: Record<string, unknown> = random() < 0.6
    ? {
      code: pick(random, ["scorer.timeout", "x.y", "legacy"]),
      severity: pick(random, LEVELS),
      message: "note",
    }
    : { level: pick(random, LEVELS), message: "note" };
  if (random() < 0.2) d.location = "line 3";
  if (random() < 0.2) d.details = pick(random, [{}, { limit: 5 }, null]);
  if (random() < 0.1) d.cause = "because";
  if (random() < 0.1) d.evidence_refs = pick(random, [[], ["t:1"]]);
  if (random() < 0.2) d.extra = 1;
  return d;
}
const CANONICAL_KEYS = [
  "metric",
  "status",
  "validity",
  "value",
  "passed",
  "reason",
  "evaluator_version",
  "example_id",
  "unit_id",
  "diagnostics",
  "evidence_refs",
  "provenance",
];

const cyclic: Record<string, unknown> = { name: "cycle" };
cyclic.self = cyclic;

/** Anything at all: what a careless or hostile scorer might put in a field. */
const JUNK: readonly unknown[] = [
  NaN,
  Infinity,
  -Infinity,
  -0,
  0,
  1,
  0.5,
  -1,
  1e308,
  -1e308,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  2 ** 53 + 2,
  true,
  false,
  "",
  "0.5",
  "NaN",
  "scored",
  "m",
  null,
  undefined,
  {},
  [],
  [0.5],
  { value: 1 },
  new Date(0),
  10n,
  Symbol("s"),
  () => 1,
  cyclic,
  Object.create(null),
];

const FINITE = [
  0,
  -0,
  1,
  0.5,
  0.1,
  1 / 3,
  0.7,
  -2.5,
  42,
  1e308,
  -1e308,
  Number.MIN_VALUE,
  2 ** 53 + 2,
];
const METRICS = ["m", "m", "m", "m", "other", "exact_match", "ünï\ud800", ""];
const VERSIONS = ["m@1", "m@1", "exact_match@1", "x@3f2a9c1d", "", "  "];
const IDS = ["d#1", "evil#9", "", "a\u0000b"];

function randomDiagnostics(random: Random): unknown {
  const r = random();
  if (r < 0.6) return [];
  if (r < 0.8) return [randomDiagnostic(random)];
  return pick(random, [
    [{ level: "fatal", message: "x" }],
    [{ code: "", severity: "info", message: "x" }],
    [{ code: "c.d", severity: "fatal", message: "x" }],
    [{ code: "c.d", severity: "info", message: "x", details: [1] }],
    [{ level: "info" }],
    [{ level: "info", message: 3 }],
    ["text"],
    "text",
    null,
    {},
  ]);
}

/**
 * The validities the design's table gives each status, and `valid` or
 * `invalid` on a Score without a value, as the earlier vocabulary wrote them.
 */
const VALIDITIES_OF: Record<string, readonly string[]> = {
  scored: ["valid", "invalid"],
  blocked: ["not_measured", "valid", "invalid"],
  non_evaluable: ["not_applicable", "valid", "invalid"],
  skipped: ["not_measured", "valid", "invalid"],
  error: ["not_measured", "valid", "invalid"],
  not_applicable: ["not_applicable", "valid", "invalid"],
};

/** A rule-abiding Score-shaped object, with optional fields now and then. */
function randomValidCandidate(random: Random): Record<string, unknown> {
  const status = pick(random, READ_STATUSES);
  const candidate: Record<string, unknown> = {
    metric: pick(random, METRICS.filter((m) => m !== "")),
    status,
    validity: pick(random, VALIDITIES_OF[status]!),
    value: status === "scored" ? pick(random, FINITE) : null,
    evaluator_version: pick(random, VERSIONS.filter((v) => v !== "")),
  };
  // evalglass's Scores carry no verdict; older files wrote null for none.
  if (random() < 0.8) {
    candidate.passed = status === "error" || status === "blocked"
      ? pick(random, [false, null])
      : status === "scored"
      ? pick(random, [true, false, null])
      : null;
  }
  if (random() < 0.3) candidate.reason = pick(random, ["because", ""]);
  if (random() < 0.3) candidate.example_id = pick(random, IDS);
  if (random() < 0.3) candidate.unit_id = pick(random, IDS);
  if (random() < 0.7) {
    candidate.diagnostics = random() < 0.6 ? [] : [randomDiagnostic(random)];
  }
  if (random() < 0.7) {
    candidate.evidence_refs = pick(random, [[], ["trace:1"], ["a", "b"]]);
  }
  if (random() < 0.2) {
    candidate.provenance = pick(random, [
      { judge: "gpt", temperature: 0.2, tags: ["a", null, true] },
      { nested: { deep: [1, { x: "y" }] } },
      {},
      Object.assign(Object.create(null), { k: "v" }),
    ]);
  }
  if (random() < 0.1) candidate.unknown_key = pick(random, JUNK);
  return candidate;
}

/** What a corruption may put in a field: a wrong value of the right kind, or junk. */
const BAD: Record<string, readonly unknown[]> = {
  metric: ["", ...JUNK],
  status: [...READ_STATUSES, "SCORED", "pass", "", "unknown", ...JUNK],
  validity: [...VALIDITIES, "VALID", "", "trusted", ...JUNK],
  value: [...FINITE, ...JUNK],
  passed: [true, false, null, 0, 1, "true", ...JUNK],
  evaluator_version: ["", ...JUNK],
  reason: JUNK,
  example_id: JUNK,
  unit_id: JUNK,
  diagnostics: [
    [{ level: "fatal", message: "x" }],
    [{ code: "a.b", severity: "warning" }],
    [{ code: 5, severity: "warning", message: "x" }],
    [{ code: "a.b", severity: "info", message: "x", location: 3 }],
    [{ code: "a.b", severity: "info", message: "x", cause: {} }],
    [{ code: "a.b", severity: "info", message: "x", evidence_refs: [1] }],
    [{ level: "info" }],
    [{ level: "info", message: 3 }],
    ["text"],
    [null],
    ...JUNK,
  ],
  evidence_refs: [[1], [null], ["a", 2], ...JUNK],
  provenance: [
    { bad: NaN },
    { bad: Infinity },
    { bad: undefined },
    { bad: 10n },
    { bad: () => 1 },
    { bad: new Date(0) },
    { bad: [1, , 3] },
    { deep: { deeper: [{ bad: -Infinity }] } },
    ...JUNK,
  ],
};

/**
 * A candidate Score: sometimes junk outright, usually Score-shaped with zero
 * to three fields missing or given a wrong value or type.
 */
function randomCandidate(random: Random): unknown {
  if (random() < 0.04) return pick(random, JUNK);
  const candidate = randomValidCandidate(random);
  if (random() < 0.4) return candidate;
  const corruptions = 1 + Math.floor(random() * 3);
  for (let i = 0; i < corruptions; i++) {
    const key = pick(random, Object.keys(BAD));
    if (random() < 0.2) delete candidate[key];
    else candidate[key] = pick(random, BAD[key]!);
  }
  return candidate;
}

// An independent oracle: is `c` a valid Score by the rules as written in the
// design? The library's answer is checked against this one.
function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function isJsonValue(v: unknown, ancestors: unknown[] = []): boolean {
  if (v === null || typeof v === "string" || typeof v === "boolean") {
    return true;
  }
  if (typeof v === "number") return Number.isFinite(v);
  if (typeof v !== "object" || ancestors.includes(v)) return false;
  const inner = [...ancestors, v];
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      if (!(i in v) || !isJsonValue(v[i], inner)) return false;
    }
    return true;
  }
  return isPlainObject(v) &&
    Object.values(v).every((x) => isJsonValue(x, inner));
}

function optionalString(v: unknown): boolean {
  return v === undefined || v === null || typeof v === "string";
}

const absent = (v: unknown) => v === undefined || v === null;

function oracleDiagnostic(d: unknown): boolean {
  if (typeof d !== "object" || d === null || Array.isArray(d)) return false;
  const x = d as Record<string, unknown>;
  if (typeof x.message !== "string") return false;
  if (x.severity !== undefined) {
    if (!LEVELS.includes(x.severity as string)) return false;
    if (typeof x.code !== "string" || x.code === "") return false;
  } else if (!LEVELS.includes(x.level as string)) return false;
  if (!optionalString(x.location) || !optionalString(x.cause)) return false;
  if (
    !absent(x.details) && !(isPlainObject(x.details) && isJsonValue(x.details))
  ) {
    return false;
  }
  if (
    !absent(x.evidence_refs) &&
    !(Array.isArray(x.evidence_refs) &&
      x.evidence_refs.every((r) => typeof r === "string"))
  ) return false;
  return true;
}

function oracleValid(c: unknown): boolean {
  if (typeof c !== "object" || c === null || Array.isArray(c)) return false;
  const s = c as Record<string, unknown>;
  if (typeof s.metric !== "string" || s.metric === "") return false;
  if (!(READ_STATUSES as readonly unknown[]).includes(s.status)) return false;
  if (!(VALIDITIES as readonly unknown[]).includes(s.validity)) return false;
  if (s.value !== null && !Number.isFinite(s.value)) return false;
  if (!absent(s.passed) && typeof s.passed !== "boolean") return false;
  if (typeof s.evaluator_version !== "string" || s.evaluator_version === "") {
    return false;
  }
  if (
    !optionalString(s.reason) || !optionalString(s.example_id) ||
    !optionalString(s.unit_id)
  ) return false;
  if (!absent(s.diagnostics)) {
    if (!Array.isArray(s.diagnostics)) return false;
    if (!s.diagnostics.every(oracleDiagnostic)) return false;
  }
  if (!absent(s.evidence_refs)) {
    if (
      !Array.isArray(s.evidence_refs) ||
      !s.evidence_refs.every((r) => typeof r === "string")
    ) return false;
  }
  if (!absent(s.provenance) && !isJsonValue(s.provenance)) return false;
  if (!absent(s.provenance) && !isPlainObject(s.provenance)) return false;
  if (s.status === "scored") {
    if (s.value === null) return false;
  } else if (s.value !== null) return false;
  if ((s.status === "error" || s.status === "blocked") && s.passed === true) {
    return false;
  }
  if (!VALIDITIES_OF[s.status as string]!.includes(s.validity as string)) {
    return false;
  }
  // No verdict exists without a measurement; one on a Score of the earlier
  // vocabulary (status not_applicable, or skipped valid or invalid) is
  // read as none.
  const earlier = s.status === "not_applicable" ||
    (s.status === "skipped" &&
      (s.validity === "valid" || s.validity === "invalid"));
  if (
    (s.status === "skipped" || s.status === "non_evaluable") &&
    !absent(s.passed) && !earlier
  ) return false;
  return true;
}

/** The code a diagnostic of the earlier shape gets, by the README's table. */
function legacyCode(d: Record<string, unknown>): string {
  if (typeof d.code === "string" && d.code !== "") return d.code;
  if (d.level !== "error") return `legacy.${d.level}`;
  const m = d.message as string;
  if (m.startsWith("target error: ")) return "target.error";
  if (m.startsWith("invalid case: ")) return "case.invalid";
  if (m.startsWith("budget: ")) return "budget.exhausted";
  if (
    m.startsWith("invalid Score: ") ||
    m.startsWith("scorer error: invalid Score")
  ) return "scorer.invalid_score";
  if (m.startsWith("scorer error: ")) return "scorer.error";
  return "legacy.error";
}

/** What the oracle expects a valid candidate to become. */
function oracleScore(c: Record<string, unknown>): Record<string, unknown> {
  const status = c.status === "not_applicable" ? "non_evaluable" : c.status;
  let validity = c.validity;
  if (status !== "scored" && (validity === "valid" || validity === "invalid")) {
    validity = status === "non_evaluable" ? "not_applicable" : "not_measured";
  }
  const out: Record<string, unknown> = {
    metric: c.metric,
    status,
    validity,
    // JSON has no -0: a Score carries plain 0 so it survives its own NDJSON.
    value: c.value === 0 ? 0 : c.value,
  };
  const verdict = typeof c.passed === "boolean" ? c.passed : undefined;
  if (status === "scored") out.passed = verdict ?? (c.value as number) >= 0.5;
  else if (status === "error" || status === "blocked") out.passed = false;
  if (typeof c.reason === "string") out.reason = c.reason;
  out.evaluator_version = c.evaluator_version;
  if (typeof c.example_id === "string") out.example_id = c.example_id;
  if (typeof c.unit_id === "string") out.unit_id = c.unit_id;
  out.diagnostics = ((c.diagnostics ?? []) as Record<string, unknown>[]).map(
    (d) => {
      const o: Record<string, unknown> = d.severity !== undefined
        ? { code: d.code, severity: d.severity, message: d.message }
        : { code: legacyCode(d), severity: d.level, message: d.message };
      if (typeof d.location === "string") o.location = d.location;
      if (isPlainObject(d.details) && Object.keys(d.details).length > 0) {
        o.details = JSON.parse(JSON.stringify(d.details));
      }
      if (typeof d.cause === "string") o.cause = d.cause;
      if (Array.isArray(d.evidence_refs) && d.evidence_refs.length > 0) {
        o.evidence_refs = [...d.evidence_refs];
      }
      return o;
    },
  );
  out.evidence_refs = [...((c.evidence_refs ?? []) as string[])];
  if (!absent(c.provenance)) {
    out.provenance = JSON.parse(JSON.stringify(c.provenance));
  }
  return out;
}

/** Every rule an emitted Score must obey, whatever it was built from. */
function assertScoreRules(s: Score, where: string): void {
  const keys = Object.keys(s);
  assert.deepEqual(
    keys,
    CANONICAL_KEYS.filter((k) => k in s),
    `${where}: keys out of canonical order`,
  );
  for (const k of keys) {
    assert.ok(CANONICAL_KEYS.includes(k), `${where}: unexpected key ${k}`);
  }
  assert.equal(typeof s.metric, "string", where);
  assert.notEqual(s.metric, "", where);
  assert.ok(STATUSES.includes(s.status), `${where}: status ${s.status}`);
  assert.ok(VALIDITIES.includes(s.validity), `${where}: validity`);
  if (s.status === "scored") {
    assert.equal(typeof s.value, "number", where);
    assert.ok(Number.isFinite(s.value), `${where}: value ${s.value}`);
    assert.equal(typeof s.passed, "boolean", where);
  } else {
    assert.equal(s.value, null, `${where}: a ${s.status} Score with a value`);
    assert.notEqual(s.validity, "valid", `${where}: valid without a value`);
  }
  assert.ok(s.passed === undefined || typeof s.passed === "boolean", where);
  if (s.status === "error" || s.status === "blocked") {
    assert.equal(s.passed, false, where);
  }
  assert.equal(typeof s.evaluator_version, "string", where);
  assert.notEqual(s.evaluator_version, "", where);
  for (const k of ["reason", "example_id", "unit_id"] as const) {
    assert.ok(s[k] === undefined || typeof s[k] === "string", where);
  }
  assert.ok(Array.isArray(s.diagnostics), where);
  for (const d of s.diagnostics) {
    assert.ok(LEVELS.includes(d.severity), where);
    assert.equal(typeof d.code, "string", where);
    assert.notEqual(d.code, "", where);
    assert.equal(typeof d.message, "string", where);
  }
  assert.ok(s.evidence_refs.every((r) => typeof r === "string"), where);
  // The NDJSON line a Score becomes reads back as the same Score.
  const line = JSON.stringify(s);
  assert.ok(!/NaN|Infinity/.test(line.replace(/"(?:[^"\\]|\\.)*"/g, "")));
  assert.deepStrictEqual(
    parseScore(JSON.parse(line)),
    s,
    `${where}: JSON round trip`,
  );
}

function describe(c: unknown): string {
  try {
    // BigInts and symbols have no JSON: name them rather than throw.
    return JSON.stringify(
      c,
      (_, v) =>
        typeof v === "bigint" ? `${v}n` : typeof v === "symbol" ? String(v) : v,
    ) ?? String(c);
  } catch (error) {
    // A cycle: a shallow description will do.
    if (!(error instanceof TypeError)) throw error;
    return Object.prototype.toString.call(c);
  }
}

const SEED = 0x5c0e;
const CANDIDATES = 4000;

Deno.test("validateScore never throws and emits only rule-abiding Scores", () => {
  const random = prng(SEED);
  let valid = 0;
  for (let i = 0; i < CANDIDATES; i++) {
    const c = randomCandidate(random);
    const where = `seed ${SEED} #${i} ${describe(c)}`;
    const s = validateScore(c);
    assertScoreRules(s, where);
    if (oracleValid(c)) {
      valid++;
      assert.deepStrictEqual(
        s,
        oracleScore(c as Record<string, unknown>),
        where,
      );
    } else {
      assert.equal(s.status, "error", where);
      assert.ok(s.reason?.startsWith("invalid Score: "), where);
      assert.deepEqual(s.diagnostics, [{
        code: "scorer.invalid_score",
        severity: "error",
        message: s.reason,
      }]);
      const fields = c as Record<string, unknown> | null;
      const metric = typeof fields === "object" && fields !== null &&
          typeof fields.metric === "string" && fields.metric !== ""
        ? fields.metric
        : "unknown";
      assert.equal(s.metric, metric, where);
    }
  }
  // The generator must exercise both sides of the rules.
  assert.ok(valid > CANDIDATES * 0.15, `only ${valid} valid candidates`);
  assert.ok(valid < CANDIDATES * 0.85, `${valid} valid candidates`);
});

Deno.test("parseScore and makeScore accept exactly the rule-abiding candidates", () => {
  const random = prng(SEED + 1);
  for (let i = 0; i < CANDIDATES; i++) {
    const c = randomCandidate(random);
    const where = `seed ${SEED + 1} #${i} ${describe(c)}`;
    if (oracleValid(c)) {
      const parsed = parseScore(c);
      assertScoreRules(parsed, where);
      assert.deepStrictEqual(parsed, makeScore(c as Score), where);
      assert.deepStrictEqual(
        parsed,
        oracleScore(c as Record<string, unknown>),
        where,
      );
    } else {
      assert.throws(() => parseScore(c), ScoreSyntaxError, where);
      assert.throws(() => makeScore(c as Score), ScoreError, where);
    }
  }
});

Deno.test("parseScore copies what it returns, so later edits to the input do not leak in", () => {
  const provenance = { judge: { model: "j" } };
  const input = {
    metric: "m",
    status: "skipped",
    validity: "not_measured",
    value: null,
    evaluator_version: "m@1",
    diagnostics: [{
      code: "n.a",
      severity: "info",
      message: "a",
      details: { k: ["v"] },
    }],
    evidence_refs: ["r"],
    provenance,
  };
  const s = parseScore(input);
  input.diagnostics.push({
    code: "n.b",
    severity: "info",
    message: "b",
    details: { k: [] },
  });
  input.diagnostics[0]!.details.k.push("w");
  input.evidence_refs.push("x");
  provenance.judge.model = "changed";
  assert.deepEqual(s.diagnostics, [{
    code: "n.a",
    severity: "info",
    message: "a",
    details: { k: ["v"] },
  }]);
  assert.deepEqual(s.evidence_refs, ["r"]);
  assert.deepEqual(s.provenance, { judge: { model: "j" } });
  // Defaults are fresh lists, never one list shared by every Score.
  const a = parseScore({ ...input, diagnostics: undefined });
  a.diagnostics.push({ code: "n.m", severity: "info", message: "mutated" });
  assert.deepEqual(
    parseScore({ ...input, diagnostics: undefined }).diagnostics,
    [],
  );
});

Deno.test("parseScore refuses provenance that JSON cannot carry", () => {
  const base = {
    metric: "m",
    status: "skipped",
    validity: "valid",
    value: null,
    passed: null,
    evaluator_version: "m@1",
  };
  for (
    const provenance of [
      { x: NaN },
      { x: -Infinity },
      { x: undefined },
      { x: 10n },
      { x: () => 1 },
      { x: new Date(0) },
      { x: [1, , 3] },
      cyclic,
    ]
  ) {
    assert.throws(
      () => parseScore({ ...base, provenance }),
      ScoreSyntaxError,
      describe(provenance),
    );
    // And the validation stage turns it into an error, not a crash later in the sink.
    const s = validateScore({ ...base, provenance });
    assert.equal(s.status, "error");
    assert.equal(JSON.stringify(s).includes("provenance"), true);
  }
});

Deno.test("scored throws only ScoreError, and whatever it returns obeys the rules", () => {
  const random = prng(SEED + 2);
  let built = 0;
  for (let i = 0; i < CANDIDATES; i++) {
    const metric = random() < 0.8 ? pick(random, METRICS) : pick(random, JUNK);
    const value = random() < 0.6 ? pick(random, FINITE) : pick(random, JUNK);
    const options: Record<string, unknown> = {};
    if (random() < 0.4) options.passed = pick(random, [true, false, null, 1]);
    if (random() < 0.3) {
      options.validity = pick(random, ["valid", "invalid", "bogus"]);
    }
    if (random() < 0.3) options.reason = pick(random, ["r", "", 5]);
    if (random() < 0.3) {
      options.evaluator_version = pick(random, [...VERSIONS, 1]);
    }
    if (random() < 0.2) options.example_id = pick(random, [...IDS, 1]);
    if (random() < 0.2) options.diagnostics = randomDiagnostics(random);
    const where = `seed ${SEED + 2} #${i} ${
      describe([metric, value, options])
    }`;
    let s: Score;
    try {
      s = scored(metric as string, value as number, options);
    } catch (error) {
      // A metric that is not a string breaks the signature: any TypeError will do.
      assert.ok(
        error instanceof ScoreError ||
          (typeof metric !== "string" && error instanceof TypeError),
        `${where}: ${error}`,
      );
      continue;
    }
    built++;
    assertScoreRules(s, where);
    assert.equal(s.status, "scored", where);
    // -0 is carried as 0: JSON has no -0, and a Score must survive its own NDJSON.
    assert.equal(s.value, value === 0 ? 0 : value, where);
    assert.equal(s.passed, options.passed ?? (value as number) >= 0.5, where);
    if (options.evaluator_version === undefined) {
      assert.equal(s.evaluator_version, `${metric}@1`, where);
    }
  }
  assert.ok(built > CANDIDATES * 0.2, `only ${built} Scores built`);
});

function unitOf(i: number): Unit {
  return {
    example_id: `data.jsonl#${i}`,
    unit_id: `data.jsonl#${i}@2`,
    input: "question",
    output: "answer",
  };
}

/** What one unit's function scorer does: return a value, return a batch, or throw. */
type Behaviour =
  | { returns: unknown }
  | { batch: unknown[] }
  | { throws: unknown };

/**
 * Checks a Score that came from `c` (a candidate the scorer returned, or one
 * item of its batch). `direct` says the candidate reached validation as is,
 * not through the function scorer's number, boolean and verdict handling.
 * Returns whether the candidate's Score passed through unchanged.
 */
function assertScoreFrom(
  s: Score,
  c: unknown,
  i: number,
  direct: boolean,
  where: string,
): boolean {
  assertScoreRules(s, where);
  // Identity comes from the unit, whatever the scorer claimed.
  assert.equal(s.example_id, `data.jsonl#${i}`, where);
  assert.equal(s.unit_id, `data.jsonl#${i}@2`, where);
  // The only metric this scorer declares.
  assert.equal(s.metric, "m", where);
  const isObject = typeof c === "object" && c !== null;
  const claimsScore = isObject && "status" in c && "metric" in c;
  // The scorer's own ids are replaced before validation: wrong ones do not matter.
  const stamped = isObject
    ? { ...c, example_id: "x", unit_id: "x" }
    : undefined;
  if ((direct || claimsScore) && oracleValid(stamped)) {
    const metric = (c as Score).metric;
    if (metric === "m") {
      assert.deepStrictEqual(
        s,
        oracleScore({
          ...(c as Record<string, unknown>),
          example_id: `data.jsonl#${i}`,
          unit_id: `data.jsonl#${i}@2`,
        }),
        where,
      );
      return true;
    }
    assert.equal(s.status, "error", where);
    assert.equal(
      s.reason,
      `scorer error: Score for undeclared metric ${JSON.stringify(metric)}`,
      where,
    );
  } else if (direct || claimsScore) {
    assert.equal(s.status, "error", where);
    assert.ok(s.reason?.startsWith("scorer error: invalid Score: "), where);
  } else if (s.status === "error") {
    assert.ok(s.reason?.startsWith("scorer error: "), where);
  } else {
    // A number, a boolean or a verdict the function scorer turned into a Score.
    assert.equal(s.status, "scored", where);
  }
  if (s.status === "error" || !claimsScore) {
    assert.equal(s.evaluator_version, "m@7", where);
  }
  return false;
}

Deno.test("scoreUnits with a functionScorer never fails and emits only rule-abiding Scores", async () => {
  const random = prng(SEED + 3);
  const behaviours: Behaviour[] = [];
  for (let i = 0; i < 2500; i++) {
    // Besides Scores: batches, raw numbers, booleans, verdicts, junk and throws.
    const r = random();
    behaviours.push(
      r < 0.6 ? { returns: randomCandidate(random) } : r < 0.7
        ? {
          batch: Array.from(
            { length: 1 + Math.floor(random() * 3) },
            () => randomCandidate(random),
          ),
        }
        : r < 0.8
        ? { returns: pick(random, JUNK) }
        : r < 0.95
        ? {
          returns: {
            score: pick(random, [...FINITE, ...JUNK]),
            ...(random() < 0.5
              ? { passed: pick(random, [true, false, "yes"]) }
              : {}),
            ...(random() < 0.5 ? { reason: pick(random, ["r", 5]) } : {}),
          },
        }
        : { throws: pick(random, [new Error("boom"), "a string", null]) },
    );
  }
  const scorer = functionScorer("m", (unit) => {
    const b = behaviours[Number(unit.example_id.split("#")[1])]!;
    if ("throws" in b) throw b.throws;
    return ("batch" in b ? { scores: b.batch } : b.returns) as Score;
  }, { version: "m@7" });
  const scores = await Array.fromAsync(
    ReadableStream.from(behaviours.map((_, i) => unitOf(i)))
      .pipeThrough(scoreUnits([scorer], { concurrency: 16 })),
  );
  // Units in input order, exactly one Score per declared metric ("m") each.
  assert.equal(scores.length, behaviours.length);
  let next = 0;
  let passedThrough = 0;
  behaviours.forEach((b, i) => {
    const where = `seed ${SEED + 3} #${i} ${describe(b)}`;
    if ("batch" in b && b.batch.length === 1) {
      if (assertScoreFrom(scores[next++]!, b.batch[0], i, true, where)) {
        passedThrough++;
      }
    } else if ("batch" in b) {
      // Several items for one declared metric: the one Score passes through
      // only when exactly one item claims "m" and that item is valid.
      const s = scores[next++]!;
      assertScoreRules(s, where);
      assert.equal(s.metric, "m", where);
      assert.equal(s.unit_id, `data.jsonl#${i}@2`, where);
      const claims = b.batch.filter((c) =>
        typeof c === "object" && c !== null &&
        (c as { metric?: unknown }).metric === "m"
      );
      const only = claims.length === 1
        ? claims[0] as Record<string, unknown>
        : undefined;
      if (
        only !== undefined &&
        oracleValid({ ...only, example_id: "x", unit_id: "x" })
      ) {
        assert.deepStrictEqual(
          s,
          oracleScore({
            ...only,
            example_id: `data.jsonl#${i}`,
            unit_id: `data.jsonl#${i}@2`,
          }),
          where,
        );
        passedThrough++;
      } else {
        assert.equal(s.status, "error", where);
        assert.ok(s.reason?.startsWith("scorer error: "), where);
      }
    } else if ("throws" in b) {
      const s = scores[next++]!;
      assertScoreFrom(s, undefined, i, false, where);
      assert.equal(s.status, "error", where);
      assert.equal(
        s.reason,
        `scorer error: ${
          b.throws instanceof Error ? b.throws.message : String(b.throws)
        }`,
        where,
      );
    } else if (assertScoreFrom(scores[next++]!, b.returns, i, false, where)) {
      passedThrough++;
    }
  });
  assert.ok(passedThrough > 200, `only ${passedThrough} Scores passed through`);
});

Deno.test("scoreUnits stamps example_id and unit_id from the unit, overriding the scorer", async () => {
  const scorer = functionScorer("m", () =>
    makeScore({
      metric: "m",
      status: "scored",
      validity: "valid",
      value: 0.25,
      passed: false,
      evaluator_version: "m@1",
      example_id: "forged#1",
      unit_id: "forged#1@9",
      diagnostics: [],
      evidence_refs: [],
    }));
  const [s] = await Array.fromAsync(
    ReadableStream.from([unitOf(4)]).pipeThrough(scoreUnits([scorer])),
  );
  assert.deepStrictEqual(s, {
    metric: "m",
    status: "scored",
    validity: "valid",
    value: 0.25,
    passed: false,
    evaluator_version: "m@1",
    example_id: "data.jsonl#4",
    unit_id: "data.jsonl#4@2",
    diagnostics: [],
    evidence_refs: [],
  });
});

Deno.test("scoreUnits turns a Score for an undeclared metric into an error", async () => {
  const stray = functionScorer("m", () => scored("other", 1), {
    version: "m@2",
  });
  const batch: Scorer = {
    name: "pr",
    version: "pr@1",
    metrics: ["precision", "recall"],
    score: () =>
      Promise.resolve({
        evaluator: "pr@1",
        scores: [scored("precision", 0.5), scored("f1", 0.9)],
      }),
  };
  const scores = await Array.fromAsync(
    ReadableStream.from([unitOf(1)]).pipeThrough(scoreUnits([stray, batch])),
  );
  assert.deepStrictEqual(scores, [
    {
      metric: "m",
      status: "error",
      validity: "not_measured",
      value: null,
      passed: false,
      reason: 'scorer error: Score for undeclared metric "other"',
      evaluator_version: "m@2",
      example_id: "data.jsonl#1",
      unit_id: "data.jsonl#1@2",
      diagnostics: [{
        code: "scorer.invalid_score",
        severity: "error",
        message: 'scorer error: Score for undeclared metric "other"',
      }],
      evidence_refs: [],
    },
    {
      metric: "precision",
      status: "scored",
      validity: "valid",
      value: 0.5,
      passed: true,
      evaluator_version: "precision@1",
      example_id: "data.jsonl#1",
      unit_id: "data.jsonl#1@2",
      diagnostics: [],
      evidence_refs: [],
    },
    {
      metric: "recall",
      status: "error",
      validity: "not_measured",
      value: null,
      passed: false,
      reason: 'scorer error: Score for undeclared metric "f1"',
      evaluator_version: "pr@1",
      example_id: "data.jsonl#1",
      unit_id: "data.jsonl#1@2",
      diagnostics: [{
        code: "scorer.invalid_score",
        severity: "error",
        message: 'scorer error: Score for undeclared metric "f1"',
      }],
      evidence_refs: [],
    },
  ]);
});

Deno.test("makeScore copies a provenance as JSON would, and rejects one JSON would change", () => {
  const base: Score = {
    metric: "judge",
    status: "scored",
    validity: "valid",
    value: 0.5,
    evaluator_version: "judge@1",
    diagnostics: [],
    evidence_refs: [],
  };
  let deep: unknown = "bottom";
  for (let i = 0; i < 998; i++) deep = { d: deep };
  let tooDeep: unknown = "bottom";
  for (let i = 0; i < 1001; i++) tooDeep = [tooDeep];
  const cycle: Record<string, unknown> = { a: 1 };
  cycle.self = cycle;
  const valid: Array<Record<string, unknown>> = [
    {
      judge_model: "m",
      judge_url: "http://127.0.0.1:1/v1/chat/completions",
      prompt: "ab12cd34",
      usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
      finish_reason: "stop",
      attempts: 1,
      verdict: { claims: [{ text: "x", supported: true }, null], n: -0 },
    },
    { 2: "two", 1: "one", b: "b", a: ["\ud800", "é", 1e21, 5e-324, false] },
    JSON.parse('{"__proto__": {"polluted": true}, "k": 1}'),
    Object.assign(Object.create(null), { k: { z: null } }),
    { deep },
    {},
  ];
  for (const provenance of valid) {
    const s = makeScore({ ...base, provenance });
    const json = JSON.parse(JSON.stringify(provenance));
    assert.deepStrictEqual(s.provenance, json);
    assert.deepEqual(Object.keys(s.provenance!), Object.keys(json));
    assert.equal(Object.getPrototypeOf(s.provenance), Object.prototype);
    assert.equal(JSON.stringify(s.provenance), JSON.stringify(provenance));
    assert.notEqual(s.provenance, provenance);
  }
  assert.equal(
    Object.getPrototypeOf(
      makeScore({ ...base, provenance: valid[2]! }).provenance,
    ),
    Object.prototype,
  );
  for (
    const provenance of [
      { tooDeep },
      cycle,
      { n: NaN },
      { a: [1, , 3] },
      { u: undefined },
      { f: () => 1 },
      { d: new Date(0) },
      { m: new Map() },
      { b: 1n },
    ]
  ) {
    assert.throws(
      () => makeScore({ ...base, provenance } as unknown as Score),
      ScoreError,
    );
  }
});
