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
import { shardOf } from "../../src/run/select.ts";

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

Deno.test("run with --filter, --limit or --sample (a shard's or not) and --baseline compares the cases it ran, not the ones it left out", async () => {
  await withTempDir(async (dir) => {
    await suite(dir, false);
    const saved = await cli(
      ["run", "suite.yaml", "--save-baseline", "main"],
      dir,
    );
    assert.equal(saved.code, 0, saved.stderr);
    await suite(dir, true);
    // Two of the six cases, both still right: nothing regressed, nothing
    // removed, nothing unfit.
    const filtered = await cli(
      [
        "run",
        "suite.yaml",
        "--filter",
        "c[12]$",
        "--baseline",
        "main",
        "--record",
        "f.json",
      ],
      dir,
    );
    assert.equal(filtered.code, 0, filtered.stderr);
    assert.doesNotMatch(filtered.stderr, /cannot compare|regressed/);
    const record = JSON.parse(await Deno.readTextFile(join(dir, "f.json")));
    assert.deepEqual(record.baseline.removed_cases, []);
    assert.deepEqual(record.baseline.unfit, []);
    // The case that regressed, alone: it is a regression (exit 1).
    const third = await cli(
      ["run", "suite.yaml", "--filter", "c3$", "--baseline", "main"],
      dir,
    );
    assert.equal(third.code, 1, third.stderr);
    assert.doesNotMatch(third.stderr, /cannot compare/);
    assert.match(third.stderr, /cases\.jsonl#c3\s+exact_match\s+1\/1 → 0\/1/);
    // A sample, compared on what it ran: seed 7 draws c2 and c3, and c3's
    // regression fails the run (exit 1), as --filter's does.
    const sample = await cli(
      [
        "run",
        "suite.yaml",
        "--sample",
        "2",
        "--seed",
        "7",
        "--baseline",
        "main",
      ],
      dir,
    );
    assert.equal(sample.code, 1, sample.stderr);
    assert.doesNotMatch(sample.stderr, /cannot compare/);
    assert.match(sample.stderr, /2 examples ran, 4 skipped/);
    assert.match(sample.stderr, /cases\.jsonl#c3\s+exact_match\s+1\/1 → 0\/1/);
    // The first case in its shard: c1, still right; and a shard's
    // regression would fail the merge, not the shard (exit 0 either way).
    const k = shardOf("cases.jsonl#c1", 2);
    const first = await cli(
      [
        "run",
        "suite.yaml",
        "--shard",
        `${k}/2`,
        "--limit",
        "1",
        "--baseline",
        "main",
      ],
      dir,
    );
    assert.equal(first.code, 0, first.stderr);
    assert.doesNotMatch(first.stderr, /cannot compare|regressed/);
  });
});
