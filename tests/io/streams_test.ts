import assert from "node:assert/strict";
import { type Line, LineStream } from "../../src/io/line_stream.ts";
import {
  type ByteWriter,
  ndjsonBatchSink,
  NdjsonParseStream,
  ndjsonSink,
} from "../../src/io/ndjson.ts";
import {
  concurrentBatches,
  concurrentFlatMap,
  concurrentMap,
  concurrentMapTasks,
} from "../../src/io/concurrent_map.ts";
import { Later } from "../../src/io/_later.ts";
import { releasesBytes } from "../../src/io/text_writer.ts";
import { stdoutWriter } from "../../src/io/stdout.ts";
import { openOut } from "../../src/io/out_file.ts";
import { namedReads } from "../../src/io/named_reads.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function bytesOf(...parts: (string | number[])[]): Uint8Array {
  const arrays = parts.map((p) =>
    typeof p === "string" ? encoder.encode(p) : new Uint8Array(p)
  );
  const out = new Uint8Array(arrays.reduce((n, a) => n + a.length, 0));
  let offset = 0;
  for (const a of arrays) {
    out.set(a, offset);
    offset += a.length;
  }
  return out;
}

async function linesOf(
  chunks: Uint8Array[],
  maxLineBytes?: number,
): Promise<Line[]> {
  return await Array.fromAsync(
    ReadableStream.from(chunks).pipeThrough(
      new LineStream(maxLineBytes !== undefined ? { maxLineBytes } : {}),
    ),
  );
}

/** Resolves after the event loop has turned `n` times. */
async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 0));
}

/** A promise with its resolve function, to hold a call until released. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

// --- LineStream --------------------------------------------------------------

const SPLIT_INPUT = bytesOf("a\r\nbé\n\n€x\r\n\r\nlast");
const SPLIT_LINES: Line[] = [
  { line: 1, text: "a" },
  { line: 2, text: "bé" },
  { line: 3, text: "" },
  { line: 4, text: "€x" },
  { line: 5, text: "" },
  { line: 6, text: "last" },
];

Deno.test("LineStream gives the same lines whatever the chunk boundaries", async () => {
  const n = SPLIT_INPUT.length;
  assert.deepEqual(await linesOf([SPLIT_INPUT]), SPLIT_LINES);
  // Every split into two and three chunks, empty chunks included: this cuts
  // through "é" and "€" (multibyte UTF-8) and between "\r" and "\n".
  for (let i = 0; i <= n; i++) {
    assert.deepEqual(
      await linesOf([SPLIT_INPUT.slice(0, i), SPLIT_INPUT.slice(i)]),
      SPLIT_LINES,
      `split at ${i}`,
    );
    for (let j = i; j <= n; j++) {
      assert.deepEqual(
        await linesOf([
          SPLIT_INPUT.slice(0, i),
          SPLIT_INPUT.slice(i, j),
          SPLIT_INPUT.slice(j),
        ]),
        SPLIT_LINES,
        `split at ${i} and ${j}`,
      );
    }
  }
  const oneByOne = [...SPLIT_INPUT].map((b) => new Uint8Array([b]));
  assert.deepEqual(await linesOf(oneByOne), SPLIT_LINES);
});

Deno.test("LineStream is not fooled by a source that reuses its buffer", async () => {
  const text = encoder.encode("abcdefg\nhij");
  const reused = new Uint8Array(3);
  let i = 0;
  const reusing = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i >= text.length) return controller.close();
      const part = text.subarray(i, i + reused.length);
      reused.fill(0x21).set(part);
      i += part.length;
      controller.enqueue(reused.subarray(0, part.length));
    },
  }, { highWaterMark: 0 });
  assert.deepEqual(
    await Array.fromAsync(reusing.pipeThrough(new LineStream())),
    [{ line: 1, text: "abcdefg" }, { line: 2, text: "hij" }],
  );
});

Deno.test("LineStream drops the CR of CRLF but keeps a CR inside a line", async () => {
  assert.deepEqual(await linesOf([encoder.encode("a\rb\r\nc\r\r\n")]), [
    { line: 1, text: "a\rb" },
    { line: 2, text: "c\r" },
  ]);
});

Deno.test("LineStream emits a final line without newline, and no extra line after a final newline", async () => {
  assert.deepEqual(await linesOf([encoder.encode("x\ny")]), [
    { line: 1, text: "x" },
    { line: 2, text: "y" },
  ]);
  assert.deepEqual(await linesOf([encoder.encode("x\ny\n")]), [
    { line: 1, text: "x" },
    { line: 2, text: "y" },
  ]);
  assert.deepEqual(await linesOf([]), []);
  assert.deepEqual(await linesOf([new Uint8Array(0)]), []);
  assert.deepEqual(await linesOf([encoder.encode("\n")]), [
    { line: 1, text: "" },
  ]);
});

Deno.test("LineStream numbers blank lines", async () => {
  assert.deepEqual(await linesOf([encoder.encode("\n\na\n \n\nb\n")]), [
    { line: 1, text: "" },
    { line: 2, text: "" },
    { line: 3, text: "a" },
    { line: 4, text: " " },
    { line: 5, text: "" },
    { line: 6, text: "b" },
  ]);
});

Deno.test("LineStream reports invalid UTF-8 with its line number", async () => {
  const input = bytesOf(
    "ok\n",
    [0x61, 0xff, 0x62],
    "\n",
    "caf",
    [0xc3], // truncated at the end of the line
    "\nfine é\n",
    [0xed, 0xa0, 0x80], // an encoded surrogate
  );
  for (let i = 0; i <= input.length; i++) {
    const lines = await linesOf([input.slice(0, i), input.slice(i)]);
    assert.deepEqual(lines.map((l) => [l.line, l.error]), [
      [1, undefined],
      [2, "Invalid UTF-8"],
      [3, "Invalid UTF-8"],
      [4, undefined],
      [5, "Invalid UTF-8"],
    ], `split at ${i}`);
    assert.equal(lines[1]!.text, "a\ufffdb");
    assert.equal(lines[3]!.text, "fine é");
  }
});

Deno.test("LineStream turns a line over maxLineBytes into an error line and numbers the next ones", async () => {
  const input = encoder.encode(
    "short\n" + "x".repeat(20) + "\nafter\n12345678\n" + "y".repeat(9) +
      "\nend",
  );
  const expected: Line[] = [
    { line: 1, text: "short" },
    { line: 2, text: "", error: "Line is longer than 8 bytes" },
    { line: 3, text: "after" },
    { line: 4, text: "12345678" },
    { line: 5, text: "", error: "Line is longer than 8 bytes" },
    { line: 6, text: "end" },
  ];
  assert.deepEqual(await linesOf([input], 8), expected);
  for (let i = 0; i <= input.length; i++) {
    assert.deepEqual(
      await linesOf([input.slice(0, i), input.slice(i)], 8),
      expected,
      `split at ${i}`,
    );
  }
  const oneByOne = [...input].map((b) => new Uint8Array([b]));
  assert.deepEqual(await linesOf(oneByOne, 8), expected);
});

Deno.test("LineStream reports an oversized final line without newline", async () => {
  const chunks = [encoder.encode("ok\nzzzz"), encoder.encode("zzzzzz")];
  assert.deepEqual(await linesOf(chunks, 8), [
    { line: 1, text: "ok" },
    { line: 2, text: "", error: "Line is longer than 8 bytes" },
  ]);
});

// --- NdjsonParseStream -------------------------------------------------------

Deno.test("NdjsonParseStream parses lines, skips blank ones and reports bad ones by line", async () => {
  const input = bytesOf(
    '{"a":1}\n\n  \n[1,2]\nnot json\n"s"\n',
    [0xff],
    '\n{"b":\n12345678901234567890\n',
  );
  const parsed = await Array.fromAsync(
    ReadableStream.from([input])
      .pipeThrough(new LineStream())
      .pipeThrough(new NdjsonParseStream()),
  );
  assert.deepEqual(parsed.map((p) => p.line), [1, 4, 5, 6, 7, 8, 9]);
  assert.deepEqual(parsed[0], { line: 1, text: '{"a":1}', value: { a: 1 } });
  assert.deepEqual(parsed[1]!.value, [1, 2]);
  assert.match(parsed[2]!.error!, /^Cannot parse JSON: /);
  assert.equal(parsed[2]!.text, "not json");
  assert.equal(parsed[3]!.value, "s");
  assert.equal(parsed[4]!.error, "Invalid UTF-8");
  assert.match(parsed[5]!.error!, /^Cannot parse JSON: /);
  assert.equal(parsed[6]!.text, "12345678901234567890");
  for (const p of parsed) {
    assert.ok((p.error === undefined) !== (p.value === undefined), p.text);
  }
});

Deno.test("NdjsonParseStream passes on LineStream's oversized-line errors", async () => {
  const parsed = await Array.fromAsync(
    ReadableStream.from([encoder.encode('{"long":"xxxxxxxxxx"}\n{"a":1}\n')])
      .pipeThrough(new LineStream({ maxLineBytes: 10 }))
      .pipeThrough(new NdjsonParseStream()),
  );
  assert.deepEqual(parsed, [
    { line: 1, text: "", error: "Line is longer than 10 bytes" },
    { line: 2, text: '{"a":1}', value: { a: 1 } },
  ]);
});

// --- ndjsonSink --------------------------------------------------------------

/** A writer that records each call, writing at most `maxBytes` per call. */
function recorder(maxBytes = Infinity): {
  write(p: Uint8Array): Promise<number>;
  calls: Uint8Array[];
  text(): string;
} {
  const calls: Uint8Array[] = [];
  return {
    calls,
    write(p: Uint8Array) {
      const n = Math.min(p.length, maxBytes);
      calls.push(p.slice(0, n));
      return Promise.resolve(n);
    },
    text() {
      return decoder.decode(bytesOf(...calls.map((c) => [...c])));
    },
  };
}

Deno.test("ndjsonSink writes values in order, one compact JSON line each", async () => {
  const dest = recorder();
  const values = [{ a: 1, b: [1, 2] }, "s", 3, null, [{}], { u: "é\n" }];
  await ReadableStream.from(values).pipeTo(ndjsonSink(dest));
  assert.equal(
    dest.text(),
    values.map((v) => JSON.stringify(v) + "\n").join(""),
  );
});

Deno.test("ndjsonSink coalesces many values into few writes of whole lines", async () => {
  // A destination that, like the operating system, answers on a later turn:
  // what comes while a write is under way goes out in the next one.
  const instant = recorder();
  const dest = {
    calls: instant.calls,
    text: instant.text,
    write: (p: Uint8Array) =>
      new Promise<number>((resolve) =>
        setTimeout(() => resolve(instant.write(p)), 0)
      ),
  };
  const values = Array.from({ length: 2000 }, (_, i) => ({ i }));
  await ReadableStream.from(values).pipeTo(ndjsonSink(dest));
  assert.ok(dest.calls.length < 20, `${dest.calls.length} writes`);
  assert.deepEqual(
    dest.text().split("\n").slice(0, -1).map((l) => JSON.parse(l)),
    values,
  );
  for (const call of dest.calls) assert.equal(call.at(-1), 10);
});

Deno.test("ndjsonSink gives a destination from outside bytes of its own: one that keeps every chunk reads the lines it was given", async () => {
  // A script's collector: it keeps each chunk as it came, no copy. The sink
  // fills its buffer again after each write; the chunks must not change.
  const kept: Uint8Array[] = [];
  const dest: ByteWriter = {
    write: (p) =>
      new Promise<number>((resolve) =>
        setTimeout(() => (kept.push(p), resolve(p.length)), 0)
      ),
  };
  const values = Array.from({ length: 3000 }, (_, i) => ({ i, pad: "x" }));
  await ReadableStream.from(values).pipeTo(
    ndjsonSink(dest, { flushChars: 256 }),
  );
  assert.ok(kept.length > 10, `${kept.length} writes`);
  const text = kept.map((c) => decoder.decode(c)).join("");
  assert.equal(text, values.map((v) => JSON.stringify(v) + "\n").join(""));
  // Each chunk is the size of its text, not of the sink's buffer.
  for (const c of kept) assert.equal(c.byteLength, c.buffer.byteLength);
});

Deno.test("the sink fills its buffer again only for writers of this package that are done with the bytes", async () => {
  assert.equal(releasesBytes(Deno.stdout), true);
  assert.equal(releasesBytes(stdoutWriter()), true);
  assert.equal(
    releasesBytes({ write: (p) => Promise.resolve(p.length) }),
    false,
  );
  const path = await Deno.makeTempFile();
  try {
    const file = await openOut(path);
    assert.equal(releasesBytes(file), true);
    file.close();
  } finally {
    await Deno.remove(path);
  }
});

Deno.test("ndjsonBatchSink writes each batch whole, before any timer fires", async () => {
  const dest = recorder();
  const sink = ndjsonBatchSink(dest);
  const writer = sink.getWriter();
  let timerFired = false;
  const timer = setTimeout(() => (timerFired = true), 0);
  await writer.write([{ a: 1 }, { b: 2 }]);
  await Promise.resolve();
  assert.equal(timerFired, false);
  assert.equal(dest.text(), '{"a":1}\n{"b":2}\n', "written in the same turn");
  await writer.write([{ c: 3 }]);
  await writer.close();
  clearTimeout(timer);
  assert.equal(dest.calls.length, 2, "a write per batch");
  assert.equal(dest.text(), '{"a":1}\n{"b":2}\n{"c":3}\n');
});

Deno.test("ndjson sinks write each value with the stringify they are given", async () => {
  const stringify = (n: number) => `{"n":${n}}`;
  const batched = recorder();
  await ReadableStream.from([[1, 2], [3]]).pipeTo(
    ndjsonBatchSink(batched, { stringify }),
  );
  assert.equal(batched.text(), '{"n":1}\n{"n":2}\n{"n":3}\n');
  const single = recorder();
  await ReadableStream.from([4, 5]).pipeTo(ndjsonSink(single, { stringify }));
  assert.equal(single.text(), '{"n":4}\n{"n":5}\n');
  // A stringify that gives no text is refused, as JSON.stringify's undefined is.
  await assert.rejects(
    ReadableStream.from([[6]]).pipeTo(
      ndjsonBatchSink(recorder(), {
        stringify: () => undefined as unknown as string,
      }),
    ),
    /Cannot write number as NDJSON/,
  );
});

Deno.test("ndjson sinks stop taking values while an earlier write is under way", async () => {
  const line = JSON.stringify("x".repeat(18)) + "\n";
  const flushChars = 100;
  for (const batched of [true, false]) {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const bytes: number[] = [];
    const dest: ByteWriter = {
      async write(p) {
        await gate;
        bytes.push(...p);
        return p.length;
      },
    };
    let taken = 0;
    // Values far smaller than the buffer, each its own batch.
    const source = new ReadableStream<string>({
      pull(controller) {
        if (taken === 500) controller.close();
        else (taken++, controller.enqueue("x".repeat(18)));
      },
    }, { highWaterMark: 0 });
    const done = batched
      ? source.pipeThrough(
        new TransformStream<string, string[]>({
          transform: (v, c) => c.enqueue([v]),
        }),
      ).pipeTo(ndjsonBatchSink(dest, { flushChars }))
      : source.pipeTo(ndjsonSink(dest, { flushChars }));
    await delay(30);
    // The write under way, one queued behind it, and a full buffer.
    assert.ok(
      taken * line.length <= 4 * flushChars,
      `${taken} values taken while the first write hangs`,
    );
    release();
    await done;
    assert.equal(decoder.decode(new Uint8Array(bytes)), line.repeat(500));
  }
});

Deno.test("ndjsonSink writes only whole lines when its buffer fills", async () => {
  const dest = recorder();
  const values = Array.from(
    { length: 500 },
    (_, i) => ({ i, pad: "p".repeat(i % 37) }),
  );
  await ReadableStream.from(values).pipeTo(
    ndjsonSink(dest, { flushChars: 100 }),
  );
  assert.ok(dest.calls.length > 10, `${dest.calls.length} writes`);
  for (const call of dest.calls) {
    assert.equal(call.at(-1), 10, "each write ends a line");
    for (const line of decoder.decode(call).split("\n").slice(0, -1)) {
      JSON.parse(line);
    }
  }
  assert.equal(
    dest.text(),
    values.map((v) => JSON.stringify(v) + "\n").join(""),
  );
});

Deno.test("ndjsonSink finishes a write that the destination takes in pieces", async () => {
  const dest = recorder(3);
  const values = [{ a: "é€" }, { b: 2 }];
  await ReadableStream.from(values).pipeTo(ndjsonSink(dest));
  assert.equal(dest.text(), '{"a":"é€"}\n{"b":2}\n');
});

Deno.test("ndjsonSink writes a lone value without waiting for more", async () => {
  const dest = recorder();
  const writer = ndjsonSink(dest).getWriter();
  await writer.write({ first: true });
  await turns();
  assert.equal(dest.text(), '{"first":true}\n');
  await writer.write({ second: true });
  await writer.close();
  assert.equal(dest.text(), '{"first":true}\n{"second":true}\n');
});

Deno.test("ndjsonSink close flushes what is buffered", async () => {
  const dest = recorder();
  const writer = ndjsonSink(dest).getWriter();
  const writes = [writer.write(1), writer.write({ two: 2 })];
  const closed = writer.close();
  await Promise.all([...writes, closed]);
  assert.equal(dest.text(), '1\n{"two":2}\n');
});

Deno.test("ndjsonSink rejects when its writer fails", async () => {
  const failing: ByteWriter = {
    write: () => Promise.reject(new Error("disk full")),
  };
  // Through close, which flushes.
  await assert.rejects(
    ReadableStream.from([{ a: 1 }]).pipeTo(ndjsonSink(failing)),
    /disk full/,
  );
  // Through a write that fills the buffer.
  await assert.rejects(
    ReadableStream.from([{ a: 1 }, { b: 2 }]).pipeTo(
      ndjsonSink(failing, { flushChars: 1 }),
    ),
    /disk full/,
  );
  // Through a background write, reported by the next write.
  const writer = ndjsonSink(failing).getWriter();
  await writer.write({ a: 1 });
  await turns();
  await assert.rejects(writer.write({ b: 2 }), /disk full/);
  await assert.rejects(writer.closed, /disk full/);
});

// --- concurrentMap -----------------------------------------------------------

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

for (const concurrency of [1, 3, 16]) {
  Deno.test(`concurrentMap keeps input order with random delays at concurrency ${concurrency}`, async () => {
    const items = Array.from({ length: 120 }, (_, i) => i);
    let inFlight = 0;
    let maxInFlight = 0;
    const out = await Array.fromAsync(
      ReadableStream.from(items).pipeThrough(
        concurrentMap(async (n: number) => {
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          await delay(Math.floor(Math.random() * 4));
          inFlight--;
          return n * 2;
        }, { concurrency }),
      ),
    );
    assert.deepEqual(out, items.map((n) => n * 2));
    assert.ok(maxInFlight <= concurrency, `${maxInFlight} in flight`);
    assert.equal(maxInFlight, concurrency, "the pool is used");
    assert.equal(inFlight, 0);
  });

  Deno.test(`concurrentFlatMap keeps input order with random delays at concurrency ${concurrency}`, async () => {
    const items = Array.from({ length: 80 }, (_, i) => i);
    let inFlight = 0;
    let maxInFlight = 0;
    const out = await Array.fromAsync(
      ReadableStream.from(items).pipeThrough(
        concurrentFlatMap(async (n: number) => {
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          await delay(Math.floor(Math.random() * 4));
          inFlight--;
          return Array.from({ length: n % 3 }, (_, k) => `${n}.${k}`);
        }, { concurrency }),
      ),
    );
    assert.deepEqual(
      out,
      items.flatMap((n) =>
        Array.from({ length: n % 3 }, (_, k) => `${n}.${k}`)
      ),
    );
    assert.ok(maxInFlight <= concurrency, `${maxInFlight} in flight`);
  });
}

Deno.test("concurrentMap accepts synchronous functions and an empty stream", async () => {
  assert.deepEqual(
    await Array.fromAsync(
      ReadableStream.from([1, 2, 3]).pipeThrough(
        concurrentMap((n: number) => -n, { concurrency: 2 }),
      ),
    ),
    [-1, -2, -3],
  );
  assert.deepEqual(
    await Array.fromAsync(
      ReadableStream.from<number>([]).pipeThrough(
        concurrentMap((n: number) => n),
      ),
    ),
    [],
  );
});

/** A pull-based source of `total` numbers that counts what was taken from it. */
function countingSource(total: number): {
  stream: ReadableStream<number>;
  pulled: () => number;
  cancelled: () => boolean;
} {
  let next = 0;
  let cancelled = false;
  const stream = new ReadableStream<number>({
    pull(controller) {
      if (next >= total) controller.close();
      else controller.enqueue(next++);
    },
    cancel() {
      cancelled = true;
    },
  }, { highWaterMark: 0 });
  return { stream, pulled: () => next, cancelled: () => cancelled };
}

Deno.test("concurrentMap bounds intake by its window behind a slow first item", async () => {
  for (
    const [concurrency, window] of [[1, 1], [2, 8], [4, 4], [3, undefined]]
  ) {
    const total = 500;
    const bound = window ?? concurrency! * 4;
    const source = countingSource(total);
    const slow = gate();
    const done = Array.fromAsync(
      source.stream.pipeThrough(
        concurrentMap(async (n: number) => {
          if (n === 0) await slow.promise;
          return n;
        }, {
          concurrency: concurrency!,
          ...(window !== undefined ? { window } : {}),
        }),
      ),
    );
    await turns(10);
    // The window's results, plus what waits in the stage's and the pipe's queues.
    assert.ok(source.pulled() >= bound, `pulled ${source.pulled()}`);
    assert.ok(
      source.pulled() <= bound + 3,
      `pulled ${source.pulled()} with window ${bound}`,
    );
    slow.open();
    assert.deepEqual(await done, Array.from({ length: total }, (_, i) => i));
    assert.equal(source.pulled(), total);
  }
});

Deno.test("concurrentMap bounds intake when nobody reads its output", async () => {
  const source = countingSource(10_000);
  const out = source.stream.pipeThrough(
    concurrentMap((n: number) => n, { concurrency: 4 }),
  );
  await turns(10);
  assert.ok(source.pulled() <= 4 * 4 + 4, `pulled ${source.pulled()}`);
  await out.cancel();
  await turns();
  assert.equal(source.cancelled(), true);
});

Deno.test("concurrentMap errors the stream when fn throws", async () => {
  const source = countingSource(1000);
  await assert.rejects(
    Array.fromAsync(
      source.stream.pipeThrough(
        concurrentMap(async (n: number) => {
          await Promise.resolve();
          if (n === 5) throw new RangeError("bad item 5");
          return n;
        }, { concurrency: 3 }),
      ),
    ),
    (error: unknown) =>
      error instanceof RangeError && error.message === "bad item 5",
  );
  await turns();
  assert.ok(source.pulled() < 1000, `pulled ${source.pulled()}`);
  assert.equal(source.cancelled(), true);
});

Deno.test("concurrentFlatMap errors the stream when fn throws synchronously", async () => {
  await assert.rejects(
    Array.fromAsync(
      ReadableStream.from([1, 2, 3]).pipeThrough(
        concurrentFlatMap((n: number) => {
          if (n === 2) throw new Error("sync failure");
          return [n];
        }),
      ),
    ),
    /sync failure/,
  );
});

Deno.test("concurrentMap stops intake when its output is cancelled, without unhandled rejections", async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (event: PromiseRejectionEvent) => {
    unhandled.push(event.reason);
    event.preventDefault();
  };
  globalThis.addEventListener("unhandledrejection", onUnhandled);
  try {
    const source = countingSource(Infinity);
    const held = gate();
    let calls = 0;
    let finished = 0;
    const reader = source.stream.pipeThrough(
      concurrentMap(async (n: number) => {
        calls++;
        if (n >= 5) await held.promise;
        finished++;
        return n;
      }, { concurrency: 4 }),
    ).getReader();
    for (let i = 0; i < 5; i++) {
      assert.deepEqual(await reader.read(), { done: false, value: i });
    }
    await reader.cancel();
    await turns();
    const pulledAtCancel = source.pulled();
    const callsAtCancel = calls;
    assert.equal(source.cancelled(), true);
    // The calls in flight finish into a cancelled stream.
    held.open();
    await turns(10);
    assert.equal(finished, calls);
    assert.equal(source.pulled(), pulledAtCancel);
    assert.equal(calls, callsAtCancel);
    assert.deepEqual(unhandled, []);
  } finally {
    globalThis.removeEventListener("unhandledrejection", onUnhandled);
  }
});

Deno.test("concurrentMap cancelled while a call fails has no unhandled rejections", async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (event: PromiseRejectionEvent) => {
    unhandled.push(event.reason);
    event.preventDefault();
  };
  globalThis.addEventListener("unhandledrejection", onUnhandled);
  try {
    const held = gate();
    const reader = countingSource(100).stream.pipeThrough(
      concurrentMap(async (n: number) => {
        if (n >= 1) {
          await held.promise;
          throw new Error(`late failure ${n}`);
        }
        return n;
      }, { concurrency: 4 }),
    ).getReader();
    assert.deepEqual(await reader.read(), { done: false, value: 0 });
    await reader.cancel();
    held.open();
    await turns(10);
    assert.deepEqual(unhandled, []);
  } finally {
    globalThis.removeEventListener("unhandledrejection", onUnhandled);
  }
});

Deno.test("ndjsonSink refuses a value without JSON text instead of writing 'undefined'", async () => {
  const written: string[] = [];
  const dest = {
    write: (
      p: Uint8Array,
    ) => (written.push(new TextDecoder().decode(p)), Promise.resolve(p.length)),
  };
  await assert.rejects(
    ReadableStream.from([{ a: 1 }, undefined]).pipeTo(ndjsonSink(dest)),
    TypeError,
  );
  assert.ok(!written.join("").includes("undefined"));
});

Deno.test("concurrentMap stops calling fn after a synchronous throw in the same chunk's tasks", async () => {
  let calls = 0;
  const stage = concurrentMapTasks(
    (n: number) => Array.from({ length: n }, (_, i) => i),
    (i: number) => {
      calls++;
      if (i === 2) throw new Error("boom");
      return i;
    },
    { concurrency: 100 },
  );
  await assert.rejects(
    Array.fromAsync(ReadableStream.from([10]).pipeThrough(stage)),
    /boom/,
  );
  assert.equal(calls, 3, "no task starts after the failure");
});

Deno.test("concurrentBatches keeps order when synchronous and asynchronous results mix", async () => {
  for (const concurrency of [1, 2, 8]) {
    // Every third task is slow and asynchronous: the synchronous ones around
    // it must wait for it, and those before it must not.
    const batches = [[0, 1, 2, 3, 4, 5, 6], [7, 8], [9, 10, 11, 12, 13, 14]];
    const out = await Array.fromAsync(
      ReadableStream.from(batches).pipeThrough(
        concurrentBatches(
          (b: number[]) => b,
          (n: number) =>
            n % 3 === 1 ? delay(n % 2 ? 5 : 1).then(() => [n, -n]) : [n, -n],
          { concurrency },
        ),
      ),
    );
    assert.deepEqual(
      out.flat(),
      batches.flat().flatMap((n) => [n, -n]),
      `concurrency ${concurrency}`,
    );
  }
});

Deno.test("concurrentBatches keeps order and its concurrency with results settled as a Later, in any order", async () => {
  for (const concurrency of [1, 3, 8]) {
    // Each task's Later is settled by a timer, later ones often first; every
    // fifth comes settled already, every seventh is a plain array.
    const batches = [[0, 1, 2, 3, 4, 5, 6, 7, 8], [9, 10], [11, 12, 13, 14]];
    let running = 0;
    let most = 0;
    const make = (n: number): readonly number[] => {
      if (n % 7 === 3) return [n, -n];
      const later = new Later<readonly number[]>();
      if (n % 5 === 2) {
        later.settle([n, -n]);
      } else {
        running++;
        most = Math.max(most, running);
        delay((n * 7) % 4).then(() => {
          running--;
          later.settle([n, -n]);
          later.settle([0]); // a second settle is ignored
        });
      }
      // The pool takes a Later where a result goes; its types do not say so.
      return later as unknown as readonly number[];
    };
    const out = await Array.fromAsync(
      ReadableStream.from(batches).pipeThrough(
        concurrentBatches((b: number[]) => b, make, { concurrency }),
      ),
    );
    assert.deepEqual(
      out.flat(),
      batches.flat().flatMap((n) => [n, -n]),
      `concurrency ${concurrency}`,
    );
    assert.ok(most <= concurrency, `${most} at once, ${concurrency} allowed`);
  }
});

Deno.test("concurrentBatches emits a batch of synchronous results larger than its window", async () => {
  const batch = Array.from({ length: 1000 }, (_, i) => i);
  let calls = 0;
  const out = await Array.fromAsync(
    ReadableStream.from([batch, [1000]]).pipeThrough(
      concurrentBatches((b: number[]) => b, (n: number) => {
        calls++;
        return [n];
      }, { concurrency: 2, window: 16 }),
    ),
  );
  assert.deepEqual(out.flat(), [...batch, 1000]);
  assert.equal(calls, 1001);
  // The window holds: no emitted batch is larger than it.
  assert.ok(out.every((b) => b.length <= 16), `${out.map((b) => b.length)}`);
});

Deno.test("concurrentMap lets finished results past a slow one once `unordered` aborts, and keeps order before", async () => {
  const unordered = new AbortController();
  let release!: () => void;
  const slow = new Promise<void>((resolve) => (release = resolve));
  const got: number[] = [];
  const done = ReadableStream.from([1, 2, 3, 4])
    .pipeThrough(concurrentMap(async (n: number) => {
      if (n === 1) await slow;
      return n;
    }, { concurrency: 4, unordered: unordered.signal }))
    .pipeTo(new WritableStream({ write: (n) => void got.push(n) }));
  await delay(20);
  // In order, 2..4 wait behind 1.
  assert.deepEqual(got, []);
  unordered.abort();
  await delay(0);
  assert.deepEqual(got, [2, 3, 4]);
  release();
  await done;
  assert.deepEqual(got, [2, 3, 4, 1]);
});

Deno.test("concurrentBatches on `abandon` emits what is ready, drops what runs, starts nothing more and cancels its input", async () => {
  const abandon = new AbortController();
  let cancelled = false;
  let pulled = 0;
  const source = new ReadableStream<number[]>({
    pull(controller) {
      pulled++;
      controller.enqueue([pulled * 10, pulled * 10 + 1]);
    },
    cancel() {
      cancelled = true;
    },
  });
  const started: number[] = [];
  const never = new Promise<number[]>(() => {});
  let failLater!: (error: Error) => void;
  const failing = new Promise<number[]>((_, reject) => (failLater = reject));
  const got: number[][] = [];
  const done = source
    .pipeThrough(concurrentBatches((b: number[]) => b, (n: number) => {
      started.push(n);
      // 10 hangs, 11 fails after the abandon; the rest answer at once.
      return n === 10 ? never : n === 11 ? failing : Promise.resolve([n]);
    }, { concurrency: 4, window: 4, abandon: abandon.signal }))
    .pipeTo(new WritableStream({ write: (b) => void got.push(b) }));
  await delay(20);
  abandon.abort();
  // The stream ends although 10 never settles, and 11's failure goes unheard.
  failLater(new Error("too late"));
  await done;
  assert.deepEqual(got.flat().sort(), [20, 21]);
  assert.deepEqual(started, [10, 11, 20, 21]);
  assert.equal(cancelled, true);
});

Deno.test("concurrentMap with groups, once unordered, lets a group leave only whole and closed, and holds all behind a group begun in order", async () => {
  type Task = { group: string; name: string; wait?: Promise<void> };
  const gate = () => {
    let open!: () => void;
    const wait = new Promise<void>((resolve) => (open = resolve));
    return { wait, open };
  };
  const run = (
    tasks: Task[],
    unordered: AbortSignal,
    abandon?: AbortSignal,
  ) => {
    const got: string[] = [];
    const done = ReadableStream.from(tasks)
      .pipeThrough(concurrentMap(async (t: Task) => {
        await t.wait;
        return t.name;
      }, {
        concurrency: 8,
        unordered,
        ...(abandon !== undefined ? { abandon } : {}),
        groupOf: (t: Task) => t.group,
      }))
      .pipeTo(new WritableStream({ write: (n) => void got.push(n) }));
    return { got, done };
  };

  // A's first task hangs: B and C leave whole once unordered, A after.
  const a1 = gate();
  const stop1 = new AbortController();
  const one = run([
    { group: "A", name: "a1", wait: a1.wait },
    { group: "A", name: "a2" },
    { group: "B", name: "b1" },
    { group: "B", name: "b2" },
    { group: "C", name: "c1" },
  ], stop1.signal);
  await delay(20);
  assert.deepEqual(one.got, []);
  stop1.abort();
  await delay(20);
  assert.deepEqual(one.got, ["b1", "b2", "c1"]);
  a1.open();
  await one.done;
  assert.deepEqual(one.got, ["b1", "b2", "c1", "a1", "a2"]);

  // a1 left in order, a2 hangs: B waits behind A, to keep A's together.
  const a2 = gate();
  const stop2 = new AbortController();
  const two = run([
    { group: "A", name: "a1" },
    { group: "A", name: "a2", wait: a2.wait },
    { group: "B", name: "b1" },
  ], stop2.signal);
  await delay(20);
  assert.deepEqual(two.got, ["a1"]);
  stop2.abort();
  await delay(20);
  assert.deepEqual(two.got, ["a1"]);
  a2.open();
  await two.done;
  assert.deepEqual(two.got, ["a1", "a2", "b1"]);

  // The same, abandoned while a2 hangs: a2 is dropped, B leaves.
  const stop3 = new AbortController();
  const abandon3 = new AbortController();
  const three = run(
    [
      { group: "A", name: "a1" },
      { group: "A", name: "a2", wait: new Promise(() => {}) },
      { group: "B", name: "b1" },
    ],
    stop3.signal,
    abandon3.signal,
  );
  await delay(20);
  stop3.abort();
  await delay(20);
  assert.deepEqual(three.got, ["a1"]);
  abandon3.abort();
  await three.done;
  assert.deepEqual(three.got, ["a1", "b1"]);
});

Deno.test("namedReads lets go of its input at the end, so the same stdin can be read again in the process", async () => {
  // A second main() (bench:where's warm run) found Deno.stdin.readable
  // locked by the first one's reader.
  const source = ReadableStream.from([new Uint8Array([1, 2])]);
  const bytes = await new Response(namedReads(source, "-")).bytes();
  assert.deepEqual([...bytes], [1, 2]);
  assert.equal(source.locked, false);
});

Deno.test("namedReads checks the first four bytes however the input is cut, and passes every byte on", async () => {
  // A pipe may hand over a byte at a time: a UTF-32 mark split in four.
  const bytes = (list: number[]) =>
    ReadableStream.from(list.map((b) => new Uint8Array([b])));
  const error = await new Response(
    namedReads(bytes([0xff, 0xfe, 0, 0, 0x7b, 0, 0, 0]), "-"),
  ).bytes().then(() => undefined, (e: unknown) => e);
  assert.ok(error instanceof Error);
  assert.match(error.message, /^Cannot read stdin: it is UTF-32 text/);
  for (
    const list of [[], [0x7b], [0x7b, 0x7d, 0x0a], [
      0x7b,
      0x7d,
      0x0a,
      0x7b,
      0x7d,
    ]]
  ) {
    const got = await new Response(namedReads(bytes(list), "-")).bytes();
    assert.deepEqual([...got], list);
  }
});

Deno.test("NdjsonParseStream says a line of an indented document holds no whole value, without JSON.parse's throw", async () => {
  // jq's default output: the lines end in "{", "," or "[" (or ":"), or
  // start with "}" or "]", or are an object's last member, none a value; a
  // throw a line made `aggregate` of 100,000 indented Scores 2.3x slower,
  // and the last two kinds still cost it 1.4 s of its 4.4.
  const text =
    '{\n  "metric": "m",\n  "list": [\n    1\n  ],\n  "last": "x\\": y"\n}\n{"a": 1}\n"s"\n"a:" x\n  ]\n';
  const out = await Array.fromAsync(
    ReadableStream.from([new TextEncoder().encode(text)])
      .pipeThrough(new LineStream())
      .pipeThrough(new NdjsonParseStream()),
  );
  assert.deepEqual(out.map((p) => p.error ?? p.value), [
    'Cannot parse JSON: the line ends with "{" before its value does (one JSON value a line: jq -c writes so)',
    'Cannot parse JSON: the line ends with "," before its value does (one JSON value a line: jq -c writes so)',
    'Cannot parse JSON: the line ends with "[" before its value does (one JSON value a line: jq -c writes so)',
    1,
    'Cannot parse JSON: the line ends with "," before its value does (one JSON value a line: jq -c writes so)',
    'Cannot parse JSON: the line is an object\'s member ("name": value), not a whole value (one JSON value a line: jq -c writes so)',
    'Cannot parse JSON: the line starts with "}", which closes a value begun on an earlier line (one JSON value a line: jq -c writes so)',
    { a: 1 },
    "s",
    // Not a member: JSON.parse's own word.
    "Cannot parse JSON: Unexpected non-whitespace character after JSON at position 5 (line 1 column 6)",
    'Cannot parse JSON: the line starts with "]", which closes a value begun on an earlier line (one JSON value a line: jq -c writes so)',
  ]);
});

Deno.test("NdjsonParseStream skips a line of a form feed, a vertical tab or Unicode spaces as blank", async () => {
  // A page break (^L) between records, as some editors keep them, was a
  // blank line; it must not become a malformed one.
  const parsed = await Array.fromAsync(
    ReadableStream.from([
      encoder.encode('{"a":1}\n\f\n\v\n \f \n\u00a0\n\u3000\t\n{"b":2}\n'),
    ])
      .pipeThrough(new LineStream())
      .pipeThrough(new NdjsonParseStream()),
  );
  assert.deepEqual(parsed, [
    { line: 1, text: '{"a":1}', value: { a: 1 } },
    { line: 7, text: '{"b":2}', value: { b: 2 } },
  ]);
});
