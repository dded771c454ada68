// `run --baseline` judges a case over its epochs by the run's own
// `epochs.require`, `all` when its config sets none (as the README has it,
// and as its record and sidecar say), not by the require the baseline was
// saved with.

import assert from "node:assert/strict";
import { cli, mergeShards } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { parseRunRecord } from "../../src/record/run_record.ts";

// The second call for "a" answers wrong: "a" passes 2 of its 3 epochs.
const FLAKY = `input=$(cat)
if [ "$input" = a ]; then
  n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > count
  if [ "$n" = 2 ]; then printf wrong; exit 0; fi
fi
printf '%s' "$input"
`;

function suite(cmd: string, epochs: string): string {
  return `dataset: data.jsonl
target: { type: subprocess, cmd: "${cmd}", stdin: text }
scorers: [{ type: exact_match }]
epochs: ${epochs}
concurrency: 1
`;
}

Deno.test("run --baseline and merge --baseline of records without epochs.require judge cases by all, as the record says, not by the baseline's majority", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/flaky.sh`, FLAKY);
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      ["a", "b"].map((id) =>
        JSON.stringify({ id, input: id, expected: id }) + "\n"
      ).join(""),
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      suite("sh flaky.sh", "{ n: 3, require: majority }"),
    );
    const saved = await cli(
      ["run", "suite.yaml", "--save-baseline", "main"],
      dir,
    );
    assert.equal(saved.code, 0, saved.stderr);
    // Now every epoch passes, and the config sets no require: all.
    await Deno.writeTextFile(`${dir}/suite.yaml`, suite("cat", "3"));
    const now = await cli(
      ["run", "suite.yaml", "--baseline", "main", "--record", "r.json"],
      dir,
    );
    assert.equal(now.code, 0, now.stderr);
    const record = parseRunRecord(
      await Deno.readTextFile(`${dir}/r.json`),
      "r.json",
    );
    assert.deepEqual(record.config.epochs, 3);
    // Under all, "a" failed in the baseline (2 of 3) and passes now: fixed,
    // not flaky as majority (which passed it there) would have it.
    assert.deepEqual(
      record.baseline?.fixed.map((c) => [c.case, c.baseline, c.now]),
      [["data.jsonl#a", [2, 3], [3, 3]]],
    );
    assert.deepEqual(record.baseline?.flaky, []);
    // The same run as two shards' records, merged and compared: the same.
    const merged = await mergeShards(dir, "suite.yaml", [
      "--baseline",
      "main",
      "--record",
      "m.json",
    ]);
    assert.equal(merged.code, 0, merged.stderr);
    const mergedRecord = parseRunRecord(
      await Deno.readTextFile(`${dir}/m.json`),
      "m.json",
    );
    assert.deepEqual(
      mergedRecord.baseline?.fixed.map((c) => c.case),
      ["data.jsonl#a"],
    );
  });
});
