// What runSuite tells its `progress` observer: the total, each unit that
// starts, is skipped on a resume or is done; and countExamples counts a
// dataset as the loader reads it.

import assert from "node:assert/strict";
import {
  prepareResume,
  type RunProgress,
  runSuite,
} from "../../src/run/mod.ts";
import { countExamples } from "../../src/run/progress.ts";
import { ndjsonBatchSink } from "../../src/io/mod.ts";
import { loadDataset } from "../../src/dataset/mod.ts";
import type { Score } from "../../src/score/mod.ts";
import { withTempDir } from "../_proc.ts";

interface Seen {
  totals: number[];
  started: number;
  skipped: number;
  units: string[];
}

function observer(): { progress: RunProgress; seen: Seen } {
  const seen: Seen = { totals: [], started: 0, skipped: 0, units: [] };
  return {
    seen,
    progress: {
      total: (units) => void seen.totals.push(units),
      start: (units) => void (seen.started += units),
      skip: (units) => void (seen.skipped += units),
      done: (scores: readonly Score[]) => {
        for (const s of scores) {
          if (seen.units.at(-1) !== s.unit_id) seen.units.push(s.unit_id!);
        }
      },
    },
  };
}

const SUITE =
  "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }, { type: contains }]\n";

// Four cases, a blank line, and a malformed record.
const DATA = '{"input":"a","output":"x","expected":"x"}\n\n' +
  '{"input":"b","output":"y","expected":"x"}\nnot json\n' +
  '  \n{"input":"c","output":"x","expected":"x"}\n{"input":"d","output":"x"}\n';

Deno.test("runSuite tells progress the total, each start and each unit done, malformed records included", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/s.yaml`, SUITE);
    await Deno.writeTextFile(`${dir}/d.jsonl`, DATA);
    const { progress, seen } = observer();
    const summary = await runSuite(`${dir}/s.yaml`, {
      sink: new WritableStream(),
      epochs: 2,
      progress,
    });
    assert.equal(summary.scores, 20);
    assert.deepEqual(seen.totals, [10]); // 5 examples, 2 epochs
    assert.equal(seen.started, 10);
    assert.equal(seen.skipped, 0);
    assert.equal(seen.units.length, 10);
    assert.equal(new Set(seen.units).size, 10);
  });
});

Deno.test("runSuite calls a progress observer's methods on it: one made by a class keeps its this", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/s.yaml`, SUITE);
    await Deno.writeTextFile(`${dir}/d.jsonl`, DATA);
    class Counts implements RunProgress {
      started = 0;
      ended = 0;
      start(units: number) {
        this.started += units;
      }
      end(units: number) {
        this.ended += units;
      }
    }
    const progress = new Counts();
    const scores: Score[] = [];
    await runSuite(`${dir}/s.yaml`, {
      sink: new WritableStream({
        write: (batch) => void scores.push(...batch),
      }),
      progress,
    });
    // The four cases' calls, and the malformed record's unit.
    assert.deepEqual([progress.started, progress.ended], [5, 5]);
    assert.deepEqual(
      scores.filter((s) => s.status === "error").map((s) => s.reason),
      [],
    );
  });
});

Deno.test("runSuite tells progress the units a resume skips, and counts them in the total", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/s.yaml`, SUITE);
    await Deno.writeTextFile(`${dir}/d.jsonl`, DATA);
    let text = "";
    const dest = {
      write: (p: Uint8Array) => (
        text += new TextDecoder().decode(p), Promise.resolve(p.length)
      ),
    };
    await runSuite(`${dir}/s.yaml`, {
      sink: ndjsonBatchSink(dest),
      outPath: `${dir}/out.ndjson`,
    });
    // Keep the first two units' Scores (four lines), as an interrupted run would.
    const lines = text.split("\n").slice(0, 4);
    await Deno.writeTextFile(`${dir}/out.ndjson`, lines.join("\n") + "\n");
    const plan = await prepareResume(`${dir}/out.ndjson`);
    const { progress, seen } = observer();
    await runSuite(`${dir}/s.yaml`, {
      sink: new WritableStream(),
      outPath: `${dir}/out.ndjson`,
      resume: plan,
      progress,
    });
    assert.deepEqual(seen.totals, [5]);
    assert.equal(seen.skipped, 2);
    assert.equal(seen.started, 3);
    assert.equal(seen.units.length, 3);
  });
});

Deno.test("runSuite tells no total for a dataset on stdin", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      "dataset: '-'\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    const { progress, seen } = observer();
    await runSuite(`${dir}/s.yaml`, {
      sink: new WritableStream(),
      stdin: ReadableStream.from([new TextEncoder().encode(DATA)]),
      progress,
    });
    assert.deepEqual(seen.totals, []);
    assert.equal(seen.started, 5);
    assert.equal(seen.units.length, 5);
  });
});

Deno.test("countExamples counts what the loader makes, in every format", async () => {
  await withTempDir(async (dir) => {
    const files: Record<string, string> = {
      "d.jsonl": DATA + "\u3000\n" + '{"input":"e"}', // a wide space is blank too
      "d.json": JSON.stringify([{ input: "a" }, { input: "b" }, 3]),
      "d.yaml": "- input: a\n- input: b\n- input: c\n",
      "d.csv": "input,expected\na,1\nb,2\n",
    };
    for (const [name, text] of Object.entries(files)) {
      await Deno.writeTextFile(`${dir}/${name}`, text);
      const format = name.split(".")[1] as "jsonl" | "json" | "yaml" | "csv";
      const loaded =
        (await Array.fromAsync(await loadDataset(`${dir}/${name}`)))
          .length;
      assert.equal(
        await countExamples(`${dir}/${name}`, format, () => false),
        loaded,
        name,
      );
    }
    assert.equal(
      await countExamples(`${dir}/d.jsonl`, "jsonl", () => true),
      undefined,
    );
    assert.equal(
      await countExamples(`${dir}/none.jsonl`, "jsonl", () => false),
      undefined,
    );
  });
});
