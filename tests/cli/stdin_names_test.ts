import assert from "node:assert/strict";
import { cliWithStdin } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

const SCORE =
  '{"metric":"m","status":"scored","validity":"valid","value":1,"evaluator_version":"m@1","example_id":"a","unit_id":"a","diagnostics":[],"evidence_refs":[]}';

Deno.test("every command names piped input stdin, unquoted, in its messages and its ids", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      'dataset: "-"\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n',
    );
    await Deno.writeTextFile(`${dir}/b.ndjson`, `${SCORE}\n`);
    await Deno.writeTextFile(`${dir}/v.py`, "print('{\"score\": 1}')\n");
    const units = '{"input":"q","output":"a"}\nnope\n';
    const scores = `${SCORE}\nnope\n`;
    for (
      const [args, input, message] of [
        [["run", "s.yaml"], units, "Invalid case in stdin line 2: "],
        [["score", "--scorer", "python3 v.py"], units, "in stdin line 2: "],
        [["aggregate"], scores, "Malformed Score in stdin line 2: "],
        [["view", "-"], scores, "Malformed Score in stdin line 2: "],
        [["diff", "-", "b.ndjson"], scores, "Malformed Score in stdin line 2"],
        [
          ["report", "-", "--junit", "j.xml"],
          scores,
          "stdin is not a RunRecord",
        ],
      ] as const
    ) {
      const out = await cliWithStdin([...args], dir, input);
      assert.ok(out.stderr.includes(message), `${args}: ${out.stderr}`);
      assert.ok(!out.stderr.includes('"stdin"'), `${args}: ${out.stderr}`);
      assert.ok(!out.stderr.includes('"-"'), `${args}: ${out.stderr}`);
      if (args[0] === "run" || args[0] === "score") {
        const ids = out.stdout.trim().split("\n").map((l) =>
          JSON.parse(l).example_id
        );
        assert.deepEqual(ids, ["stdin#1", "stdin#2"], `${args}`);
      }
    }
  });
});

Deno.test("merge names a damaged RunRecord on stdin stdin, unquoted", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/d.jsonl`, '{"input":"q","output":"a"}\n');
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    const run = await cliWithStdin(
      ["run", "s.yaml", "--record", "r.json"],
      dir,
      "",
    );
    assert.equal(run.code, 0, run.stderr);
    const lines = (await Deno.readTextFile(`${dir}/r.json`)).split("\n");
    const damaged = [lines[0], "garbage", ...lines.slice(1)].join("\n");
    const out = await cliWithStdin(["merge", "-"], dir, damaged);
    assert.equal(out.code, 2, out.stderr);
    assert.match(out.stderr, /^evalpipe: Invalid run record stdin line 2: /);
  });
});
