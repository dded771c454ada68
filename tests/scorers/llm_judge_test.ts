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

Deno.test("validate and run: a rubric placeholder no unit has is a config error at its line, with the field meant, before any call", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({ handler: () => reply.ok('{"score": 1}') });
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      jsonl([{ id: "a", input: "q1", output: "ans1" }]),
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: cases.jsonl
target: { type: replay }
scorers: [{ type: llm_judge, base_url: "${server.baseUrl}", model: j, rubric: "Q {{inptu}} A {{output}}" }]
`,
    );
    const said =
      'evalpipe: Invalid config "suite.yaml" line 3: "scorers[0].rubric" names {{inptu}}, which a judge is never given; did you mean {{input}}?\n';
    for (const command of ["validate", "run"]) {
      const out = await cli([command, "suite.yaml"], dir);
      assert.equal(out.code, 2, out.stderr);
      assert.equal(out.stderr, said);
      assert.equal(out.stdout, "");
    }
    assert.equal(server.count, 0);
  });
});

Deno.test("a rubric may name each field a judge fills; another is named with the fields it may", async () => {
  const { checkConfigText, ConfigError } = await import("../../mod.ts");
  const suite = (rubric: string) =>
    `dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n  - type: llm_judge\n    model: j\n    rubric: ${
      JSON.stringify(rubric)
    }\n`;
  const every =
    "{{input}} {{ output }} {{expected}} {{context}} {{metadata}} {{metadata.topic}} {{context.1}}";
  await checkConfigText(suite(every), "suite.yaml");
  const refused = async (rubric: string) => {
    const error = await checkConfigText(suite(rubric), "suite.yaml").then(
      () => undefined,
      (e) => e,
    );
    assert.ok(error instanceof ConfigError, rubric);
    assert.equal(error.line, 6);
    return error.message;
  };
  assert.equal(
    await refused("{{metdata.topic}}"),
    'Invalid config "suite.yaml" line 6: "scorers[0].rubric" names {{metdata.topic}}, which a judge is never given; did you mean {{metadata.topic}}?',
  );
  assert.equal(
    await refused("{{output}} {{topic}}"),
    'Invalid config "suite.yaml" line 6: "scorers[0].rubric" names {{topic}}, which a judge is never given; a rubric names {{input}}, {{output}}, {{expected}}, {{context}}, {{metadata}} or a field of metadata, {{metadata.NAME}}',
  );
  assert.equal(
    await refused("{{expected.answer}}"),
    'Invalid config "suite.yaml" line 6: "scorers[0].rubric" names {{expected.answer}}, which a judge is never given; it is given expected as text, {{expected}}',
  );
  // What the config lets a rubric name, the judge fills.
  await using server = fakeLlm({ handler: () => reply.ok('{"score": 1}') });
  const judge = llmJudge({
    model: "j",
    base_url: server.baseUrl,
    rubric: every,
  });
  const [s] = await scores(judge, [{
    example_id: "d#1",
    unit_id: "d#1",
    input: [{ role: "user", content: "hi" }],
    output: "o",
    context: ["c1", "c2"],
    metadata: { topic: "t" },
  }]);
  assert.equal(s?.status, "scored", s?.reason);
  assert.equal(
    lastMessage(server.requests[0]!),
    '[{"role":"user","content":"hi"}] o  c1\n\nc2 {"topic":"t"} t c2',
  );
});

Deno.test("validate counts the cases a rubric cannot fill, names the first, and exits 2; run scores them as errors with the same words", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({
      handler: () => reply.ok('{"score": 0.9, "reason": "good"}'),
    });
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      jsonl([
        { input: "q1", output: "a1", metadata: { topic: "t" } },
        { input: "q2", output: "a2" },
        { input: "q3", output: "a3", metadata: { other: 1 } },
      ]),
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: cases.jsonl
target: { type: replay }
scorers:
  - type: llm_judge
    name: topical
    base_url: "${server.baseUrl}"
    model: j
    rubric: "Q {{input}} A {{output}} T {{metadata.topic}}"
`,
    );
    const missing =
      "The template names {{metadata.topic}}, which this case does not have";
    const plan = await cli(["validate", "suite.yaml"], dir);
    assert.equal(plan.code, 2, plan.stderr);
    assert.equal(
      plan.stderr,
      `evalpipe: Judge "topical" cannot be sent 2 cases (the first: "cases.jsonl" line 2): ${missing}\n`,
    );
    assert.match(
      plan.stdout,
      /^judge topical: 2 cases its rubric cannot fill, an error in a run$/m,
    );
    // The case it can fill is the one request to make.
    assert.match(plan.stdout, /judge 0 of 1 request stored, 1 to call/);
    const json = JSON.parse(
      (await cli(["validate", "suite.yaml", "--json"], dir)).stdout,
    );
    assert.deepEqual(json.unjudgeable, [{
      scorer: "topical",
      message: missing,
      cases: 2,
      dataset: "cases.jsonl",
      line: 2,
      where: "line",
    }]);
    assert.equal(server.count, 0);
    const run = await cli(["run", "suite.yaml"], dir);
    assert.deepEqual(
      lines(run.stdout).map((s) => `${s.status}: ${s.reason}`),
      ["scored: good", ...Array(2).fill(`error: scorer error: ${missing}`)],
    );
    assert.equal(server.count, 1);
  });
});
