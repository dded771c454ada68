/**
 * Resume resumes the same run (issue 18, item 9): the file's metadata holds
 * the settings that shape its Scores, a resume with others is refused naming
 * them, and a config that changed only its concurrency is the same suite.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

async function suite(dir: string, extra = ""): Promise<void> {
  await Deno.writeTextFile(
    join(dir, "suite.yaml"),
    `dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n${extra}`,
  );
  const cases = Array.from(
    { length: 4 },
    (_, i) => JSON.stringify({ input: `q${i}`, output: "a", expected: "a" }),
  );
  await Deno.writeTextFile(join(dir, "cases.jsonl"), cases.join("\n") + "\n");
}

/** Drops the last line of a Scores file, as an interrupted run leaves it. */
async function cutLast(path: string): Promise<void> {
  const lines = (await Deno.readTextFile(path)).split("\n").filter((l) => l);
  await Deno.writeTextFile(path, lines.slice(0, -1).join("\n") + "\n");
}

Deno.test("run --resume refuses a file started with other epochs, naming them, even with --force", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    const first = await cli(
      ["run", "suite.yaml", "--epochs", "5", "--out", "s.ndjson"],
      dir,
    );
    assert.equal(first.code, 0, first.stderr);
    const meta = JSON.parse(
      await Deno.readTextFile(join(dir, "s.ndjson.meta.json")),
    );
    assert.deepEqual(meta.settings, { epochs: 5, require: "all" });
    await cutLast(join(dir, "s.ndjson"));
    const before = await Deno.readTextFile(join(dir, "s.ndjson"));
    for (const force of [[], ["--force"]]) {
      const again = await cli(
        ["run", "suite.yaml", "--out", "s.ndjson", "--resume", ...force],
        dir,
      );
      assert.equal(again.code, 2, again.stderr);
      assert.match(
        again.stderr,
        /"s\.ndjson" was started with epochs 5, this run has epochs 1: resume with --epochs 5/,
      );
      // Nothing was appended: the file still holds one run's Scores.
      assert.equal(await Deno.readTextFile(join(dir, "s.ndjson")), before);
    }
    const right = await cli(
      ["run", "suite.yaml", "--epochs", "5", "--out", "s.ndjson", "--resume"],
      dir,
    );
    assert.equal(right.code, 0, right.stderr);
    const units = (await Deno.readTextFile(join(dir, "s.ndjson")))
      .split("\n").filter((l) => l).map((l) => JSON.parse(l).unit_id);
    assert.equal(units.length, 20);
    assert.ok(units.every((u: string) => /@[1-5]$/.test(u)), units.join());
  });
});

Deno.test("run --resume takes a config that changed only its concurrency (or a comment) as the same suite", async () => {
  await withTempDir(async (dir) => {
    await suite(dir, "concurrency: 2\n");
    const first = await cli(["run", "suite.yaml", "--out", "s.ndjson"], dir);
    assert.equal(first.code, 0, first.stderr);
    await cutLast(join(dir, "s.ndjson"));
    await suite(dir, "# faster now\nconcurrency: 16\nmax_processes: 8\n");
    const again = await cli(
      ["run", "suite.yaml", "--out", "s.ndjson", "--resume"],
      dir,
    );
    assert.equal(again.code, 0, again.stderr);
    // A change that shapes the Scores still counts.
    await cutLast(join(dir, "s.ndjson"));
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      "dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match, ignore_case: true }]\n",
    );
    const changed = await cli(
      ["run", "suite.yaml", "--out", "s.ndjson", "--resume"],
      dir,
    );
    assert.equal(changed.code, 2);
    assert.match(
      changed.stderr,
      /the config changed since "s\.ndjson" was started/,
    );
  });
});
