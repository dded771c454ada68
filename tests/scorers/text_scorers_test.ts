import assert from "node:assert/strict";
import {
  contains,
  exactMatch,
  notContains,
  oneOf,
  regexMatch,
  startsWith,
  wordCount,
} from "../../mod.ts";
import { assertNotApplicable, one, unit, value } from "./_unit.ts";

Deno.test("exactMatch with values of its own ignores the case's expected", () => {
  assert.equal(value(exactMatch({ value: "yes" }), unit(" yes ", "no")), 1);
  assert.equal(value(exactMatch({ values: ["y", "yes"] }), unit("yes")), 1);
  const miss = one(exactMatch({ value: "yes" }), unit("no"));
  assert.equal(miss.value, 0);
  assert.equal(miss.reason, 'expected "yes"');
  // value and values together are one list.
  assert.equal(value(exactMatch({ value: "a", values: ["b"] }), unit("b")), 1);
});

Deno.test("contains takes values of its own, all of them by default or any", () => {
  const all = one(
    contains({ values: ["30 days", "receipt"] }),
    unit("within 30 days"),
  );
  assert.equal(all.value, 0.5);
  assert.equal(all.passed, false);
  assert.equal(all.reason, 'missing "receipt"');
  const any = contains({ values: ["30 days", "receipt"], mode: "any" });
  assert.equal(value(any, unit("within 30 days")), 1);
  const none = one(any, unit("soon"));
  assert.equal(none.value, 0);
  assert.equal(none.reason, 'none of "30 days", "receipt" found');
  assert.equal(value(contains({ mode: "any" }), unit("b", ["a", "b"])), 1);
});

Deno.test("notContains is 1 when no text is found and names those found", () => {
  const s = notContains({ values: ["sorry", "As an AI"], ignore_case: true });
  assert.equal(value(s, unit("Here it is.")), 1);
  const hit = one(s, unit("As an AI model, sorry"));
  assert.equal(hit.value, 0);
  assert.equal(hit.reason, 'found "sorry", "As an AI"');
  assert.equal(value(notContains(), unit("fine", "error")), 1);
  assertNotApplicable(one(notContains(), unit("fine")));
});

Deno.test("startsWith compares the start of the output, leading white space aside", () => {
  assert.equal(value(startsWith({ value: "Yes" }), unit("  Yes, because")), 1);
  const miss = one(startsWith({ value: "Yes" }), unit("yes"));
  assert.equal(miss.value, 0);
  assert.equal(miss.reason, 'does not start with "Yes"');
  assert.equal(
    value(startsWith({ value: "Yes", ignore_case: true }), unit("yes")),
    1,
  );
  assert.equal(
    one(startsWith(), unit("Maybe", ["Yes", "No"])).reason,
    'does not start with any of "Yes", "No"',
  );
  assertNotApplicable(one(startsWith(), unit("x")));
});

Deno.test("contains, notContains and startsWith do not apply to an expected that is an empty text", () => {
  // "" is in every output: a dataset's `"expected": ""` (a CSV's empty cell
  // is no expected) passed every contains and starts_with, failed every
  // not_contains, as a config's `value: ""` would, which is refused.
  for (const s of [contains(), contains({ mode: "any" }), startsWith()]) {
    assertNotApplicable(
      one(s, unit("anything", "")),
      `not applicable: the case's expected is "" (an empty text), which every output ${
        s.name === "starts_with" ? "starts with" : "contains"
      }`,
    );
  }
  assertNotApplicable(
    one(notContains(), unit("anything", ["refund", ""])),
    `not applicable: the case's expected holds "" (an empty text), which every output contains`,
  );
  // exact_match compares the whole output: "" is a text it can measure.
  assert.equal(value(exactMatch(), unit("", "")), 1);
  assert.equal(value(exactMatch(), unit("x", "")), 0);
  // Texts that are not empty are compared as before.
  assert.equal(value(contains(), unit("a refund", ["refund", " "])), 1);
});

Deno.test("startsWith sets the expected's leading white space aside, as the output's: white space alone does not apply", () => {
  // The output is compared without its leading white space, so an expected
  // that starts with some (a CSV written "id, expected") failed every case,
  // and one of white space alone was an "" that failed instead of passing.
  assert.equal(value(startsWith(), unit("Yes, sure", " Yes")), 1);
  assert.equal(value(startsWith(), unit("No", ["\tYes", "No"])), 1);
  assert.equal(value(startsWith({ value: " Yes" }), unit("Yes")), 1);
  assert.equal(
    one(startsWith(), unit("No", " Yes")).reason,
    'does not start with " Yes"',
  );
  assertNotApplicable(
    one(startsWith(), unit("anything", " ")),
    `not applicable: the case's expected is " " (white space alone), which every output starts with, its leading white space aside`,
  );
  assertNotApplicable(
    one(startsWith(), unit("anything", ["Yes", "\n"])),
    `not applicable: the case's expected holds "\\n" (white space alone), which every output starts with, its leading white space aside`,
  );
  // contains finds white space as written: some outputs hold none.
  assert.equal(value(contains(), unit("Yes", " ")), 0);
});

Deno.test("text scorers version their own texts and mode", () => {
  assert.equal(contains().version, "contains@1");
  assert.notEqual(contains({ value: "a" }).version, contains().version);
  assert.notEqual(
    contains({ value: "a" }).version,
    contains({ value: "b" }).version,
  );
  assert.notEqual(
    contains({ value: "a", mode: "any" }).version,
    contains({ value: "a" }).version,
  );
  assert.equal(notContains({ name: "polite" }).name, "polite");
  assert.equal(startsWith().name, "starts_with");
});

Deno.test("regexMatch must match, or with match: false must not", () => {
  const date = regexMatch({ pattern: "\\d{4}-\\d{2}-\\d{2}" });
  assert.equal(value(date, unit("due 2024-05-01")), 1);
  const miss = one(date, unit("due May 1st"));
  assert.equal(miss.value, 0);
  // The pattern as written, a literal that can be pasted back.
  assert.equal(miss.reason, "does not match /\\d{4}-\\d{2}-\\d{2}/");
  const slashes = regexMatch({ pattern: "a/b\nc" });
  assert.equal(one(slashes, unit("x")).reason, "does not match /a\\/b\\nc/");
  const noEmail = regexMatch({ pattern: "@", match: false, name: "no_at" });
  assert.equal(value(noEmail, unit("none")), 1);
  assert.equal(one(noEmail, unit("a@b")).reason, "matches /@/");
  assert.equal(noEmail.name, "no_at");
});

Deno.test("regexMatch takes flags and refuses a bad pattern or stateful flags", () => {
  assert.equal(
    value(regexMatch({ pattern: "^yes$", flags: "im" }), unit("no\nYES")),
    1,
  );
  assert.equal(value(regexMatch({ pattern: "^yes$" }), unit("no\nYES")), 0);
  assert.throws(() => regexMatch({ pattern: "(" }), SyntaxError);
  assert.throws(() => regexMatch({ pattern: "a", flags: "g" }), SyntaxError);
  assert.throws(() => regexMatch({ pattern: "a", flags: "ii" }), SyntaxError);
  // The same pattern twice: a regex without `g` keeps no state between units.
  const r = regexMatch({ pattern: "a" });
  assert.equal(value(r, unit("a")), 1);
  assert.equal(value(r, unit("a")), 1);
  assert.notEqual(regexMatch({ pattern: "a", flags: "i" }).version, r.version);
  assert.notEqual(
    regexMatch({ pattern: "a", match: false }).version,
    r.version,
  );
});

Deno.test("wordCount checks the number of words against its bounds", () => {
  const s = wordCount({ min: 2, max: 3 });
  assert.equal(one(s, unit("one")).reason, "1 word, fewer than 2");
  assert.equal(one(s, unit(" two\twords\n")).value, 1);
  assert.equal(one(s, unit(" two\twords\n")).reason, "2 words");
  assert.equal(
    one(s, unit("one two three four")).reason,
    "4 words, more than 3",
  );
  assert.equal(one(wordCount({ max: 0 }), unit("  ")).value, 1);
  assert.throws(() => wordCount({}), RangeError);
  assert.throws(() => wordCount({ min: 3, max: 2 }), RangeError);
  assert.throws(() => wordCount({ min: 1.5 }), RangeError);
  assert.notEqual(wordCount({ min: 1 }).version, wordCount({ min: 2 }).version);
});

Deno.test("oneOf checks the trimmed output against its labels", () => {
  const s = oneOf({ labels: ["positive", "negative"] });
  assert.equal(value(s, unit(" positive\n")), 1);
  assert.equal(
    one(s, unit("Positive")).reason,
    '"Positive" is not one of "positive", "negative"',
  );
  assert.equal(
    value(oneOf({ labels: ["positive"], ignore_case: true }), unit("POSITIVE")),
    1,
  );
  assert.throws(() => oneOf({ labels: [] }), RangeError);
  assert.notEqual(
    oneOf({ labels: ["a"], ignore_case: true }).version,
    oneOf({ labels: ["a"] }).version,
  );
});

Deno.test("oneOf compares labels as written unless normalize says nfc or nfkc, and a miss nfc would mend says so", () => {
  const labels = ["négatif", "positif"]; // é one code point
  const nfd = "négatif".normalize("NFD");
  const plain = one(oneOf({ labels }), unit(nfd));
  assert.equal(plain.value, 0);
  assert.equal(
    plain.reason,
    `"${nfd}" is not one of "négatif", "positif"; 1 with normalize: nfc (the texts write a character two ways in Unicode, as "é" is one code point or "e" and a combining accent)`,
  );
  assert.equal(value(oneOf({ labels, normalize: "nfc" }), unit(nfd)), 1);
  const wide = unit("ＰＯＳＩＴＩＦ");
  assert.equal(value(oneOf({ labels, normalize: "nfc" }), wide), 0);
  assert.equal(
    value(oneOf({ labels, normalize: "nfkc", ignore_case: true }), wide),
    1,
  );
  assert.notEqual(
    oneOf({ labels, normalize: "nfc" }).version,
    oneOf({ labels }).version,
  );
  // @ts-expect-error: a form the option does not take
  assert.throws(() => oneOf({ labels, normalize: "NFKD" }), RangeError);
});

Deno.test("contains, notContains and startsWith refuse an empty text of their own, in the config's words", () => {
  // A config's `value: ""` was refused while the library's passed every case.
  assert.throws(() => contains({ value: "" }), {
    name: "RangeError",
    message:
      'The contains scorer\'s "value" is empty: every output contains "", so it would pass every case; give a text',
  });
  assert.throws(() => notContains({ values: ["sorry", ""] }), {
    name: "RangeError",
    message:
      'The not_contains scorer\'s "values[1]" is empty: every output contains "", so it would fail every case; give a text',
  });
  assert.throws(() => startsWith({ value: "  " }), {
    name: "RangeError",
    message:
      'The starts_with scorer\'s "value" is white space alone: every output starts with it, its leading white space aside, so it would pass every case; give a text',
  });
  // exact_match takes "": that the system said nothing is a measure.
  assert.equal(value(exactMatch({ value: "" }), unit("")), 1);
});

Deno.test("regexMatch refuses an empty pattern, in the config's words", () => {
  // A config's `pattern: ""` was refused while the library's matched every
  // output, passing every case (failing every one with match: false).
  assert.throws(() => regexMatch({ pattern: "" }), {
    name: "RangeError",
    message:
      'The regex scorer\'s "pattern" is empty: it matches every output, so it would pass every case; give a pattern',
  });
  assert.throws(() => regexMatch({ pattern: "", match: false }), {
    name: "RangeError",
    message:
      'The regex scorer\'s "pattern" is empty: it matches every output, so it would fail every case; give a pattern',
  });
});
