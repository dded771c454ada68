/**
 * One reader of the RunRecord format: `readRunRecord`, `parseRunRecord` and
 * `visitRunRecord` keep, drop and refuse the same lines, whether the record is
 * laid out as evalpipe writes it or edited by hand.
 */

import assert from "node:assert/strict";
import {
  parseRunRecord,
  readRunRecord,
  type RunRecord,
  RunRecordError,
  RunRecordWriter,
  visitRunRecord,
} from "../../src/record/mod.ts";
import { errored, type Score, scored } from "../../src/score/mod.ts";
import type { Unit } from "../../src/dataset/mod.ts";
import { recordHeader } from "./_header.ts";

const HEADER = recordHeader();

/** A finished record of `n` units, two Scores each, and one line of Scores alone. */
async function recordText(n: number): Promise<string> {
  let text = "";
  const dest = {
    write: (p: Uint8Array) => (
      text += new TextDecoder().decode(p), Promise.resolve(p.length)
    ),
  };
  const writer = new RunRecordWriter(dest, HEADER);
  for (let i = 1; i <= n; i++) {
    const ids = { example_id: `d#${i}`, unit_id: `d#${i}` };
    await writer.addUnit(
      { ...ids, epoch: 1, input: `q${i}`, output: `a${i}` },
      [
        scored("m", i % 2, ids),
        errored("n", "scorer error: boom", { ...ids, code: "scorer.timeout" }),
      ],
    );
  }
  await writer.add(scored("m", 1, { example_id: "old#1", unit_id: "old#1" }));
  await writer.finish([], true);
  return text;
}

/** What visitRunRecord hands on, line by line, and what it returns. */
async function visited(path: string) {
  const entries: Array<{ scores: readonly Score[]; unit: Unit | undefined }> =
    [];
  const summary = await visitRunRecord(path, {
    entry(scores, unit) {
      entries.push({ scores, unit });
    },
  });
  return { entries, summary };
}

async function withFile(
  text: string,
  fn: (path: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_reader_" });
  try {
    await Deno.writeTextFile(`${dir}/run.json`, text);
    await fn(`${dir}/run.json`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("visitRunRecord hands on an indented record's units with their Scores, as it does the record evalpipe wrote", async () => {
  const text = await recordText(4);
  const indented = JSON.stringify(JSON.parse(text), null, 2);
  await withFile(text, async (path) => {
    const written = await visited(path);
    assert.equal(written.entries.length, 5);
    assert.deepEqual(written.entries[0]!.scores.map((s) => s.metric), [
      "m",
      "n",
    ]);
    await withFile(indented, async (other) => {
      const edited = await visited(other);
      assert.deepEqual(edited.entries, written.entries);
      assert.deepEqual(edited.summary, written.summary);
    });
  });
});

/** What a reader gives: the record, or its error's message. */
async function outcome(read: () => Promise<RunRecord>): Promise<unknown> {
  try {
    const { units, scores, ...summary } = await read();
    return { units, scores, summary };
  } catch (error) {
    if (!(error instanceof RunRecordError)) throw error;
    return error.message;
  }
}

Deno.test("readRunRecord, parseRunRecord and visitRunRecord agree on every damaged record, laid out or indented", async () => {
  const text = await recordText(3);
  const lines = text.split("\n");
  const variants: Record<string, string> = {
    whole: text,
    "torn in a unit": text.slice(0, text.indexOf('"a2"')),
    "torn in the closing line": text.slice(0, text.lastIndexOf("finished_at")),
    "a unit that is not an object": text.replace(
      lines[2]!,
      "[1],",
    ),
    "a unit without a scores list": text.replace(
      /"scores":\[[^\n]*\]\}(,?)\n/,
      '"scores":3}$1\n',
    ),
    "an invalid Score": text.replace('"status":"error"', '"status":"bad"'),
    "a wrong header field": text.replace('"run_id":"r1"', '"run_id":5'),
    "a wrong selection": text.replace(
      '"complete":true',
      '"selection":{"examples":-1,"ran":0,"skipped":0},"complete":true',
    ),
    "a blank line": text.replace("\n", "\n\n"),
  };
  for (const [name, variant] of Object.entries(variants)) {
    const forms = [variant];
    // An indented copy, when the variant parses: read whole, not by lines.
    try {
      forms.push(JSON.stringify(JSON.parse(variant), null, 1));
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
    }
    for (const form of forms) {
      await withFile(form, async (path) => {
        const read = await outcome(() => readRunRecord(path));
        const parsed = await outcome(() =>
          Promise.resolve(parseRunRecord(form, path))
        );
        const gathered = await outcome(async () => {
          const { entries, summary } = await visited(path);
          return {
            ...summary,
            units: entries.flatMap((e) => e.unit === undefined ? [] : [e.unit]),
            scores: entries.flatMap((e) => e.scores),
          };
        });
        assert.deepEqual(parsed, read, name);
        assert.deepEqual(gathered, read, name);
      });
    }
  }
});

Deno.test("visitRunRecord lets what its visitor throws through as it was: a report on a full disk is not a record that cannot be read", async () => {
  const text = await recordText(3);
  const indented = JSON.stringify(JSON.parse(text), null, 2);
  for (const form of [text, indented]) {
    await withFile(form, async (path) => {
      const full = new Deno.errors.NotFound("the report's folder went away");
      for (const where of ["header", "entry", "async entry"] as const) {
        await assert.rejects(
          visitRunRecord(path, {
            header() {
              if (where === "header") throw full;
            },
            entry() {
              if (where === "entry") throw full;
              if (where === "async entry") return Promise.reject(full);
            },
          }),
          (error: unknown) => error === full,
          where,
        );
      }
    });
  }
});
