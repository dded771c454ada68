/**
 * repeatedKey: the key an object of a JSON text gives twice, found without
 * a second parse when there is none. Its shortcuts (the keys as written,
 * counted by the text's colons after a quote or by one read of its
 * structure, equal the parsed keys) must hold for every way JSON can be
 * written: escapes, `":` inside strings and keys, nesting, indentation.
 */

import assert from "node:assert/strict";
import { repeatedKey, shapeOf } from "../../src/io/_json_scan.ts";

/**
 * The repeated key's path in `text`, and whether its offset is right; the
 * keys counted by the colons and by the structure find the same.
 */
function found(text: string): string | undefined {
  const value = JSON.parse(text);
  const twice = repeatedKey(text, value);
  const written = shapeOf(text).keys;
  assert.deepEqual(
    repeatedKey(text, value, 0, text.length, undefined, written),
    twice,
    text,
  );
  if (twice === undefined) return undefined;
  // The offset is the opening quote of the key's second appearance.
  assert.equal(text[twice.offset], '"', text);
  return twice.path;
}

Deno.test("repeatedKey names a top-level key given twice", () => {
  assert.equal(found('{"input": "a", "input": "b"}'), "input");
  assert.equal(found('{"input":"a","input":"b"}'), "input");
  assert.equal(found('{"a":1,"b":2,"a":3}'), "a");
  const text = '{"input": "a", "expected": "x", "input": "b"}';
  assert.equal(repeatedKey(text, JSON.parse(text))?.offset, 32);
});

Deno.test("repeatedKey finds nothing in records without repeats", () => {
  for (
    const text of [
      "{}",
      "[]",
      '"text"',
      "12",
      "null",
      '{"input": "a", "expected": "b"}',
      '{"a": {"a": {"a": 1}}}', // one name at several depths
      '[{"a": 1}, {"a": 2}]', // one name in sibling objects
      '{"m": [{"x": 1, "y": 2}, {"x": 3}]}',
    ]
  ) assert.equal(found(text), undefined, text);
});

Deno.test("repeatedKey is not misled by colons and quotes inside strings", () => {
  for (
    const text of [
      // A value holding `":` and `\":` (an escaped quote, then a colon).
      '{"input": "say \\"a\\": b", "output": "x\\":"}',
      '{"input": "\\"\\":\\":"}',
      // A key holding `":`.
      '{"a\\":": 1, "b": 2}',
      '{"a\\" :": 1}',
      // A value ending in a backslash, then a key.
      '{"a": "\\\\", "b": 1}',
      // Colons after white space in a value.
      '{"t": "x\\"  :  y\\"\\n:"}',
    ]
  ) assert.equal(found(text), undefined, text);
  // The same shapes with a key given twice besides.
  assert.equal(found('{"a\\":": 1, "b": 2, "a\\":": 3}'), 'a":');
  assert.equal(
    found('{"input": "say \\"a\\": b", "x": 1, "x": 2}'),
    "x",
  );
  // A repeat beside a `":` in a string: the extra pair hides nothing.
  assert.equal(found('{"a": "\\":", "a": 2}'), "a");
});

Deno.test("repeatedKey reads escaped spellings of one name as that name", () => {
  // "\u0061" is "a": JSON.parse keeps one key, so it is given twice.
  assert.equal(found('{"a": 1, "\\u0061": 2}'), "a");
  assert.equal(found('{"a\\"b": 1, "a\\u0022b": 2}'), 'a"b');
  assert.equal(found('{"__proto__": 1, "__proto__": 2}'), "__proto__");
  assert.equal(found('{"__proto__": {"a": 1, "a": 2}}'), "__proto__.a");
  assert.equal(found('{"a": 1, "A": 2}'), undefined);
});

Deno.test("repeatedKey names nested keys by their path", () => {
  assert.equal(
    found('{"input": "q", "metadata": {"topic": "a", "topic": "b"}}'),
    "metadata.topic",
  );
  assert.equal(
    found(
      '{"input": "q", "tool_calls": [{"name": "a"}, {"name": "b", "name": "c"}]}',
    ),
    "tool_calls[1].name",
  );
  assert.equal(
    found('{"m": [[1, "a,b", {"x": [2, 3]}], [{"k": 1, "k": 2}]]}'),
    "m[1][0].k",
  );
  assert.equal(found('[{"a": 1}, {"b": 1, "b": 2}]'), "[1].b");
  assert.equal(
    found('{"a": {"b": 1}, "c": {"d": {"e": 1, "e": 2}}}'),
    "c.d.e",
  );
});

Deno.test("repeatedKey reads indented JSON, white space before colons included", () => {
  const pretty = JSON.stringify(
    { input: "q", metadata: { list: [{ a: 1 }, { b: 2 }] } },
    null,
    2,
  );
  assert.equal(found(pretty), undefined);
  const twice = '{\n  "input" : "a",\n  "metadata": {\n    "x"\t:\r\n 1,\n' +
    '    "x"\n    : 2\n  }\n}';
  assert.equal(found(twice), "metadata.x");
  assert.equal(found('{\n  "input"\n  :\n  "a",\n  "input": "b"\n}'), "input");
});

Deno.test("repeatedKey reads one value inside a longer text", () => {
  const text = '[{"a": 1, "a": 2}, {"b": 1}, {"c": 1, "c": 2}]';
  const values = JSON.parse(text);
  // The second element alone, then the third: the first's repeat is outside.
  assert.equal(repeatedKey(text, values[1], 19, 27), undefined);
  assert.deepEqual(repeatedKey(text, values[2], 29, 45), {
    path: "c",
    offset: 38,
  });
});

Deno.test("repeatedKey reads a value nested far deeper than a stack allows", () => {
  const depth = 50_000;
  const text = '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
  assert.equal(found(text), undefined);
  const twice = '{"a":'.repeat(depth) + '{"b":1,"b":2}' + "}".repeat(depth);
  assert.equal(found(twice), "a.".repeat(depth) + "b");
});

Deno.test("shapeOf counts the keys as written and the deepest nesting, none inside strings", () => {
  const cases: Array<[string, number, number]> = [
    ['"a \\"k\\": 1"', 0, 0],
    ["12", 0, 0],
    ['{"a": 1, "a": 2}', 2, 1],
    ['{"a": "x\\": y", "b": [{"c": 1}, {"c": 2}], "d": ":)"}', 5, 3],
    ['{"a\\":": {"b" :\n [1, [2, {"c"\t: {}}]]}}', 3, 6],
    ['{"t": "{\\"a\\": 1, \\"a\\": 2}"}', 1, 1],
  ];
  for (const [text, keys, depth] of cases) {
    assert.deepEqual(shapeOf(text), { keys, depth }, text);
  }
  const text = '[{"a": 1}, {"b": {"c": 2}}]';
  assert.deepEqual(shapeOf(text, 11, 26), { keys: 2, depth: 2 });
});

Deno.test("repeatedKey reads a long text's keys by its structure, colons in its prose and JSON in its strings", () => {
  const prose = "Note: refunds take 30 days. Time: 10:30. ".repeat(40);
  const embedded = JSON.stringify({ name: "f", arguments: { a: 1 } });
  const record = { input: prose, expected: embedded, metadata: { k: ":" } };
  const text = JSON.stringify(record);
  assert.ok(text.length > 1000);
  assert.equal(found(text), undefined);
  const twice = text.slice(0, -2) + ', "k": 2}}';
  assert.equal(found(twice), "metadata.k");
  // A key given twice beside a string that opens with a colon, which the
  // colons alone would count as a key.
  assert.equal(found(`{"a": ":x", "b": "${prose}", "b": 1}`), "b");
  assert.equal(found(`{"a": ":x", "b": "${prose}"}`), undefined);
});
