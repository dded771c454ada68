import assert from "node:assert/strict";
import { jsonFields, jsonMatch, jsonValid, type Score } from "../../mod.ts";
import { assertNotApplicable, one, unit, value } from "./_unit.ts";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

const ANSWER = {
  type: "object",
  required: ["answer", "sources"],
  properties: {
    answer: { type: "string" },
    sources: { type: "array", items: { type: "string", minLength: 1 } },
    "odd key": { type: "number" },
  },
  additionalProperties: false,
} as const;

async function scoreOf(
  s: ReturnType<typeof jsonValid>,
  output: string,
): Promise<Score> {
  const r = await s.score(unit(output), {});
  assert.ok(!("scores" in r));
  return r;
}

Deno.test("jsonValid without a schema checks that the output parses", () => {
  assert.equal(value(jsonValid(), unit(' {"a": [1, 2]}\n')), 1);
  const bad = one(jsonValid(), unit("{'a': 1}"));
  assert.equal(bad.value, 0);
  assert.ok(bad.reason?.startsWith("not JSON: "), bad.reason);
  assert.equal(
    one(jsonValid(), unit("")).reason,
    "not JSON: the output is empty",
  );
  assert.equal(jsonValid().version, "json@1");
});

Deno.test("jsonValid validates JSON Schema 2020-12 and names the first violations by path", async () => {
  const s = jsonValid({ schema: ANSWER });
  assert.equal(
    (await scoreOf(s, '{"answer": "4", "sources": ["a"]}')).value,
    1,
  );
  const bad = await scoreOf(
    s,
    '{"answer": 4, "sources": ["a", ""], "odd key": "x", "extra": 1}',
  );
  assert.equal(bad.value, 0);
  assert.equal(
    bad.reason,
    "$.extra: is not allowed; $.answer: must be string; $.sources[1]: must NOT have fewer than 1 characters; 1 more",
  );
  assert.equal(
    (await scoreOf(s, '{"answer": "4"}')).reason,
    "$.sources: is required",
  );
  // Once Ajv is loaded the Scores come synchronously again.
  assert.equal(one(s, unit('{"answer": "4", "sources": []}')).value, 1);
});

Deno.test("jsonValid reads 2020-12 keywords: prefixItems and $defs", async () => {
  const s = jsonValid({
    schema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $defs: { n: { type: "integer" } },
      type: "array",
      prefixItems: [{ $ref: "#/$defs/n" }, { type: "string" }],
      items: false,
    },
  });
  assert.equal((await scoreOf(s, '[1, "a"]')).value, 1);
  assert.equal(
    (await scoreOf(s, '[1.5, "a"]')).reason,
    "$[0]: must be integer",
  );
  assert.equal((await scoreOf(s, '[1, "a", 2]')).value, 0);
});

Deno.test("jsonValid with a schema Ajv refuses makes every Score an error with a code", async () => {
  const s = jsonValid({ schema: { type: "nope" } });
  for (let i = 0; i < 2; i++) {
    const e = await scoreOf(s, "{}");
    assert.equal(e.status, "error");
    assert.equal(e.validity, "not_measured");
    assert.equal(e.diagnostics[0]?.code, "scorer.invalid_schema");
    assert.ok(
      e.reason?.startsWith("scorer error: Invalid JSON Schema: "),
      e.reason,
    );
  }
});

Deno.test("jsonValid's version changes with its schema", () => {
  assert.notEqual(jsonValid({ schema: ANSWER }).version, jsonValid().version);
  assert.notEqual(
    jsonValid({ schema: { type: "object" } }).version,
    jsonValid({ schema: { type: "array" } }).version,
  );
  // Key order is no change.
  assert.equal(
    jsonValid({ schema: { type: "object", required: ["a"] } }).version,
    jsonValid({ schema: { required: ["a"], type: "object" } }).version,
  );
});

Deno.test("jsonFields scores the share of required dotted paths present", () => {
  const s = jsonFields({ required: ["answer", "source.url", "items.0.id"] });
  assert.equal(
    value(
      s,
      unit('{"answer": null, "source": {"url": "u"}, "items": [{"id": 1}]}'),
    ),
    1,
  );
  const some = one(s, unit('{"answer": "a", "source": {}, "items": []}'));
  assert.equal(some.value, 1 / 3);
  assert.equal(some.passed, false);
  assert.equal(some.reason, 'missing "source.url", "items.0.id"');
  const notJson = one(s, unit("answer: a"));
  assert.equal(notJson.value, 0);
  assert.ok(notJson.reason?.startsWith("not JSON: "));
  assert.equal(one(s, unit('"answer"')).value, 0);
  assert.throws(() => jsonFields({ required: [] }), RangeError);
  assert.notEqual(
    jsonFields({ required: ["a"] }).version,
    jsonFields({ required: ["b"] }).version,
  );
});

Deno.test("jsonMatch compares JSON whatever the key order, lists in order", () => {
  const s = jsonMatch();
  assert.equal(
    value(
      s,
      unit('{"b": {"y": 2, "x": 1}, "a": [1, 2]}', {
        a: [1, 2],
        b: { x: 1, y: 2 },
      }),
    ),
    1,
  );
  assert.equal(
    one(s, unit('{"a": [2, 1]}', { a: [1, 2] })).reason,
    "$.a[0]: expected 1, got 2",
  );
  assert.equal(
    one(s, unit('{"a": 1, "b": 2}', { a: 1 })).reason,
    '$: unexpected key "b"',
  );
  assert.equal(
    one(s, unit('{"a": 1}', { a: 1, "my key": 2 })).reason,
    '$["my key"]: missing',
  );
  assert.equal(
    one(s, unit("[1]", [1, 2])).reason,
    "$: expected 2 items, got 1",
  );
  assert.equal(value(s, unit("1.0", 1)), 1);
});

Deno.test("jsonMatch reads a string expected as JSON text when it parses, else as a string", () => {
  assert.equal(value(jsonMatch(), unit('{"a": 1}', '{ "a" : 1 }')), 1);
  assert.equal(value(jsonMatch(), unit('"Paris"', "Paris")), 1);
  assert.equal(one(jsonMatch(), unit("Paris", "Paris")).value, 0);
  assertNotApplicable(one(jsonMatch(), unit("{}")));
});

Deno.test("jsonMatch leaves out the ignored paths on both sides", () => {
  const s = jsonMatch({ ignore: ["id", "meta.ts", "items.0"] });
  assert.equal(
    value(
      s,
      unit('{"id": 7, "meta": {"ts": 1, "v": 2}, "items": [9, 3]}', {
        meta: { v: 2, ts: 5 },
        items: [1, 3],
      }),
    ),
    1,
  );
  assert.equal(
    one(
      s,
      unit('{"meta": {"v": 1}, "items": [0, 3]}', {
        meta: { v: 2 },
        items: [1, 3],
      }),
    ).reason,
    "$.meta.v: expected 2, got 1",
  );
  assert.notEqual(s.version, jsonMatch().version);
  assert.equal(jsonMatch().version, "json_match@1");
});

Deno.test("json_match compares integers past 2^53 exactly, as the dataset spells them, and says them whole", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      [
        '{"id":"big","input":"q","output":"12345678901234567890","expected":12345678901234567891}',
        '{"id":"obj","input":"q","output":"{\\"a\\": 9007199254740993}","expected":{"a":9007199254740992}}',
        '{"id":"same","input":"q","output":"{\\"a\\": 9007199254740993, \\"b\\": 1.0}","expected":{"b":1,"a":9007199254740993}}',
        '{"id":"spelt","input":"q","output":"[1e20]","expected":"[100000000000000000000]"}',
      ].join("\n") + "\n",
    );
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }, { type: json_match }]\n",
    );
    const out = await cli(["run", "s.yaml"], dir);
    assert.equal(out.code, 0, out.stderr);
    const scores = out.stdout.trim().split("\n").map((l) => JSON.parse(l))
      .filter((s) => s.metric === "json_match");
    assert.deepEqual(
      scores.map((s) => [s.example_id, s.value, s.reason]),
      [
        [
          "d.jsonl#big",
          0,
          "$: expected 12345678901234567891, got 12345678901234567890",
        ],
        [
          "d.jsonl#obj",
          0,
          "$.a: expected 9007199254740992, got 9007199254740993",
        ],
        ["d.jsonl#same", 1, undefined],
        ["d.jsonl#spelt", 1, undefined],
      ],
    );
  });
});
