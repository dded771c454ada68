// A run killed outright while it rewrote its sidecar or its units file (kill
// -9: no exit handler runs) leaves the temp file beside it; the next run on
// those files removes it and says so. (tests/io/replace_file_test.ts kills a
// real writer, and shows that a live one's temp file is left alone.)

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

const SUITE = `dataset: data.jsonl
target: { type: subprocess, cmd: "cat" }
scorers: [{ type: exact_match }]
`;

const ARGS = ["run", "suite.yaml", "--out", "s.ndjson", "--units", "u.jsonl"];

Deno.test("run --resume removes the temp files a run killed mid-rewrite left beside --out, its sidecar and --units, naming them", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/suite.yaml`, SUITE);
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      ["a", "b"].map((id) =>
        JSON.stringify({ id, input: id, expected: id }) + "\n"
      ).join(""),
    );
    const first = await cli(ARGS, dir);
    assert.equal(first.code, 0, first.stderr);
    // What a kill -9 mid-rewrite leaves: part of the new text, unlocked.
    const stale = [
      ".s.ndjson.meta.json.0123456789ab.tmp",
      ".u.jsonl.abcdef012345.tmp",
      ".s.ndjson.00112233aabb.tmp",
    ];
    for (const name of stale) {
      await Deno.writeTextFile(`${dir}/${name}`, '{"half": ');
    }
    // Not a temp file of these files: left.
    await Deno.writeTextFile(`${dir}/.data.jsonl.0123456789ab.tmp`, "x");
    const again = await cli([...ARGS, "--resume"], dir);
    assert.equal(again.code, 0, again.stderr);
    for (const name of stale) {
      assert.ok(
        again.stderr.includes(
          `evalpipe: removed "${name}", what a run killed while it rewrote the file beside it left\n`,
        ),
        again.stderr,
      );
    }
    const left = (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name)
      .filter((n) => n.endsWith(".tmp"));
    assert.deepEqual(left, [".data.jsonl.0123456789ab.tmp"]);
  });
});
