// `cache merge`: the caches of a run's shards into one, that a run of the
// whole suite replays without a call.

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { fakeLlm } from "../_fake_llm.ts";

Deno.test("cache merge of 3 shards' caches lets the whole suite run without one call", async () => {
  await using server = fakeLlm();
  await withTempDir(async (dir) => {
    const lines = Array.from(
      { length: 15 },
      (_, i) => JSON.stringify({ input: `q${i}`, expected: `echo: q${i}` }),
    );
    await Deno.writeTextFile(`${dir}/cases.jsonl`, lines.join("\n") + "\n");
    const config = `${dir}/suite.yaml`;
    await Deno.writeTextFile(
      config,
      `dataset: cases.jsonl\ntarget: { type: openai, base_url: "${server.baseUrl}", model: m }\nscorers: [{ type: exact_match }]\n`,
    );
    for (const k of [1, 2, 3]) {
      const r = await cli(
        [
          "run",
          config,
          "--shard",
          `${k}/3`,
          "--cache-dir",
          `${dir}/cache-${k}`,
        ],
        dir,
      );
      assert.equal(r.code, 0, r.stderr);
    }
    assert.equal(server.count, 15);
    // A torn last line, as a shard killed mid-write leaves.
    const [pack] = [...Deno.readDirSync(`${dir}/cache-1`)].map((e) => e.name);
    await Deno.writeTextFile(`${dir}/cache-1/${pack}`, '{"key":"ab', {
      append: true,
    });
    const merged = await cli(
      [
        "cache",
        "merge",
        ...[1, 2, 3].map((k) => `${dir}/cache-${k}`),
        "--into",
        `${dir}/all`,
      ],
      dir,
    );
    assert.equal(merged.code, 0, merged.stderr);
    assert.match(
      merged.stderr,
      /15 answers from 3 folders .*1 torn or corrupt entries left out/,
    );
    const replay = await cli(["run", config, "--cache-dir", `${dir}/all`], dir);
    assert.equal(replay.code, 0, replay.stderr);
    assert.match(replay.stderr, /target cache: 15 hits, 0 calls/);
    assert.equal(server.count, 15);
    const usage = await cli(["cache", "merge", `${dir}/all`], dir);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /needs --into DIR/);
    const missing = await cli([
      "cache",
      "merge",
      `${dir}/nope`,
      "--into",
      `${dir}/x`,
    ], dir);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /Cannot read cache ".*nope"/);
  });
});
