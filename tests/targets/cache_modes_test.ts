// The cache modes (`--cache auto|replay|live|off`, `cache:` in the config)
// over the target and the judge, against a loopback chat completions server
// that counts what it gets: replay must make no request at all.

import assert from "node:assert/strict";
import {
  cachedTarget,
  cacheKey,
  CacheMissError,
  openaiTarget,
  TargetCache,
} from "../../src/targets/mod.ts";
import { cli } from "../_cli.ts";
import { fakeLlm, lastMessage, reply } from "../_fake_llm.ts";
import { withTempDir } from "../_proc.ts";

const KEY_ENV = "EVALPIPE_CACHE_MODES_KEY";

/** Copies a folder, as a clone of the suite's repository would. */
async function copy(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  const { code } = await new Deno.Command("cp", {
    args: ["-a", `${from}/.`, to],
  })
    .output();
  assert.equal(code, 0);
}

function suite(baseUrl: string, extra = ""): string {
  return `dataset: data.jsonl
target:
  type: openai
  base_url: ${baseUrl}
  model: bot
  api_key_env: ${KEY_ENV}
  prompt: "Q: {{input}}"
scorers:
  - type: exact_match
  - type: llm_judge
    base_url: ${baseUrl}
    model: judge
    api_key_env: ${KEY_ENV}
${extra}`;
}

const jsonl = (rows: unknown[]) =>
  rows.map((r) => JSON.stringify(r)).join("\n") + "\n";

interface Line {
  unit_id: string;
  metric: string;
  status: string;
  value: number | null;
  reason?: string;
  diagnostics: Array<{ code: string }>;
}

const lines = (text: string): Line[] =>
  text.trim() === "" ? [] : text.trim().split("\n").map((l) => JSON.parse(l));

/** Answers the target with `A: <prompt>` and the judge with a score. */
function handler(version = "") {
  return (request: Parameters<typeof lastMessage>[0]) => {
    const model = (request.json as { model?: string }).model;
    return model === "judge"
      ? reply.ok('{"score": 0.8, "reason": "fine"}')
      : reply.ok(`A${version}: ${lastMessage(request)}`);
  };
}

Deno.test("run --cache replay makes no request: hits answer, a miss blocks its unit (cache.miss), no API key needed", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({ handler: handler() });
    await Deno.writeTextFile(`${dir}/suite.yaml`, suite(server.baseUrl));
    const cases = [
      { input: "one", expected: "A: Q: one" },
      { input: "two", expected: "A: Q: two" },
    ];
    await Deno.writeTextFile(`${dir}/data.jsonl`, jsonl(cases));
    const recorded = await cli(["run", "suite.yaml"], dir, {
      [KEY_ENV]: "sk-live",
    });
    assert.equal(recorded.code, 0, recorded.stderr);
    assert.equal(server.count, 4); // two target calls, two judge calls

    // A new case, no key, no network: two hits, one miss.
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      jsonl([...cases, { input: "three", expected: "A: Q: three" }]),
    );
    const replayed = await cli(["run", "suite.yaml", "--cache", "replay"], dir);
    assert.equal(server.count, 4, "replay sent a request");
    assert.equal(replayed.code, 0, replayed.stderr);
    assert.match(
      replayed.stderr,
      /target cache: 2 hits, 0 calls, 1 not in the cache \(replay\)/,
    );
    assert.match(replayed.stderr, /judge cache: 2 hits, 0 calls/);
    assert.match(replayed.stderr, /1 call was not in the cache/);
    const scores = lines(replayed.stdout);
    assert.deepEqual(
      scores.map((s) => [s.unit_id, s.metric, s.status, s.value]),
      [
        ["data.jsonl#1", "exact_match", "scored", 1],
        ["data.jsonl#1", "llm_judge", "scored", 0.8],
        ["data.jsonl#2", "exact_match", "scored", 1],
        ["data.jsonl#2", "llm_judge", "scored", 0.8],
        ["data.jsonl#3", "exact_match", "blocked", null],
        ["data.jsonl#3", "llm_judge", "blocked", null],
      ],
    );
    const miss = scores[4]!;
    assert.deepEqual(miss.diagnostics.map((d) => d.code), ["cache.miss"]);
    assert.match(
      miss.reason ?? "",
      /^target error: No cached answer for this request \(key [0-9a-f]{16}\), and the cache mode "replay" makes no call$/,
    );
  });
});

Deno.test("run --cache replay answers from a cache committed with the suite and copied to another machine", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({ handler: handler() });
    const home = `${dir}/here/suite`;
    await Deno.mkdir(home, { recursive: true });
    await Deno.writeTextFile(`${home}/suite.yaml`, suite(server.baseUrl));
    await Deno.writeTextFile(
      `${home}/data.jsonl`,
      jsonl([{ input: "one", expected: "A: Q: one" }, { input: "two" }]),
    );
    const recorded = await cli(["run", "suite.yaml"], home, {
      [KEY_ENV]: "sk-of-the-first-machine",
    });
    assert.equal(recorded.code, 0, recorded.stderr);
    const calls = server.count;

    // Elsewhere: another path, another key, run from another folder.
    const there = `${dir}/elsewhere/deeper/suite`;
    await copy(home, there);
    const replayed = await cli(
      ["run", "deeper/suite/suite.yaml", "--cache", "replay"],
      `${dir}/elsewhere`,
      { [KEY_ENV]: "sk-of-another-machine" },
    );
    assert.equal(replayed.code, 0, replayed.stderr);
    assert.equal(server.count, calls, "replay sent a request");
    assert.match(replayed.stderr, /target cache: 2 hits, 0 calls/);
    assert.deepEqual(
      lines(replayed.stdout).map((s) => [s.metric, s.status]),
      lines(recorded.stdout).map((s) => [s.metric, s.status]),
    );
  });
});

Deno.test("run --cache live calls again and replaces what is stored; --cache off neither reads nor writes", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({ handler: handler() });
    await Deno.writeTextFile(`${dir}/suite.yaml`, suite(server.baseUrl));
    await Deno.writeTextFile(`${dir}/data.jsonl`, jsonl([{ input: "one" }]));
    const env = { [KEY_ENV]: "sk" };
    const off = await cli(["run", "suite.yaml", "--cache", "off"], dir, env);
    assert.equal(off.code, 0, off.stderr);
    assert.equal(server.count, 2);
    assert.doesNotMatch(off.stderr, /cache:/);
    await assert.rejects(Deno.stat(`${dir}/.evalpipe`), Deno.errors.NotFound);

    assert.equal((await cli(["run", "suite.yaml"], dir, env)).code, 0);
    assert.equal(server.count, 4);
    server.handler = handler("2");
    const live = await cli(
      ["run", "suite.yaml", "--cache", "live", "--units", "u.ndjson"],
      dir,
      env,
    );
    assert.equal(live.code, 0, live.stderr);
    assert.equal(server.count, 6, "live calls the target and the judge again");
    assert.match(live.stderr, /target cache: 0 hits, 1 call/);
    // What a replay finds now is the live answer.
    const replayed = await cli(
      ["run", "suite.yaml", "--cache", "replay", "--units", "r.ndjson"],
      dir,
    );
    assert.equal(replayed.code, 0, replayed.stderr);
    assert.equal(server.count, 6);
    const unit = JSON.parse(await Deno.readTextFile(`${dir}/r.ndjson`));
    assert.equal(unit.output, "A2: Q: one");
    assert.equal(unit.target.cached, true);
  });
});

Deno.test("the config's cache: sets the mode, and --cache overrides it", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({ handler: handler() });
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      suite(server.baseUrl, "cache: replay\n"),
    );
    await Deno.writeTextFile(`${dir}/data.jsonl`, jsonl([{ input: "one" }]));
    const replayed = await cli(["run", "suite.yaml"], dir);
    // Nothing measured fails the run's gates.
    assert.equal(replayed.code, 1, replayed.stderr);
    assert.equal(server.count, 0);
    assert.match(replayed.stderr, /1 not in the cache \(replay\)/);
    const auto = await cli(["run", "suite.yaml", "--cache", "auto"], dir, {
      [KEY_ENV]: "sk",
    });
    assert.equal(auto.code, 0, auto.stderr);
    assert.equal(server.count, 2);
    // Without replay, a key that is not set is a config error, as before.
    const unset = await cli(["run", "suite.yaml", "--cache", "live"], dir);
    assert.equal(unset.code, 2);
    assert.match(unset.stderr, new RegExp(`${KEY_ENV} is not set`));
    const bad = await cli(["run", "suite.yaml", "--cache", "sometimes"], dir);
    assert.equal(bad.code, 2);
    assert.match(
      bad.stderr,
      /--cache takes one of auto, replay, live, off, not "sometimes"/,
    );
  });
});

Deno.test("a judge whose answer a replay lacks gives an error Score coded cache.miss, the target's answer still replayed", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({ handler: handler() });
    await Deno.writeTextFile(`${dir}/suite.yaml`, suite(server.baseUrl));
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      jsonl([{ input: "one", expected: "A: Q: one" }]),
    );
    assert.equal(
      (await cli(["run", "suite.yaml"], dir, { [KEY_ENV]: "sk" })).code,
      0,
    );
    // A new rubric is a new judge request.
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      suite(server.baseUrl) + '    rubric: "Is {{output}} right?"\n',
    );
    const replayed = await cli(["run", "suite.yaml", "--cache", "replay"], dir);
    assert.equal(server.count, 2);
    const [match, judge] = lines(replayed.stdout);
    assert.equal(match?.status, "scored");
    assert.equal(judge?.status, "error");
    assert.deepEqual(judge?.diagnostics.map((d) => d.code), ["cache.miss"]);
    assert.match(judge?.reason ?? "", /^scorer error: No cached answer/);
  });
});

Deno.test("the RAG judges go through the cache too: a replay asks the model nothing", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({
      handler: () =>
        reply.ok(
          '{"claims": [{"claim": "Paris is the capital", "supported": true}]}',
        ),
    });
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: data.jsonl
target: { type: replay }
scorers:
  - { type: faithfulness, base_url: "${server.baseUrl}", model: judge, api_key_env: ${KEY_ENV} }
`,
    );
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      jsonl([{
        input: "capital?",
        output: "Paris is the capital.",
        context: ["Paris is the capital of France."],
      }]),
    );
    const recorded = await cli(["run", "suite.yaml"], dir, { [KEY_ENV]: "sk" });
    assert.equal(recorded.code, 0, recorded.stderr);
    assert.equal(server.count, 1);
    const replayed = await cli(["run", "suite.yaml", "--cache", "replay"], dir);
    assert.equal(replayed.code, 0, replayed.stderr);
    assert.equal(server.count, 1, "replay sent a request");
    assert.match(replayed.stderr, /judge cache: 1 hit, 0 calls/);
    assert.deepEqual(
      lines(replayed.stdout).map((s) => [s.metric, s.status, s.value]),
      lines(recorded.stdout).map((s) => [s.metric, s.status, s.value]),
    );
  });
});

Deno.test("an http target replays with the ${NAME} of its headers unset, sending nothing", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({ handler: () => reply.ok("pong") });
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: data.jsonl
target:
  type: http
  url: ${server.url}/ask
  headers: { authorization: "Bearer \${EVALPIPE_HTTP_TOKEN}" }
  output: choices.0.message.content
scorers: [{ type: exact_match, value: pong }]
`,
    );
    await Deno.writeTextFile(`${dir}/data.jsonl`, jsonl([{ input: "ping" }]));
    const recorded = await cli(["run", "suite.yaml"], dir, {
      EVALPIPE_HTTP_TOKEN: "tok",
    });
    assert.equal(recorded.code, 0, recorded.stderr);
    assert.equal(server.count, 1);
    const unset = await cli(["run", "suite.yaml"], dir);
    assert.equal(unset.code, 2);
    assert.match(unset.stderr, /EVALPIPE_HTTP_TOKEN is not set/);
    const replayed = await cli(["run", "suite.yaml", "--cache", "replay"], dir);
    assert.equal(replayed.code, 0, replayed.stderr);
    assert.equal(server.count, 1);
    assert.equal(lines(replayed.stdout)[0]?.value, 1);
  });
});

Deno.test("cacheKey keys on nothing of the machine: not the key's value, a URL's password, the prices or the flow settings", () => {
  const settings = {
    base_url: "http://127.0.0.1:9/v1",
    model: "m",
    api_key_env: "K",
    temperature: 0,
  };
  const key = (
    s: Record<string, unknown>,
    env: Record<string, string> = { K: "one" },
  ) =>
    cacheKey(
      openaiTarget({ ...settings, ...s }, (n) => env[n]),
      { input: "q" },
      1,
    );
  const base = key({});
  assert.equal(key({}, { K: "another" }), base);
  assert.equal(key({ cost: { input_per_1m: 1, output_per_1m: 2 } }), base);
  assert.equal(key({ timeout: 5, retries: 1, rate_limit: 60 }), base);
  // A password is Basic auth, and refused beside a key sent as Bearer.
  assert.equal(
    key({ base_url: "http://u:pw1@127.0.0.1:9/v1", api_key_env: undefined }),
    key({ base_url: "http://u:pw2@127.0.0.1:9/v1", api_key_env: undefined }),
  );
  assert.notEqual(key({ temperature: 1 }), base);
  assert.notEqual(key({ model: "n" }), base);
});

Deno.test("TargetCache in replay mode throws CacheMissError on a miss and writes nothing; off reads nothing", async () => {
  await withTempDir(async (dir) => {
    const auto = new TargetCache(dir);
    const key = "a".repeat(64);
    await auto.set(key, { output: "stored" });
    const replay = new TargetCache(dir, { mode: "replay" });
    assert.equal(replay.lookup(key)?.output, "stored");
    assert.throws(() => replay.lookup("b".repeat(64)), CacheMissError);
    assert.deepEqual([replay.hits, replay.misses, replay.missing], [1, 0, 1]);
    await replay.set("c".repeat(64), { output: "new" });
    assert.equal(new TargetCache(dir).peek("c".repeat(64)), undefined);
    const off = new TargetCache(dir, { mode: "off" });
    assert.equal(off.lookup(key), undefined);
    const live = new TargetCache(dir, { mode: "live" });
    assert.equal(live.lookup(key), undefined);
    await live.set(key, { output: "replaced" });
    assert.equal(new TargetCache(dir).peek(key)?.output, "replaced");
  });
});

Deno.test('an openai target\'s answer cached as "" before refusals were read (e989e42) is asked again, in replay a miss; other old answers still replay', async () => {
  const REFUSAL = "I'm sorry, I cannot assist with that request.";
  await using server = fakeLlm({
    handler: (request) =>
      lastMessage(request) === "refused"
        ? reply.json({
          model: "bot",
          choices: [{
            index: 0,
            message: { role: "assistant", content: "", refusal: REFUSAL },
            finish_reason: "stop",
          }],
          usage: { prompt_tokens: 9, completion_tokens: 11, total_tokens: 20 },
        })
        : reply.ok("fresh"),
  });
  await withTempDir(async (dir) => {
    const settings = { model: "bot", base_url: server.baseUrl };
    const target = openaiTarget(settings);
    const refused = { input: "refused" };
    const answered = { input: "answered" };
    // As the code before e989e42 wrote them: the refusal read as "", and
    // an answer with text; no reading stored beside either.
    const old = (output: string) => ({
      output,
      info: {
        model: "bot",
        usage: { prompt_tokens: 9, completion_tokens: 11, total_tokens: 20 },
        finish_reason: "stop",
        attempts: 1,
      },
    });
    await Deno.writeTextFile(
      `${dir}/pack-20261206T120000000Z-000000-0000abcd.ndjson`,
      [
        { key: cacheKey(target, refused, 1), result: old("") },
        { key: cacheKey(target, answered, 1), result: old("stored") },
      ].map((entry) => JSON.stringify(entry) + "\n").join(""),
    );

    const replaying = cachedTarget(
      target,
      new TargetCache(dir, { mode: "replay" }),
    );
    assert.equal((await replaying.call(answered, {})).output, "stored");
    await assert.rejects(
      async () => await replaying.call(refused, {}),
      (error: unknown) =>
        error instanceof CacheMissError &&
        /^The cached answer for this request \(key [0-9a-f]{16}\) was stored before evalpipe read replies as it does now \(a refusal may have been kept as ""\), and the cache mode "replay" makes no call: run with --cache auto to ask again$/
          .test(error.message),
    );
    assert.equal(server.count, 0);

    const cache = new TargetCache(dir);
    const cached = cachedTarget(target, cache);
    const live = await cached.call(refused, {});
    assert.equal(live.output, REFUSAL);
    assert.equal(live.info?.refusal, true);
    assert.equal((await cached.call(answered, {})).output, "stored");
    assert.equal(server.count, 1);
    // Kept with the reading: the next run replays the refusal.
    const again = await cachedTarget(
      target,
      new TargetCache(dir, {
        mode: "replay",
      }),
    ).call(refused, {});
    assert.equal(again.output, REFUSAL);
    assert.equal(again.info?.refusal, true);
    assert.equal(again.info?.cached, true);
    assert.equal(server.count, 1);
  });
});

Deno.test('an openai target\'s answer cached as whitespace before refusals were read (e989e42) is a miss, as "" is', async () => {
  // Since e989e42 a refusal beside a content of only whitespace is the
  // refusal; the code before read it as that whitespace, and cached it.
  await using server = fakeLlm({ handler: () => reply.ok("fresh") });
  await withTempDir(async (dir) => {
    const target = openaiTarget({ model: "bot", base_url: server.baseUrl });
    const refused = { input: "refused" };
    await Deno.writeTextFile(
      `${dir}/pack-20261206T120000000Z-000000-0000abcd.ndjson`,
      JSON.stringify({
        key: cacheKey(target, refused, 1),
        result: { output: "\n", info: { model: "bot", attempts: 1 } },
      }) + "\n",
    );
    await assert.rejects(
      async () =>
        await cachedTarget(target, new TargetCache(dir, { mode: "replay" }))
          .call(refused, {}),
      (error: unknown) =>
        error instanceof CacheMissError &&
        /was stored before evalpipe read replies as it does now/.test(
          error.message,
        ),
    );
    assert.equal(server.count, 0);
  });
});

Deno.test('run --cache auto says how many stored answers it did not reuse (an openai answer cached as "" before refusals were read) and asked again', async () => {
  await using server = fakeLlm({
    handler: (request) => reply.ok(`A: ${lastMessage(request)}`),
  });
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: data.jsonl
target: { type: openai, base_url: "${server.baseUrl}", model: bot }
scorers: [{ type: exact_match }]
`,
    );
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      jsonl([{ input: "one" }, { input: "two" }]),
    );
    const first = await cli(["run", "suite.yaml"], dir);
    assert.equal(first.code, 0, first.stderr);
    // One answer as a version before e989e42 kept it: "", no reading.
    const cacheDir = `${dir}/.evalpipe/cache`;
    for (const entry of Deno.readDirSync(cacheDir)) {
      const path = `${cacheDir}/${entry.name}`;
      Deno.writeTextFileSync(
        path,
        Deno.readTextFileSync(path).replace('"output":"A: one"', '"output":""')
          .replaceAll(',"reading":1', ""),
      );
    }
    const again = await cli(["run", "suite.yaml"], dir);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(server.count, 3);
    assert.match(
      again.stderr,
      /^target cache: 1 hit, 1 call \(1 stored answer not reused: kept by a version that read replies differently\); --cache live calls the model again for them$/m,
    );
  });
});

Deno.test("run's cache lines with hits say how to ask again, and --cache live does", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({ handler: handler() });
    await Deno.writeTextFile(`${dir}/suite.yaml`, suite(server.baseUrl));
    await Deno.writeTextFile(`${dir}/data.jsonl`, jsonl([{ input: "one" }]));
    const env = { [KEY_ENV]: "sk" };
    const first = await cli(["run", "suite.yaml"], dir, env);
    assert.equal(first.code, 0, first.stderr);
    // Nothing was reused: nothing to ask again.
    assert.match(first.stderr, /^target cache: 0 hits, 1 call$/m);
    const again = await cli(["run", "suite.yaml"], dir, env);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(server.count, 2);
    for (const name of ["target", "judge"]) {
      assert.match(
        again.stderr,
        new RegExp(
          `^${name} cache: 1 hit, 0 calls; --cache live calls the model again for them$`,
          "m",
        ),
      );
    }
    // The advice holds: live asks the target and the judge.
    const live = await cli(["run", "suite.yaml", "--cache", "live"], dir, env);
    assert.equal(live.code, 0, live.stderr);
    assert.equal(server.count, 4);
    assert.match(live.stderr, /^target cache: 0 hits, 1 call$/m);
  });
});
