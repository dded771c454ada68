/**
 * Built-in text-similarity scorers against the case's `expected` (a text,
 * or a list of accepted texts: the best of them counts): `levenshtein`,
 * `token_f1`, `rouge_l` and `bleu`. Each value lies within 0..1, and
 * `threshold` says which values pass.
 *
 * @module
 */

import { nonEvaluable, type Score, scored } from "../score/mod.ts";
import { type Scorer, UNIT_RANGE } from "./scorer.ts";
import type { Unit } from "../dataset/unit.ts";
import {
  checkThreshold,
  noExpected,
  normalizer,
  references,
  versionOf,
} from "./_builtin.ts";
import {
  levenshteinSimilarity,
  rougeL as rougeLOf,
  rougeTokens,
  sentenceBleu,
  tokenF1 as tokenF1Of,
} from "./_similarity.ts";

/**
 * Options of the text-similarity scorers.
 *
 * @example A stricter pass mark
 * ```ts
 * import { levenshtein, type SimilarityScorerOptions } from "./mod.ts";
 * const options: SimilarityScorerOptions = { threshold: 0.9 };
 * const s = await levenshtein(options).score({ example_id: "d#1", unit_id: "d#1", input: "q", output: "kitten", expected: "sitting" }, {});
 * if ("scores" in s || s.passed !== false) throw new Error("unexpected");
 * ```
 */
export interface SimilarityScorerOptions {
  /**
   * The metric name.
   * @default {the scorer's type, e.g. `rouge_l`}
   */
  name?: string | undefined;
  /**
   * The least value that passes, within 0..1.
   * @default {0.5}
   */
  threshold?: number | undefined;
  /**
   * Compare without regard to letter case (`levenshtein` and `bleu`;
   * `token_f1` and `rouge_l` always fold case, as their references do).
   * @default {false}
   */
  ignore_case?: boolean | undefined;
  /**
   * Compare the texts in this Unicode normalization form (`levenshtein` and
   * `bleu`), as the text scorers do: `nfc` (one spelling for each character:
   * "é" written as one code point or as "e" and a combining accent is one
   * text) or `nfkc` (also compatibility forms: full-width "Ａ" is "A", "ﬁ"
   * is "fi"). Without it the code points are compared as written.
   * @default {undefined}
   */
  normalize?: "nfc" | "nfkc" | undefined;
}

function similarity(
  type: string,
  options: SimilarityScorerOptions,
  measure: (output: string, refs: readonly string[]) => number | string,
): Scorer {
  checkThreshold(type, options.threshold);
  const name = options.name ?? type;
  const threshold = options.threshold ?? 0.5;
  const norm = normalizer(
    type,
    options.ignore_case === true,
    options.normalize,
  );
  const version = versionOf(type, {
    ignore_case: options.ignore_case,
    normalize: options.normalize,
    threshold: options.threshold,
  });
  return {
    name,
    version,
    range: UNIT_RANGE,
    score(unit: Unit): Score {
      const refs = references(unit);
      if (refs === undefined) {
        return noExpected(name, version, unit.expected);
      }
      const value = measure(norm(unit.output ?? ""), refs.map(norm));
      if (typeof value === "string") {
        return nonEvaluable(name, {
          evaluator_version: version,
          reason: `not applicable: ${value}`,
        });
      }
      return scored(name, value, {
        evaluator_version: version,
        passed: value >= threshold,
      });
    },
  };
}

/**
 * The options of a scorer that reads tokens its own way (`token_f1` and
 * `rouge_l` fold case as their references do): its name and threshold.
 */
function ownTokens(options: SimilarityScorerOptions): SimilarityScorerOptions {
  const { name, threshold } = options;
  return {
    ...(name !== undefined ? { name } : {}),
    ...(threshold !== undefined ? { threshold } : {}),
  };
}

/**
 * `levenshtein`: 1 − d / max(len), d the edit distance between the trimmed
 * output and the trimmed expected text, over Unicode code points (two
 * empty texts are 1): "é" written as "e" and a combining accent is two code
 * points unless `normalize` says `nfc`.
 *
 * @param options Name, threshold, case folding, normalization form.
 * @returns The scorer.
 *
 * @example "kitten" and "sitting": 3 edits over 7 code points
 * ```ts
 * import { levenshtein } from "./mod.ts";
 * const s = await levenshtein().score({ example_id: "d#1", unit_id: "d#1", input: "q", output: "kitten", expected: "sitting" }, {});
 * if ("scores" in s || s.value !== 1 - 3 / 7) throw new Error("unexpected");
 * ```
 */
export function levenshtein(options: SimilarityScorerOptions = {}): Scorer {
  return similarity("levenshtein", options, (output, refs) =>
    Math.max(
      ...refs.map((r) => levenshteinSimilarity(output.trim(), r.trim())),
    ));
}

/**
 * `token_f1`: the F1 of the output's and the expected text's tokens after
 * SQuAD's normalisation (lower case, punctuation and the articles a, an,
 * the removed), as SQuAD v2.0's evaluation script computes it: when either
 * side has no tokens, 1 if both have none, else 0.
 *
 * @param options Name and threshold.
 * @returns The scorer.
 *
 * @example Two tokens shared: precision 2/2, recall 2/3, F1 0.8
 * ```ts
 * import { tokenF1 } from "./mod.ts";
 * const s = await tokenF1().score({ example_id: "d#1", unit_id: "d#1", input: "q", output: "The Eiffel tower!", expected: "eiffel tower, Paris" }, {});
 * if ("scores" in s || Math.abs(s.value! - 0.8) > 1e-12) throw new Error("unexpected");
 * ```
 */
export function tokenF1(options: SimilarityScorerOptions = {}): Scorer {
  return similarity(
    "token_f1",
    ownTokens(options),
    (output, refs) => Math.max(...refs.map((r) => tokenF1Of(output, r))),
  );
}

/**
 * `rouge_l`: the F-measure of the longest common subsequence of tokens, as
 * the `rouge-score` package computes `rougeL` with its default tokenizer
 * (lower case, runs of `a-z0-9`, no stemming). `non_evaluable` when the
 * expected text has no such token (rouge-score would say 0).
 *
 * @param options Name and threshold.
 * @returns The scorer.
 *
 * @example rouge-score's README sentences: an LCS of 5 tokens, 8 and 9 long
 * ```ts
 * import { rougeL } from "./mod.ts";
 * const s = await rougeL().score({ example_id: "d#1", unit_id: "d#1", input: "q",
 *   output: "The quick brown dog jumps on the log.", expected: "The quick brown fox jumps over the lazy dog" }, {});
 * const p = 5 / 8, r = 5 / 9;
 * if ("scores" in s || Math.abs(s.value! - 2 * p * r / (p + r)) > 1e-12) throw new Error("unexpected");
 * ```
 */
export function rougeL(options: SimilarityScorerOptions = {}): Scorer {
  return similarity(
    "rouge_l",
    ownTokens(options),
    (output, refs) => {
      const prediction = rougeTokens(output);
      const targets = refs.map(rougeTokens).filter((t) => t.length > 0);
      if (targets.length === 0) {
        return "expected has no token rouge-score's tokenizer keeps (a-z, 0-9)";
      }
      return Math.max(...targets.map((t) => rougeLOf(t, prediction)));
    },
  );
}

/**
 * `bleu`: sentence BLEU of the output against the expected text (or every
 * text of a list, as references), tokens split on white space, as NLTK's
 * `sentence_bleu` computes it with its default 1- to 4-gram weights and
 * `SmoothingFunction().method1` (epsilon 0.1 for an order without a match).
 * `non_evaluable` when the expected text is empty.
 *
 * @param options Name, threshold, case folding, normalization form.
 * @returns The scorer.
 *
 * @example A perfect match is 1
 * ```ts
 * import { bleu } from "./mod.ts";
 * const s = await bleu().score({ example_id: "d#1", unit_id: "d#1", input: "q", output: "the cat is on the mat", expected: "the cat is on the mat" }, {});
 * if ("scores" in s || s.value !== 1) throw new Error("unexpected");
 * ```
 */
export function bleu(options: SimilarityScorerOptions = {}): Scorer {
  const split = (s: string) => s.split(/\s+/u).filter((t) => t !== "");
  return similarity("bleu", options, (output, refs) => {
    const tokens = refs.map(split).filter((t) => t.length > 0);
    if (tokens.length === 0) return "expected has no tokens";
    return sentenceBleu(tokens, split(output));
  });
}
