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
        `4 examples have another input or expected answer in this run than in the baseline ${named}: the dataset changed between the runs, so their change may be the case's, not the system's`,
      ),
      second.stderr,
    );
    // A RunRecord as the baseline keeps its cases as its units.
    const byRecord = await cli(["run", "s.yaml", "--baseline", "1.json"], dir);
    assert.ok(
      byRecord.stderr.includes(
        `4 examples have another input or expected answer in this run than in the baseline ${named}`,
      ),
      byRecord.stderr,
    );
    const said =
      `evalpipe: 4 examples have another input or expected answer in B than in A ${named}: the dataset changed between the runs`;
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
  assert.match(text, /1 example has another input or expected answer/);
  assert.doesNotMatch(text, /no case changed/);
  assert.match(text, /^no case's verdict changed, and none came or went$/m);
});
