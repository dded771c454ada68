import assert from "node:assert/strict";
import { loadConfig, parseScore, type Score } from "../../mod.ts";

const ROOT = new URL("../../", import.meta.url);
const EXAMPLE = new URL("examples/quickstart/", ROOT);
const CONFIG = "examples/quickstart/evalpipe.yaml";
const METRICS = ["grounded", "answer_match", "exact_match", "contains"];

const decoder = new TextDecoder();
const encoder = new TextEncoder();

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command in `cwd` with `input` on stdin, to completion. */
async function runWith(
  cmd: string,
  args: string[],
  cwd: URL,
  input?: string,
): Promise<Ran> {
  const child = new Deno.Command(cmd, {
    args,
    cwd,
    stdin: input === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (input !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(encoder.encode(input));
    await writer.close();
  }
  const { code, stdout, stderr } = await child.output();
  return {
    code,
    stdout: decoder.decode(stdout),
    stderr: decoder.decode(stderr),
  };
}

let suiteRun: Promise<Ran> | undefined;

/** The quickstart suite's run, made once and shared by the tests below. */
function runSuiteOnce(): Promise<Ran> {
  suiteRun ??= runWith(
    Deno.execPath(),
    ["run", "-A", "cli.ts", "run", CONFIG],
    ROOT,
  );
  return suiteRun;
}

async function datasetIds(): Promise<string[]> {
  const config = await loadConfig(
    decodeURIComponent(new URL(CONFIG, ROOT).pathname),
  );
  assert.equal(config.scorers.length, METRICS.length);
  const text = await Deno.readTextFile(new URL(config.dataset!, EXAMPLE));
  return text.split("\n").filter((line) => line.trim() !== "").map((line) =>
    String(JSON.parse(line).id)
  );
}

async function suiteScores(): Promise<Score[]> {
  const { stdout } = await runSuiteOnce();
  return stdout.trimEnd().split("\n").map((line) =>
    parseScore(JSON.parse(line))
  );
}

Deno.test("quickstart: the run exits 0 and every stdout line is a Score", async () => {
  const { code, stdout, stderr } = await runSuiteOnce();
  assert.equal(code, 0, stderr);
  const lines = stdout.trimEnd().split("\n");
  for (const [i, line] of lines.entries()) {
    assert.doesNotThrow(
      () => parseScore(JSON.parse(line)),
      `stdout line ${i + 1} is not a Score: ${line}`,
    );
  }
  const ids = await datasetIds();
  assert.ok(ids.length >= 24, `only ${ids.length} cases`);
  assert.equal(lines.length, ids.length * METRICS.length);
});

Deno.test("quickstart: Scores come per case in dataset order, scorers in config order", async () => {
  const scores = await suiteScores();
  const expected = (await datasetIds()).flatMap((id) =>
    METRICS.map((m) => `datasets/support.jsonl#${id} ${m}`)
  );
  assert.deepEqual(
    scores.map((s) => `${s.example_id} ${s.metric}`),
    expected,
  );
  for (const s of scores) assert.equal(s.unit_id, s.example_id);
});

Deno.test("quickstart: every metric scores some cases", async () => {
  const scores = await suiteScores();
  for (const metric of METRICS) {
    const ofMetric = scores.filter((s) => s.metric === metric);
    assert.ok(
      ofMetric.some((s) => s.status === "scored"),
      `${metric} scored nothing`,
    );
    // Mixed results: the example is meant to show both outcomes.
    assert.ok(ofMetric.some((s) => s.passed), `${metric} never passed`);
    assert.ok(
      ofMetric.some((s) => s.status === "scored" && !s.passed),
      `${metric} never failed`,
    );
  }
});

Deno.test("quickstart: failures are data, never 0", async () => {
  const scores = await suiteScores();
  for (const s of scores.filter((s) => s.status !== "scored")) {
    assert.equal(s.value, null, JSON.stringify(s));
    if (s.status === "error" || s.status === "blocked") {
      assert.equal(s.passed, false);
    }
  }
  const targetErrors = scores.filter((s) =>
    s.status === "blocked" && s.reason?.startsWith("target error:")
  );
  assert.ok(targetErrors.length >= 1);
  // The bot crashes on the order look-up: all its Scores are target errors.
  const order = scores.filter((s) => s.example_id?.endsWith("#order-status"));
  assert.equal(order.length, METRICS.length);
  for (const s of order) {
    assert.equal(s.status, "blocked");
    assert.equal(s.diagnostics[0]?.code, "target.error");
    assert.match(s.reason ?? "", /^target error: .*ORDERS_API_URL/);
  }
  // Without `expected`: the built-ins do not apply; answer_match refuses.
  const noExpected = new Map(
    scores.filter((s) => s.example_id?.endsWith("#delete-account"))
      .map((s) => [s.metric, s]),
  );
  assert.equal(noExpected.get("exact_match")?.status, "non_evaluable");
  assert.equal(noExpected.get("contains")?.status, "non_evaluable");
  assert.equal(noExpected.get("grounded")?.status, "scored");
  const refused = noExpected.get("answer_match");
  assert.equal(refused?.status, "error");
  assert.match(
    refused?.reason ?? "",
    /^scorer error: .*no expected answer to compare with/,
  );
});

Deno.test("quickstart: stderr has the summary table", async () => {
  const { stderr } = await runSuiteOnce();
  assert.match(stderr, /^metric\s+mean/m);
  for (const metric of METRICS) {
    assert.match(stderr, new RegExp(`^${metric}\\s`, "m"), stderr);
  }
});

/** Runs a scorer of the example on one payload; returns its verdict. */
async function verdictOf(
  cmd: string,
  script: string,
  payload: unknown,
): Promise<{ score: number; passed: boolean; reason: string }> {
  const { code, stdout, stderr } = await runWith(
    cmd,
    [script],
    EXAMPLE,
    JSON.stringify(payload),
  );
  assert.equal(code, 0, stderr);
  const lines = stdout.trim().split("\n");
  assert.equal(lines.length, 1, `not one verdict: ${stdout}`);
  const verdict = JSON.parse(lines[0]!);
  assert.deepEqual(Object.keys(verdict).sort(), ["passed", "reason", "score"]);
  assert.equal(typeof verdict.score, "number");
  assert.ok(verdict.score >= 0 && verdict.score <= 1);
  assert.equal(typeof verdict.passed, "boolean");
  assert.equal(typeof verdict.reason, "string");
  return verdict;
}

Deno.test("quickstart: grounded.py measures support in the context", async () => {
  const grounded = (payload: unknown) =>
    verdictOf("python3", "scorers/grounded.py", payload);
  const context = ["Refunds are issued within 30 days of delivery."];
  const full = await grounded({
    context,
    expected: "30 days",
    input: "How long do refunds take?",
    output: "Refunds: 30 days.",
  });
  assert.equal(full.score, 1);
  assert.equal(full.passed, true);

  const half = await grounded({
    context,
    expected: null,
    input: "How long do refunds take?",
    output: "Refunds take 30 days and cost $4.99",
  });
  // Found: refund, 30, day; not: take, cost, 4.99.
  assert.equal(half.score, 0.5);
  assert.equal(half.passed, false);
  assert.match(half.reason, /unsupported: take, cost, 4\.99/);

  // No context key at all: claims with nothing behind them measure 0.
  const none = await grounded({
    expected: null,
    input: "How long do refunds take?",
    output: "Refunds take 30 days.",
  });
  assert.equal(none.score, 0);
  assert.equal(none.passed, false);
  assert.match(none.reason, /no retrieved context/);

  // Nothing claimed: vacuously grounded.
  const yes = await grounded({
    context,
    expected: "Yes",
    input: "Do you refund?",
    output: "Yes",
  });
  assert.equal(yes.score, 1);
  assert.match(yes.reason, /nothing to check/);
});

Deno.test("quickstart: answer_match.js grades exact, partial and miss", async () => {
  const match = (expected: unknown, output: string) =>
    verdictOf("node", "scorers/answer_match.js", {
      expected,
      input: "How long?",
      output,
    });
  const spelled = await match("30 days", "Thirty days.");
  assert.deepEqual([spelled.score, spelled.passed], [1, true]);
  const verbose = await match("2 years", "Tents have a two-year warranty.");
  assert.deepEqual([verbose.score, verbose.passed], [0.5, true]);
  assert.match(verbose.reason, /^partial/);
  const wrongNumber = await match("30 days", "45 days");
  assert.deepEqual([wrongNumber.score, wrongNumber.passed], [0, false]);
  assert.match(wrongNumber.reason, /number 30/);
  const oneOf = await match(["1 year", "12 months"], "twelve months");
  assert.equal(oneOf.score, 1);

  // No expected answer: not a 0, an error with a reason on stderr.
  const { code, stdout, stderr } = await runWith(
    "node",
    ["scorers/answer_match.js"],
    EXAMPLE,
    JSON.stringify({ expected: null, input: "Hi", output: "Hello" }),
  );
  assert.notEqual(code, 0);
  assert.equal(stdout, "");
  assert.match(stderr, /no expected answer to compare with/);
});
