/**
 * A key given twice in a JSON or JSONL dataset's record, or in a unit record
 * `score` reads: `JSON.parse` keeps the last (`{"input": "a", "input": "b"}`
 * ran "b"), so the record is refused, named by file, line and key path, as a
 * YAML dataset and a subprocess verdict refuse one.
 */

import assert from "node:assert/strict";
import {
  type Example,
  loadDataset,
  type MalformedLine,
  parseScore,
  readUnitBatches,
  readUnits,
  type Unit,
} from "../../mod.ts";
import { cli, cliWithStdin } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

const encoder = new TextEncoder();

async function load(path: string, name: string): Promise<Example[]> {
  return await Array.fromAsync(await loadDataset(path, { name }));
}

/** What an example is: its id and its case's input, or why it is invalid. */
function shown(e: Example): [string, string] {
  return [
    e.example_id,
    e.case === null ? `invalid: ${e.invalid}` : `${e.case.input}`,
  ];
}

const JSONL = [
  '{"input": "a", "input": "b"}',
  '{"id": "k", "input": "q", "metadata": {"topic": "x", "topic": "y"}}',
  '{"input": "q", "expected": [{"name": "a"}, {"name": "b", "name": "c"}]}',
  // `":` inside strings and keys: no repeat, read as before.
  '{"input": "say \\"a\\": b", "expected": "\\":", "metadata": {"a\\":": 1}}',
  '{"id": 7, "id": 8, "input": "q"}',
  '{"input": "q", "\\u0069nput": "r"}',
  '{"input": "ok"}',
];

Deno.test("loadDataset refuses a JSONL record that gives a key twice, by line and key path", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/d.jsonl`, JSONL.join("\n") + "\n");
    assert.deepEqual((await load(`${dir}/d.jsonl`, "d.jsonl")).map(shown), [
      ["d.jsonl#1", 'invalid: key "input" appears twice: keep one'],
      ["d.jsonl#k", 'invalid: key "metadata.topic" appears twice: keep one'],
      ["d.jsonl#3", 'invalid: key "expected[1].name" appears twice: keep one'],
      ["d.jsonl#4", 'say "a": b'],
      // Its id is the key given twice: named by its line.
      ["d.jsonl#5", 'invalid: key "id" appears twice: keep one'],
      ["d.jsonl#6", 'invalid: key "input" appears twice: keep one'],
      ["d.jsonl#7", "ok"],
    ]);
  });
});

Deno.test("loadDataset refuses a repeated key in NDJSON on stdin", async () => {
  const stdin = ReadableStream.from([
    encoder.encode('{"input": "a"}\n{"input": "a",\t"input" : "b"}\n'),
  ]);
  const examples = await Array.fromAsync(await loadDataset("-", { stdin }));
  assert.deepEqual(examples.map(shown), [
    ["stdin#1", "a"],
    ["stdin#2", 'invalid: key "input" appears twice: keep one'],
  ]);
});

Deno.test("loadDataset refuses a JSON array's record that gives a key twice, with the line it is on", async () => {
  await withTempDir(async (dir) => {
    // Indented, as JSON.stringify(cases, null, 2) writes it, by hand.
    const text = [
      "[", // 1
      "  {", // 2
      '    "input": "a"', // 3
      "  },", // 4
      "  {", // 5
      '    "id": "two",', // 6
      '    "input": "a",', // 7
      '    "metadata": {"k": 1},', // 8
      '    "input"', // 9
      '      : "b"', // 10
      "  },", // 11
      '  {"input": "c", "input": "d"},', // 12
      '  {"input": "x\\":", "expected": {"a": {"b": 1, "b": 2}}}', // 13
      "]", // 14
    ].join("\n");
    await Deno.writeTextFile(`${dir}/d.json`, text);
    const examples = await load(`${dir}/d.json`, "d.json");
    assert.deepEqual(examples.map(shown), [
      ["d.json#1", "a"],
      [
        "d.json#two",
        'invalid: key "input" appears twice (again at line 9): keep one',
      ],
      ["d.json#3", 'invalid: key "input" appears twice: keep one'],
      ["d.json#4", 'invalid: key "expected.a.b" appears twice: keep one'],
    ]);
    // The lines the records start on, as every malformed record is named.
    assert.deepEqual(examples.slice(1).map((e) => e.at), [5, 12, 13]);

    // A compact array, every record on one line, and the same records
    // without repeats: all read.
    const clean = JSON.stringify([
      { id: "two", input: "b", metadata: { k: 1 } },
      { input: 'x":', expected: { a: { b: 2 } } },
    ]);
    await Deno.writeTextFile(`${dir}/c.json`, clean);
    assert.deepEqual((await load(`${dir}/c.json`, "c.json")).map(shown), [
      ["c.json#two", "b"],
      ["c.json#2", 'x":'],
    ]);
  });
});

Deno.test("readUnits and readUnitBatches refuse a unit record that gives a key twice", async () => {
  const lines = [
    '{"example_id": "d#1", "unit_id": "d#1", "input": "q", "output": "a", "output": "b"}',
    '{"input": "q", "output": "a", "target": {"latency_ms": 1, "latency_ms": 2}}',
    '{"unit_id": "u#1", "unit_id": "u#2", "input": "q", "output": "a"}',
    '{"input": "q", "output": "a\\": \\":"}',
  ];
  const bytes = encoder.encode(lines.join("\n") + "\n");
  const want: Array<[string, string | undefined]> = [
    ["d#1", 'key "output" appears twice: keep one'],
    ["stdin#2", 'key "target.latency_ms" appears twice: keep one'],
    // The key given twice is an id: named by its line, not by either.
    ["stdin#3", 'key "unit_id" appears twice: keep one'],
    ["stdin#4", undefined],
  ];
  const shownUnit = (u: Unit): [string, string | undefined] => [
    u.unit_id,
    u.invalid,
  ];
  const malformed: MalformedLine[] = [];
  const units = await Array.fromAsync(
    readUnits(ReadableStream.from([bytes]), "stdin", (m) => malformed.push(m)),
  );
  assert.deepEqual(units.map(shownUnit), want);
  assert.deepEqual(malformed.map((m) => m.line), [1, 2, 3]);
  assert.equal(units[3]!.output, 'a": ":');

  const batched: MalformedLine[] = [];
  const batches = await Array.fromAsync(
    readUnitBatches(
      ReadableStream.from([bytes]),
      "stdin",
      (m) => batched.push(m),
    ),
  );
  assert.deepEqual(batches.flat().map(shownUnit), want);
  assert.deepEqual(batched, malformed);
});

const SUITE =
  "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n";

Deno.test("run names a dataset record that gives a key twice, blocks its Scores and exits 2", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/suite.yaml`, SUITE);
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input": "q", "expected": "a", "output": "a"}\n' +
        '{"input": "q", "expected": "a", "output": "b", "output": "a"}\n',
    );
    const { code, stdout, stderr } = await cli(["run", "suite.yaml"], dir);
    assert.equal(code, 2, stderr);
    assert.match(
      stderr,
      /evalpipe: Invalid case in "d\.jsonl" line 2: key "output" appears twice: keep one\n/,
    );
    assert.doesNotMatch(stderr, /at .*\.ts:\d+/, "no stack trace");
    const scores = stdout.trim().split("\n").map((l) =>
      parseScore(JSON.parse(l))
    );
    assert.deepEqual(scores.map((s) => [s.example_id, s.status, s.value]), [
      ["d.jsonl#1", "scored", 1],
      ["d.jsonl#2", "blocked", null],
    ]);
    assert.equal(
      scores[1]!.reason,
      'invalid case: key "output" appears twice: keep one',
    );
  });
});

Deno.test("score names a unit record that gives a key twice, blocks its Scores and exits 2", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/suite.yaml`, SUITE);
    await Deno.writeTextFile(`${dir}/d.jsonl`, '{"input": "q"}\n');
    const { code, stdout, stderr } = await cliWithStdin(
      ["score", "--config", "suite.yaml"],
      dir,
      '{"input": "q", "expected": "a", "output": "a"}\n' +
        '{"input": "q", "expected": "b", "expected": "a", "output": "a"}\n',
    );
    assert.equal(code, 2, stderr);
    assert.equal(
      stderr,
      'evalpipe: Malformed unit record in stdin line 2: key "expected" appears twice: keep one\n',
    );
    const scores = stdout.trim().split("\n").map((l) =>
      parseScore(JSON.parse(l))
    );
    assert.deepEqual(scores.map((s) => [s.unit_id, s.status, s.value]), [
      ["stdin#1", "scored", 1],
      ["stdin#2", "blocked", null],
    ]);
  });
});
