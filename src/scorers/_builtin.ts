// What the built-in scorers share: their versions, the reference texts of a
// unit, and the Scores they return when a metric does not apply.

import { expectedJson } from "../io/_expected_text.ts";
import type { Unit } from "../dataset/unit.ts";
import { fingerprint } from "../fingerprint/fingerprint.ts";
import { nonEvaluable, type Score } from "../score/mod.ts";
import { clip } from "../base/terminal.ts";

/** A value's JSON with the keys of every mapping sorted: one text per meaning. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return v;
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>).sort(([a], [b]) =>
        a < b ? -1 : a > b ? 1 : 0
      ),
    );
  });
}

/**
 * A built-in's `evaluator_version`: `type@N` (`N` its revision, raised when a
 * release scores the same options differently), `+ignore_case` when it folds
 * case (as `exact_match` always wrote it), and a short hash of every other
 * option that changes its Scores, so that changing one changes the version.
 */
export function versionOf(
  type: string,
  options: Readonly<Record<string, unknown>>,
  revision = 1,
): string {
  const { name: _name, ignore_case, ...rest } = options;
  const set = Object.entries(rest).filter(([, v]) => v !== undefined);
  let version = `${type}@${revision}${
    ignore_case === true ? "+ignore_case" : ""
  }`;
  if (set.length > 0) {
    version += `+${
      fingerprint(canonicalJson(Object.fromEntries(set))).slice(7, 15)
    }`;
  }
  return version;
}

/** The reference texts of a unit: a string, a list of strings, or any other value's JSON. */
export function references(unit: Unit): string[] | undefined {
  const expected = unit.expected;
  if (expected === undefined || expected === null) return undefined;
  if (typeof expected === "string") return [expected];
  if (Array.isArray(expected) && expected.every((e) => typeof e === "string")) {
    return expected.length > 0 ? expected : undefined;
  }
  return [expectedJson(unit)];
}

/**
 * The Score of a unit that gives the scorer nothing to compare with: no
 * `expected`, or an empty list of texts (`expected` is then given).
 */
export function noExpected(
  metric: string,
  version: string,
  expected?: unknown,
): Score {
  return nonEvaluable(metric, {
    evaluator_version: version,
    reason: Array.isArray(expected) && expected.length === 0
      ? "not applicable: the case's expected is an empty list"
      : "not applicable: the case has no expected",
  });
}

/** A text quoted for a reason, cut to `max` characters. */
export function quote(text: string, max = 100): string {
  return JSON.stringify(clip(text, max));
}

/** Some texts quoted for a reason: the first five, and how many more. */
export function quoteList(texts: readonly string[]): string {
  const shown = texts.slice(0, 5).map((t) => quote(t)).join(", ");
  return texts.length > 5 ? `${shown} and ${texts.length - 5} more` : shown;
}

/** The value of `threshold` checked: a number in 0..1. */
export function checkThreshold(type: string, threshold: number | undefined) {
  if (
    threshold !== undefined &&
    !(Number.isFinite(threshold) && threshold >= 0 && threshold <= 1)
  ) {
    throw new RangeError(
      `The ${type} scorer's "threshold" must be within 0..1, not ${threshold}`,
    );
  }
}

// The Unicode normalization forms of a text scorer's `normalize`.
type TextForm = "nfc" | "nfkc";

/**
 * How a scorer reads a text: case folded when `fold`, then in the
 * normalization form `form` (as written without one).
 *
 * @throws {RangeError} For a form other than `nfc` or `nfkc` (a config
 *   checks it first; a script's `"NFD"` would otherwise be read as NFKC).
 */
export function normalizer(
  type: string,
  fold: boolean,
  form: TextForm | undefined,
): (text: string) => string {
  if (form !== undefined && form !== "nfc" && form !== "nfkc") {
    throw new RangeError(
      `The ${type} scorer's "normalize" must be "nfc" or "nfkc", not ${
        JSON.stringify(form)
      }`,
    );
  }
  const nf = form === undefined ? undefined : form === "nfc" ? "NFC" : "NFKC";
  if (nf === undefined) return fold ? (s) => s.toLowerCase() : (s) => s;
  // Folding can leave a text out of the form ("İ" is "i" and U+0307).
  return fold ? (s) => s.toLowerCase().normalize(nf) : (s) => s.normalize(nf);
}

/**
 * What a reason adds when the value differs in Unicode NFC: the texts look
 * alike on screen, and the reason alone would not say why they differ.
 * Texts of ASCII alone are the same in every form, and are not judged again.
 *
 * @param value The value as measured.
 * @param inNfc The value with both sides in NFC, measured only when needed.
 * @param output The output, as written.
 */
export function formHint(
  value: number,
  inNfc: () => number,
  output: string,
): string {
  // deno-lint-ignore no-control-regex
  if (/^[\x00-\x7f]*$/.test(output)) return "";
  const other = inNfc();
  if (other === value) return "";
  return `; ${
    Number.isInteger(other) ? other : other.toFixed(3)
  } with normalize: nfc (the texts write a character two ways in Unicode, as "é" is one code point or "e" and a combining accent)`;
}
