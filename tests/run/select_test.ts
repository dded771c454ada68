import assert from "node:assert/strict";
import {
  drawSample,
  parseShard,
  Selection,
  ShardError,
  shardOf,
} from "../../src/run/select.ts";
import type { Example } from "../../src/dataset/case.ts";

const examples = (
  n: number,
  metadata?: (i: number) => Record<string, unknown>,
) =>
  Array.from({ length: n }, (_, i): Example => ({
    example_id: `cases.jsonl#${i + 1}`,
    line: i + 1,
    case: {
      input: `q${i + 1}`,
      ...(metadata !== undefined ? { metadata: metadata(i + 1) } : {}),
    },
  }));

async function select(selection: Selection, all: Example[]): Promise<string[]> {
  const out = await Array.fromAsync(
    ReadableStream.from([all.slice(0, 7), all.slice(7)]).pipeThrough(
      selection.stage(),
    ),
  );
  return out.flat().map((e) => e.example_id);
}

Deno.test("shardOf is SHA-256 of the id: pinned values, the same split on every machine", () => {
  // Pinned: a change here moves examples between shards of runs in flight.
  assert.deepEqual(
    ["cases.jsonl#1", "cases.jsonl#2", "d#x"].map((id) => shardOf(id, 100)),
    [85, 55, 96],
  );
  assert.equal(shardOf("anything", 1), 1);
});

Deno.test("shardOf puts every example in exactly one shard, balanced within 10% at 10^5 ids and 100 shards", () => {
  const counts = new Array(100).fill(0);
  for (let i = 1; i <= 100_000; i++) {
    const k = shardOf(`cases.jsonl#${i}`, 100);
    assert.ok(k >= 1 && k <= 100);
    counts[k - 1]++;
  }
  assert.equal(counts.reduce((a, b) => a + b, 0), 100_000);
  assert.ok(Math.max(...counts) / 1000 < 1.1, String(Math.max(...counts)));
});

Deno.test("Selection of each shard of 3 covers the examples once, in dataset order", async () => {
  const all = examples(40);
  const seen: string[] = [];
  for (const index of [1, 2, 3]) {
    const selection = new Selection({ shard: { index, count: 3 } });
    const ids = await select(selection, all);
    const order = selection.tally().order!;
    // Its place in the whole run is its position in the dataset.
    for (const id of ids) {
      assert.equal(order[id], Number(id.split("#")[1]) - 1);
    }
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) =>
        Number(a.split("#")[1]) - Number(b.split("#")[1])
      ),
    );
    seen.push(...ids);
  }
  assert.deepEqual(seen.sort(), all.map((e) => e.example_id).sort());
});

Deno.test("Selection: --filter over ids and metadata values, then --limit; the rest are skipped, counted", async () => {
  const all = examples(
    10,
    (i) => ({ topic: i % 2 === 0 ? "math" : "geo", n: i }),
  );
  const selection = new Selection({
    subset: { filter: "^math$|#9$", limit: 3 },
  });
  assert.deepEqual(await select(selection, all), [
    "cases.jsonl#2",
    "cases.jsonl#4",
    "cases.jsonl#6",
  ]);
  const tally = selection.tally();
  assert.deepEqual(
    { ...tally },
    { examples: 10, ran: 3, skipped: 7 },
  );
  const scores = selection.skippedScores([{ metric: "m", version: "m@1" }], 2);
  assert.equal(scores.length, 14);
  assert.equal(scores[0]!.status, "skipped");
  assert.equal(scores[0]!.unit_id, "cases.jsonl#1@1");
  assert.equal(scores[1]!.unit_id, "cases.jsonl#1@2");
  assert.equal(
    scores[0]!.reason,
    'skipped: not in the subset --filter "^math$|#9$" --limit 3',
  );
  // A metadata value that is not text is matched as its JSON.
  const numeric = new Selection({ subset: { filter: "^7$" } });
  assert.deepEqual(await select(numeric, all), ["cases.jsonl#7"]);
});

Deno.test("drawSample draws the same N for one seed, another N for another, a superset for a larger N", async () => {
  const all = examples(200);
  const draw = (sample: number, seed: string) =>
    drawSample(ReadableStream.from([all]), { sample, seed });
  const a = await draw(20, "1");
  assert.equal(a.size, 20);
  assert.deepEqual([...await draw(20, "1")], [...a]);
  const b = await draw(20, "2");
  assert.notDeepEqual([...b].sort(), [...a].sort());
  const bigger = await draw(40, "1");
  for (const id of a) assert.ok(bigger.has(id));
});

Deno.test("parseShard reads k/n and auto/n from each engine's variable; refuses the rest", () => {
  assert.deepEqual(parseShard("2/5", () => undefined), { index: 2, count: 5 });
  const env = (vars: Record<string, string>) => (name: string) => vars[name];
  assert.deepEqual(parseShard("auto/4", env({ JOB_COMPLETION_INDEX: "0" })), {
    index: 1,
    count: 4,
  });
  assert.deepEqual(parseShard("auto/4", env({ CI_NODE_INDEX: "4" })), {
    index: 4,
    count: 4,
  });
  assert.deepEqual(
    parseShard(
      "auto/4",
      env({ EVALPIPE_SHARD_INDEX: "2", CI_NODE_INDEX: "3" }),
    ),
    { index: 2, count: 4 },
  );
  for (
    const [text, vars, message] of [
      ["3", {}, /takes k\/n or auto\/n/],
      ["0/2", {}, /k must be from 1 to 2/],
      ["3/2", {}, /k must be from 1 to 2/],
      ["1/0", {}, /at least 1/],
      ["auto/2", {}, /no shard index in the environment/],
      [
        "auto/2",
        { JOB_COMPLETION_INDEX: "2" },
        /"2", not a shard of 2 .*0\.\.1/,
      ],
      ["auto/2", { CI_NODE_INDEX: "0" }, /"0", not a shard of 2 .*1\.\.2/],
      ["auto/2", { CI_NODE_INDEX: "x" }, /"x", not a shard of 2/],
    ] as const
  ) {
    assert.throws(
      () => parseShard(text, env(vars)),
      (e) =>
        e instanceof ShardError && e.exitCode === 2 && message.test(e.message),
      text,
    );
  }
});

Deno.test("shardOf puts an id written in NFD in the shard of its NFC spelling, and an ASCII id where it always went", async () => {
  const { fingerprint } = await import(
    "../../src/fingerprint/fingerprint.ts"
  );
  // "é" as one code point, and as "e" and a combining accent.
  const ids = ["café", "naïve", "résumé", "Zoë", "Ångström", "über"].map((
    word,
  ) => `cases.jsonl#${word}`);
  for (const count of [2, 3, 4, 5, 8]) {
    for (const id of ids) {
      const nfd = id.normalize("NFD");
      assert.notEqual(nfd, id);
      assert.equal(shardOf(nfd, count), shardOf(id, count), `${id} / ${count}`);
    }
    // An ASCII id: its shard as the documented hash gives it (SHA-256's
    // first 48 bits, modulo the count), so earlier shard runs keep theirs.
    for (let i = 1; i <= 50; i++) {
      const id = `cases.jsonl#${i}`;
      const hex = fingerprint("evalpipe shard", id).slice(7, 19);
      assert.equal(shardOf(id, count), (parseInt(hex, 16) % count) + 1);
    }
  }
});
