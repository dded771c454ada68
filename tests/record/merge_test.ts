import assert from "node:assert/strict";
import {
  MergeError,
  mergeShards,
  type RunRecord,
  type ShardPart,
} from "../../src/record/mod.ts";
import { scored } from "../../src/score/mod.ts";

const fingerprints = {
  config: "sha256:a",
  dataset: "sha256:b",
  target: "sha256:c",
  scorers: { m: "m@1" },
};

function part(
  index: number,
  ids: Array<[string, number]>,
  scores: Array<[string, number, number]>,
  extra: Partial<ShardPart> = {},
): ShardPart {
  return {
    name: `s${index}.json`,
    fingerprints,
    shard: { index, count: 2 },
    complete: true,
    selection: {
      examples: 4,
      ran: ids.length,
      skipped: 0,
      order: Object.fromEntries(ids),
    },
    scores: scores.map(([id, epoch, value]) =>
      scored("m", value, { example_id: id, unit_id: `${id}@${epoch}` })
    ),
    ...extra,
  };
}

Deno.test("mergeShards orders by the example's place, then by epoch, whatever order a resumed shard wrote", () => {
  const merged = mergeShards([
    part(2, [["d#2", 1], ["d#4", 3]], [["d#4", 2, 1], ["d#2", 1, 0], [
      "d#4",
      1,
      0,
    ], ["d#2", 2, 1]]),
    part(1, [["d#1", 0], ["d#3", 2]], [["d#1", 1, 1], ["d#1", 2, 1], [
      "d#3",
      1,
      0,
    ], ["d#3", 2, 0]]),
  ]);
  assert.deepEqual(merged.scores.map((s) => s.unit_id), [
    "d#1@1",
    "d#1@2",
    "d#2@1",
    "d#2@2",
    "d#3@1",
    "d#3@2",
    "d#4@1",
    "d#4@2",
  ]);
  assert.equal(merged.aggregates[0]!.mean, 0.5);
  assert.equal(merged.aggregates[0]!.examples, 4);
  assert.equal(merged.complete, true);
});

Deno.test("mergeShards with allowPartial keeps an unfinished shard's Scores, says what is missing", () => {
  const unfinished = part(2, [], [["d#2", 1, 0]], { complete: false });
  delete unfinished.selection;
  const merged = mergeShards(
    [part(1, [["d#1", 0]], [["d#1", 1, 1]]), unfinished],
    { allowPartial: true },
  );
  assert.equal(merged.complete, false);
  assert.equal(merged.scores.length, 2);
  assert.match(merged.missing[0]!, /"s2\.json" \(shard 2\/2\) did not finish/);
  assert.throws(
    () => mergeShards([part(1, [["d#1", 0]], [["d#1", 1, 1]]), unfinished]),
    (e) => e instanceof MergeError && /--allow-partial/.test(e.message),
  );
});

Deno.test("mergeShards refuses shards split different ways, or of different scorers", () => {
  const other = part(2, [], []);
  other.shard = { index: 2, count: 3 };
  assert.throws(
    () => mergeShards([part(1, [], []), other]),
    (e) =>
      e instanceof MergeError &&
      /split the same number of ways/.test(e.message),
  );
  const scorers = part(2, [], []);
  scorers.fingerprints = { ...fingerprints, scorers: { m: "m@2" } };
  assert.throws(
    () => mergeShards([part(1, [], []), scorers]),
    (e) => e instanceof MergeError && /different scorers/.test(e.message),
  );
});

Deno.test("mergeShards refuses shards that saw different datasets, counting one example in the singular", () => {
  const one = part(1, [["d#1", 0]], [["d#1", 1, 1]]);
  one.selection = { ...one.selection!, examples: 1 };
  assert.throws(
    () => mergeShards([one, part(2, [], [])]),
    (e) =>
      e instanceof MergeError &&
      e.message ===
        '"s1.json" saw 1 example and "s2.json" 4: they read different datasets',
  );
});

/** A shard's record holding these units (its Scores are the part's). */
function recordOf(unitIds: string[]): RunRecord {
  return {
    run_id: "r1",
    started_at: "2026-12-01T08:00:00.000Z",
    config_path: "suite.yaml",
    config: {},
    fingerprints,
    units: unitIds.map((id) => ({
      example_id: id.replace(/@\d+$/, ""),
      unit_id: id,
      input: "q",
      output: "a",
    })),
    scores: [],
    aggregates: [],
    finished_at: "2026-12-01T08:00:01.000Z",
    complete: true,
  };
}

Deno.test("mergeShards places an example whose Scores write its id in NFD where its shard's order and units write it in NFC, keeping the id as written", () => {
  const nfc = "d#caf\u00e9";
  const nfd = "d#cafe\u0301";
  // A shard resumed (--force) after a tool saved its dataset in the other
  // form: its Scores write the id one way, the order its end wrote the other.
  const merged = mergeShards([
    part(2, [["d#2", 1]], [["d#2", 1, 0]], { record: recordOf(["d#2@1"]) }),
    part(1, [[nfc, 0], ["d#3", 2]], [["d#3", 1, 1], [nfd, 1, 1]], {
      record: recordOf([`${nfc}@1`, "d#3@1"]),
    }),
  ]);
  assert.deepEqual(merged.scores.map((s) => s.unit_id), [
    `${nfd}@1`,
    "d#2@1",
    "d#3@1",
  ]);
  // Each record line has its unit, café's found by its NFC id.
  assert.deepEqual(merged.entries.map(([unit]) => unit?.unit_id), [
    `${nfc}@1`,
    "d#2@1",
    "d#3@1",
  ]);
});

Deno.test("mergeShards refuses an example two shards scored, naming it and both files", () => {
  // Files of two runs given as shards of one: each lists d#1 in its order.
  assert.throws(
    () =>
      mergeShards([
        part(1, [["d#1", 0]], [["d#1", 1, 1]]),
        part(2, [["d#1", 0], ["d#2", 1]], [["d#2", 1, 0], ["d#1", 1, 0]]),
      ]),
    (e) => {
      assert.ok(e instanceof MergeError);
      assert.equal(e.exitCode, 2);
      assert.equal(
        e.message,
        'Cannot merge: example "d#1" is scored in both "s1.json" (shard 1/2) and "s2.json" (shard 2/2), but an example belongs to one shard: run the shards again without --resume',
      );
      return true;
    },
  );
  // Even with allowPartial: the Scores would be counted twice. A shard that
  // did not finish lists none of its examples: which is right is not known.
  const unfinished = part(2, [], [["d#1", 2, 0]], { complete: false });
  delete unfinished.selection;
  assert.throws(
    () =>
      mergeShards([part(1, [["d#1", 0]], [["d#1", 1, 1]]), unfinished], {
        allowPartial: true,
      }),
    /in both "s1\.json" \(shard 1\/2\) and "s2\.json" \(shard 2\/2\), but an example belongs to one shard: run the shards again without --resume$/,
  );
  // Neither finished: the example is placed by no order, and found by its
  // id (in NFC: "e\u0301" and "\u00e9" are one example).
  const one = part(1, [], [["d#1", 1, 1]], { complete: false });
  delete one.selection;
  assert.throws(
    () => mergeShards([one, unfinished], { allowPartial: true }),
    MergeError,
  );
  const first = part(1, [], [["d#\u00e9", 1, 1]], { complete: false });
  delete first.selection;
  const second = part(2, [], [["d#e\u0301", 1, 0]], { complete: false });
  delete second.selection;
  assert.throws(
    () => mergeShards([first, second], { allowPartial: true }),
    /written "d#e\u0301" there, the same id in Unicode NFC/,
  );
});
