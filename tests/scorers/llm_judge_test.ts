// The `llm_judge` scorer against a loopback server speaking the OpenAI chat
// completions API: what its rubric may name, how its reply is read, and
// what its cache keeps; through the library and the command line.

import assert from "node:assert/strict";
import { llmJudge, type Score, scoreUnits, type Unit } from "../../mod.ts";
import { cli } from "../_cli.ts";
import { fakeLlm, lastMessage, reply } from "../_fake_llm.ts";
import { withTempDir } from "../_proc.ts";

const jsonl = (rows: unknown[]) =>
  rows.map((r) => JSON.stringify(r)).join("\n") + "\n";

const lines = (text: string): Score[] =>
  text.trim() === "" ? [] : text.trim().split("\n").map((l) => JSON.parse(l));

async function scores(
  scorer: ReturnType<typeof llmJudge>,
  units: Unit[],
): Promise<Score[]> {
  return await Array.fromAsync(
    ReadableStream.from(units).pipeThrough(scoreUnits([scorer])),
  );
}

Deno.test("llmJudge fills {{metadata.topic}} from the unit's metadata, as a target's template does", async () => {
  await using server = fakeLlm({
    handler: () => reply.ok('{"score": 0.75, "reason": "on topic"}'),
  });
  const judge = llmJudge({
    model: "j",
    base_url: server.baseUrl,
    rubric: "Q {{input}} A {{output}} T {{metadata.topic}}",
  });
  const [good, lacking] = await scores(judge, [
    {
      example_id: "d#1",
      unit_id: "d#1",
      input: "q1",
      output: "ans1",
      metadata: { topic: "tides" },
    },
    { example_id: "d#2", unit_id: "d#2", input: "q2", output: "ans2" },
  ]);
  assert.deepEqual([good?.status, good?.validity, good?.value], [
    "scored",
    "valid",
    0.75,
  ]);
  assert.equal(lastMessage(server.requests[0]!), "Q q1 A ans1 T tides");
  // A case without the field is that case's error, and costs no call.
  assert.equal(lacking?.status, "error");
  assert.equal(
    lacking?.reason,
    "scorer error: The template names {{metadata.topic}}, which this case does not have",
  );
  assert.equal(server.count, 1);
});

Deno.test("run and validate: a rubric naming {{metadata.topic}} is judged, cached and counted in the cache by validate", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({
      handler: () => reply.ok('{"score": 0.9, "reason": "good"}'),
    });
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      jsonl([{
        id: "a",
        input: "q1",
        output: "ans1",
        metadata: { topic: "t" },
      }]),
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: cases.jsonl
target: { type: replay }
scorers:
  - type: llm_judge
    base_url: "${server.baseUrl}"
    model: j
    rubric: "Q {{input}} A {{output}} T {{metadata.topic}}"
`,
    );
    const run = await cli(["run", "suite.yaml"], dir);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(
      lines(run.stdout).map((s) => [s.status, s.validity, s.value]),
      [["scored", "valid", 0.9]],
    );
    assert.equal(lastMessage(server.requests[0]!), "Q q1 A ans1 T t");
    const plan = await cli(
      ["validate", "suite.yaml", "--cache", "replay"],
      dir,
    );
    assert.equal(plan.code, 0, plan.stderr);
    assert.match(
      plan.stdout,
      /^cache: replay, .*: judge 1 of 1 request stored, 0 missing/m,
    );
    assert.equal(server.count, 1);
  });
});
