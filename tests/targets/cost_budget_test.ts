// Cost and budget: prices per million tokens on `openai` targets and judges
// turn each reply's `usage` into `cost_usd`, the target's and the judge's
// apart, totals in the summary, the record and the reports; `budget_usd`
// stops new calls once spent. Against a loopback server that returns usage.

import assert from "node:assert/strict";
import { cli, reportAgain } from "../_cli.ts";
import { fakeLlm, lastMessage, reply } from "../_fake_llm.ts";
import { withTempDir } from "../_proc.ts";
import { Budget, openaiTarget, ReplyError } from "../../mod.ts";

// 1000 prompt and 100 completion tokens per call: at 1 and 10 USD per
// million, a target call costs 0.002; at 2 and 20, a judge call 0.004.
const USAGE = {
  prompt_tokens: 1000,
  completion_tokens: 100,
  total_tokens: 1100,
};

function handler(request: Parameters<typeof lastMessage>[0]) {
  const model = (request.json as { model?: string }).model;
  return model === "judge"
    ? reply.ok('{"score": 1, "reason": "right"}', { usage: USAGE })
    : reply.ok(`A: ${lastMessage(request)}`, { usage: USAGE });
}

function suite(baseUrl: string, extra = "", judge = true): string {
  return `dataset: data.jsonl
target:
  type: openai
  base_url: ${baseUrl}
  model: bot
  cost: { input_per_1m: 1, output_per_1m: 10 }
scorers:
  - type: exact_match
  - type: cost
    max_usd: 0.0015
${
    judge
      ? `  - type: llm_judge
    base_url: ${baseUrl}
    model: judge
    cost: { input_per_1m: 2, output_per_1m: 20 }
`
      : ""
  }concurrency: 1
${extra}`;
}

const cases = (n: number) =>
  Array.from(
    { length: n },
    (_, i) => JSON.stringify({ input: `q${i + 1}`, expected: `A: q${i + 1}` }),
  ).join("\n") + "\n";

interface Line {
  unit_id: string;
  metric: string;
  status: string;
  value: number | null;
  reason?: string;
  diagnostics: Array<{ code: string }>;
  provenance?: Record<string, unknown>;
}

const lines = (text: string): Line[] =>
  text.trim() === "" ? [] : text.trim().split("\n").map((l) => JSON.parse(l));

Deno.test("run records each unit's tokens and cost, the target's and the judge's apart, with totals in the summary, record and reports", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({ handler });
    await Deno.writeTextFile(`${dir}/suite.yaml`, suite(server.baseUrl));
    await Deno.writeTextFile(`${dir}/data.jsonl`, cases(3));
    const out = await cli([
      "run",
      "suite.yaml",
      "--record",
      "run.json",
      "--markdown",
      "summary.md",
      "--junit",
      "junit.xml",
      "--html",
      "report.html",
    ], dir);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(server.count, 6);
    assert.match(
      out.stderr,
      /cost: \$0\.018 \(target \$0\.006: 3 calls, 3000\+300 tokens; judge \$0\.012: 3 calls, 3000\+300 tokens\)/,
    );
    const record = JSON.parse(await Deno.readTextFile(`${dir}/run.json`));
    const unit = record.units[0];
    assert.equal(unit.target.cost_usd, 0.002);
    assert.deepEqual(unit.target.usage, USAGE);
    assert.deepEqual(unit.judge, {
      calls: 1,
      cached: 0,
      input_tokens: 1000,
      output_tokens: 100,
      cost_usd: 0.004,
    });
    const judged = unit.scores.find((s: Line) => s.metric === "llm_judge");
    assert.equal(judged.provenance.cost_usd, 0.004);
    assert.equal(record.cost.cost_usd, 0.018);
    assert.equal(record.cost.target.cost_usd, 0.006);
    assert.equal(record.cost.judge.calls, 3);
    // The cost scorer reads target.cost_usd: 0.002 is over 0.0015.
    const cost = unit.scores.find((s: Line) => s.metric === "cost");
    assert.deepEqual([cost.status, cost.value], ["scored", 0]);
    const markdown = await Deno.readTextFile(`${dir}/summary.md`);
    assert.match(markdown, /\*\*Cost: \$0\.018 \(target \$0\.006: 3 calls/);
    const junit = await Deno.readTextFile(`${dir}/junit.xml`);
    assert.match(junit, /<property name="cost_usd" value="0\.018"\/>/);
    assert.match(junit, /<property name="cost_usd.judge" value="0\.012"\/>/);
    const html = await Deno.readTextFile(`${dir}/report.html`);
    assert.match(html, /0\.018 \(target \$0\.006: 3 calls/);

    // Again: every answer is cached, and a cached answer costs nothing.
    const again = await cli(
      ["run", "suite.yaml", "--record", "again.json"],
      dir,
    );
    assert.equal(again.code, 0, again.stderr);
    assert.equal(server.count, 6);
    assert.match(
      again.stderr,
      /cost: \$0 \(target \$0: 0 calls, 0\+0 tokens, 3 cached; judge \$0: 0 calls, 0\+0 tokens, 3 cached\)/,
    );
    const cached = JSON.parse(await Deno.readTextFile(`${dir}/again.json`));
    assert.equal(cached.units[0].target.cost_usd, 0);
    assert.equal(cached.units[0].target.cached, true);
    assert.equal(cached.units[0].judge.cached, 1);
    const cheap = cached.units[0].scores.find((s: Line) => s.metric === "cost");
    assert.equal(cheap.value, 1);
  });
});

/**
 * Five cases, no judge, and a budget_usd of 0.005: at 0.002 per target call,
 * the third reaches 0.006 and the last two are refused.
 */
async function overBudget(dir: string, baseUrl: string): Promise<void> {
  await Deno.writeTextFile(
    `${dir}/suite.yaml`,
    suite(baseUrl, "budget_usd: 0.005\n", false),
  );
  await Deno.writeTextFile(`${dir}/data.jsonl`, cases(5));
}

Deno.test("run stops calling once budget_usd is spent: the units not run are blocked (budget.exhausted) and run exits 1", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({ handler });
    await overBudget(dir, server.baseUrl);
    const out = await cli(["run", "suite.yaml", "--record", "run.json"], dir);
    assert.equal(out.code, 1, out.stderr);
    assert.equal(server.count, 3);
    assert.match(
      out.stderr,
      /evalpipe: budget reached: \$0\.006 spent of budget_usd \$0\.005; 2 calls were not made, their Scores are blocked \(budget\.exhausted\)/,
    );
    // The cache's line counts the calls made, not the two refused.
    assert.match(out.stderr, /^target cache: 0 hits, 3 calls$/m);
    assert.match(out.stderr, /^cost: \$0\.006 \(target \$0\.006: 3 calls,/m);
    const scores = lines(out.stdout).filter((s) => s.metric === "exact_match");
    assert.deepEqual(
      scores.map((s) => s.status),
      ["scored", "scored", "scored", "blocked", "blocked"],
    );
    assert.deepEqual(scores[3]?.diagnostics.map((d) => d.code), [
      "budget.exhausted",
    ]);
    assert.match(
      scores[3]?.reason ?? "",
      /^budget: the budget_usd of \$0\.005 is spent \(\$0\.006 so far\); no new call starts$/,
    );
    const record = JSON.parse(await Deno.readTextFile(`${dir}/run.json`));
    assert.equal(record.units.length, 5);
    assert.equal(record.units[4].output, null);
    assert.equal(record.units[4].target.error_code, "budget.exhausted");

    // Cached answers cost nothing: the same budget now runs them all, and
    // only the two calls left are paid for.
    const again = await cli(["run", "suite.yaml"], dir);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(server.count, 5);
    assert.ok(
      lines(again.stdout).every((s) => s.status !== "blocked"),
      again.stdout,
    );
  });
});

Deno.test("run whose budget is spent says so in the Markdown's headline and an ::error under GitHub Actions, not that no gate failed", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({ handler });
    await overBudget(dir, server.baseUrl);
    const out = await cli(
      ["run", "suite.yaml", "--markdown", "summary.md"],
      dir,
      { GITHUB_ACTIONS: "true" },
    );
    assert.equal(out.code, 1, out.stderr);
    const markdown = await Deno.readTextFile(`${dir}/summary.md`);
    assert.match(
      markdown,
      /^❌ budget reached\\: \$0\.006 spent of budget\\_usd \$0\.005; 2 calls were not made, their Scores are blocked \\\(budget\.exhausted\\\) · 5 units, 5 failing · run `/m,
    );
    assert.doesNotMatch(markdown, /no gate failed/);
    assert.ok(
      out.stderr.split("\n").includes(
        "::error title=evalpipe budget reached::budget reached: $0.006 spent of budget_usd $0.005; 2 calls were not made, their Scores are blocked (budget.exhausted)",
      ),
      out.stderr,
    );
  });
});

Deno.test("report --markdown and --html of a record say what the run spent of its budget, and that it ran out, as run --markdown does", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({ handler });
    await overBudget(dir, server.baseUrl);
    const out = await cli(
      ["run", "suite.yaml", "--record", "run.json", "--markdown", "run.md"],
      dir,
    );
    assert.equal(out.code, 1, out.stderr);
    const record = JSON.parse(await Deno.readTextFile(`${dir}/run.json`));
    assert.deepEqual(Object.keys(record.budget), [
      "limit_usd",
      "spent_usd",
      "refused",
    ]);
    assert.equal(record.budget.limit_usd, 0.005);
    assert.ok(Math.abs(record.budget.spent_usd - 0.006) < 1e-9);
    assert.equal(record.budget.refused, 2);
    const { markdown, html } = await reportAgain(dir, "run.json", "run.md");
    assert.match(
      markdown,
      /^❌ budget reached\\: \$0\.006 spent of budget\\_usd \$0\.005; 2 calls were not made/m,
    );
    assert.match(
      markdown,
      /^\*\*Budget:\*\* ❌ reached: \$0\.006 spent of budget\\_usd \$0\.005; 2 calls were not made, their Scores are blocked \\\(budget\.exhausted\\\)$/m,
    );
    assert.match(
      html,
      /\["budget","reached: \$0\.006 spent of budget_usd \$0\.005; 2 calls were not made, their Scores are blocked \(budget\.exhausted\)"\]/,
    );

    // Within its budget: what it spent, and no failure. The answers are
    // cached now: only the two calls left are paid for.
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      suite(server.baseUrl, "budget_usd: 1\n", false),
    );
    const within = await cli(["run", "suite.yaml", "--record", "w.json"], dir);
    assert.equal(within.code, 0, within.stderr);
    const again = await cli(["report", "w.json", "--markdown", "w.md"], dir);
    assert.equal(again.code, 0, again.stderr);
    const spent = await Deno.readTextFile(`${dir}/w.md`);
    assert.match(
      spent,
      /^\*\*Budget:\*\* \$0\.004 spent of budget\\_usd \$1$/m,
    );
    assert.doesNotMatch(spent, /❌/);
  });
});

Deno.test("a judge the budget refuses gives a blocked Score (budget.exhausted), not an error", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({ handler });
    // Two target calls (0.002 each) and the first judge call (0.004) spend
    // 0.008: the second judge call is refused (one call at a time a stage).
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      suite(server.baseUrl, "budget_usd: 0.005\n"),
    );
    await Deno.writeTextFile(`${dir}/data.jsonl`, cases(2));
    const out = await cli(["run", "suite.yaml"], dir);
    assert.equal(out.code, 1, out.stderr);
    assert.equal(server.count, 3);
    const scores = lines(out.stdout);
    assert.deepEqual(
      scores.map((s) => [s.unit_id, s.metric, s.status]),
      [
        ["data.jsonl#1", "exact_match", "scored"],
        ["data.jsonl#1", "cost", "scored"],
        ["data.jsonl#1", "llm_judge", "scored"],
        ["data.jsonl#2", "exact_match", "scored"],
        ["data.jsonl#2", "cost", "scored"],
        ["data.jsonl#2", "llm_judge", "blocked"],
      ],
    );
    assert.equal(scores[5]?.diagnostics[0]?.code, "budget.exhausted");
    assert.match(scores[5]?.reason ?? "", /^budget: the budget_usd of/);
    assert.match(out.stderr, /^judge cache: 0 hits, 1 call$/m);
    assert.match(out.stderr, /^cost: \$0\.008 \(/m);
    assert.match(
      out.stderr,
      /budget reached: \$0\.008 spent .*; 1 call was not made/,
    );
  });
});

Deno.test("a judge reply without a score is an error Score that keeps its call's usage and cost, counted in every total", async () => {
  await withTempDir(async (dir) => {
    // The judge cannot grade the second case, but it was asked and paid.
    await using server = fakeLlm({
      handler(request) {
        const model = (request.json as { model?: string }).model;
        return model === "judge" && lastMessage(request).includes("q2")
          ? reply.ok("I cannot grade this.", { usage: USAGE })
          : handler(request);
      },
    });
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      suite(server.baseUrl, "budget_usd: 0.013\n"),
    );
    await Deno.writeTextFile(`${dir}/data.jsonl`, cases(3));
    const out = await cli(["run", "suite.yaml", "--record", "run.json"], dir);
    assert.equal(out.code, 1, out.stderr);
    const judged = lines(out.stdout).filter((s) => s.metric === "llm_judge");
    assert.deepEqual(judged.map((s) => s.status), [
      "scored",
      "error",
      "blocked",
    ]);
    const unread = judged[1]!;
    assert.equal(unread.value, null);
    assert.deepEqual(unread.diagnostics.map((d) => d.code), [
      "judge.unparsable",
    ]);
    assert.equal(unread.provenance?.judge_model, "judge");
    assert.deepEqual(unread.provenance?.usage, USAGE);
    assert.equal(unread.provenance?.cost_usd, 0.004);
    // Three target calls (0.006) and two judge calls (0.008) start, in
    // whatever order, below the budget; the third judge call is refused.
    assert.match(
      out.stderr,
      /^cost: \$0\.014 \(target \$0\.006: 3 calls, 3000\+300 tokens; judge \$0\.008: 2 calls, 2000\+200 tokens\)$/m,
    );
    assert.match(
      out.stderr,
      /budget reached: \$0\.014 spent of budget_usd \$0\.013; 1 call was not made/,
    );
    const record = JSON.parse(await Deno.readTextFile(`${dir}/run.json`));
    assert.equal(record.cost.cost_usd, 0.014);
    assert.equal(record.cost.judge.calls, 2);
    assert.equal(record.units[1].judge.cost_usd, 0.004);
  });
});

/** A chat completion whose message has no text, with the usage billed. */
function textless(model: string, finish_reason: string) {
  return reply.json({
    model,
    choices: [{
      index: 0,
      message: finish_reason === "content_filter"
        ? { role: "assistant" }
        : { role: "assistant", content: null },
      finish_reason,
    }],
    usage: USAGE,
  });
}

Deno.test("a judge reply without text (a content filter's, a length finish) is charged to budget_usd, and its error Score keeps the cost", async () => {
  await withTempDir(async (dir) => {
    // Azure's filter for the first case, a reasoning model that spent its
    // max_tokens for the second: both billed 1000+100 tokens, 0.004 each.
    await using server = fakeLlm({
      handler: (request) =>
        textless(
          "judge",
          lastMessage(request).includes("q1") ? "content_filter" : "length",
        ),
    });
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: data.jsonl
target: { type: replay }
scorers:
  - type: llm_judge
    base_url: ${server.baseUrl}
    model: judge
    cost: { input_per_1m: 2, output_per_1m: 20 }
concurrency: 1
budget_usd: 0.005
`,
    );
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      [1, 2, 3].map((i) =>
        JSON.stringify({ input: `q${i}`, output: `A: q${i}` })
      ).join("\n") + "\n",
    );
    const out = await cli(["run", "suite.yaml", "--record", "run.json"], dir);
    // 0.004, then 0.008: the third call is refused.
    assert.equal(out.code, 1, out.stderr);
    assert.equal(server.count, 2);
    const judged = lines(out.stdout);
    assert.deepEqual(
      judged.map((s) => [s.status, s.diagnostics.map((d) => d.code)]),
      [
        ["error", ["judge.refused"]],
        ["error", ["scorer.error"]],
        ["blocked", ["budget.exhausted"]],
      ],
    );
    assert.match(
      judged[1]?.reason ?? "",
      /^scorer error: .* answered without a message text in choices\[0\]\.message\.content \(finish_reason "length"/,
    );
    for (const s of judged.slice(0, 2)) {
      assert.deepEqual(s.provenance?.usage, USAGE);
      assert.equal(s.provenance?.cost_usd, 0.004);
    }
    assert.match(
      out.stderr,
      /budget reached: \$0\.008 spent of budget_usd \$0\.005; 1 call was not made/,
    );
    assert.match(out.stderr, /^cost: \$0\.008 \(judge \$0\.008: 2 calls,/m);
    const record = JSON.parse(await Deno.readTextFile(`${dir}/run.json`));
    assert.equal(record.budget.spent_usd, 0.008);
    assert.equal(record.cost.judge.cost_usd, 0.008);
  });
});

Deno.test("an openai target's reply without text is charged to budget_usd, and its failed unit keeps the usage and cost", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({
      handler: () => textless("bot", "length"),
    });
    await overBudget(dir, server.baseUrl);
    const out = await cli(["run", "suite.yaml", "--record", "run.json"], dir);
    // 0.002 a call: the third reaches 0.006 and the last two are refused.
    assert.equal(out.code, 1, out.stderr);
    assert.equal(server.count, 3);
    assert.match(
      out.stderr,
      /budget reached: \$0\.006 spent of budget_usd \$0\.005; 2 calls were not made/,
    );
    assert.match(out.stderr, /^cost: \$0\.006 \(target \$0\.006: 3 calls,/m);
    const record = JSON.parse(await Deno.readTextFile(`${dir}/run.json`));
    const unit = record.units[0];
    assert.match(unit.target.error, /finish_reason "length"/);
    assert.equal(unit.output, null);
    assert.deepEqual(unit.target.usage, USAGE);
    assert.equal(unit.target.cost_usd, 0.002);
    assert.equal(unit.target.finish_reason, "length");
    assert.equal(record.units[3].target.error_code, "budget.exhausted");
    assert.equal(record.cost.target.cost_usd, 0.006);
  });
});

Deno.test("a 200 reply with an error and usage (billed) is charged to budget_usd, each attempt, and its failed unit or error Score keeps the cost", async () => {
  await withTempDir(async (dir) => {
    // A proxy that answers 200 with an error after the model ran: billed
    // 1000+100 tokens each time. The target retries once (0.002 an
    // attempt); the judge's error is a refused request (code 400).
    await using server = fakeLlm({
      handler: (request) =>
        reply.json({
          error: (request.json as { model?: string }).model === "judge"
            ? { message: "context too long", code: 400 }
            : { message: "model overloaded" },
          usage: USAGE,
        }),
    });
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      suite(server.baseUrl, "budget_usd: 0.005\n", false).replace(
        "  model: bot\n",
        "  model: bot\n  retries: 1\n",
      ),
    );
    await Deno.writeTextFile(`${dir}/data.jsonl`, cases(5));
    const out = await cli(["run", "suite.yaml", "--record", "run.json"], dir);
    // 0.004 the first unit; the second's first attempt reaches 0.006, so
    // its retry is refused (it was made, reaching 0.008, before), and the
    // last three are refused.
    assert.equal(out.code, 1, out.stderr);
    assert.equal(server.count, 3);
    assert.match(out.stderr, /^cost: \$0\.006 \(target \$0\.006: 2 calls,/m);
    const record = JSON.parse(await Deno.readTextFile(`${dir}/run.json`));
    assert.equal(record.budget.spent_usd, 0.006);
    assert.equal(record.cost.target.cost_usd, 0.006);
    const unit = record.units[0];
    assert.match(
      unit.target.error,
      /answered HTTP 200 with an error: model overloaded \(after 2 attempts\)/,
    );
    assert.equal(unit.target.cost_usd, 0.004);
    assert.equal(unit.target.attempts, 2);
    assert.deepEqual(unit.target.usage, {
      prompt_tokens: 2000,
      completion_tokens: 200,
      total_tokens: 2200,
    });
    const refused = record.units[1];
    assert.equal(refused.target.error_code, "budget.exhausted");
    assert.match(
      refused.target.error,
      /nor this call's retry after 1 attempt$/,
    );
    assert.equal(refused.target.cost_usd, 0.002);
    assert.equal(refused.target.attempts, 1);
    assert.equal(record.units[2].target.error_code, "budget.exhausted");

    await Deno.writeTextFile(
      `${dir}/judge.yaml`,
      `dataset: judged.jsonl
target: { type: replay }
scorers:
  - type: llm_judge
    base_url: ${server.baseUrl}
    model: judge
    cost: { input_per_1m: 2, output_per_1m: 20 }
`,
    );
    await Deno.writeTextFile(
      `${dir}/judged.jsonl`,
      JSON.stringify({ input: "q1", output: "A: q1" }) + "\n",
    );
    const judged = await cli(["run", "judge.yaml"], dir);
    assert.equal(judged.code, 1, judged.stderr);
    const [score] = lines(judged.stdout);
    assert.equal(score?.status, "error");
    assert.equal(score?.value, null);
    assert.match(score?.reason ?? "", /^scorer error: .*context too long/);
    assert.equal(score?.provenance?.cost_usd, 0.004);
    assert.deepEqual(score?.provenance?.usage, USAGE);
    assert.match(judged.stderr, /^cost: \$0\.004 \(judge \$0\.004: 1 call/m);
  });
});

Deno.test("an openai target's answer after a retried 200 error with usage counts both attempts' usage and cost, as the budget does", async () => {
  await using server = fakeLlm({
    script: [
      reply.json({ error: { message: "model overloaded" }, usage: USAGE }),
      reply.ok("fine", { usage: USAGE }),
    ],
  });
  const budget = new Budget(1);
  const target = openaiTarget(
    {
      model: "bot",
      base_url: server.baseUrl,
      retries: 1,
      cost: { input_per_1m: 1, output_per_1m: 10 },
    },
    undefined,
    { budget },
  );
  const result = await target.call({ input: "q" }, {});
  assert.equal(result.output, "fine");
  assert.equal(server.count, 2);
  assert.equal(result.info?.cost_usd, 0.004);
  assert.equal(budget.spent, 0.004);
  assert.equal(result.info?.attempts, 2);
  assert.deepEqual(result.info?.usage, {
    prompt_tokens: 2000,
    completion_tokens: 200,
    total_tokens: 2200,
  });
});

Deno.test("an openai target's retry starts only while budget_usd lasts: a retry it refuses ends the call as budget.exhausted, its billed attempts kept", async () => {
  // Every attempt is a billed 200 error (0.002 each): with 3 retries the
  // call paid 4 attempts (0.008) against a budget of 0.003.
  await using server = fakeLlm({
    handler: () =>
      reply.json({ error: { message: "model overloaded" }, usage: USAGE }),
  });
  const budget = new Budget(0.003);
  const target = openaiTarget(
    {
      model: "bot",
      base_url: server.baseUrl,
      retries: 3,
      retry_delay: 0,
      cost: { input_per_1m: 1, output_per_1m: 10 },
    },
    undefined,
    { budget },
  );
  const error = await (async () => await target.call({ input: "q" }, {}))()
    .then(
      () => assert.fail("the call answered"),
      (e: unknown) => e,
    );
  // The second attempt spent the budget: no third starts.
  assert.equal(server.count, 2);
  assert.equal(budget.spent, 0.004);
  assert.ok(error instanceof ReplyError, String(error));
  assert.equal(error.code, "budget.exhausted");
  assert.match(
    error.message,
    /^the budget_usd of \$0\.003 is spent \(\$0\.004 so far\); no new call starts, nor this call's retry after 2 attempts$/,
  );
  assert.equal(error.info.cost_usd, 0.004);
  assert.equal(error.info.attempts, 2);
  assert.deepEqual(error.info.usage, {
    prompt_tokens: 2000,
    completion_tokens: 200,
    total_tokens: 2200,
  });
});

Deno.test("calls no cost: priced are named unpriced, never shown as free: the total is unknown, or at least the priced calls' cost", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({ handler });
    // No cost: anywhere: the tokens are known, the dollars are not.
    const unpriced = suite(server.baseUrl, "", false).replace(
      /^ {2}cost: .*\n/m,
      "",
    ).replace(/ {2}- type: cost\n {4}max_usd: 0\.0015\n/, "");
    await Deno.writeTextFile(`${dir}/suite.yaml`, unpriced);
    await Deno.writeTextFile(`${dir}/data.jsonl`, cases(2));
    const out = await cli([
      "run",
      "suite.yaml",
      "--record",
      "run.json",
      "--markdown",
      "summary.md",
      "--junit",
      "junit.xml",
    ], dir);
    assert.equal(out.code, 0, out.stderr);
    assert.match(
      out.stderr,
      /^cost: unknown, no call was priced \(target: 2 calls, 2000\+200 tokens, unpriced\)$/m,
    );
    assert.doesNotMatch(out.stderr, /\$0/);
    const record = JSON.parse(await Deno.readTextFile(`${dir}/run.json`));
    assert.equal(record.cost.target.unpriced_calls, 2);
    const markdown = await Deno.readTextFile(`${dir}/summary.md`);
    assert.match(markdown, /\*\*Cost: unknown, no call was priced/);
    const junit = await Deno.readTextFile(`${dir}/junit.xml`);
    assert.doesNotMatch(junit, /cost_usd/);
    // The report of the record reads it the same way, the HTML too.
    const again = await reportAgain(dir, "run.json", "summary.md");
    assert.match(again.html, /unknown, no call was priced/);

    // The judge priced, the target not: the total is a lower bound.
    const mixed = suite(server.baseUrl).replace(
      /^ {2}cost: \{ input_per_1m: 1, output_per_1m: 10 \}\n/m,
      "",
    ).replace(/ {2}- type: cost\n {4}max_usd: 0\.0015\n/, "");
    await Deno.writeTextFile(`${dir}/mixed.yaml`, mixed);
    const both = await cli(
      ["run", "mixed.yaml", "--cache", "off", "--junit", "mixed.xml"],
      dir,
    );
    assert.equal(both.code, 0, both.stderr);
    assert.match(
      both.stderr,
      /^cost: at least \$0\.008, 2 calls unpriced \(target: 2 calls, 2000\+200 tokens, unpriced; judge \$0\.008: 2 calls, 2000\+200 tokens\)$/m,
    );
    const partial = await Deno.readTextFile(`${dir}/mixed.xml`);
    assert.match(partial, /<property name="cost_usd" value="0\.008"\/>/);
    assert.match(
      partial,
      /<property name="cost_usd.unpriced_calls" value="2"\/>/,
    );
  });
});

Deno.test("cached input tokens are priced at cached_input_per_1m and recorded as cached_input_tokens; without it they keep the input price", async () => {
  await withTempDir(async (dir) => {
    // OpenAI's usage for the target, LiteLLM's (cache reads beside
    // prompt_tokens, part of them) for the judges.
    const answer = (model: string, content: string) => {
      const usage: Record<string, unknown> = model === "bot"
        ? {
          prompt_tokens: 1000,
          completion_tokens: 100,
          total_tokens: 1100,
          prompt_tokens_details: { cached_tokens: 800 },
        }
        : {
          prompt_tokens: 1000,
          completion_tokens: 100,
          total_tokens: 1100,
          cache_read_input_tokens: 600,
        };
      return reply.json({
        model,
        choices: [{
          index: 0,
          message: { role: "assistant", content },
          finish_reason: "stop",
        }],
        usage,
      });
    };
    await using server = fakeLlm({
      handler(request) {
        const model = (request.json as { model: string }).model;
        return model === "bot"
          ? answer(model, `A: ${lastMessage(request)}`)
          : answer(model, '{"score": 1}');
      },
    });
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: data.jsonl
target:
  type: openai
  base_url: ${server.baseUrl}
  model: bot
  cost: { input_per_1m: 1, output_per_1m: 10, cached_input_per_1m: 0.1 }
scorers:
  - type: llm_judge
    name: cheap
    base_url: ${server.baseUrl}
    model: judge
    cost: { input_per_1m: 2, output_per_1m: 20, cached_input_per_1m: 0.5 }
  - type: llm_judge
    name: plain
    base_url: ${server.baseUrl}
    model: judge
    system: Grade it.
    cost: { input_per_1m: 2, output_per_1m: 20 }
concurrency: 1
`,
    );
    await Deno.writeTextFile(`${dir}/data.jsonl`, cases(2));
    const checked = await cli(["validate", "suite.yaml"], dir);
    assert.equal(checked.code, 0, checked.stderr);
    const out = await cli(["run", "suite.yaml", "--record", "run.json"], dir);
    assert.equal(out.code, 0, out.stderr);
    const record = JSON.parse(await Deno.readTextFile(`${dir}/run.json`));
    const unit = record.units[0];
    // 200 input tokens at 1, 800 cached at 0.1, 100 output at 10.
    assert.equal(unit.target.cost_usd, (200 + 80 + 1000) / 1e6);
    const cost = (metric: string) =>
      unit.scores.find((s: Line) => s.metric === metric).provenance.cost_usd;
    // 400 at 2, 600 cached at 0.5, 100 output at 20.
    assert.equal(cost("cheap"), (800 + 300 + 2000) / 1e6);
    // No cached price: every input token at the input price, as before.
    assert.equal(cost("plain"), (2000 + 2000) / 1e6);
    assert.equal(unit.judge.cached_input_tokens, 1200);
    assert.equal(unit.judge.input_tokens, 2000);
    assert.equal(record.cost.target.cached_input_tokens, 1600);
    assert.equal(record.cost.target.input_tokens, 2000);
    assert.equal(record.cost.target.cost_usd, 2 * 0.00128);
    // A misspelt price is named at its line, not taken for no price.
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      (await Deno.readTextFile(`${dir}/suite.yaml`)).replace(
        "cached_input_per_1m: 0.1",
        "cached_input_per_m: 0.1",
      ),
    );
    const misspelt = await cli(["validate", "suite.yaml"], dir);
    assert.equal(misspelt.code, 2);
    assert.match(
      misspelt.stderr,
      /line 6: unknown key "target\.cost\.cached_input_per_m"; did you mean "cached_input_per_1m"\?/,
    );
  });
});

Deno.test("Anthropic's cache writes (cache_write_per_1m, else the input price) and DeepSeek's cache hits are priced and counted in the record's sides", async () => {
  await withTempDir(async (dir) => {
    // The target behind a gateway that passes Anthropic's usage on (cache
    // reads and writes apart from input_tokens); the judge is DeepSeek's
    // (hits and misses making up prompt_tokens).
    const usageOf = (model: string): Record<string, unknown> =>
      model === "bot"
        ? {
          input_tokens: 100,
          output_tokens: 100,
          cache_read_input_tokens: 300,
          cache_creation_input_tokens: 600,
        }
        : {
          prompt_tokens: 1000,
          completion_tokens: 100,
          total_tokens: 1100,
          prompt_cache_hit_tokens: 700,
          prompt_cache_miss_tokens: 300,
        };
    await using server = fakeLlm({
      handler(request) {
        const model = (request.json as { model: string }).model;
        return reply.json({
          model,
          choices: [{
            index: 0,
            message: {
              role: "assistant",
              content: model === "bot"
                ? `A: ${lastMessage(request)}`
                : '{"score": 1}',
            },
            finish_reason: "stop",
          }],
          usage: usageOf(model),
        });
      },
    });
    const suiteText = (writePrice: string) =>
      `dataset: data.jsonl
target:
  type: openai
  base_url: ${server.baseUrl}
  model: bot
  cost: { input_per_1m: 1, output_per_1m: 10, cached_input_per_1m: 0.1${writePrice} }
scorers:
  - type: llm_judge
    base_url: ${server.baseUrl}
    model: judge
    cost: { input_per_1m: 2, output_per_1m: 20, cached_input_per_1m: 0.5 }
concurrency: 1
`;
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      suiteText(", cache_write_per_1m: 1.25"),
    );
    await Deno.writeTextFile(`${dir}/data.jsonl`, cases(2));
    const out = await cli(["run", "suite.yaml", "--record", "run.json"], dir);
    assert.equal(out.code, 0, out.stderr);
    const record = JSON.parse(await Deno.readTextFile(`${dir}/run.json`));
    const unit = record.units[0];
    // 100 input at 1, 300 cached at 0.1, 600 written at 1.25, 100 out at 10.
    assert.equal(unit.target.cost_usd, (100 + 30 + 750 + 1000) / 1e6);
    // 300 missed at 2, 700 hit at 0.5, 100 out at 20.
    const judged = unit.scores.find((s: Line) => s.metric === "llm_judge");
    assert.equal(judged.provenance.cost_usd, (600 + 350 + 2000) / 1e6);
    assert.equal(unit.judge.cached_input_tokens, 700);
    assert.equal(unit.judge.cache_write_tokens, undefined);
    assert.equal(record.cost.target.input_tokens, 2000);
    assert.equal(record.cost.target.cached_input_tokens, 600);
    assert.equal(record.cost.target.cache_write_tokens, 1200);
    assert.equal(record.cost.judge.cached_input_tokens, 1400);
    // Without cache_write_per_1m, written tokens cost the input price.
    await Deno.writeTextFile(`${dir}/suite.yaml`, suiteText(""));
    const plain = await cli(
      ["run", "suite.yaml", "--cache", "off", "--record", "plain.json"],
      dir,
    );
    assert.equal(plain.code, 0, plain.stderr);
    const again = JSON.parse(await Deno.readTextFile(`${dir}/plain.json`));
    assert.equal(again.units[0].target.cost_usd, (700 + 30 + 1000) / 1e6);
  });
});

Deno.test("Anthropic's 1-hour cache writes are priced at cache_write_1h_per_1m, its 5-minute ones at cache_write_per_1m, and charged so to budget_usd", async () => {
  await withTempDir(async (dir) => {
    // 600 written: 200 to the 5-minute cache, 400 to the 1-hour one.
    await using server = fakeLlm({
      handler: (request) =>
        reply.json({
          model: "bot",
          choices: [{
            index: 0,
            message: { role: "assistant", content: lastMessage(request) },
            finish_reason: "stop",
          }],
          usage: {
            input_tokens: 100,
            output_tokens: 100,
            cache_read_input_tokens: 300,
            cache_creation_input_tokens: 600,
            cache_creation: {
              ephemeral_5m_input_tokens: 200,
              ephemeral_1h_input_tokens: 400,
            },
          },
        }),
    });
    const suiteText = (hourPrice: string) =>
      `dataset: data.jsonl
target:
  type: openai
  base_url: ${server.baseUrl}
  model: bot
  cost: { input_per_1m: 1, output_per_1m: 10, cached_input_per_1m: 0.1, cache_write_per_1m: 1.25${hourPrice} }
scorers:
  - type: exact_match
budget_usd: 0.005
concurrency: 1
`;
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      suiteText(", cache_write_1h_per_1m: 2"),
    );
    await Deno.writeTextFile(`${dir}/data.jsonl`, cases(3));
    const out = await cli(
      ["run", "suite.yaml", "--cache", "off", "--record", "run.json"],
      dir,
    );
    // 100 input at 1, 300 read at 0.1, 200 written at 1.25 and 400 at 2,
    // 100 out at 10: 0.00218 a call, all three charged so (0.00654).
    assert.equal(out.code, 0, out.stderr);
    const record = JSON.parse(await Deno.readTextFile(`${dir}/run.json`));
    assert.equal(
      record.units[0].target.cost_usd,
      (100 + 30 + 250 + 800 + 1000) / 1e6,
    );
    assert.equal(record.budget.spent_usd, 0.00654);
    assert.equal(record.cost.target.cache_write_tokens, 1800);
    // Without it, a 1-hour write costs cache_write_per_1m, as before.
    await Deno.writeTextFile(`${dir}/suite.yaml`, suiteText(""));
    const plain = await cli(
      ["run", "suite.yaml", "--cache", "off", "--record", "plain.json"],
      dir,
    );
    assert.equal(plain.code, 0, plain.stderr);
    const again = JSON.parse(await Deno.readTextFile(`${dir}/plain.json`));
    assert.equal(
      again.units[0].target.cost_usd,
      (100 + 30 + 750 + 1000) / 1e6,
    );
  });
});

Deno.test("costOf reads cached input tokens in OpenAI's, OpenAI Responses', LiteLLM's and Anthropic's usage", async () => {
  const { costOf, tokensOf } = await import("../../src/net/mod.ts");
  const prices = {
    input_per_1m: 1,
    output_per_1m: 10,
    cached_input_per_1m: 0.1,
  };
  // OpenAI Responses: cached tokens are part of input_tokens.
  const responses = {
    input_tokens: 1000,
    output_tokens: 10,
    input_tokens_details: { cached_tokens: 900 },
  };
  assert.deepEqual(tokensOf(responses), {
    input: 1000,
    output: 10,
    cached: 900,
  });
  assert.equal(costOf(responses, prices), (100 + 90 + 100) / 1e6);
  // Anthropic's Messages API counts cache reads apart from input_tokens.
  const anthropic = {
    input_tokens: 100,
    output_tokens: 10,
    cache_read_input_tokens: 900,
  };
  assert.deepEqual(tokensOf(anthropic), {
    input: 1000,
    output: 10,
    cached: 900,
  });
  assert.equal(costOf(anthropic, prices), (100 + 90 + 100) / 1e6);
  // A cached count beyond the input count is capped at it.
  const over = {
    prompt_tokens: 10,
    completion_tokens: 0,
    prompt_tokens_details: { cached_tokens: 50 },
  };
  assert.equal(tokensOf(over)?.cached, 10);
  // Without a cached price, the cost is the one it always was.
  const plain = { input_per_1m: 0.15, output_per_1m: 0.6 };
  const usage = {
    prompt_tokens: 1234,
    completion_tokens: 567,
    prompt_tokens_details: { cached_tokens: 1000 },
  };
  assert.equal(
    costOf(usage, plain),
    costOf({ prompt_tokens: 1234, completion_tokens: 567 }, plain),
  );
});

Deno.test("run --resume --force after a scorer was added keeps the earlier calls' cost in the record's cost, and its cost: line says it counts this run's calls only", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({ handler });
    await Deno.writeTextFile(`${dir}/suite.yaml`, suite(server.baseUrl));
    await Deno.writeTextFile(`${dir}/data.jsonl`, cases(3));
    const args = [
      "run",
      "suite.yaml",
      "--out",
      "s.ndjson",
      "--record",
      "r.json",
    ];
    const first = await cli(args, dir);
    assert.equal(first.code, 0, first.stderr);
    const before = JSON.parse(await Deno.readTextFile(`${dir}/r.json`));
    assert.equal(before.cost.cost_usd, 0.018);
    // A scorer added: every unit runs again, its target answered from the
    // cache; the judge's Scores are in the file and not made again.
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      suite(server.baseUrl).replace(
        "  - type: exact_match\n",
        "  - type: exact_match\n  - type: contains\n",
      ),
    );
    const resumed = await cli([...args, "--resume", "--force"], dir);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(
      resumed.stderr,
      /^cost: \$0 \(target \$0: 0 calls, 0\+0 tokens, 3 cached\): this run's calls only, not those of the Scores --out "s\.ndjson" held before \(--record "r\.json"'s cost counts both\)$/m,
    );
    const after = JSON.parse(await Deno.readTextFile(`${dir}/r.json`));
    assert.equal(after.units.length, 3);
    assert.equal(after.cost.judge.cost_usd, 0.012, JSON.stringify(after.cost));
    assert.equal(after.cost.target.cost_usd, 0.006, JSON.stringify(after.cost));
    assert.equal(after.cost.cost_usd, 0.018);
    // As an uninterrupted run's: 3 target calls, none cached. The cache hits
    // replayed calls the record counts already, and each unit's line keeps
    // the call that was paid, which a later resume reads.
    assert.deepEqual(
      [after.cost.target.calls, after.cost.target.cached],
      [3, 0],
      JSON.stringify(after.cost),
    );
    assert.equal(after.units[0].target.cost_usd, 0.002);
    // A resume after a resume: another scorer added.
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      suite(server.baseUrl).replace(
        "  - type: exact_match\n",
        "  - type: exact_match\n  - type: contains\n  - type: regex\n    pattern: A\n",
      ),
    );
    const again = await cli([...args, "--resume", "--force"], dir);
    assert.equal(again.code, 0, again.stderr);
    const last = JSON.parse(await Deno.readTextFile(`${dir}/r.json`));
    assert.equal(last.units.length, 3);
    assert.deepEqual(last.cost, before.cost);
    // Each unit one line with all its Scores, though the file holds them
    // apart (the added scorers' at its end).
    const metrics = (record: { units: { scores: { metric: string }[] }[] }) =>
      record.units.map((u) => u.scores.map((s) => s.metric).sort().join());
    const all = "contains,cost,exact_match,llm_judge,regex";
    assert.deepEqual(metrics(last), [all, all, all]);
    // And again with nothing to run: no unit, no call, twice.
    const plain = await cli([...args, "--resume", "--force"], dir);
    assert.equal(plain.code, 0, plain.stderr);
    const same = JSON.parse(await Deno.readTextFile(`${dir}/r.json`));
    assert.deepEqual(metrics(same), [all, all, all]);
    assert.deepEqual(same.cost, before.cost);
  });
});
