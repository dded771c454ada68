// The `llm_judge` scorer against a loopback server speaking the OpenAI chat
// completions API: what its rubric may name, how its reply is read, and
// what its cache keeps; through the library and the command line.

import assert from "node:assert/strict";
import {
  checkConfigText,
  ConfigError,
  faithfulnessJudge,
  JudgeReplyError,
  llmJudge,
  openaiTarget,
  rubricJudge,
  type Score,
  scoreUnits,
  type Unit,
} from "../../mod.ts";
import { parseJudgeReply } from "../../src/scorers/llm_judge.ts";
import { CacheMissError, TargetCache } from "../../src/targets/mod.ts";
import { cli } from "../_cli.ts";
import { fakeLlm, lastMessage, reply } from "../_fake_llm.ts";
import { withTempDir } from "../_proc.ts";

const jsonl = (rows: unknown[]) =>
  rows.map((r) => JSON.stringify(r)).join("\n") + "\n";

const lines = (text: string): Score[] =>
  text.trim() === "" ? [] : text.trim().split("\n").map((l) => JSON.parse(l));

/** Writes a suite that replays `cases.jsonl` to the scorers' YAML lines. */
async function suite(
  dir: string,
  cases: unknown[],
  scorers: string,
): Promise<void> {
  await Deno.writeTextFile(`${dir}/cases.jsonl`, jsonl(cases));
  await Deno.writeTextFile(
    `${dir}/suite.yaml`,
    `dataset: cases.jsonl\ntarget: { type: replay }\n${scorers}`,
  );
}

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
    "scorer error: The rubric names {{metadata.topic}}, which this case does not have",
  );
  assert.equal(server.count, 1);
});

Deno.test("run and validate: a rubric naming {{metadata.topic}} is judged, cached and counted in the cache by validate", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({
      handler: () => reply.ok('{"score": 0.9, "reason": "good"}'),
    });
    await suite(
      dir,
      [{
        id: "a",
        input: "q1",
        output: "ans1",
        metadata: { topic: "t" },
      }],
      `scorers:
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
    await suite(
      dir,
      [{ id: "a", input: "q1", output: "ans1" }],
      `scorers: [{ type: llm_judge, base_url: "${server.baseUrl}", model: j, rubric: "Q {{inptu}} A {{output}}" }]
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
  const config = (rubric: string) =>
    `dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n  - type: llm_judge\n    model: j\n    rubric: ${
      JSON.stringify(rubric)
    }\n`;
  const every =
    "{{input}} {{ output }} {{expected}} {{context}} {{metadata}} {{metadata.topic}} {{context.1}}";
  await checkConfigText(config(every), "suite.yaml");
  const refused = async (rubric: string) => {
    const error = await checkConfigText(config(rubric), "suite.yaml").then(
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

for (
  const [field, words, yaml, line] of [
    [
      "rubric",
      "rubric",
      `rubric: "Q {{input}} A {{output}} T {{metadata.topic}}"`,
      9,
    ],
    // Session 20 made the system prompt a template; validate called it the rubric.
    [
      "system",
      "system prompt",
      `rubric: "Q {{input}} A {{output}}"
    system: "Grade answers about {{metadata.topic}}"`,
      10,
    ],
  ] as const
) {
  Deno.test(`validate counts the cases a judge's ${words} cannot fill, names the first, the suite's line and key, and exits 2; run scores them as errors with the same words`, async () => {
    await withTempDir(async (dir) => {
      await using server = fakeLlm({
        handler: () => reply.ok('{"score": 0.9, "reason": "good"}'),
      });
      await suite(
        dir,
        [
          { input: "q1", output: "a1", metadata: { topic: "t" } },
          { input: "q2", output: "a2" },
          { input: "q3", output: "a3", metadata: { other: 1 } },
        ],
        `scorers:
  - type: exact_match
  - type: llm_judge
    name: topical
    base_url: "${server.baseUrl}"
    model: j
    ${yaml}
`,
      );
      const missing =
        `The ${words} names {{metadata.topic}}, which this case does not have`;
      const plan = await cli(["validate", "suite.yaml"], dir);
      assert.equal(plan.code, 2, plan.stderr);
      assert.equal(
        plan.stderr,
        `evalpipe: Judge "topical" ("suite.yaml" line ${line}: "scorers[1].${field}") cannot be sent 2 cases (the first: "cases.jsonl" line 2): ${missing}\n`,
      );
      assert.match(
        plan.stdout,
        new RegExp(
          `^judge topical: 2 cases its ${words} cannot fill, an error in a run$`,
          "m",
        ),
      );
      // The case it can fill is the one request to make.
      assert.match(plan.stdout, /judge 0 of 1 request stored, 1 to call/);
      const json = JSON.parse(
        (await cli(["validate", "suite.yaml", "--json"], dir)).stdout,
      );
      assert.deepEqual(json.unjudgeable, [{
        scorer: "topical",
        field,
        config_line: line,
        message: missing,
        cases: 2,
        dataset: "cases.jsonl",
        line: 2,
        where: "line",
      }]);
      assert.equal(server.count, 0);
      const run = await cli(["run", "suite.yaml"], dir);
      assert.deepEqual(
        lines(run.stdout).filter((s) => s.metric === "topical").map((s) =>
          `${s.status}: ${s.reason}`
        ),
        ["scored: good", ...Array(2).fill(`error: scorer error: ${missing}`)],
      );
      assert.equal(server.count, 1);
    });
  });
}

/** The system message a judge sent. */
const systemMessage = (request: { json: unknown }): unknown =>
  (request.json as { messages: { content: unknown }[] }).messages[0]?.content;

Deno.test("llmJudge fills its system prompt as its rubric, from the same fields; a case lacking one is its error, without a call", async () => {
  await using server = fakeLlm({ handler: () => reply.ok('{"score": 1}') });
  const judge = llmJudge({
    model: "j",
    base_url: server.baseUrl,
    system:
      'Grade answers about {{metadata.topic}} to "{{input}}". Reply {"score": 0..1}.',
    rubric: "A {{output}}",
  });
  const [good, lacking] = await scores(judge, [
    {
      example_id: "d#1",
      unit_id: "d#1",
      input: "q1",
      output: "a1",
      metadata: { topic: "tides" },
    },
    { example_id: "d#2", unit_id: "d#2", input: "q2", output: "a2" },
  ]);
  assert.equal(good?.status, "scored", good?.reason);
  assert.equal(
    systemMessage(server.requests[0]!),
    'Grade answers about tides to "q1". Reply {"score": 0..1}.',
  );
  assert.equal(lastMessage(server.requests[0]!), "A a1");
  assert.equal(lacking?.status, "error");
  assert.equal(
    lacking?.reason,
    "scorer error: The system prompt names {{metadata.topic}}, which this case does not have",
  );
  assert.equal(server.count, 1);
});

Deno.test("an llm_judge system prompt is checked as its rubric: a field a judge is never given, or syntax evalpipe does not fill, is a config error at its line", async () => {
  const config = (system: string) =>
    `dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n  - type: llm_judge\n    model: j\n    rubric: "{{output}}"\n    system: ${
      JSON.stringify(system)
    }\n`;
  await checkConfigText(
    config(
      "{{input}} {{ output }} {{expected}} {{context}} {{metadata.topic}}",
    ),
    "suite.yaml",
  );
  const refused = async (system: string) => {
    const error = await checkConfigText(config(system), "suite.yaml").then(
      () => undefined,
      (e) => e,
    );
    assert.ok(error instanceof ConfigError, system);
    assert.equal(error.line, 7);
    return error.message;
  };
  assert.equal(
    await refused("You grade {{inptu}}"),
    'Invalid config "suite.yaml" line 7: "scorers[0].system" names {{inptu}}, which a judge is never given; did you mean {{input}}?',
  );
  assert.equal(
    await refused("You grade {{topic}}"),
    'Invalid config "suite.yaml" line 7: "scorers[0].system" names {{topic}}, which a judge is never given; a system prompt names {{input}}, {{output}}, {{expected}}, {{context}}, {{metadata}} or a field of metadata, {{metadata.NAME}}',
  );
  assert.equal(
    await refused("You grade {{ input | upper }}"),
    'Invalid config "suite.yaml" line 7: "scorers[0].system" has {{ input | upper }}, which evalpipe would send as written: filters ("|") are not supported; a placeholder is a field\'s name alone, as {{input}} or {{metadata.topic}}',
  );
});

const THINKING =
  '<think>The user wants {"score": 0.1}? No.</think>\n{"score": 0.9, "reason": "good"}';

Deno.test("parseJudgeReply reads the verdict after a reasoning model's thoughts, the last of several, and never a non-finite number", () => {
  assert.deepEqual(parseJudgeReply(THINKING), { score: 0.9, reason: "good" });
  // The chat template wrote the opening tag: only the closing one comes.
  assert.deepEqual(
    parseJudgeReply('I think {"score": 0.2}.</think>{"score": 0.8}'),
    { score: 0.8 },
  );
  assert.deepEqual(
    parseJudgeReply('<thinking>{"score": 0}</thinking> Score: 0.7'),
    {
      score: 0.7,
      doubt: "the judge did not answer in JSON; read 0.7 from its text",
    },
  );
  assert.throws(
    () => parseJudgeReply('<think>Perhaps {"score": 0.1}, perhaps'),
    { name: "JudgeReplyError", message: /ends inside its <think> block/ },
  );
  // Two verdicts that differ: the last is read, and not trusted.
  const note = parseJudgeReply(
    '{"score": 0.9, "reason": "good"}\nNote: otherwise I\'d give {"score": 0.1}.',
  );
  assert.equal(note.score, 0.1);
  assert.equal(
    note.doubt,
    'the judge\'s reply holds 2 verdicts, "score" 0.9, then 0.1; the last is read',
  );
  assert.equal(note.code, undefined);
  assert.deepEqual(
    parseJudgeReply(
      'Draft: {"score": 0.5} Final: {"score": 0.5, "reason": "ok"}',
    ),
    { score: 0.5, reason: "ok" },
  );
  assert.equal(
    parseJudgeReply('{"score": 3} then {"score": 0.4}').doubt,
    'the judge\'s reply holds 2 verdicts, "score" 3, then 0.4; the last is read',
  );
  assert.equal(
    parseJudgeReply('{"score": 0.4} then {"score": 3}').code,
    "judge.out_of_range",
  );
  // 1e400 parses as Infinity: no grade, and no 1 read from its text.
  for (const reply of ['{"score": 1e400}', '{"score": -1e400}']) {
    assert.throws(
      () => parseJudgeReply(reply),
      {
        name: "JudgeReplyError",
        message:
          /^the judge's reply has no numeric "score"; "score" is beyond the largest number$/,
      },
    );
  }
  assert.throws(
    () => parseJudgeReply("Score: 1e400"),
    { message: /^the judge's reply has no score: "Score: 1e400"$/ },
  );
  assert.throws(() => parseJudgeReply('{"reason": "forgot"}'), JudgeReplyError);
  // Braces in the prose around the verdict are no object.
  assert.deepEqual(
    parseJudgeReply('Use {x} as "y {\n{"score": 0.3}'),
    { score: 0.3 },
  );
  // Thousands of unclosed braces: no object, and no quadratic scan (a
  // quadratic one would hold this test for minutes; its speed is a row of
  // bench/hot_bench.ts, not a timed assertion here).
  assert.throws(() => parseJudgeReply("{".repeat(200_000)), JudgeReplyError);
});

Deno.test("llmJudge's provenance.prompt hashes the template it sends, a criterion in its wrapper, as its cache key follows the request", async () => {
  // Session 20 hashed a criterion alone: a new wrapper kept the old hash.
  await using server = fakeLlm({ handler: () => reply.ok('{"score": 1}') });
  const settings = { model: "j", base_url: server.baseUrl };
  const criterion = llmJudge({ ...settings, rubric: "Is it polite?" });
  // Fields that are their placeholders' text: the template is sent as it is.
  const echo: Unit = {
    example_id: "d#1",
    unit_id: "d#1",
    input: "{{input}}",
    output: "{{output}}",
    expected: "{{expected}}",
    context: ["{{context}}"],
  };
  const [first] = await scores(criterion, [echo]);
  const sent = lastMessage(server.requests[0]!);
  assert.ok(sent.includes("Is it polite?") && sent.includes("Question"), sent);
  const unit: Unit = {
    example_id: "d#2",
    unit_id: "d#2",
    input: "q",
    output: "a",
    expected: "e",
    context: ["c"],
  };
  // The same template written out as a rubric: the same requests, one hash.
  const written = llmJudge({ ...settings, rubric: sent });
  assert.equal(written.cacheKey!(unit), criterion.cacheKey!(unit));
  const [second] = await scores(written, [echo]);
  assert.equal(lastMessage(server.requests[1]!), sent);
  assert.match(String(first?.provenance?.prompt), /^sha256:[0-9a-f]{64}$/);
  assert.equal(second?.provenance?.prompt, first?.provenance?.prompt);
  // Another wrapper is another prompt, and another cache key: no verdict
  // cached for the old one is served.
  const other = llmJudge({
    ...settings,
    rubric: sent.replace("Question", "Query"),
  });
  assert.notEqual(other.cacheKey!(unit), criterion.cacheKey!(unit));
  const [third] = await scores(other, [echo]);
  assert.notEqual(third?.provenance?.prompt, first?.provenance?.prompt);
});

Deno.test("a criterion judge's version names its wrapper by a tag, and the wrapper's pinned hash makes an edit of it bump the tag", async () => {
  // The version names the wrapper a criterion is sent in by the tag
  // CRITERION ("criterion/1"), not by its text: a version made of the text
  // (tried in session 22) changed every criterion judge's version, and
  // warned "the evaluator changed" against every baseline, with requests
  // byte for byte the same. Editing the wrapper changes the prompt hash
  // below: bump CRITERION in src/scorers/llm_judge.ts, then pin both here.
  await using server = fakeLlm({ handler: () => reply.ok('{"score": 1}') });
  const rubric = "Is it polite?";
  const judge = llmJudge({ model: "m", base_url: server.baseUrl, rubric });
  const [score] = await scores(judge, [{
    example_id: "d#1",
    unit_id: "d#1",
    input: "q",
    output: "a",
  }]);
  assert.equal(
    score?.provenance?.prompt,
    "sha256:9f7af8649e7da2192ff1802845930864fd7a05000265e31f6e8ed096f00ee50f",
    "the criterion wrapper changed: bump CRITERION, then pin its hash and version",
  );
  const pinned = { model: "m", base_url: "http://127.0.0.1:9/v1", rubric };
  assert.equal(llmJudge(pinned).version, "llm_judge@2eaf45a9");
  // Another criterion in the same wrapper is another evaluator.
  assert.notEqual(
    llmJudge({ ...pinned, rubric: "Is it terse?" }).version,
    llmJudge(pinned).version,
  );
});

Deno.test("a judge's evaluator version names the rules its reply is read by", () => {
  // Pinned: it changes when the judge's settings or READING_RULES change, and
  // only then. Session 17 changed how replies are read (<think> dropped, the
  // last of several verdicts) without a new version, so a baseline judged by
  // the old rules compared as the same evaluator: `llm_judge@be5724de` then.
  const judge = llmJudge({ model: "m", base_url: "http://127.0.0.1:9/v1" });
  assert.equal(judge.version, "llm_judge@8009978b");
});

Deno.test("llmJudge and rubricJudge grade the verdict after <think>, and an unreadable or doubled grade is no valid Score", async () => {
  await using server = fakeLlm({
    handler(request) {
      const prompt = lastMessage(request);
      if (prompt.includes("THINK")) return reply.ok(THINKING);
      if (prompt.includes("HUGE")) return reply.ok('{"score": 1e400}');
      return reply.ok(
        '{"score": 1, "reason": "good"}\nNote: otherwise I\'d give {"score": 0}.',
      );
    },
  });
  const unit = (output: string): Unit => ({
    example_id: `d#${output}`,
    unit_id: `d#${output}`,
    input: "q",
    output,
  });
  const judges = [
    llmJudge({ model: "j", base_url: server.baseUrl }),
    rubricJudge({
      model: "j",
      base_url: server.baseUrl,
      rubric: "1 is right.",
    }),
  ];
  for (const judge of judges) {
    const [think, huge, twice] = await scores(judge, [
      unit("THINK"),
      unit("HUGE"),
      unit("TWICE"),
    ]);
    assert.deepEqual(
      [think?.status, think?.validity, think?.value, think?.reason],
      ["scored", "valid", 0.9, "good"],
      judge.name,
    );
    assert.deepEqual(
      [huge?.status, huge?.value, huge?.diagnostics[0]?.code],
      ["error", null, "judge.unparsable"],
    );
    assert.equal(
      huge?.reason,
      `scorer error: the judge's reply has no numeric "score"; "score" is beyond the largest number`,
    );
    assert.deepEqual([twice?.status, twice?.validity, twice?.value], [
      "scored",
      "invalid",
      0,
    ]);
    assert.deepEqual(twice?.diagnostics.map((d) => d.code), ["judge.doubt"]);
    assert.match(twice?.reason ?? "", /holds 2 verdicts, "score" 1, then 0/);
  }
});

Deno.test("a RAG judge reads the verdict after <think> too, and doubts one of several that differ", async () => {
  const claims = (supported: boolean) =>
    JSON.stringify({ claims: [{ claim: "Oslo is the capital", supported }] });
  await using server = fakeLlm({
    handler(request) {
      return lastMessage(request).includes("THINK")
        ? reply.ok(
          `<think>Maybe ${claims(false)}? No.</think>\n${claims(true)}`,
        )
        : reply.ok(`${claims(true)}\nOr rather: ${claims(false)}`);
    },
  });
  const judge = faithfulnessJudge({ model: "j", base_url: server.baseUrl });
  const unit = (output: string): Unit => ({
    example_id: `d#${output}`,
    unit_id: `d#${output}`,
    input: "capital?",
    output,
    context: ["Oslo is the capital of Norway."],
  });
  const [think, twice] = await scores(judge, [unit("THINK"), unit("TWICE")]);
  assert.deepEqual([think?.status, think?.validity, think?.value], [
    "scored",
    "valid",
    1,
  ]);
  assert.deepEqual([twice?.status, twice?.validity, twice?.value], [
    "scored",
    "invalid",
    0,
  ]);
  assert.match(
    twice?.reason ?? "",
    /^the judge's reply holds 2 verdicts, "claims" /,
  );
});

Deno.test("run: a judge's reply that gives no verdict is not cached; the next auto run asks again, a replay misses it", async () => {
  await withTempDir(async (dir) => {
    let calls = 0;
    await using server = fakeLlm({
      handler: () =>
        reply.ok(
          ++calls === 1
            ? '{"reason":"forgot"}'
            : '{"score":0.75,"reason":"fine"}',
        ),
    });
    await suite(
      dir,
      [{ id: "a", input: "q1", output: "ans1" }],
      `scorers: [{ type: llm_judge, base_url: "${server.baseUrl}", model: j, rubric: "Q {{input}} A {{output}}" }]
gates: { llm_judge: { allow_unmeasured: true } }
`,
    );
    const run = async (...flags: string[]) => {
      const out = await cli(["run", "suite.yaml", ...flags], dir);
      const [s] = lines(out.stdout);
      return {
        said: [s?.status, s?.value, s?.diagnostics[0]?.code ?? null],
        reason: s?.reason,
        cache: /judge cache: [^\n]*/.exec(out.stderr)?.[0],
      };
    };
    const first = await run();
    assert.deepEqual(first.said, ["error", null, "judge.unparsable"]);
    assert.equal(first.cache, "judge cache: 0 hits, 1 call");
    // Nothing usable is stored: a replay has no answer and sends nothing.
    const replayed = await run("--cache", "replay");
    assert.deepEqual(replayed.said, ["error", null, "cache.miss"]);
    assert.match(replayed.reason ?? "", /^scorer error: No cached answer/);
    assert.equal(server.count, 1);
    const second = await run();
    assert.deepEqual(second.said, ["scored", 0.75, null]);
    assert.equal(second.cache, "judge cache: 0 hits, 1 call");
    const third = await run();
    assert.deepEqual(third.said, ["scored", 0.75, null]);
    assert.equal(
      third.cache,
      "judge cache: 1 hit, 0 calls; --cache live calls the model again for them",
    );
    assert.equal(server.count, 2);
  });
});

Deno.test("a cached judge reply that gives no verdict (stored by an earlier version) is a miss: auto asks again, replay says so", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({
      handler: () => reply.ok('{"score": 0.5, "reason": "half"}'),
    });
    const settings = { model: "j", base_url: server.baseUrl };
    const unit: Unit = {
      example_id: "d#1",
      unit_id: "d#1",
      input: "q",
      output: "a",
    };
    const key = llmJudge(settings).cacheKey!(unit);
    await new TargetCache(dir).set(key, { output: '{"reason": "forgot"}' });
    const replay = new TargetCache(dir, { mode: "replay" });
    const [missed] = await scores(
      llmJudge(settings, undefined, undefined, { cache: replay }),
      [unit],
    );
    assert.deepEqual([missed?.status, missed?.diagnostics[0]?.code], [
      "error",
      "cache.miss",
    ]);
    assert.match(
      missed?.reason ?? "",
      /^scorer error: The cached answer for this request holds no verdict \(key [0-9a-f]{16}\), and the cache mode "replay" makes no call$/,
    );
    assert.deepEqual([replay.hits, replay.missing], [0, 1]);
    assert.throws(() => replay.lookup(key, () => false), CacheMissError);
    assert.equal(server.count, 0);
    const auto = new TargetCache(dir);
    const [asked] = await scores(
      llmJudge(settings, undefined, undefined, { cache: auto }),
      [unit],
    );
    assert.deepEqual([asked?.status, asked?.value], ["scored", 0.5]);
    assert.deepEqual([auto.hits, auto.misses], [0, 1]);
    assert.equal(server.count, 1);
    // The answer paid for takes the place of the one without a verdict.
    assert.equal(
      new TargetCache(dir).peek(key)?.output,
      '{"score": 0.5, "reason": "half"}',
    );
  });
});

Deno.test("a RAG judge's reply that gives no verdict is not cached either", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({ handler: () => reply.ok("No idea.") });
    const cache = new TargetCache(dir);
    const judge = faithfulnessJudge(
      { model: "j", base_url: server.baseUrl },
      undefined,
      { cache },
    );
    const unit: Unit = {
      example_id: "d#1",
      unit_id: "d#1",
      input: "q",
      output: "Oslo.",
      context: ["Oslo is the capital of Norway."],
    };
    const [s] = await scores(judge, [unit]);
    assert.deepEqual([s?.status, s?.diagnostics[0]?.code], [
      "error",
      "judge.unparsable",
    ]);
    assert.equal(new TargetCache(dir).peek(judge.cacheKey!(unit)), undefined);
  });
});

Deno.test("a judge that refuses is a judge.refused error quoting the refusal, not 'no score', and is not cached", async () => {
  // A refusal holding a number: read as a score, it was an invalid 5.
  const REFUSAL = "I can't grade this; I won't give it a score 5 or any other.";
  await using server = fakeLlm({
    handler(request) {
      const prompt = lastMessage(request);
      if (prompt.includes("FILTERED")) {
        return reply.ok("", { finishReason: "content_filter" });
      }
      return reply.json({
        model: "j",
        choices: [{
          index: 0,
          message: { role: "assistant", content: null, refusal: REFUSAL },
          finish_reason: "stop",
        }],
        usage: { prompt_tokens: 40, completion_tokens: 12, total_tokens: 52 },
      });
    },
  });
  await withTempDir(async (dir) => {
    const cache = new TargetCache(dir);
    const settings = {
      model: "j",
      base_url: server.baseUrl,
      cost: { input_per_1m: 1, output_per_1m: 2 },
    };
    const judges = [
      llmJudge(settings, undefined, undefined, { cache }),
      faithfulnessJudge(settings, undefined, { cache }),
    ];
    const unit = (output: string): Unit => ({
      example_id: `d#${output}`,
      unit_id: `d#${output}`,
      input: "q",
      output,
      context: ["c"],
    });
    for (const judge of judges) {
      const [refused, filtered] = await scores(judge, [
        unit("REFUSED"),
        unit("FILTERED"),
      ]);
      for (const s of [refused, filtered]) {
        assert.deepEqual(
          [s?.status, s?.validity, s?.value, s?.passed],
          ["error", "not_measured", null, false],
          judge.name,
        );
        assert.deepEqual(s?.diagnostics.map((d) => d.code), ["judge.refused"]);
        // The call was made and paid for: its provenance stays.
        assert.equal(s?.provenance?.judge_model, "j");
        assert.equal(typeof s?.provenance?.cost_usd, "number");
      }
      assert.equal(
        refused?.reason,
        `scorer error: the judge refused: ${JSON.stringify(REFUSAL)}`,
      );
      assert.equal(refused?.provenance?.refusal, true);
      assert.equal(
        filtered?.reason,
        `scorer error: the judge refused: the provider's content filter stopped its reply (finish_reason "content_filter")`,
      );
      // Neither is kept: the next run asks again.
      for (const u of [unit("REFUSED"), unit("FILTERED")]) {
        assert.equal(new TargetCache(dir).peek(judge.cacheKey!(u)), undefined);
      }
    }
    const before = server.count;
    await scores(judges[0]!, [unit("REFUSED")]);
    assert.equal(server.count, before + 1);
  });
  // A long refusal is quoted clipped, not whole.
  const long = "No. ".repeat(200);
  server.handler = () =>
    reply.json({
      model: "j",
      choices: [{
        index: 0,
        message: { role: "assistant", content: null, refusal: long },
        finish_reason: "stop",
      }],
    });
  const [clipped] = await scores(
    llmJudge({ model: "j", base_url: server.baseUrl }),
    [{ example_id: "d#4", unit_id: "d#4", input: "q", output: "a" }],
  );
  assert.ok((clipped?.reason?.length ?? 0) < 260, clipped?.reason);
  assert.match(
    clipped?.reason ?? "",
    /^scorer error: the judge refused: "No\. No\./,
  );
});

Deno.test("a judge whose content filter left no message text (Azure's shape) is a judge.refused error, as one with empty text is", async () => {
  // Azure's filtered answer has a finish_reason of "content_filter" and a
  // message without content: the client's "no message text" error reached
  // the Score as a failed call, not as the refusal it is.
  const FILTERED = {
    model: "j",
    choices: [{
      index: 0,
      message: { role: "assistant" },
      finish_reason: "content_filter",
      content_filter_results: { violence: { filtered: true } },
    }],
    usage: { prompt_tokens: 40, completion_tokens: 0, total_tokens: 40 },
  };
  await using server = fakeLlm({ handler: () => reply.json(FILTERED) });
  await withTempDir(async (dir) => {
    const cache = new TargetCache(dir);
    const settings = {
      model: "j",
      base_url: server.baseUrl,
      cost: { input_per_1m: 1, output_per_1m: 2 },
    };
    const unit: Unit = {
      example_id: "d#1",
      unit_id: "d#1",
      input: "q",
      output: "a",
      context: ["c"],
    };
    for (
      const judge of [
        llmJudge(settings, undefined, undefined, { cache }),
        faithfulnessJudge(settings, undefined, { cache }),
      ]
    ) {
      const [s] = await scores(judge, [unit]);
      assert.deepEqual(
        [s?.status, s?.value, s?.diagnostics.map((d) => d.code)],
        ["error", null, ["judge.refused"]],
        `${judge.name}: ${s?.reason}`,
      );
      assert.equal(
        s?.reason,
        `scorer error: the judge refused: the provider's content filter stopped its reply (finish_reason "content_filter")`,
      );
      // The call was made and paid for: its provenance stays.
      assert.equal(s?.provenance?.judge_model, "j");
      assert.equal(s?.provenance?.finish_reason, "content_filter");
      assert.equal(s?.provenance?.cost_usd, 40 / 1e6);
      assert.equal(new TargetCache(dir).peek(judge.cacheKey!(unit)), undefined);
    }
  });
  // An openai target given the same answer fails as it did: no text.
  const target = openaiTarget({ model: "bot", base_url: server.baseUrl });
  await assert.rejects(
    async () => await target.call({ input: "q" }, {}),
    /answered without a message text in choices\[0\]\.message\.content \(finish_reason "content_filter"\)$/,
  );
});

const REFUSED = "I'm sorry, I cannot assist with that request.";

for (
  const [form, message] of [
    [
      'a refusal beside content ""',
      { role: "assistant", content: "", refusal: REFUSED },
    ],
    [
      "a refusal content part",
      {
        role: "assistant",
        content: [{ type: "refusal", refusal: REFUSED }],
        refusal: null,
      },
    ],
    // A text part of "" (or whitespace) beside the refusal read as "", as a
    // string content of "" beside a refusal once did.
    [
      'a refusal content part beside a text part ""',
      {
        role: "assistant",
        content: [{ type: "text", text: "" }, {
          type: "refusal",
          refusal: REFUSED,
        }],
      },
    ],
    [
      'a refusal beside a content of text parts "\\n"',
      {
        role: "assistant",
        content: [{ type: "text", text: "\n" }],
        refusal: REFUSED,
      },
    ],
  ] as const
) {
  Deno.test(`${form} (OpenAI's structured outputs) is judge.refused quoting it, and an openai target's output with refusal: true`, async () => {
    // Read as content, the judge's reply was "" (judge.unparsable, "no
    // score") and the target's output an empty answer, the refusal lost; a
    // refusal part was "no message text" (scorer.error, a target error).
    const REFUSAL = REFUSED;
    await using server = fakeLlm({
      handler: (request) =>
        reply.json({
          model: (request.json as { model: string }).model,
          choices: [{
            index: 0,
            message,
            finish_reason: "stop",
          }],
          usage: { prompt_tokens: 40, completion_tokens: 12, total_tokens: 52 },
        }),
    });
    await withTempDir(async (dir) => {
      const cache = new TargetCache(dir);
      const settings = { model: "j", base_url: server.baseUrl };
      const unit: Unit = {
        example_id: "d#1",
        unit_id: "d#1",
        input: "q",
        output: "a",
        context: ["c"],
      };
      for (
        const judge of [
          llmJudge(settings, undefined, undefined, { cache }),
          faithfulnessJudge(settings, undefined, { cache }),
        ]
      ) {
        const [s] = await scores(judge, [unit]);
        assert.deepEqual(
          [s?.status, s?.value, s?.diagnostics.map((d) => d.code)],
          ["error", null, ["judge.refused"]],
          `${judge.name}: ${s?.reason}`,
        );
        assert.equal(
          s?.reason,
          `scorer error: the judge refused: ${JSON.stringify(REFUSAL)}`,
        );
        assert.equal(s?.provenance?.refusal, true);
        assert.equal(
          new TargetCache(dir).peek(judge.cacheKey!(unit)),
          undefined,
        );
      }
    });
    const target = openaiTarget({ model: "bot", base_url: server.baseUrl });
    const result = await target.call({ input: "q" }, {});
    assert.equal(result.output, REFUSAL);
    assert.equal(result.info?.refusal, true);
  });
}
