import assert from "node:assert/strict";
import {
  type Aggregate,
  aggregateLines,
  Aggregator,
  errored,
  LineStream,
  NdjsonParseStream,
  type Score,
  scored,
} from "../../mod.ts";

/** Aggregates NDJSON text through the stage; malformed lines are listed. */
async function aggregateText(
  text: string,
  options: { grouped?: boolean; aggregator?: Aggregator } = {},
): Promise<{ aggregates: Aggregate[]; malformed: Array<[number, string]> }> {
  const malformed: Array<[number, string]> = [];
  const aggregates = await Array.fromAsync(
    ReadableStream.from([new TextEncoder().encode(text)])
      .pipeThrough(new LineStream())
      .pipeThrough(new NdjsonParseStream())
      .pipeThrough(aggregateLines({
        ...options,
        onMalformed: (line, message) => malformed.push([line, message]),
      })),
  );
  return { aggregates, malformed };
}

const ndjson = (values: unknown[]) =>
  values.map((v) => JSON.stringify(v) + "\n").join("");

const ids = (e: string, k: number) => ({
  example_id: `d#${e}`,
  unit_id: `d#${e}@${k}`,
});

const SCORES: Score[] = [
  scored("a", 1, ids("1", 1)),
  scored("b", 0.25, ids("1", 1)),
  scored("a", 0, ids("2", 1)),
  errored("b", "scorer error: boom", ids("2", 1)),
  scored("a", 0.5, ids("3", 1)),
  scored("b", 1, ids("3", 1)),
];

Deno.test("aggregateLines of Scores equals the Aggregator over them", async () => {
  const whole = new Aggregator();
  for (const s of SCORES) whole.add(s);
  const { aggregates, malformed } = await aggregateText(ndjson(SCORES));
  assert.deepEqual(malformed, []);
  assert.deepEqual(aggregates, whole.results());
  assert.deepEqual(aggregates.map((a) => a.metric), ["a", "b"]);
});

Deno.test("aggregateLines merges shards' Aggregates and Scores exactly into the whole", async () => {
  const whole = (await aggregateText(ndjson(SCORES))).aggregates;
  const first = (await aggregateText(ndjson(SCORES.slice(0, 2)))).aggregates;
  const second = (await aggregateText(ndjson(SCORES.slice(2, 4)))).aggregates;
  const mixed = await aggregateText(
    ndjson([...first, ...second, ...SCORES.slice(4)]),
  );
  assert.deepEqual(mixed.malformed, []);
  assert.equal(JSON.stringify(mixed.aggregates), JSON.stringify(whole));
});

Deno.test("aggregateLines reports each malformed line with its number and goes on", async () => {
  const text = [
    JSON.stringify(scored("m", 1)),
    "not json",
    JSON.stringify({ ...errored("m", "boom"), value: 0 }),
    "",
    JSON.stringify({ metric: "m", n: 1, sums: { bogus: true } }),
    JSON.stringify(scored("m", 0.5)),
  ].join("\n") + "\n";
  const { aggregates, malformed } = await aggregateText(text);
  assert.deepEqual(malformed.map(([line]) => line), [2, 3, 5]);
  assert.match(malformed[0]![1], /^Cannot parse JSON/);
  assert.equal(aggregates.length, 1);
  assert.equal(aggregates[0]!.n, 2);
  assert.equal(aggregates[0]!.mean, 0.75);
});

Deno.test("aggregateLines grouped gathers an example's epochs wherever they stand", async () => {
  const apart = [
    scored("m", 1, ids("a", 1)),
    scored("m", 1, ids("b", 1)),
    scored("m", 0, ids("a", 2)),
    scored("m", 1, ids("b", 2)),
  ];
  const grouped = await aggregateText(ndjson(apart), { grouped: true });
  assert.equal(grouped.aggregates[0]!.examples, 2);
  const adjacent = await aggregateText(ndjson(apart));
  assert.equal(adjacent.aggregates[0]!.examples, 4);
  // An aggregator of one's own can be read afterwards.
  const mine = new Aggregator({ grouped: true });
  await aggregateText(ndjson(apart), { aggregator: mine });
  assert.deepEqual(mine.results(), grouped.aggregates);
});

Deno.test("aggregateLines counts a unit's Score of a metric once, and names each copy", async () => {
  const copies: Array<[number, string]> = [];
  const read = (text: string, grouped: boolean) =>
    Array.fromAsync(
      ReadableStream.from([new TextEncoder().encode(text)])
        .pipeThrough(new LineStream())
        .pipeThrough(new NdjsonParseStream())
        .pipeThrough(aggregateLines({
          grouped,
          onDuplicate: (line, score) => copies.push([line, score.unit_id!]),
        })),
    );
  const once = await aggregateText(ndjson(SCORES));
  // Each Score twice in a row: the copies are lines 2, 4, ... and skipped.
  const twice = ndjson(SCORES.flatMap((s) => [s, s]));
  assert.deepEqual(await read(twice, false), once.aggregates);
  assert.deepEqual(copies.map(([line]) => line), [2, 4, 6, 8, 10, 12]);
  // Grouped, a copy anywhere: the whole input given again.
  copies.length = 0;
  const again = ndjson([...SCORES, ...SCORES]);
  assert.deepEqual(
    await read(again, true),
    (await aggregateText(ndjson(SCORES), { grouped: true })).aggregates,
  );
  assert.deepEqual(
    copies.map(([, unit]) => unit),
    SCORES.map((s) => s.unit_id),
  );
  // Epochs of one example are units of their own; a matrix's targets too.
  copies.length = 0;
  const epochs = [scored("a", 1, ids("1", 1)), scored("a", 0, ids("1", 2))];
  const targets = ["t1", "t2"].map((t) => ({ ...SCORES[0]!, target_name: t }));
  await read(ndjson([...epochs, ...targets]), false);
  assert.deepEqual(copies, []);
});
