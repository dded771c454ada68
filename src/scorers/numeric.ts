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
  // Revision 2: U+2212 read as a minus, `expected` texts read whole, and a
  // number at the tolerance's edge within it, as written (numeric@1 scored
  // these otherwise), so a diff or a baseline against an older run names it.
  const version = versionOf("numeric", {
    abs_tol: options.abs_tol,
    rel_tol: options.rel_tol,
  }, 2);
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
      const ok = within(got, expected, abs, rel, tolerance);
      return scored(name, ok ? 1 : 0, {
        evaluator_version: version,
        ...(ok ? {} : {
          reason: `got ${got}, expected ${expected}${
            tolerance > 0 ? ` ± ${toleranceText(expected, abs, rel)}` : ""
          }`,
        }),
      });
    },
  };
}

/**
 * Whether `got` is within `tolerance` (`max(abs, rel × |expected|)`) of
 * `expected`. Far from the edge the doubles decide; at it their rounding
 * would (1.0 is 0.10000000000000009 from 1.1, 1.2 is 0.09999999999999987),
 * so there each number is read as the decimal it prints as, and compared
 * exactly: 1.0 and 1.2 are both within 0.1 of 1.1.
 */
function within(
  got: number,
  expected: number,
  abs: number,
  rel: number,
  tolerance: number,
): boolean {
  const diff = Math.abs(got - expected);
  // Equal numbers are within any tolerance, and without one only they are:
  // the common case stays off BigInt (two doubles print as one decimal only
  // when they are one double).
  if (diff === 0) return true;
  if (abs === 0 && rel === 0) return false;
  const scale = Math.abs(got) + Math.abs(expected) + tolerance;
  if (Math.abs(diff - tolerance) > 1e-12 * scale) return diff <= tolerance;
  const g = decimalOf(got);
  const e = decimalOf(expected);
  const apart: Decimal = minus(g, e);
  apart.digits = apart.digits < 0n ? -apart.digits : apart.digits;
  return atMost(apart, decimalOf(abs)) ||
    atMost(apart, times(decimalOf(rel), e));
}

/** A decimal number, exactly: `digits × 10^exp`. */
interface Decimal {
  digits: bigint;
  exp: number;
}

/** A finite double as the decimal it prints as (`0.1`, `1e-7`, `-2.5e+21`). */
function decimalOf(n: number): Decimal {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([-+]\d+))?$/.exec(String(n))!;
  const fraction = m[3] ?? "";
  const digits = BigInt(m[2]! + fraction);
  return {
    digits: m[1] === "-" ? -digits : digits,
    exp: Number(m[4] ?? 0) - fraction.length,
  };
}

/** `d`'s digits at the exponent `exp` (at most `d.exp`). */
function at(d: Decimal, exp: number): bigint {
  return d.digits * 10n ** BigInt(d.exp - exp);
}

function minus(a: Decimal, b: Decimal): Decimal {
  const exp = Math.min(a.exp, b.exp);
  return { digits: at(a, exp) - at(b, exp), exp };
}

/** `a × |b|`. */
function times(a: Decimal, b: Decimal): Decimal {
  const digits = b.digits < 0n ? -b.digits : b.digits;
  return { digits: a.digits * digits, exp: a.exp + b.exp };
}

function atMost(a: Decimal, b: Decimal): boolean {
  const exp = Math.min(a.exp, b.exp);
  return at(a, exp) <= at(b, exp);
}

/**
 * The tolerance as a reason shows it: `rel × |expected|` as the exact
 * decimal (`0.07` for 10% of 0.7, not the double's 0.06999999999999999).
 */
function toleranceText(expected: number, abs: number, rel: number): string {
  const relative = times(decimalOf(rel), decimalOf(expected));
  const absolute = decimalOf(abs);
  const d = atMost(relative, absolute) ? absolute : relative;
  const sign = d.digits < 0n ? "-" : "";
  let digits = (d.digits < 0n ? -d.digits : d.digits).toString();
  let exp = d.exp;
  // Trailing zeros of the fraction go: 0.070 is 0.07.
  while (exp < 0 && digits.length > 1 && digits.endsWith("0")) {
    digits = digits.slice(0, -1);
    exp++;
  }
  if (exp >= 0) return Number(`${sign}${digits}e${exp}`).toString();
  const point = digits.length + exp;
  const text = point > 0
    ? `${digits.slice(0, point)}.${digits.slice(point)}`
    : `0.${"0".repeat(-point)}${digits}`;
  // A decimal longer than a double prints (a tiny rel_tol of a long number)
  // is shown as the double.
  return text.length > 24 ? String(Number(sign + text)) : sign + text;
}
