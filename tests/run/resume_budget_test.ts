/**
 * A resumed run keeps the budget of the file it continues: the units a
 * spent budget blocked are not done (a resume makes their calls, if the
 * budget now allows), and the resumed run's budget starts from what the
 * earlier run spent, so the cap holds across the two processes and the exit
 * code, the record and the sidecar say what happened. Against a loopback
 * server that reports usage, priced by `cost:`.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI, cli, cliWithFileLimit } from "../_cli.ts";
import { fakeLlm, lastMessage, reply } from "../_fake_llm.ts";
import { withTempDir } from "../_proc.ts";
import { checkConfigText } from "../../src/config/config.ts";
import { fingerprint } from "../../src/fingerprint/fingerprint.ts";
import { prepareResume, withUnitsSpend } from "../../src/run/mod.ts";
import { earlierSpend } from "../../src/run/resume.ts";
import { scored, scoreLine } from "../../src/score/mod.ts";

// 1000 prompt and 100 completion tokens per call: at 1 and 10 USD per
// million, each call costs 0.002.
const USAGE = { prompt_tokens: 1000, completion_tokens: 100 };

function suite(baseUrl: string, budget: number): string {
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
concurrency: 1
budget_usd: ${budget}
`;
}

/** A model that answers "A: " and the prompt, reporting USAGE. */
function echoModel() {
  return fakeLlm({
    handler: (request) =>
      reply.ok(`A: ${lastMessage(request)}`, { usage: USAGE }),
  });
}

/** `data.jsonl` of `n` cases whose expected answer is the echo's. */
async function writeCases(dir: string, n: number): Promise<void> {
  const cases = Array.from(
    { length: n },
    (_, i) => JSON.stringify({ input: `q${i + 1}`, expected: `A: q${i + 1}` }),
  );
  await Deno.writeTextFile(join(dir, "data.jsonl"), cases.join("\n") + "\n");
}

interface Line {
  unit_id: string;
  metric: string;
  status: string;
  reason?: string;
}

async function scoresOf(path: string): Promise<Line[]> {
  const text = await Deno.readTextFile(path);
  return text.trim().split("\n").map((l) => JSON.parse(l));
}

/** How many Scores a record's units hold. */
function scoresIn(record: { units: Array<{ scores: unknown[] }> }): number {
  return record.units.reduce((n, u) => n + u.scores.length, 0);
}

/** Each Score's unit, metric and status, sorted: the file's content as a set. */
function content(scores: readonly Line[]): string[] {
  return scores.map((s) => `${s.unit_id} ${s.metric} ${s.status}`).sort();
}

Deno.test("run --resume after the budget ran out: the blocked units are not done, the budget starts from what the file's run spent, and a raised budget_usd runs them", async () => {
  await withTempDir(async (dir) => {
    await using server = echoModel();
    await writeCases(dir, 5);
    // 0.002 a call: the third reaches 0.006, the last two are refused.
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      suite(server.baseUrl, 0.005),
    );
    const args = [
      "run",
      "suite.yaml",
      "--out",
      "s.ndjson",
      "--record",
      "r.json",
    ];
    const first = await cli(args, dir);
    assert.equal(first.code, 1, first.stderr);
    assert.equal(server.count, 3);
    const blockedFirst = content(await scoresOf(join(dir, "s.ndjson")));
    assert.equal(blockedFirst.filter((s) => s.endsWith(" blocked")).length, 4);
    const spentFirst = { limit_usd: 0.005, spent_usd: 0.006, refused: 2 };

    // Resumed under the same budget: nothing more may be spent, so the two
    // calls are refused again, and the run says so as the first did.
    const again = await cli([...args, "--resume"], dir);
    assert.equal(again.code, 1, again.stderr);
    assert.equal(server.count, 3);
    assert.match(
      again.stderr,
      /evalpipe: dropped 4 Scores of "s\.ndjson" that the spent budget blocked/,
    );
    assert.match(
      again.stderr,
      /evalpipe: budget reached: \$0\.006 spent of budget_usd \$0\.005; 2 calls were not made/,
    );
    assert.match(
      again.stderr,
      /^4 scores written to s\.ndjson \(after 6 already there\)$/m,
    );
    const resumed = await scoresOf(join(dir, "s.ndjson"));
    // Each Score once: the blocked ones were replaced, not repeated.
    assert.deepEqual(content(resumed), blockedFirst);
    assert.deepEqual(
      JSON.parse(await Deno.readTextFile(join(dir, "s.ndjson.meta.json")))
        .budget,
      spentFirst,
    );
    const record = JSON.parse(await Deno.readTextFile(join(dir, "r.json")));
    assert.deepEqual(record.budget, spentFirst);
    assert.equal(record.units.length, 5);
    assert.equal(scoresIn(record), 10);
    // The record's cost is its units' calls, as an uninterrupted run's and
    // its reports' are: the three the first run paid for, none refused.
    assert.equal(record.cost.target.calls, 3);
    assert.equal(record.cost.cost_usd, 0.006);

    // A raised budget_usd resumes the same suite (it is what the run may
    // spend, not what it measures) and makes the two calls it allows now.
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      suite(server.baseUrl, 0.01),
    );
    const raised = await cli([...args, "--resume"], dir);
    assert.equal(raised.code, 0, raised.stderr);
    assert.equal(server.count, 5);
    const done = await scoresOf(join(dir, "s.ndjson"));
    assert.equal(done.length, 10);
    assert.ok(done.every((s) => s.status !== "blocked"), JSON.stringify(done));
    assert.equal(new Set(content(done)).size, 10);
    const spent = { limit_usd: 0.01, spent_usd: 0.01, refused: 0 };
    assert.deepEqual(
      JSON.parse(await Deno.readTextFile(join(dir, "s.ndjson.meta.json")))
        .budget,
      spent,
    );
    const last = JSON.parse(await Deno.readTextFile(join(dir, "r.json")));
    assert.deepEqual(last.budget, spent);
    assert.equal(last.units.length, 5);
    assert.equal(scoresIn(last), 10);
    assert.deepEqual(
      [
        last.cost.target.calls,
        last.cost.target.input_tokens,
        last.cost.cost_usd,
      ],
      [5, 5000, 0.01],
    );
    assert.ok(last.units.every((u: { output: unknown }) => u.output !== null));
  });
});

Deno.test("run --resume of a file an older evalpipe started: its config fingerprint with budget_usd is the same config, and a sidecar without the spend starts the budget from what the blocked Scores say", async () => {
  await withTempDir(async (dir) => {
    await using server = echoModel();
    await writeCases(dir, 5);
    const text = suite(server.baseUrl, 0.005);
    await Deno.writeTextFile(join(dir, "suite.yaml"), text);
    const args = ["run", "suite.yaml", "--out", "s.ndjson"];
    const first = await cli(args, dir);
    assert.equal(first.code, 1, first.stderr);
    assert.equal(server.count, 3);
    // The sidecar as evalpipe wrote it before session 22: the config's
    // fingerprint with budget_usd in it, and no spend.
    const metaPath = join(dir, "s.ndjson.meta.json");
    const meta = JSON.parse(await Deno.readTextFile(metaPath));
    const config = await checkConfigText(text, join(dir, "suite.yaml"));
    meta.fingerprints.config = fingerprint(JSON.stringify({
      ...config,
      concurrency: undefined,
      max_processes: undefined,
      cache: undefined,
    }));
    delete meta.budget;
    await Deno.writeTextFile(metaPath, JSON.stringify(meta));

    const again = await cli([...args, "--resume"], dir);
    assert.equal(again.code, 1, again.stderr);
    assert.doesNotMatch(again.stderr, /changed since/);
    // The blocked Scores say $0.006 was spent: no call starts.
    assert.equal(server.count, 3);
    assert.match(
      again.stderr,
      /keeps no budget \(the run that wrote it did not end, or kept none\): the budget started from the \$0\.006 its budget-blocked Scores say was spent, at least/,
    );
    const resumed = await scoresOf(join(dir, "s.ndjson"));
    assert.equal(resumed.length, 10);
    assert.equal(resumed.filter((s) => s.status === "blocked").length, 4);
    // A raised budget_usd changes the older fingerprint: `--force` resumes,
    // from the spend the first resume kept in the sidecar.
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      suite(server.baseUrl, 0.01),
    );
    const raised = await cli([...args, "--resume", "--force"], dir);
    assert.equal(raised.code, 0, raised.stderr);
    assert.equal(server.count, 5);
  });
});

Deno.test("run --resume after the budget ran out: a resume that dies while it drops the blocked Scores loses none of the Scores already computed", async () => {
  await withTempDir(async (dir) => {
    await using server = echoModel();
    await writeCases(dir, 40);
    // 0.002 a call: 25 calls are made, the last 15 are refused.
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      suite(server.baseUrl, 0.049),
    );
    const args = ["run", "suite.yaml", "--out", "s.ndjson"];
    const first = await cli(args, dir);
    assert.equal(first.code, 1, first.stderr);
    // The blocked Scores first, as a run with concurrency may write them
    // among the others: the computed Scores all come after the cut.
    const text = await Deno.readTextFile(join(dir, "s.ndjson"));
    const lines = text.trimEnd().split("\n");
    const isBlocked = (l: string) => JSON.parse(l).status === "blocked";
    const computed = lines.filter((l) => !isBlocked(l));
    assert.equal(computed.length, 50);
    const reordered = [...lines.filter(isBlocked), ...computed].join("\n") +
      "\n";
    await Deno.writeTextFile(join(dir, "s.ndjson"), reordered);
    // A file size limit below what the rewrite writes: the resume is stopped
    // (SIGXFSZ, or EFBIG) partway through writing the Scores it keeps, as a
    // full disk or a kill would stop it.
    const computedBytes = new TextEncoder().encode(computed.join("\n")).length;
    const blocks = Math.ceil(computedBytes / 1024) - 1;
    assert.ok(blocks >= 1, `${computedBytes} bytes`);
    const limited = await cliWithFileLimit(
      ["run", "suite.yaml", "--out", "s.ndjson", "--resume"],
      dir,
      blocks,
    );
    assert.notEqual(limited.code, 0);
    assert.equal(server.count, 25);
    const left = (await Deno.readTextFile(join(dir, "s.ndjson"))).split("\n");
    const kept = new Set(left);
    const lost = computed.filter((l) => !kept.has(l));
    assert.deepEqual(lost, [], `${lost.length} computed Scores lost`);
  });
});

Deno.test("run --resume after a resume that was killed (kill -9) spending more: the budget starts from what the files show was spent, at least, and says so", async () => {
  await withTempDir(async (dir) => {
    await using server = echoModel();
    await writeCases(dir, 5);
    const args = [
      "run",
      "suite.yaml",
      "--out",
      "s.ndjson",
      "--units",
      "u.jsonl",
    ];
    // Run 1: three calls ($0.006), two refused; the sidecar keeps $0.006.
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      suite(server.baseUrl, 0.005),
    );
    assert.equal((await cli(args, dir)).code, 1);
    assert.equal(server.count, 3);
    // Resume 2, under a raised budget: the fourth call is answered
    // ($0.008), the fifth never is; killed meanwhile.
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      suite(server.baseUrl, 0.009),
    );
    const echo = server.handler;
    server.handler = (request) =>
      request.index === 4
        ? reply.slow(3_600_000, reply.ok("never"))
        : echo(request);
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CLI, ...args, "--resume"],
      cwd: dir,
      stdin: "null",
      stdout: "null",
      stderr: "null",
      env: { NO_COLOR: "1" },
    }).spawn();
    // Waits for what the kill must follow: the fifth call under way, and
    // the fourth unit written to --units.
    const fourth = async () =>
      (await Deno.readTextFile(join(dir, "u.jsonl"))).split("\n").some((l) =>
        l.includes('"data.jsonl#4"') && l.includes('"cost_usd"')
      );
    while (server.count < 5 || !await fourth()) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    child.kill("SIGKILL");
    await child.status;
    // The sidecar says the run did not end.
    const meta = JSON.parse(
      await Deno.readTextFile(join(dir, "s.ndjson.meta.json")),
    );
    assert.equal(meta.complete, undefined, JSON.stringify(meta));
    // Resume 3, under $0.008: spent already, so the fifth call is refused.
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      suite(server.baseUrl, 0.008),
    );
    const third = await cli([...args, "--resume"], dir);
    assert.equal(third.code, 1, third.stderr);
    assert.equal(server.count, 5, "no call beyond the budget");
    assert.match(
      third.stderr,
      /"s\.ndjson\.meta\.json" keeps the budget a run noted as it went on, and that run did not end: the budget started from the \$0\.008 .*at least/,
    );
    assert.match(
      third.stderr,
      /budget reached: \$0\.008 spent of budget_usd \$0\.008; 1 call was not made/,
    );
  });
});

Deno.test("prepareResume counts no trace target's recorded cost in spentInFiles: the budget never charged it", async () => {
  const { earlierSpend, prepareResume } = await import(
    "../../src/run/resume.ts"
  );
  const { scored, scoreLine } = await import("../../src/score/mod.ts");
  await withTempDir(async (dir) => {
    const ids = { example_id: "d#1", unit_id: "d#1" };
    await Deno.writeTextFile(
      join(dir, "s.ndjson"),
      scoreLine(scored("m", 1, ids)) + "\n",
    );
    // A trace target's unit: its cost was spent when the trace was recorded.
    const traced = {
      ...ids,
      input: "q",
      output: "a",
      target: {
        trace: "traces/1.json",
        trace_format: "openinference",
        usage: { prompt_tokens: 1000, completion_tokens: 100 },
        cost_usd: 0.5,
      },
    };
    // An openai target's unit: its call was made and charged.
    const called = {
      example_id: "d#2",
      unit_id: "d#2",
      input: "q",
      output: "a",
      target: {
        usage: { prompt_tokens: 10, completion_tokens: 1 },
        cost_usd: 0.25,
      },
    };
    await Deno.writeTextFile(
      join(dir, "u.jsonl"),
      JSON.stringify(traced) + "\n" + JSON.stringify(called) + "\n",
    );
    const plan = await prepareResume(join(dir, "s.ndjson"), {
      units: join(dir, "u.jsonl"),
    });
    assert.equal(plan.spentInFiles, 0.25);
    assert.deepEqual(earlierSpend(plan), {
      usd: 0.25,
      exact: false,
      from: "files",
    });
  });
});

Deno.test("earlierSpend takes what the files record over an ended run's spend when it is more: a later run without a budget paid for calls and was killed before its sidecar", async () => {
  const { earlierSpend } = await import("../../src/run/resume.ts");
  type Plan = Parameters<typeof earlierSpend>[0];
  const plan = { path: "s.ndjson", done: new Map(), scores: 2 } as Plan;
  const meta = {
    complete: true,
    budget: { limit_usd: 1, spent_usd: 0.1, refused: 0 },
  } as unknown as NonNullable<Plan["meta"]>;
  assert.deepEqual(earlierSpend({ ...plan, meta, spentInFiles: 0.25 }), {
    usd: 0.25,
    exact: false,
    from: "files",
  });
  assert.deepEqual(earlierSpend({ ...plan, meta, budgetSpentAtLeast: 0.3 }), {
    usd: 0.3,
    exact: false,
    from: "blocked",
  });
  // Files that show less: the ended run's spend is exact.
  assert.deepEqual(earlierSpend({ ...plan, meta, spentInFiles: 0.05 }), {
    usd: 0.1,
    exact: true,
    from: "sidecar",
  });
});

Deno.test("run --resume --units under a budget starts it from what the units' calls cost, when the sidecar keeps no spend", async () => {
  await withTempDir(async (dir) => {
    await using server = echoModel();
    await writeCases(dir, 5);
    const args = [
      "run",
      "suite.yaml",
      "--out",
      "s.ndjson",
      "--units",
      "u.jsonl",
      // Each call made, none answered from the cache (which costs nothing).
      "--no-cache",
    ];
    // Run 1 without a budget: five calls ($0.010), recorded in --units
    // only (the sidecar keeps no spend, the Scores no call's cost).
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      suite(server.baseUrl, 1).replace("budget_usd: 1\n", ""),
    );
    const first = await cli(args, dir);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(server.count, 5);
    // Stopped before units 4 and 5 were scored: their calls were paid.
    const scores = (await Deno.readTextFile(join(dir, "s.ndjson"))).split("\n")
      .filter((l) => l !== "" && !/"data\.jsonl#[45]"/.test(l));
    await Deno.writeTextFile(join(dir, "s.ndjson"), scores.join("\n") + "\n");
    // Resumed under $0.010: spent already, so neither call is made again.
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      suite(server.baseUrl, 0.01),
    );
    const again = await cli([...args, "--resume"], dir);
    assert.equal(again.code, 1, again.stderr);
    assert.equal(server.count, 5, "no call beyond the budget");
    assert.match(
      again.stderr,
      /keeps no budget .*: the budget started from the \$0\.01 the calls --out "s\.ndjson" and --units "u\.jsonl" record cost, at least/,
    );
    assert.match(
      again.stderr,
      /budget reached: \$0\.01 spent of budget_usd \$0\.01; 2 calls were not made/,
    );
  });
});

Deno.test("a resume plan counts its units file's calls once, however often it is asked to (prepareResume's units, then runSuite's unitsPath)", async () => {
  await withTempDir(async (dir) => {
    const scores = join(dir, "s.ndjson");
    const units = join(dir, "u.jsonl");
    await Deno.writeTextFile(
      scores,
      scoreLine(scored("m", 1, { example_id: "d#1", unit_id: "d#1" })) + "\n",
    );
    await Deno.writeTextFile(
      units,
      JSON.stringify({
        unit_id: "d#1",
        input: "q",
        output: "a",
        target: { cost_usd: 0.25 },
      }) + "\n",
    );
    // A script over mod.ts that gives the plan its units file, then hands
    // the plan and the same file to runSuite, which counts them again.
    const plan = await prepareResume(scores, { units });
    assert.equal(plan.spentInFiles, 0.25);
    const again = await withUnitsSpend(plan, units);
    assert.equal(again.spentInFiles, 0.25);
    assert.equal(earlierSpend(again)?.usd, 0.25);
    // Counted by withUnitsSpend first: the same.
    const bare = await prepareResume(scores);
    const once = await withUnitsSpend(bare, units);
    assert.equal((await withUnitsSpend(once, units)).spentInFiles, 0.25);
  });
});
