// Redaction: no secret (an api key, a ${VAR} header value, a URL password)
// reaches an error reason, an output, a Score or the cache, whether echoed
// as it is, past the clip of an error body, JSON-escaped, URL-encoded or
// base64-encoded, against real servers on loopback.

import assert from "node:assert/strict";
import {
  cachedTarget,
  httpTarget,
  llmJudge,
  openaiTarget,
  runTarget,
  scoreUnits,
  semanticSimilarity,
  type Target,
  TargetCache,
  type Unit,
} from "../../mod.ts";
import { fakeLlm, reply } from "../_fake_llm.ts";
import { send } from "../../src/net/_http.ts";
import { urlSecrets, withoutCredentials } from "../../src/net/template.ts";
import { withTempDir } from "../_proc.ts";

/** A key with the characters JSON and URLs escape. */
const KEY = 'sk-Zq"9\\Lm/+ SECRET=42&';
const env = (name: string) => name === "FAKE_API_KEY" ? KEY : undefined;
const base64 = (text: string) =>
  btoa(String.fromCharCode(...new TextEncoder().encode(text)));

async function runOne(target: Target, input = "q"): Promise<Unit> {
  const examples = [{ example_id: "d#1", line: 1, case: { input } }];
  const [unit] = await Array.fromAsync(
    ReadableStream.from(examples).pipeThrough(runTarget(target)),
  );
  assert.ok(unit !== undefined);
  return unit;
}

/** Asserts that `text` holds no part of the key long enough to matter. */
function assertNoKey(text: string, what: string): void {
  for (let i = 0; i + 6 <= KEY.length; i++) {
    const part = KEY.slice(i, i + 6);
    assert.ok(
      !text.includes(part),
      `${what} holds ${JSON.stringify(part)}: ${text}`,
    );
  }
  for (
    const form of [JSON.stringify(KEY), encodeURIComponent(KEY), base64(KEY)]
  ) {
    assert.ok(!text.includes(form.slice(1, -1)), `${what} holds ${form}`);
  }
}

Deno.test("httpTarget hides a key that straddles the clip of an error body", async () => {
  for (const at of [490, 495, 499, 500]) {
    await using server = fakeLlm({
      handler: (r) =>
        reply.error(400, `${"x".repeat(at)}${r.headers["x-api-key"]} and more`),
    });
    const unit = await runOne(httpTarget({
      url: `${server.url}/answer`,
      headers: { "x-api-key": "${FAKE_API_KEY}" },
    }, env));
    assert.match(unit.target?.error ?? "", /answered HTTP 400: x+/);
    assertNoKey(unit.target?.error ?? "", `the error at ${at}`);
  }
});

Deno.test("httpTarget hides a credential's header written out in the config (no ${VAR}), and leaves a plain word shown", async () => {
  await using server = fakeLlm({
    handler: (r) =>
      reply.error(
        401,
        `refused ${r.headers.authorization} and ${r.headers["x-api-key"]} for ${
          r.headers["x-auth-mode"]
        } (${r.headers["x-keyboard-layout"]})`,
      ),
  });
  const unit = await runOne(httpTarget({
    url: `${server.url}/answer`,
    headers: {
      authorization: "Bearer sk-literal-0042xyz",
      "x-api-key": "lit-key-77",
      "x-auth-mode": "oauth",
      "x-keyboard-layout": "Dvorak-Left-9",
    },
  }));
  assert.equal(
    unit.target?.error,
    `POST ${server.url}/answer answered HTTP 401: refused Bearer *** and *** for oauth (Dvorak-Left-9)`,
  );
});

Deno.test("httpTarget hides a key written after a Key or ApiKey scheme, as after Bearer, when a server echoes the key alone", async () => {
  // fal.ai's "Key id:secret", Elasticsearch's "ApiKey …": the server's
  // message says the key without its scheme.
  await using server = fakeLlm({
    handler: (r) =>
      reply.error(
        401,
        `refused ${r.headers.authorization?.split(" ")[1]} and ${
          r.headers["proxy-authorization"]?.split(" ")[1]
        }`,
      ),
  });
  const unit = await runOne(httpTarget({
    url: `${server.url}/answer`,
    headers: {
      authorization: "Key fal-id-42:fal-secret-77",
      "proxy-authorization":
        "ApiKey VnVhQ2ZHY0JDZGJrUW0tZTVhT3g6dWkybHAyYXhUTm1zeWFrdzl0dk5udw==",
    },
  }));
  assert.equal(
    unit.target?.error,
    `POST ${server.url}/answer answered HTTP 401: refused *** and ***`,
  );
});

Deno.test("httpTarget keeps an answer that says a session header's value: a tracing session's name or id is no credential", async () => {
  // Helicone-Session-Name, x-session-id: a gateway's tracing headers. Read
  // as credentials, "Course Plan" was a secret and the answer naming it
  // was not kept.
  await using server = fakeLlm({
    handler: (r) =>
      reply.json({
        answer: `See the ${r.headers["helicone-session-name"]} of run ${
          r.headers["x-session-id"]
        }`,
      }),
  });
  const unit = await runOne(httpTarget({
    url: `${server.url}/answer`,
    output: "answer",
    headers: {
      "Helicone-Session-Name": "Course Plan",
      "x-session-id": "run-2024-12-08",
      "x-session-token": "st-literal-0042xyz",
    },
  }));
  assert.equal(unit.target?.error, undefined);
  assert.equal(unit.output, "See the Course Plan of run run-2024-12-08");
});

Deno.test("openaiTarget hides a key echoed JSON-escaped, URL-encoded or base64", async () => {
  const echoes = [
    (k: string) => JSON.stringify({ error: { message: `bad key ${k}` } }),
    (k: string) => `bad key ${encodeURIComponent(k)}`,
    (k: string) => `bad key ${encodeURIComponent(k).toLowerCase()}`,
    (k: string) => `bad key ${base64(k)}`,
    (k: string) => `token=${base64(`user:${k}`)}`,
  ];
  for (const [i, echo] of echoes.entries()) {
    await using server = fakeLlm({
      handler: (r) =>
        reply.error(
          401,
          echo(r.headers.authorization!.slice("Bearer ".length)),
        ),
    });
    const unit = await runOne(openaiTarget({
      base_url: server.baseUrl,
      model: "m",
      api_key_env: "FAKE_API_KEY",
    }, env));
    assert.match(unit.target?.error ?? "", /answered HTTP 401: /);
    assertNoKey(unit.target?.error ?? "", `echo ${i}`);
  }
});

Deno.test("httpTarget and openaiTarget never show a URL's password, nor its Basic auth echoed", async () => {
  await using server = fakeLlm({
    handler: (r) => reply.error(403, `denied ${r.headers.authorization}`),
  });
  const port = new URL(server.url).port;
  const http = await runOne(httpTarget({
    url: `http://someone:hunter2pw@127.0.0.1:${port}/answer`,
  }));
  assert.match(
    http.target?.error ?? "",
    new RegExp(
      `^POST http://127\\.0\\.0\\.1:${port}/answer answered HTTP 403: denied Basic \\*\\*\\*$`,
    ),
  );
  const openai = await runOne(openaiTarget({
    base_url: `http://someone:hunter2pw@127.0.0.1:${port}/v1`,
    model: "m",
  }));
  assert.match(
    openai.target?.error ?? "",
    /answered HTTP 403: denied Basic \*\*\*$/,
  );
  // A connection refused: fetch's own message names the URL.
  await server.close();
  const refused = await runOne(httpTarget({
    url: `http://someone:hunter2pw@127.0.0.1:${port}/answer`,
    retries: 0,
  }));
  assert.match(refused.target?.error ?? "", /failed: /);
  for (const unit of [http, openai, refused]) {
    assert.ok(!unit.target?.error?.includes("hunter2pw"), unit.target?.error);
    assert.ok(!unit.target?.error?.includes("someone"), unit.target?.error);
  }
});

Deno.test("httpTarget hides a URL's password and query key when a case fills its port", async () => {
  // The URL as written does not parse ({{metadata.port}} is no port), so
  // its secrets were read from nothing: the echoes below went out whole.
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request) => {
      const echo = `${request.url} ${request.headers.get("authorization")}`;
      const status = new URL(request.url).pathname === "/ok" ? 200 : 400;
      return new Response(`seen ${echo}`, { status });
    },
  );
  const port = String(server.addr.port);
  const call = (path: string) =>
    Array.fromAsync(
      ReadableStream.from([{
        example_id: "d#1",
        line: 1,
        case: { input: "q", metadata: { port } },
      }]).pipeThrough(runTarget(httpTarget({
        url:
          `http://someone:hunter2pw@127.0.0.1:{{metadata.port}}${path}?key=AIzaQueryKey1`,
        retries: 0,
      }))),
    );
  const [refused] = await call("/err");
  const [answered] = await call("/ok");
  assert.match(refused?.target?.error ?? "", /answered HTTP 400: seen /);
  assert.match(
    answered?.target?.error ?? "",
    /answered with a secret the config sends .*: the answer is not kept/,
  );
  assert.equal(answered?.output ?? null, null);
  for (const unit of [refused, answered]) {
    const text = JSON.stringify(unit);
    for (const secret of ["AIzaQueryKey1", base64("someone:hunter2pw")]) {
      assert.ok(!text.includes(secret), `${secret} in ${text}`);
    }
  }
});

Deno.test("an answer that echoes a key is not kept, cached or scored; a judge's the same, and a value shorter than 8 characters is a word", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({
      handler: (r) => {
        const key = (r.headers.authorization ?? "").replace(/^Bearer /, "") ||
          r.headers["x-api-key"]!;
        if (r.path === "/raw") {
          return { kind: "raw", status: 200, body: `raw ${key}` };
        }
        if (r.path === "/json") {
          return reply.json({ a: `json ${JSON.stringify(key)}` });
        }
        const model = (r.json as { model?: string }).model;
        return reply.ok(
          model === "judge"
            ? JSON.stringify({ score: 1, reason: `the key is ${key}` })
            : `the key is ${base64(key)}`,
        );
      },
    });
    const cache = new TargetCache(`${dir}/cache`);
    const chat = {
      base_url: server.baseUrl,
      model: "m",
      api_key_env: "FAKE_API_KEY",
    };
    const headers = { "x-api-key": "${FAKE_API_KEY}" };
    const units = [
      await runOne(cachedTarget(openaiTarget(chat, env), cache)),
      await runOne(
        cachedTarget(
          httpTarget({ url: `${server.url}/raw`, headers }, env),
          cache,
        ),
      ),
      await runOne(
        cachedTarget(
          httpTarget({ url: `${server.url}/json`, headers, output: "a" }, env),
          cache,
        ),
      ),
    ];
    // Not `***` in the system's place: the case is a target error.
    for (const unit of units) {
      assert.equal(unit.output, null);
      assert.match(
        unit.target?.error ?? "",
        /answered with a secret the config sends .*: the answer is not kept/,
      );
      assertNoKey(JSON.stringify(unit), "the unit");
    }
    // Nothing was kept: the cache was never even made.
    await assert.rejects(Deno.stat(`${dir}/cache`), Deno.errors.NotFound);
    // A judge's reply that holds it is not kept either: an error Score,
    // which keeps the paid call's provenance, never the reply.
    const judged = await llmJudge({ ...chat, model: "judge" }, env).score(
      { example_id: "d#1", unit_id: "d#1", input: "q", output: "a" },
      {},
    );
    assert.ok(!("scores" in judged));
    assert.equal(judged.status, "error");
    assert.match(judged.reason ?? "", /the answer is not kept/);
    assert.equal(judged.provenance?.judge_model, "judge");
    assertNoKey(JSON.stringify(judged), "the judge's error Score");
    // A value too short to be a key is a word an answer may say: kept.
    const hello = (name: string) => name === "TENANT" ? "hello" : undefined;
    const echo = await runOne(
      httpTarget({
        url: `${server.url}/json`,
        headers: { "x-api-key": "${TENANT}" },
        output: "a",
      }, hello),
    );
    assert.equal(echo.output, 'json "hello"');
  });
});

Deno.test("a reply whose model or finish reason echoes a key keeps none of it: not in a unit's target, a judge's provenance or an error", async () => {
  let calls = 0;
  await using server = fakeLlm({
    handler: (r) => {
      const key = (r.headers.authorization ?? "").replace(/^Bearer /, "");
      const usage = { prompt_tokens: 1000, completion_tokens: 10 };
      // Answers in turn: a model that echoes the key beside an answer that
      // does too, then beside a clean one, then a finish reason that echoes
      // it on a reply without text.
      const said = [
        { model: `gw/${key}`, content: `the key is ${key}`, finish: "stop" },
        { model: `gw/${key}`, content: "fine", finish: "stop" },
        { model: "m", content: null, finish: `stop: ${key}` },
      ][calls++ % 3]!;
      return reply.json({
        model: said.model,
        usage,
        choices: [{
          message: { role: "assistant", content: said.content },
          finish_reason: said.finish,
        }],
      });
    },
  });
  const chat = {
    base_url: server.baseUrl,
    model: "m",
    api_key_env: "FAKE_API_KEY",
    cost: { input_per_1m: 1, output_per_1m: 1 },
  };
  for (let i = 0; i < 3; i++) {
    const unit = await runOne(openaiTarget(chat, env));
    assert.equal(unit.output, null, `reply ${i + 1}`);
    assert.match(unit.target?.error ?? "", /the answer is not kept/);
    // What it cost stays: the budget was charged it.
    assert.equal(unit.target?.cost_usd, 0.00101);
    assertNoKey(JSON.stringify(unit), `the unit of reply ${i + 1}`);
  }
  for (let i = 0; i < 3; i++) {
    const judged = await llmJudge({ ...chat, model: "judge" }, env).score(
      { example_id: "d#1", unit_id: "d#1", input: "q", output: "a" },
      {},
    );
    assert.ok(!("scores" in judged));
    assert.equal(judged.status, "error");
    assert.equal(judged.value, null);
    assertNoKey(JSON.stringify(judged), `the judge's Score of reply ${i + 1}`);
  }
});

Deno.test("a key pasted with its line break (a CI secret, a CRLF .env) is hidden as the server got it: fetch sends it trimmed", async () => {
  // fetch strips a header value's leading and trailing whitespace, so the
  // server sees, and echoes, the key without the newline the variable holds.
  const padded = "sk-pasted-SECRET-0042";
  const pastedEnv = (name: string) =>
    name === "FAKE_API_KEY" ? ` ${padded}\r\n` : undefined;
  await using server = fakeLlm({
    handler: (r) => {
      const key = (r.headers.authorization ?? "").replace(/^Bearer /, "") ||
        r.headers["x-api-key"]!;
      if (r.path.endsWith("/chat/completions") && r.path.startsWith("/ok")) {
        return reply.ok(`the key is ${key}`);
      }
      return reply.error(401, JSON.stringify({ error: `bad key ${key}` }));
    },
  });
  const chat = { model: "m", api_key_env: "FAKE_API_KEY", retries: 0 };
  const units = [
    await runOne(
      openaiTarget({ ...chat, base_url: server.baseUrl }, pastedEnv),
    ),
    await runOne(httpTarget({
      url: `${server.url}/answer`,
      headers: { "x-api-key": "${FAKE_API_KEY}" },
    }, pastedEnv)),
    await runOne(
      openaiTarget({ ...chat, base_url: `${server.url}/ok/v1` }, pastedEnv),
    ),
  ];
  assert.match(units[0]!.target?.error ?? "", /answered HTTP 401: /);
  assert.match(units[1]!.target?.error ?? "", /answered HTTP 401: /);
  assert.match(units[2]!.target?.error ?? "", /the answer is not kept/);
  for (const [i, unit] of units.entries()) {
    assert.ok(
      !JSON.stringify(unit).includes("SECRET-0042"),
      `unit ${i}: ${JSON.stringify(unit)}`,
    );
  }
});

Deno.test("urlSecrets and withoutCredentials know a query's credential by its parameter's name only", () => {
  const url =
    "https://h.example/v1/chat?alt=sse&monkey=bar&keyword=x&key=AIza%2Dk1&sig=s%20g";
  assert.deepEqual(urlSecrets(url), ["AIza%2Dk1", "AIza-k1", "s%20g", "s g"]);
  assert.equal(
    withoutCredentials(`failed: ${url}`),
    "failed: https://h.example/v1/chat?alt=sse&monkey=bar&keyword=x&key=***&sig=***",
  );
  assert.deepEqual(urlSecrets("https://h.example/v1?model=m&stream=true"), []);
});

Deno.test("urlSecrets and withoutCredentials know x-api-key's words joined by - or _ or nothing, as a two-word name's", () => {
  const url =
    "https://h.example/v1?x_api_key=Xk9-one1&XApiKey=Xk9-two2&x-api-key=Xk9-three3";
  assert.deepEqual(urlSecrets(url), ["Xk9-one1", "Xk9-two2", "Xk9-three3"]);
  assert.equal(
    withoutCredentials(url),
    "https://h.example/v1?x_api_key=***&XApiKey=***&x-api-key=***",
  );
});

Deno.test("urlSecrets keeps no value a case fills in part, as a placeholder's stand-in makes it", () => {
  // "sk-1" is what the stand-in makes of the case's part: no secret, and
  // hidden it would turn each "sk-1" of a message into "***".
  assert.deepEqual(
    urlSecrets(
      "http://u:pw-1234@127.0.0.1:{{metadata.port}}/?key=sk-{{metadata.k}}&sig=AIzaFixed",
    ),
    ["pw-1234", "pw-1234", "u:pw-1234", "AIzaFixed"],
  );
});

Deno.test("httpTarget hides a signed URL's signature, credential and token, and shows a SAS URL's version", async () => {
  await using server = fakeLlm({
    handler: (r) => reply.error(400, `seen ${r.path}`),
  });
  const query = [
    "sv=2022-11-02",
    "X-Amz-Credential=AKIAEXAMPLE%2F20261207",
    "X-Amz-Signature=f00dfeed01234567",
    "x-amz-security-token=st-0123456789",
    "X-Goog-Signature=0badc0de98765432",
    "refresh_token=rt-0123456789",
  ].join("&");
  const unit = await runOne(httpTarget({ url: `${server.url}/a?${query}` }));
  const error = unit.target?.error ?? "";
  assert.match(error, /answered HTTP 400: seen \/a\?sv=2022-11-02&/);
  assert.match(error, /X-Amz-Signature=\*\*\*/);
  for (
    const secret of [
      "AKIAEXAMPLE",
      "f00dfeed",
      "st-0123456789",
      "0badc0de",
      "rt-0123456789",
    ]
  ) {
    assert.ok(!error.includes(secret), `${secret} in ${error}`);
  }
});

Deno.test("send hides a URL's query key that its caller did not name, as it hides the URL's password", async () => {
  await using server = fakeLlm({
    handler: (r) =>
      reply.error(
        400,
        `no such key: ${new URL(r.path, "http://h").searchParams.get("key")}`,
      ),
  });
  const error = await send(
    { method: "GET", url: `${server.url}/a?key=AIzaUnnamedKey1`, headers: {} },
    { timeoutMs: 10_000, secrets: [] },
  ).then(() => undefined, (error: Error) => error.message);
  assert.equal(
    error,
    `GET ${server.url}/a?key=*** answered HTTP 400: no such key: ***`,
  );
});

Deno.test("send hides the password and the query key of a URL fetch cannot parse", async () => {
  // An http target's config or settings with such a URL are refused before
  // any call; send() is given one by a case's port, or by its other callers.
  const error = await send(
    {
      method: "GET",
      url: "http://someone:hunter2pw@127.0.0.1:99999/a?key=AIzaQueryKey1",
      headers: {},
    },
    { timeoutMs: 10_000, secrets: [] },
  ).then(() => "", (error: Error) => error.message);
  assert.match(error, / cannot be sent: /);
  for (const secret of ["hunter2pw", "AIzaQueryKey1"]) {
    assert.ok(!error.includes(secret), `${secret} in ${error}`);
  }
});

Deno.test("every client's message of a 2xx answer starts with POST <url>, its password and query key hidden", async () => {
  const bodies = [
    reply.malformed("not json"),
    reply.json({ answer: null }),
    reply.json({ choices: [] }),
  ];
  let which = 0;
  await using server = fakeLlm({ handler: () => bodies[which]! });
  const port = new URL(server.url).port;
  const base = `http://someone:hunter2pw@127.0.0.1:${port}`;
  const v1 = `${base}/v1?api-key=AIzaQueryKey1`;
  const unit = {
    example_id: "d#1",
    unit_id: "d#1",
    input: "q",
    output: "o",
    expected: "e",
  };
  for (which = 0; which < bodies.length; which++) {
    const http = await runOne(httpTarget({
      url: `${base}/answer?key=AIzaQueryKey1`,
      output: "answer",
      retries: 0,
    }));
    const openai = await runOne(
      openaiTarget({ base_url: v1, model: "m", retries: 0 }),
    );
    const [judged] = await Array.fromAsync(
      ReadableStream.from([unit]).pipeThrough(scoreUnits([
        llmJudge({ base_url: v1, model: "j", rubric: "ok?", retries: 0 }),
      ])),
    );
    const similar = await semanticSimilarity({
      base_url: v1,
      model: "e",
      retries: 0,
    }).score(unit, {});
    const said = [
      http.target?.error,
      openai.target?.error,
      judged?.reason,
      "reason" in similar ? similar.reason : undefined,
    ];
    for (const message of said) {
      assert.match(
        message ?? "",
        new RegExp(
          `^(scorer error: )?POST http://127\\.0\\.0\\.1:${port}/[a-z0-9/]+\\?(api-)?key=\\*\\*\\* answered `,
        ),
        `${which}: ${message}`,
      );
      for (const secret of ["hunter2pw", "someone", "AIzaQueryKey1"]) {
        assert.ok(!message?.includes(secret), `${which}: ${message}`);
      }
    }
  }
});
