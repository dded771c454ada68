/**
 * The built-in `set_overlap` scorer: the overlap of a list output with a
 * list `expected`, as Jaccard's index or F1.
 *
 * @module
 */

import { type Score, scored } from "../score/mod.ts";
import { type Scorer, UNIT_RANGE } from "./scorer.ts";
import type { Unit } from "../dataset/unit.ts";
import {
  checkThreshold,
  formHint,
  noExpected,
  normalizer,
  quoteList,
  versionOf,
} from "./_builtin.ts";

/**
 * Options of {@linkcode setOverlap}.
 *
 * @example F1 of the tags, in any case
 * ```ts
 * import { setOverlap, type SetOverlapOptions } from "./mod.ts";
 * const options: SetOverlapOptions = { measure: "f1", ignore_case: true };
 * const unit = { example_id: "d#1", unit_id: "d#1", input: "q", output: '["Red", "blue"]', expected: ["red", "green"] };
 * const s = await setOverlap(options).score(unit, {});
 * if ("scores" in s || s.value !== 0.5) throw new Error("unexpected");
 * ```
 */
export interface SetOverlapOptions {
  /**
   * The metric name.
   * @default {"set_overlap"}
   */
  name?: string | undefined;
  /**
   * `jaccard`: shared items over all items; `f1`: twice the shared items
   * over the sizes of both sets.
   * @default {"jaccard"}
   */
  measure?: "jaccard" | "f1" | undefined;
  /**
   * Compare items without regard to letter case.
   * @default {false}
   */
  ignore_case?: boolean | undefined;
  /**
   * Compare items in this Unicode normalization form, as the text scorers
   * do: `nfc` ("é" written as one code point or as "e" and a combining
   * accent is one item) or `nfkc` (also compatibility forms: full-width "Ａ"
   * is "A"). Without it the code points are compared as written.
   * @default {undefined}
   */
  normalize?: "nfc" | "nfkc" | undefined;
  /**
   * The least value that passes, within 0..1.
   * @default {0.5}
   */
  threshold?: number | undefined;
}

/** A list's items as texts: strings as they are, other values as JSON. */
function items(value: readonly unknown[]): string[] {
  return value.map((v) => typeof v === "string" ? v : JSON.stringify(v));
}

/** The items of a list text: a JSON list, else one item per non-empty line. */
function listOf(text: string): string[] {
  const trimmed = text.trim();
  if (trimmed.startsWith("[")) {
    try {
      const value: unknown = JSON.parse(trimmed);
      if (Array.isArray(value)) return items(value);
    } catch (error) {
      // Not JSON after all ("[1] see below"): read it as lines.
      if (!(error instanceof SyntaxError)) throw error;
    }
  }
  return trimmed.split("\n").filter((line) => line.trim() !== "");
}

/**
 * `set_overlap`: the Jaccard index (or F1) of the set of the output's items
 * (a JSON list, or one item per line) and the set of `expected`'s (a list,
 * or a text read as the output is), items trimmed; two empty sets are 1,
 * as evalglass's `set_overlap` has it. `non_evaluable` without `expected`.
 *
 * @param options Name, measure, case folding, normalization form, threshold.
 * @returns The scorer.
 *
 * @example One item shared of three: Jaccard 1/3
 * ```ts
 * import { setOverlap } from "./mod.ts";
 * const unit = { example_id: "d#1", unit_id: "d#1", input: "q", output: "paris\nrome\n", expected: ["paris", "berlin"] };
 * const s = await setOverlap().score(unit, {});
 * if ("scores" in s || s.value !== 1 / 3 || s.reason !== 'missing "berlin"; extra "rome"') throw new Error("unexpected");
 * ```
 */
export function setOverlap(options: SetOverlapOptions = {}): Scorer {
  checkThreshold("set_overlap", options.threshold);
  const name = options.name ?? "set_overlap";
  const f1 = options.measure === "f1";
  const threshold = options.threshold ?? 0.5;
  const fold = options.ignore_case === true;
  const version = versionOf("set_overlap", {
    ignore_case: options.ignore_case,
    measure: options.measure,
    normalize: options.normalize,
    threshold: options.threshold,
  });
  const norm = normalizer("set_overlap", fold, options.normalize);
  // Without a form: the value in NFC, for the reason of a miss.
  const nfc = options.normalize === undefined
    ? normalizer("set_overlap", fold, "nfc")
    : undefined;
  const measure = (
    got: readonly string[],
    want: readonly string[],
    read: (text: string) => string,
  ) => {
    const set = (list: readonly string[]) =>
      new Set(list.map((s) => read(s.trim())));
    const expected = set(want);
    const output = set(got);
    const shared = [...output].filter((item) => expected.has(item)).length;
    const value = output.size + expected.size === 0
      ? 1
      : f1
      ? (2 * shared) / (output.size + expected.size)
      : shared / (output.size + expected.size - shared);
    return { value, expected, output };
  };
  return {
    name,
    version,
    range: UNIT_RANGE,
    score(unit: Unit): Score {
      const raw = unit.expected;
      if (raw === undefined || raw === null) return noExpected(name, version);
      const want = Array.isArray(raw)
        ? items(raw)
        : listOf(typeof raw === "string" ? raw : JSON.stringify(raw));
      const out = unit.output ?? "";
      const got = listOf(out);
      const { value, expected, output } = measure(got, want, norm);
      const missing = [...expected].filter((item) => !output.has(item));
      const extra = [...output].filter((item) => !expected.has(item));
      const reason = [
        ...(missing.length > 0 ? [`missing ${quoteList(missing)}`] : []),
        ...(extra.length > 0 ? [`extra ${quoteList(extra)}`] : []),
      ].join("; ");
      const hint = nfc === undefined || reason === ""
        ? ""
        : formHint(value, () => measure(got, want, nfc).value, out);
      return scored(name, value, {
        evaluator_version: version,
        passed: value >= threshold,
        ...(reason !== "" ? { reason: reason + hint } : {}),
      });
    },
  };
}
