import assert from "node:assert/strict";
import {
  contains,
  exactMatch,
  makeScore,
  readUnits,
  type Score,
  type Scorer,
  type Unit,
} from "../../mod.ts";

function unit(output: string, expected?: unknown): Unit {
  return {
    example_id: "d#1",
    unit_id: "d#1",
    input: "q",
    output,
    ...(expected !== undefined ? { expected } : {}),
  };
}

async function one(scorer: Scorer, u: Unit): Promise<Score> {
  const s = await scorer.score(u, {});
  assert.ok(!("scores" in s));
  return s;
}

Deno.test("exactMatch compares trimmed output with expected, or any of a list", async () => {
  assert.equal(
    (await one(exactMatch(), unit(" 30 days\n", "30 days"))).value,
    1,
  );
  assert.equal((await one(exactMatch(), unit("30 Days", "30 days"))).value, 0);
  assert.equal(
    (await one(exactMatch({ ignore_case: true }), unit("30 Days", "30 days")))
      .value,
    1,
  );
  assert.equal(
    (await one(exactMatch(), unit("thirty days", ["30 days", "thirty days"])))
      .value,
    1,
  );
  const miss = await one(exactMatch(), unit("45 days", "30 days"));
  assert.equal(miss.passed, false);
  assert.equal(miss.reason, 'expected "30 days"'); // A list of accepted answers (Inspect's target list) is named whole: its
  // first alone read as the one answer accepted.
  const listMiss = await one(
    exactMatch(),
    unit("green", ["red", "blue", "yellow"]),
  );
  assert.equal(listMiss.value, 0);
  assert.equal(listMiss.reason, 'expected any of "red", "blue", "yellow"');
});

Deno.test("exactMatch on a text expected: each miss names its own expected, in the canonical Score", async () => {
  // Its one-text path remembers the last miss's reason: a change of expected
  // text must change the reason, and the Score is the one makeScore builds.
  const scorer = exactMatch();
  const long = "x".repeat(250);
  const cases: Array<[string, string, number, string | undefined]> = [
    ["no", "yes", 0, 'expected "yes"'],
    ["no", "yes", 0, 'expected "yes"'],
    [" maybe ", "maybe", 1, undefined],
    ["no", " other\n", 0, 'expected "other"'],
    ["no", "yes", 0, 'expected "yes"'],
    ["no", long, 0, `expected "${"x".repeat(200)}…"`],
  ];
  for (const [output, expected, value, reason] of cases) {
    const s = await one(scorer, unit(output, expected));
    assert.deepEqual(
      JSON.stringify(s),
      JSON.stringify(makeScore({
        metric: "exact_match",
        status: "scored",
        validity: "valid",
        value,
        passed: value === 1,
        ...(reason !== undefined ? { reason } : {}),
        evaluator_version: "exact_match@1",
        diagnostics: [],
        evidence_refs: [],
      })),
    );
  }
  const folded = exactMatch({ ignore_case: true });
  assert.equal((await one(folded, unit(" YES\n", "yes "))).value, 1);
  const miss = await one(folded, unit("No", "Yes"));
  assert.equal(miss.reason, 'expected "Yes"');
  assert.equal(miss.evaluator_version, "exact_match@1+ignore_case");
});

Deno.test("exactMatch compares a non-string expected with its verbatim JSON text", async () => {
  const bytes = new TextEncoder().encode(
    '{"input":"q","output":"1.0","expected":1.0}\n',
  );
  const [u] = await Array.fromAsync(
    readUnits(ReadableStream.from([bytes]), "stdin", () => {}),
  );
  assert.equal((await one(exactMatch(), u!)).value, 1);
  assert.equal((await one(exactMatch(), unit("42", 42))).value, 1);
});

Deno.test("exactMatch and contains are non_evaluable and not_applicable without expected, never 0", async () => {
  for (const scorer of [exactMatch(), contains()]) {
    for (const expected of [undefined, null, []]) {
      const s = await one(scorer, unit("anything", expected));
      assert.equal(s.status, "non_evaluable");
      assert.equal(s.validity, "not_applicable");
      assert.equal(s.value, null);
      assert.equal("passed" in s, false);
      // An empty list is an expected the case gives: said so, not "no".
      assert.equal(
        s.reason,
        Array.isArray(expected)
          ? "not applicable: the case's expected is an empty list"
          : "not applicable: the case has no expected",
      );
    }
  }
});

Deno.test("contains scores the fraction found and passes only when all are", async () => {
  const s = await one(
    contains(),
    unit("Refunds take 30 days", ["30 days", "refund", "receipt"]),
  );
  assert.equal(s.value, 1 / 3);
  assert.equal(s.passed, false);
  assert.equal(s.reason, 'missing "refund", "receipt"');
  assert.equal(
    (await one(contains(), unit("Refunds take 30 days", "30 days"))).passed,
    true,
  );
});

Deno.test("contains with ignore_case quotes the missing text as written", async () => {
  const s = await one(
    contains({ ignore_case: true }),
    unit("OPEN 8AM", ["open 8am", "Mon-Fri ET"]),
  );
  assert.equal(s.value, 0.5);
  assert.equal(s.reason, 'missing "Mon-Fri ET"');
});

Deno.test("built-in scorers version their options and take a name", () => {
  assert.equal(exactMatch().version, "exact_match@1");
  assert.equal(
    exactMatch({ ignore_case: true }).version,
    "exact_match@1+ignore_case",
  );
  assert.equal(contains({ name: "mentions" }).name, "mentions");
});

Deno.test("exactMatch compares an expected that is not text as JSON: spaces and key order aside", async () => {
  const expected = { a: 1, b: [1, 2], c: { d: null } };
  for (
    const output of [
      '{"a":1,"b":[1,2],"c":{"d":null}}',
      '{ "b": [1, 2], "c": { "d": null }, "a": 1 }',
      '\n{"c":{"d":null},"a":1.0,"b":[1,2]}\n',
    ]
  ) {
    const s = await one(exactMatch(), unit(output, expected));
    assert.equal(s.value, 1, output);
    assert.equal(s.passed, true);
  }
  for (
    const output of [
      '{"a":1,"b":[2,1],"c":{"d":null}}', // lists keep their order
      '{"a":1,"b":[1,2]}', // a key missing
      '{"a":"1","b":[1,2],"c":{"d":null}}', // a string is not a number
      "not json",
    ]
  ) {
    assert.equal((await one(exactMatch(), unit(output, expected))).value, 0);
  }
  // Numbers, booleans and mixed lists are JSON too; texts stay texts.
  assert.equal((await one(exactMatch(), unit("4.0", 4))).value, 1);
  assert.equal((await one(exactMatch(), unit(" true", true))).value, 1);
  assert.equal((await one(exactMatch(), unit('["a", 1]', ["a", 1]))).value, 1);
  assert.equal((await one(exactMatch(), unit('"x"', "x"))).value, 0);
  // An integer past 2^53 equals only by its text: parsing would round it.
  const big = 9007199254740993n;
  const u = unit("9007199254740992", 9007199254740992);
  assert.equal((await one(exactMatch(), u)).value, 1, "equal texts");
  assert.equal(
    (await one(exactMatch(), unit(`${big}`, 9007199254740992))).value,
    0,
  );
});
