// `headers` on the `openai` target and the judges, as `semantic_similarity`
// takes them: sent to a loopback server that records what arrived, their
// `${NAME}` values secrets kept out of every file a run writes, and the
// headers evalpipe sets itself refused at their line.

import assert from "node:assert/strict";
import { join } from "node:path";
import { cli } from "../_cli.ts";
import { fakeLlm, lastMessage, reply } from "../_fake_llm.ts";
import { withTempDir } from "../_proc.ts";
import {
  checkConfigText,
  ConfigError,
  llmJudge,
  openaiTarget,
  semanticSimilarity,
} from "../../mod.ts";

const GATEWAY = "pk-gateway-secret-4711";
const TEAM = "team-judge-secret-0815";
const KEY = "sk-openai-secret-1234";

/** Every file under `dir`, its path and its text. */
async function filesUnder(dir: string): Promise<[string, string][]> {
  const found: [string, string][] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) found.push(...await filesUnder(path));
    else if (entry.isFile) found.push([path, await Deno.readTextFile(path)]);
  }
  return found;
}

Deno.test("an openai target and its judges send the config's headers, and no header secret reaches a file the run writes", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({
      handler(request) {
        const model = (request.json as { model?: string }).model;
        if (model === "judge") {
          return reply.ok(
            lastMessage(request).includes('"claims"')
              ? '{"claims": [{"claim": "A: q1", "supported": true}]}'
              : '{"score": 1, "reason": "ok"}',
          );
        }
        // A gateway that echoes what it was sent in its error.
        if (lastMessage(request).includes("LEAK")) {
          return reply.error(
            401,
            `bad gateway key ${request.headers["x-portkey-api-key"]}`,
          );
        }
        return reply.ok(`A: ${lastMessage(request)}`);
      },
    });
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      '{"input": "q1", "expected": "A: q1", "context": ["A: q1"]}\n{"input": "LEAK", "expected": "x"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: data.jsonl
target:
  type: openai
  base_url: ${server.baseUrl}
  model: bot
  api_key_env: EVALPIPE_TEST_KEY
  headers:
    X-Portkey-Api-Key: "\${EVALPIPE_TEST_GATEWAY}"
    OpenAI-Organization: org-test
scorers:
  - type: exact_match
  - type: llm_judge
    base_url: ${server.baseUrl}
    model: judge
    headers: { x-judge-team: "team \${EVALPIPE_TEST_TEAM}" }
  - type: faithfulness
    base_url: ${server.baseUrl}
    model: judge
    headers: { x-judge-team: "team \${EVALPIPE_TEST_TEAM}" }
concurrency: 1
`,
    );
    const env = {
      EVALPIPE_TEST_KEY: KEY,
      EVALPIPE_TEST_GATEWAY: GATEWAY,
      EVALPIPE_TEST_TEAM: TEAM,
    };
    const checked = await cli(["validate", "suite.yaml"], dir, env);
    assert.equal(checked.code, 0, checked.stderr);
    const out = await cli(
      [
        "run",
        "suite.yaml",
        "--out",
        "scores.ndjson",
        "--record",
        "run.json",
        "--units",
        "units.ndjson",
      ],
      dir,
      env,
    );
    assert.equal(out.code, 0, out.stderr);
    const bot = server.requests.filter((r) =>
      (r.json as { model?: string }).model === "bot"
    );
    const judge = server.requests.filter((r) =>
      (r.json as { model?: string }).model === "judge"
    );
    assert.ok(bot.length >= 2 && judge.length === 2, `${server.count}`);
    for (const r of bot) {
      assert.equal(r.headers["x-portkey-api-key"], GATEWAY);
      assert.equal(r.headers["openai-organization"], "org-test");
      assert.equal(r.headers.authorization, `Bearer ${KEY}`);
      assert.equal(r.headers["content-type"], "application/json");
    }
    for (const r of judge) {
      assert.equal(r.headers["x-judge-team"], `team ${TEAM}`);
    }
    // The echoed key is hidden in the target error.
    const units = (await Deno.readTextFile(`${dir}/units.ndjson`)).trim()
      .split("\n").map((l) => JSON.parse(l));
    assert.match(units[1].target.error, /HTTP 401: bad gateway key \*\*\*/);
    // No secret in any file the run wrote, nor on its stdout or stderr.
    const files = await filesUnder(dir);
    assert.ok(files.some(([p]) => p.includes(".evalpipe/cache")));
    for (
      const [path, text] of [...files, ["stdout", out.stdout], [
        "stderr",
        out.stderr,
      ]]
    ) {
      for (const secret of [GATEWAY, TEAM, KEY]) {
        assert.ok(!text!.includes(secret), `${path} holds ${secret}`);
      }
    }
    // The record keeps the headers as written.
    const record = JSON.parse(await Deno.readTextFile(`${dir}/run.json`));
    assert.equal(
      record.config.target.headers["X-Portkey-Api-Key"],
      "${EVALPIPE_TEST_GATEWAY}",
    );

    // Replayed, it needs none of the variables and calls nothing.
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      '{"input": "q1", "expected": "A: q1", "context": ["A: q1"]}\n',
    );
    const before = server.count;
    const replayed = await cli(
      ["run", "suite.yaml", "--cache", "replay", "--out", "again.ndjson"],
      dir,
    );
    assert.equal(replayed.code, 0, replayed.stderr);
    assert.equal(server.count, before);
    const again = (await Deno.readTextFile(`${dir}/again.ndjson`)).trim()
      .split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(
      again.map((s) => [s.metric, s.status]),
      [
        ["exact_match", "scored"],
        ["llm_judge", "scored"],
        ["faithfulness", "scored"],
      ],
    );
  });
});

Deno.test("a judge's headers key its cache and its evaluator_version as written, never by a secret's value", async () => {
  await using server = fakeLlm({ handler: () => reply.ok('{"score": 1}') });
  const settings = { model: "j", base_url: server.baseUrl };
  const unit = { example_id: "d#1", unit_id: "d#1", input: "q", output: "a" };
  const plain = llmJudge(settings);
  const one = llmJudge({ ...settings, headers: { "x-route": "${ROUTE}" } }, (
    name,
  ) => name === "ROUTE" ? "eu-secret-1" : undefined);
  const two = llmJudge({ ...settings, headers: { "x-route": "${ROUTE}" } }, (
    name,
  ) => name === "ROUTE" ? "us-secret-2" : undefined);
  // A judge without headers keeps its version and its cache keys.
  assert.equal(plain.version, llmJudge({ ...settings, headers: {} }).version);
  assert.notEqual(one.version, plain.version);
  assert.notEqual(one.cacheKey!(unit), plain.cacheKey!(unit));
  // The value is no part of either.
  assert.equal(one.version, two.version);
  assert.equal(one.cacheKey!(unit), two.cacheKey!(unit));
  // An openai target's cache identity holds the headers as written.
  const target = openaiTarget(
    { ...settings, headers: { "x-route": "${ROUTE}" } },
    () => "eu-secret-1",
  );
  const identity = JSON.stringify(target.identity);
  assert.ok(identity.includes("${ROUTE}") && !identity.includes("secret"));
});

Deno.test("headers evalpipe sets itself are refused at their line, and as a script builds a target or a judge", async () => {
  const suite = (target: string, scorer = "{ type: exact_match }") =>
    `dataset: d.jsonl\ntarget:\n${target}\nscorers:\n  - ${scorer}\n`;
  const refused = async (text: string, message: RegExp) => {
    const error = await checkConfigText(text, "suite.yaml").then(
      () => undefined,
      (e) => e,
    );
    assert.ok(error instanceof ConfigError, `accepted:\n${text}`);
    assert.match(error.message, message);
  };
  await refused(
    suite(
      "  type: openai\n  model: m\n  headers:\n    Content-Type: text/plain",
    ),
    /line 6: "target\.headers\.Content-Type" is set by evalpipe: the body it sends is JSON/,
  );
  await refused(
    suite(
      "  type: openai\n  model: m\n  api_key_env: KEY\n  headers:\n    Authorization: Bearer ${OTHER}",
    ),
    /line 7: "target\.headers\.Authorization" would send a second key: "api_key_env" sends its variable in the authorization header/,
  );
  // Azure's key goes in api-key: that header is the one refused there.
  const azure =
    "  type: openai\n  model: m\n  base_url: https://r.openai.azure.com/openai/deployments/d?api-version=2024-10-21\n  api_key_env: KEY\n";
  await refused(
    suite(`${azure}  headers: { api-key: "\${OTHER}" }`),
    /"target\.headers\.api-key" would send a second key/,
  );
  await checkConfigText(
    suite(`${azure}  headers: { authorization: "Bearer \${APIM}" }`),
    "suite.yaml",
  );
  // Without api_key_env, authorization is how a gateway's token is sent.
  await checkConfigText(
    suite(
      '  type: openai\n  model: m\n  headers: { authorization: "Bearer ${GATEWAY_TOKEN}" }',
    ),
    "suite.yaml",
  );
  await refused(
    suite(
      "  { type: replay }",
      '{ type: llm_judge, model: m, headers: { x-case: "{{input}}" } }',
    ),
    /"scorers\[0\]\.headers\.x-case" has \{\{input\}\}, which evalpipe would send as written: a header value reads \$\{NAME\}/,
  );
  await refused(
    suite(
      "  { type: replay }",
      "{ type: semantic_similarity, model: e, api_key_env: KEY, headers: { authorization: x } }",
    ),
    /"scorers\[0\]\.headers\.authorization" would send a second key/,
  );
  // A name fetch would refuse at every call, and one given twice.
  await refused(
    suite('  type: openai\n  model: m\n  headers: { "x team": a }'),
    /"target\.headers\.x team" is no header name/,
  );
  await refused(
    suite("  type: openai\n  model: m\n  headers: { X-Team: a, x-team: b }"),
    /"target\.headers\.x-team" is given twice: header names are the same in any case/,
  );
  // JSON, which evalpipe sends anyway, is no conflict.
  await checkConfigText(
    suite(
      "  { type: replay }",
      '{ type: semantic_similarity, model: e, headers: { Content-Type: "application/json; charset=utf-8" } }',
    ),
    "suite.yaml",
  );
  // A script gets the same as a TypeError.
  assert.throws(
    () =>
      openaiTarget({ model: "m", headers: { "content-type": "text/plain" } }),
    {
      name: "TypeError",
      message: /^openaiTarget's "headers\.content-type" is set by evalpipe/,
    },
  );
  assert.throws(
    () =>
      llmJudge(
        { model: "m", api_key_env: "K", headers: { authorization: "x" } },
        () => "k",
      ),
    { name: "TypeError", message: /^llmJudge's "headers\.authorization"/ },
  );
  assert.throws(
    () => semanticSimilarity({ model: "e", headers: { "x-a": "{{output}}" } }),
    { name: "TypeError", message: /^semanticSimilarity's "headers\.x-a"/ },
  );
});

Deno.test("a header variable that is not set waits for a call under replay, for a judge and semantic_similarity alike", async () => {
  await using server = fakeLlm({ handler: () => reply.ok('{"score": 1}') });
  const unit = {
    example_id: "d#1",
    unit_id: "d#1",
    input: "q",
    output: "a",
    expected: "a",
  };
  const headers = { "x-team": "${EVALPIPE_TEST_UNSET_HEADER}" };
  const unset = () => undefined;
  assert.throws(
    () => llmJudge({ model: "j", base_url: server.baseUrl, headers }, unset),
    { name: "TemplateError", message: /EVALPIPE_TEST_UNSET_HEADER is not set/ },
  );
  assert.throws(
    () =>
      semanticSimilarity({ model: "e", base_url: server.baseUrl, headers }, {
        env: unset,
      }),
    { name: "TemplateError", message: /EVALPIPE_TEST_UNSET_HEADER is not set/ },
  );
  // A replayed run builds them; a call that would need the header fails alone.
  const judge = llmJudge(
    { model: "j", base_url: server.baseUrl, headers },
    unset,
    undefined,
    { optionalKey: true },
  );
  const similar = semanticSimilarity(
    { model: "e", base_url: server.baseUrl, headers },
    { env: unset, optionalKey: true },
  );
  const judged = await Promise.resolve(judge.score(unit, {})).then(
    () => undefined,
    (error: Error) => error.message,
  );
  assert.match(judged ?? "", /EVALPIPE_TEST_UNSET_HEADER is not set/);
  const s = await similar.score(unit, {});
  assert.ok(!("scores" in s));
  assert.equal(s.status, "error");
  assert.match(s.reason ?? "", /EVALPIPE_TEST_UNSET_HEADER is not set/);
  assert.equal(server.count, 0);
});
