/**
 * Built-in text scorers that compare the output with reference texts:
 * `exact_match`, `contains`, `not_contains` and `starts_with`. The texts are
 * the scorer's own (`value`, `values`) or, without them, the case's
 * `expected`.
 *
 * @module
 */

import { nonEvaluable, type Score, scored } from "../score/mod.ts";
import { type Scorer, UNIT_RANGE } from "./scorer.ts";
import {
  scoresAsMade,
  UNIT_PATH,
  type UnitPath,
  unitScore,
} from "./_unit_path.ts";
import type { Unit } from "../dataset/unit.ts";
import {
  formHint,
  noExpected,
  normalizer,
  quote,
  quoteList,
  references,
  versionOf,
} from "./_builtin.ts";

/**
 * Options of the built-in text scorers.
 *
 * @example Two contains scorers side by side, one ignoring case
 * ```ts
 * import { contains, scoreUnits, type TextScorerOptions } from "./mod.ts";
 * const options: TextScorerOptions = { name: "contains_any_case", ignore_case: true };
 * const units = [{ example_id: "d#1", unit_id: "d#1", input: "capital?", output: "PARIS", expected: "paris" }];
 * const scores = await Array.fromAsync(ReadableStream.from(units).pipeThrough(scoreUnits([contains(), contains(options)])));
 * if (scores.map((s) => `${s.metric}=${s.value}`).join() !== "contains=0,contains_any_case=1") throw new Error("unexpected");
 * ```
 */
export interface TextScorerOptions {
  /**
   * The metric name.
   * @default {the scorer's type, e.g. `exact_match`}
   */
  name?: string | undefined;
  /**
   * Compare without regard to letter case.
   * @default {false}
   */
  ignore_case?: boolean | undefined;
  /**
   * Compare the texts in this Unicode normalization form: `nfc` (one
   * spelling for each character: "é" written as one code point or as "e"
   * and a combining accent is one text) or `nfkc` (also compatibility
   * forms: full-width "Ａ" is "A", "ﬁ" is "fi"). Without it the code points
   * are compared as written.
   * @default {undefined}
   */
  normalize?: "nfc" | "nfkc" | undefined;
  /**
   * A text of the scorer's own to compare with, instead of the case's
   * `expected`.
   * @default {undefined}
   */
  value?: string | undefined;
  /**
   * Texts of the scorer's own to compare with, instead of the case's
   * `expected` (with `value`, one list).
   * @default {undefined}
   */
  values?: readonly string[] | undefined;
}

/**
 * Options of {@linkcode contains}: the text options and whether any or all
 * of the texts must be found.
 *
 * @example Any one of the words will do
 * ```ts
 * import { contains, type ContainsScorerOptions } from "./mod.ts";
 * const options: ContainsScorerOptions = { values: ["sorry", "apologise"], mode: "any", ignore_case: true };
 * const s = await contains(options).score({ example_id: "d#1", unit_id: "d#1", input: "q", output: "Sorry for that" }, {});
 * if ("scores" in s || s.value !== 1) throw new Error("unexpected");
 * ```
 */
export interface ContainsScorerOptions extends TextScorerOptions {
  /**
   * `all`: the value is the fraction of the texts found, and it passes when
   * all are; `any`: 1 when at least one is found, else 0.
   * @default {"all"}
   */
  mode?: "any" | "all" | undefined;
}

type Judge = (
  output: string,
  refs: readonly string[],
  norm: (text: string) => string,
) => { value: number; passed?: boolean; reason?: string };

/**
 * Refuses a text of the scorer's own that every output holds (`""`; white
 * space alone for `starts_with`, which sets leading white space aside): it
 * would pass every case (fail, for `not_contains`), measuring nothing. The
 * words are the config's, which checks the same before building.
 */
function refuseEmptyText(
  type: string,
  options: TextScorerOptions,
  inEvery: "contains" | "starts with",
): void {
  const blank = inEvery === "starts with"
    ? (text: string) => text.trimStart() === ""
    : (text: string) => text === "";
  const item = options.values?.findIndex(blank) ?? -1;
  const key = options.value !== undefined && blank(options.value)
    ? "value"
    : item >= 0
    ? `values[${item}]`
    : undefined;
  if (key === undefined) return;
  const text = key === "value" ? options.value : options.values?.[item];
  throw new RangeError(
    `The ${type} scorer's "${key}" is ${
      text === ""
        ? `empty: every output ${inEvery} ""`
        : "white space alone: every output starts with it, its leading white space aside"
    }, so it would ${
      type === "not_contains" ? "fail" : "pass"
    } every case; give a text`,
  );
}

function textScorer(
  type: string,
  options: TextScorerOptions & { mode?: string | undefined },
  judge: Judge,
  /** What every output does with "", for a scorer that finds texts in it. */
  inEvery?: "contains" | "starts with",
): Scorer {
  const name = options.name ?? type;
  const fold = options.ignore_case === true;
  const own = [
    ...(options.value !== undefined ? [options.value] : []),
    ...(options.values ?? []),
  ];
  if (inEvery !== undefined) refuseEmptyText(type, options, inEvery);
  const version = versionOf(type, {
    ignore_case: options.ignore_case,
    ...(own.length > 0 ? { values: own } : {}),
    mode: options.mode,
    normalize: options.normalize,
  });
  const norm = normalizer(type, fold, options.normalize);
  const nfc = options.normalize === undefined
    ? normalizer(type, fold, "nfc")
    : undefined;
  return {
    name,
    version,
    range: UNIT_RANGE,
    score(unit: Unit): Score {
      const refs = own.length > 0 ? own : references(unit);
      if (refs === undefined) {
        return noExpected(name, version, unit.expected);
      }
      // "" is in every output: a dataset's `"expected": ""` would pass (or
      // fail) every case, as a config's `value: ""`, which is refused.
      // starts_with sets leading white space aside, so " " is "" there.
      const empty = inEvery === undefined || own.length > 0
        ? undefined
        : inEvery === "contains"
        ? refs.find((r) => r === "")
        : refs.find((r) => r.trimStart() === "");
      if (empty !== undefined) {
        return nonEvaluable(name, {
          evaluator_version: version,
          reason: `not applicable: the case's expected ${
            refs.length === 1 ? "is" : "holds"
          } ${
            empty === ""
              ? '"" (an empty text)'
              : `${quote(empty)} (white space alone)`
          }, which every output ${inEvery}${
            empty === "" ? "" : ", its leading white space aside"
          }`,
        });
      }
      const output = unit.output ?? "";
      const { value, passed, reason } = judge(norm(output), refs, norm);
      const hint = nfc === undefined || reason === undefined
        ? ""
        : formHint(value, () => judge(nfc(output), refs, nfc).value, output);
      return scored(name, value, {
        evaluator_version: version,
        ...(passed !== undefined ? { passed } : {}),
        ...(reason !== undefined ? { reason: reason + hint } : {}),
      });
    },
  };
}

/**
 * `exact_match`: 1 when the output, trimmed, equals the expected text (or
 * one of a list of accepted texts), else 0. `non_evaluable` without
 * `expected` (unless the scorer has texts of its own).
 *
 * @param options Name, case folding, texts of its own.
 * @returns The scorer.
 *
 * @example
 * ```ts
 * import { exactMatch } from "./builtin.ts";
 * const s = await exactMatch().score(
 *   { example_id: "a#1", unit_id: "a#1", input: "q", output: " 30 days\n", expected: "30 days" }, {});
 * if ("scores" in s || s.value !== 1) throw new Error("unexpected");
 * ```
 */
export function exactMatch(options: TextScorerOptions = {}): Scorer {
  const text = textScorer("exact_match", options, (output, refs, norm) => {
    const got = output.trim();
    const hit = refs.some((r) => norm(r).trim() === got);
    return hit ? { value: 1 } : {
      value: 0,
      reason: `expected ${
        refs.length === 1
          ? quote(refs[0]!.trim(), 200)
          : `any of ${quoteList(refs.map((r) => r.trim()))}`
      }`,
    };
  });
  if (options.value !== undefined || options.values !== undefined) return text;
  const { name, version } = text;
  const fold = options.ignore_case === true;
  const nfc = normalizer(name, fold, "nfc");
  // The reason of the last miss, for the expected text it names: a dataset
  // often expects one of a few answers.
  let missed: string | undefined;
  let missReason = "";
  /**
   * One expected text, the common case, judged without the list of
   * references and the judge's result: `null` for a hit, the reason of a
   * miss, or `undefined` when the case is not that one.
   */
  const oneText = (unit: Unit): string | null | undefined => {
    const expected = unit.expected;
    if (typeof expected !== "string" || options.normalize !== undefined) {
      return undefined;
    }
    const output = unit.output ?? "";
    const hit = fold
      ? expected.toLowerCase().trim() === output.toLowerCase().trim()
      : expected.trim() === output.trim();
    if (hit) return null;
    const hint = formHint(
      0,
      () => nfc(expected).trim() === nfc(output).trim() ? 1 : 0,
      output,
    );
    if (hint !== "") return `expected ${quote(expected.trim(), 200)}${hint}`;
    if (expected !== missed) {
      missed = expected;
      missReason = `expected ${quote(expected.trim(), 200)}`;
    }
    return missReason;
  };
  const score: Scorer["score"] = (unit, context) => {
    const miss = oneText(unit);
    if (miss === null) return scored(name, 1, { evaluator_version: version });
    if (miss !== undefined) {
      return scored(name, 0, { evaluator_version: version, reason: miss });
    }
    const byText = text.score(unit, context) as Score;
    // An expected value that is not text is JSON: an output that is the
    // same JSON written otherwise (spaces, key order) is the same answer.
    if (byText.value !== 0 || !isStructured(unit.expected)) return byText;
    const output = parseJson(unit.output ?? "");
    if (output === NOT_JSON || !sameJson(output, unit.expected)) return byText;
    return scored(byText.metric, 1, {
      evaluator_version: byText.evaluator_version,
      reason: "the output is the expected JSON value, written otherwise",
    });
  };
  const scorer: Scorer & UnitPath = {
    ...text,
    // A run's Score, built once with the unit's ids: not built without them
    // and then copied to add them, as `checkScores` would.
    [UNIT_PATH](this: Scorer, unit: Unit): Score[] | undefined {
      // A script's scorer spread from this one (`{...exactMatch(), score}`)
      // carries this path too: it is taken only as this scorer scores.
      if (!scoresAsMade(this, score, name, version)) return undefined;
      const { example_id, unit_id } = unit;
      if (typeof example_id !== "string" || typeof unit_id !== "string") {
        return undefined;
      }
      const miss = name === "" ? undefined : oneText(unit);
      if (miss === undefined) return undefined;
      return [
        miss === null
          ? unitScore(
            name,
            "scored",
            "valid",
            1,
            true,
            undefined,
            version,
            unit,
          )
          : unitScore(name, "scored", "valid", 0, false, miss, version, unit),
      ];
    },
    score,
  };
  return scorer;
}

/** What `parseJson` gives for text that is not JSON. */
const NOT_JSON = Symbol("not JSON");

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    if (error instanceof SyntaxError) return NOT_JSON;
    throw error;
  }
}

/** An `expected` compared as JSON: anything but a text or a list of texts. */
function isStructured(expected: unknown): boolean {
  if (expected === undefined || expected === null) return false;
  if (typeof expected === "string") return false;
  return !(Array.isArray(expected) &&
    expected.every((e) => typeof e === "string"));
}

/**
 * Whether two JSON values are the same, objects whatever their key order.
 * An integer beyond 2^53 is never equal here: parsing has rounded it, so
 * only its text (compared before) can say.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (typeof a === "number" || typeof b === "number") {
    return typeof a === "number" && typeof b === "number" && a === b &&
      (!Number.isInteger(a) || Number.isSafeInteger(a));
  }
  if (
    a === null || b === null || typeof a !== "object" || typeof b !== "object"
  ) {
    return a === b;
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length &&
      a.every((x, i) => sameJson(x, b[i]));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length &&
    ka.every((k) =>
      Object.hasOwn(b, k) &&
      sameJson(
        (a as Record<string, unknown>)[k],
        (b as Record<string, unknown>)[k],
      )
    );
}

/**
 * `contains`: the fraction of the expected texts found in the output (1 or
 * 0 for a single text); passes only when all are found. With `mode: "any"`,
 * 1 when one is found. `non_evaluable` without `expected` (unless the
 * scorer has texts of its own).
 *
 * @param options Name, case folding, texts of its own, any or all.
 * @returns The scorer.
 * @throws {RangeError} When a text of its own is empty (white space alone,
 *   for `starts_with`): every output holds it.
 *
 * @example
 * ```ts
 * import { contains } from "./builtin.ts";
 * const s = await contains().score(
 *   { example_id: "a#1", unit_id: "a#1", input: "q", output: "in 30 days", expected: ["30", "days", "refund"] }, {});
 * if ("scores" in s || s.passed !== false) throw new Error("unexpected");
 * ```
 */
export function contains(options: ContainsScorerOptions = {}): Scorer {
  const any = options.mode === "any";
  return textScorer("contains", options, (output, refs, norm) => {
    // Reasons quote the expected texts as written, not as folded.
    const missing = refs.filter((r) => !output.includes(norm(r)));
    if (any) {
      return missing.length < refs.length
        ? { value: 1 }
        : { value: 0, reason: `none of ${quoteList(refs)} found` };
    }
    return {
      value: (refs.length - missing.length) / refs.length,
      passed: missing.length === 0,
      ...(missing.length === 0
        ? {}
        : { reason: `missing ${quoteList(missing)}` }),
    };
  }, "contains");
}

/**
 * `not_contains`: 1 when none of the texts is found in the output, else 0,
 * the texts found named in the reason. `non_evaluable` without `expected`
 * (unless the scorer has texts of its own).
 *
 * @param options Name, case folding, texts of its own.
 * @returns The scorer.
 * @throws {RangeError} When a text of its own is empty (white space alone,
 *   for `starts_with`): every output holds it.
 *
 * @example No apology in the answer
 * ```ts
 * import { notContains } from "./mod.ts";
 * const s = await notContains({ values: ["sorry", "as an AI"], ignore_case: true }).score(
 *   { example_id: "a#1", unit_id: "a#1", input: "q", output: "Sorry, I cannot" }, {});
 * if ("scores" in s || s.value !== 0 || s.reason !== 'found "sorry"') throw new Error("unexpected");
 * ```
 */
export function notContains(options: TextScorerOptions = {}): Scorer {
  return textScorer("not_contains", options, (output, refs, norm) => {
    const found = refs.filter((r) => output.includes(norm(r)));
    return found.length === 0
      ? { value: 1 }
      : { value: 0, reason: `found ${quoteList(found)}` };
  }, "contains");
}

/**
 * `starts_with`: 1 when the output starts with the text (or one of the
 * texts), the leading white space of both aside, else 0. `non_evaluable` without
 * `expected` (unless the scorer has texts of its own).
 *
 * @param options Name, case folding, texts of its own.
 * @returns The scorer.
 * @throws {RangeError} When a text of its own is empty (white space alone,
 *   for `starts_with`): every output holds it.
 *
 * @example An answer that leads with its verdict
 * ```ts
 * import { startsWith } from "./mod.ts";
 * const s = await startsWith({ values: ["Yes", "No"] }).score(
 *   { example_id: "a#1", unit_id: "a#1", input: "q", output: "\nNo, because..." }, {});
 * if ("scores" in s || s.value !== 1) throw new Error("unexpected");
 * ```
 */
export function startsWith(options: TextScorerOptions = {}): Scorer {
  return textScorer("starts_with", options, (output, refs, norm) => {
    // The expected's leading white space is set aside too: the output's is.
    const got = output.trimStart();
    return refs.some((r) => got.startsWith(norm(r).trimStart()))
      ? { value: 1 }
      : {
        value: 0,
        reason: `does not start with ${
          refs.length === 1 ? quote(refs[0]!) : `any of ${quoteList(refs)}`
        }`,
      };
  }, "starts with");
}
