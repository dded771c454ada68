import assert from "node:assert/strict";
import { parseScore } from "../../mod.ts";
import { cli } from "../_cli.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

Deno.test("examples/script/reassemble.ts reassembles the stages from mod.ts", async () => {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "examples/script/reassemble.ts",
      "examples/script/logs.jsonl",
    ],
    cwd: ROOT,
  }).output();
  const dec = new TextDecoder();
  assert.equal(code, 0, dec.decode(stderr));
  const scores = dec.decode(stdout).trim().split("\n").map((l) =>
    parseScore(JSON.parse(l))
  );
  assert.equal(scores.length, 8);
  assert.deepEqual(
    scores.filter((s) => s.metric === "exact_match").map((s) => s.value),
    [1, 0, 1, null],
  );
  const aggregates = dec.decode(stderr).trim().split("\n").map((l) =>
    JSON.parse(l)
  );
  assert.deepEqual(aggregates.map((a) => [a.metric, a.n, a.aggregatable]), [
    ["exact_match", 4, 3],
    ["short", 4, 4],
  ]);
});

Deno.test("examples/script/reassemble.ts writes the Score lines evalpipe run writes for the same suite", async () => {
  const dataset = `${ROOT}examples/script/logs.jsonl`;
  const dir = await Deno.makeTempDir();
  try {
    // The script's one built-in, run by `run`: the same dataset path as
    // written, so the same example ids.
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: ${dataset}\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n`,
    );
    const dec = new TextDecoder();
    const script = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "examples/script/reassemble.ts", dataset],
      cwd: ROOT,
    }).output();
    assert.equal(script.code, 0, dec.decode(script.stderr));
    const run = await cli(["run", "suite.yaml", "--record", "r.json"], dir);
    assert.equal(run.code, 0, run.stderr);
    const lines = (text: string) => text.trim().split("\n");
    assert.deepEqual(
      lines(dec.decode(script.stdout)).filter((l) =>
        l.startsWith('{"metric":"exact_match"')
      ),
      lines(run.stdout),
    );
    // And its aggregate: the metric's range, its bounds and interval in it.
    const record = JSON.parse(await Deno.readTextFile(`${dir}/r.json`));
    assert.deepEqual(
      lines(dec.decode(script.stderr)).map((l) => JSON.parse(l)).find((
        a,
      ) => a.metric === "exact_match"),
      record.aggregates.find((a: { metric: string }) =>
        a.metric === "exact_match"
      ),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a script in another folder imports mod.ts with evalpipe's deno.json, as the README says", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // The README's example script, copied out, importing mod.ts by path.
    const text = await Deno.readTextFile(
      `${ROOT}examples/script/reassemble.ts`,
    );
    const script = text.replaceAll(
      /from "(\.\.\/)+mod\.ts"/g,
      `from ${JSON.stringify(`${ROOT}mod.ts`)}`,
    );
    assert.notEqual(script, text, "the example imports mod.ts");
    await Deno.writeTextFile(`${dir}/my_eval.ts`, script);
    const run = (args: string[]) =>
      new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          ...args,
          "my_eval.ts",
          `${ROOT}examples/script/logs.jsonl`,
        ],
        cwd: dir,
        stdout: "piped",
        stderr: "piped",
      }).output();
    const dec = new TextDecoder();
    const bare = await run([]);
    assert.notEqual(bare.code, 0);
    assert.match(dec.decode(bare.stderr), /Import "js-yaml" not a dependency/);
    const given = await run(["--config", `${ROOT}deno.json`]);
    assert.equal(given.code, 0, dec.decode(given.stderr));
    assert.equal(dec.decode(given.stdout).trim().split("\n").length, 8);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("examples/script/reassemble.ts ends quietly when its reader closes early (| head -1)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // Enough Scores to fill the pipe many times over.
    const cases = Array.from(
      { length: 20_000 },
      (_, i) => JSON.stringify({ input: `q${i}`, expected: "a", output: "a" }),
    );
    await Deno.writeTextFile(`${dir}/logs.jsonl`, cases.join("\n") + "\n");
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "examples/script/reassemble.ts",
        `${dir}/logs.jsonl`,
      ],
      cwd: ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const errors = new Response(child.stderr).text();
    // The reader takes the first chunk and goes away, as `head -1` does.
    const reader = child.stdout.getReader();
    const first = await reader.read();
    await reader.cancel();
    const { code } = await child.status;
    const stderr = await errors;
    assert.ok(!first.done);
    assert.doesNotMatch(stderr, /BrokenPipe|Uncaught/);
    assert.equal(code, 0, stderr);
    // What was counted is still summed up on stderr.
    for (const line of stderr.trim().split("\n")) {
      assert.ok(["exact_match", "short"].includes(JSON.parse(line).metric));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
