// The RAG and quality judges against a loopback server speaking the OpenAI
// chat completions API, which answers each prompt as the test says: every
// judge's reading and scoring, and its unparsable, incomplete and
// out-of-range replies.

import assert from "node:assert/strict";
import {
  answerRelevanceJudge,
  buildScorers,
  checkConfigText,
  ConfigError,
  contextPrecisionJudge,
  contextRecallJudge,
  correctnessJudge,
  DIAGNOSTIC_CODES,
  faithfulnessJudge,
  rubricJudge,
  type Score,
  type Scorer,
  scoreUnits,
  type Unit,
} from "../../mod.ts";
import { type FakeLlm, fakeLlm, lastMessage, reply } from "../_fake_llm.ts";
import { withTempDir } from "../_proc.ts";
import { assertNotApplicable, close } from "./_unit.ts";

/** A server that answers a prompt holding a key of `answers` with its value. */
function judgeServer(answers: Record<string, string>): FakeLlm {
  return fakeLlm({
    handler(request) {
      const prompt = lastMessage(request);
      for (const [key, content] of Object.entries(answers)) {
        if (prompt.includes(key)) return reply.ok(content);
      }
      return reply.error(400, '{"error":{"message":"no answer scripted"}}');
    },
  });
}

function rag(output: string, extra: Partial<Unit> = {}): Unit {
  return {
    example_id: "d#1",
    unit_id: "d#1",
    input: "Tell me about Paris",
    output,
    context: [
      "Paris is the capital of France.",
      "Paris has about 2.1 million inhabitants.",
    ],
    expected: "Paris is the capital of France and lies on the Seine.",
    ...extra,
  };
}

async function one(scorer: Scorer, unit: Unit): Promise<Score> {
  const scores = await Array.fromAsync(
    ReadableStream.from([unit]).pipeThrough(scoreUnits([scorer])),
  );
  assert.equal(scores.length, 1);
  return scores[0]!;
}

const claims = (...list: [string, boolean][]) =>
  JSON.stringify({
    claims: list.map(([claim, supported]) => ({ claim, supported })),
  });

Deno.test("faithfulnessJudge scores supported claims over claims and quotes the unsupported", async () => {
  await using server = judgeServer({
    "OUT-1": claims(
      ["Paris is the capital of France.", true],
      ["Paris was founded in 1200.", false],
      ["Paris has 2.1 million inhabitants.", true],
      ["Paris hosts the Louvre.", false],
    ),
  });
  const judge = faithfulnessJudge({
    model: "judge-m",
    base_url: server.baseUrl,
  });
  const s = await one(judge, rag("OUT-1"));
  assert.equal(s.status, "scored");
  assert.equal(s.validity, "valid");
  assert.equal(s.value, 0.5);
  assert.equal(s.passed, true);
  assert.equal(
    s.reason,
    '2 of 4 claims supported by the context; unsupported: "Paris was founded in 1200."; "Paris hosts the Louvre."',
  );
  assert.match(s.evaluator_version, /^faithfulness@[0-9a-f]{8}$/);
  // The judge's model, the prompt's hash and the tokens used.
  assert.equal(s.provenance?.judge_model, "judge-m");
  assert.match(String(s.provenance?.prompt), /^sha256:[0-9a-f]{64}$/);
  const usage = s.provenance?.usage as {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
  };
  assert.ok(usage.prompt_tokens > 0 && usage.completion_tokens > 0);
  assert.equal(
    usage.total_tokens,
    usage.prompt_tokens + usage.completion_tokens,
  );
  assert.deepEqual(
    (s.provenance?.verdict as { claims: unknown[] }).claims.length,
    4,
  );
  // What the judge was asked: the numbered passages, the answer, our system prompt.
  const body = server.requests[0]!.json as {
    model: string;
    messages: { role: string; content: string }[];
  };
  assert.equal(body.model, "judge-m");
  assert.equal(body.messages[0]!.role, "system");
  assert.match(body.messages[0]!.content, /Reply with one JSON object/);
  const prompt = body.messages[1]!.content;
  assert.ok(prompt.includes("[1] Paris is the capital of France."));
  assert.ok(prompt.includes("[2] Paris has about 2.1 million inhabitants."));
  assert.ok(prompt.includes("Answer:\nOUT-1"));
});

Deno.test("faithfulnessJudge: all claims supported, a threshold, and a reply in a code fence", async () => {
  const fence = "`".repeat(3);
  await using server = judgeServer({
    "OUT-2": `Here is my verdict:\n${fence}json\n${
      claims(["Paris is the capital of France.", true])
    }\n${fence}\nHope this helps {:}`,
    "OUT-3": claims(["a", true], ["b", true], ["c", false]),
  });
  const judge = faithfulnessJudge({
    model: "m",
    base_url: server.baseUrl,
    threshold: 0.8,
  });
  const all = await one(judge, rag("OUT-2"));
  assert.equal(all.value, 1);
  assert.equal(all.reason, "all 1 claim supported by the context");
  const most = await one(judge, rag("OUT-3"));
  close(most.value!, 2 / 3);
  assert.equal(most.passed, false);
});

Deno.test("faithfulnessJudge without context, or with an empty output, is not applicable and calls nothing", async () => {
  await using server = judgeServer({});
  const judge = faithfulnessJudge({ model: "m", base_url: server.baseUrl });
  const { context: _, ...bare } = rag("OUT");
  assertNotApplicable(
    await one(judge, bare),
    "not applicable: the case has no context",
  );
  assertNotApplicable(
    await one(judge, rag("OUT", { context: ["  ", ""] })),
    "not applicable: the case has no context",
  );
  assertNotApplicable(
    await one(judge, rag("  \n")),
    "not applicable: the output is empty",
  );
  assert.equal(server.count, 0);
});

Deno.test("faithfulnessJudge: an output in which the judge finds no claim is not applicable", async () => {
  await using server = judgeServer({ "Hello!": '{"claims": []}' });
  const judge = faithfulnessJudge({ model: "m", base_url: server.baseUrl });
  const s = await one(judge, rag("Hello!"));
  assertNotApplicable(
    s,
    "not applicable: the judge found no claim in the output",
  );
  assert.deepEqual(s.provenance?.verdict, { claims: [] });
  assert.equal(server.count, 1);
});

Deno.test("a judge's unparsable reply is an error with judge.unparsable, its provenance kept", async () => {
  await using server = judgeServer({
    "PROSE": "The answer looks faithful to me, 9/10.",
    "BROKEN": '{"claims": [{"claim": "x", "supported": true}',
    "NOLIST": '{"verdict": "supported"}',
    "YESNO": '{"claims": [{"claim": "x", "supported": "yes"}]}',
    "NOCLAIM": '{"claims": [{"supported": true}]}',
  });
  const judge = faithfulnessJudge({ model: "m", base_url: server.baseUrl });
  const cases: [string, RegExp][] = [
    [
      "PROSE",
      /^scorer error: the judge's reply holds no JSON object: "The answer/,
    ],
    ["BROKEN", /^scorer error: the judge's reply holds no JSON object/],
    ["NOLIST", /^scorer error: the judge's reply has no "claims" list$/],
    [
      "YESNO",
      /^scorer error: "claims" item 1 of the judge's reply has "supported": "yes", not true or false$/,
    ],
    [
      "NOCLAIM",
      /^scorer error: "claims" item 1 of the judge's reply has no "claim" text$/,
    ],
  ];
  for (const [output, reason] of cases) {
    const s = await one(judge, rag(output));
    assert.equal(s.status, "error", output);
    assert.equal(s.validity, "not_measured");
    assert.equal(s.value, null);
    assert.equal(s.passed, false);
    assert.match(s.reason!, reason);
    assert.equal(s.diagnostics[0]?.code, "judge.unparsable");
    assert.equal(s.diagnostics[0]?.severity, "error");
    assert.equal(s.provenance?.judge_model, "m");
    assert.ok(s.provenance?.usage !== undefined, "the tokens spent are kept");
  }
});

Deno.test("answerRelevanceJudge takes a grade within 0..1; outside it is invalid, not a number an error", async () => {
  await using server = judgeServer({
    "GOOD": '{"score": 0.75, "reason": "answers, with padding"}',
    "HIGH": '{"score": 7, "reason": "excellent"}',
    "WORDS": '{"score": "high"}',
    "NOSCORE": '{"reason": "fine"}',
  });
  const judge = answerRelevanceJudge({ model: "m", base_url: server.baseUrl });
  const good = await one(judge, rag("GOOD"));
  assert.equal(good.value, 0.75);
  assert.equal(good.validity, "valid");
  assert.equal(good.reason, "answers, with padding");
  assert.match(good.evaluator_version, /^answer_relevance@/);

  const high = await one(judge, rag("HIGH"));
  assert.equal(high.status, "scored");
  assert.equal(high.validity, "invalid");
  assert.equal(high.value, 7);
  assert.equal(high.reason, "the judge gave 7, outside 0..1: excellent");
  assert.equal(high.diagnostics[0]?.code, "judge.out_of_range");
  assert.equal(high.diagnostics[0]?.severity, "warning");

  const words = await one(judge, rag("WORDS"));
  assert.equal(words.status, "error");
  assert.equal(
    words.reason,
    `scorer error: the judge's reply has no numeric "score"; "score" is "high"`,
  );
  assert.equal(words.diagnostics[0]?.code, "judge.unparsable");
  const none = await one(judge, rag("NOSCORE"));
  assert.equal(
    none.reason,
    `scorer error: the judge's reply has no numeric "score"`,
  );
});

Deno.test("contextPrecisionJudge is the average precision of the chunks judged useful", async () => {
  const chunks = (...useful: boolean[]) =>
    JSON.stringify({
      chunks: useful.map((u, i) => ({ chunk: i + 1, useful: u })),
    });
  await using server = judgeServer({
    "FIRST": chunks(true, false, false, true),
    "LAST": chunks(false, false, true),
    "NONE": chunks(false, false),
    "SHORT": chunks(true),
    "ORDER":
      '{"chunks": [{"chunk": 2, "useful": true}, {"chunk": 1, "useful": false}]}',
  });
  const judge = contextPrecisionJudge({ model: "m", base_url: server.baseUrl });
  // The judge reads the input, expected and context, not the output: the
  // cases are told apart by their input, and an empty output is no matter.
  const four = ["a", "b", "c", "d"];
  // Useful at ranks 1 and 4: (1/1 + 2/4) / 2, by hand.
  const first = await one(judge, rag("", { input: "FIRST", context: four }));
  assert.equal(first.value, 0.75);
  assert.equal(
    first.reason,
    "useful chunks: 1, 4 of 4; average precision 0.75",
  );
  // Useful at rank 3 only: (1/3) / 1.
  const last = await one(
    judge,
    rag("", { input: "LAST", context: ["a", "b", "c"] }),
  );
  close(last.value!, 1 / 3);
  assert.equal(last.passed, false);
  const none = await one(judge, rag("", { input: "NONE" }));
  assert.equal(none.value, 0);
  assert.equal(none.reason, "none of the 2 chunks is useful");
  assert.ok(
    server.requests.some((r) => lastMessage(r).includes("numbered 1 to 4")),
  );

  const short = await one(judge, rag("", { input: "SHORT" }));
  assert.equal(short.status, "error");
  assert.equal(
    short.reason,
    "scorer error: the judge's reply judges 1 chunk; the case has 2",
  );
  assert.equal(short.diagnostics[0]?.code, "judge.incomplete");
  const order = await one(judge, rag("", { input: "ORDER" }));
  assert.equal(order.diagnostics[0]?.code, "judge.incomplete");
  assert.match(order.reason!, /item 1 of the judge's reply is for chunk 2/);
});

Deno.test("contextPrecisionJudge and contextRecallJudge need context and expected", async () => {
  await using server = judgeServer({});
  for (
    const judge of [
      contextPrecisionJudge({ model: "m", base_url: server.baseUrl }),
      contextRecallJudge({ model: "m", base_url: server.baseUrl }),
    ]
  ) {
    const { expected: _, ...noExpected } = rag("OUT");
    assertNotApplicable(
      await one(judge, noExpected),
      "not applicable: the case has no expected",
    );
    assertNotApplicable(
      await one(judge, rag("OUT", { expected: null })),
      "not applicable: the case has no expected",
    );
    const { context: __, ...noContext } = rag("OUT");
    assertNotApplicable(
      await one(judge, noContext),
      "not applicable: the case has no context",
    );
  }
  assert.equal(server.count, 0);
});

Deno.test("contextRecallJudge scores the statements of expected that the context holds", async () => {
  await using server = judgeServer({
    "lies on the Seine": JSON.stringify({
      statements: [
        { statement: "Paris is the capital of France.", attributed: true },
        { statement: "Paris lies on the Seine.", attributed: false },
      ],
    }),
  });
  const judge = contextRecallJudge({ model: "m", base_url: server.baseUrl });
  const s = await one(judge, rag("anything"));
  assert.equal(s.value, 0.5);
  assert.equal(
    s.reason,
    '1 of 2 statements of the expected answer in the context; not in it: "Paris lies on the Seine."',
  );
  // The judge reads expected and the context; the output is not its business.
  const prompt = lastMessage(server.requests[0]!);
  assert.ok(prompt.includes("Reference answer:\nParis is the capital"));
  assert.ok(!prompt.includes("anything"));
});

Deno.test("correctnessJudge scores stated facts over facts, naming missing and contradicted ones", async () => {
  const facts = (...list: [string, string][]) =>
    JSON.stringify({
      facts: list.map(([fact, verdict]) => ({ fact, verdict })),
    });
  await using server = judgeServer({
    "OUT-A": facts(
      ["The window is 30 days.", "stated"],
      ["Refunds go to the card.", "contradicted"],
      ["A receipt is needed.", "missing"],
    ),
    "OUT-B": facts(["The window is 30 days.", "stated"]),
    "OUT-C": facts(["The window is 30 days.", "partly"]),
  });
  const judge = correctnessJudge({ model: "m", base_url: server.baseUrl });
  const a = await one(judge, rag("OUT-A", { expected: { window: 30 } }));
  close(a.value!, 1 / 3);
  assert.equal(
    a.reason,
    '1 of 3 facts of the expected answer stated; missing: "A receipt is needed."; contradicted: "Refunds go to the card."',
  );
  // An expected that is not text reaches the judge as JSON.
  assert.ok(lastMessage(server.requests[0]!).includes('{"window":30}'));
  const b = await one(judge, rag("OUT-B"));
  assert.equal(b.value, 1);
  const c = await one(judge, rag("OUT-C"));
  assert.equal(c.status, "error");
  assert.match(
    c.reason!,
    /"verdict": "partly", not "stated", "missing" or "contradicted"/,
  );
  const { expected: _, ...bare } = rag("OUT-B");
  assertNotApplicable(await one(judge, bare));
});

Deno.test("rubricJudge maps a grade from its scale onto 0..1; a grade off the scale is invalid", async () => {
  await using server = judgeServer({
    "OUT-4": '{"score": 4, "reason": "polite, one slip"}',
    "OUT-9": '{"score": 9, "reason": "superb"}',
  });
  const judge = rubricJudge({
    model: "m",
    base_url: server.baseUrl,
    name: "tone",
    rubric: "5: polite and exact. 1: rude. {{input}} stays as written.",
    scale: [1, 5],
  });
  const s = await one(judge, rag("OUT-4"));
  assert.equal(s.metric, "tone");
  assert.equal(s.value, 0.75);
  assert.equal(
    s.provenance?.verdict && (s.provenance.verdict as { score: number }).score,
    4,
  );
  const prompt = lastMessage(server.requests[0]!);
  assert.ok(
    prompt.includes("{{input}} stays as written."),
    "the rubric is not a template",
  );
  assert.ok(prompt.includes("from 1 (worst) to 5 (best)"));
  const off = await one(judge, rag("OUT-9"));
  assert.equal(off.validity, "invalid");
  assert.equal(off.value, 2);
  assert.equal(off.diagnostics[0]?.code, "judge.out_of_range");
  assert.equal(off.reason, "the judge gave 9, outside 1..5: superb");
  assert.throws(
    () => rubricJudge({ model: "m", rubric: "r", scale: [5, 1] }),
    RangeError,
  );
  assert.throws(() => rubricJudge({ model: "m", rubric: " \n" }), RangeError);
});

Deno.test("each judge's version names its type and changes with the model, the threshold and the rubric", () => {
  const base = { model: "m", base_url: "http://127.0.0.1:9/v1" };
  const makers = [
    faithfulnessJudge,
    answerRelevanceJudge,
    contextPrecisionJudge,
    contextRecallJudge,
    correctnessJudge,
  ];
  const versions = makers.map((make) => make(base).version);
  assert.deepEqual(
    versions.map((v) => v.split("@")[0]),
    [
      "faithfulness",
      "answer_relevance",
      "context_precision",
      "context_recall",
      "correctness",
    ],
  );
  assert.equal(new Set(versions.map((v) => v.split("@")[1])).size, 5);
  const f = faithfulnessJudge(base).version;
  assert.equal(faithfulnessJudge(base).version, f);
  assert.notEqual(faithfulnessJudge({ ...base, model: "m2" }).version, f);
  assert.notEqual(faithfulnessJudge({ ...base, threshold: 0.9 }).version, f);
  assert.notEqual(
    faithfulnessJudge({ ...base, params: { temperature: 0 } }).version,
    f,
  );
  assert.notEqual(
    rubricJudge({ ...base, rubric: "a" }).version,
    rubricJudge({ ...base, rubric: "b" }).version,
  );
  assert.notEqual(
    rubricJudge({ ...base, rubric: "a" }).version,
    rubricJudge({ ...base, rubric: "a", scale: [1, 5] }).version,
  );
  assert.throws(() => faithfulnessJudge({ ...base, threshold: 2 }), RangeError);
});

Deno.test("the judges' diagnostic codes are listed", () => {
  for (
    const code of ["judge.unparsable", "judge.incomplete", "judge.out_of_range"]
  ) {
    assert.ok(DIAGNOSTIC_CODES[code] !== undefined, code);
  }
});

const HEAD = "dataset: cases.jsonl\ntarget: { type: replay }\nscorers:\n";

Deno.test("the judges from a config: each type, its generation keys, a rubric file beside the config", async () => {
  await using server = judgeServer({
    "Rubric:\nBe kind.": '{"score": 0.9, "reason": "kind"}',
    "OUT-1": claims(["x", true]),
  });
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/rubrics`);
    await Deno.writeTextFile(`${dir}/rubrics/kind.md`, "Be kind.\n");
    const url = server.baseUrl;
    const yaml = HEAD +
      `  - { type: faithfulness, model: m, base_url: "${url}", temperature: 0, threshold: 0.9 }\n` +
      `  - { type: answer_relevance, model: m, base_url: "${url}" }\n` +
      `  - { type: context_precision, model: m, base_url: "${url}" }\n` +
      `  - { type: context_recall, model: m, base_url: "${url}" }\n` +
      `  - { type: correctness, name: right, model: m, base_url: "${url}" }\n` +
      `  - { type: rubric, file: rubrics/kind.md, model: m, base_url: "${url}" }\n`;
    const config = await checkConfigText(yaml, `${dir}/suite.yaml`);
    const scorers = await buildScorers(config, `${dir}/suite.yaml`, {
      cwd: dir,
    });
    assert.deepEqual(scorers.map((s) => s.name), [
      "faithfulness",
      "answer_relevance",
      "context_precision",
      "context_recall",
      "right",
      "rubric",
    ]);
    const faithful = await one(scorers[0]!, rag("OUT-1"));
    assert.equal(faithful.value, 1);
    const body = server.requests[0]!.json as Record<string, unknown>;
    assert.equal(body.temperature, 0);
    const rubric = await one(scorers[5]!, rag("OUT-1"));
    assert.equal(rubric.value, 0.9);
  });
});

Deno.test("a rubric file that is missing or empty, or a scale that is not low to high, is a config error at its line", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/empty.md`, "  \n");
    const file = `${dir}/suite.yaml`;
    const attempt = async (scorer: string) => {
      const yaml = `${HEAD}  - { type: exact_match }\n  - ${scorer}\n`;
      await Deno.writeTextFile(file, yaml);
      const config = await checkConfigText(yaml, file);
      const error = await buildScorers(config, file, { cwd: dir }).then(
        () => undefined,
        (e) => e,
      );
      assert.ok(error instanceof ConfigError, String(error));
      assert.equal(error.exitCode, 2);
      return error;
    };
    const missing = await attempt(
      "{ type: rubric, file: rubrics/nope.md, model: m }",
    );
    assert.equal(missing.line, 5);
    assert.match(
      missing.message,
      /line 5: "scorers\[1\]\.file": cannot read the rubric "rubrics\/nope\.md": no such file/,
    );
    const empty = await attempt("{ type: rubric, file: empty.md, model: m }");
    assert.match(
      empty.message,
      /"scorers\[1\]\.file": the rubric "empty\.md" is empty/,
    );
    const backwards = await attempt(
      "{ type: rubric, file: empty.md, model: m, scale: [5, 1, 0] }",
    );
    assert.match(
      backwards.message,
      /"scorers\[1\]\.scale" must be two numbers/,
    );
    await Deno.writeTextFile(`${dir}/r.md`, "Be kind.");
    const reversed = await attempt(
      "{ type: rubric, file: r.md, model: m, scale: [5, 1] }",
    );
    assert.match(
      reversed.message,
      /"scorers\[1\]\.scale": The scale of rubric judge "rubric" must be two numbers, low below high, not \[5,1\]/,
    );
  });
});

Deno.test("a judge's threshold outside 0..1 and a rubric without a file are refused by the config's shape", async () => {
  for (
    const scorer of [
      "{ type: faithfulness, model: m, threshold: 1.5 }",
      "{ type: rubric, model: m }",
      "{ type: correctness }",
    ]
  ) {
    await assert.rejects(
      () => checkConfigText(`${HEAD}  - ${scorer}\n`, "suite.yaml"),
      ConfigError,
      scorer,
    );
  }
});

Deno.test("the README shows each judge's prompt as the judges send it", async () => {
  const prompts = await import("../../src/scorers/_judge_prompts.ts");
  const readme = await Deno.readTextFile(
    new URL("../../README.md", import.meta.url),
  );
  const section = readme.slice(
    readme.indexOf("#### RAG and quality judges"),
    readme.indexOf("### Config"),
  );
  for (const [name, text] of Object.entries(prompts)) {
    assert.ok(section.includes(`\n${text}\n`), `the README lacks ${name}`);
  }
});
