/**
 * Built-in checks of the output's text on its own: `regex`, `word_count`
 * and `one_of`. They need no `expected`, so they always apply.
 *
 * @module
 */

import { type Score, scored } from "../score/mod.ts";
import { type Scorer, UNIT_RANGE } from "./scorer.ts";
import type { Unit } from "../dataset/unit.ts";
import {
  formHint,
  normalizer,
  quote,
  quoteList,
  versionOf,
} from "./_builtin.ts";
import { clip } from "../base/terminal.ts";

/**
 * Options of {@linkcode regexMatch}.
 *
 * @example An output that must not leak an e-mail address
 * ```ts
 * import { regexMatch, type RegexScorerOptions } from "./mod.ts";
 * const options: RegexScorerOptions = { name: "no_email", pattern: "[\\w.]+@[\\w.]+", match: false };
 * const s = await regexMatch(options).score({ example_id: "d#1", unit_id: "d#1", input: "q", output: "write to a.b@c.org" }, {});
 * if ("scores" in s || s.value !== 0) throw new Error("unexpected");
 * ```
 */
export interface RegexScorerOptions {
  /**
   * The metric name.
   * @default {"regex"}
   */
  name?: string | undefined;
  /** The regular expression, as JavaScript's `RegExp` reads it. */
  pattern: string;
  /**
   * Its flags, of `i`, `m`, `s`, `u` and `v` (`g` and `y` would make a test
   * depend on the one before).
   * @default {""}
   */
  flags?: string | undefined;
  /**
   * `true`: the output must match; `false`: it must not.
   * @default {true}
   */
  match?: boolean | undefined;
}

/** The flags a `regex` scorer takes (`_shape.ts` says the same for the config). */
const REGEX_FLAGS = /^(?!.*(.).*\1)[imsuv]*$/;

/**
 * `regex`: 1 when the output matches the pattern (or, with `match: false`,
 * when it does not), else 0.
 *
 * @param options The pattern, its flags, and whether it must match.
 * @returns The scorer.
 * @throws {SyntaxError} When the pattern or its flags are not valid.
 * @throws {RangeError} When the pattern is empty: it matches every output.
 *
 * @example An ISO date somewhere in the output
 * ```ts
 * import { regexMatch } from "./mod.ts";
 * const scorer = regexMatch({ pattern: "\\d{4}-\\d{2}-\\d{2}" });
 * const s = await scorer.score({ example_id: "d#1", unit_id: "d#1", input: "when?", output: "on 2024-05-01" }, {});
 * if ("scores" in s || s.value !== 1) throw new Error("unexpected");
 * ```
 */
export function regexMatch(options: RegexScorerOptions): Scorer {
  // "" matches every output: a slip that would pass (or, with match: false,
  // fail) every case, measuring nothing, as a config's `pattern: ""` is
  // refused for.
  if (options.pattern === "") {
    throw new RangeError(
      `The regex scorer's "pattern" is empty: it matches every output, so it would ${
        options.match === false ? "fail" : "pass"
      } every case; give a pattern`,
    );
  }
  const flags = options.flags ?? "";
  if (!REGEX_FLAGS.test(flags)) {
    throw new SyntaxError(
      `Invalid regular expression flags ${
        quote(flags)
      }: use each of "imsuv" at most once`,
    );
  }
  if (!/[uv]/.test(flags)) {
    // Without u or v, JavaScript reads \p{L} as the letters "p{L}": the
    // pattern compiles and silently matches almost nothing.
    const escape = /(?<!\\)(?:\\\\)*\\([pP]\{[^}]*\}?)/.exec(options.pattern);
    if (escape !== null) {
      throw new SyntaxError(
        `Invalid regular expression /${options.pattern}/${flags}: "\\${
          escape[1]
        }" is a Unicode property escape only with the "u" flag (without it, it matches the text ${
          quote(escape[1]!)
        }): add flags: u`,
      );
    }
  }
  const re = new RegExp(options.pattern, flags);
  const must = options.match ?? true;
  const name = options.name ?? "regex";
  const version = versionOf("regex", {
    pattern: options.pattern,
    flags: options.flags,
    match: options.match,
  });
  // The pattern as a regex literal a user can paste back (`source` escapes
  // `/` and line breaks); JSON's quoting would double every backslash.
  const source = re.source;
  const shown = `/${clip(source, 80)}/${flags}`;
  return {
    name,
    version,
    range: UNIT_RANGE,
    score(unit: Unit): Score {
      const hit = re.test(unit.output ?? "");
      const ok = hit === must;
      return scored(name, ok ? 1 : 0, {
        evaluator_version: version,
        ...(ok ? {} : {
          reason: hit ? `matches ${shown}` : `does not match ${shown}`,
        }),
      });
    },
  };
}

/**
 * Options of {@linkcode wordCount}: at least one bound.
 *
 * @example Between 6 and 12 words
 * ```ts
 * import { wordCount, type WordCountOptions } from "./mod.ts";
 * const options: WordCountOptions = { min: 6, max: 12 };
 * const s = await wordCount(options).score({ example_id: "d#1", unit_id: "d#1", input: "q", output: "Too short." }, {});
 * if ("scores" in s || s.value !== 0 || s.reason !== "2 words, fewer than 6") throw new Error("unexpected");
 * ```
 */
export interface WordCountOptions {
  /**
   * The metric name.
   * @default {"word_count"}
   */
  name?: string | undefined;
  /**
   * The fewest words allowed.
   * @default {no lower bound}
   */
  min?: number | undefined;
  /**
   * The most words allowed.
   * @default {no upper bound}
   */
  max?: number | undefined;
}

/**
 * `word_count`: 1 when the output's number of words (runs of text between
 * white space) lies within `min..max`, else 0, the count in the reason.
 *
 * @param options The bounds.
 * @returns The scorer.
 * @throws {RangeError} Without a bound, or with `min` above `max`.
 *
 * @example At most five words
 * ```ts
 * import { wordCount } from "./mod.ts";
 * const s = await wordCount({ max: 5 }).score({ example_id: "d#1", unit_id: "d#1", input: "q", output: "  Yes,\n it is. " }, {});
 * if ("scores" in s || s.value !== 1) throw new Error("unexpected");
 * ```
 */
export function wordCount(options: WordCountOptions): Scorer {
  const { min, max } = options;
  for (const [key, bound] of [["min", min], ["max", max]] as const) {
    if (bound !== undefined && !(Number.isSafeInteger(bound) && bound >= 0)) {
      throw new RangeError(
        `The word_count scorer's "${key}" must be a whole number of at least 0, not ${bound}`,
      );
    }
  }
  if (min === undefined && max === undefined) {
    throw new RangeError('The word_count scorer needs "min", "max" or both');
  }
  if (min !== undefined && max !== undefined && min > max) {
    throw new RangeError(
      `The word_count scorer's "min" (${min}) is above its "max" (${max})`,
    );
  }
  const name = options.name ?? "word_count";
  const version = versionOf("word_count", { min, max });
  return {
    name,
    version,
    range: UNIT_RANGE,
    score(unit: Unit): Score {
      const text = (unit.output ?? "").trim();
      const count = text === "" ? 0 : text.split(/\s+/u).length;
      const words = count === 1 ? "1 word" : `${count} words`;
      const reason = min !== undefined && count < min
        ? `${words}, fewer than ${min}`
        : max !== undefined && count > max
        ? `${words}, more than ${max}`
        : undefined;
      return scored(name, reason === undefined ? 1 : 0, {
        evaluator_version: version,
        reason: reason ?? words,
      });
    },
  };
}

/**
 * Options of {@linkcode oneOf}.
 *
 * @example Sentiment labels, in any case
 * ```ts
 * import { oneOf, type OneOfOptions } from "./mod.ts";
 * const options: OneOfOptions = { name: "label", labels: ["positive", "negative", "neutral"], ignore_case: true };
 * const s = await oneOf(options).score({ example_id: "d#1", unit_id: "d#1", input: "q", output: "Positive\n" }, {});
 * if ("scores" in s || s.value !== 1) throw new Error("unexpected");
 * ```
 */
export interface OneOfOptions {
  /**
   * The metric name.
   * @default {"one_of"}
   */
  name?: string | undefined;
  /** The labels the output may be. */
  labels: readonly string[];
  /**
   * Compare without regard to letter case.
   * @default {false}
   */
  ignore_case?: boolean | undefined;
  /**
   * Compare in this Unicode normalization form, as the text scorers do:
   * `nfc` (a label with "é" written as one code point or as "e" and a
   * combining accent is one label) or `nfkc` (also compatibility forms:
   * full-width "Ａ" is "A"). Without it the code points are compared as
   * written.
   * @default {undefined}
   */
  normalize?: "nfc" | "nfkc" | undefined;
}

/**
 * `one_of`: 1 when the output, trimmed, is one of the labels, else 0.
 *
 * @param options The labels, case folding, normalization form.
 * @returns The scorer.
 * @throws {RangeError} Without labels, or with an unknown form.
 *
 * @example An answer that is not a label
 * ```ts
 * import { oneOf } from "./mod.ts";
 * const s = await oneOf({ labels: ["yes", "no"] }).score({ example_id: "d#1", unit_id: "d#1", input: "q", output: "maybe" }, {});
 * if ("scores" in s || s.value !== 0 || s.reason !== '"maybe" is not one of "yes", "no"') throw new Error("unexpected");
 * ```
 */
export function oneOf(options: OneOfOptions): Scorer {
  if (options.labels.length === 0) {
    throw new RangeError('The one_of scorer needs at least one of "labels"');
  }
  const fold = options.ignore_case === true;
  const norm = normalizer("one_of", fold, options.normalize);
  const labels = new Set(options.labels.map((l) => norm(l.trim())));
  // Without a form: whether the labels would take the output in NFC, for
  // the reason of a miss.
  const nfc = options.normalize === undefined
    ? normalizer("one_of", fold, "nfc")
    : undefined;
  const nfcLabels = nfc === undefined
    ? undefined
    : new Set(options.labels.map((l) => nfc(l.trim())));
  const name = options.name ?? "one_of";
  const version = versionOf("one_of", {
    ignore_case: options.ignore_case,
    labels: options.labels,
    normalize: options.normalize,
  });
  return {
    name,
    version,
    range: UNIT_RANGE,
    score(unit: Unit): Score {
      const got = (unit.output ?? "").trim();
      const ok = labels.has(norm(got));
      if (ok) return scored(name, 1, { evaluator_version: version });
      const hint = nfc === undefined
        ? ""
        : formHint(0, () => nfcLabels!.has(nfc(got)) ? 1 : 0, got);
      return scored(name, 0, {
        evaluator_version: version,
        reason: `${quote(got)} is not one of ${
          quoteList(options.labels)
        }${hint}`,
      });
    },
  };
}
