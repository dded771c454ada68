// Deno reads no module a command does not run: deno.json's
// `"unstable": ["lazy-dynamic-imports"]` makes Deno resolve an `import()`
// when it runs, not before the program starts. Without it Deno reads every
// module any command could import (about 170, npm packages included) before
// cli.ts runs: some 10 ms of every start. Checked from Deno's debug log of
// the files it fetches, on a copy of the program with and without the
// setting (the copy without it shows that the log names what is read).

import assert from "node:assert/strict";
import { withTempDir } from "../_proc.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

async function copyTree(from: string, to: string): Promise<void> {
  if (!(await Deno.stat(from)).isDirectory) {
    await Deno.copyFile(from, to);
    return;
  }
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    await copyTree(`${from}/${entry.name}`, `${to}/${entry.name}`);
  }
}

/** The source files of `dir` that Deno fetched to run `score` on one unit. */
async function readFor(dir: string): Promise<string[]> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-L",
      "debug",
      "-A",
      "--config",
      `${dir}/deno.json`,
      `${dir}/cli.ts`,
      "score",
      "--scorer",
      `cat >/dev/null; echo '{"score": 1}'`,
      "--name",
      "t",
    ],
    cwd: dir,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(
    new TextEncoder().encode('{"input": "q", "output": "a"}\n'),
  );
  await writer.close();
  const { code, stdout, stderr } = await child.output();
  const log = new TextDecoder().decode(stderr);
  assert.equal(code, 0, log.slice(-2000));
  assert.match(
    new TextDecoder().decode(stdout),
    /"metric":"t","status":"scored"/,
  );
  const prefix = `file://${dir}/`;
  return [...log.matchAll(/fetch\w* - specifier: (file:\S+)/g)]
    .map((m) => m[1]!)
    .filter((s) => s.startsWith(prefix))
    .map((s) => s.slice(prefix.length));
}

Deno.test("score reads none of the other commands' modules before it runs", async () => {
  await withTempDir(async (dir) => {
    for (const name of ["cli.ts", "mod.ts", "deno.json", "deno.lock", "src"]) {
      await copyTree(`${ROOT}${name}`, `${dir}/${name}`);
    }
    const lazy = await readFor(dir);
    assert.ok(lazy.includes("src/cli/score.ts"), lazy.join(" "));
    for (const other of ["src/cli/run.ts", "src/cli/view.ts", "src/config/"]) {
      assert.ok(!lazy.some((f) => f.startsWith(other)), `${other} was read`);
    }

    // The same copy without the setting: Deno reads the whole graph first.
    const config = JSON.parse(await Deno.readTextFile(`${dir}/deno.json`));
    assert.deepEqual(config.unstable, ["lazy-dynamic-imports"]);
    delete config.unstable;
    await Deno.writeTextFile(`${dir}/deno.json`, JSON.stringify(config));
    const eager = await readFor(dir);
    assert.ok(eager.includes("src/cli/view.ts"), eager.join(" "));
    assert.ok(
      eager.length > 2 * lazy.length,
      `${eager.length}, ${lazy.length}`,
    );
  });
});

Deno.test("run reads the secret guards only for a config that may send a secret", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input": "q", "output": "a", "expected": "a"}\n',
    );
    const read = async (target: string) => {
      await Deno.writeTextFile(
        `${dir}/s.yaml`,
        `dataset: d.jsonl\ntarget: ${target}\nscorers: [{ type: exact_match }]\n`,
      );
      const { code, stderr } = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-L", "debug", "-A", `${ROOT}cli.ts`, "run", "s.yaml"],
        cwd: dir,
        stdout: "null",
        stderr: "piped",
        env: { NO_COLOR: "1" },
      }).output();
      const log = new TextDecoder().decode(stderr);
      // The http target's calls fail (nothing listens): exit 1, no Score.
      assert.ok(code === 0 || code === 1, log.slice(-2000));
      return /fetch\w* - specifier: file:\S+\/src\/run\/_secrets\.ts/.test(log);
    };
    // Every plain run paid for the module before.
    assert.equal(await read("{ type: replay }"), false);
    assert.equal(
      await read(
        '{ type: http, url: "http://127.0.0.1:9/", headers: { x-key: "${HOME}" } }',
      ),
      true,
    );
  });
});
