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

Deno.test("previousUnits names the record as the caller gave it, not run's --record flag", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      join(dir, "d.jsonl"),
      '{"input": "q", "output": "a", "expected": "a"}\n'.repeat(2),
    );
    const config = join(dir, "evalpipe.yaml");
    await Deno.writeTextFile(
      config,
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    const path = join(dir, "run.json");
    {
      using record = await Deno.open(path, { write: true, create: true });
      await runSuite(config, {
        sink: new WritableStream(),
        record,
      });
    }
    // Its first unit's line damaged, with lines after it.
    const lines = (await Deno.readTextFile(path)).split("\n");
    lines[1] = lines[1]!.replace('"output":"a"', '"output":NaN');
    await Deno.writeTextFile(path, lines.join("\n"));
    const damaged = await previousUnits(path).then(
      () => assert.fail("a damaged record was read"),
      (error: Error) => error,
    );
    assert.ok(
      damaged.message.startsWith(
        `Cannot resume into the record ${JSON.stringify(path)} line 2: `,
      ),
      damaged.message,
    );
    assert.doesNotMatch(damaged.message, /--record/);
    // The name a caller gives is the one said.
    const named = await previousUnits(path, { name: "my record" }).then(
      () => assert.fail("a damaged record was read"),
      (error: Error) => error,
    );
    assert.match(named.message, /^Cannot resume into my record line 2: /);
    // One the system will not read: named the same way.
    await Deno.writeTextFile(join(dir, "file"), "");
    const unreadable = await previousUnits(join(dir, "file", "r.json")).then(
      () => assert.fail("a path through a file was read"),
      (error: Error) => error,
    );
    assert.equal(
      unreadable.message,
      `Cannot resume into the record ${
        JSON.stringify(join(dir, "file", "r.json"))
      }: a part of its path is a file, not a folder`,
    );
  });
});
