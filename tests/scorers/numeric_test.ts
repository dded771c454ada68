import assert from "node:assert/strict";
import { numericMatch } from "../../mod.ts";
import { assertNotApplicable, one, unit, value } from "./_unit.ts";

Deno.test("numericMatch reads the first number in the output", () => {
  assert.equal(value(numericMatch(), unit("The answer is 42.", 42)), 1);
  assert.equal(value(numericMatch(), unit("-3.5e2 degrees", -350)), 1);
  assert.equal(
    value(numericMatch(), unit("about 1,234,567 people", 1234567)),
    1,
  );
  assert.equal(value(numericMatch(), unit("it is .5", 0.5)), 1);
  // Only groups of three are thousands: "12,34" is 12, then 34.
  assert.equal(value(numericMatch(), unit("12,34", 12)), 1);
  const miss = one(numericMatch(), unit("3 apples and 4 pears", 4));
  assert.equal(miss.value, 0);
  assert.equal(miss.reason, "got 3, expected 4");
  const none = one(numericMatch(), unit("no idea", 4));
  assert.equal(none.value, 0);
  assert.equal(none.reason, "no number in the output");
  // A number too large for a double is still the number the output said.
  const huge = one(numericMatch(), unit("about 1e400 atoms", 4));
  assert.equal(huge.value, 0);
  assert.equal(huge.reason, 'got "1e400", beyond ±1.8e308, expected 4');
});

Deno.test("numericMatch takes a number or a numeric text as expected", () => {
  assert.equal(value(numericMatch(), unit("4", "4")), 1);
  assert.equal(value(numericMatch(), unit("4000", " 4,000 ")), 1);
  assertNotApplicable(
    one(numericMatch(), unit("4")),
    "not applicable: the case has no expected",
  );
  assertNotApplicable(
    one(numericMatch(), unit("4", "four")),
    'not applicable: expected "four" is not a number',
  );
  assertNotApplicable(
    one(numericMatch(), unit("4", [4])),
    "not applicable: expected [4] is not a number",
  );
});

Deno.test("numericMatch passes within max(abs_tol, rel_tol * |expected|)", () => {
  // abs_tol 0.5: |42.4 - 42| = 0.4 passes, |42.6 - 42| = 0.6 does not.
  assert.equal(value(numericMatch({ abs_tol: 0.5 }), unit("42.4", 42)), 1);
  const out = one(numericMatch({ abs_tol: 0.5 }), unit("42.6", 42));
  assert.equal(out.value, 0);
  assert.equal(out.reason, "got 42.6, expected 42 ± 0.5");
  // rel_tol 0.01 of 1000 is 10: 1009 passes, 1011 does not.
  assert.equal(value(numericMatch({ rel_tol: 0.01 }), unit("1009", 1000)), 1);
  assert.equal(value(numericMatch({ rel_tol: 0.01 }), unit("1011", 1000)), 0);
  // expected's alone, not the larger number's as math.isclose: 1010.05 is
  // within 1% of itself (10.1) but not of 1000 (10).
  assert.equal(
    value(numericMatch({ rel_tol: 0.01 }), unit("1010.05", 1000)),
    0,
  );
  // Both: the larger tolerance counts (abs 20 > 10).
  assert.equal(
    value(numericMatch({ rel_tol: 0.01, abs_tol: 20 }), unit("1015", 1000)),
    1,
  );
  assert.throws(() => numericMatch({ abs_tol: -1 }), RangeError);
  assert.notEqual(numericMatch({ abs_tol: 1 }).version, numericMatch().version);
  // numeric@1 read U+2212, expected texts and the tolerance's edge otherwise.
  assert.equal(numericMatch().version, "numeric@2");
  assert.match(
    numericMatch({ abs_tol: 1 }).version,
    /^numeric@2\+[0-9a-f]{8}$/,
  );
});

Deno.test("numericMatch reads a minus sign typeset as U+2212, as models write it, in the output and in expected", () => {
  assert.equal(value(numericMatch(), unit("It is \u22125 \u00b0C.", -5)), 1);
  assert.equal(value(numericMatch(), unit("-5", "\u22125")), 1);
  assert.equal(value(numericMatch(), unit("2.5e\u22123", 0.0025)), 1);
  const miss = one(numericMatch(), unit("\u22125", 5));
  assert.equal(miss.value, 0);
  assert.equal(miss.reason, "got -5, expected 5");
});

Deno.test("numericMatch reads an expected text by the output's rules: a decimal comma or hex is no number", () => {
  // "1,5" is not fifteen: commas are thousands only in groups of three.
  assertNotApplicable(
    one(numericMatch(), unit("15", "1,5")),
    'not applicable: expected "1,5" is not a number',
  );
  assertNotApplicable(
    one(numericMatch(), unit("16", "0x10")),
    'not applicable: expected "0x10" is not a number',
  );
  assert.equal(value(numericMatch(), unit("1234567", "1,234,567")), 1);
  assert.equal(value(numericMatch(), unit("5", "5.")), 1);
  assert.equal(value(numericMatch(), unit("0.5", "+.5")), 1);
});

Deno.test("numericMatch counts a number exactly at the tolerance's edge as within it, on both sides of expected", () => {
  // 1.1 ± 0.1 is 1.0..1.2, ends included: as doubles, 1.2 is
  // 0.09999999999999987 from 1.1 and 1.0 is 0.10000000000000009.
  for (const output of ["1.0", "1.2", "1.05"]) {
    assert.equal(
      value(numericMatch({ abs_tol: 0.1 }), unit(output, 1.1)),
      1,
      output,
    );
  }
  assert.equal(value(numericMatch({ abs_tol: 0.1 }), unit("0.99", 1.1)), 0);
  assert.equal(value(numericMatch({ abs_tol: 0.1 }), unit("0.4", "0.3")), 1);
  // A million and a tenth is 0.1 from a million; a ten-millionth more is not.
  assert.equal(
    value(numericMatch({ abs_tol: 0.1 }), unit("1,000,000.1", 1e6)),
    1,
  );
  assert.equal(
    value(numericMatch({ abs_tol: 0.1 }), unit("1000000.1000001", 1e6)),
    0,
  );
  // 10% of 0.7 is 0.07: 0.63 and 0.77 are the ends, 0.78 is past them.
  for (const output of ["0.63", "0.77"]) {
    assert.equal(
      value(numericMatch({ rel_tol: 0.1 }), unit(output, 0.7)),
      1,
      output,
    );
  }
  const past = one(numericMatch({ rel_tol: 0.1 }), unit("0.78", 0.7));
  assert.equal(past.value, 0);
  assert.equal(past.reason, "got 0.78, expected 0.7 ± 0.07");
  // Negative numbers and zero, by the same rule.
  assert.equal(value(numericMatch({ abs_tol: 0.1 }), unit("-1.0", -1.1)), 1);
  assert.equal(value(numericMatch({ abs_tol: 0.1 }), unit("-0.1", 0)), 1);
  assert.equal(value(numericMatch(), unit("-0", 0)), 1);
  assert.equal(value(numericMatch({ rel_tol: 0.5 }), unit("0.0", 0)), 1);
});
