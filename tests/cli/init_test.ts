/**
 * `evalpipe init` writes a suite that runs as it is: checked by running it,
 * offline, with the real CLI.
 */

import assert from "node:assert/strict";
import { CLI, cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

/**
 * A PATH with an `evalpipe` command on it that runs this program, as
 * `deno install` writes its launcher.
 */
async function withEvalpipe(dir: string): Promise<string> {
  await Deno.mkdir(`${dir}/.bin`, { recursive: true });
  await Deno.writeTextFile(
    `${dir}/.bin/evalpipe`,
    `#!/bin/sh\nexec deno run -A '${new URL(`file://${CLI}`).href}' "$@"\n`,
  );
  await Deno.chmod(`${dir}/.bin/evalpipe`, 0o755);
  return `${dir}/.bin:${Deno.env.get("PATH") ?? ""}`;
}

Deno.test("cli init writes a suite that runs at once, offline, and passes its gate", async () => {
  await withTempDir(async (dir) => {
    const init = await cli(["init"], dir, {
      PATH: await withEvalpipe(dir),
      INIT_CWD: dir, // the user's shell, even under `deno task test`
    });
    assert.equal(init.code, 0, init.stderr);
    assert.equal(init.stdout, "", "stdout is for data");
    assert.match(init.stderr, /wrote evalpipe\.yaml/);
    assert.match(init.stderr, /Run it with: {2}evalpipe run evalpipe\.yaml/);
    const run = await cli(["run", "evalpipe.yaml"], dir);
    assert.equal(run.code, 0, run.stderr);
    const scores = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
    // 4 cases × 3 metrics, every one measured.
    assert.equal(scores.length, 12);
    assert.deepEqual(
      [...new Set(scores.map((s) => s.metric))].sort(),
      ["brevity", "contains", "exact_match"],
    );
    for (const s of scores) assert.equal(s.status, "scored", s.reason);
    const contains = scores.filter((s) => s.metric === "contains");
    assert.deepEqual(contains.map((s) => s.passed), [true, true, true, false]);
  });
});

Deno.test("cli init leaves existing files alone unless --force, and writes into a folder", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/evalpipe.yaml`, "mine\n");
    const refused = await cli(["init"], dir);
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      /"evalpipe\.yaml" already exists: nothing was written \(--force overwrites them\)/,
    );
    assert.equal(await Deno.readTextFile(`${dir}/evalpipe.yaml`), "mine\n");
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), [
      "evalpipe.yaml",
    ]);
    const forced = await cli(["init", "--force"], dir);
    assert.equal(forced.code, 0, forced.stderr);
    assert.notEqual(await Deno.readTextFile(`${dir}/evalpipe.yaml`), "mine\n");
    const nested = await cli(["init", "evals/first"], dir, {
      PATH: await withEvalpipe(dir),
    });
    assert.equal(nested.code, 0, nested.stderr);
    assert.match(nested.stderr, /evalpipe run evals\/first\/evalpipe\.yaml/);
    const run = await cli(["run", "evals/first/evalpipe.yaml"], dir);
    assert.equal(run.code, 0, run.stderr);
  });
});

Deno.test("cli init refuses a DIR that is a file, goes through one or is a symlink to nothing, plainly, writing nothing", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/afile`, "x");
    await Deno.symlink(`${dir}/nowhere/x`, `${dir}/dangling`);
    const cases: [string, string][] = [
      ["afile", '"afile" is not a folder'],
      ["afile/sub", '"afile/sub" goes through a file as if it were a folder'],
      ["dangling", `"dangling" is a symlink to nothing ("${dir}/nowhere/x")`],
    ];
    for (const [target, message] of cases) {
      const { code, stdout, stderr } = await cli(["init", target], dir);
      assert.equal(code, 2, stderr);
      assert.equal(stdout, "");
      assert.equal(stderr, `evalpipe: ${message}: nothing was written\n`);
    }
    const names: string[] = [];
    for await (const entry of Deno.readDir(dir)) names.push(entry.name);
    assert.deepEqual(names.sort(), ["afile", "dangling"]);
    assert.equal(await Deno.readTextFile(`${dir}/afile`), "x");
  });
});

Deno.test("cli init without an evalpipe command on PATH says the deno run form that works as printed", async () => {
  await withTempDir(async (dir) => {
    // No folder of PATH holds an evalpipe command.
    const init = await cli(["init", "my evals"], dir, {
      PATH: `${dir}/no-such-folder`,
      INIT_CWD: dir, // the user's shell, even under `deno task test`
    });
    assert.equal(init.code, 0, init.stderr);
    const line = init.stderr.split("\n").find((l) =>
      l.startsWith("Run it with:  ")
    );
    assert.equal(
      line,
      `Run it with:  deno run -A ${CLI} run 'my evals/evalpipe.yaml'`,
    );
    // The line, run by a shell, runs the suite.
    const run = await new Deno.Command("sh", {
      args: ["-c", line!.slice("Run it with:  ".length)],
      cwd: dir,
      env: { NO_COLOR: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(run.code, 0, new TextDecoder().decode(run.stderr));
  });
});
