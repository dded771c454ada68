import assert from "node:assert/strict";
import { setOverlap } from "../../mod.ts";
import { assertNotApplicable, close, one, unit, value } from "./_unit.ts";

Deno.test("setOverlap is Jaccard's index of a JSON list output against a list", () => {
  // {a, b, c} and {b, c, d}: 2 shared of 4 in all.
  const s = one(setOverlap(), unit('["a", "b", "c"]', ["b", "c", "d"]));
  assert.equal(s.value, 2 / 4);
  assert.equal(s.passed, true);
  assert.equal(s.reason, 'missing "d"; extra "a"');
  assert.equal(value(setOverlap(), unit('["b", "a", "a"]', ["a", "b"])), 1);
  assert.equal(value(setOverlap(), unit("[1, 2]", ["1", "2"])), 1);
});

Deno.test("setOverlap reads a text output one item per line, items trimmed", () => {
  // {paris, rome} and {paris, berlin, madrid}: 1 shared of 4.
  assert.equal(
    value(
      setOverlap(),
      unit(" paris \n\nrome\n", ["paris", "berlin", "madrid"]),
    ),
    1 / 4,
  );
  assert.equal(
    value(setOverlap(), unit("[1] see below", ["[1] see below"])),
    1,
  );
  // An expected text is read as the output is.
  assert.equal(value(setOverlap(), unit("a\nb", "b\na")), 1);
});

Deno.test("setOverlap's F1 is twice the shared items over both sizes", () => {
  // {a, b, c} and {b, c, d}: 2 * 2 / (3 + 3).
  close(
    value(
      setOverlap({ measure: "f1" }),
      unit('["a", "b", "c"]', ["b", "c", "d"]),
    ),
    4 / 6,
  );
  // {red, blue} and {red, green}, case folded: 2 * 1 / (2 + 2).
  assert.equal(
    value(
      setOverlap({ measure: "f1", ignore_case: true }),
      unit("Red\nBLUE", ["red", "green"]),
    ),
    0.5,
  );
});

Deno.test("setOverlap counts two empty sets as 1, as evalglass does, and needs expected", () => {
  assert.equal(value(setOverlap(), unit("[]", [])), 1);
  assert.equal(value(setOverlap(), unit("", [])), 1);
  assert.equal(value(setOverlap(), unit("a", [])), 0);
  assertNotApplicable(
    one(setOverlap(), unit("a")),
    "not applicable: the case has no expected",
  );
});

Deno.test("setOverlap's threshold sets passed, and its options its version", () => {
  const u = unit('["a", "b", "c"]', ["b", "c", "d"]);
  assert.equal(one(setOverlap({ threshold: 0.6 }), u).passed, false);
  assert.notEqual(setOverlap({ measure: "f1" }).version, setOverlap().version);
  assert.notEqual(setOverlap({ threshold: 0.6 }).version, setOverlap().version);
  assert.throws(() => setOverlap({ threshold: -0.1 }), RangeError);
});

Deno.test("setOverlap compares items as written unless normalize says nfc or nfkc, and a miss nfc would mend says so", () => {
  const nfd = "Zürich".normalize("NFD");
  const u = unit(`${nfd}\nGenève`, ["Zürich", "Genève"]);
  const plain = one(setOverlap(), u);
  assert.equal(plain.value, 1 / 3);
  assert.equal(
    plain.reason,
    `missing "Zürich"; extra "${nfd}"; 1 with normalize: nfc (the texts write a character two ways in Unicode, as "é" is one code point or "e" and a combining accent)`,
  );
  assert.equal(value(setOverlap({ normalize: "nfc" }), u), 1);
  const wide = unit('["ＡＢＣ", "def"]', ["abc", "DEF"]);
  assert.equal(
    value(setOverlap({ normalize: "nfkc", ignore_case: true }), wide),
    1,
  );
  assert.equal(
    value(setOverlap({ normalize: "nfc", ignore_case: true }), wide),
    1 / 3,
  );
  assert.notEqual(
    setOverlap({ normalize: "nfc" }).version,
    setOverlap().version,
  );
  // @ts-expect-error: a form the option does not take
  assert.throws(() => setOverlap({ normalize: "nfd" }), RangeError);
});
