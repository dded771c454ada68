/**
 * Built-in scorers: `exact_match` and `contains`.
 *
 * @module
 */

import { expectedJson } from "../dataset/case.ts";
import { nonEvaluable, type Score, scored } from "../score/mod.ts";
import { type Scorer, UNIT_RANGE } from "./scorer.ts";
import type { Unit } from "../dataset/unit.ts";

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
   * @default {the scorer's type, `exact_match` or `contains`}
   */
  name?: string;
  /**
   * Compare without regard to letter case.
   * @default {false}
   */
  ignore_case?: boolean;
}

/** The reference texts of a unit: a string, a list of strings, or any other value's JSON. */
function references(unit: Unit): string[] | undefined {
  const expected = unit.expected;
  if (expected === undefined || expected === null) return undefined;
  if (typeof expected === "string") return [expected];
  if (Array.isArray(expected) && expected.every((e) => typeof e === "string")) {
    return expected;
  }
  return [expectedJson(unit)];
}

function builtin(
  type: string,
  options: TextScorerOptions,
  judge: (
    output: string,
    refs: string[],
    norm: (text: string) => string,
    metric: string,
    version: string,
  ) => Score,
): Scorer {
  const name = options.name ?? type;
  const fold = options.ignore_case === true;
  const version = `${type}@1${fold ? "+ignore_case" : ""}`;
  const norm = (s: string) => (fold ? s.toLowerCase() : s);
  return {
    name,
    version,
    range: UNIT_RANGE,
    score(unit) {
      const refs = references(unit);
      if (refs === undefined || refs.length === 0) {
        return nonEvaluable(name, {
          evaluator_version: version,
          reason: "not applicable: the case has no expected",
        });
      }
      return judge(norm(unit.output ?? ""), refs, norm, name, version);
    },
  };
}

/**
 * `exact_match`: 1 when the output, trimmed, equals the expected text (or
 * one of a list of accepted texts), else 0. `not_applicable` without
 * `expected`.
 *
 * @param options Name and case folding.
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
  return builtin(
    "exact_match",
    options,
    (output, refs, norm, metric, version) => {
      const got = output.trim();
      const hit = refs.some((r) => norm(r).trim() === got);
      return scored(metric, hit ? 1 : 0, {
        evaluator_version: version,
        ...(hit ? {} : {
          reason: `expected ${JSON.stringify(refs[0]!.trim().slice(0, 200))}`,
        }),
      });
    },
  );
}

/**
 * `contains`: the fraction of the expected texts found in the output (1 or
 * 0 for a single text); passes only when all are found. `not_applicable`
 * without `expected`.
 *
 * @param options Name and case folding.
 * @returns The scorer.
 *
 * @example
 * ```ts
 * import { contains } from "./builtin.ts";
 * const s = await contains().score(
 *   { example_id: "a#1", unit_id: "a#1", input: "q", output: "in 30 days", expected: ["30", "days", "refund"] }, {});
 * if ("scores" in s || s.passed !== false) throw new Error("unexpected");
 * ```
 */
export function contains(options: TextScorerOptions = {}): Scorer {
  return builtin("contains", options, (output, refs, norm, metric, version) => {
    // Reasons quote the expected texts as written, not as folded.
    const missing = refs.filter((r) => !output.includes(norm(r)));
    const value = (refs.length - missing.length) / refs.length;
    return scored(metric, value, {
      evaluator_version: version,
      passed: missing.length === 0,
      ...(missing.length === 0 ? {} : {
        reason: `missing ${
          missing.slice(0, 5).map((m) => JSON.stringify(m.slice(0, 100))).join(
            ", ",
          )
        }`,
      }),
    });
  });
}
