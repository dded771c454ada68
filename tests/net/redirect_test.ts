// Redirects of network targets and the judge, against real servers on
// loopback: a redirect to another origin (another port is another origin) is
// a target error naming its Location and is never followed, so no header
// filled from ${VAR}, no key and no body leaves for another host; one within
// the origin is followed a bounded number of times, unless it would turn a
// POST into a GET without its body; none is retried.

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
import { type FakeLlm, fakeLlm, type FakeReply, reply } from "../_fake_llm.ts";
import { withTempDir } from "../_proc.ts";

const KEY = "sk-redirect-SECRET-5678";
const env = (name: string) => name === "FAKE_API_KEY" ? KEY : undefined;

async function runOne(target: Target): Promise<Unit> {
  const examples = [{ example_id: "d#1", line: 1, case: { input: "prompt" } }];
  const [unit] = await Array.fromAsync(
    ReadableStream.from(examples).pipeThrough(runTarget(target)),
  );
  assert.ok(unit !== undefined);
  return unit;
}

function redirect(status: number, location: string): FakeReply {
  return { kind: "raw", status, body: "moved", headers: { location } };
}

/** Two servers on two ports: `home`, and `away`, another origin. */
async function withServers(
  fn: (home: FakeLlm, away: FakeLlm) => Promise<void>,
): Promise<void> {
  await using home = fakeLlm();
  await using away = fakeLlm();
  await fn(home, away);
}

const SECRET_HEADERS = {
  "x-api-key": "${FAKE_API_KEY}",
  "api-key": "${FAKE_API_KEY}",
  authorization: "Bearer ${FAKE_API_KEY}",
};

for (const status of [301, 302, 303, 307, 308]) {
  Deno.test(`httpTarget refuses a ${status} to another origin, naming it, sending nothing there and not retrying`, async () => {
    await withServers(async (home, away) => {
      const location = `http://someone:hunter2pw@127.0.0.1:${
        new URL(away.url).port
      }/steal?from=evalpipe`;
      home.handler = () => redirect(status, location);
      const target = httpTarget({
        url: `${home.url}/answer`,
        headers: SECRET_HEADERS,
        retries: 4,
        retry_delay: 0.01,
        timeout: 5,
      }, env);
      const unit = await runOne(target);
      assert.equal(
        unit.target?.error,
        `POST ${home.url}/answer was redirected (HTTP ${status}) to another origin, "${away.url}/steal?from=evalpipe", which is not followed`,
      );
      assert.equal(away.count, 0, "nothing reached the other origin");
      assert.equal(home.count, 1, "a redirect error is not retried");
      assert.ok(!unit.target?.error?.includes("hunter2pw"));
    });
  });
}

Deno.test("openaiTarget and llmJudge never send the key to another origin", async () => {
  await withServers(async (home, away) => {
    home.handler = () => redirect(307, `${away.baseUrl}/chat/completions`);
    const settings = {
      base_url: home.baseUrl,
      model: "m",
      api_key_env: "FAKE_API_KEY",
      retry_delay: 0.01,
      timeout: 5,
    };
    const unit = await runOne(openaiTarget(settings, env));
    assert.match(
      unit.target?.error ?? "",
      /to another origin, ".*:\d+\/v1\/chat\/completions", which is not followed$/,
    );
    const judge = llmJudge(settings, env);
    await assert.rejects(
      async () =>
        await judge.score(
          { example_id: "d#1", unit_id: "d#1", input: "q", output: "a" },
          {},
        ),
      /to another origin/,
    );
    assert.equal(away.count, 0);
    assert.equal(home.count, 2);
  });
});

Deno.test("httpTarget follows a same-origin 307 and 308 with method, headers and body, and a 301, 302 or 303 of a GET", async () => {
  await withServers(async (home) => {
    home.handler = (r) => {
      if (r.path === "/a") return redirect(307, "/b");
      if (r.path === "/b") return redirect(308, `${home.url}/c`);
      if (r.path === "/g1") return redirect(301, "/g2");
      if (r.path === "/g2") return redirect(302, "/g3");
      if (r.path === "/g3") return redirect(303, "/g4");
      return reply.json({ answer: `${r.method} ${r.path}` });
    };
    const target = httpTarget({
      url: `${home.url}/a`,
      headers: { "x-api-key": "${FAKE_API_KEY}" },
      output: "answer",
      timeout: 5,
    }, env);
    const unit = await runOne(target);
    assert.equal(unit.target?.error, undefined);
    assert.equal(unit.output, "POST /c");
    const get = httpTarget({
      url: `${home.url}/g1`,
      method: "GET",
      output: "answer",
      timeout: 5,
    });
    assert.equal((await runOne(get)).output, "GET /g4");
    assert.deepEqual(
      home.requests.map((
        r,
      ) => [r.method, r.path, r.body, r.headers["x-api-key"]]),
      [
        ["POST", "/a", '{"input":"prompt"}', KEY],
        ["POST", "/b", '{"input":"prompt"}', KEY],
        ["POST", "/c", '{"input":"prompt"}', KEY],
        ["GET", "/g1", "", undefined],
        ["GET", "/g2", "", undefined],
        ["GET", "/g3", "", undefined],
        ["GET", "/g4", "", undefined],
      ],
    );
  });
});

for (const status of [301, 302, 303]) {
  Deno.test(`openaiTarget and httpTarget refuse a same-origin ${status} of their POST, which would arrive as a GET without the body: a target error naming it, not a scored answer`, async () => {
    await withServers(async (home) => {
      // The moved service answers a GET too: followed, its answer would be
      // scored as if it answered the prompt.
      home.handler = (r) =>
        r.path.startsWith("/old/")
          ? redirect(status, r.path.replace("/old/", "/new/"))
          : reply.ok(`${r.method} ${JSON.stringify(r.body)}`);
      const chat = await runOne(openaiTarget({
        base_url: `${home.url}/old/v1`,
        model: "m",
        api_key_env: "FAKE_API_KEY",
        retry_delay: 0.01,
        timeout: 5,
      }, env));
      assert.equal(chat.output, null);
      assert.equal(
        chat.target?.error,
        `POST ${home.url}/old/v1/chat/completions was redirected (HTTP ${status}) to "${home.url}/new/v1/chat/completions", which is not followed: the POST would arrive as a GET without its body; point the target at that address (a 307 or 308 keeps the method and body)`,
      );
      const http = await runOne(httpTarget({
        url: `${home.url}/old/answer`,
        retry_delay: 0.01,
        timeout: 5,
      }));
      assert.equal(http.output, null);
      assert.match(
        http.target?.error ?? "",
        new RegExp(
          `^POST ${home.url}/old/answer was redirected \\(HTTP ${status}\\) to "${home.url}/new/answer", which is not followed: `,
        ),
      );
      assert.deepEqual(
        home.requests.map((r) => `${r.method} ${r.path}`),
        ["POST /old/v1/chat/completions", "POST /old/answer"],
        "nothing followed, nothing retried",
      );
    });
  });
}

Deno.test("httpTarget ends a redirect loop at max_redirects, without retries", async () => {
  await withServers(async (home) => {
    home.handler = () => redirect(302, "/loop");
    for (const [max, requests] of [[undefined, 4], [1, 2], [0, 1]] as const) {
      const before = home.count;
      const target = httpTarget({
        url: `${home.url}/loop`,
        method: "GET",
        retries: 4,
        retry_delay: 0.01,
        timeout: 5,
        ...(max !== undefined ? { max_redirects: max } : {}),
      });
      const unit = await runOne(target);
      assert.equal(
        unit.target?.error,
        `GET ${home.url}/loop was redirected more than ${
          max ?? 3
        } times (max_redirects), last to "${home.url}/loop"`,
      );
      assert.equal(home.count - before, requests);
    }
  });
});

Deno.test("cli run reads max_redirects and max_response_bytes from the config, and refuses bad ones", async () => {
  await withTempDir(async (dir) => {
    await using home = fakeLlm({
      handler: (r) =>
        r.path === "/answer"
          ? redirect(307, "/big")
          : { kind: "raw", status: 200, body: "x".repeat(2000) },
    });
    await Deno.writeTextFile(`${dir}/data.jsonl`, '{"input": "q"}\n');
    const suite = (limits: string) =>
      `dataset: data.jsonl
target:
  type: http
  url: ${home.url}/answer
  retries: 0
${limits}
scorers:
  - type: exact_match
gates:
  exact_match:
    allow_unmeasured: true
`;
    const reasons = async (limits: string) => {
      await Deno.writeTextFile(`${dir}/suite.yaml`, suite(limits));
      const out = await cli(
        ["run", "suite.yaml", "--no-cache", "--out", "s.jsonl"],
        dir,
      );
      assert.equal(out.code, 0, out.stderr);
      return (await Deno.readTextFile(`${dir}/s.jsonl`)).trim().split("\n")
        .map((l) => JSON.parse(l).reason);
    };
    assert.deepEqual(await reasons("  max_redirects: 1"), [
      "not applicable: the case has no expected",
    ]);
    assert.match(
      (await reasons("  max_redirects: 0"))[0],
      /redirected more than 0 times \(max_redirects\)/,
    );
    assert.match(
      (await reasons("  max_response_bytes: 1000"))[0],
      /answered more than 1000 bytes \(max_response_bytes\)/,
    );
    for (const bad of ["max_redirects: -1", "max_response_bytes: 0"]) {
      await Deno.writeTextFile(`${dir}/suite.yaml`, suite(`  ${bad}`));
      const out = await cli(["run", "suite.yaml", "--no-cache"], dir);
      assert.equal(out.code, 2, out.stderr);
      assert.match(out.stderr, new RegExp(`target\\.${bad.split(":")[0]}`));
    }
  });
});
