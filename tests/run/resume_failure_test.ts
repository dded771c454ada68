/**
 * A resume that fails after it began (its first Scores written) ends its
 * `--out` sidecar as a run that ended does, `complete: false` with its
 * shard's tally, as its record ends: not with the note a resume under a
 * budget writes at its start (which takes the earlier run's `complete` and
 * tally off), nor with the earlier run's `complete: true`.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { cli } from "../_cli.ts";
import { fakeLlm, lastMessage, reply } from "../_fake_llm.ts";
import { withTempDir } from "../_proc.ts";
import { prepareResume, runSuite } from "../../src/run/mod.ts";
import { scoreLine } from "../../src/score/mod.ts";
import type { Score } from "../../src/score/mod.ts";

const IDS = ["a", "b", "c", "d", "e", "f", "g", "h"];

function suite(baseUrl: string, scorers: string, budget: boolean): string {
  return `dataset: data.jsonl
target:
  type: openai
  base_url: ${baseUrl}
  model: bot
  cost: { input_per_1m: 1, output_per_1m: 10 }
scorers: [${scorers}]
concurrency: 1
${budget ? "budget_usd: 1\n" : ""}`;
}

/**
 * A sink that appends each batch of Scores to `path`, as `--out` does, and
 * fails on its second batch, as a script's mirror of them (a database, a
 * network share) can.
 */
function failingSink(path: string): WritableStream<Score[]> {
  let batches = 0;
  return new WritableStream({
    async write(batch) {
      if (++batches === 2) throw new Deno.errors.ConnectionReset("mirror gone");
      await Deno.writeTextFile(path, batch.map(scoreLine).join("\n") + "\n", {
        append: true,
      });
    },
  });
}

for (const budget of [true, false]) {
  Deno.test(
    `runSuite resuming a shard${
      budget ? " under a budget" : ""
    } that fails after it began ends its sidecar complete: false with its tally, and merge says the shard did not finish`,
    async () => {
      await withTempDir(async (dir) => {
        await using server = fakeLlm({
          handler: (request) =>
            reply.ok(lastMessage(request), {
              usage: { prompt_tokens: 1000, completion_tokens: 100 },
            }),
        });
        await Deno.writeTextFile(
          join(dir, "data.jsonl"),
          IDS.map((id) =>
            JSON.stringify({ id, input: id, expected: id }) + "\n"
          )
            .join(""),
        );
        await Deno.writeTextFile(
          join(dir, "suite.yaml"),
          suite(server.baseUrl, "{ type: exact_match }", budget),
        );
        for (const k of [1, 2]) {
          const run = await cli(
            [
              "run",
              "suite.yaml",
              "--shard",
              `${k}/2`,
              "--out",
              `s${k}.ndjson`,
              "--no-cache",
            ],
            dir,
          );
          assert.equal(run.code, 0, run.stderr);
        }
        const before = JSON.parse(
          await Deno.readTextFile(join(dir, "s1.ndjson.meta.json")),
        );
        assert.equal(before.complete, true);
        // A scorer is added; the shard resumes with --force to score every
        // unit with it, and fails after its first unit.
        await Deno.writeTextFile(
          join(dir, "suite.yaml"),
          suite(
            server.baseUrl,
            "{ type: exact_match }, { type: contains }",
            budget,
          ),
        );
        const out = join(dir, "s1.ndjson");
        const failed = await runSuite(join(dir, "suite.yaml"), {
          sink: failingSink(out),
          outPath: out,
          resume: await prepareResume(out),
          force: true,
          shard: { index: 1, count: 2 },
          cacheDir: null,
        }).then(() => undefined, (error) => error);
        assert.ok(
          failed instanceof Deno.errors.ConnectionReset,
          String(failed),
        );
        const meta = JSON.parse(
          await Deno.readTextFile(join(dir, "s1.ndjson.meta.json")),
        );
        assert.equal(meta.complete, false, JSON.stringify(meta));
        assert.ok(meta.selection?.order !== undefined, JSON.stringify(meta));
        assert.equal(meta.run_id, before.run_id);
        // What the shard's runs spent, all of it noted: the resume's first
        // call too ($0.002 a call).
        if (budget) assert.ok(meta.budget?.spent_usd > 0, JSON.stringify(meta));
        const merge = await cli(["merge", "s1.ndjson", "s2.ndjson"], dir);
        assert.equal(merge.code, 2, merge.stderr);
        assert.match(
          merge.stderr,
          /"s1\.ndjson" \(shard 1\/2\) did not finish: resume it \(run --resume\) and merge again/,
        );
      });
    },
  );
}
