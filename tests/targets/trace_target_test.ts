// The `trace` target and the trace formats it reads, against the facts of
// EvalCore's trajectory format (v0): native `{steps, final_output}` files
// and OTel / OpenInference JSON exports, each read from a real file.

import assert from "node:assert/strict";
import {
  type Example,
  parseTrace,
  runTarget,
  type Trace,
  TraceError,
  traceTarget,
  type Unit,
} from "../../mod.ts";
import { withTempDir } from "../_proc.ts";
import { cli, cliWithStdin } from "../_cli.ts";
import { fakeLlm, reply } from "../_fake_llm.ts";

type Attr = string | number | boolean | Record<string, unknown>;

/** An OTLP attribute list: strings as `stringValue`, integers as `intValue` text. */
function attributes(attrs: Record<string, Attr>) {
  return Object.entries(attrs).map(([key, v]) => ({
    key,
    value: typeof v === "string"
      ? { stringValue: v }
      : typeof v === "number"
      ? { intValue: String(v) }
      : typeof v === "boolean"
      ? { boolValue: v }
      : v,
  }));
}

interface SpanSpec {
  name?: string;
  id?: string;
  parent?: string;
  start?: number;
  end?: number;
  attrs?: Record<string, Attr>;
}

/** One span; times in seconds, written as OTLP's nanosecond strings. */
function span(spec: SpanSpec) {
  return {
    name: spec.name ?? "span",
    ...(spec.id !== undefined ? { spanId: spec.id } : {}),
    ...(spec.parent !== undefined ? { parentSpanId: spec.parent } : {}),
    ...(spec.start !== undefined
      ? { startTimeUnixNano: String(BigInt(spec.start * 1e9)) }
      : {}),
    ...(spec.end !== undefined
      ? { endTimeUnixNano: String(BigInt(spec.end * 1e9)) }
      : {}),
    attributes: attributes(spec.attrs ?? {}),
  };
}

function otel(...spans: SpanSpec[]): string {
  return JSON.stringify({
    resourceSpans: [{ scopeSpans: [{ spans: spans.map(span) }] }],
  });
}

function names(trace: Trace): string[] {
  return trace.tool_calls.map((c) => c.name);
}

function traceError(text: string): TraceError {
  try {
    parseTrace(text, "traces/t.json");
  } catch (error) {
    if (error instanceof TraceError) return error;
    throw error;
  }
  throw new Error("parsed");
}

Deno.test("parseTrace reads the native format: steps as calls, input default null, final_output", () => {
  const trace = parseTrace(
    JSON.stringify({
      final_output: "Refunds take 30 days.",
      steps: [
        { tool: "search_kb", input: { query: "refund" }, output: "30 days" },
        { tool: "reply", extra: "ignored" },
        { tool: "log", input: "as text", output: null },
      ],
    }),
    "t.json",
  );
  assert.equal(trace.format, "native");
  assert.equal(trace.final_output, "Refunds take 30 days.");
  assert.deepEqual(trace.tool_calls, [
    { name: "search_kb", arguments: { query: "refund" }, output: "30 days" },
    { name: "reply", arguments: null },
    // Native steps are taken verbatim: a string input stays a string.
    { name: "log", arguments: "as text" },
  ]);
  assert.equal(trace.usage, undefined);
  assert.equal(trace.latency_ms, undefined);
  // `final_output: null` is no final answer, as the format's reader takes it.
  assert.equal(
    parseTrace('{"steps": [], "final_output": null}', "t.json").final_output,
    undefined,
  );
});

Deno.test("parseTrace refuses a malformed native trace, naming the file and the field", () => {
  const cases: [string, string | undefined, string][] = [
    ["{not json", undefined, "not JSON (it breaks at line 1, column 2)"],
    // Nothing of a file that is no trace is quoted (a .env beside the data).
    [
      "SECRET_TOKEN=sk-0123456789",
      undefined,
      "not JSON (it breaks at line 1, column 1)",
    ],
    ["[1]", undefined, "a trace must be a JSON object, not a list"],
    [
      '{"spans": []}',
      undefined,
      'expected EvalCore\'s trajectory format ({"steps": [...]}) or an OpenTelemetry JSON export ({"resourceSpans": [...]})',
    ],
    ['{"steps": {}}', "steps", '"steps" must be a list, not an object'],
    [
      '{"steps": [3]}',
      "steps[0]",
      '"steps[0]" must be an object, not a number',
    ],
    [
      '{"steps": [{"tool": "a"}, {"input": {}}]}',
      "steps[1].tool",
      '"steps[1].tool" is missing',
    ],
    [
      '{"steps": [{"tool": 7}]}',
      "steps[0].tool",
      '"steps[0].tool" must be a string, not a number',
    ],
    [
      '{"steps": [], "final_output": {"text": "x"}}',
      "final_output",
      '"final_output" must be a string, not an object',
    ],
  ];
  for (const [text, field, detail] of cases) {
    const error = traceError(text);
    assert.equal(error.field, field, text);
    assert.equal(error.file, "traces/t.json");
    assert.ok(
      error.message.startsWith(`Invalid trace "traces/t.json": ${detail}`),
      error.message,
    );
    assert.doesNotMatch(error.message, /SECRET|sk-0/);
  }
});

Deno.test("parseTrace reads OTel GenAI and OpenInference tool spans; other spans are not steps", () => {
  const trace = parseTrace(
    otel(
      {
        name: "chat gpt",
        start: 1,
        end: 2,
        attrs: { "gen_ai.completion": "hi" },
      },
      {
        name: "execute_tool verify_identity",
        start: 3,
        end: 4,
        attrs: {
          "gen_ai.tool.name": "verify_identity",
          "gen_ai.tool.call.arguments": '{"user": "u-1"}',
          "gen_ai.tool.call.result": '{"verified": true}',
          "gen_ai.tool.call.id": "call_7",
        },
      },
      {
        name: "search_kb",
        start: 5,
        end: 6,
        attrs: {
          "openinference.span.kind": "TOOL",
          "tool.name": "kb_search",
          "input.value": '{"query": "refund"}',
          "output.value": "Refunds are honored within 30 days.",
        },
      },
      // An OpenInference tool span without `tool.name`: the span's name.
      {
        name: "lookup_order",
        start: 7,
        end: 8,
        attrs: { "openinference.span.kind": "tool" },
      },
      {
        name: "retriever",
        start: 9,
        end: 10,
        attrs: { "openinference.span.kind": "RETRIEVER", "input.value": "q" },
      },
    ),
    "t.json",
  );
  assert.equal(trace.format, "otel");
  assert.deepEqual(trace.tool_calls, [
    {
      name: "verify_identity",
      arguments: { user: "u-1" },
      output: { verified: true },
      id: "call_7",
    },
    // A string holding JSON is unwrapped, plain text stays text.
    {
      name: "kb_search",
      arguments: { query: "refund" },
      output: "Refunds are honored within 30 days.",
    },
    { name: "lookup_order", arguments: null },
  ]);
});

Deno.test("parseTrace orders spans by start time, those without one after, in file order", () => {
  const tool = (name: string, start?: number): SpanSpec => ({
    name,
    ...(start !== undefined ? { start, end: start + 0.5 } : {}),
    attrs: { "gen_ai.tool.name": name },
  });
  const trace = parseTrace(
    otel(tool("c", 30), tool("x"), tool("a", 10), tool("y"), tool("b", 20)),
    "t.json",
  );
  assert.deepEqual(names(trace), ["a", "b", "c", "x", "y"]);
});

Deno.test("parseTrace takes the final answer from the latest root span, output.value before gen_ai.completion", () => {
  // A flat export: every span is a root; the last thing said is the answer.
  const flat = parseTrace(
    otel(
      { start: 5, attrs: { "gen_ai.completion": "the answer" } },
      { start: 1, attrs: { "gen_ai.completion": "an interim thought" } },
    ),
    "t.json",
  );
  assert.equal(flat.final_output, "the answer");
  // On one span, OpenInference's output.value comes first.
  const both = parseTrace(
    otel({
      start: 1,
      attrs: { "gen_ai.completion": "genai", "output.value": "openinference" },
    }),
    "t.json",
  );
  assert.equal(both.final_output, "openinference");
  // A child span's output is no final answer, however late it starts; a span
  // whose parent is not in the file is a root (a partial trace).
  const nested = parseTrace(
    otel(
      { id: "r", start: 1, attrs: { "output.value": "root answer" } },
      {
        id: "c",
        parent: "r",
        start: 9,
        attrs: { "output.value": "child text" },
      },
    ),
    "t.json",
  );
  assert.equal(nested.final_output, "root answer");
  const partial = parseTrace(
    otel(
      {
        id: "c1",
        parent: "gone",
        start: 2,
        attrs: { "output.value": "from a dropped parent's child" },
      },
      {
        id: "c2",
        parent: "c1",
        start: 3,
        attrs: { "output.value": "grandchild" },
      },
    ),
    "t.json",
  );
  assert.equal(partial.final_output, "from a dropped parent's child");
  // A stringified JSON answer is kept as text; none at all is no final answer.
  const json = parseTrace(
    otel({ start: 1, attrs: { "output.value": '{"a": 1}' } }),
    "t.json",
  );
  assert.equal(json.final_output, '{"a": 1}');
  const none = parseTrace(
    otel({ start: 1, attrs: { "gen_ai.tool.name": "t" } }),
    "t.json",
  );
  assert.equal(none.final_output, undefined);
  // A span without a start counts as the earliest: a timed answer wins.
  const untimed = parseTrace(
    otel(
      { attrs: { "output.value": "untimed" } },
      { start: 1, attrs: { "output.value": "timed" } },
    ),
    "t.json",
  );
  assert.equal(untimed.final_output, "timed");
});

Deno.test("parseTrace sums tokens over every span of both conventions and measures latency from the spans", () => {
  const trace = parseTrace(
    otel(
      {
        start: 1,
        end: 2.5,
        attrs: {
          "gen_ai.usage.input_tokens": 220,
          "gen_ai.usage.output_tokens": 48,
        },
      },
      {
        start: 3,
        end: 3.2,
        attrs: {
          "llm.token_count.prompt": 100,
          "llm.token_count.completion": 2,
        },
      },
      {
        start: 4,
        end: 5.4,
        attrs: { "gen_ai.tool.name": "t", "gen_ai.usage.input_tokens": 5 },
      },
    ),
    "t.json",
  );
  assert.deepEqual(trace.usage, { prompt_tokens: 325, completion_tokens: 50 });
  // The older GenAI names, as OpenLLMetry still writes them.
  const older = parseTrace(
    otel({
      attrs: {
        "gen_ai.usage.prompt_tokens": 120,
        "gen_ai.usage.completion_tokens": 7,
        "gen_ai.usage.cache_read_input_tokens": 100,
        "gen_ai.usage.cache_creation_input_tokens": 20,
      },
    }),
    "t.json",
  );
  assert.deepEqual(older.usage, {
    prompt_tokens: 120,
    completion_tokens: 7,
    prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 20 },
  });
  // max(end) − min(start): 5.4 s − 1 s.
  assert.equal(trace.latency_ms, 4400);
  const bare = parseTrace(
    otel({ attrs: { "gen_ai.tool.name": "t" } }),
    "t.json",
  );
  assert.equal(bare.usage, undefined);
  assert.equal(bare.latency_ms, undefined);
});

Deno.test("parseTrace counts a span that has both conventions' token counts once, each count from the first convention that has it", () => {
  // OpenLLMetry beside OpenInference on one call, or a collector that
  // copies one convention into the other: added up, 2× the tokens; but a
  // count only OpenInference wrote (the completion, a cache read) is the
  // call's too, and was lost when the GenAI group won whole.
  const trace = parseTrace(
    otel(
      {
        start: 1,
        end: 2,
        attrs: {
          "gen_ai.usage.input_tokens": 220,
          "gen_ai.usage.output_tokens": 48,
          "llm.token_count.prompt": 220,
          "llm.token_count.completion": 48,
          "llm.token_count.prompt_details.cache_read": 200,
        },
      },
      {
        start: 3,
        end: 4,
        attrs: {
          "gen_ai.usage.prompt_tokens": 10,
          "llm.token_count.prompt": 12,
          "llm.token_count.completion": 3,
          "llm.token_count.prompt_details.cache_write": 4,
        },
      },
    ),
    "t.json",
  );
  assert.deepEqual(trace.usage, {
    prompt_tokens: 230,
    completion_tokens: 51,
    prompt_tokens_details: { cached_tokens: 200, cache_write_tokens: 4 },
  });
});

Deno.test("parseTrace refuses a malformed OTel export, naming the field", () => {
  const cases: [unknown, string, string][] = [
    [
      { resourceSpans: {} },
      "resourceSpans",
      '"resourceSpans" must be a list, not an object',
    ],
    [
      { resourceSpans: [{ scopeSpans: [{ spans: [7] }] }] },
      "resourceSpans[0].scopeSpans[0].spans[0]",
      "must be an object, not a number",
    ],
    [
      {
        resourceSpans: [{
          scopeSpans: [{ spans: [{ attributes: [{ key: 3, value: {} }] }] }],
        }],
      },
      "resourceSpans[0].scopeSpans[0].spans[0].attributes[0].key",
      "must be a string, not a number",
    ],
  ];
  for (const [value, field, detail] of cases) {
    const error = traceError(JSON.stringify(value));
    assert.equal(error.field, field);
    assert.ok(
      error.message.includes(`"${field}" ${detail}`) ||
        error.message.includes(detail),
      error.message,
    );
  }
});

async function traceUnits(
  dir: string,
  cases: Example["case"][],
): Promise<Unit[]> {
  const examples: Example[] = cases.map((c, i) => ({
    example_id: `d#${i + 1}`,
    line: i + 1,
    case: c,
  }));
  return await Array.fromAsync(
    ReadableStream.from(examples).pipeThrough(runTarget(traceTarget({ dir }))),
  );
}

Deno.test("traceTarget: the output is the final answer, else EvalCore's trajectory JSON; the steps are tool_calls", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/traces`);
    await Deno.writeTextFile(
      `${dir}/traces/answer.json`,
      '{"final_output": "30 days", "steps": [{"tool": "search_kb", "input": {"query": "refund"}}]}',
    );
    await Deno.writeTextFile(
      `${dir}/traces/path.json`,
      '{"steps": [{"tool": "search_kb", "input": {"query": "refund"}, "output": "30 days"}]}',
    );
    await Deno.writeTextFile(
      `${dir}/traces/otel.json`,
      otel(
        {
          start: 1,
          end: 2,
          attrs: {
            "gen_ai.usage.input_tokens": 10,
            "gen_ai.usage.output_tokens": 4,
            "gen_ai.completion": "Done.",
          },
        },
        { start: 2, end: 3.25, attrs: { "gen_ai.tool.name": "search_kb" } },
      ),
    );
    const units = await traceUnits(dir, [
      { input: "", trace: "traces/answer.json" },
      { input: "", trace: "traces/path.json" },
      { input: "", trace: "traces/otel.json" },
    ]);
    assert.equal(units[0]?.output, "30 days");
    assert.deepEqual(units[0]?.tool_calls, [{
      name: "search_kb",
      arguments: { query: "refund" },
    }]);
    assert.equal(
      units[1]?.output,
      '{"steps":[{"tool":"search_kb","input":{"query":"refund"},"output":"30 days"}]}',
    );
    assert.deepEqual(units[0]?.target, {
      latency_ms: 0,
      trace: `${dir}/traces/answer.json`,
      trace_format: "native",
    });
    assert.equal(units[2]?.output, "Done.");
    assert.equal(units[2]?.target?.latency_ms, 2250);
    assert.deepEqual(units[2]?.target?.usage, {
      prompt_tokens: 10,
      completion_tokens: 4,
      total_tokens: 14,
    });
    assert.equal(units[2]?.target?.trace_format, "otel");
  });
});

Deno.test("traceTarget: a missing or malformed trace is that unit's target error, naming the file and field", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/bad.json`,
      '{"steps": [{"tool": "a"}, {"input": 1}]}',
    );
    await Deno.writeTextFile(`${dir}/good.json`, '{"steps": []}');
    const units = await traceUnits(dir, [
      { input: "", trace: "gone.json" },
      { input: "", trace: "bad.json" },
      { input: "q" },
      { input: "", trace: "good.json" },
    ]);
    assert.equal(
      units[0]?.target?.error,
      `Cannot read the case's "trace" file "${dir}/gone.json": no such file`,
    );
    assert.equal(
      units[1]?.target?.error,
      `Invalid trace "${dir}/bad.json": "steps[1].tool" is missing`,
    );
    assert.equal(
      units[2]?.target?.error,
      'The case names no trace file: its "trace" field is missing',
    );
    assert.ok(
      units.slice(0, 3).every((u) =>
        u.output === null && u.tool_calls === undefined
      ),
    );
    // The run goes on: the good trace after them is read.
    assert.deepEqual(units[3]?.tool_calls, []);
    assert.equal(units[3]?.output, '{"steps":[]}');
  });
});

Deno.test("run with a trace target: traces resolve against the dataset's folder; a bad one blocks its unit only", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/data/traces`, { recursive: true });
    await Deno.writeTextFile(
      `${dir}/data/traces/a.json`,
      '{"final_output": "Refunds within 30 days.", "steps": [{"tool": "search_kb"}]}',
    );
    await Deno.writeTextFile(`${dir}/data/traces/b.json`, "{");
    // EvalCore's trace cases have no input: a case with a trace needs none.
    await Deno.writeTextFile(
      `${dir}/data/cases.jsonl`,
      '{"id": "a", "trace": "traces/a.json"}\n{"id": "b", "trace": "traces/b.json"}\n{"id": "c", "trace": 3}\n',
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      'dataset: data/cases.jsonl\ntarget: { type: trace }\nscorers:\n  - { type: contains, value: "30 days" }\n',
    );
    const out = await cli(["run", "suite.yaml", "--units", "units.jsonl"], dir);
    assert.equal(out.code, 2, out.stderr); // the malformed case "c"
    const scores = out.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(scores.map((s) => [s.example_id, s.status]), [
      ["data/cases.jsonl#a", "scored"],
      ["data/cases.jsonl#b", "blocked"],
      ["data/cases.jsonl#c", "blocked"],
    ]);
    assert.equal(scores[0].value, 1);
    assert.match(
      scores[1].reason,
      /^target error: Invalid trace "data\/traces\/b\.json": not JSON \(it breaks at line \d+, column \d+\)$/,
    );
    assert.equal(scores[1].diagnostics[0].code, "target.error");
    assert.match(
      out.stderr,
      /line 3: "trace" must be a file's path, not a number/,
    );
    const units = (await Deno.readTextFile(`${dir}/units.jsonl`)).trim()
      .split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(units[0].tool_calls, [{
      name: "search_kb",
      arguments: null,
    }]);
    assert.equal(units[0].output, "Refunds within 30 days.");
  });
});

Deno.test("run with a trace target priced by cost: (EvalCore's key) records each trace's cost_usd, which the cost scorer reads; no budget is charged", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/t.json`,
      otel({
        attrs: {
          "gen_ai.usage.input_tokens": 1000,
          "gen_ai.usage.output_tokens": 500,
          "gen_ai.completion": "Done.",
        },
      }),
    );
    await Deno.writeTextFile(`${dir}/cases.jsonl`, '{"trace": "t.json"}\n');
    const suite = (tail: string) =>
      "dataset: cases.jsonl\ntarget:\n  type: trace\n  cost: { input_per_1m: 0.4, output_per_1m: 1.6 }\n" +
      `scorers: [{ type: cost, max_usd: 0.001 }]\n${tail}`;
    await Deno.writeTextFile(`${dir}/suite.yaml`, suite(""));
    const out = await cli(["run", "suite.yaml", "--units", "units.jsonl"], dir);
    assert.equal(out.code, 0, out.stderr);
    const [score] = out.stdout.trim().split("\n").map((l) => JSON.parse(l));
    // 1000 × 0.4 + 500 × 1.6 = 1200 USD per million tokens.
    assert.deepEqual([score.status, score.value, score.reason], [
      "scored",
      0,
      "$0.0012, more than $0.001",
    ]);
    const [unit] = (await Deno.readTextFile(`${dir}/units.jsonl`)).trim()
      .split("\n").map((l) => JSON.parse(l));
    assert.equal(unit.target.cost_usd, 0.0012);
    // What a trace cost was spent when it was recorded: a budget would stop
    // nothing, and is refused as one with no price to count.
    await Deno.writeTextFile(`${dir}/suite.yaml`, suite("budget_usd: 1\n"));
    const budget = await cli(["validate", "suite.yaml"], dir);
    assert.equal(budget.code, 2);
    assert.match(
      budget.stderr,
      /line 6: "budget_usd" counts what priced calls cost/,
    );
  });
});

Deno.test("run with a trace target prices the tokens its spans read from and wrote to a prompt cache at cached_input_per_1m and cache_write_per_1m, as an openai target's", async () => {
  await withTempDir(async (dir) => {
    // An OTel GenAI span and an OpenInference one; each convention counts
    // cache reads and writes as part of the input tokens.
    await Deno.writeTextFile(
      `${dir}/t.json`,
      otel(
        {
          name: "chat",
          attrs: {
            "gen_ai.usage.input_tokens": 1000,
            "gen_ai.usage.output_tokens": 100,
            "gen_ai.usage.cache_read.input_tokens": 600,
            "gen_ai.usage.cache_creation.input_tokens": 200,
          },
        },
        {
          name: "llm",
          attrs: {
            "llm.token_count.prompt": 500,
            "llm.token_count.completion": 50,
            "llm.token_count.prompt_details.cache_read": 100,
            "llm.token_count.prompt_details.cache_write": 300,
            "output.value": "Done.",
          },
        },
      ),
    );
    await Deno.writeTextFile(`${dir}/cases.jsonl`, '{"trace": "t.json"}\n');
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: cases.jsonl\ntarget:\n  type: trace\n" +
        "  cost: { input_per_1m: 1, output_per_1m: 10, cached_input_per_1m: 0.1, cache_write_per_1m: 1.25 }\n" +
        "scorers: [{ type: cost, max_usd: 1 }]\n",
    );
    const out = await cli(["run", "suite.yaml", "--units", "units.jsonl"], dir);
    assert.equal(out.code, 0, out.stderr);
    const [unit] = (await Deno.readTextFile(`${dir}/units.jsonl`)).trim()
      .split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(unit.target.usage, {
      prompt_tokens: 1500,
      completion_tokens: 150,
      total_tokens: 1650,
      prompt_tokens_details: { cached_tokens: 700, cache_write_tokens: 500 },
    });
    // 300 input at 1, 700 cached at 0.1, 500 written at 1.25, 150 out at 10.
    assert.equal(unit.target.cost_usd, (300 + 70 + 625 + 1500) / 1e6);
  });
});

Deno.test("run with a trace target counts a call's tokens once when spans nest: a second instrumentation's span of it, or an agent span's roll-up of its calls", async () => {
  await withTempDir(async (dir) => {
    // An agent span carrying its run's totals; below it a GenAI chat span
    // and, inside that, OpenInference's LLM span of the same call (with a
    // cache read only it wrote); a tool span; a second chat. Summed over
    // every span: 1260 prompt and 156 completion tokens for 520 and 60.
    await Deno.writeTextFile(
      `${dir}/t.json`,
      otel(
        {
          name: "invoke_agent support",
          id: "a",
          start: 1,
          end: 9,
          attrs: {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.usage.input_tokens": 520,
            "gen_ai.usage.output_tokens": 60,
            "gen_ai.completion": "30 days",
          },
        },
        {
          name: "chat gpt-4o",
          id: "c1",
          parent: "a",
          start: 2,
          end: 3,
          attrs: {
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.usage.input_tokens": 220,
            "gen_ai.usage.output_tokens": 48,
          },
        },
        {
          name: "ChatCompletion",
          id: "o1",
          parent: "c1",
          start: 2,
          end: 3,
          attrs: {
            "openinference.span.kind": "LLM",
            "llm.model_name": "gpt-4o",
            "llm.token_count.prompt": 220,
            "llm.token_count.completion": 48,
            "llm.token_count.prompt_details.cache_read": 200,
          },
        },
        {
          name: "execute_tool search_kb",
          id: "t1",
          parent: "a",
          start: 4,
          end: 5,
          attrs: { "gen_ai.tool.name": "search_kb" },
        },
        {
          name: "chat gpt-4o",
          id: "c2",
          parent: "a",
          start: 6,
          end: 8,
          attrs: {
            "gen_ai.usage.input_tokens": 300,
            "gen_ai.usage.output_tokens": 12,
          },
        },
      ),
    );
    await Deno.writeTextFile(`${dir}/cases.jsonl`, '{"trace": "t.json"}\n');
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: cases.jsonl\ntarget:\n  type: trace\n" +
        "  cost: { input_per_1m: 1, output_per_1m: 10, cached_input_per_1m: 0.1 }\n" +
        "scorers: [{ type: cost, max_usd: 1 }]\n",
    );
    const out = await cli(["run", "suite.yaml", "--units", "units.jsonl"], dir);
    assert.equal(out.code, 0, out.stderr);
    const [unit] = (await Deno.readTextFile(`${dir}/units.jsonl`)).trim()
      .split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(unit.target.usage, {
      prompt_tokens: 520,
      completion_tokens: 60,
      total_tokens: 580,
      prompt_tokens_details: { cached_tokens: 200 },
    });
    // 320 input at 1, 200 cached at 0.1, 60 out at 10.
    assert.equal(unit.target.cost_usd, (320 + 20 + 600) / 1e6);
  });
});

Deno.test("run with a trace target counts no call in its cost: a recorded trace's tokens and cost_usd were spent when it was recorded, in the summary, the record and the reports alike", async () => {
  await using server = fakeLlm({
    handler: () =>
      reply.ok("Done.", {
        usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
      }),
  });
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/t.json`,
      otel({
        attrs: {
          "gen_ai.usage.input_tokens": 1000,
          "gen_ai.usage.output_tokens": 500,
          "gen_ai.completion": "Done.",
        },
      }),
    );
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      '{"input": "q", "trace": "t.json", "expected": "Done."}\n',
    );
    // Unpriced, the trace was shown as a call of the run whose cost is
    // unknown; priced, its recorded cost as money the run spent.
    for (
      const cost of ["", "  cost: { input_per_1m: 0.4, output_per_1m: 1.6 }\n"]
    ) {
      await Deno.writeTextFile(
        `${dir}/suite.yaml`,
        `dataset: cases.jsonl\ntarget:\n  type: trace\n${cost}scorers: [{ type: exact_match }]\n`,
      );
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
      assert.doesNotMatch(out.stderr, /^cost:/m);
      const record = JSON.parse(await Deno.readTextFile(`${dir}/run.json`));
      assert.equal(record.cost, undefined);
      assert.doesNotMatch(
        await Deno.readTextFile(`${dir}/summary.md`),
        /\*\*Cost/,
      );
      assert.doesNotMatch(
        await Deno.readTextFile(`${dir}/junit.xml`),
        /cost_usd/,
      );
    }
    // Beside a target that calls a model, only that target's calls count.
    await Deno.writeTextFile(
      `${dir}/matrix.yaml`,
      `dataset: cases.jsonl
targets:
  recorded:
    type: trace
    cost: { input_per_1m: 0.4, output_per_1m: 1.6 }
  live:
    type: openai
    base_url: ${server.baseUrl}
    model: bot
    cost: { input_per_1m: 1, output_per_1m: 10 }
matrix: [recorded, live]
scorers: [{ type: exact_match }]
`,
    );
    const matrix = await cli(
      ["run", "matrix.yaml", "--cache", "off", "--markdown", "matrix.md"],
      dir,
    );
    assert.equal(matrix.code, 0, matrix.stderr);
    const line = "cost: $0.0002 (target $0.0002: 1 call, 100+10 tokens)";
    assert.match(matrix.stderr, new RegExp(`^${RegExp.escape(line)}$`, "m"));
    assert.ok(
      (await Deno.readTextFile(`${dir}/matrix.md`)).includes(
        `**C${line.slice(1)}**`,
      ),
    );
  });
});

Deno.test("run with a trace target reads a CSV dataset's trace column, without an input column", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/a.json`,
      '{"final_output": "30 days", "steps": [{"tool": "search_kb"}]}',
    );
    await Deno.writeTextFile(
      `${dir}/cases.csv`,
      "id,trace,topic\na,a.json,refunds\n",
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: cases.csv\ntarget: { type: trace }\nscorers:\n  - { type: exact_match, value: 30 days }\n",
    );
    const out = await cli(["run", "suite.yaml", "--units", "units.jsonl"], dir);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(JSON.parse(out.stdout).value, 1);
    const unit = JSON.parse(await Deno.readTextFile(`${dir}/units.jsonl`));
    assert.deepEqual(unit.metadata, { topic: "refunds" });
    assert.deepEqual(unit.tool_calls, [{ name: "search_kb", arguments: null }]);
  });
});

Deno.test("run with a trace target and datasets: traces resolve against the first dataset's folder", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/data`);
    await Deno.writeTextFile(
      `${dir}/data/a.json`,
      '{"final_output": "30 days", "steps": []}',
    );
    await Deno.writeTextFile(
      `${dir}/data/cases.jsonl`,
      '{"id": "a", "trace": "a.json"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "datasets:\n  - path: data/cases.jsonl\ntarget: { type: trace }\nscorers:\n  - { type: exact_match, value: 30 days }\n",
    );
    const out = await cli(["run", "suite.yaml"], dir);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(JSON.parse(out.stdout).value, 1);
  });
});

Deno.test("run with a trace target reads no file outside the dataset's folder: absolute paths, .., symlinks out, FIFOs", async () => {
  await withTempDir(async (dir) => {
    const secret = "s3cr3t-from-outside-the-folder";
    await Deno.mkdir(`${dir}/data`);
    // A valid trace outside the folder, whose answer would be scored whole.
    await Deno.writeTextFile(
      `${dir}/outside.json`,
      JSON.stringify({ final_output: secret, steps: [] }),
    );
    await Deno.symlink(`${dir}/outside.json`, `${dir}/data/link.json`);
    await Deno.symlink("/etc", `${dir}/data/etc`);
    const made = await new Deno.Command("mkfifo", {
      args: [`${dir}/data/fifo.json`],
    }).output();
    assert.equal(made.code, 0);
    await Deno.writeTextFile(
      `${dir}/data/in.json`,
      '{"final_output": "30 days", "steps": []}',
    );
    const traces = [
      "/etc/passwd",
      "../outside.json",
      "./sub/../../outside.json",
      "link.json",
      "etc/passwd",
      "/proc/self/environ",
      "fifo.json",
      "in.json",
    ];
    await Deno.writeTextFile(
      `${dir}/data/cases.jsonl`,
      traces.map((trace, i) => JSON.stringify({ id: `c${i}`, trace }) + "\n")
        .join(""),
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: data/cases.jsonl\ntarget: { type: trace }\nscorers:\n  - { type: exact_match, value: 30 days }\n",
    );
    const out = await cliWithStdin(
      ["run", "suite.yaml", "--units", "units.jsonl"],
      dir,
      "",
      60_000,
    );
    const scores = out.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(
      scores.map((s) => s.status),
      [...traces.slice(0, -1).map(() => "blocked"), "scored"],
      out.stdout,
    );
    const root = await Deno.realPath(`${dir}/data`);
    for (const [i, trace] of traces.slice(0, -2).entries()) {
      assert.equal(
        scores[i].reason,
        `target error: The case's "trace" ${
          JSON.stringify(trace)
        } is outside the dataset's folder ${
          JSON.stringify(root)
        }: a trace is read from that folder or below it`,
      );
    }
    assert.match(scores[6].reason, /fifo\.json": it is not a regular file$/);
    const written = out.stdout + out.stderr +
      await Deno.readTextFile(`${dir}/units.jsonl`);
    assert.ok(!written.includes(secret), written);
    assert.ok(!written.includes("root:"), written);
    assert.ok(!written.includes(`PATH=`), written);
  });
});

Deno.test("traceTarget refuses a trace bigger than maxBytes without reading it, and /dev/zero", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/big.json`,
      JSON.stringify({ final_output: "x".repeat(200), steps: [] }),
    );
    await Deno.writeTextFile(`${dir}/ok.json`, '{"steps": []}');
    const units = await Array.fromAsync(
      ReadableStream.from<Example>([
        { example_id: "d#1", line: 1, case: { input: "", trace: "big.json" } },
        { example_id: "d#2", line: 2, case: { input: "", trace: "/dev/zero" } },
        { example_id: "d#3", line: 3, case: { input: "", trace: "ok.json" } },
      ]).pipeThrough(runTarget(traceTarget({ dir, maxBytes: 100 }))),
    );
    assert.equal(
      units[0]?.target?.error,
      `Cannot read the case's "trace" file "${dir}/big.json": it is 230 bytes, over the cap of 100`,
    );
    assert.match(units[1]?.target?.error ?? "", /"\/dev\/zero" is outside/);
    assert.equal(units[2]?.target?.error, undefined);
  });
});
