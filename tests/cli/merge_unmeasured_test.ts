// `merge` says what `run` says of a metric that measured nothing: with no
// gate on it, which rule failed the run, not "gate failed".

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

// A target that always fails: every Score is blocked. `contains` has a gate
// of its own, `exact_match` none.
const SUITE = `dataset: data.jsonl
target: { type: subprocess, cmd: "exit 3" }
scorers:
  - type: exact_match
  - type: contains
    value: "x"
gates:
  contains: { max_blocked: 100 }
`;

/** The lines of stderr on metrics that measured nothing. */
function unmeasuredLines(stderr: string): string[] {
  return stderr.split("\n").filter((l) => l.includes("nothing measured"));
}

Deno.test("merge words a metric that measured nothing as run does: no gate failed for one no gate names", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/suite.yaml`, SUITE);
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      ["a", "b", "c", "d", "e", "f"].map((id) =>
        JSON.stringify({ id, input: id, expected: id }) + "\n"
      ).join(""),
    );
    const whole = await cli(["run", "suite.yaml", "--out", "all.ndjson"], dir);
    assert.equal(whole.code, 1, whole.stderr);
    const said = unmeasuredLines(whole.stderr);
    assert.deepEqual(said, [
      "evalpipe: gate failed: contains: nothing measured: 6 blocked of 6 Scores (allow it with gates.contains.allow_unmeasured: true)",
      "evalpipe: exact_match: nothing measured: 6 blocked of 6 Scores; no gate names it, but a metric that measured nothing fails the run: the Scores' reasons say why (let it pass with gates.exact_match.allow_unmeasured: true)",
    ]);
    for (const k of [1, 2]) {
      const shard = await cli(
        ["run", "suite.yaml", "--shard", `${k}/2`, "--out", `s${k}.ndjson`],
        dir,
      );
      assert.equal(shard.code, 0, shard.stderr);
    }
    const merged = await cli(["merge", "s1.ndjson", "s2.ndjson"], dir);
    assert.equal(merged.code, 1, merged.stderr);
    assert.deepEqual(unmeasuredLines(merged.stderr), said);
  });
});
