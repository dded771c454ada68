/**
 * A `ByteWriter` of a script's own whose `write` resolves to nothing (as a
 * wrapper of a Node stream does) is accepted by the type checker and gets
 * every byte: this file does not compile where `write` must resolve to a
 * count.
 */

import assert from "node:assert/strict";
import { createWriteStream } from "node:fs";
import { type ByteWriter, ndjsonSink } from "../../src/io/mod.ts";
import { RunRecordWriter } from "../../src/record/mod.ts";
import { scored, scoreLine } from "../../src/score/mod.ts";
import { readRunRecord } from "../../src/record/mod.ts";
import { recordHeader } from "../record/_header.ts";

/** A file written through a Node stream, as a script might wrap one. */
function nodeFile(path: string): ByteWriter & { close(): Promise<void> } {
  const stream = createWriteStream(path);
  return {
    write: (p: Uint8Array): Promise<void> =>
      new Promise<void>((resolve, reject) =>
        stream.write(p, (error) => error ? reject(error) : resolve())
      ),
    close: () => new Promise<void>((resolve) => stream.end(resolve)),
  };
}

Deno.test("ndjsonSink writes every line to a ByteWriter whose write resolves to nothing", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const dest = nodeFile(`${dir}/scores.ndjson`);
    const scores = Array.from(
      { length: 3000 },
      (_, i) => scored("m", i % 2, { example_id: `d#${i + 1}` }),
    );
    await ReadableStream.from(scores).pipeTo(
      ndjsonSink(dest, { stringify: scoreLine, flushChars: 256 }),
    );
    await dest.close();
    assert.equal(
      await Deno.readTextFile(`${dir}/scores.ndjson`),
      scores.map((s) => scoreLine(s) + "\n").join(""),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("RunRecordWriter writes a whole record to a ByteWriter whose write resolves to nothing", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const dest = nodeFile(`${dir}/run.json`);
    const writer = new RunRecordWriter(dest, recordHeader());
    for (let i = 1; i <= 500; i++) {
      const id = `d#${i}`;
      await writer.addUnit(
        { example_id: id, unit_id: id, epoch: 1, input: "q", output: "a" },
        [scored("m", 1, { example_id: id, unit_id: id })],
      );
    }
    await writer.finish([], true);
    await dest.close();
    const record = await readRunRecord(`${dir}/run.json`);
    assert.equal(record.complete, true);
    assert.equal(record.units.length, 500);
    assert.equal(record.scores.length, 500);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
