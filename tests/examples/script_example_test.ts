import assert from "node:assert/strict";
import { parseScore } from "../../mod.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

Deno.test("examples/script/reassemble.ts reassembles the stages from mod.ts", async () => {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "examples/script/reassemble.ts",
      "examples/script/logs.jsonl",
    ],
    cwd: ROOT,
  }).output();
  const dec = new TextDecoder();
  assert.equal(code, 0, dec.decode(stderr));
  const scores = dec.decode(stdout).trim().split("\n").map((l) =>
    parseScore(JSON.parse(l))
  );
  assert.equal(scores.length, 8);
  assert.deepEqual(
    scores.filter((s) => s.metric === "exact_match").map((s) => s.value),
    [1, 0, 1, null],
  );
  const aggregates = dec.decode(stderr).trim().split("\n").map((l) =>
    JSON.parse(l)
  );
  assert.deepEqual(aggregates.map((a) => [a.metric, a.n, a.aggregatable]), [
    ["exact_match", 4, 3],
    ["short", 4, 4],
  ]);
});
