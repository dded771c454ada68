import assert from "node:assert/strict";
import { runMatrixBatches } from "../../src/run/mod.ts";
import type { Target } from "../../src/targets/mod.ts";
import type { Example } from "../../src/dataset/mod.ts";

/** A target that waits `ms` per call and counts its calls in flight. */
function counted(ms: number, other?: { now: number }) {
  const seen = { now: 0, most: 0, calls: 0, beside: 0 };
  const target: Target = {
    async call(c) {
      seen.calls++;
      if ((other?.now ?? 0) > 0) seen.beside++;
      seen.now++;
      seen.most = Math.max(seen.most, seen.now);
      await new Promise((r) => setTimeout(r, ms));
      seen.now--;
      return { output: String(c.input) };
    },
  };
  return { target, seen };
}

const examples = (n: number): Example[] =>
  Array.from({ length: n }, (_, i) => ({
    example_id: `d#${i + 1}`,
    line: i + 1,
    case: { input: `q${i + 1}` },
  }));

Deno.test("runMatrixBatches bounds each target by the concurrency, runs them side by side, keeps input order", async () => {
  const slow = counted(25);
  const fast = counted(2, slow.seen);
  const units = (await Array.fromAsync(
    ReadableStream.from([examples(12)]).pipeThrough(
      runMatrixBatches([
        { name: "fast", target: fast.target },
        { name: "slow", target: slow.target },
      ], { concurrency: 3, epochs: 2 }),
    ),
  )).flat();
  assert.equal(fast.seen.most, 3);
  assert.equal(slow.seen.most, 3);
  assert.equal(units.length, 48);
  assert.deepEqual(units.slice(0, 4).map((u) => u.unit_id), [
    "d#1@1~fast",
    "d#1@2~fast",
    "d#1@1~slow",
    "d#1@2~slow",
  ]);
  assert.ok(units.every((u) => u.unit_id.endsWith(`~${u.target_name}`)));
  // Side by side: fast calls started while slow ones were in flight.
  assert.ok(fast.seen.beside > 0);
});

Deno.test("runMatrixBatches skips units by their matrix id, and takes nothing once stopped", async () => {
  const a = counted(0);
  const b = counted(0);
  const units = (await Array.fromAsync(
    ReadableStream.from([examples(2)]).pipeThrough(
      runMatrixBatches([
        { name: "a", target: a.target },
        { name: "b", target: b.target },
      ], { skip: (id) => id === "d#1~b" }),
    ),
  )).flat();
  assert.deepEqual(units.map((u) => u.unit_id), ["d#1~a", "d#2~a", "d#2~b"]);
  const stopped = (await Array.fromAsync(
    ReadableStream.from([examples(2)]).pipeThrough(
      runMatrixBatches([{ name: "a", target: a.target }], {
        stop: AbortSignal.abort(),
      }),
    ),
  )).flat();
  assert.equal(stopped.length, 0);
});
