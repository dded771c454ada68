/**
 * `readScoresFile` gives a script what `view`, `diff` and `report` read from
 * a results file: a RunRecord's Scores with its metrics' ranges and when its
 * cases passed over their epochs.
 */

import assert from "node:assert/strict";
import { Aggregator, valueRangeOption } from "../../src/aggregate/mod.ts";
import { readScoresFile, RunRecordWriter } from "../../src/record/mod.ts";
import { prepareResume, readMeta } from "../../src/run/mod.ts";
import { scored } from "../../src/score/mod.ts";
import { recordHeader } from "./_header.ts";

/** A finished record of one metric in 0..1, three epochs judged by majority. */
async function writeRecord(path: string, epochs: unknown): Promise<void> {
  using file = await Deno.open(path, { write: true, create: true });
  const writer = new RunRecordWriter(file, {
    ...recordHeader({ config: { epochs } }),
    value_ranges: { m: [0, 1] },
  });
  for (let i = 1; i <= 3; i++) {
    const ids = { example_id: `d#${i}`, unit_id: `d#${i}` };
    await writer.addUnit({ ...ids, input: `q${i}`, output: `a${i}` }, [
      scored("m", i === 1 ? 0.5 : 1, ids),
    ]);
  }
  await writer.finish([], true);
}

Deno.test("readScoresFile gives a RunRecord's value_ranges and epochs requirement, so that its Scores aggregate again as the run did", async () => {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_scores_file_" });
  try {
    await writeRecord(`${dir}/majority.json`, { n: 3, require: "majority" });
    const file = await readScoresFile(`${dir}/majority.json`);
    assert.deepEqual(file.value_ranges, { m: [0, 1] });
    assert.equal(file.require, "majority");
    // Clamped to the range, as the run's own aggregate and `view` are.
    const aggregator = new Aggregator(valueRangeOption(file.value_ranges));
    for (const s of file.scores) aggregator.add(s);
    const [m] = aggregator.results();
    assert.deepEqual(m?.value_range, [0, 1]);
    assert.ok(m!.ci95![1] <= 1, `ci95 ${m?.ci95}`);
    // A record whose config sets no requirement was judged by `all`.
    await writeRecord(`${dir}/plain.json`, 3);
    assert.equal((await readScoresFile(`${dir}/plain.json`)).require, "all");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readMeta gives a script a Scores file's sidecar ranges and requirement, as view reads them, where a line is not a Score", async () => {
  // readScoresFile does not read the sidecar; the reader its JSDoc names
  // must read it beside a file `view` reads (a malformed line is skipped
  // there), which prepareResume refuses whole.
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_scores_file_" });
  try {
    const out = `${dir}/scores.ndjson`;
    const ids = { example_id: "d#1", unit_id: "d#1" };
    await Deno.writeTextFile(
      out,
      `${JSON.stringify(scored("m", 1, ids))}\n{"metric":"m"}\n`,
    );
    await Deno.writeTextFile(
      `${out}.meta.json`,
      JSON.stringify({
        ...recordHeader(),
        settings: { epochs: 1, require: "majority" },
        value_ranges: { m: [0, 1] },
      }),
    );
    const file = await readScoresFile(out);
    assert.equal(file.problems.length, 1);
    await assert.rejects(prepareResume(out));
    const meta = await readMeta(out);
    assert.deepEqual(meta?.value_ranges, { m: [0, 1] });
    assert.equal(meta?.settings?.require, "majority");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
