// Answer sizes: a target or judge answer is read as a stream up to
// max_response_bytes, and one past it is a target error naming the cap, not
// retried, read no further, against a real server on loopback that streams
// far more than the cap.

import assert from "node:assert/strict";
import {
  httpTarget,
  llmJudge,
  openaiTarget,
  runTarget,
  type Target,
  type Unit,
} from "../../mod.ts";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

const MiB = 1024 * 1024;

interface Streamer extends AsyncDisposable {
  url: string;
  /** Requests received. */
  requests: number;
  /** Bytes the server managed to send, over all requests. */
  sent: number;
}

/**
 * A server answering every request 200 with `total` bytes of `x`, streamed
 * in 64 KiB chunks without a declared length (or with one, `declare`).
 */
function streamer(total: number, declare = false): Streamer {
  const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
  const state = { requests: 0, sent: 0 };
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      state.requests++;
      await request.body?.cancel();
      let left = total;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (left <= 0) return controller.close();
          const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
          left -= part.length;
          state.sent += part.length;
          controller.enqueue(part);
        },
      });
      return new Response(body, {
        headers: declare ? { "content-length": String(total) } : {},
      });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    get requests() {
      return state.requests;
    },
    get sent() {
      return state.sent;
    },
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

async function runOne(target: Target): Promise<Unit> {
  const examples = [{ example_id: "d#1", line: 1, case: { input: "q" } }];
  const [unit] = await Array.fromAsync(
    ReadableStream.from(examples).pipeThrough(runTarget(target)),
  );
  assert.ok(unit !== undefined);
  return unit;
}

for (const declare of [false, true]) {
  Deno.test(
    `httpTarget stops reading a 50 MiB answer ${
      declare ? "of declared length " : ""
    }at max_response_bytes, a target error not retried`,
    async () => {
      await using server = streamer(50 * MiB, declare);
      const unit = await runOne(httpTarget({
        url: `${server.url}/answer`,
        max_response_bytes: MiB,
        retries: 3,
        retry_delay: 0.01,
        timeout: 20,
      }));
      assert.equal(
        unit.target?.error,
        `POST ${server.url}/answer answered more than 1048576 bytes (max_response_bytes): the answer was not read`,
      );
      assert.equal(unit.output, null);
      assert.equal(server.requests, 1, "not retried");
      // Socket buffers take some beyond the cap, never the whole answer.
      assert.ok(server.sent < 20 * MiB, `${server.sent} bytes sent`);
    },
  );
}

Deno.test("httpTarget reads an answer of exactly max_response_bytes", async () => {
  await using server = streamer(MiB);
  const unit = await runOne(httpTarget({
    url: `${server.url}/answer`,
    max_response_bytes: MiB,
    timeout: 20,
  }));
  assert.equal(unit.target?.error, undefined);
  assert.equal(unit.output?.length, MiB);
});

Deno.test("openaiTarget and llmJudge stop at max_response_bytes too", async () => {
  await using server = streamer(50 * MiB);
  const settings = {
    base_url: `${server.url}/v1`,
    model: "m",
    max_response_bytes: MiB,
    retries: 3,
    retry_delay: 0.01,
    timeout: 20,
  };
  const unit = await runOne(openaiTarget(settings));
  assert.match(
    unit.target?.error ?? "",
    /answered more than 1048576 bytes \(max_response_bytes\)/,
  );
  await assert.rejects(
    async () =>
      await llmJudge(settings).score(
        { example_id: "d#1", unit_id: "d#1", input: "q", output: "a" },
        {},
      ),
    /answered more than 1048576 bytes \(max_response_bytes\)/,
  );
  assert.equal(server.requests, 2, "neither retried");
});

Deno.test("cli run survives a 300 MiB answer: a target error at the default 32 MiB cap, Scores written", async () => {
  await withTempDir(async (dir) => {
    await using server = streamer(300 * MiB);
    await Deno.writeTextFile(`${dir}/data.jsonl`, '{"input": "q"}\n');
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: data.jsonl
target:
  type: http
  url: ${server.url}/answer
  timeout: 60
scorers:
  - type: exact_match
`,
    );
    const out = await cli(
      ["run", "suite.yaml", "--no-cache", "--out", "scores.jsonl"],
      dir,
    );
    // The run ends in order; its one case measured nothing, which fails it.
    assert.equal(out.code, 1, out.stderr);
    assert.match(out.stderr, /exact_match: nothing measured: 1 blocked/);
    const [score, more] = (await Deno.readTextFile(`${dir}/scores.jsonl`))
      .trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(more, undefined);
    assert.equal(score.status, "blocked");
    assert.equal(score.diagnostics[0].code, "target.error");
    assert.match(
      score.reason,
      /answered more than 33554432 bytes \(max_response_bytes\)/,
    );
    assert.equal(server.requests, 1);
    assert.ok(server.sent < 100 * MiB, `${server.sent} bytes sent`);
  });
});
