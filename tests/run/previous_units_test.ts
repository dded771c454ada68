import assert from "node:assert/strict";
import { join } from "node:path";
import {
  ndjsonBatchSink,
  prepareResume,
  previousUnits,
  runSuite,
} from "../../mod.ts";
import { withTempDir } from "../_proc.ts";

Deno.test("previousUnits gives runSuite({ resume }) the earlier record's units: a library resume keeps their inputs and outputs", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      join(dir, "d.jsonl"),
      ["a", "b", "c"].map((id) =>
        JSON.stringify({
          id,
          input: `q${id}`,
          output: `a${id}`,
          expected: `a${id}`,
        })
      ).join("\n") + "\n",
    );
    const config = join(dir, "evalpipe.yaml");
    await Deno.writeTextFile(
      config,
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    const out = join(dir, "scores.ndjson");
    const recordPath = join(dir, "run.json");
    const run = async (options: Record<string, unknown>, append: boolean) => {
      using sink = await Deno.open(out, {
        write: true,
        create: true,
        append,
        truncate: !append,
      });
      using record = await Deno.open(recordPath, {
        write: true,
        create: true,
        truncate: true,
      });
      return await runSuite(config, {
        sink: ndjsonBatchSink(sink),
        outPath: out,
        record,
        ...options,
      });
    };
    await run({}, false);
    // The run stopped after its first unit: one Score in the file.
    const [first] = (await Deno.readTextFile(out)).split("\n");
    await Deno.writeTextFile(out, `${first}\n`);
    const resume = await prepareResume(out);
    assert.equal(resume.scores, 1);
    const units = await previousUnits(recordPath);
    assert.equal(units?.size, 3);
    const summary = await run(
      { resume, previousUnits: units },
      true,
    );
    assert.equal(summary.aggregates[0]?.n, 3);
    const record = JSON.parse(await Deno.readTextFile(recordPath));
    assert.deepEqual(
      record.units.map((
        u: { unit_id: string; input: unknown; output: unknown },
      ) => [u.unit_id, u.input, u.output]).sort(),
      [["d.jsonl#a", "qa", "aa"], ["d.jsonl#b", "qb", "ab"], [
        "d.jsonl#c",
        "qc",
        "ac",
      ]],
    );
  });
});
