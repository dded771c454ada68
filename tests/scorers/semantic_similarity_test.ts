// semantic_similarity against a loopback server speaking the embeddings API,
// with vectors chosen so that each cosine is known by hand; its flow control,
// secrets and failures; and its embeddings kept in the run's cache.

import assert from "node:assert/strict";
import {
  embeddingInputs,
  embeddings,
  fakeLlm,
  reply,
  slotsBroken,
} from "../_fake_llm.ts";
import { withTempDir } from "../_proc.ts";
import { cli } from "../_cli.ts";
import {
  ConfigError,
  runSuite,
  type Score,
  semanticSimilarity,
  type Unit,
} from "../../mod.ts";

// cos([3,4,0], [4,3,0]) = 24 / (5·5) = 0.96
// cos([1,0,0], [1,1,0]) = 1 / √2
// cos([1,0,0], [-1,0,0]) = -1
const VECTORS: Record<string, number[]> = {
  "It is four.": [3, 4, 0],
  "Four.": [4, 3, 0],
  "yes": [1, 0, 0],
  "maybe": [1, 1, 0],
  "no": [-1, 0, 0],
  "nothing": [0, 0, 0],
};
const vectorOf = (text: string) => {
  const v = VECTORS[text];
  if (v === undefined) throw new Error(`no vector for ${JSON.stringify(text)}`);
  return v;
};

function unit(output: string, expected?: unknown): Unit {
  return {
    example_id: "d#1",
    unit_id: "d#1",
    input: "q",
    output,
    ...(expected !== undefined ? { expected } : {}),
  };
}

async function scoreOf(
  scorer: ReturnType<typeof semanticSimilarity>,
  u: Unit,
): Promise<Score> {
  const s = await scorer.score(u, {});
  assert.ok(!("scores" in s));
  return s;
}

Deno.test("semanticSimilarity is the cosine of the two embeddings, known by hand", async () => {
  await using server = fakeLlm({ handler: embeddings(vectorOf) });
  const scorer = semanticSimilarity({
    base_url: server.baseUrl,
    model: "embed-small",
    threshold: 0.9,
  });
  const a = await scoreOf(scorer, unit("It is four.", "Four."));
  assert.equal(a.value, 0.96);
  assert.equal(a.passed, true);
  assert.equal(a.reason, "cosine similarity 0.960 (threshold 0.9)");
  const b = await scoreOf(scorer, unit(" yes\n", "maybe"));
  assert.ok(Math.abs(b.value! - 1 / Math.SQRT2) < 1e-12, String(b.value));
  assert.equal(b.passed, false);
  const c = await scoreOf(scorer, unit("yes", "no"));
  assert.equal(c.value, -1);
  assert.equal(c.status, "scored");
  assert.equal(c.validity, "valid");
  assert.deepEqual(scorer.range, [-1, 1]);
  // The best of a list of expected texts.
  const d = await scoreOf(scorer, unit("yes", ["no", "maybe"]));
  assert.ok(Math.abs(d.value! - 1 / Math.SQRT2) < 1e-12);
  // What went out: POST {base_url}/embeddings, the model, one text each.
  const first = server.requests[0]!;
  assert.equal(first.method, "POST");
  assert.equal(first.path, "/v1/embeddings");
  assert.deepEqual(first.json, {
    model: "embed-small",
    input: ["It is four."],
  });
  assert.equal(a.provenance?.embedding_model, "embed-small");
});

Deno.test("semanticSimilarity without expected is non_evaluable, an empty output 0, and neither asks the endpoint", async () => {
  await using server = fakeLlm({ handler: embeddings(vectorOf) });
  const scorer = semanticSimilarity({ base_url: server.baseUrl, model: "e" });
  for (const expected of [undefined, null, "  ", []]) {
    const s = await scoreOf(scorer, unit("yes", expected));
    assert.equal(s.status, "non_evaluable", JSON.stringify(expected));
    assert.equal(s.value, null);
    assert.ok(s.reason?.startsWith("not applicable: "));
  }
  const empty = await scoreOf(scorer, unit(" \n", "yes"));
  assert.equal(empty.value, 0);
  assert.equal(empty.passed, false);
  assert.equal(empty.reason, "the output is empty");
  assert.equal(server.count, 0);
});

Deno.test("semanticSimilarity: an endpoint that fails is an error Score with embedding.request_failed, never 0", async () => {
  await using server = fakeLlm({ handler: () => reply.error(500) });
  const scorer = semanticSimilarity({
    base_url: server.baseUrl,
    model: "e",
    retries: 1,
    retry_delay: 0.01,
  });
  const s = await scoreOf(scorer, unit("yes", "maybe"));
  assert.equal(s.status, "error");
  assert.equal(s.validity, "not_measured");
  assert.equal(s.value, null);
  assert.equal(s.passed, false);
  assert.match(
    s.reason!,
    /^scorer error: POST .*\/v1\/embeddings answered HTTP 500/,
  );
  assert.match(s.reason!, /after 2 attempts/);
  assert.equal(s.diagnostics[0]?.code, "embedding.request_failed");
  assert.equal(s.diagnostics[0]?.severity, "error");
  // Both texts were tried twice: a first attempt and one retry each.
  assert.equal(server.count, 4);
});

Deno.test("semanticSimilarity: an answer without usable vectors is embedding.invalid_answer, not retried", async () => {
  for (
    const [bad, why] of [
      [
        reply.json({ data: [] }),
        /^scorer error: POST \S+\/embeddings answered without 1 embedding in "data"/,
      ],
      [
        reply.malformed("{not json"),
        /^scorer error: POST \S+\/embeddings answered with invalid JSON/,
      ],
      [
        reply.json({ data: [{ index: 0, embedding: ["a"] }] }),
        /without a list of numbers in "data\[0\]\.embedding"/,
      ],
    ] as const
  ) {
    await using server = fakeLlm({ handler: () => bad });
    const scorer = semanticSimilarity({ base_url: server.baseUrl, model: "e" });
    const s = await scoreOf(scorer, unit("yes", "yes"));
    assert.equal(s.status, "error");
    assert.equal(s.diagnostics[0]?.code, "embedding.invalid_answer");
    assert.match(s.reason!, why);
    assert.equal(server.count, 1); // one text, one request, no retry
  }
  // Vectors of different lengths, and a zero vector, cannot be compared.
  await using server = fakeLlm({
    handler: embeddings((t) => t === "yes" ? [1, 0] : vectorOf(t)),
  });
  const scorer = semanticSimilarity({ base_url: server.baseUrl, model: "e" });
  const lengths = await scoreOf(scorer, unit("yes", "maybe"));
  assert.equal(lengths.diagnostics[0]?.code, "embedding.invalid_answer");
  assert.match(lengths.reason!, /different lengths \(2 and 3\)/);
  const zero = await scoreOf(scorer, unit("nothing", "maybe"));
  assert.equal(zero.diagnostics[0]?.code, "embedding.invalid_answer");
  assert.match(zero.reason!, /zero vector/);
});

Deno.test("semanticSimilarity: an error a proxy answers with 200 is embedding.request_failed quoting it, retried as a 5xx", async () => {
  await using server = fakeLlm({
    handler: () => reply.json({ error: { message: "model overloaded" } }),
  });
  const scorer = semanticSimilarity({
    base_url: server.baseUrl,
    model: "e",
    retries: 1,
    retry_delay: 0.01,
  });
  const s = await scoreOf(scorer, unit("yes", "yes"));
  assert.equal(s.status, "error");
  assert.equal(s.diagnostics[0]?.code, "embedding.request_failed");
  assert.match(
    s.reason!,
    /^scorer error: POST .*\/v1\/embeddings answered HTTP 200 with an error: model overloaded \(after 2 attempts\)$/,
  );
  assert.equal(server.count, 2);
});

Deno.test("semanticSimilarity honours Retry-After on 429 instead of its backoff", async () => {
  await using server = fakeLlm({
    script: [reply.rateLimited("0.3")],
    handler: embeddings(vectorOf),
  });
  // A backoff of 20 s would be waited without the header.
  const scorer = semanticSimilarity({
    base_url: server.baseUrl,
    model: "e",
    retry_delay: 20,
  });
  const started = performance.now();
  const s = await scoreOf(scorer, unit("It is four.", "Four."));
  const elapsed = performance.now() - started;
  assert.equal(s.value, 0.96);
  assert.ok(elapsed < 5000, `${elapsed} ms`);
  // The limited text's retry came at least 0.3 s after its first attempt.
  const limited = embeddingInputs(server.requests[0]!)[0];
  const again = server.requests.slice(1).find((r) =>
    embeddingInputs(r)[0] === limited
  )!;
  assert.ok(again.at - server.requests[0]!.at >= 280, `${again.at}`);
});

Deno.test("semanticSimilarity's rate_limit spaces its requests evenly", async () => {
  await using server = fakeLlm({ handler: embeddings(vectorOf) });
  const scorer = semanticSimilarity({
    base_url: server.baseUrl,
    model: "e",
    rate_limit: 600, // one every 100 ms
  });
  const start = performance.now();
  await Promise.all([
    scoreOf(scorer, unit("It is four.", "Four.")),
    scoreOf(scorer, unit("yes", "maybe")),
  ]);
  assert.equal(server.count, 4);
  // The k-th request (from 0) no sooner than 100k ms after the start: a
  // burst fails, a request the loaded machine sent late does not.
  assert.deepEqual(slotsBroken(server.requests, start, 100), []);
});

Deno.test("semanticSimilarity sends the key and headers, and no secret reaches a Score", async () => {
  const KEY = "sk-embed-secret-123";
  const TEAM = "team-secret-456";
  await using server = fakeLlm({
    handler: (request) =>
      // A server that echoes what it was sent in its error.
      reply.error(
        401,
        `bad key ${request.headers.authorization} for ${
          request.headers["x-team"]
        }`,
      ),
  });
  const env = (name: string) => ({ EMBED_KEY: KEY, TEAM_TOKEN: TEAM })[name];
  const scorer = semanticSimilarity({
    base_url: server.baseUrl,
    model: "e",
    api_key_env: "EMBED_KEY",
    headers: { "X-Team": "${TEAM_TOKEN}" },
  }, { env });
  const s = await scoreOf(scorer, unit("yes", "maybe"));
  assert.equal(server.requests[0]!.headers.authorization, `Bearer ${KEY}`);
  assert.equal(server.requests[0]!.headers["x-team"], TEAM);
  assert.equal(s.diagnostics[0]?.code, "embedding.request_failed");
  const text = JSON.stringify(s) + scorer.version;
  assert.ok(!text.includes(KEY), text);
  assert.ok(!text.includes(TEAM), text);
  assert.match(s.reason!, /HTTP 401/);
  // A key variable that is not set is refused before any call.
  assert.throws(
    () =>
      semanticSimilarity({ model: "e", api_key_env: "NOT_SET_X" }, {
        env: () => undefined,
      }),
    /The environment variable NOT_SET_X is not set/,
  );
});

/** A suite scoring replayed outputs with semantic_similarity on `baseUrl`. */
async function suite(
  dir: string,
  baseUrl: string,
  model = "embed-small",
): Promise<string> {
  await Deno.writeTextFile(
    `${dir}/cases.jsonl`,
    [
      { input: "2+2?", output: "It is four.", expected: "Four." },
      { input: "ok?", output: "yes", expected: "maybe" },
      { input: "ok again?", output: "yes", expected: "Four." },
    ].map((c) => JSON.stringify(c)).join("\n") + "\n",
  );
  const path = `${dir}/suite.yaml`;
  await Deno.writeTextFile(
    path,
    `dataset: cases.jsonl\ntarget: { type: replay }\nscorers:\n` +
      `  - { type: semantic_similarity, base_url: "${baseUrl}", model: ${model}, threshold: 0.9 }\n`,
  );
  return path;
}

async function values(
  path: string,
  cacheDir?: string | null,
): Promise<Array<number | null>> {
  const seen: Score[] = [];
  const summary = await runSuite(path, {
    sink: new WritableStream(),
    onScore: (s) => seen.push(s),
    ...(cacheDir !== undefined ? { cacheDir } : {}),
  });
  assert.equal(summary.gateFailures.length, 0);
  return seen.map((s) => s.value);
}

Deno.test("semantic_similarity in a run keeps each embedding in the cache: a second run makes no request", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({ handler: embeddings(vectorOf) });
    const path = await suite(dir, server.baseUrl);
    const first = await values(path);
    assert.equal(first[0], 0.96);
    assert.ok(Math.abs(first[1]! - 1 / Math.SQRT2) < 1e-12);
    // Four distinct texts: "It is four.", "Four.", "yes", "maybe".
    assert.deepEqual(
      server.requests.map((r) => embeddingInputs(r)[0]).sort(),
      ["Four.", "It is four.", "maybe", "yes"],
    );
    const after = server.count;
    assert.deepEqual(await values(path), first);
    assert.equal(server.count, after, "a cached embedding made a request");
    // The cache lives in the config's folder, like the target cache.
    const packs = [...Deno.readDirSync(`${dir}/.evalpipe/cache`)];
    assert.ok(packs.some((e) => e.name.startsWith("pack-")));
    // Another model is another key: every text is asked for again.
    await suite(dir, server.baseUrl, "embed-large");
    await values(path);
    assert.equal(server.count, after + 4);
    // So is another base URL, even with the model and texts unchanged.
    await using other = fakeLlm({ handler: embeddings(vectorOf) });
    await suite(dir, other.baseUrl);
    await values(path);
    assert.equal(other.count, 4);
    // Without a cache, each run asks again (and writes nothing).
    await values(path, null);
    assert.equal(other.count, 8);
  });
});

Deno.test("semantic_similarity in a config: a missing key variable is a config error", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      '{"input":"q","output":"a"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: cases.jsonl\ntarget: { type: replay }\nscorers:\n" +
        "  - { type: semantic_similarity, model: e, api_key_env: EVALPIPE_TEST_UNSET_KEY }\n",
    );
    await assert.rejects(
      () => runSuite(`${dir}/suite.yaml`, { sink: new WritableStream() }),
      (error) =>
        error instanceof ConfigError &&
        error.message.includes("EVALPIPE_TEST_UNSET_KEY is not set"),
    );
  });
});

Deno.test("semantic_similarity replays from the cache with no API key set; a text not cached fails alone, no request", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({ handler: embeddings(vectorOf) });
    const path = await suite(dir, server.baseUrl);
    const config = (await Deno.readTextFile(path)).replace(
      "threshold: 0.9 }",
      "threshold: 0.9, api_key_env: EVALPIPE_TEST_EMBED_KEY }",
    );
    await Deno.writeTextFile(path, config);
    const live = await cli(["run", "suite.yaml"], dir, {
      EVALPIPE_TEST_EMBED_KEY: "sk-embed",
    });
    assert.equal(live.code, 0, live.stderr);
    const asked = server.count;
    assert.equal(asked, 4);
    // CI without the key: every embedding comes from the cache.
    const replayed = await cli(["run", "suite.yaml", "--cache", "replay"], dir);
    assert.equal(replayed.code, 0, replayed.stderr);
    assert.equal(replayed.stdout, live.stdout);
    assert.equal(server.count, asked);
    // A case whose text was never embedded: that Score fails, not the run.
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      JSON.stringify({ input: "new?", output: "no", expected: "yes" }) + "\n",
      { append: true },
    );
    const missing = await cli(["run", "suite.yaml", "--cache", "replay"], dir);
    assert.equal(server.count, asked, "replay made a request");
    const scores = missing.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(scores.length, 4);
    assert.deepEqual(
      scores.slice(0, 3),
      JSON.parse(`[${live.stdout.trim().split("\n").join(",")}]`),
    );
    assert.equal(scores[3].status, "error");
    assert.match(scores[3].reason, /cache mode "replay" makes no call/);
    assert.equal(scores[3].value, null);
    assert.doesNotMatch(missing.stderr, /EVALPIPE_TEST_EMBED_KEY is not set/);
    // Outside replay, the key a run needs must be set.
    const auto = await cli(["run", "suite.yaml"], dir);
    assert.equal(auto.code, 2, auto.stderr);
    assert.match(auto.stderr, /EVALPIPE_TEST_EMBED_KEY is not set/);
  });
});
