// Every network call in flight shares one deadline timer and, per run, one
// listener on the run's signal (src/net/_http.ts): each call still times out
// after its own timeout, and aborting a run stops every call it has in
// flight, whatever else is under way. Real calls to a loopback server.

import assert from "node:assert/strict";
import { ChatClient } from "../../src/net/mod.ts";
import { fakeLlm, reply } from "../_fake_llm.ts";

const client = (baseUrl: string, timeout: number) =>
  new ChatClient({ base_url: baseUrl, model: "m", timeout, retries: 0 });
const ask = [{ role: "user", content: "q" }];

/** What a call rejects with, as text; fails the test if it resolves. */
async function failureOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  throw new Error("the call did not fail");
}

Deno.test("a call with a short timeout times out on time while a call with a long one is in flight", async () => {
  await using server = fakeLlm({
    handler: () => reply.slow(5000, reply.ok("late")),
  });
  const long = new AbortController();
  // The long call sets the shared timer first, for 30 s from now.
  const slow = client(server.baseUrl, 30).complete(ask, long.signal);
  const start = performance.now();
  const message = await failureOf(client(server.baseUrl, 0.2).complete(ask));
  const took = performance.now() - start;
  assert.match(message, /timed out after 0\.2 s \(after 1 attempt\)$/);
  assert.ok(took >= 180 && took < 4000, `timed out after ${took} ms`);
  long.abort();
  assert.match(await failureOf(slow), /was interrupted/);
});

Deno.test("calls started one after another each time out after their own timeout", async () => {
  await using server = fakeLlm({
    handler: () => reply.slow(5000, reply.ok("late")),
  });
  const chat = client(server.baseUrl, 0.3);
  const start = performance.now();
  const first = failureOf(chat.complete(ask)).then(() =>
    performance.now() - start
  );
  await new Promise((resolve) => setTimeout(resolve, 150));
  const second = failureOf(chat.complete(ask)).then(() =>
    performance.now() - start
  );
  const [a, b] = await Promise.all([first, second]);
  assert.ok(a >= 280 && a < 4000, `the first timed out after ${a} ms`);
  assert.ok(b >= 430 && b < 4000, `the second timed out after ${b} ms`);
});

Deno.test("aborting a run stops every call it has in flight, and only those", async () => {
  await using server = fakeLlm({
    handler: () => reply.slow(5000, reply.ok("late")),
  });
  const chat = client(server.baseUrl, 30);
  const run = new AbortController();
  const other = new AbortController();
  const calls = Array.from(
    { length: 8 },
    () => failureOf(chat.complete(ask, run.signal)),
  );
  const bystander = chat.complete(ask, other.signal);
  while (server.count < 9) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const start = performance.now();
  run.abort(new Error("stop"));
  const messages = await Promise.all(calls);
  assert.ok(performance.now() - start < 1000);
  for (const message of messages) {
    assert.match(
      message,
      /^POST http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions was interrupted$/,
    );
  }
  // The other run's call is still waiting for its answer, until it is stopped.
  const settled = await Promise.race([
    bystander.then(() => "settled", () => "settled"),
    new Promise((resolve) => setTimeout(() => resolve("pending"), 100)),
  ]);
  assert.equal(settled, "pending");
  other.abort();
  assert.match(await failureOf(bystander), /was interrupted/);
});

Deno.test("a call whose run was aborted before it started sends nothing", async () => {
  await using server = fakeLlm({});
  const run = new AbortController();
  run.abort();
  const message = await failureOf(
    client(server.baseUrl, 30).complete(ask, run.signal),
  );
  assert.match(message, /was interrupted$/);
  assert.equal(server.count, 0);
});

Deno.test("a signal that stopped a run's calls leaves later runs' calls alone", async () => {
  await using server = fakeLlm({});
  const chat = client(server.baseUrl, 30);
  const first = new AbortController();
  assert.equal((await chat.complete(ask, first.signal)).text, "echo: q");
  first.abort();
  const second = new AbortController();
  assert.equal((await chat.complete(ask, second.signal)).text, "echo: q");
});
