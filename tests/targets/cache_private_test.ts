// The target cache is private by default: its folder is created 0700 and
// its pack files 0600, whatever the umask would allow, through the library
// and through `cli.ts run` with the default folder and with --cache-dir.

import assert from "node:assert/strict";
import { cachedTarget, functionTarget, TargetCache } from "../../mod.ts";
import { cli } from "../_cli.ts";
import { fakeLlm } from "../_fake_llm.ts";
import { withTempDir } from "../_proc.ts";

const modeOf = (path: string) => Deno.statSync(path).mode! & 0o777;

function assertPrivate(dir: string): void {
  assert.equal(modeOf(dir).toString(8), "700", dir);
  const packs = [...Deno.readDirSync(dir)];
  assert.ok(packs.length > 0);
  for (const pack of packs) {
    assert.equal(modeOf(`${dir}/${pack.name}`).toString(8), "600", pack.name);
  }
}

Deno.test("TargetCache creates its folder 0700 and its packs 0600", async () => {
  await withTempDir(async (dir) => {
    const echo = {
      ...functionTarget((c) => `echo ${c.input}`),
      identity: "echo@1",
      request: (c: { input: unknown }) => c.input,
    };
    const cache = new TargetCache(`${dir}/.evalpipe/cache`);
    await cachedTarget(echo, cache).call({ input: "hi" }, {});
    assertPrivate(`${dir}/.evalpipe/cache`);
    assert.equal(modeOf(`${dir}/.evalpipe`).toString(8), "700");
  });
});

Deno.test("cli run creates .evalpipe/cache and --cache-dir private", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm();
    await Deno.writeTextFile(`${dir}/data.jsonl`, '{"input": "q"}\n');
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: data.jsonl
target:
  type: openai
  base_url: ${server.baseUrl}
  model: m
scorers:
  - type: exact_match
`,
    );
    for (const args of [[], ["--cache-dir", "elsewhere/cache"]]) {
      const out = await cli(["run", "suite.yaml", ...args], dir);
      assert.equal(out.code, 0, out.stderr);
    }
    assertPrivate(`${dir}/.evalpipe/cache`);
    assertPrivate(`${dir}/elsewhere/cache`);
  });
});

Deno.test("cli run keeps the cache in the config's folder: the suite run from another folder pays nothing again", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm();
    await Deno.mkdir(`${dir}/evals`);
    await Deno.mkdir(`${dir}/elsewhere`);
    await Deno.writeTextFile(`${dir}/evals/data.jsonl`, '{"input": "q"}\n');
    await Deno.writeTextFile(
      `${dir}/evals/suite.yaml`,
      `dataset: data.jsonl
target:
  type: openai
  base_url: ${server.baseUrl}
  model: m
scorers:
  - type: exact_match
`,
    );
    const first = await cli(["run", "evals/suite.yaml"], dir);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(server.requests.length, 1);
    // The same suite, from another folder: the answer comes from the cache.
    const second = await cli(
      ["run", "../evals/suite.yaml"],
      `${dir}/elsewhere`,
    );
    assert.equal(second.code, 0, second.stderr);
    assert.equal(server.requests.length, 1, "the call was paid for twice");
    assert.match(second.stderr, /target cache: 1 hit, 0 calls/);
    assertPrivate(`${dir}/evals/.evalpipe/cache`);
    assert.deepEqual([...Deno.readDirSync(`${dir}/elsewhere`)], []);
    assert.equal(
      [...Deno.readDirSync(dir)].some((e) => e.name === ".evalpipe"),
      false,
      "no cache in the folder the command ran in",
    );
  });
});
