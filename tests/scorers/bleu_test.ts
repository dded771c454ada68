import assert from "node:assert/strict";
import { bleu } from "../../mod.ts";
import { assertNotApplicable, close, one, unit, value } from "./_unit.ts";

// NLTK's sentence_bleu docstring (nltk/translate/bleu_score.py): its
// sentences, already tokenised, joined here with spaces.
const hypothesis1 =
  "It is a guide to action which ensures that the military always obeys the commands of the party";
const reference1 =
  "It is a guide to action that ensures that the military will forever heed Party commands";
const reference2 =
  "It is the guiding principle which guarantees the military forces always being under the command of the Party";
const reference3 =
  "It is the practical guide for the army always to heed the directions of the party";

/** The figure NLTK prints, to the places it prints (`0.5045...`). */
function truncated(x: number, places: number): number {
  return Math.floor(x * 10 ** places) / 10 ** places;
}

Deno.test("bleu gives NLTK's documented sentence_bleu figures", () => {
  // sentence_bleu([reference1, reference2, reference3], hypothesis1) -> 0.5045...
  const three = value(
    bleu(),
    unit(hypothesis1, [reference1, reference2, reference3]),
  );
  assert.equal(truncated(three, 4), 0.5045);
  // sentence_bleu([reference1], hypothesis1,
  //   smoothing_function=chencherry.method1) -> 0.4118...
  assert.equal(
    truncated(value(bleu(), unit(hypothesis1, reference1)), 4),
    0.4118,
  );
});

Deno.test("bleu smooths an order without a match by method1's epsilon 0.1", () => {
  // hypothesis "the cat sat on the mat", reference "the cat is on the mat":
  //   1-grams: the×2 cat on mat match, sat does not      -> 5/6
  //   2-grams: "the cat" "on the" "the mat" of 5          -> 3/5
  //   3-grams: "on the mat" of 4                          -> 1/4
  //   4-grams: none of 3                                  -> (0 + 0.1)/3
  //   lengths 6 and 6: brevity penalty 1
  const expected = Math.pow((5 / 6) * (3 / 5) * (1 / 4) * (0.1 / 3), 1 / 4);
  close(
    value(bleu(), unit("the cat sat on the mat", "the cat is on the mat")),
    expected,
  );
});

Deno.test("bleu applies the brevity penalty of the closest reference length", () => {
  // "the cat" against a 6-token reference: 1-grams 2/2, 2-grams 1/1,
  // 3- and 4-grams none of max(1, 0) = 1 -> 0.1/1 each; penalty e^(1 - 6/2).
  const expected = Math.exp(1 - 6 / 2) * Math.pow(1 * 1 * 0.1 * 0.1, 1 / 4);
  close(value(bleu(), unit("the cat", "the cat is on the mat")), expected);
  // Two references, 6 and 2 tokens long: the 2-token one is closest, no penalty.
  const two = value(
    bleu(),
    unit("the cat", ["the cat is on the mat", "a cat"]),
  );
  close(two, Math.pow(1 * 1 * 0.1 * 0.1, 1 / 4));
});

Deno.test("bleu is 0 without a unigram match, 1 for the reference itself", () => {
  assert.equal(
    value(bleu(), unit("nothing alike", "the cat is on the mat")),
    0,
  );
  assert.equal(value(bleu(), unit("", "the cat")), 0);
  assert.equal(
    value(bleu(), unit("the cat is on the mat", "the cat is on the mat")),
    1,
  );
  assert.equal(value(bleu(), unit("The Cat", "the cat")), 0);
  close(
    value(bleu({ ignore_case: true }), unit("The Cat", "the cat")),
    Math.pow(0.1 * 0.1, 1 / 4),
  );
});

Deno.test("bleu is non_evaluable without expected or with an empty one", () => {
  assertNotApplicable(
    one(bleu(), unit("a b")),
    "not applicable: the case has no expected",
  );
  assertNotApplicable(
    one(bleu(), unit("a b", "  ")),
    "not applicable: expected has no tokens",
  );
});

Deno.test("bleu's threshold sets passed and its version", () => {
  const s = one(bleu({ threshold: 0.9 }), unit(hypothesis1, reference1));
  assert.equal(s.passed, false);
  assert.equal(
    one(bleu({ threshold: 0.4 }), unit(hypothesis1, reference1)).passed,
    true,
  );
  assert.equal(bleu().version, "bleu@1");
  assert.notEqual(
    bleu({ threshold: 0.9 }).version,
    bleu({ threshold: 0.4 }).version,
  );
  assert.throws(() => bleu({ threshold: 2 }), RangeError);
});
