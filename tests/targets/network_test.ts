// Network targets, flow control, the target cache and the LLM judge, against
// a real chat completions server on loopback (tests/_fake_llm.ts), through the
// library and end to end through `deno run -A cli.ts run`.

import assert from "node:assert/strict";
import { cli, type Outcome } from "../_cli.ts";
import {
  cachedTarget,
  type Case,
  ContentFilterError,
  exactMatch,
  type Example,
  functionScorer,
  httpTarget,
  type HttpTargetSettings,
  llmJudge,
  type LlmJudgeSettings,
  openaiTarget,
  type OpenAITargetSettings,
  ReplyError,
  runTarget,
  type RunTargetOptions,
  type Score,
  type Scorer,
  scoreUnits,
  type Target,
  TargetCache,
  type Unit,
} from "../../mod.ts";
import { cacheKey } from "../../src/targets/cache.ts";
import { EmbeddingsClient } from "../../src/net/embeddings_client.ts";
import * as net from "../../src/net/mod.ts";
import {
  DEFAULT_JUDGE_SYSTEM,
  parseJudgeReply,
} from "../../src/scorers/llm_judge.ts";
import {
  parseRetryAfter,
  RateLimiter,
  RetryableError,
  RetryBudget,
  withRetries,
} from "../../src/net/flow.ts";
import {
  arrivalGaps,
  embeddings,
  type FakeLlm,
  fakeLlm,
  type FakeLlmOptions,
  lastMessage,
  type RecordedRequest,
  reply,
  slotsBroken,
} from "../_fake_llm.ts";
import { withTempDir } from "../_proc.ts";

const KEY = "sk-test-SECRET-1234";
const env = (name: string) => name === "FAKE_API_KEY" ? KEY : undefined;

// --- helpers ------------------------------------------------------------------

async function withServer(
  options: FakeLlmOptions,
  fn: (server: FakeLlm) => Promise<void>,
): Promise<void> {
  const server = fakeLlm(options);
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

function examples(cases: Case[]): Example[] {
  return cases.map((c, i) => ({
    example_id: `d.jsonl#${i + 1}`,
    line: i + 1,
    case: c,
  }));
}

async function run(
  target: Target,
  cases: Case[],
  options: RunTargetOptions = {},
): Promise<Unit[]> {
  return await Array.fromAsync(
    ReadableStream.from(examples(cases)).pipeThrough(
      runTarget(target, options),
    ),
  );
}

async function runOne(target: Target, testCase: Case): Promise<Unit> {
  const [unit] = await run(target, [testCase]);
  assert.ok(unit !== undefined);
  return unit;
}

async function score(units: Unit[], scorers: Scorer[]): Promise<Score[]> {
  return await Array.fromAsync(
    ReadableStream.from(units).pipeThrough(scoreUnits(scorers)),
  );
}

function chat(
  server: FakeLlm,
  extra: Partial<OpenAITargetSettings> = {},
): OpenAITargetSettings {
  return {
    base_url: server.baseUrl,
    model: "fake-model",
    api_key_env: "FAKE_API_KEY",
    retry_delay: 0.01,
    timeout: 5,
    ...extra,
  };
}

function http(
  server: FakeLlm,
  extra: Partial<HttpTargetSettings> = {},
): HttpTargetSettings {
  return {
    url: `${server.url}/answer`,
    retry_delay: 0.01,
    timeout: 5,
    ...extra,
  };
}

function judge(
  server: FakeLlm,
  extra: Partial<LlmJudgeSettings> = {},
): LlmJudgeSettings {
  return {
    base_url: server.baseUrl,
    model: "fake-judge",
    api_key_env: "FAKE_API_KEY",
    retry_delay: 0.01,
    timeout: 5,
    ...extra,
  };
}

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) out.push(...await listFiles(path));
    else out.push(path);
  }
  return out.sort();
}

/** A cache entry as a pack holds it, with the pack it is in. */
interface PackEntry {
  key: string;
  result: { output: string; info?: Record<string, unknown> };
  file: string;
}

/**
 * Every entry in a cache folder's packs, in pack order: a stray file or a
 * torn line fails the test.
 */
async function cacheEntries(dir: string): Promise<PackEntry[]> {
  let files: string[];
  try {
    files = await listFiles(dir);
  } catch (error) {
    // No call was ever cached, so the folder was never made.
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    return [];
  }
  const entries: PackEntry[] = [];
  for (const file of files.sort()) {
    assert.match(file, /\/pack-[^/]+\.ndjson$/, `a stray ${file}`);
    const text = await Deno.readTextFile(file);
    assert.ok(text.endsWith("\n"), `a torn last line in ${file}`);
    for (const line of text.split("\n").slice(0, -1)) {
      entries.push({ ...JSON.parse(line), file });
    }
  }
  return entries;
}

function gapsOver(requests: readonly RecordedRequest[]): number[] {
  return arrivalGaps(requests).map((g) => Math.round(g));
}

// --- parseRetryAfter, RetryBudget, withRetries, RateLimiter -------------------

Deno.test("parseRetryAfter reads seconds, fractions and HTTP dates, and nothing else", () => {
  const now = Date.UTC(2025, 0, 1, 12, 0, 0);
  assert.equal(parseRetryAfter("0.2", now), 200);
  assert.equal(parseRetryAfter("3", now), 3000);
  assert.equal(parseRetryAfter(" 1 ", now), 1000);
  assert.equal(parseRetryAfter("-5", now), 0);
  assert.equal(
    parseRetryAfter(new Date(now + 5000).toUTCString(), now),
    5000,
  );
  assert.equal(parseRetryAfter(new Date(now - 5000).toUTCString(), now), 0);
  assert.equal(parseRetryAfter(null, now), undefined);
  assert.equal(parseRetryAfter("", now), undefined);
  assert.equal(parseRetryAfter("soon", now), undefined);
});

Deno.test("RetryBudget hands out its retries and then refuses", () => {
  const budget = new RetryBudget(2);
  assert.deepEqual([budget.take(), budget.take(), budget.take()], [
    true,
    true,
    false,
  ]);
  assert.equal(budget.left, 0);
});

Deno.test("withRetries backs off exponentially with jitter between half and all of the step, capped", async () => {
  // Steps of 50 ms · 2^(n-1), capped at 150: 50, 100, 150, 150.
  for (
    const [random, expected] of [
      [0, [25, 50, 75, 75]],
      [1, [50, 100, 150, 150]],
    ] as const
  ) {
    const delays: number[] = [];
    const result = await withRetries((n) => {
      if (n <= 4) return Promise.reject(new RetryableError(`fail ${n}`));
      return Promise.resolve(`ok after ${n}`);
    }, {
      retries: 4,
      baseDelayMs: 50,
      maxDelayMs: 150,
      random: () => random,
      onRetry: ({ delayMs }) => delays.push(delayMs),
    });
    assert.equal(result, "ok after 5");
    assert.deepEqual(delays, expected);
  }
});

Deno.test("withRetries waits what Retry-After asks instead of its backoff, and fails a call asked to wait past maxRetryAfterMs at once", async () => {
  const delays: number[] = [];
  let calls = 0;
  await assert.rejects(
    withRetries((n) => {
      calls++;
      if (n === 1) return Promise.reject(new RetryableError("HTTP 429", 30));
      if (n === 2) return Promise.reject(new RetryableError("HTTP 429", 40));
      return Promise.reject(new RetryableError("HTTP 429", 3_600_000));
    }, {
      baseDelayMs: 1,
      maxRetryAfterMs: 40,
      onRetry: ({ delayMs }) => delays.push(delayMs),
    }),
    {
      message:
        "HTTP 429 (the server asked to wait 3600s (Retry-After), longer than the 40ms evalpipe waits; not retried)",
    },
  );
  assert.deepEqual(delays, [30, 40]);
  assert.equal(calls, 3);
});

Deno.test("withRetries does not retry an error that is not retryable", async () => {
  let calls = 0;
  await assert.rejects(
    withRetries(() => {
      calls++;
      return Promise.reject(new Error("HTTP 400"));
    }, { baseDelayMs: 1 }),
    { message: "HTTP 400" },
  );
  assert.equal(calls, 1);
});

Deno.test("withRetries names the attempts when retries run out, and the budget when it is spent", async () => {
  await assert.rejects(
    withRetries(() => Promise.reject(new RetryableError("HTTP 500")), {
      retries: 2,
      baseDelayMs: 1,
    }),
    { message: "HTTP 500 (after 3 attempts)" },
  );
  const budget = new RetryBudget(1);
  await assert.rejects(
    withRetries(() => Promise.reject(new RetryableError("HTTP 500")), {
      retries: 5,
      baseDelayMs: 1,
      budget,
    }),
    { message: "HTTP 500 (after 2 attempts, the run's retry budget is spent)" },
  );
});

Deno.test("withRetries stops waiting when its signal aborts", async () => {
  const controller = new AbortController();
  const reason = new Error("stop");
  const timer = setTimeout(() => controller.abort(reason), 20);
  try {
    await assert.rejects(
      withRetries(
        () => Promise.reject(new RetryableError("HTTP 503", 60_000)),
        {
          signal: controller.signal,
        },
      ),
      (error) => error === reason,
    );
  } finally {
    clearTimeout(timer);
  }
});

Deno.test("RateLimiter releases a burst of callers one interval apart", async () => {
  const limiter = new RateLimiter({ perMinute: 1200 }); // one per 50 ms
  const times: number[] = [];
  const start = performance.now();
  await Promise.all(
    Array.from(
      { length: 5 },
      () => limiter.acquire().then(() => times.push(performance.now())),
    ),
  );
  times.sort((a, b) => a - b);
  // The k-th caller's slot is k intervals after the first: never earlier. A
  // slot whose timer fires late (a loaded machine) does not push back the
  // next one, so the gaps between two releases may vary; the slots may not.
  for (let i = 1; i < times.length; i++) {
    assert.ok(times[i]! - start >= i * 50 - 1, `release ${i}: ${times}`);
  }
  assert.throws(() => new RateLimiter({ perMinute: 0 }), RangeError);
});

// --- openaiTarget ---------------------------------------------------------------

Deno.test("openaiTarget sends the model, system and prompt messages, parameters and the bearer key", async () => {
  await withServer({}, async (server) => {
    const target = openaiTarget(
      chat(server, {
        base_url: `${server.baseUrl}/`,
        system: "Be brief about {{metadata.topic}}.",
        prompt: "Q: {{input}}\n{{context}}",
        params: { temperature: 0, max_tokens: 5 },
      }),
      env,
    );
    const unit = await runOne(target, {
      input: "why?",
      context: ["c1", "c2"],
      metadata: { topic: "sky" },
    });
    assert.equal(unit.output, "echo: Q: why?\nc1\n\nc2");
    const [request] = server.requests;
    assert.equal(request?.method, "POST");
    assert.equal(request?.path, "/v1/chat/completions");
    assert.equal(request?.headers.authorization, `Bearer ${KEY}`);
    assert.equal(request?.headers["content-type"], "application/json");
    assert.deepEqual(request?.json, {
      model: "fake-model",
      messages: [
        { role: "system", content: "Be brief about sky." },
        { role: "user", content: "Q: why?\nc1\n\nc2" },
      ],
      temperature: 0,
      max_tokens: 5,
    });
  });
});

Deno.test("openaiTarget records model, usage, finish reason and attempts under target", async () => {
  const usage = { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 };
  await withServer({
    script: [
      reply.ok("cut", {
        model: "fake-model-2025",
        usage,
        finishReason: "length",
      }),
    ],
  }, async (server) => {
    const unit = await runOne(openaiTarget(chat(server), env), { input: "q" });
    const { latency_ms, ...info } = unit.target ?? {};
    assert.equal(typeof latency_ms, "number");
    assert.deepEqual(info, {
      model: "fake-model-2025",
      usage,
      finish_reason: "length",
      attempts: 1,
    });
  });
});

Deno.test("openaiTarget sends an input given as a messages array as it is", async () => {
  const messages = [
    { role: "system", content: "You are terse." },
    { role: "user", content: "hi" },
    { role: "assistant", content: "hello" },
    { role: "user", content: "and?", name: "bob" },
  ];
  await withServer({}, async (server) => {
    const target = openaiTarget(
      chat(server, { system: "IGNORED SYSTEM", prompt: "IGNORED {{input}}" }),
      env,
    );
    const unit = await runOne(target, { input: messages, expected: "x" });
    assert.equal(unit.output, "echo: and?");
    assert.deepEqual(unit.input, messages);
    assert.deepEqual(
      (server.requests[0]?.json as { messages: unknown }).messages,
      messages,
    );
  });
});

Deno.test("openaiTarget never puts expected into its request", async () => {
  const SENTINEL = "SENTINEL-EXPECTED-42";
  await withServer({}, async (server) => {
    const units = await run(openaiTarget(chat(server), env), [
      { input: "q1", expected: SENTINEL },
      { input: [{ role: "user", content: "q2" }], expected: { a: SENTINEL } },
    ]);
    assert.deepEqual(units.map((u) => u.expected), [SENTINEL, {
      a: SENTINEL,
    }]);
    assert.equal(server.requests.length, 2);
    for (const r of server.requests) assert.ok(!r.body.includes(SENTINEL));
    // A prompt that names expected is refused as the target is built, as a
    // config naming it is at its line, and nothing is sent.
    assert.throws(
      () =>
        openaiTarget(chat(server, { prompt: "{{input}} {{expected}}" }), env),
      {
        name: "TypeError",
        message:
          `openaiTarget's "prompt" names {{expected}}, which a target is never given: expected is the answer key, for scorers only`,
      },
    );
    assert.equal(server.requests.length, 2);
  });
});

Deno.test("openaiTarget retries a 429 after the Retry-After the server asked for", async () => {
  await withServer({
    script: [reply.rateLimited("0.2"), reply.ok("fine")],
  }, async (server) => {
    const unit = await runOne(openaiTarget(chat(server), env), { input: "q" });
    assert.equal(unit.output, "fine");
    assert.equal(unit.target?.attempts, 2);
    const [gap] = gapsOver(server.requests);
    assert.ok(
      gap! >= 180,
      `Retry-After 0.2 s, but the retry came ${gap} ms later`,
    );
  });
});

Deno.test("openaiTarget retries a 500 with growing backoff", async () => {
  await withServer({
    script: [reply.error(500), reply.error(502), reply.ok("fine")],
  }, async (server) => {
    const unit = await runOne(
      openaiTarget(chat(server, { retry_delay: 0.05 }), env),
      { input: "q" },
    );
    assert.equal(unit.output, "fine");
    assert.equal(unit.target?.attempts, 3);
    // Backoff n waits between half and all of 50 ms · 2^(n-1).
    const [first, second] = gapsOver(server.requests);
    assert.ok(first! >= 20, `first backoff ${first} ms`);
    assert.ok(second! >= 45, `second backoff ${second} ms`);
  });
});

Deno.test("openaiTarget retries a dropped connection", async () => {
  await withServer(
    { script: [reply.drop(), reply.ok("fine")] },
    async (server) => {
      const unit = await runOne(openaiTarget(chat(server), env), {
        input: "q",
      });
      assert.equal(unit.output, "fine");
      assert.equal(unit.target?.attempts, 2);
    },
  );
});

Deno.test("openaiTarget gives a target error naming the failure when a dropped connection persists", async () => {
  await withServer({ handler: () => reply.drop() }, async (server) => {
    const unit = await runOne(
      openaiTarget(chat(server, { retries: 1 }), env),
      { input: "q" },
    );
    assert.equal(unit.output, null);
    assert.match(
      unit.target?.error ?? "",
      /^POST http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions failed: .+ \(after 2 attempts\)$/,
    );
    assert.equal(server.requests.length, 2);
  });
});

Deno.test("openaiTarget retries and then reports a server that refuses connections", async () => {
  const server = fakeLlm();
  await server.close();
  const unit = await runOne(
    openaiTarget(chat(server, { retries: 1 }), env),
    { input: "q" },
  );
  assert.equal(unit.output, null);
  assert.match(
    unit.target?.error ?? "",
    /^POST http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions failed: .+ \(after 2 attempts\)$/,
  );
});

Deno.test("a target error for a connection closed before the answer, or refused, says why, not only fetch failed", async () => {
  // Deno's fetch rejects with "fetch failed" and keeps the reason in
  // `cause`: 83 of 2,000 calls of a run said only that. This service reads
  // the request and hangs up without a word.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const serving = (async () => {
    for await (const conn of listener) {
      await conn.read(new Uint8Array(65536));
      conn.close();
    }
  })();
  const closed = await runOne(
    openaiTarget({
      model: "m",
      base_url: `http://127.0.0.1:${listener.addr.port}/v1`,
      retries: 0,
    }, env),
    { input: "q" },
  );
  listener.close();
  await serving;
  assert.match(
    closed.target?.error ?? "",
    /^POST http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions failed: .*connection closed before message completed/,
  );
  const server = fakeLlm();
  await server.close();
  const refused = await runOne(
    openaiTarget(chat(server, { retries: 0 }), env),
    { input: "q" },
  );
  assert.match(refused.target?.error ?? "", /failed: .*refused/i);
  for (const unit of [closed, refused]) {
    assert.doesNotMatch(unit.target?.error ?? "", /fetch failed/);
  }
});

Deno.test("openaiTarget times out a slow answer and retries it", async () => {
  await withServer({
    script: [reply.slow(5000, reply.ok("late")), reply.ok("on time")],
  }, async (server) => {
    const unit = await runOne(
      openaiTarget(chat(server, { timeout: 0.2 }), env),
      { input: "q" },
    );
    assert.equal(unit.output, "on time");
    assert.equal(unit.target?.attempts, 2);
    const [gap] = gapsOver(server.requests);
    assert.ok(gap! >= 180, `the timeout fired after ${gap} ms`);
  });
});

Deno.test("openaiTarget names the timeout when every attempt is too slow", async () => {
  await withServer({
    handler: () => reply.slow(5000, reply.ok("late")),
  }, async (server) => {
    const unit = await runOne(
      openaiTarget(chat(server, { timeout: 0.1, retries: 1 }), env),
      { input: "q" },
    );
    assert.equal(unit.output, null);
    assert.match(
      unit.target?.error ?? "",
      /timed out after 0\.1 s \(after 2 attempts\)$/,
    );
  });
});

Deno.test("openaiTarget stops a call when the run is aborted, without retrying", async () => {
  // Aborted once the server has the request: a timer could fire before the
  // request arrived on a loaded machine, and then no request was made.
  const controller = new AbortController();
  await withServer({
    handler: () => {
      controller.abort(new Error("stop"));
      return reply.slow(5000, reply.ok("late"));
    },
  }, async (server) => {
    const [unit] = await run(openaiTarget(chat(server), env), [{
      input: "q",
    }], { signal: controller.signal });
    assert.match(unit?.target?.error ?? "", /was interrupted/);
    assert.equal(server.requests.length, 1);
  });
});

Deno.test("openaiTarget turns a malformed JSON answer into a target error, naming the call as every network error does", async () => {
  await withServer({ handler: () => reply.malformed() }, async (server) => {
    const unit = await runOne(openaiTarget(chat(server), env), { input: "q" });
    assert.equal(unit.output, null);
    assert.match(
      unit.target?.error ?? "",
      /^POST http:\/\/\S+\/chat\/completions answered with invalid JSON/,
    );
  });
});

Deno.test("openaiTarget turns an answer without message content into a target error", async () => {
  await withServer({
    script: [reply.json({ choices: [{ message: { content: null } }] })],
  }, async (server) => {
    const unit = await runOne(openaiTarget(chat(server), env), { input: "q" });
    assert.match(unit.target?.error ?? "", /without a message text/);
  });
});

Deno.test("openaiTarget and the embeddings client reach Azure OpenAI: a base_url's api-version query stays after the endpoint, the key goes as api-key", async () => {
  await withServer({
    handler: embeddings(
      () => [1, 0],
      (r) =>
        reply.ok(
          `${r.path} ${r.headers["api-key"]} ${r.headers.authorization}`,
        ),
    ),
  }, async (server) => {
    const base =
      `${server.url}/openai/deployments/gpt-4o/?api-version=2024-10-21`;
    const unit = await runOne(
      openaiTarget(
        { ...chat(server), base_url: base },
        (name) => name === "FAKE_API_KEY" ? "azkey12" : undefined,
      ),
      { input: "q" },
    );
    assert.equal(
      unit.output,
      "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21 azkey12 undefined",
    );
    const client = new EmbeddingsClient({
      base_url: base,
      model: "e",
      api_key_env: "FAKE_API_KEY",
    }, (name) => name === "FAKE_API_KEY" ? "azkey12" : undefined);
    assert.equal(
      client.url,
      `${server.url}/openai/deployments/gpt-4o/embeddings?api-version=2024-10-21`,
    );
    await client.embed(["a"]);
    const last = server.requests.at(-1)!;
    assert.equal(
      last.path,
      "/openai/deployments/gpt-4o/embeddings?api-version=2024-10-21",
    );
    assert.equal(last.headers["api-key"], "azkey12");
    assert.equal(last.headers.authorization, undefined);
    // Any other server still gets the bearer key, and a plain base_url the
    // path it always had.
    const plain = await runOne(
      openaiTarget(
        { ...chat(server), base_url: `${server.url}/v1/` },
        (name) => name === "FAKE_API_KEY" ? "azkey12" : undefined,
      ),
      { input: "q" },
    );
    assert.equal(plain.output, "/v1/chat/completions undefined Bearer azkey12");
  });
});

Deno.test("openaiTarget reads a reply as servers give it: text parts joined, a refusal as the output, and says why there is no text (no choice, the finish reason)", async () => {
  const choice = (message: unknown, finish_reason = "stop") =>
    reply.json({ model: "m", choices: [{ message, finish_reason }] });
  await withServer({
    script: [
      // Mistral and some proxies: content as a list of parts.
      choice({
        role: "assistant",
        content: [
          { type: "thinking", thinking: [{ type: "text", text: "hmm" }] },
          { type: "text", text: "Par" },
          { type: "text", text: "is" },
        ],
      }),
      // OpenAI's structured outputs: a refusal instead of content.
      choice({ role: "assistant", content: null, refusal: "I can't help." }),
      // A reasoning model that spent max_tokens thinking (vLLM).
      choice(
        { role: "assistant", content: null, reasoning_content: "Let me" },
        "length",
      ),
      // Azure's content filter.
      choice({ role: "assistant" }, "content_filter"),
      reply.json({ model: "m", choices: [] }),
      choice({ role: "assistant", content: [{ type: "image_url" }] }),
    ],
  }, async (server) => {
    const target = openaiTarget(chat(server, { retries: 0 }), env);
    const units = await run(
      target,
      Array.from({ length: 6 }, () => ({ input: "q" })),
      {
        concurrency: 1,
      },
    );
    assert.equal(units[0]?.output, "Paris");
    assert.equal(units[1]?.output, "I can't help.");
    assert.equal(units[1]?.target?.refusal, true);
    assert.match(
      units[2]?.target?.error ?? "",
      /^POST http:\/\/\S+ answered without a message text in choices\[0\]\.message\.content \(finish_reason "length": the reply ran out of max_tokens/,
    );
    assert.match(
      units[3]?.target?.error ?? "",
      /answered without a message text in choices\[0\]\.message\.content \(finish_reason "content_filter"\)$/,
    );
    assert.match(
      units[4]?.target?.error ?? "",
      /^POST http:\/\/\S+ answered no choice \("choices": \[\]\)$/,
    );
    assert.match(
      units[5]?.target?.error ?? "",
      /answered without a message text in choices\[0\]\.message\.content \(its parts are "image_url"; finish_reason "stop"\)$/,
    );
    assert.equal(server.requests.length, 6);
  });
});

Deno.test("openaiTarget reports an error a proxy answers with 200, its message redacted, retried as a 5xx", async () => {
  // LiteLLM and OpenRouter answer 200 with {"error": ...} when the model
  // fails once they have answered.
  const overloaded = reply.json({
    error: { message: `model overloaded (key ${KEY})`, type: "server_error" },
  });
  await withServer({ handler: () => overloaded }, async (server) => {
    const unit = await runOne(
      openaiTarget(chat(server, { retries: 2 }), env),
      { input: "q" },
    );
    assert.equal(unit.output, null);
    assert.equal(
      unit.target?.error,
      `POST ${server.baseUrl}/chat/completions answered HTTP 200 with an error: model overloaded (key ***) (after 3 attempts)`,
    );
    assert.equal(server.requests.length, 3);
  });
  await withServer(
    { script: [overloaded, reply.ok("Paris")] },
    async (server) => {
      const unit = await runOne(openaiTarget(chat(server), env), {
        input: "q",
      });
      assert.equal(unit.output, "Paris");
      assert.equal(unit.target?.attempts, 2);
    },
  );
});

Deno.test("openaiTarget and llmJudge do not retry an error answered with 200 whose code is a 4xx, and name the code; one without a code is retried", async () => {
  for (
    const [error, shown] of [
      [
        { code: 400, message: "model not found" },
        " (code 400): model not found",
      ],
      [{ code: "404", message: "no route" }, " (code 404): no route"],
      ["bad request", ": bad request"],
    ] as const
  ) {
    const refused = reply.json({ error, choices: [] });
    const retried = typeof error === "string";
    await withServer({ handler: () => refused }, async (server) => {
      const unit = await runOne(
        openaiTarget(chat(server, { retries: 1 }), env),
        { input: "q" },
      );
      assert.equal(
        unit.target?.error,
        `POST ${server.baseUrl}/chat/completions answered HTTP 200 with an error${shown}${
          retried ? " (after 2 attempts)" : ""
        }`,
      );
      assert.equal(server.requests.length, retried ? 2 : 1);
      await assert.rejects(
        async () =>
          await llmJudge(judge(server, { retries: 1 }), env).score(
            { example_id: "d#1", unit_id: "d#1", input: "q", output: "a" },
            {},
          ),
        (e: Error) => e.message.includes(`with an error${shown}`),
      );
    });
  }
});

Deno.test("openaiTarget does not retry a 400 and reports its status and trimmed body", async () => {
  await withServer({
    script: [reply.error(400, '  {"error": "bad model"}\n\n')],
  }, async (server) => {
    const unit = await runOne(openaiTarget(chat(server), env), { input: "q" });
    assert.match(
      unit.target?.error ?? "",
      /answered HTTP 400: \{"error": "bad model"\}$/,
    );
    assert.equal(server.requests.length, 1);
  });
});

Deno.test("openaiTarget failing after its retries gives blocked Scores, never 0 and never a crash", async () => {
  await withServer({ handler: () => reply.error(500) }, async (server) => {
    const target = openaiTarget(chat(server, { retries: 2 }), env);
    const units = await run(target, [{ input: "q", expected: "a" }]);
    assert.match(
      units[0]?.target?.error ?? "",
      /answered HTTP 500: .*The server had an error.* \(after 3 attempts\)$/,
    );
    assert.equal(server.requests.length, 3);
    let scorerCalls = 0;
    const counting = functionScorer("counting", () => {
      scorerCalls++;
      return 1;
    });
    const scores = await score(units, [exactMatch(), counting]);
    assert.equal(scorerCalls, 0);
    assert.equal(scores.length, 2);
    for (const s of scores) {
      assert.equal(s.status, "blocked");
      assert.equal(s.value, null);
      assert.equal(s.passed, false);
      assert.equal(s.reason, `target error: ${units[0]?.target?.error}`);
      assert.deepEqual(s.diagnostics, [{
        code: "target.error",
        severity: "error",
        message: s.reason,
      }]);
    }
  });
});

Deno.test("openaiTarget keeps to rate_limit, measured at the server", async () => {
  await withServer({}, async (server) => {
    const target = openaiTarget(chat(server, { rate_limit: 600 }), env);
    const start = performance.now();
    const units = await run(
      target,
      Array.from({ length: 6 }, (_, i) => ({ input: `q${i}` })),
      { concurrency: 8 },
    );
    assert.ok(units.every((u) => u.target?.error === undefined));
    assert.equal(server.requests.length, 6);
    // 600 per minute is one per 100 ms: the k-th request (from 0) may start
    // 100k ms after the first could, no sooner; a burst (two at once) fails,
    // an arrival a loaded machine delayed does not.
    assert.deepEqual(slotsBroken(server.requests, start, 100), []);
  });
});

Deno.test("openaiTarget paces its retries by the rate limit too", async () => {
  await withServer({
    script: [reply.error(500), reply.rateLimited("0"), reply.ok("fine")],
  }, async (server) => {
    const unit = await runOne(
      openaiTarget(chat(server, { rate_limit: 600, retry_delay: 0.001 }), env),
      { input: "q" },
    );
    assert.equal(unit.output, "fine");
    const gaps = gapsOver(server.requests);
    assert.ok(gaps.every((g) => g >= 80), `arrival gaps ${gaps}`);
  });
});

Deno.test("openaiTarget shares max_total_retries across the whole run", async () => {
  await withServer({ handler: () => reply.error(503) }, async (server) => {
    const target = openaiTarget(
      chat(server, { retries: 5, max_total_retries: 1 }),
      env,
    );
    const units = await run(target, [{ input: "a" }, { input: "b" }, {
      input: "c",
    }], { concurrency: 1 });
    assert.equal(server.requests.length, 4);
    assert.match(
      units[0]?.target?.error ?? "",
      /\(after 2 attempts, the run's retry budget is spent\)$/,
    );
    for (const u of units.slice(1)) {
      assert.match(
        u.target?.error ?? "",
        /\(after 1 attempt, the run's retry budget is spent\)$/,
      );
    }
  });
});

Deno.test("openaiTarget hides the API key when the server echoes it in an error", async () => {
  await withServer({
    handler: (r) => reply.error(401, `bad key: ${r.headers.authorization}`),
  }, async (server) => {
    const unit = await runOne(openaiTarget(chat(server), env), { input: "q" });
    const error = unit.target?.error ?? "";
    assert.match(error, /answered HTTP 401: bad key: Bearer \*\*\*$/);
    assert.ok(!error.includes(KEY));
  });
});

Deno.test("openaiTarget refuses to start when its key variable is not set", () => {
  assert.throws(
    () =>
      openaiTarget(
        { model: "m", api_key_env: "FAKE_MISSING_KEY" },
        () => undefined,
      ),
    { name: "TemplateError", message: /FAKE_MISSING_KEY is not set/ },
  );
});

// --- httpTarget -------------------------------------------------------------------

Deno.test("httpTarget sends its method, ${ENV} headers and JSON body template and reads the output path", async () => {
  await withServer({
    script: [reply.json({ data: { answers: [{ text: "A1" }] } })],
  }, async (server) => {
    const target = httpTarget(
      http(server, {
        method: "put",
        headers: { "X-Api-Key": "${FAKE_API_KEY}", "X-Trace": "t-1" },
        body: {
          query: "{{input}}",
          docs: "{{context}}",
          topic: "{{metadata.topic}}",
          note: "about {{metadata.topic}}",
          fixed: 3,
          list: ["{{id}}", true, null],
        },
        output: "data.answers.0.text",
      }),
      env,
    );
    const unit = await runOne(target, {
      id: 7,
      input: "q",
      context: ["c1", "c2"],
      metadata: { topic: "geo" },
      expected: "SENTINEL",
    });
    assert.equal(unit.output, "A1");
    const { latency_ms: _, ...info } = unit.target ?? {};
    assert.deepEqual(info, { status: 200, attempts: 1 });
    const [request] = server.requests;
    assert.equal(request?.method, "PUT");
    assert.equal(request?.path, "/answer");
    assert.equal(request?.headers["x-api-key"], KEY);
    assert.equal(request?.headers["x-trace"], "t-1");
    assert.equal(request?.headers["content-type"], "application/json");
    assert.deepEqual(request?.json, {
      query: "q",
      docs: ["c1", "c2"],
      topic: "geo",
      note: "about geo",
      fixed: 3,
      list: [7, true, null],
    });
    assert.ok(!request?.body.includes("SENTINEL"));
  });
});

Deno.test("httpTarget sends {input} by default and returns the raw body without an output path", async () => {
  await withServer({
    script: [{ kind: "raw", status: 201, body: "plain answer\n" }],
  }, async (server) => {
    const unit = await runOne(httpTarget(http(server)), { input: "q" });
    assert.equal(unit.output, "plain answer\n");
    assert.equal(unit.target?.status, 201);
    assert.deepEqual(server.requests[0]?.json, { input: "q" });
    assert.equal(server.requests[0]?.method, "POST");
  });
});

Deno.test("httpTarget without an output path makes a 200 whose JSON holds only an error a target error, and keeps every other body as the answer", async () => {
  // Read whole, {"error": "upstream timeout"} was scored as the answer.
  const raw = (body: string) => ({ kind: "raw" as const, status: 200, body });
  await withServer({
    script: [
      raw('{"error": {"message": "no such model", "code": 404}}'),
      raw(`{"error": "upstream timeout (token ${KEY})"}`),
      raw('{"error": null, "answer": "a"}'),
      raw('{"error": "none", "answer": "b"}'),
      raw('{"error": ""}'),
      raw('{"error": false}'),
      raw('{"error": ["x"]}'),
      raw('{"error": "c"} and more'),
    ],
  }, async (server) => {
    const target = httpTarget(
      http(server, {
        retries: 0,
        headers: { authorization: "Bearer ${FAKE_API_KEY}" },
      }),
      env,
    );
    const units = await run(
      target,
      Array.from({ length: 8 }, (_, i) => ({ input: `q${i}` })),
      { concurrency: 1 },
    );
    const where = `POST ${server.url}/answer answered HTTP 200 with an error`;
    assert.deepEqual(
      units.slice(0, 2).map((u) => [u.output, u.target?.error]),
      [
        [null, `${where} (code 404): no such model`],
        [null, `${where}: upstream timeout (token ***) (after 1 attempt)`],
      ],
    );
    assert.deepEqual(units.slice(2).map((u) => [u.output, u.target?.error]), [
      ['{"error": null, "answer": "a"}', undefined],
      ['{"error": "none", "answer": "b"}', undefined],
      ['{"error": ""}', undefined],
      ['{"error": false}', undefined],
      ['{"error": ["x"]}', undefined],
      ['{"error": "c"} and more', undefined],
    ]);
  });
  // A service whose answer is an error's name says so with output: error.
  await withServer({ script: [raw('{"error": "E42"}')] }, async (server) => {
    const unit = await runOne(httpTarget(http(server, { output: "error" })), {
      input: "q",
    });
    assert.equal(unit.output, "E42");
  });
});

Deno.test("httpTarget with an output path quotes a 200's error where the output should be, retried as a 5xx unless its code is a 4xx", async () => {
  await withServer({
    script: [
      reply.json({ error: { message: "upstream timeout", code: 504 } }),
      reply.json({ answer: "fine" }),
      reply.json({ error: { message: "bad question", code: 400 } }),
      reply.json({ error: null, result: "no answer key" }),
    ],
  }, async (server) => {
    const target = httpTarget({
      url: `${server.url}/answer`,
      output: "answer",
      retry_delay: 0.01,
    });
    const units = await run(target, [{ input: "a" }, { input: "b" }, {
      input: "c",
    }], { concurrency: 1 });
    assert.equal(units[0]?.output, "fine");
    assert.equal(units[0]?.target?.attempts, 2);
    assert.match(
      units[1]?.target?.error ?? "",
      /answered HTTP 200 with an error \(code 400\): bad question$/,
    );
    assert.match(units[2]?.target?.error ?? "", /answered without "answer"$/);
    assert.equal(server.requests.length, 4);
  });
});

Deno.test("httpTarget says an output path that holds null is null there, not missing", async () => {
  await withServer({
    script: [
      reply.json({ answer: null }),
      reply.json({ answer: { text: null } }),
      reply.json({ answer: null }),
      reply.json({ other: 1 }),
    ],
  }, async (server) => {
    const path = (output: string) =>
      httpTarget({ url: `${server.url}/answer`, output });
    const [a] = await run(path("answer"), [{ input: "a" }]);
    const [b] = await run(path("answer.text"), [{ input: "b" }]);
    const [c] = await run(path("answer.text"), [{ input: "c" }]);
    const [d] = await run(path("answer"), [{ input: "d" }]);
    const where = `POST ${server.url}/answer answered `;
    assert.deepEqual([a, b, c, d].map((u) => u?.target?.error), [
      `${where}null at "answer"`,
      `${where}null at "answer.text"`,
      `${where}null at "answer" (output: "answer.text")`,
      `${where}without "answer"`,
    ]);
  });
});

Deno.test("httpTarget fills URL placeholders URL-encoded and sends no body with GET", async () => {
  await withServer(
    { script: [reply.json({ out: { n: 1 } })] },
    async (server) => {
      const target = httpTarget(
        http(server, {
          method: "GET",
          url: `${server.url}/search?q={{input}}`,
          output: "$.out",
        }),
      );
      const unit = await runOne(target, { input: "a b&c/d" });
      assert.equal(unit.output, '{"n":1}');
      const [request] = server.requests;
      assert.equal(request?.path, "/search?q=a%20b%26c%2Fd");
      assert.equal(request?.body, "");
      assert.equal(request?.headers["content-type"], undefined);
    },
  );
});

Deno.test("httpTarget turns a non-2xx answer into an error with its status and trimmed body", async () => {
  const long = "x".repeat(2000);
  await withServer({
    script: [
      { kind: "raw", status: 404, body: "\n  no such route  \n" },
      { kind: "raw", status: 422, body: long },
    ],
  }, async (server) => {
    const units = await run(httpTarget(http(server)), [{ input: "a" }, {
      input: "b",
    }], { concurrency: 1 });
    assert.equal(
      units[0]?.target?.error,
      `POST ${server.url}/answer answered HTTP 404: no such route`,
    );
    assert.equal(
      units[1]?.target?.error,
      `POST ${server.url}/answer answered HTTP 422: ${"x".repeat(500)}…`,
    );
    assert.equal(server.requests.length, 2);
  });
});

Deno.test("httpTarget retries 429 and 5xx like the openai target", async () => {
  await withServer({
    script: [
      reply.rateLimited("0.05"),
      reply.error(503),
      reply.json({ a: "ok" }),
    ],
  }, async (server) => {
    const unit = await runOne(
      httpTarget(http(server, { output: "a" })),
      { input: "q" },
    );
    assert.equal(unit.output, "ok");
    assert.equal(unit.target?.attempts, 3);
  });
});

Deno.test("httpTarget reports an answer without the output path, or not JSON, as a target error", async () => {
  await withServer({
    script: [reply.json({ other: 1 }), reply.malformed("<html>oops</html>")],
  }, async (server) => {
    const units = await run(
      httpTarget(http(server, { output: "data.text" })),
      [{ input: "a" }, { input: "b" }],
      { concurrency: 1 },
    );
    assert.match(units[0]?.target?.error ?? "", /without "data\.text"$/);
    assert.match(units[1]?.target?.error ?? "", /invalid JSON: "<html>oops/);
  });
});

Deno.test("httpTarget never sends expected: a body that names it is refused as the target is built", async () => {
  await withServer({}, (server) => {
    assert.throws(
      () =>
        httpTarget(
          http(server, { body: { q: "{{input}}", a: "{{expected}}" } }),
        ),
      {
        name: "TypeError",
        message:
          `httpTarget's "body.a" names {{expected}}, which a target is never given: expected is the answer key, for scorers only`,
      },
    );
    assert.equal(server.requests.length, 0);
    return Promise.resolve();
  });
});

Deno.test("httpTarget, openaiTarget and llmJudge refuse, as they are built, what a config would be refused at its line", () => {
  // From a script, these were sent as written (a literal ${TOKEN} in the
  // URL) or paid for and unreadable (a streamed reply, n choices).
  const base = { url: "http://127.0.0.1:9/a" };
  const cases: Array<[() => unknown, string]> = [
    [
      () => httpTarget({ url: "http://127.0.0.1:9/a?key=${TOKEN}" }),
      `httpTarget's "url" has \${TOKEN}, which evalpipe would send as written: only header values read environment variables; send the secret in a header, e.g. headers: { authorization: "Bearer \${TOKEN}" }`,
    ],
    [
      () => httpTarget({ ...base, headers: { "x-case": "{{input}}" } }),
      `httpTarget's "headers.x-case" has {{input}}, which evalpipe would send as written: a header value reads \${NAME} (an environment variable) only; put case fields in "url" or "body"`,
    ],
    [
      () =>
        httpTarget({
          url: "http://{{metadata.host}}/a",
          headers: { authorization: "Bearer ${TOKEN}" },
        }),
      `httpTarget's "url" lets a case choose the host ({{metadata.host}}, as a URL parser reads it) while the headers send \${TOKEN}: a dataset could send the secret to any host; fix the domain, as in https://{{metadata.region}}.api.example.com`,
    ],
    [
      // Google's style: the key in the query goes wherever the host is.
      () => httpTarget({ url: "http://{{metadata.host}}/a?key=AIza-k1" }),
      `httpTarget's "url" lets a case choose the host ({{metadata.host}}, as a URL parser reads it) while the URL's query sends a credential (key=): a dataset could send the secret to any host; fix the domain, as in https://{{metadata.region}}.api.example.com`,
    ],
    [
      // A case's error each, before: "cannot be sent: Invalid URL".
      () => httpTarget({ url: "http://127.0.0.1:99999/a" }),
      `httpTarget's "url" is no URL a URL parser can read, so no case could be sent: check its scheme (http:// or https://), its host and its port (at most 65535)`,
    ],
    [
      () =>
        httpTarget({
          url: "http://me:pw@127.0.0.1:9/a",
          headers: { Authorization: "Bearer ${TOKEN}" },
        }),
      `httpTarget's "url" has a user name or password, which is sent as Basic auth in the authorization header, beside "headers.Authorization": the service would get both in that one header; keep one, the url's "user:password@" or the header`,
    ],
    [
      () => httpTarget({ ...base, body: { q: "{{ input | upper }}" } }),
      `httpTarget's "body.q" has {{ input | upper }}, which evalpipe would send as written: filters ("|") are not supported; a placeholder is a field's name alone, as {{input}} or {{metadata.topic}}`,
    ],
    [
      () =>
        openaiTarget({
          base_url: "http://127.0.0.1:9/v1",
          model: "m",
          params: { stream: true },
        }),
      `openaiTarget's "params.stream" is true: evalpipe reads each reply whole, as one JSON answer, and a streamed one comes as server-sent events; drop it`,
    ],
    [
      () =>
        llmJudge({
          base_url: "http://127.0.0.1:9/v1",
          model: "m",
          params: { n: 3 },
        }),
      `llmJudge's "params.n" is 3: evalpipe reads only the first choice of a reply, and the others would be paid for; drop it, or run several epochs (epochs: N)`,
    ],
  ];
  for (const [build, message] of cases) {
    assert.throws(build, { name: "TypeError", message });
  }
});

Deno.test("httpTarget refuses a url whose scheme and host a case fills while its headers send a secret, and the case's host gets nothing", async () => {
  // The scheme's placeholder read as a digit made every reading of the URL
  // no URL, and the host a case named went unseen; then one ending a scheme
  // (http{{metadata.s}}:) was read as "httphttp:", no special scheme, whose
  // "{{metadata.host}}" is a path, where fetch reads "http:" and a host:
  // this server stands for the host a dataset would name.
  await withServer({}, async (server) => {
    for (
      const url of [
        "{{metadata.scheme}}://{{metadata.host}}:{{metadata.port}}/answer",
        "http{{metadata.s}}:{{metadata.host}}:{{metadata.port}}/answer",
        "ht{{metadata.t}}p:{{metadata.host}}:{{metadata.port}}/answer",
      ]
    ) {
      const settings = {
        url,
        headers: { authorization: "Bearer ${FAKE_API_KEY}" },
      };
      let refused: unknown;
      try {
        const target = httpTarget(settings, env);
        await runOne(target, {
          input: "q",
          metadata: {
            scheme: "http",
            s: "",
            t: "t",
            host: "127.0.0.1",
            port: new URL(server.url).port,
          },
        });
      } catch (error) {
        // The refusal this test wants; anything else fails below.
        refused = error;
      }
      assert.deepEqual(
        server.requests.map((r) => r.headers.authorization?.includes(KEY)),
        [],
        url,
      );
      assert.ok(refused instanceof TypeError, `${url}: ${refused}`);
      assert.match(
        refused.message,
        /^httpTarget's "url" lets a case choose the host \(\{\{metadata\.host\}\}, /,
      );
    }
  });
});

Deno.test("httpTarget hides ${ENV} header values that the server echoes in an error", async () => {
  await withServer({
    handler: (r) => reply.error(403, `denied for ${r.headers["x-api-key"]}`),
  }, async (server) => {
    const unit = await runOne(
      httpTarget(
        http(server, { headers: { "X-Api-Key": "${FAKE_API_KEY}" } }),
        env,
      ),
      { input: "q" },
    );
    assert.match(unit.target?.error ?? "", /HTTP 403: denied for \*\*\*$/);
    assert.ok(!unit.target?.error?.includes(KEY));
  });
});

Deno.test("httpTarget does not retry a request that cannot be sent, such as a GET with a body", async () => {
  await withServer({}, async (server) => {
    const unit = await runOne(
      httpTarget(http(server, { method: "GET", body: { q: "{{input}}" } })),
      { input: "q" },
    );
    assert.equal(
      unit.target?.error,
      `GET ${server.url}/answer cannot be sent: Request with GET/HEAD method cannot have body`,
    );
    assert.equal(server.requests.length, 0);
  });
});

Deno.test("openaiTarget and httpTarget hide the key when a malformed 200 answer echoes it", async () => {
  await withServer({
    handler: (r) =>
      reply.malformed(
        `<pre>${r.headers.authorization ?? r.headers["x-api-key"]}</pre>`,
      ),
  }, async (server) => {
    const units = [
      await runOne(openaiTarget(chat(server), env), { input: "q" }),
      await runOne(
        httpTarget(
          http(server, {
            headers: { "X-Api-Key": "${FAKE_API_KEY}" },
            output: "a",
          }),
          env,
        ),
        { input: "q" },
      ),
    ];
    for (const unit of units) {
      assert.match(
        unit.target?.error ?? "",
        /answered with invalid JSON: "<pre>(Bearer )?\*\*\*<\/pre>"$/,
      );
    }
  });
});

// --- the target cache -----------------------------------------------------------

Deno.test("cachedTarget answers a repeated run from the cache without calling", async () => {
  await withTempDir(async (dir) => {
    await withServer({}, async (server) => {
      const cases = [{ input: "a" }, { input: "b" }, { input: "c" }];
      const first = new TargetCache(`${dir}/cache`);
      const units1 = await run(
        cachedTarget(openaiTarget(chat(server), env), first),
        cases,
      );
      assert.deepEqual([first.hits, first.misses], [0, 3]);
      assert.equal(server.requests.length, 3);
      assert.equal((await cacheEntries(`${dir}/cache`)).length, 3);

      const second = new TargetCache(`${dir}/cache`);
      const units2 = await run(
        cachedTarget(openaiTarget(chat(server), env), second),
        cases,
      );
      assert.deepEqual([second.hits, second.misses], [3, 0]);
      assert.equal(server.requests.length, 3);
      assert.deepEqual(
        units2.map((u) => u.output),
        units1.map((u) => u.output),
      );
      for (const [i, u] of units2.entries()) {
        const { latency_ms: _a, ...cached } = u.target ?? {};
        const { latency_ms: _b, ...fresh } = units1[i]!.target ?? {};
        assert.deepEqual(cached, { ...fresh, cached: true });
      }
    });
  });
});

Deno.test("cachedTarget in a new cache folder finds what this run wrote, and only that", async () => {
  await withTempDir(async (dir) => {
    await withServer({}, async (server) => {
      // The folder does not exist at the first read: misses need no disk.
      const cache = new TargetCache(`${dir}/cache`);
      const target = cachedTarget(openaiTarget(chat(server), env), cache);
      await run(target, [{ input: "a" }, { input: "b" }]);
      assert.deepEqual([cache.hits, cache.misses], [0, 2]);
      // Asked again in the same run: answered from what it wrote.
      const again = await run(target, [{ input: "a" }, { input: "c" }]);
      assert.deepEqual([cache.hits, cache.misses], [1, 3]);
      assert.equal(again[0]!.output, "echo: a");
      assert.equal(server.requests.length, 3);
      // A later run reads the folder as any other.
      const later = new TargetCache(`${dir}/cache`);
      await run(cachedTarget(openaiTarget(chat(server), env), later), [
        { input: "b" },
        { input: "c" },
        { input: "d" },
      ]);
      assert.deepEqual([later.hits, later.misses], [2, 1]);
    });
  });
});

Deno.test("cachedTarget stores only successful calls", async () => {
  await withTempDir(async (dir) => {
    let failing = true;
    await withServer({
      handler: (r) =>
        failing && lastMessage(r) === "bad"
          ? reply.error(400, "no")
          : reply.ok(`answer to ${lastMessage(r)}`),
    }, async (server) => {
      const cases = [{ input: "good" }, { input: "bad" }];
      const cache1 = new TargetCache(dir);
      const units1 = await run(
        cachedTarget(openaiTarget(chat(server), env), cache1),
        cases,
      );
      assert.ok(units1[1]?.target?.error !== undefined);
      assert.equal((await cacheEntries(dir)).length, 1);

      failing = false;
      const cache2 = new TargetCache(dir);
      const units2 = await run(
        cachedTarget(openaiTarget(chat(server), env), cache2),
        cases,
      );
      assert.deepEqual([cache2.hits, cache2.misses], [1, 1]);
      assert.equal(units2[1]?.output, "answer to bad");
      assert.equal(server.requests.length, 3);
      assert.equal((await cacheEntries(dir)).length, 2);
    });
  });
});

Deno.test("cachedTarget keeps each epoch its own entry, so repeats stay independent", async () => {
  await withTempDir(async (dir) => {
    await withServer({
      handler: (r) => reply.ok(`sample ${r.index}`),
    }, async (server) => {
      const cases = [{ input: "a" }, { input: "b" }];
      const target = openaiTarget(chat(server), env);
      const byUnit = (units: Unit[]) =>
        Object.fromEntries(units.map((u) => [u.unit_id, u.output]));

      const units1 = await run(
        cachedTarget(target, new TargetCache(dir)),
        cases,
        {
          epochs: 3,
        },
      );
      assert.equal(server.requests.length, 6);
      assert.equal(new Set(units1.map((u) => u.output)).size, 6);
      assert.equal((await cacheEntries(dir)).length, 6);

      const cache2 = new TargetCache(dir);
      const units2 = await run(cachedTarget(target, cache2), cases, {
        epochs: 3,
      });
      assert.deepEqual([cache2.hits, cache2.misses], [6, 0]);
      assert.deepEqual(byUnit(units2), byUnit(units1));

      const cache3 = new TargetCache(dir);
      const units3 = await run(cachedTarget(target, cache3), cases, {
        epochs: 4,
      });
      assert.deepEqual([cache3.hits, cache3.misses], [6, 2]);
      assert.equal(server.requests.length, 8);
      const fourth = units3.filter((u) => u.unit_id.endsWith("@4"));
      assert.equal(fourth.length, 2);
      for (const u of fourth) {
        assert.ok(!Object.values(byUnit(units1)).includes(u.output));
      }
    });
  });
});

Deno.test("cacheKey depends on the request, the settings and the epoch, never on expected or the key's value", () => {
  const settings = {
    base_url: "http://127.0.0.1:9/v1",
    model: "m",
    api_key_env: "K",
  };
  const a = openaiTarget(settings, () => "secret-one");
  const b = openaiTarget(settings, () => "secret-two");
  const c = { input: "q", expected: "x" };
  const key = cacheKey(a, c, 1);
  assert.match(key, /^[0-9a-f]{64}$/);
  assert.equal(cacheKey(b, c, 1), key);
  assert.equal(cacheKey(a, { input: "q", expected: "y" }, 1), key);
  assert.notEqual(cacheKey(a, c, 2), key);
  assert.notEqual(cacheKey(a, { input: "q2" }, 1), key);
  assert.notEqual(
    cacheKey(openaiTarget({ ...settings, model: "m2" }, () => "s"), c, 1),
    key,
  );
  assert.notEqual(
    cacheKey(
      openaiTarget({ ...settings, params: { temperature: 1 } }, () => "s"),
      c,
      1,
    ),
    key,
  );
});

Deno.test("TargetCache ignores a corrupt or partial entry and cachedTarget rewrites it", async () => {
  await withTempDir(async (dir) => {
    await withServer({
      handler: (r) => reply.ok(`fresh ${r.index}`),
    }, async (server) => {
      const target = openaiTarget(chat(server), env);
      const testCase = { input: "q" };
      const key = cacheKey(target, testCase, 1);
      await run(cachedTarget(target, new TargetCache(dir)), [testCase]);
      const [first] = await cacheEntries(dir);
      assert.equal(first?.key, key);
      const good = (await Deno.readTextFile(first!.file)).trimEnd();
      const corruptions = [
        "",
        good.slice(0, good.length >> 1), // torn: a crash mid-write
        `{"key":"${key}"` + "x".repeat(80), // its key, then garbage
        "not json at all",
        "null",
        JSON.stringify({ key: "0".repeat(64), result: { output: "other" } }),
        JSON.stringify({ key, result: { output: 42 } }),
        JSON.stringify({ key }),
      ];
      for (const [i, corrupt] of corruptions.entries()) {
        // The only pack there is holds nothing but the corruption.
        for (const e of await cacheEntries(dir).catch(() => [])) {
          await Deno.remove(e.file).catch(() => {});
        }
        await Deno.writeTextFile(`${dir}/pack-0-corrupt.ndjson`, corrupt);
        const cache = new TargetCache(dir);
        assert.equal(await cache.get(key), undefined, `corruption ${i}`);
        const [unit] = await run(cachedTarget(target, cache), [testCase]);
        assert.deepEqual([cache.hits, cache.misses], [0, 1], `corruption ${i}`);
        assert.equal(unit?.output, `fresh ${i + 1}`);
        // The answer paid for is found by the next reader.
        assert.equal(
          (await new TargetCache(dir).get(key))?.output,
          `fresh ${i + 1}`,
          `corruption ${i}`,
        );
        await Deno.remove(`${dir}/pack-0-corrupt.ndjson`);
      }
    });
  });
});

Deno.test("TargetCache reads entries of the file-per-key layout, and a later pack wins", async () => {
  await withTempDir(async (dir) => {
    const old = "ab" + "1".repeat(62);
    await Deno.mkdir(`${dir}/ab`);
    await Deno.writeTextFile(
      `${dir}/ab/${old}.json`,
      JSON.stringify({ key: old, result: { output: "from 0.1" } }),
    );
    assert.equal((await new TargetCache(dir).get(old))?.output, "from 0.1");
    const key = "cd" + "2".repeat(62);
    await new TargetCache(dir).set(key, { output: "first" });
    await new TargetCache(dir).set(key, { output: "second" });
    assert.equal((await new TargetCache(dir).get(key))?.output, "second");
  });
});

Deno.test("TargetCache indexes a pack read in chunks, lines straddling them", async () => {
  await withTempDir(async (dir) => {
    const writer = new TargetCache(dir);
    // 12 entries of about 250 KB: a 3 MB pack, read 1 MiB at a time.
    const keys = Array.from(
      { length: 12 },
      (_, i) => i.toString(16).padStart(2, "0") + "e".repeat(62),
    );
    await Promise.all(
      keys.map((key, i) =>
        writer.set(key, { output: `${i} ` + "y".repeat(250_000 + i * 997) })
      ),
    );
    const [pack] = new Set((await cacheEntries(dir)).map((e) => e.file));
    assert.ok((await Deno.stat(pack!)).size > 3_000_000);
    // Read a chunk at a time (nothing held in memory), and held whole.
    for (const memoryBytes of [0, undefined]) {
      const reader = new TargetCache(
        dir,
        memoryBytes !== undefined ? { memoryBytes } : {},
      );
      for (const [i, key] of keys.entries()) {
        const output = (await reader.get(key))?.output;
        assert.equal(output?.length, `${i} `.length + 250_000 + i * 997, key);
        assert.ok(output?.startsWith(`${i} y`), key);
      }
    }
  });
});

Deno.test("TargetCache concurrent writers of one key never leave a torn entry", async () => {
  await withTempDir(async (dir) => {
    const key = "ab" + "c".repeat(62);
    const outputs = Array.from(
      { length: 24 },
      (_, i) => String.fromCharCode(65 + i).repeat(200_000),
    );
    const seen: Array<string | undefined> = [];
    // Separate instances, as separate processes sharing one folder would be.
    await Promise.all([
      ...outputs.map((output, i) =>
        new TargetCache(dir).set(key, { output, info: { writer: i } })
      ),
      ...Array.from({ length: 48 }, async () => {
        seen.push((await new TargetCache(dir).get(key))?.output);
      }),
    ]);
    for (const s of seen) {
      assert.ok(s === undefined || outputs.includes(s), "a torn read");
    }
    const final = await new TargetCache(dir).get(key);
    assert.ok(final !== undefined && outputs.includes(final.output));
    assert.equal(
      final.output[0],
      String.fromCharCode(65 + (final.info?.writer as number)),
    );
    // Each writer its own pack, each entry whole (cacheEntries parses all).
    const entries = await cacheEntries(dir);
    assert.equal(entries.length, outputs.length);
    assert.equal(new Set(entries.map((e) => e.file)).size, outputs.length);
    for (const e of entries) {
      assert.equal(e.key, key);
      assert.equal(
        e.result.output,
        outputs[e.result.info?.writer as number],
        "an entry is one writer's",
      );
    }
  });
});

Deno.test("cachedTarget counts a cache that cannot be written and keeps the answer", async () => {
  await withTempDir(async (dir) => {
    await withServer({}, async (server) => {
      const target = openaiTarget(chat(server), env);
      const testCase = { input: "q" };
      // A dangling link where the cache folder should be: reads find
      // nothing, writes fail.
      await Deno.symlink(`${dir}/nowhere/deeper`, `${dir}/cache`);
      const cache = new TargetCache(`${dir}/cache`);
      const unit = await runOne(cachedTarget(target, cache), testCase);
      assert.equal(unit.output, "echo: q");
      assert.deepEqual([cache.hits, cache.misses, cache.writeErrors], [
        0,
        1,
        1,
      ]);
    });
  });
});

Deno.test("cachedTarget treats a cache that cannot be read as a miss, not a target error", async () => {
  await withTempDir(async (dir) => {
    await withServer({}, async (server) => {
      // A file where the cache folder should be: every read and write fails.
      await Deno.writeTextFile(`${dir}/cache`, "");
      const cache = new TargetCache(`${dir}/cache`);
      const unit = await runOne(
        cachedTarget(openaiTarget(chat(server), env), cache),
        { input: "q" },
      );
      assert.equal(unit.target?.error, undefined);
      assert.equal(unit.output, "echo: q");
      assert.deepEqual([cache.hits, cache.misses, cache.writeErrors], [
        0,
        1,
        1,
      ]);
    });
  });
});

// --- llmJudge ---------------------------------------------------------------------

const JUDGED: Unit = {
  example_id: "d.jsonl#1",
  unit_id: "d.jsonl#1",
  input: "What is 2+2?",
  output: "4",
  expected: "four",
  context: ["Arithmetic facts.", "2+2=4"],
};

async function judgeOnce(
  text: string,
  extra: Partial<LlmJudgeSettings> = {},
): Promise<{ score: Score; requests: RecordedRequest[] }> {
  let result: { score: Score; requests: RecordedRequest[] } | undefined;
  await withServer({ script: [reply.ok(text)] }, async (server) => {
    const [s] = await score([JUDGED], [llmJudge(judge(server, extra), env)]);
    assert.ok(s !== undefined);
    result = { score: s, requests: server.requests };
  });
  return result!;
}

Deno.test("llmJudge scores a good JSON reply, valid, with the judge's reason and provenance", async () => {
  const { score: s, requests } = await judgeOnce(
    '{"score": 0.8, "reason": "mostly right"}',
  );
  assert.equal(s.metric, "llm_judge");
  assert.equal(s.status, "scored");
  assert.equal(s.validity, "valid");
  assert.equal(s.value, 0.8);
  assert.equal(s.passed, true);
  assert.equal(s.reason, "mostly right");
  assert.match(s.evaluator_version, /^llm_judge@[0-9a-f]{8}$/);
  assert.equal(s.unit_id, "d.jsonl#1");
  assert.equal(s.provenance?.judge_model, "fake-judge");
  assert.equal(s.provenance?.attempts, 1);
  const [request] = requests;
  assert.equal(request?.headers.authorization, `Bearer ${KEY}`);
  const messages = (request?.json as { messages: Array<{ content: string }> })
    .messages;
  assert.equal(messages[0]?.content, DEFAULT_JUDGE_SYSTEM);
  // The judge sees the reference answer and the context, unlike the target.
  for (
    const part of [
      "What is 2+2?",
      "\n4\n",
      "four",
      "Arithmetic facts.\n\n2+2=4",
    ]
  ) {
    assert.ok(messages[1]?.content.includes(part), part);
  }
});

Deno.test("llmJudge reads a fenced JSON reply with text around it", async () => {
  const fence = "`".repeat(3);
  const { score: s } = await judgeOnce(
    `Here is my grade:\n${fence}json\n{"score": 0.25, "reason": "wrong unit"}\n${fence}\nThanks.`,
  );
  assert.deepEqual([s.status, s.validity, s.value, s.passed, s.reason], [
    "scored",
    "valid",
    0.25,
    false,
    "wrong unit",
  ]);
});

Deno.test("llmJudge marks a score outside 0..1 invalid, shown but not aggregated", async () => {
  const { score: s } = await judgeOnce('{"score": 7, "reason": "great"}');
  assert.equal(s.status, "scored");
  assert.equal(s.validity, "invalid");
  assert.equal(s.value, 7);
  assert.equal(s.reason, "the judge gave 7, outside 0..1: great");
  assert.deepEqual(s.diagnostics, [{
    code: "judge.out_of_range",
    severity: "warning",
    message: "the judge gave 7, outside 0..1",
  }]);
});

Deno.test("llmJudge marks a score read from prose invalid", async () => {
  const { score: s } = await judgeOnce("I'd say Score: 0.6, roughly.");
  assert.deepEqual([s.status, s.validity, s.value], ["scored", "invalid", 0.6]);
  assert.match(s.reason ?? "", /did not answer in JSON/);
});

Deno.test("llmJudge turns a reply without a score into an error, never a 0", async () => {
  const { score: s } = await judgeOnce("I cannot grade this.");
  assert.equal(s.status, "error");
  assert.equal(s.value, null);
  assert.equal(s.passed, false);
  assert.equal(
    s.reason,
    `scorer error: the judge's reply has no score: "I cannot grade this."`,
  );
  // The call was made: the Score says by whom and what it used.
  assert.equal(s.diagnostics[0]?.code, "judge.unparsable");
  assert.equal(s.provenance?.judge_model, "fake-judge");
  assert.ok(s.provenance?.usage !== undefined, JSON.stringify(s));
});

Deno.test("llmJudge applies pass_threshold", async () => {
  const { score: s } = await judgeOnce('{"score": 0.8}', {
    pass_threshold: 0.9,
  });
  assert.deepEqual([s.value, s.passed, s.reason], [0.8, false, undefined]);
});

Deno.test("llmJudge retries a rate-limited judge and records the attempts", async () => {
  await withServer({
    script: [reply.rateLimited("0.05"), reply.ok('{"score": 1}')],
  }, async (server) => {
    const [s] = await score([JUDGED], [llmJudge(judge(server), env)]);
    assert.equal(s?.value, 1);
    assert.equal(s?.provenance?.attempts, 2);
  });
});

Deno.test("llmJudge gives an error Score when the judge keeps failing or answers garbage", async () => {
  await withServer({
    handler: (r) =>
      lastMessage(r).includes("first") ? reply.error(500) : reply.malformed(),
  }, async (server) => {
    const units = [
      { ...JUDGED, input: "first" },
      { ...JUDGED, unit_id: "d.jsonl#2", input: "second" },
    ];
    const scores = await score(units, [
      llmJudge(judge(server, { retries: 1 }), env),
    ]);
    assert.equal(scores.length, 2);
    for (const s of scores) {
      assert.equal(s.status, "error");
      assert.equal(s.value, null);
      assert.equal(s.passed, false);
    }
    assert.match(
      scores[0]?.reason ?? "",
      /^scorer error: .*HTTP 500.*\(after 2 attempts\)$/,
    );
    assert.match(scores[1]?.reason ?? "", /^scorer error: .*invalid JSON/);
  });
});

Deno.test("llmJudge changes its evaluator_version with its model, rubric or parameters", () => {
  const base = { base_url: "http://127.0.0.1:9/v1", model: "j1" };
  const v = (s: LlmJudgeSettings) => llmJudge(s).version;
  const versions = [
    v(base),
    v({ ...base, model: "j2" }),
    v({ ...base, rubric: "Grade {{output}}" }),
    v({ ...base, params: { temperature: 0 } }),
    v({ ...base, pass_threshold: 0.7 }),
  ];
  assert.equal(new Set(versions).size, versions.length);
  assert.equal(v(base), v({ ...base }));
});

Deno.test("parseJudgeReply reads JSON, fenced JSON and prose scores, and refuses a reply without one", () => {
  assert.deepEqual(parseJudgeReply('{"score": 1, "reason": "ok"}'), {
    score: 1,
    reason: "ok",
  });
  assert.deepEqual(parseJudgeReply('{"score": 0}'), { score: 0 });
  assert.equal(
    parseJudgeReply('{"score": -0.5}').doubt,
    "the judge gave -0.5, outside 0..1",
  );
  // A score that is a string is no score: the reply cannot be read.
  assert.throws(() => parseJudgeReply('{"score": "0.7"}'), SyntaxError);
  assert.equal(parseJudgeReply("SCORE = 0.4").score, 0.4);
  assert.throws(() => parseJudgeReply('{"grade": "A"}'), SyntaxError);
  assert.throws(() => parseJudgeReply(""), SyntaxError);
  assert.throws(
    () => parseJudgeReply("x".repeat(500)),
    { message: /no score: "x{200}…"$/ },
  );
});

// --- end to end through the CLI ---------------------------------------------------

function jsonl(records: unknown[]): string {
  return records.map((r) => JSON.stringify(r)).join("\n") + "\n";
}

function parseLines(text: string): Score[] {
  return text.trim().split("\n").filter((l) => l !== "").map((l) =>
    JSON.parse(l)
  );
}

/** Asserts that no file under `dir`, and no text given, holds the secret. */
async function assertNoSecret(dir: string, texts: string[]): Promise<void> {
  for (const [i, text] of texts.entries()) {
    assert.ok(!text.includes(KEY), `output ${i} holds the secret`);
  }
  const files = await listFiles(dir);
  assert.ok(files.length > 0);
  for (const file of files) {
    const text = await Deno.readTextFile(file);
    assert.ok(!text.includes(KEY), `${file} holds the secret`);
  }
}

/** Answers target requests by their prompt and judge requests with a grade. */
function suiteHandler(server: { rateLimitedOnce: boolean }) {
  return (r: RecordedRequest) => {
    const model = (r.json as { model?: string } | undefined)?.model;
    if (model === "fake-judge") {
      return reply.ok('{"score": 0.9, "reason": "fine"}');
    }
    const prompt = lastMessage(r);
    if (prompt.includes("broken")) {
      // Echoes the key, as some proxies do: the error must not carry it out.
      return reply.error(500, `upstream refused ${r.headers.authorization}`);
    }
    if (prompt.includes("busy") && server.rateLimitedOnce) {
      server.rateLimitedOnce = false;
      return reply.rateLimited("0.1");
    }
    return reply.ok(`A: ${prompt}`);
  };
}

const OPENAI_SUITE = (baseUrl: string) =>
  `dataset: data.jsonl
target:
  type: openai
  base_url: ${baseUrl}
  model: fake-target
  api_key_env: FAKE_API_KEY
  prompt: "Q: {{input}}"
  temperature: 0
  retries: 2
  retry_delay: 0.01
  timeout: 5
scorers:
  - type: exact_match
  - type: llm_judge
    base_url: ${baseUrl}
    model: fake-judge
    api_key_env: FAKE_API_KEY
    retry_delay: 0.01
concurrency: 4
`;

Deno.test("cli run with an openai target and an llm_judge caches, retries, and never writes the key", async () => {
  await withTempDir(async (dir) => {
    const state = { rateLimitedOnce: true };
    await withServer({ handler: suiteHandler(state) }, async (server) => {
      await Deno.writeTextFile(
        `${dir}/suite.yaml`,
        OPENAI_SUITE(server.baseUrl),
      );
      await Deno.writeTextFile(
        `${dir}/data.jsonl`,
        jsonl([
          { input: "one", expected: "A: Q: one" },
          { input: "busy", expected: "A: Q: busy" },
          { input: "broken", expected: "x" },
          { input: "four", expected: "wrong" },
        ]),
      );
      const targetCalls = () =>
        server.requests.filter((r) =>
          (r.json as { model?: string }).model === "fake-target"
        ).length;

      // First run: every case is a call.
      const first = await cliWithKey([
        "run",
        "suite.yaml",
        "--out",
        "out.ndjson",
        "--record",
        "record.json",
        "--cache-dir",
        "cache",
      ], dir);
      assert.equal(first.code, 0, first.stderr);
      assert.equal(first.stdout, "");
      assert.match(first.stderr, /target cache: 0 hits, 4 calls/);
      const scores = parseLines(await Deno.readTextFile(`${dir}/out.ndjson`));
      assert.deepEqual(
        scores.map((s) => [s.unit_id, s.metric, s.status, s.value]),
        [
          ["data.jsonl#1", "exact_match", "scored", 1],
          ["data.jsonl#1", "llm_judge", "scored", 0.9],
          ["data.jsonl#2", "exact_match", "scored", 1],
          ["data.jsonl#2", "llm_judge", "scored", 0.9],
          ["data.jsonl#3", "exact_match", "blocked", null],
          ["data.jsonl#3", "llm_judge", "blocked", null],
          ["data.jsonl#4", "exact_match", "scored", 0],
          ["data.jsonl#4", "llm_judge", "scored", 0.9],
        ],
      );
      assert.match(
        scores[4]?.reason ?? "",
        /^target error: .*HTTP 500: upstream refused Bearer \*\*\* \(after 3 attempts\)$/,
      );
      // 4 first attempts, 1 retry after the 429, 2 retries of the 500.
      assert.equal(targetCalls(), 7);
      // The judge's answers are cached too (issue 14), beside the target's.
      const byModel = async (model: string) =>
        (await cacheEntries(`${dir}/cache`)).filter((e) =>
          e.result.info?.model === model
        ).length;
      assert.equal(await byModel("fake-target"), 3);
      assert.equal(await byModel("fake-judge"), 3);
      // The server did get the key: the tests below would pass vacuously otherwise.
      assert.ok(
        server.requests.every((r) =>
          r.headers.authorization === `Bearer ${KEY}`
        ),
      );
      const record = await Deno.readTextFile(`${dir}/record.json`);
      assert.match(record, /"api_key_env":"FAKE_API_KEY"/);

      // Second run, same cache: only the failed case is called again.
      const second = await cliWithKey([
        "run",
        "suite.yaml",
        "--record",
        "record2.json",
        "--cache-dir",
        "cache",
      ], dir);
      assert.equal(second.code, 0, second.stderr);
      assert.match(second.stderr, /target cache: 3 hits, 1 call/);
      assert.match(second.stderr, /judge cache: 3 hits, 0 calls/);
      assert.equal(targetCalls(), 10);
      const again = parseLines(second.stdout);
      assert.deepEqual(
        again.map((s) => [s.unit_id, s.metric, s.value]),
        scores.map((s) => [s.unit_id, s.metric, s.value]),
      );

      // More epochs: epoch 1 is cached, epoch 2 is its own entry.
      const epochs = await cliWithKey([
        "run",
        "suite.yaml",
        "--epochs",
        "2",
        "--cache-dir",
        "cache",
        "--out",
        "epochs.ndjson",
      ], dir);
      assert.equal(epochs.code, 0, epochs.stderr);
      assert.match(epochs.stderr, /target cache: 3 hits, 5 calls/);
      const epochScores = parseLines(
        await Deno.readTextFile(`${dir}/epochs.ndjson`),
      );
      assert.deepEqual(
        [...new Set(epochScores.map((s) => s.unit_id))],
        [1, 2, 3, 4].flatMap((i) => [`data.jsonl#${i}@1`, `data.jsonl#${i}@2`]),
      );
      assert.equal(await byModel("fake-target"), 6);

      // --no-cache calls every time and leaves the cache alone.
      const before = targetCalls();
      const uncached = await cliWithKey(
        ["run", "suite.yaml", "--no-cache"],
        dir,
      );
      assert.equal(uncached.code, 0, uncached.stderr);
      assert.doesNotMatch(uncached.stderr, /target cache/);
      assert.equal(targetCalls() - before, 6);
      assert.equal(await byModel("fake-target"), 6);
      assert.equal(
        (await cacheEntries(`${dir}/cache`)).length,
        6 + await byModel("fake-judge"),
      );

      await assertNoSecret(dir, [
        first.stdout,
        first.stderr,
        second.stdout,
        second.stderr,
        epochs.stdout,
        epochs.stderr,
        uncached.stdout,
        uncached.stderr,
      ]);
    });
  });
});

Deno.test("cli run with an http target fills ${ENV} headers and never writes the key", async () => {
  await withTempDir(async (dir) => {
    await withServer({
      handler: (r) => {
        const q = (r.json as { question?: string }).question;
        return q === "denied"
          ? reply.error(401, `  key ${r.headers.authorization} refused  `)
          : reply.json({ result: { text: `${q}!` } });
      },
    }, async (server) => {
      await Deno.writeTextFile(
        `${dir}/suite.yaml`,
        `dataset: data.jsonl
target:
  type: http
  url: ${server.url}/ask
  method: POST
  headers:
    Authorization: "Bearer \${FAKE_API_KEY}"
  body: { question: "{{input}}", docs: "{{context}}" }
  output: result.text
  retry_delay: 0.01
scorers:
  - type: exact_match
`,
      );
      await Deno.writeTextFile(
        `${dir}/data.jsonl`,
        jsonl([
          { input: "hi", expected: "hi!", context: ["c"] },
          { input: "denied", expected: "x", context: [] },
        ]),
      );
      const out = await cliWithKey([
        "run",
        "suite.yaml",
        "--record",
        "record.json",
        "--cache-dir",
        "cache",
      ], dir);
      assert.equal(out.code, 0, out.stderr);
      const scores = parseLines(out.stdout);
      assert.deepEqual(scores.map((s) => [s.status, s.value]), [
        ["scored", 1],
        ["blocked", null],
      ]);
      assert.equal(
        scores[1]?.reason,
        `target error: POST ${server.url}/ask answered HTTP 401: key Bearer *** refused`,
      );
      // Two cases in flight at once: their requests may arrive in any order.
      const bodies = server.requests.map((r) => r.json).sort((a, b) =>
        JSON.stringify(a).localeCompare(JSON.stringify(b))
      );
      assert.deepEqual(bodies, [
        { question: "denied", docs: [] },
        { question: "hi", docs: ["c"] },
      ]);
      for (const r of server.requests) {
        assert.equal(r.headers.authorization, `Bearer ${KEY}`);
      }
      const record = await Deno.readTextFile(`${dir}/record.json`);
      assert.ok(record.includes("Bearer ${FAKE_API_KEY}"));
      await assertNoSecret(dir, [out.stdout, out.stderr]);
    });
  });
});

Deno.test("cli run shares one cache dir between two runs at once without torn entries", async () => {
  // No answer leaves before both runs are calling: one run has at most 16
  // calls in flight, so the 17th request is the other's, made after it read
  // the (still empty) cache. Without this, a run started late on a loaded
  // machine finds the first run's pack and pays for nothing.
  let requests = 0;
  let bothCalling!: () => void;
  const barrier = new Promise<void>((resolve) => (bothCalling = resolve));
  await withTempDir(async (dir) => {
    await withServer({
      handler: async (r) => {
        if (++requests > 16) bothCalling();
        await barrier;
        return reply.ok(`answer ${lastMessage(r)} ${"x".repeat(20_000)}`);
      },
    }, async (server) => {
      await Deno.writeTextFile(
        `${dir}/suite.yaml`,
        `dataset: data.jsonl
target: { type: openai, base_url: "${server.baseUrl}", model: m, api_key_env: FAKE_API_KEY, timeout: 120 }
scorers: [{ type: exact_match }]
concurrency: 16
`,
      );
      const cases = Array.from({ length: 40 }, (_, i) => ({ input: `q${i}` }));
      await Deno.writeTextFile(`${dir}/data.jsonl`, jsonl(cases));
      const args = ["run", "suite.yaml", "--cache-dir", "cache"];
      const both = await Promise.all([
        cliWithKey(args, dir),
        cliWithKey(args, dir),
      ]);
      for (const out of both) assert.equal(out.code, 0, out.stderr);
      // Both paid for all 40 (neither found the other's in time), each
      // into its own pack; every entry is whole (cacheEntries parses all).
      const entries = await cacheEntries(`${dir}/cache`);
      assert.equal(new Set(entries.map((e) => e.key)).size, 40);
      assert.equal(new Set(entries.map((e) => e.file)).size, 2);
      for (const entry of entries) {
        assert.match(entry.result.output, /^answer q\d+ x{20000}$/);
      }
      const third = await cliWithKey(args, dir);
      assert.match(third.stderr, /target cache: 40 hits, 0 calls/);
    });
  });
});

Deno.test("cli run stops with a config error when the key variable is not set", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: data.jsonl
target: { type: openai, base_url: "http://127.0.0.1:9/v1", model: m, api_key_env: FAKE_UNSET_KEY_VAR }
scorers: [{ type: exact_match }]
`,
    );
    await Deno.writeTextFile(`${dir}/data.jsonl`, jsonl([{ input: "q" }]));
    const out = await cliWithKey(
      ["run", "suite.yaml", "--cache-dir", "cache"],
      dir,
    );
    assert.equal(out.code, 2);
    assert.match(out.stderr, /FAKE_UNSET_KEY_VAR is not set/);
  });
});

Deno.test("cacheKey ignores flow control settings but not what changes the answer", () => {
  const base = { base_url: "http://127.0.0.1:9/v1", model: "m" };
  const key = (settings: Record<string, unknown>) =>
    cacheKey(
      openaiTarget({ ...base, ...settings } as never),
      { input: "q" },
      1,
    );
  assert.equal(
    key({}),
    key({
      timeout: 5,
      retries: 9,
      rate_limit: 60,
      max_total_retries: 1,
      retry_delay: 2,
    }),
  );
  assert.notEqual(key({}), key({ params: { temperature: 0.7 } }));
  assert.notEqual(key({}), key({ system: "Be brief." }));
  assert.notEqual(
    cacheKey(openaiTarget(base), { input: "q" }, 1),
    cacheKey(openaiTarget(base), { input: "q" }, 2),
    "each epoch is its own entry",
  );
});

function cliWithKey(args: string[], cwd: string): Promise<Outcome> {
  return cli(args, cwd, { FAKE_API_KEY: KEY });
}

Deno.test("ReplyError and ContentFilterError are exported (mod.ts, src/net/mod.ts): a script tells a paid reply without an answer, and what it cost", async () => {
  await using server = fakeLlm({
    handler: (request) =>
      reply.json({
        model: "bot",
        choices: lastMessage(request) === "filtered"
          ? [{
            index: 0,
            message: { role: "assistant" },
            finish_reason: "content_filter",
          }]
          : [],
        usage: { prompt_tokens: 1000, completion_tokens: 0 },
      }),
  });
  assert.equal(net.ReplyError, ReplyError);
  assert.equal(net.ContentFilterError, ContentFilterError);
  const target = openaiTarget({
    model: "bot",
    base_url: server.baseUrl,
    cost: { input_per_1m: 2, output_per_1m: 8 },
  });
  await assert.rejects(
    async () => await target.call({ input: "q" }, {}),
    (error: unknown) =>
      error instanceof ReplyError && !(error instanceof ContentFilterError) &&
      error.info.cost_usd === 0.002,
  );
  await assert.rejects(
    async () => await target.call({ input: "filtered" }, {}),
    (error: unknown) =>
      error instanceof ContentFilterError && error.info.cost_usd === 0.002,
  );
});
