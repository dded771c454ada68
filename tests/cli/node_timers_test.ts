// The short commands never call the global `setTimeout` or `setInterval`
// (nor `clearTimeout`, `clearInterval`): Deno's first call of any loads its
// Node compatibility layer, about 4 ms of CPU, a tenth of a one-unit `score`'s
// own start-up. evalpipe's timers go
// through the spawner's one deadline timer (src/process/_deadlines.ts). A
// preloaded module reports each call with where it came from.

import assert from "node:assert/strict";
import { withTempDir } from "../_proc.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const CLI = `${ROOT}cli.ts`;
const PRELOAD = `${ROOT}tests/fixtures/report_node_timers.ts`;
const SH = `cat >/dev/null; echo '{"score": 1}'`;

async function evalpipe(
  dir: string,
  args: string[],
  stdin: string,
): Promise<string> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--preload", PRELOAD, CLI, ...args],
    cwd: dir,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(stdin));
  await writer.close();
  const { code, stdout, stderr } = await child.output();
  const err = new TextDecoder().decode(stderr);
  assert.equal(code, 0, err);
  // The run did its work: one Score line per unit.
  assert.ok(new TextDecoder().decode(stdout).includes('"status":"scored"'));
  return err;
}

const units = (n: number) =>
  Array.from(
    { length: n },
    (_, i) => JSON.stringify({ input: `q${i}`, output: "a", expected: "a" }),
  ).join("\n") + "\n";

Deno.test("the preloaded reporter sees a call of setTimeout", async () => {
  // So that the checks below can fail: a script that calls it is reported.
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/t.ts`, "setTimeout(() => {}, 0);\n");
    const { stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--preload", PRELOAD, `${dir}/t.ts`],
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.match(new TextDecoder().decode(stderr), /NODE TIMER setTimeout/);
    // clearTimeout loads the layer as well, even of no timer.
    await Deno.writeTextFile(`${dir}/c.ts`, "clearTimeout(undefined);\n");
    const cleared = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--preload", PRELOAD, `${dir}/c.ts`],
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.match(
      new TextDecoder().decode(cleared.stderr),
      /NODE TIMER clearTimeout/,
    );
  });
});

Deno.test("score --scorer at c=1 and c=4, and score --persistent, call no Node timer", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/p.py`,
      'import json, sys\nfor line in sys.stdin:\n    print(json.dumps({"score": 1.0}), flush=True)\n',
    );
    for (
      const args of [
        ["score", "--scorer", SH, "--name", "t", "--concurrency", "1"],
        ["score", "--scorer", SH, "--name", "t", "--concurrency", "4"],
        ["score", "--scorer", "python3 p.py", "--persistent"],
      ]
    ) {
      const err = await evalpipe(dir, args, units(12));
      assert.doesNotMatch(err, /NODE TIMER/, `${args.join(" ")}: ${err}`);
    }
  });
});

Deno.test("run and score --config on a few cases call no Node timer", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/data.jsonl`, units(3));
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: data.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    for (
      const [args, stdin] of [
        [["run", "suite.yaml"], ""],
        [["score", "--config", "suite.yaml"], units(3)],
      ] as const
    ) {
      const err = await evalpipe(dir, [...args], stdin);
      assert.doesNotMatch(err, /NODE TIMER/, `${args.join(" ")}: ${err}`);
    }
  });
});
