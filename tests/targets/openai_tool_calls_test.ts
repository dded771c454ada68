// The `openai` target keeps the tools a model asks to call: names, arguments
// parsed from their JSON text (a text that does not parse kept, with why),
// on the unit, in `run --units`, in the RunRecord and through the cache.
// Against a real server on loopback.

import assert from "node:assert/strict";
import {
  type Example,
  openaiTarget,
  parseRunRecord,
  runTarget,
  type Unit,
} from "../../mod.ts";
import { withTempDir } from "../_proc.ts";
import { cli } from "../_cli.ts";

/** A chat completions server answering each request with `message`. */
function chatServer(message: (body: Record<string, unknown>) => unknown) {
  let requests = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      requests++;
      const body = await request.json();
      return Response.json({
        model: "m",
        choices: [{ message: message(body), finish_reason: "tool_calls" }],
        usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 },
      });
    },
  );
  return {
    server,
    base: `http://127.0.0.1:${server.addr.port}/v1`,
    get requests() {
      return requests;
    },
  };
}

const CALLS = {
  role: "assistant",
  content: null,
  tool_calls: [
    {
      id: "call_1",
      type: "function",
      function: {
        name: "get_weather",
        arguments: '{"city": "Paris", "unit": "C"}',
      },
    },
    {
      id: "call_2",
      type: "function",
      function: {
        name: "send_email",
        arguments: '{"to": "a@b.c", "body": "hi',
      },
    },
  ],
};

async function units(
  base: string,
  cases: Example["case"][],
  params?: Record<string, unknown>,
): Promise<Unit[]> {
  const target = openaiTarget({
    base_url: base,
    model: "m",
    retries: 0,
    ...(params ? { params } : {}),
  });
  const examples = cases.map((c, i) => ({
    example_id: `d#${i + 1}`,
    line: i + 1,
    case: c,
  }));
  return await Array.fromAsync(
    ReadableStream.from(examples).pipeThrough(runTarget(target)),
  );
}

Deno.test("openaiTarget keeps the reply's tool_calls: arguments parsed, a broken text kept with its error", async () => {
  const chat = chatServer(() => CALLS);
  await using _server = chat.server;
  const [unit] = await units(chat.base, [{
    input: "Weather in Paris, then mail it",
  }]);
  // A reply that only calls tools has no text: the output is empty, not an error.
  assert.equal(unit?.target?.error, undefined);
  assert.equal(unit?.output, "");
  assert.equal(unit?.target?.finish_reason, "tool_calls");
  const [good, broken] = unit?.tool_calls ?? [];
  assert.deepEqual(good, {
    name: "get_weather",
    arguments: { city: "Paris", unit: "C" },
    id: "call_1",
  });
  assert.equal(broken?.name, "send_email");
  assert.equal(broken?.id, "call_2");
  assert.equal(broken?.arguments, '{"to": "a@b.c", "body": "hi');
  assert.match(broken?.arguments_error ?? "", /JSON/);
});

Deno.test("openaiTarget: no tool_calls in the reply is no trajectory, unless the request offered tools", async () => {
  const chat = chatServer(() => ({ role: "assistant", content: "Sunny." }));
  await using _server = chat.server;
  const [plain] = await units(chat.base, [{ input: "q" }]);
  assert.equal(plain?.output, "Sunny.");
  assert.equal("tool_calls" in (plain ?? {}), false);
  const tools = [{
    type: "function",
    function: { name: "get_weather", parameters: { type: "object" } },
  }];
  const [offered] = await units(chat.base, [{ input: "q" }], { tools });
  assert.deepEqual(offered?.tool_calls, []);
});

Deno.test("openaiTarget reads the deprecated function_call, and arguments a server sends as an object", async () => {
  const chat = chatServer((body) =>
    (body.messages as { content: string }[])[0]?.content === "legacy"
      ? {
        role: "assistant",
        content: null,
        function_call: { name: "lookup", arguments: '{"id": 7}' },
      }
      : {
        role: "assistant",
        content: "",
        tool_calls: [{ function: { name: "lookup", arguments: { id: 8 } } }],
      }
  );
  await using _server = chat.server;
  const [legacy, object] = await units(chat.base, [{ input: "legacy" }, {
    input: "object",
  }]);
  assert.deepEqual(legacy?.tool_calls, [{
    name: "lookup",
    arguments: { id: 7 },
  }]);
  assert.deepEqual(object?.tool_calls, [{
    name: "lookup",
    arguments: { id: 8 },
  }]);
});

Deno.test("openaiTarget: a tool call without a function name is a target error naming where", async () => {
  const chat = chatServer(() => ({
    role: "assistant",
    content: null,
    tool_calls: [{ id: "x", function: { arguments: "{}" } }],
  }));
  await using _server = chat.server;
  const [unit] = await units(chat.base, [{ input: "q" }]);
  assert.equal(
    unit?.target?.error,
    `POST ${chat.base}/chat/completions answered a tool call without a name in choices[0].message.tool_calls[0].function.name`,
  );
});

Deno.test("openaiTarget keeps no answer whose tool call arguments hold the API key", async () => {
  const chat = chatServer(() => ({
    role: "assistant",
    content: null,
    tool_calls: [{
      id: "c",
      function: { name: "leak", arguments: '{"key": "sk-secret-123"}' },
    }],
  }));
  await using _server = chat.server;
  const target = openaiTarget(
    { base_url: chat.base, model: "m", api_key_env: "KEY", retries: 0 },
    () => "sk-secret-123",
  );
  await assert.rejects(
    Promise.resolve(target.call({ input: "q" }, {})),
    (error: Error) => {
      assert.match(
        error.message,
        /^POST \S+\/chat\/completions answered with a secret the config sends \(the API key or a \$\{VAR\} value\) in its message: the answer is not kept$/,
      );
      assert.doesNotMatch(error.message, /sk-secret-123/);
      return true;
    },
  );
});

Deno.test("openaiTarget keeps a tool call's arguments as said when they hold a key too short to look for", async () => {
  // A value under 8 characters is a word a model may say: the answer is kept,
  // and kept whole, with no `***` put in its place.
  const chat = chatServer(() => ({
    role: "assistant",
    content: null,
    tool_calls: [{
      id: "c",
      function: { name: "greet", arguments: '{"text": "hello world"}' },
    }],
  }));
  await using _server = chat.server;
  const target = openaiTarget(
    { base_url: chat.base, model: "m", api_key_env: "KEY", retries: 0 },
    () => "hello",
  );
  const answer = await target.call({ input: "q" }, {});
  assert.deepEqual(answer.tool_calls, [{
    name: "greet",
    arguments: { text: "hello world" },
    id: "c",
  }]);
});

Deno.test("run --units and --record keep the tool_calls, and a cached answer brings them back", async () => {
  const chat = chatServer(() => CALLS);
  await using _server = chat.server;
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      '{"id": "w", "input": "Weather in Paris?"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: cases.jsonl\ntarget: { type: openai, base_url: "${chat.base}", model: m, retries: 0 }\n` +
        "scorers:\n  - { type: tool_call_f1, calls: [get_weather] }\n",
    );
    const first = await cli([
      "run",
      "suite.yaml",
      "--units",
      "u1.jsonl",
      "--record",
      "r1.json",
    ], dir);
    assert.equal(first.code, 0, first.stderr);
    const line = JSON.parse(
      (await Deno.readTextFile(`${dir}/u1.jsonl`)).trim(),
    );
    assert.deepEqual(Object.keys(line), [
      "example_id",
      "unit_id",
      "epoch",
      "input",
      "output",
      "tool_calls",
      "target",
    ]);
    assert.deepEqual(line.tool_calls[0], {
      name: "get_weather",
      arguments: { city: "Paris", unit: "C" },
      id: "call_1",
    });
    assert.equal(line.tool_calls[1].arguments, '{"to": "a@b.c", "body": "hi');
    const record = parseRunRecord(
      await Deno.readTextFile(`${dir}/r1.json`),
      "r1.json",
    );
    assert.deepEqual(record.units[0]?.tool_calls, line.tool_calls);
    // precision 1/2, recall 1/1: F1 2/3.
    const score = JSON.parse(first.stdout.trim());
    assert.equal(score.value, 2 / 3);
    assert.equal(chat.requests, 1);
    const again = await cli(["run", "suite.yaml", "--units", "u2.jsonl"], dir);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(chat.requests, 1, "the second run is answered by the cache");
    const cached = JSON.parse(
      (await Deno.readTextFile(`${dir}/u2.jsonl`)).trim(),
    );
    assert.equal(cached.target.cached, true);
    assert.deepEqual(cached.tool_calls, line.tool_calls);
  });
});
