/**
 * The built-in `numeric` scorer: the first number in the output against
 * the case's `expected`, within a tolerance.
 *
 * @module
 */

import { nonEvaluable, type Score, scored } from "../score/mod.ts";
import { type Scorer, UNIT_RANGE } from "./scorer.ts";
import type { Unit } from "../dataset/unit.ts";
import { noExpected, quote, versionOf } from "./_builtin.ts";

/**
 * Options of {@linkcode numericMatch}. A number passes when it is within
 * `max(abs_tol, rel_tol × |expected|)` of `expected`. Unlike Python's
 * `math.isclose`, which scales `rel_tol` by the larger of the two numbers,
 * the tolerance is `expected`'s alone: an output far off never widens it.
 *
 * @example Within 1% of the expected figure
 * ```ts
 * import { numericMatch, type NumericScorerOptions } from "./mod.ts";
 * const options: NumericScorerOptions = { rel_tol: 0.01 };
 * const s = await numericMatch(options).score({ example_id: "d#1", unit_id: "d#1", input: "q", output: "About 1,005 km.", expected: 1000 }, {});
 * if ("scores" in s || s.value !== 1) throw new Error("unexpected");
 * ```
 */
export interface NumericScorerOptions {
  /**
   * The metric name.
   * @default {"numeric"}
   */
  name?: string | undefined;
  /**
   * The largest absolute difference that passes.
   * @default {0}
   */
  abs_tol?: number | undefined;
  /**
   * The largest difference that passes, as a share of `|expected|`.
   * @default {0}
   */
  rel_tol?: number | undefined;
}

// A sign (typeset text's minus sign U+2212 too, as models write "−5"),
// digits (with thousands separators only in groups of three), a fraction, an
// exponent: "-1,234.5e3", "+.5", "42".
const NUMBER =
  /[-+\u2212]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(?:[eE][-+\u2212]?\d+)?/;

// An `expected` text that is a number, read by the same rules, whole (a
// trailing "." as Python's float() takes it): "1,5" is no number (a decimal
// comma, not 15), nor "0x10".
const EXPECTED_NUMBER =
  /^[-+\u2212]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)(?:[eE][-+\u2212]?\d+)?$/;

/** A number as {@linkcode NUMBER} reads it, as JavaScript's `Number`. */
function numberOf(written: string): number {
  return Number(written.replaceAll(",", "").replaceAll("\u2212", "-"));
}

/**
 * The first number in a text, thousands separators dropped.
 *
 * @param text The text.
 * @returns The number (±Infinity for one beyond ±1.8e308), and how it is
 *   written; `undefined` when there is none.
 */
function firstNumber(
  text: string,
): { value: number; written: string } | undefined {
  const m = NUMBER.exec(text);
  if (m === null) return undefined;
  return { value: numberOf(m[0]), written: m[0] };
}

/**
 * `numeric`: 1 when the first number in the output is within the tolerance
 * of `expected` (a number, or a text that is one), else 0, both numbers in
 * the reason. An output without a number scores 0. `non_evaluable` without
 * `expected`, or when `expected` is not a number.
 *
 * @param options Name and tolerances.
 * @returns The scorer.
 * @throws {RangeError} When a tolerance is negative.
 *
 * @example Exactly 4
 * ```ts
 * import { numericMatch } from "./mod.ts";
 * const s = await numericMatch().score({ example_id: "d#1", unit_id: "d#1", input: "2+2?", output: "It is 4.", expected: "4" }, {});
 * if ("scores" in s || s.value !== 1) throw new Error("unexpected");
 * ```
 */
export function numericMatch(options: NumericScorerOptions = {}): Scorer {
  const abs = options.abs_tol ?? 0;
  const rel = options.rel_tol ?? 0;
  for (const [key, tol] of [["abs_tol", abs], ["rel_tol", rel]] as const) {
    if (!(Number.isFinite(tol) && tol >= 0)) {
      throw new RangeError(
        `The numeric scorer's "${key}" must be a number of at least 0, not ${tol}`,
      );
    }
  }
  const name = options.name ?? "numeric";
  const version = versionOf("numeric", {
    abs_tol: options.abs_tol,
    rel_tol: options.rel_tol,
  });
  return {
    name,
    version,
    range: UNIT_RANGE,
    score(unit: Unit): Score {
      const raw = unit.expected;
      if (raw === undefined || raw === null) return noExpected(name, version);
      const expected = typeof raw === "number"
        ? raw
        : typeof raw === "string" && EXPECTED_NUMBER.test(raw.trim())
        ? numberOf(raw.trim())
        : NaN;
      if (!Number.isFinite(expected)) {
        return nonEvaluable(name, {
          evaluator_version: version,
          reason: `not applicable: expected ${
            typeof raw === "string"
              ? quote(raw, 60)
              : (JSON.stringify(raw) ?? String(raw)).slice(0, 60)
          } is not a number`,
        });
      }
      const first = firstNumber(unit.output ?? "");
      if (first === undefined) {
        return scored(name, 0, {
          evaluator_version: version,
          reason: "no number in the output",
        });
      }
      const got = first.value;
      if (!Number.isFinite(got)) {
        // A number was said, one no finite expected is near.
        return scored(name, 0, {
          evaluator_version: version,
          reason: `got ${
            quote(first.written, 60)
          }, beyond ±1.8e308, expected ${expected}`,
        });
      }
      const tolerance = Math.max(abs, rel * Math.abs(expected));
      const ok = Math.abs(got - expected) <= tolerance;
      return scored(name, ok ? 1 : 0, {
        evaluator_version: version,
        ...(ok ? {} : {
          reason: `got ${got}, expected ${expected}${
            tolerance > 0 ? ` ± ${tolerance}` : ""
          }`,
        }),
      });
    },
  };
}
