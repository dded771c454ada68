// FlowWatch sees every wait of a run's network calls as it happens: the
// rate limit, a server's Retry-After, a backoff. Real calls to loopback
// servers, through the real targets and judge.

import assert from "node:assert/strict";
import {
  type FlowState,
  FlowWatch,
  RateLimiter,
  RetryableError,
  withRetries,
} from "../../src/net/mod.ts";
import { httpTarget, runTarget } from "../../src/targets/mod.ts";
import { llmJudge, scoreUnits } from "../../src/scorers/mod.ts";

/** Samples `watch` every 20 ms while `work` runs. */
async function sampled(
  watch: FlowWatch,
  work: () => Promise<unknown>,
): Promise<FlowState[]> {
  const seen: FlowState[] = [];
  const timer = setInterval(() => seen.push(watch.state()), 20);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  seen.push(watch.state());
  return seen;
}

const idle = { rate_limit: 0, retry_after: 0, backoff: 0, slots: 0 };

Deno.test("FlowWatch counts the calls a rate limiter holds back, and none once they run", async () => {
  const watch = new FlowWatch();
  const limiter = new RateLimiter({ perMinute: 600 }); // one per 100 ms
  const seen = await sampled(
    watch,
    () =>
      Promise.all([1, 2, 3, 4].map(() => limiter.acquire(undefined, watch))),
  );
  const most = Math.max(...seen.map((s) => s.waiting.rate_limit));
  assert.equal(most, 3, "the first goes at once, three wait");
  assert.deepEqual(seen.at(-1), { waiting: idle, retryAfterMs: 0 });
});

Deno.test("FlowWatch tells a Retry-After wait, with the time left, from a backoff", async () => {
  const watch = new FlowWatch();
  let n = 0;
  const seen = await sampled(watch, () =>
    withRetries(() => {
      n++;
      if (n === 1) throw new RetryableError("HTTP 429", 300);
      if (n === 2) throw new RetryableError("HTTP 503");
      return Promise.resolve("ok");
    }, { watch, baseDelayMs: 200, random: () => 0.999 }));
  const retryAfter = seen.filter((s) => s.waiting.retry_after === 1);
  assert.ok(retryAfter.length >= 3, JSON.stringify(seen));
  assert.ok(
    retryAfter.every((s) => s.retryAfterMs > 0 && s.retryAfterMs <= 300),
  );
  assert.ok(seen.some((s) => s.waiting.backoff === 1 && s.retryAfterMs === 0));
  assert.ok(!seen.some((s) => s.waiting.backoff + s.waiting.retry_after > 1));
  assert.deepEqual(seen.at(-1), { waiting: idle, retryAfterMs: 0 });
});

Deno.test("FlowWatch ends a wait that an abort cuts short", async () => {
  const watch = new FlowWatch();
  const controller = new AbortController();
  const call = withRetries(
    () => Promise.reject(new RetryableError("HTTP 429", 60_000)),
    { watch, signal: controller.signal },
  );
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(watch.state().waiting.retry_after, 1);
  controller.abort(new Error("stop"));
  await assert.rejects(call, /stop/);
  assert.deepEqual(watch.state(), { waiting: idle, retryAfterMs: 0 });
});

Deno.test("an http target tells the stage's FlowWatch of a server's Retry-After", async () => {
  let calls = 0;
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () =>
      ++calls === 1
        ? new Response("busy", { status: 429, headers: { "retry-after": "1" } })
        : Response.json({ answer: "a" }),
  );
  const watch = new FlowWatch();
  const target = httpTarget({
    url: `http://127.0.0.1:${server.addr.port}/ask`,
    output: "answer",
  });
  const examples = [{ example_id: "d#1", line: 1, case: { input: "q" } }];
  const seen = await sampled(watch, async () => {
    const units = await Array.fromAsync(
      ReadableStream.from(examples).pipeThrough(
        runTarget(target, { flow: watch }),
      ),
    );
    assert.equal(units[0]?.output, "a");
  });
  assert.ok(
    seen.some((s) => s.waiting.retry_after === 1 && s.retryAfterMs > 500),
    JSON.stringify(seen.slice(0, 3)),
  );
  assert.deepEqual(seen.at(-1), { waiting: idle, retryAfterMs: 0 });
});

for (
  const [what, header] of [
    ["an hour", "3600"],
    ["a date in 2099", "Thu, 01 Jan 2099 00:00:00 GMT"],
  ] as const
) {
  Deno.test(`an http target asked to wait ${what} (Retry-After) fails the call at once, saying so`, async () => {
    let calls = 0;
    await using server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      () => {
        calls++;
        return new Response("quota spent", {
          status: 429,
          headers: { "retry-after": header },
        });
      },
    );
    const target = httpTarget({
      url: `http://127.0.0.1:${server.addr.port}/ask`,
      output: "answer",
    });
    const examples = [{ example_id: "d#1", line: 1, case: { input: "q" } }];
    const [unit] = await Array.fromAsync(
      ReadableStream.from(examples).pipeThrough(runTarget(target)),
    );
    assert.equal(unit?.output, null);
    assert.match(
      unit?.target?.error as string,
      /answered HTTP 429: quota spent \(the server asked to wait \d+s \(Retry-After\), longer than the 120s evalpipe waits; not retried\)$/,
    );
    assert.equal(calls, 1);
  });
}

Deno.test("a target honours retry-after-ms (OpenAI's, Azure's) before Retry-After's whole seconds", async () => {
  // Retry-After alone (600 s, past the 120 s evalpipe waits) would fail the
  // call at once; the finer retry-after-ms beside it asks for 20 ms.
  let calls = 0;
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () =>
      ++calls === 1
        ? new Response("busy", {
          status: 429,
          headers: { "retry-after": "600", "retry-after-ms": "20" },
        })
        : Response.json({ answer: "a" }),
  );
  const target = httpTarget({
    url: `http://127.0.0.1:${server.addr.port}/ask`,
    output: "answer",
  });
  const examples = [{ example_id: "d#1", line: 1, case: { input: "q" } }];
  const [unit] = await Array.fromAsync(
    ReadableStream.from(examples).pipeThrough(runTarget(target)),
  );
  assert.equal(unit?.target?.error, undefined);
  assert.equal(unit?.output, "a");
  assert.equal(calls, 2);
});

Deno.test("an llm_judge tells the scoring stage's FlowWatch of its rate limit", async () => {
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () =>
      Response.json({
        model: "judge",
        choices: [{ message: { role: "assistant", content: '{"score": 1}' } }],
      }),
  );
  const watch = new FlowWatch();
  const judge = llmJudge({
    model: "judge",
    base_url: `http://127.0.0.1:${server.addr.port}/v1`,
    rate_limit: 600,
  });
  const units = [1, 2, 3].map((i) => ({
    example_id: `d#${i}`,
    unit_id: `d#${i}`,
    input: "q",
    output: "a",
  }));
  const seen = await sampled(watch, async () => {
    const scores = await Array.fromAsync(
      ReadableStream.from(units).pipeThrough(
        scoreUnits([judge], { concurrency: 3, flow: watch }),
      ),
    );
    assert.deepEqual(scores.map((s) => s.value), [1, 1, 1]);
  });
  assert.ok(seen.some((s) => s.waiting.rate_limit >= 1), JSON.stringify(seen));
  assert.deepEqual(seen.at(-1), { waiting: idle, retryAfterMs: 0 });
});
