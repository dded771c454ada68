/**
 * A number past a double's range in a JSON or JSONL dataset's record, or in
 * a unit record `score` reads (`1e400`, 309 digits): `JSON.parse` reads it as
 * Infinity and `JSON.stringify` writes that as `null`, so a case's
 * `metadata: {"n": 1e400}` reached unit records and the RunRecord as
 * `{"n": null}`, and `"id": 1e400` named its case `#Infinity`, in silence.
 * The record is refused, named by file, line and path, as a YAML case's
 * `.inf` is.
 */

import assert from "node:assert/strict";
import {
  type Example,
  loadDataset,
  type MalformedLine,
  parseScore,
  readUnits,
} from "../../mod.ts";
import { cli, cliWithStdin } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

const encoder = new TextEncoder();

const RECORDS = [
  '{"id": "a", "input": "q", "expected": 1e400}',
  '{"id": "b", "input": "q", "metadata": {"w": [1, -1E+400]}}',
  '{"id": 1e400, "input": "q"}',
  // Large but finite, underflowing to 0, or text: read as before.
  '{"id": "c", "input": "q", "expected": 1e300, "metadata": {"t": "1e400", "u": 1e-400}}',
  `{"id": "d", "input": "q", "expected": ${"9".repeat(309)}}`,
];

const note = (path: string, sign = "") =>
  `"${path}" is a number too large for JSON (it reads as ${sign}Infinity, written as null): write it quoted, as text`;

const WANT = [
  note("expected"),
  note("metadata.w[1]", "-"),
  note("id"),
  undefined,
  note("expected"),
];

async function load(path: string, name: string): Promise<Example[]> {
  return await Array.fromAsync(await loadDataset(path, { name }));
}

Deno.test("loadDataset refuses a JSONL or JSON record holding a number past a double's range (1e400), by its path", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/d.jsonl`, RECORDS.join("\n") + "\n");
    const jsonl = await load(`${dir}/d.jsonl`, "d.jsonl");
    assert.deepEqual(jsonl.map((e) => e.invalid), WANT);
    // An id that is the number at fault names no case: its line stands in.
    assert.deepEqual(jsonl.map((e) => e.example_id), [
      "d.jsonl#a",
      "d.jsonl#b",
      "d.jsonl#3",
      "d.jsonl#c",
      "d.jsonl#d",
    ]);
    assert.equal(jsonl[3]!.case?.expected, 1e300);

    await Deno.writeTextFile(
      `${dir}/d.json`,
      "[\n" + RECORDS.join(",\n") + "\n]\n",
    );
    const json = await load(`${dir}/d.json`, "d.json");
    assert.deepEqual(json.map((e) => e.invalid), WANT);
    assert.deepEqual(json.map((e) => e.at), [2, 3, 4, undefined, 6]);
  });
});

Deno.test("readUnits refuses a unit record holding a number past a double's range", async () => {
  const lines = [
    '{"input": "q", "output": "a", "expected": 1e400}',
    '{"id": 2e999, "input": "q", "output": "a", "metadata": {"n": 1}}',
    '{"input": "q", "output": "1e400", "expected": "1e400"}',
  ];
  const malformed: MalformedLine[] = [];
  const units = await Array.fromAsync(
    readUnits(
      ReadableStream.from([encoder.encode(lines.join("\n") + "\n")]),
      "stdin",
      (m) => malformed.push(m),
    ),
  );
  assert.deepEqual(units.map((u) => [u.unit_id, u.invalid]), [
    ["stdin#1", note("expected")],
    ["stdin#2", note("id")],
    ["stdin#3", undefined],
  ]);
  assert.deepEqual(malformed.map((m) => m.line), [1, 2]);
});

const SUITE =
  "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n";

Deno.test("run names a dataset record holding 1e400, blocks its Scores and exits 2", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/suite.yaml`, SUITE);
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input": "q", "expected": "a", "output": "a"}\n' +
        '{"input": "q", "expected": 1e400, "output": "Infinity"}\n',
    );
    const { code, stdout, stderr } = await cli(["run", "suite.yaml"], dir);
    assert.equal(code, 2, stderr);
    assert.match(
      stderr,
      /evalpipe: Invalid case in "d\.jsonl" line 2: "expected" is a number too large for JSON \(it reads as Infinity, written as null\): write it quoted, as text\n/,
    );
    assert.doesNotMatch(stderr, /at .*\.ts:\d+/, "no stack trace");
    const scores = stdout.trim().split("\n").map((l) =>
      parseScore(JSON.parse(l))
    );
    assert.deepEqual(scores.map((s) => [s.example_id, s.status, s.value]), [
      ["d.jsonl#1", "scored", 1],
      ["d.jsonl#2", "blocked", null],
    ]);
  });
});

Deno.test("score names a unit record holding 1e400, blocks its Scores and exits 2", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/suite.yaml`, SUITE);
    await Deno.writeTextFile(`${dir}/d.jsonl`, '{"input": "q"}\n');
    const { code, stdout, stderr } = await cliWithStdin(
      ["score", "--config", "suite.yaml"],
      dir,
      '{"input": "q", "expected": "a", "output": "a"}\n' +
        '{"input": "q", "output": "a", "metadata": {"n": 1e400}}\n',
    );
    assert.equal(code, 2, stderr);
    assert.equal(
      stderr,
      `evalpipe: Malformed unit record in stdin line 2: ${
        note("metadata.n")
      }\n`,
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
