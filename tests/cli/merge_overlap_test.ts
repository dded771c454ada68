// `merge` of shards that both scored one example: refused, naming the example
// and both files, rather than counting it twice.

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

const NFD = "cafe\u0301";
const NFC = "caf\u00e9";
const IDS = ["a", "b", "c", "d", "e", "f", NFD];

const SUITE = `dataset: data.jsonl
target: { type: subprocess, cmd: "cat" }
scorers: [{ type: exact_match }]
epochs: 2
`;

/** The Score lines of `text` whose example is `id` of data.jsonl. */
function linesOf(text: string, id: string): string[] {
  return text.split("\n").filter((l) =>
    l !== "" && JSON.parse(l).example_id === `data.jsonl#${id}`
  );
}

Deno.test("merge refuses an example scored by two shards (an old shard file holding an id the split now gives to the other), naming the id and both files", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/suite.yaml`, SUITE);
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      IDS.map((id) => JSON.stringify({ id, input: id, expected: id }) + "\n")
        .join(""),
    );
    for (const k of [1, 2]) {
      const r = await cli(
        ["run", "suite.yaml", "--shard", `${k}/2`, "--out", `s${k}.ndjson`],
        dir,
      );
      assert.equal(r.code, 0, r.stderr);
    }
    const texts = await Promise.all(
      [1, 2].map((k) => Deno.readTextFile(`${dir}/s${k}.ndjson`)),
    );
    const holder = texts.findIndex((t) => linesOf(t, NFD).length > 0) + 1;
    const other = 3 - holder;
    const scores = linesOf(texts[holder - 1]!, NFD);
    assert.equal(scores.length, 2, "one Score per epoch");
    // The other shard's file as an evalpipe that split ids as written left
    // it, its dataset writing the id in NFC: the example's Scores are there.
    await Deno.writeTextFile(
      `${dir}/s${other}.ndjson`,
      scores.map((l) => l.replaceAll(NFD, NFC) + "\n").join(""),
      { append: true },
    );
    const merged = await cli(["merge", "s1.ndjson", "s2.ndjson"], dir);
    assert.equal(merged.code, 2, merged.stderr);
    assert.equal(merged.stdout, "");
    const [first, second] = holder === 1
      ? [`data.jsonl#${NFD}`, `data.jsonl#${NFC}`]
      : [`data.jsonl#${NFC}`, `data.jsonl#${NFD}`];
    assert.equal(
      merged.stderr,
      `evalpipe: Cannot merge: example "${first}" is scored in both "s1.ndjson" (shard 1/2) and "s2.ndjson" (shard 2/2) (written "${second}" there, the same id in Unicode NFC), but an example belongs to one shard: "s${other}.ndjson" holds it from an earlier split; run its shard again without --resume\n`,
    );
    // One file given twice, by one path or two: refused as before.
    for (const again of ["s1.ndjson", "./s1.ndjson"]) {
      const twice = await cli(
        ["merge", "s1.ndjson", again, "s2.ndjson"],
        dir,
      );
      assert.equal(twice.code, 2, twice.stderr);
      assert.match(
        twice.stderr,
        /"s1\.ndjson" and ".*s1\.ndjson" are both shard 1\/2: give each shard once/,
      );
    }
  });
});
