/**
 * readUnitBatches, the batch form of readUnits that `score` reads stdin
 * with: the same units, malformed lines and line numbers, a batch per read.
 */

import assert from "node:assert/strict";
import { type MalformedLine, readUnitBatches, readUnits } from "../../mod.ts";

const encoder = new TextEncoder();

const LINES = [
  '{"input":"q1","output":"a","expected":{"b":1,"a":[true]}}',
  "",
  '{"id":"k","input":"q2","output":"a"}',
  "not json",
  '{"input":1,"output":"a","unit_id":"u#9"}',
  "   ",
  '{"example_id":"e#1","unit_id":"e#1@2","input":"q3","output":null,"context":["c"]}',
  '{"input":"é ü","output":"ß"}',
];

function bytesOf(lines: string[]): Uint8Array {
  const text = encoder.encode(lines.join("\n") + "\n");
  // An invalid UTF-8 line, then one without a final line break.
  const bad = new Uint8Array([0xff, 0xfe, 10]);
  const last = encoder.encode('{"input":"q4","output":"a"}');
  const all = new Uint8Array(text.length + bad.length + last.length);
  all.set(text);
  all.set(bad, text.length);
  all.set(last, text.length + bad.length);
  return all;
}

function chunksOf(bytes: Uint8Array, size: number): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) {
    chunks.push(bytes.slice(i, i + size));
  }
  return chunks;
}

Deno.test("readUnitBatches gives readUnits' units and malformed lines, whatever the chunks", async () => {
  const bytes = bytesOf(LINES);
  const wantMalformed: MalformedLine[] = [];
  const want = await Array.fromAsync(
    readUnits(
      ReadableStream.from([bytes]),
      "stdin",
      (m) => wantMalformed.push(m),
    ),
  );
  assert.equal(want.length, 8);
  assert.equal(wantMalformed.length, 4);
  for (const size of [1, 7, 64, bytes.length]) {
    const malformed: MalformedLine[] = [];
    const batches = await Array.fromAsync(
      readUnitBatches(
        ReadableStream.from(chunksOf(bytes, size)),
        "stdin",
        (m) => malformed.push(m),
      ),
    );
    assert.deepEqual(batches.flat(), want, `chunks of ${size} bytes`);
    assert.deepEqual(malformed, wantMalformed, `chunks of ${size} bytes`);
    assert.ok(batches.every((b) => b.length > 0), "no empty batch");
  }
});

Deno.test("readUnitBatches gives the units of one read as one batch", async () => {
  const lines = Array.from(
    { length: 100 },
    (_, i) => JSON.stringify({ input: `q${i}`, output: "a" }),
  );
  const batches = await Array.fromAsync(
    readUnitBatches(
      ReadableStream.from([encoder.encode(lines.join("\n") + "\n")]),
      "stdin",
      () => {
        throw new Error("no line is malformed");
      },
    ),
  );
  assert.equal(batches.length, 1);
  assert.deepEqual(
    batches[0]!.map((u) => u.unit_id),
    lines.map((_, i) => `stdin#${i + 1}`),
  );
});

Deno.test("a unit record with an epoch past the first and no unit_id is named <example_id>@<epoch>, as a run names it", async () => {
  const lines = [
    '{"example_id":"d#1","epoch":1,"input":"q","output":"a"}',
    '{"example_id":"d#1","epoch":2,"input":"q","output":"a"}',
    '{"id":"k","epoch":3,"input":"q","output":"a"}',
    '{"example_id":"d#2","epoch":2,"unit_id":"own","input":"q","output":"a"}',
  ];
  const bad: MalformedLine[] = [];
  const units = await Array.fromAsync(
    readUnits(
      ReadableStream.from([encoder.encode(lines.join("\n") + "\n")]),
      "stdin",
      (m) => bad.push(m),
    ),
  );
  assert.deepEqual(bad, []);
  assert.deepEqual(units.map((u) => u.unit_id), [
    "d#1",
    "d#1@2",
    "stdin#k@3",
    "own",
  ]);
});

Deno.test("readUnits and readUnitBatches refuse a unit_id read before, naming where it was first", async () => {
  const lines = [
    '{"unit_id":"u","input":"q","output":"a"}',
    '{"unit_id":"u","input":"q","output":"b"}',
  ];
  const bytes = encoder.encode(lines.join("\n") + "\n");
  const forms = [
    (onBad: (m: MalformedLine) => void) =>
      Array.fromAsync(readUnits(ReadableStream.from([bytes]), "stdin", onBad)),
    async (onBad: (m: MalformedLine) => void) =>
      (await Array.fromAsync(
        readUnitBatches(ReadableStream.from([bytes]), "stdin", onBad),
      )).flat(),
  ];
  for (const read of forms) {
    const bad: MalformedLine[] = [];
    const units = await read((m) => bad.push(m));
    assert.deepEqual(units.map((u) => [u.unit_id, u.invalid]), [
      ["u", undefined],
      [
        "stdin#line-2",
        'Duplicate unit_id "u" (first at stdin line 1): unit ids must be unique',
      ],
    ]);
    assert.deepEqual(bad.map((m) => m.line), [2]);
  }
});

Deno.test("readUnits refuses a unit_id read before in another Unicode form", async () => {
  const lines = [
    '{"unit_id":"caf\\u00e9","input":"q","output":"a"}',
    '{"unit_id":"cafe\\u0301","input":"q","output":"b"}',
  ];
  const bytes = encoder.encode(lines.join("\n") + "\n");
  const bad: MalformedLine[] = [];
  const units = await Array.fromAsync(
    readUnits(ReadableStream.from([bytes]), "stdin", (m) => bad.push(m)),
  );
  assert.deepEqual(units.map((u) => [u.unit_id, u.invalid]), [
    ["caf\u00e9", undefined],
    [
      "stdin#line-2",
      'Duplicate unit_id "cafe\u0301" (first at stdin line 1): unit ids must be unique',
    ],
  ]);
  assert.deepEqual(bad.map((m) => m.line), [2]);
});

Deno.test("readUnits refuses an id that is neither a string nor a number, as a dataset does, naming the field", async () => {
  const lines = [
    '{"id":2,"input":"q","output":"a"}',
    '{"id":false,"input":"q","output":"a"}',
    '{"id":"","input":"q","output":"a"}',
    // An id that names nothing (example_id does) is left alone.
    '{"id":null,"example_id":"e","input":"q","output":"a"}',
  ];
  const bytes = encoder.encode(lines.join("\n") + "\n");
  const bad: MalformedLine[] = [];
  const units = await Array.fromAsync(
    readUnits(ReadableStream.from([bytes]), "stdin", (m) => bad.push(m)),
  );
  assert.deepEqual(units.map((u) => [u.unit_id, u.invalid]), [
    ["stdin#2", undefined],
    ["stdin#line-2", '"id" must be a string or a number, not a boolean'],
    ["stdin#3", '"id" must not be empty'],
    ["e", undefined],
  ]);
  assert.deepEqual(bad.map((m) => [m.line, m.message]), [
    [2, '"id" must be a string or a number, not a boolean'],
    [3, '"id" must not be empty'],
  ]);
});
