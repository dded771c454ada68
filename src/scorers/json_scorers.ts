/**
 * Built-in checks of a JSON output: `json` (it parses, and fits a JSON
 * Schema 2020-12 when one is given), `fields` (required fields are present)
 * and `json_match` (it equals `expected` whatever the order of keys).
 *
 * An output that is not JSON scores 0 in each, never `non_evaluable`: the
 * system was asked for JSON, and leaving its failure out of the pass rate
 * would flatter it.
 *
 * @module
 */

import { errored, type Score, scored } from "../score/mod.ts";
import { type Scorer, UNIT_RANGE } from "./scorer.ts";
import type { Unit } from "../dataset/unit.ts";
import { noExpected, quote, quoteList, versionOf } from "./_builtin.ts";
import { expectedJson } from "../io/_expected_text.ts";
import type { SchemaCheck } from "./_json_schema.ts";
import { clip } from "../base/terminal.ts";

/** The output parsed, or why it is not JSON. */
/**
 * `JSON.parse`, with every integer beyond 2^53 kept exact as a `bigint`
 * (read from its source text): `12345678901234567891` is not
 * `12345678901234567890`, though both are the same double.
 */
function parseExact(text: string): unknown {
  return JSON.parse(
    text,
    (_key, value: unknown, context?: { source?: string }) =>
      typeof value === "number" && Number.isInteger(value) &&
        !Number.isSafeInteger(value) && context?.source !== undefined &&
        /^-?\d+$/.test(context.source)
        ? BigInt(context.source)
        : value,
  );
}

/** The exact integer a JSON value stands for, when it is one past 2^53. */
function bigIntegerOf(value: unknown): bigint | undefined {
  if (typeof value === "bigint") return value;
  return typeof value === "number" && Number.isInteger(value) &&
      !Number.isSafeInteger(value)
    ? BigInt(value)
    : undefined;
}

/** JSON text of a parsed value, its exact integers written as digits. */
function exactJson(value: unknown, canonical = false): string | undefined {
  const text = JSON.stringify(value, (_key, v: unknown) => {
    const big = bigIntegerOf(v);
    if (big !== undefined) return `\u0000${big}`;
    if (!canonical || typeof v !== "object" || v === null || Array.isArray(v)) {
      return v;
    }
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>).sort(([a], [b]) =>
        a < b ? -1 : a > b ? 1 : 0
      ),
    );
  });
  return text?.replace(/"\\u0000(-?\d+)"/g, "$1");
}

function parseOutput(
  unit: Unit,
): { ok: true; value: unknown } | { ok: false; reason: string } {
  const text = (unit.output ?? "").trim();
  try {
    return { ok: true, value: parseExact(text) };
  } catch (error) {
    // JSON.parse throws only SyntaxError: the output is not JSON.
    if (!(error instanceof SyntaxError)) throw error;
    return {
      ok: false,
      reason: text === ""
        ? "not JSON: the output is empty"
        : `not JSON: ${error.message}`,
    };
  }
}

/**
 * Options of {@linkcode jsonValid}.
 *
 * @example An object with a string `answer`
 * ```ts
 * import { jsonValid, type JsonScorerOptions } from "./mod.ts";
 * const options: JsonScorerOptions = { schema: { type: "object", required: ["answer"], properties: { answer: { type: "string" } } } };
 * const s = await jsonValid(options).score({ example_id: "d#1", unit_id: "d#1", input: "q", output: '{"answer": 4}' }, {});
 * if ("scores" in s || s.value !== 0 || s.reason !== "$.answer: must be string") throw new Error("unexpected");
 * ```
 */
export interface JsonScorerOptions {
  /**
   * The metric name.
   * @default {"json"}
   */
  name?: string | undefined;
  /**
   * A JSON Schema (draft 2020-12) the output must fit; without one, the
   * output need only parse.
   * @default {undefined}
   */
  schema?: Record<string, unknown> | boolean | undefined;
}

/**
 * `json`: 1 when the output (trimmed) parses as JSON and, given a schema,
 * fits it (JSON Schema 2020-12, validated by Ajv, loaded on first use);
 * else 0, with the parse error or the first violations and their JSON paths
 * in the reason. A schema Ajv refuses makes every Score an error
 * (`scorer.invalid_schema`).
 *
 * @param options The name and schema.
 * @returns The scorer; with a schema, its first Score is a promise (Ajv is
 * loaded), the ones after it are not.
 *
 * @example Any JSON will do
 * ```ts
 * import { jsonValid } from "./mod.ts";
 * const s = await jsonValid().score({ example_id: "d#1", unit_id: "d#1", input: "q", output: "{'a': 1}" }, {});
 * if ("scores" in s || s.value !== 0 || !s.reason?.startsWith("not JSON: ")) throw new Error("unexpected");
 * ```
 */
export function jsonValid(options: JsonScorerOptions = {}): Scorer {
  const schema = options.schema;
  if (schema === undefined) return jsonScorer(options, { check: () => [] });
  return jsonScorer(options, {
    load: () =>
      import("./_json_schema.ts").then((m) => m.compileSchema(schema)),
  });
}

/**
 * The `json` scorer over a schema check that is compiled already or comes
 * from `load` (once): what the config builds once it has checked the schema.
 */
export function jsonScorer(
  options: JsonScorerOptions,
  schema: { check: SchemaCheck } | { load: () => Promise<SchemaCheck> },
): Scorer {
  const name = options.name ?? "json";
  const version = versionOf("json", { schema: options.schema });
  let check = "check" in schema ? schema.check : undefined;
  let loading: Promise<SchemaCheck> | undefined;
  let failure: string | undefined;
  const judge = (unit: Unit, check: SchemaCheck): Score => {
    const parsed = parseOutput(unit);
    if (!parsed.ok) {
      return scored(name, 0, {
        evaluator_version: version,
        reason: parsed.reason,
      });
    }
    const violations = check(parsed.value);
    return scored(name, violations.length === 0 ? 1 : 0, {
      evaluator_version: version,
      ...(violations.length === 0 ? {} : { reason: violations.join("; ") }),
    });
  };
  const broken = () =>
    errored(name, `scorer error: ${failure}`, {
      code: "scorer.invalid_schema",
      evaluator_version: version,
    });
  return {
    name,
    version,
    range: UNIT_RANGE,
    score(unit) {
      if (check !== undefined) return judge(unit, check);
      if (failure !== undefined) return broken();
      // Units scored while Ajv loads wait for the same compilation.
      loading ??= (schema as { load: () => Promise<SchemaCheck> }).load();
      return loading.then(
        (compiled) => judge(unit, check = compiled),
        (error: unknown) => {
          if (!(error instanceof SyntaxError)) throw error;
          failure = error.message;
          return broken();
        },
      );
    },
  };
}

/** The value at a dotted path (`a.b.0`), or `undefined` when it is not there. */
function at(value: unknown, path: string): { found: boolean; value: unknown } {
  let v = value;
  for (const key of path.split(".")) {
    if (typeof v !== "object" || v === null || !Object.hasOwn(v, key)) {
      return { found: false, value: undefined };
    }
    v = (v as Record<string, unknown>)[key];
  }
  return { found: true, value: v };
}

/**
 * Options of {@linkcode jsonFields}.
 *
 * @example Two fields, one nested
 * ```ts
 * import { jsonFields, type JsonFieldsOptions } from "./mod.ts";
 * const options: JsonFieldsOptions = { required: ["answer", "source.url"] };
 * const s = await jsonFields(options).score({ example_id: "d#1", unit_id: "d#1", input: "q", output: '{"answer": "4", "source": {}}' }, {});
 * if ("scores" in s || s.value !== 0.5 || s.reason !== 'missing "source.url"') throw new Error("unexpected");
 * ```
 */
export interface JsonFieldsOptions {
  /**
   * The metric name.
   * @default {"fields"}
   */
  name?: string | undefined;
  /** Dotted paths that must be present (`a.b`, `items.0.id`); `null` counts as present. */
  required: readonly string[];
}

/**
 * `fields`: the fraction of the required fields present in the JSON
 * output; passes when all are. An output that is not JSON scores 0.
 *
 * @param options The required fields.
 * @returns The scorer.
 * @throws {RangeError} Without a required field.
 *
 * @example
 * ```ts
 * import { jsonFields } from "./mod.ts";
 * const s = await jsonFields({ required: ["a", "b"] }).score({ example_id: "d#1", unit_id: "d#1", input: "q", output: '{"a": 1, "b": null}' }, {});
 * if ("scores" in s || s.value !== 1) throw new Error("unexpected");
 * ```
 */
export function jsonFields(options: JsonFieldsOptions): Scorer {
  if (options.required.length === 0) {
    throw new RangeError('The fields scorer needs at least one of "required"');
  }
  const name = options.name ?? "fields";
  const version = versionOf("fields", { required: options.required });
  return {
    name,
    version,
    range: UNIT_RANGE,
    score(unit: Unit): Score {
      const parsed = parseOutput(unit);
      if (!parsed.ok) {
        return scored(name, 0, {
          evaluator_version: version,
          passed: false,
          reason: parsed.reason,
        });
      }
      const missing = options.required.filter((p) =>
        !at(parsed.value, p).found
      );
      return scored(
        name,
        (options.required.length - missing.length) / options.required.length,
        {
          evaluator_version: version,
          passed: missing.length === 0,
          ...(missing.length === 0
            ? {}
            : { reason: `missing ${quoteList(missing)}` }),
        },
      );
    },
  };
}

/**
 * Options of {@linkcode jsonMatch}.
 *
 * @example Ignore a generated id
 * ```ts
 * import { jsonMatch, type JsonMatchOptions } from "./mod.ts";
 * const options: JsonMatchOptions = { ignore: ["id"] };
 * const unit = { example_id: "d#1", unit_id: "d#1", input: "q", output: '{"id": 7, "ok": true}', expected: { ok: true, id: 1 } };
 * const s = await jsonMatch(options).score(unit, {});
 * if ("scores" in s || s.value !== 1) throw new Error("unexpected");
 * ```
 */
export interface JsonMatchOptions {
  /**
   * The metric name.
   * @default {"json_match"}
   */
  name?: string | undefined;
  /**
   * Dotted paths left out on both sides before comparing (`meta.id`,
   * `items.0.ts`).
   * @default {[]}
   */
  ignore?: readonly string[] | undefined;
}

/** `value` without the member at a dotted path (a copy where it changes). */
function without(value: unknown, keys: readonly string[]): unknown {
  if (keys.length === 0 || typeof value !== "object" || value === null) {
    return value;
  }
  const [key, ...rest] = keys as [string, ...string[]];
  if (!Object.hasOwn(value, key)) return value;
  if (Array.isArray(value)) {
    const copy = [...value];
    // An ignored list item is blanked, not removed: the others keep their index.
    copy[Number(key)] = rest.length === 0
      ? null
      : without(copy[Number(key)], rest);
    return copy;
  }
  const copy = { ...(value as Record<string, unknown>) };
  if (rest.length === 0) delete copy[key];
  else copy[key] = without(copy[key], rest);
  return copy;
}

/** The first place where two JSON values differ, as a path and what differs. */
function difference(a: unknown, b: unknown, path = "$"): string | undefined {
  if (
    typeof a !== "object" || a === null || typeof b !== "object" || b === null
  ) {
    const [bigA, bigB] = [bigIntegerOf(a), bigIntegerOf(b)];
    const same = bigA !== undefined || bigB !== undefined
      ? bigA === bigB
      : Object.is(a, b) || (a === b);
    return same ? undefined : `${path}: expected ${shown(a)}, got ${shown(b)}`;
  }
  if (Array.isArray(a) !== Array.isArray(b)) {
    return `${path}: expected ${shown(a)}, got ${shown(b)}`;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const d = difference(a[i], b[i], `${path}[${i}]`);
      if (d !== undefined) return d;
    }
    return a.length === b.length
      ? undefined
      : `${path}: expected ${a.length} items, got ${b.length}`;
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  for (const key of Object.keys(ra)) {
    const p = /^[A-Za-z_$][\w$]*$/.test(key)
      ? `${path}.${key}`
      : `${path}[${JSON.stringify(key)}]`;
    if (!Object.hasOwn(rb, key)) return `${p}: missing`;
    const d = difference(ra[key], rb[key], p);
    if (d !== undefined) return d;
  }
  for (const key of Object.keys(rb)) {
    if (!Object.hasOwn(ra, key)) return `${path}: unexpected key ${quote(key)}`;
  }
  return undefined;
}

function shown(value: unknown): string {
  const text = exactJson(value) ?? String(value);
  return clip(text, 60);
}

/**
 * `json_match`: 1 when the JSON output equals `expected` whatever the order
 * of keys (lists keep their order), the `ignore` paths left out on both
 * sides; else 0, with the first difference in the reason. A string
 * `expected` is read as JSON text when it parses, else as a JSON string.
 * An output that is not JSON scores 0; `non_evaluable` without `expected`.
 *
 * @param options The name and the paths to ignore.
 * @returns The scorer.
 *
 * @example
 * ```ts
 * import { jsonMatch } from "./mod.ts";
 * const unit = { example_id: "d#1", unit_id: "d#1", input: "q", output: '{"b": [1, 2], "a": "x"}', expected: '{"a": "x", "b": [2, 1]}' };
 * const s = await jsonMatch().score(unit, {});
 * if ("scores" in s || s.value !== 0 || s.reason !== "$.b[0]: expected 2, got 1") throw new Error("unexpected");
 * ```
 */
export function jsonMatch(options: JsonMatchOptions = {}): Scorer {
  const name = options.name ?? "json_match";
  const ignore = (options.ignore ?? []).map((p) => p.split("."));
  const version = versionOf("json_match", {
    ignore: ignore.length > 0 ? options.ignore : undefined,
  });
  const strip = (value: unknown) =>
    ignore.reduce((v, keys) => without(v, keys), value);
  return {
    name,
    version,
    range: UNIT_RANGE,
    score(unit: Unit): Score {
      if (unit.expected === undefined || unit.expected === null) {
        return noExpected(name, version);
      }
      // As the dataset spelt it: its integers past 2^53 exact.
      let expected: unknown = parseExact(expectedJson(unit));
      if (typeof expected === "string") {
        try {
          expected = parseExact(expected);
        } catch (error) {
          // Not JSON text: the expected value is that string itself.
          if (!(error instanceof SyntaxError)) throw error;
        }
      }
      const parsed = parseOutput(unit);
      if (!parsed.ok) {
        return scored(name, 0, {
          evaluator_version: version,
          reason: parsed.reason,
        });
      }
      const a = strip(expected);
      const b = strip(parsed.value);
      const d = exactJson(a, true) === exactJson(b, true)
        ? undefined
        : difference(a, b) ?? "differs";
      return scored(name, d === undefined ? 1 : 0, {
        evaluator_version: version,
        ...(d === undefined ? {} : { reason: d }),
      });
    },
  };
}
