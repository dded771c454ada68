/**
 * `run --env-file`: keys read from a file reach the target, never an output.
 */

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { fakeLlm } from "../_fake_llm.ts";
import { withTempDir } from "../_proc.ts";

const KEY = "sk-from-env-file-9f3a";

Deno.test("cli run --env-file reads the key a target needs, and writes it nowhere", async () => {
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
  api_key_env: EVALPIPE_TEST_KEY
scorers:
  - type: exact_match
`,
    );
    await Deno.writeTextFile(
      `${dir}/.env`,
      `# keys for the suite\nexport EVALPIPE_TEST_KEY="${KEY}"\n`,
    );
    const without = await cli(["run", "suite.yaml", "--no-cache"], dir);
    assert.equal(without.code, 2, "no key: a config error before any call");
    assert.match(without.stderr, /EVALPIPE_TEST_KEY/);
    assert.equal(server.requests.length, 0);

    const out = await cli([
      "run",
      "suite.yaml",
      "--env-file",
      ".env",
      "--no-cache",
      "--record",
      "r.json",
    ], dir);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(server.requests.length, 1);
    assert.equal(server.requests[0]!.headers.authorization, `Bearer ${KEY}`);
    const record = await Deno.readTextFile(`${dir}/r.json`);
    for (const text of [out.stdout, out.stderr, record]) {
      assert.ok(!text.includes(KEY), "the key leaked");
    }
    // A variable already set wins over the file.
    const shell = await cli(
      ["run", "suite.yaml", "--env-file", ".env", "--no-cache"],
      dir,
      { EVALPIPE_TEST_KEY: "sk-from-the-shell" },
    );
    assert.equal(shell.code, 0, shell.stderr);
    assert.equal(
      server.requests[1]!.headers.authorization,
      "Bearer sk-from-the-shell",
    );
  });
});

Deno.test("cli run --env-file names a file it cannot read", async () => {
  await withTempDir(async (dir) => {
    const out = await cli(["run", "suite.yaml", "--env-file", "nope.env"], dir);
    assert.equal(out.code, 2);
    assert.equal(
      out.stderr.trim(),
      'evalpipe: Cannot read env file "nope.env": no such file',
    );
  });
});
