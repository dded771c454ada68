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

Deno.test("score says so when a file named stdin gives piped input's ids; ./stdin gives ids of its own", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/stdin`, '{"input":"q","output":"a"}\n');
    await Deno.writeTextFile(`${dir}/v.py`, "print('{\"score\": 1}')\n");
    const scorer = ["score", "--scorer", "python3 v.py"];
    const file = await cliWithStdin([...scorer, "stdin"], dir, "");
    assert.equal(file.code, 0, file.stderr);
    assert.equal(JSON.parse(file.stdout).example_id, "stdin#1");
    assert.match(
      file.stderr,
      /^evalpipe: note: "stdin" is a file here, and its records without ids are named stdin#<line>, as piped input's are: give it as \.\/stdin/,
    );
    const piped = await cliWithStdin(
      scorer,
      dir,
      '{"input":"q","output":"a"}\n',
    );
    assert.equal(piped.code, 0, piped.stderr);
    assert.equal(JSON.parse(piped.stdout).example_id, "stdin#1");
    assert.equal(piped.stderr, "");
    const dotted = await cliWithStdin([...scorer, "./stdin"], dir, "");
    assert.equal(dotted.code, 0, dotted.stderr);
    assert.equal(JSON.parse(dotted.stdout).example_id, "./stdin#1");
    assert.equal(dotted.stderr, "");
  });
});

Deno.test("run refuses a dataset named stdin, whose example ids would be piped input's", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/d.jsonl`, '{"input":"q","output":"a"}\n');
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      "datasets:\n  - path: d.jsonl\n    name: stdin\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    for (const command of ["run", "validate"]) {
      const out = await cliWithStdin([command, "s.yaml"], dir, "");
      assert.equal(out.code, 2, out.stderr);
      assert.equal(out.stdout, "");
      assert.match(
        out.stderr,
        /^evalpipe: Invalid config "s\.yaml" line 3: a dataset cannot be named "stdin": example ids "stdin#…" are piped input's/,
      );
    }
  });
});
