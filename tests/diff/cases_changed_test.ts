// Two runs whose examples keep their ids while the dataset changed under
// them: diff and run --baseline pair their Scores all the same, and say
// which cases differ, where the runs kept them (records, baselines).

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

const SUITE =
  "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n";

/** A dataset of replayed cases: id, input, output, expected. */
async function dataset(
  dir: string,
  cases: Array<[string, unknown, string, string]>,
): Promise<void> {
  await Deno.writeTextFile(
    `${dir}/d.jsonl`,
    cases.map(([id, input, output, expected]) =>
      JSON.stringify({ id, input, output, expected }) + "\n"
    ).join(""),
  );
}

Deno.test("diff and run --baseline name the examples whose input or expected answer changed between the runs", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/s.yaml`, SUITE);
    const ask = (q: string) => [{ role: "user", content: q }];
    await dataset(dir, [
      ...["a", "b", "c", "d", "e"].map((id) =>
        [id, `${id}?`, id, id] as [string, unknown, string, string]
      ),
      ["f", ask("f?"), "f", "f"],
    ]);
    const first = await cli([
      "run",
      "s.yaml",
      "--out",
      "1.ndjson",
      "--record",
      "1.json",
      "--save-baseline",
      "main",
    ], dir);
    assert.equal(first.code, 0, first.stderr);
    // b, c, d and e edited, ids kept: two inputs, two expected answers; f's
    // message with its keys in another order, which is the same case.
    await dataset(dir, [
      ["a", "a?", "a", "a"],
      ["b", "b, again?", "b", "b"],
      ["c", "c!", "c", "c"],
      ["d", "d?", "d", "D"],
      ["e", "e?", "e", "E"],
      ["f", [{ content: "f?", role: "user" }], "f", "f"],
    ]);
    const second = await cli([
      "run",
      "s.yaml",
      "--out",
      "2.ndjson",
      "--record",
      "2.json",
      "--baseline",
      "main",
    ], dir);
    const named = '("d.jsonl#b", "d.jsonl#c", "d.jsonl#d" and 1 more)';
    assert.ok(
      second.stderr.includes(
        `4 examples have another input, expected answer, context or metadata in this run than in the baseline ${named}: the dataset changed between the runs, so their change may be the case's, not the system's`,
      ),
      second.stderr,
    );
    // A RunRecord as the baseline keeps its cases as its units.
    const byRecord = await cli(["run", "s.yaml", "--baseline", "1.json"], dir);
    assert.ok(
      byRecord.stderr.includes(
        `4 examples have another input, expected answer, context or metadata in this run than in the baseline ${named}`,
      ),
      byRecord.stderr,
    );
    const said =
      `evalpipe: 4 examples have another input, expected answer, context or metadata in B than in A ${named}: the dataset changed between the runs`;
    for (const a of ["1.json", ".evalpipe/baselines/main.json"]) {
      const diff = await cli(["diff", a, "2.json"], dir);
      assert.ok(diff.stderr.includes(said), `${a}: ${diff.stderr}`);
    }
    // The same runs with their cases unchanged say nothing of them.
    const same = await cli(["diff", "1.json", "1.json"], dir);
    assert.doesNotMatch(same.stderr, /another input/);
    // Scores files keep no cases: nothing is known, nothing said.
    const scores = await cli(["diff", "1.ndjson", "2.ndjson"], dir);
    assert.doesNotMatch(scores.stderr, /another input/);
  });
});

Deno.test("formatBaseline does not say no case changed beside the cases whose input changed", async () => {
  const { formatBaseline } = await import("../../src/report/mod.ts");
  const { compareWithBaseline } = await import("../../src/run/mod.ts");
  const { scored } = await import("../../src/score/mod.ts");
  const s = scored("m", 1, { example_id: "d#1", unit_id: "d#1" });
  const same = compareWithBaseline([s], [s], "all");
  assert.match(formatBaseline(same, "b.json"), /^no case changed$/m);
  const text = formatBaseline({
    ...same,
    cases_changed: { count: 1, examples: ["d#1"] },
  }, "b.json");
  assert.match(
    text,
    /1 example has another input, expected answer, context or metadata/,
  );
  assert.doesNotMatch(text, /no case changed/);
  assert.match(text, /^no case's verdict changed, and none came or went$/m);
});

Deno.test("diff and run --baseline name a case whose context, metadata or expected answer's number text changed", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/s.yaml`, SUITE);
    const write = (lines: string[]) =>
      Deno.writeTextFile(`${dir}/d.jsonl`, lines.join("\n") + "\n");
    const line = (id: string, rest: string) =>
      `{"id":"${id}","input":"${id}?","output":"${id}",${rest}}`;
    await write([
      line("a", `"expected":"a"`),
      line("b", `"expected":"b","context":["b is old"]`),
      line("c", `"expected":"c","metadata":{"topic":"refunds"}`),
      line("d", `"expected":1`),
      line("e", `"expected":12345678901234567890`),
      line("f", `"expected":{"x":1,"y":2},"metadata":{"k":1,"j":2}`),
    ]);
    const first = await cli([
      "run",
      "s.yaml",
      "--record",
      "1.json",
      "--save-baseline",
      "main",
    ], dir);
    assert.equal(first.code, 0, first.stderr);
    // b's context, c's metadata, d's 1 written 1.0, e's integer past 2^53:
    // each reaches a scorer or the target otherwise. f's keys in another
    // order are the same case.
    await write([
      line("a", `"expected":"a"`),
      line("b", `"expected":"b","context":["b is new"]`),
      line("c", `"expected":"c","metadata":{"topic":"billing"}`),
      line("d", `"expected":1.0`),
      line("e", `"expected":12345678901234567891`),
      line("f", `"expected":{"y":2,"x":1},"metadata":{"j":2,"k":1}`),
    ]);
    const second = await cli(["run", "s.yaml", "--record", "2.json"], dir);
    const named = '("d.jsonl#b", "d.jsonl#c", "d.jsonl#d" and 1 more)';
    const text =
      `4 examples have another input, expected answer, context or metadata in B than in A ${named}`;
    for (const a of ["1.json", ".evalpipe/baselines/main.json"]) {
      const diff = await cli(["diff", a, "2.json"], dir);
      assert.ok(
        diff.stderr.includes(`evalpipe: ${text}`),
        `${a}: ${diff.stderr}`,
      );
    }
    for (const baseline of ["main", "1.json"]) {
      const run = await cli(["run", "s.yaml", "--baseline", baseline], dir);
      assert.ok(
        run.stderr.includes(
          `4 examples have another input, expected answer, context or metadata in this run than in the baseline ${named}`,
        ),
        `${baseline}: ${run.stderr}`,
      );
    }
    assert.equal(second.code, 0, second.stderr);
  });
});

Deno.test("a record line that gives expected twice is compared by the one JSON.parse read, as written", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/s.yaml`, SUITE);
    const write = (expected: string) =>
      Deno.writeTextFile(
        `${dir}/d.jsonl`,
        `{"id":"a","input":"a?","output":"1","expected":${expected}}\n`,
      );
    await write("1.0");
    const first = await cli(["run", "s.yaml", "--record", "1.json"], dir);
    assert.equal(first.code, 0, first.stderr);
    // Edited by hand: another answer first; JSON.parse reads the last, 1.0.
    const text = await Deno.readTextFile(`${dir}/1.json`);
    await Deno.writeTextFile(
      `${dir}/1.json`,
      text.replace(
        '{"example_id":"d.jsonl#a"',
        '{"expected":7,"example_id":"d.jsonl#a"',
      ),
    );
    await write("1.0");
    const same = await cli(["run", "s.yaml", "--record", "2.json"], dir);
    assert.equal(same.code, 0, same.stderr);
    const diff = await cli(["diff", "1.json", "2.json"], dir);
    assert.equal(diff.code, 0, diff.stderr);
    assert.doesNotMatch(diff.stderr, /another input/);
    await write("1");
    const other = await cli(["run", "s.yaml", "--record", "3.json"], dir);
    assert.equal(other.code, 0, other.stderr);
    const changed = await cli(["diff", "1.json", "3.json"], dir);
    assert.match(changed.stderr, /1 example has another input/);
  });
});

Deno.test("run --save-baseline keeps expected's numbers as written: the same dataset run again against it names no changed case", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/s.yaml`, SUITE);
    // What JSON.parse reads otherwise: 1, a rounded double, 1.5; and a
    // string written with an escape, the same value either way.
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      [
        `{"id":"a","input":"a?","output":"a","expected":1.0}`,
        `{"id":"b","input":"b?","output":"b","expected":12345678901234567891}`,
        `{"id":"c","input":"c?","output":"c","expected":{"n":[1.50]}}`,
        `{"id":"d","input":"d?","output":"d","expected":"\\u0041"}`,
      ].join("\n") + "\n",
    );
    const saved = await cli(["run", "s.yaml", "--save-baseline", "main"], dir);
    assert.equal(saved.code, 0, saved.stderr);
    const kept = await Deno.readTextFile(
      `${dir}/.evalpipe/baselines/main.json`,
    );
    assert.match(kept, /"expected": ?1\.0\b/);
    assert.match(kept, /"expected": ?12345678901234567891\b/);
    assert.match(kept, /"n": ?\[\s*1\.50\s*\]/);
    const again = await cli(["run", "s.yaml", "--baseline", "main"], dir);
    assert.equal(again.code, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /another input, expected answer/);
    assert.match(again.stderr, /no case changed/);
  });
});

Deno.test("diff of a baseline saved before it kept context and metadata compares input and expected only, by value", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/s.yaml`, SUITE);
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      [
        '{"id":"a","input":"a?","output":"a","expected":"a","context":["c"],"metadata":{"m":1}}',
        // An older evalpipe wrote these as JSON.parse read them: 1, and a
        // rounded double; the dataset is the same all the same.
        '{"id":"b","input":"b?","output":"1.0","expected":1.0}',
        '{"id":"c","input":"c?","output":"x","expected":{"n":12345678901234567891}}',
      ].join("\n") + "\n",
    );
    const run = await cli([
      "run",
      "s.yaml",
      "--record",
      "r.json",
      "--save-baseline",
      "b.json",
    ], dir);
    assert.equal(run.code, 0, run.stderr);
    // As an older evalpipe wrote it: no case_fields, no context, no metadata.
    const file = JSON.parse(await Deno.readTextFile(`${dir}/b.json`));
    delete file.case_fields;
    for (const unit of file.units) {
      delete unit.context;
      delete unit.metadata;
    }
    await Deno.writeTextFile(`${dir}/b.json`, JSON.stringify(file, null, 2));
    const diff = await cli(["diff", "b.json", "r.json"], dir);
    assert.equal(diff.code, 0, diff.stderr);
    assert.doesNotMatch(diff.stderr, /another input/);
    const again = await cli(["run", "s.yaml", "--baseline", "b.json"], dir);
    assert.equal(again.code, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /another input/);
  });
});

Deno.test("casesChanged, exported by src/diff/mod.ts, compares what a scorer or target sees", async () => {
  const { casesChanged } = await import("../../src/diff/mod.ts");
  const a = [
    { example_id: "d#1", input: "q", context: ["old"] },
    { example_id: "d#2", input: "q", metadata: { k: 1 } },
    { example_id: "d#3", input: "q" },
  ];
  const b = [
    { example_id: "d#1", input: "q", context: ["new"] },
    { example_id: "d#2", input: "q", metadata: { k: 2 } },
    { example_id: "d#3", input: "q", context: [] },
  ];
  assert.deepEqual(casesChanged(a, b), {
    count: 3,
    examples: ["d#1", "d#2", "d#3"],
  });
  // A kept input and expected only (an older baseline): nothing else told.
  assert.equal(
    casesChanged(a, b, { fields: ["input", "expected"] }),
    undefined,
  );
});

Deno.test("casesKept, exported by src/run/mod.ts, lets a script compare an older baseline as run --baseline does", async () => {
  const { casesChanged } = await import("../../src/diff/mod.ts");
  const { casesKept } = await import("../../src/run/mod.ts");
  const unit = { example_id: "d#1", unit_id: "d#1", input: "q", scores: [] };
  const older = {
    evalpipe_baseline: 1 as const,
    epochs: 1,
    require: "all" as const,
    units: [{ ...unit, expected: 1 }],
  };
  const now = [{ example_id: "d#1", input: "q", expected: 1, context: ["c"] }];
  assert.notEqual(casesChanged(older.units, now), undefined);
  assert.equal(casesChanged(older.units, now, casesKept(older)), undefined);
  const newer = { ...older, case_fields: casesKept(older).fields!.slice() };
  assert.deepEqual(casesKept(newer), { fields: ["input", "expected"] });
});
