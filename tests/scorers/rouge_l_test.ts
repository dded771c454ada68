import assert from "node:assert/strict";
import { rougeL } from "../../mod.ts";
import { assertNotApplicable, close, one, unit, value } from "./_unit.ts";

/** F-measure of precision and recall, as rouge-score's `scoring.fmeasure`. */
const f = (p: number, r: number) => (2 * p * r) / (p + r);

Deno.test("rougeL scores rouge-score's README sentences by hand", () => {
  // rouge-score's README: score(target, prediction) with
  //   target     "The quick brown fox jumps over the lazy dog"  9 tokens
  //   prediction "The quick brown dog jumps on the log."        8 tokens
  // LCS "the quick brown jumps the": 5 -> P = 5/8, R = 5/9, F = 10/17.
  const got = value(
    rougeL(),
    unit(
      "The quick brown dog jumps on the log.",
      "The quick brown fox jumps over the lazy dog",
    ),
  );
  close(got, f(5 / 8, 5 / 9));
  close(got, 10 / 17);
});

Deno.test("rougeL tokenises as rouge-score's default tokenizer: lower case, a-z0-9 runs", () => {
  // "Hello, World! 42" -> hello world 42 on both sides.
  assert.equal(value(rougeL(), unit("hello world 42", "Hello, World! 42")), 1);
  // "don't" is "don" "t": target don t stop (3), prediction do not stop (3): LCS "stop".
  close(value(rougeL(), unit("do not stop", "don't stop")), f(1 / 3, 1 / 3));
  // Accented letters are separators to it: "café au lait" is "caf" "au" "lait";
  // against cafe au lait (3 tokens) the LCS is "au lait": P = R = 2/3.
  close(value(rougeL(), unit("cafe au lait", "café au lait")), f(2 / 3, 2 / 3));
});

Deno.test("rougeL takes the best of several references", () => {
  // "a b c d" against "a x c" (LCS 2: P 2/4, R 2/3) and "b c d e" (LCS 3: P 3/4, R 3/4).
  close(
    value(rougeL(), unit("a b c d", ["a x c", "b c d e"])),
    f(3 / 4, 3 / 4),
  );
});

Deno.test("rougeL is 0 for an empty output and non_evaluable for an expected without tokens", () => {
  assert.equal(value(rougeL(), unit("", "the cat")), 0);
  assert.equal(value(rougeL(), unit("...", "the cat")), 0);
  assertNotApplicable(one(rougeL(), unit("東京", "東京")));
  assertNotApplicable(
    one(rougeL(), unit("x")),
    "not applicable: the case has no expected",
  );
});

Deno.test("rougeL passes at its threshold", () => {
  const u = unit(
    "The quick brown dog jumps on the log.",
    "The quick brown fox jumps over the lazy dog",
  );
  assert.equal(one(rougeL(), u).passed, true); // 0.588 >= 0.5
  assert.equal(one(rougeL({ threshold: 0.6 }), u).passed, false);
});
