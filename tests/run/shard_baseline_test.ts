/**
 * A shard compared with a baseline (`run --shard k/n --baseline NAME`) is
 * checked as its gates and its budget are: on the merged run. It compares
 * its own examples of the baseline (the others are other shards', not
 * removed cases), says what regressed, and exits 0; `merge --baseline`
 * compares the whole run and exits 1 on the regression.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

/** Six replayed cases; `wrong` answers the third one wrongly. */
async function suite(dir: string, wrong: boolean): Promise<void> {
  await Deno.writeTextFile(
    join(dir, "suite.yaml"),
    "dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
  );
  const cases = Array.from({ length: 6 }, (_, i) =>
    JSON.stringify({
      id: `c${i + 1}`,
      input: `q${i + 1}`,
      output: wrong && i === 2 ? "no" : `a${i + 1}`,
      expected: `a${i + 1}`,
    }));
  await Deno.writeTextFile(join(dir, "cases.jsonl"), cases.join("\n") + "\n");
}

Deno.test("run --shard with --baseline compares the shard's own cases and exits 0 on a regression; merge --baseline exits 1 on it", async () => {
  await withTempDir(async (dir) => {
    await suite(dir, false);
    const saved = await cli(
      ["run", "suite.yaml", "--save-baseline", "main"],
      dir,
    );
    assert.equal(saved.code, 0, saved.stderr);
    await suite(dir, true);
    const shards = [];
    for (let k = 1; k <= 3; k++) {
      const r = await cli([
        "run",
        "suite.yaml",
        "--shard",
        `${k}/3`,
        "--baseline",
        "main",
        "--record",
        `s${k}.json`,
      ], dir);
      // A shard that exits 1 is retried by its engine: merge checks it.
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stderr, /cannot compare/);
      shards.push(r);
    }
    const regressed = shards.filter((r) =>
      /regressed against baseline/.test(r.stderr)
    );
    assert.equal(regressed.length, 1, shards.map((r) => r.stderr).join("\n"));
    assert.match(
      regressed[0]!.stderr,
      /evalpipe: the baseline is checked on the merged run \(evalpipe merge --baseline\), not on a shard/,
    );
    for (let k = 1; k <= 3; k++) {
      const record = JSON.parse(
        await Deno.readTextFile(join(dir, `s${k}.json`)),
      );
      // The other shards' cases are theirs, not removed ones.
      assert.deepEqual(record.baseline.removed_cases, []);
      assert.deepEqual(record.baseline.unfit, []);
    }
    const records = [1, 2, 3].map((k) => `s${k}.json`);
    const plain = await cli(["merge", ...records], dir);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(
      plain.stderr,
      /the shards were compared with the baseline ".*main\.json", which only merge --baseline checks/,
    );
    const gated = await cli(["merge", ...records, "--baseline", "main"], dir);
    assert.equal(gated.code, 1, gated.stderr);
    assert.match(gated.stderr, /cases\.jsonl#c3\s+exact_match\s+1\/1 → 0\/1/);
  });
});
