import assert from "node:assert/strict";
import { levenshtein } from "../../mod.ts";
import { assertNotApplicable, close, one, unit, value } from "./_unit.ts";

Deno.test("levenshtein is 1 - distance / the longer length, by hand", () => {
  // kitten -> sitting: k->s, e->i, +g: 3 edits, 7 long.
  close(value(levenshtein(), unit("kitten", "sitting")), 1 - 3 / 7);
  // flaw -> lawn: -f, +n: 2 edits, 4 long.
  close(value(levenshtein(), unit("flaw", "lawn")), 1 - 2 / 4);
  assert.equal(value(levenshtein(), unit(" same\n", "same")), 1);
  assert.equal(value(levenshtein(), unit("", "")), 1);
  assert.equal(value(levenshtein(), unit("abc", "")), 0);
});

Deno.test("levenshtein counts code points, not UTF-16 units", () => {
  // "😀a" -> "a": one deletion over 2 code points (the emoji is 2 units).
  close(value(levenshtein(), unit("😀a", "a")), 1 - 1 / 2);
  close(value(levenshtein(), unit("añb", "anb")), 1 - 1 / 3);
});

Deno.test("levenshtein folds case on request, takes the best reference, and a threshold", () => {
  close(value(levenshtein(), unit("Paris", "paris")), 1 - 1 / 5);
  assert.equal(
    value(levenshtein({ ignore_case: true }), unit("Paris", "paris")),
    1,
  );
  assert.equal(value(levenshtein(), unit("lawn", ["flaw", "lawn"])), 1);
  assert.equal(
    one(levenshtein({ threshold: 0.6 }), unit("flaw", "lawn")).passed,
    false,
  );
  assert.equal(one(levenshtein(), unit("flaw", "lawn")).passed, true);
  assertNotApplicable(one(levenshtein(), unit("x")));
  assert.notEqual(
    levenshtein({ ignore_case: true }).version,
    levenshtein().version,
  );
});

Deno.test("levenshtein compares code points as written unless normalize says nfc or nfkc, as the text scorers do", () => {
  const nfc = "café"; // é one code point
  const nfd = nfc.normalize("NFD"); // e and a combining accent: 5 code points
  // é -> e and a combining accent: one substitution, one insertion, of 5.
  close(value(levenshtein(), unit(nfc, nfd)), 1 - 2 / 5);
  assert.equal(value(levenshtein({ normalize: "nfc" }), unit(nfc, nfd)), 1);
  assert.equal(value(levenshtein({ normalize: "nfc" }), unit(nfd, nfc)), 1);
  // Full-width letters are their plain ones only in NFKC; case after.
  const wide = unit("ＣＡＦＥ", "cafe");
  assert.equal(value(levenshtein({ normalize: "nfc" }), wide), 0);
  assert.equal(
    value(levenshtein({ normalize: "nfkc", ignore_case: true }), wide),
    1,
  );
  assert.notEqual(
    levenshtein({ normalize: "nfc" }).version,
    levenshtein().version,
  );
  assert.throws(
    // @ts-expect-error: a form the option does not take
    () => levenshtein({ normalize: "NFD" }),
    /The levenshtein scorer's "normalize" must be "nfc" or "nfkc", not "NFD"/,
  );
});
