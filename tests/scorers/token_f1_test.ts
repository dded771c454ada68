import assert from "node:assert/strict";
import { tokenF1 } from "../../mod.ts";
import { assertNotApplicable, close, one, unit, value } from "./_unit.ts";

Deno.test("tokenF1 normalises as SQuAD: lower case, punctuation and articles removed", () => {
  assert.equal(
    value(tokenF1(), unit("The Denver Broncos!", "denver broncos")),
    1,
  );
  // "an" inside a word stays: "Anaheim" is not an article.
  assert.equal(value(tokenF1(), unit("an Anaheim", "anaheim")), 1);
});

Deno.test("tokenF1 is the F1 of the token bags, computed by hand", () => {
  // prediction broncos won game (3), truth denver broncos (2): 1 shared.
  // P = 1/3, R = 1/2, F1 = 2 * (1/3) * (1/2) / (1/3 + 1/2) = 0.4
  close(value(tokenF1(), unit("Broncos won the game", "Denver Broncos")), 0.4);
  // Bags, not sets: "paris paris" shares one "paris" with "paris":
  // P = 1/2, R = 1/1, F1 = 2/3.
  close(value(tokenF1(), unit("paris paris", "Paris")), 2 / 3);
  assert.equal(value(tokenF1(), unit("London", "Paris")), 0);
});

Deno.test("tokenF1 follows SQuAD v2.0 when a side has no tokens: 1 if both are empty", () => {
  assert.equal(value(tokenF1(), unit("The.", "an")), 1);
  assert.equal(value(tokenF1(), unit("the", "Paris")), 0);
  assert.equal(value(tokenF1(), unit("Paris", "")), 0);
});

Deno.test("tokenF1 takes the best of several references, and a threshold", () => {
  assert.equal(
    value(tokenF1(), unit("Denver Broncos", ["Broncos", "Denver Broncos"])),
    1,
  );
  const u = unit("Broncos won the game", "Denver Broncos");
  assert.equal(one(tokenF1(), u).passed, false);
  assert.equal(one(tokenF1({ threshold: 0.4 }), u).passed, true);
  assertNotApplicable(one(tokenF1(), unit("x")));
});
