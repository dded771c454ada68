// `evalpipe validate CONFIG`: the config, every dataset record and every
// command checked, what a run would do printed, nothing called: a loopback
// server counts the requests, and validate must make none.

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { fakeLlm, lastMessage, reply } from "../_fake_llm.ts";
import { withTempDir } from "../_proc.ts";

const jsonl = (rows: unknown[]) =>
  rows.map((r) => JSON.stringify(r)).join("\n") + "\n";

Deno.test("validate prints what a run would do and exits 0, running nothing", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      jsonl([{ input: "q", output: "a", expected: "a" }, {
        input: "r",
        output: "b",
      }]),
    );
    await Deno.writeTextFile(`${dir}/mark.sh`, "touch ran\n");
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: data.jsonl
target: { type: replay }
scorers:
  - { type: exact_match }
  - { type: subprocess, cmd: sh mark.sh, name: marked }
epochs: 3
`,
    );
    const text = await cli(["validate", "suite.yaml"], dir);
    assert.equal(text.code, 0, text.stderr);
    assert.equal(text.stderr, "");
    assert.match(text.stdout, /^config: suite\.yaml: valid$/m);
    assert.match(text.stdout, /^dataset: data\.jsonl: 2 cases$/m);
    assert.match(text.stdout, /^epochs: 3: 6 units, 8 at once$/m);
    assert.match(text.stdout, /^target: replay$/m);
    assert.match(
      text.stdout,
      /^scorers: exact_match \(exact_match@1\), marked \(marked@[0-9a-f]{8}\)$/m,
    );
    const json = await cli([
      "validate",
      "suite.yaml",
      "--json",
      "--epochs",
      "2",
    ], dir);
    assert.equal(json.code, 0, json.stderr);
    const plan = JSON.parse(json.stdout);
    assert.equal(plan.cases, 2);
    assert.equal(plan.units, 4);
    assert.deepEqual(plan.scorers.map((s: { type: string }) => s.type), [
      "exact_match",
      "subprocess",
    ]);
    await assert.rejects(Deno.stat(`${dir}/ran`), Deno.errors.NotFound);
    await assert.rejects(Deno.stat(`${dir}/.evalpipe`), Deno.errors.NotFound);
  });
});

Deno.test("validate names every malformed dataset record with its line and exits 2", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      '{"input":"q","output":"a"}\nnot json\n{"output":"b"}\n{"input":"r","output":"c"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: data.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    const out = await cli(["validate", "suite.yaml"], dir);
    assert.equal(out.code, 2);
    assert.match(out.stderr, /Invalid case in "data\.jsonl" line 2: /);
    assert.match(out.stderr, /Invalid case in "data\.jsonl" line 3: .*input/);
    assert.match(
      out.stdout,
      /^dataset: data\.jsonl: 4 cases, 2 malformed records$/m,
    );
  });
});

Deno.test("validate refuses a command whose program or script is missing, at its line", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/data.jsonl`, '{"input":"q"}\n');
    const check = async (target: string, scorer: string, pattern: RegExp) => {
      await Deno.writeTextFile(
        `${dir}/suite.yaml`,
        `dataset: data.jsonl\ntarget:\n  type: subprocess\n  cmd: ${target}\nscorers:\n  - type: subprocess\n    name: s\n    cmd: ${scorer}\n`,
      );
      const out = await cli(["validate", "suite.yaml"], dir);
      assert.equal(out.code, 2, out.stdout);
      assert.match(out.stderr, pattern);
    };
    await Deno.writeTextFile(`${dir}/ok.py`, "print(1)\n");
    await check(
      "python3 app_typo.py",
      "python3 ok.py",
      /line 4: the target "python3 app_typo\.py" runs "app_typo\.py", which does not exist/,
    );
    await check(
      "no-such-program-here --flag",
      "python3 ok.py",
      /line 4: the target "no-such-program-here --flag" runs "no-such-program-here", which is not on PATH/,
    );
    await check(
      "python3 ok.py",
      "./bin/score.sh",
      /line 6: scorer "\.\/bin\/score\.sh" runs "\.\/bin\/score\.sh", which does not exist/,
    );
    // A command that can run, after an assignment, passes.
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: data.jsonl\ntarget: { type: subprocess, cmd: FOO=1 python3 ok.py }\nscorers: [{ type: subprocess, name: s, cmd: python3 ok.py }]\n",
    );
    const ok = await cli(["validate", "suite.yaml"], dir);
    assert.equal(ok.code, 0, ok.stderr);
  });
});

Deno.test("validate --cache replay counts the requests the cache lacks, with no request and no API key", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({
      handler: (request) =>
        (request.json as { model?: string }).model === "judge"
          ? reply.ok('{"score": 1}')
          : reply.ok(`A: ${lastMessage(request)}`),
    });
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: data.jsonl
target: { type: openai, base_url: "${server.baseUrl}", model: bot, api_key_env: VALIDATE_TEST_KEY }
scorers:
  - type: exact_match
  - { type: llm_judge, base_url: "${server.baseUrl}", model: judge }
`,
    );
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      jsonl([{ input: "one" }, { input: "two" }]),
    );
    const run = await cli(["run", "suite.yaml"], dir, {
      VALIDATE_TEST_KEY: "sk",
    });
    assert.equal(run.code, 0, run.stderr);
    const calls = server.count;
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      jsonl([{ input: "one" }, { input: "two" }, { input: "three" }]),
    );
    const out = await cli(
      ["validate", "suite.yaml", "--cache", "replay", "--json"],
      dir,
    );
    assert.equal(out.code, 0, out.stderr);
    assert.equal(server.count, calls, "validate sent a request");
    const plan = JSON.parse(out.stdout);
    assert.equal(plan.cache.mode, "replay");
    assert.deepEqual(plan.cache.target, { requests: 3, stored: 2, missing: 1 });
    assert.deepEqual(plan.cache.judge, {
      requests: 2,
      stored: 2,
      missing: 0,
      unknown: 1,
    });
    const text = await cli(
      ["validate", "suite.yaml", "--cache", "replay"],
      dir,
    );
    assert.match(
      text.stdout,
      /^cache: replay, .*\.evalpipe\/cache: target 2 of 3 requests stored, 1 missing \(blocked in replay\); judge 2 of 2 requests stored, 0 missing \(blocked in replay\), 1 known once the target answers$/m,
    );
    // Without replay, the key a run needs must be set.
    const auto = await cli(["validate", "suite.yaml"], dir);
    assert.equal(auto.code, 2);
    assert.match(auto.stderr, /VALIDATE_TEST_KEY is not set/);
  });
});

Deno.test("validate --cache replay counts a judge's cached reply without a verdict (an older cache's) as missing, as the run's replay meets it", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({
      handler: (request) =>
        (request.json as { model?: string }).model === "judge"
          ? reply.ok('{"score": 1}')
          : reply.ok(`A: ${lastMessage(request)}`),
    });
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: data.jsonl
target: { type: openai, base_url: "${server.baseUrl}", model: bot, api_key_env: VALIDATE_TEST_KEY }
scorers:
  - { type: llm_judge, base_url: "${server.baseUrl}", model: judge }
`,
    );
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      jsonl([{ input: "one" }, { input: "two" }]),
    );
    const run = await cli(["run", "suite.yaml"], dir, {
      VALIDATE_TEST_KEY: "sk",
    });
    assert.equal(run.code, 0, run.stderr);
    // The judge's replies as a cache kept them before it refused those
    // without a verdict.
    const cache = `${dir}/.evalpipe/cache`;
    let replaced = 0;
    for await (const entry of Deno.readDir(cache)) {
      const pack = `${cache}/${entry.name}`;
      const text = await Deno.readTextFile(pack);
      const older = text.replaceAll(
        JSON.stringify('{"score": 1}'),
        () => (replaced++, JSON.stringify("I cannot grade this.")),
      );
      await Deno.writeTextFile(pack, older);
    }
    assert.equal(replaced, 2);
    const out = await cli(
      ["validate", "suite.yaml", "--cache", "replay", "--json"],
      dir,
    );
    assert.equal(out.code, 0, out.stderr);
    const plan = JSON.parse(out.stdout);
    assert.deepEqual(plan.cache.target, { requests: 2, stored: 2, missing: 0 });
    assert.deepEqual(plan.cache.judge, {
      requests: 2,
      stored: 0,
      missing: 2,
      unknown: 0,
    });
    // What the replay then meets.
    const replay = await cli(["run", "suite.yaml", "--cache", "replay"], dir);
    const scores = replay.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(
      scores.map((s) => [s.status, s.diagnostics[0]?.code]),
      [["error", "cache.miss"], ["error", "cache.miss"]],
    );
  });
});

Deno.test("validate --cache replay does not count the call of a judge that finds a case not applicable, which the run never makes", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({
      handler: () =>
        reply.ok('{"claims": [{"claim": "Paris", "supported": true}]}'),
    });
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: data.jsonl
target: { type: replay }
scorers:
  - { type: faithfulness, base_url: "${server.baseUrl}", model: judge }
`,
    );
    // The second case has no context: faithfulness is not applicable to it.
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      jsonl([
        {
          input: "capital?",
          output: "Paris",
          context: ["Paris is the capital."],
        },
        { input: "capital?", output: "Paris" },
      ]),
    );
    const run = await cli(["run", "suite.yaml"], dir);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(server.requests.length, 1);
    const out = await cli(
      ["validate", "suite.yaml", "--cache", "replay", "--json"],
      dir,
    );
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(JSON.parse(out.stdout).cache.judge, {
      requests: 1,
      stored: 1,
      missing: 0,
      unknown: 0,
    });
    // And the replay it plans meets no miss.
    const replay = await cli(["run", "suite.yaml", "--cache", "replay"], dir);
    assert.equal(replay.code, 0, replay.stderr);
    const scores = replay.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(scores.map((s) => s.status), ["scored", "non_evaluable"]);
  });
});

Deno.test("validate plans the targets --matrix names, every file of datasets:, and epochs given as a mapping", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/a.jsonl`, jsonl([{ input: "q" }]));
    await Deno.writeTextFile(
      `${dir}/b.jsonl`,
      jsonl([{ input: "r" }, { input: "s" }, "not a case"]),
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `datasets:
  - { path: a.jsonl, name: first }
  - { path: b.jsonl }
targets:
  v1: { type: subprocess, cmd: echo one }
  v2: { type: subprocess, cmd: sh missing.sh }
scorers: [{ type: exact_match }]
epochs: { n: 2, require: majority }
`,
    );
    // Without a choice, validate refuses what run refuses, in its words.
    const unpicked = await cli(["validate", "suite.yaml"], dir);
    assert.equal(unpicked.code, 2);
    const run = await cli(["run", "suite.yaml"], dir);
    assert.equal(run.code, 2);
    assert.equal(unpicked.stderr, run.stderr);
    assert.match(unpicked.stderr, /has several targets: pick one/);
    const matrix = ["validate", "suite.yaml", "--matrix", "v1,v2"];
    const missing = await cli(matrix, dir);
    assert.equal(missing.code, 2);
    assert.match(
      missing.stderr,
      /line 6: target "v2" "sh missing\.sh" runs "missing\.sh", which does not exist/,
    );
    // The one target picked is all that is checked, as run calls no other.
    const one = await cli(["validate", "suite.yaml", "--target", "v1"], dir);
    assert.equal(one.code, 2, one.stderr);
    assert.doesNotMatch(one.stderr, /missing\.sh/);
    assert.match(one.stdout, /^target v1: subprocess/m);
    await Deno.writeTextFile(`${dir}/missing.sh`, "echo two\n");
    const text = await cli([...matrix, "--json"], dir);
    // The malformed record is named in its own file.
    assert.equal(text.code, 2);
    assert.match(
      text.stderr,
      /^evalpipe: Invalid case in "b\.jsonl" line 3: A case must be an object/,
    );
    const plan = JSON.parse(text.stdout);
    assert.equal(plan.dataset, "a.jsonl, b.jsonl");
    assert.equal(plan.cases, 4);
    assert.equal(plan.invalid.length, 1);
    assert.equal(plan.epochs, 2);
    // 3 good cases × 2 epochs × 2 targets.
    assert.equal(plan.units, 12);
    assert.deepStrictEqual(plan.targets.map((t: { name: string }) => t.name), [
      "v1",
      "v2",
    ]);
  });
});

Deno.test("a budget_usd with no price anywhere is a config error at its line; with a cost, validate shows it", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/data.jsonl`, jsonl([{ input: "q" }]));
    const suite = (cost: string) =>
      `dataset: data.jsonl
target:
  type: openai
  base_url: http://127.0.0.1:9/v1
  model: bot
  api_key_env: VALIDATE_TEST_KEY
${cost}scorers:
  - type: exact_match
budget_usd: 1.5
`;
    await Deno.writeTextFile(`${dir}/suite.yaml`, suite(""));
    const env = { VALIDATE_TEST_KEY: "sk" };
    for (const command of ["validate", "run"]) {
      const out = await cli([command, "suite.yaml"], dir, env);
      assert.equal(out.code, 2, out.stderr);
      assert.match(
        out.stderr,
        /Invalid config "suite\.yaml" line 9: "budget_usd" counts what priced calls cost, and no target or judge here has a "cost"/,
      );
      assert.equal(out.stdout, "");
    }
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      suite("  cost: { input_per_1m: 1, output_per_1m: 2 }\n"),
    );
    const ok = await cli(["validate", "suite.yaml"], dir, env);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^budget: \$1\.5 \(budget_usd\)$/m);
  });
});

Deno.test("validate names a bad record of a JSON or YAML dataset by its record number and line, as run does", async () => {
  await withTempDir(async (dir) => {
    const files: Record<string, string> = {
      "m.json":
        '[\n  {"input": "q", "output": "a"},\n  {"input": "q2", "output": "a"},\n  {"input": 3, "output": "a"}\n]\n',
      "m.yaml": "- { input: q }\n- { input: r }\n-\n  input: 3\n",
    };
    for (const [file, text] of Object.entries(files)) {
      await Deno.writeTextFile(`${dir}/${file}`, text);
      await Deno.writeTextFile(
        `${dir}/s.yaml`,
        `dataset: ${file}\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n`,
      );
      const validate = await cli(["validate", "s.yaml"], dir);
      const run = await cli(["run", "s.yaml"], dir);
      assert.equal(validate.code, 2, validate.stderr);
      const said = validate.stderr.split("\n")[0]!;
      assert.match(
        said,
        new RegExp(
          `^evalpipe: Invalid case in "${file}" record 3 \\(line 4\\): `,
        ),
      );
      assert.ok(
        run.stderr.includes(said.slice("evalpipe: ".length)),
        run.stderr,
      );
    }
  });
});

Deno.test("validate counts the cases a target's template cannot fill, names the first and the field meant, and exits 2; run blocks them with the same words", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      jsonl([{ input: "q", expected: "a" }, { input: "r" }, {
        input: "s",
        metadata: { topic: "x" },
      }]),
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: data.jsonl
targets:
  api:
    type: http
    url: http://127.0.0.1:9/ask
    body: { q: "{{inptu}}", topic: "{{metadata.topic}}" }
  local: { type: replay }
matrix: [api, local]
scorers: [{ type: exact_match }]
`,
    );
    const text = await cli(["validate", "suite.yaml"], dir);
    assert.equal(text.code, 2, text.stderr);
    // One line per target and message: the count, the first case, the fix.
    assert.equal(
      text.stderr,
      'evalpipe: Target "api" cannot be sent 3 cases (the first: "data.jsonl" line 1): The template names {{inptu}}, which this case does not have; did you mean {{input}}?\n',
    );
    assert.match(
      text.stdout,
      /^target api: 3 cases its templates cannot fill, blocked in a run$/m,
    );
    const json = JSON.parse(
      (await cli(["validate", "suite.yaml", "--json"], dir)).stdout,
    );
    assert.deepEqual(json.unsendable.map((u: { cases: number }) => u.cases), [
      3,
    ]);
    // A run blocks each with the same words, and calls nothing.
    const run = await cli(["run", "suite.yaml", "--target", "api"], dir);
    const reasons = run.stdout.trim().split("\n").map((l) => JSON.parse(l))
      .map((s) => `${s.status}: ${s.reason}`);
    assert.deepEqual(
      reasons,
      Array(3).fill(
        "blocked: target error: The template names {{inptu}}, which this case does not have; did you mean {{input}}?",
      ),
    );
    // Fixed: the cases without metadata.topic are the next problem.
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      (await Deno.readTextFile(`${dir}/suite.yaml`)).replace("inptu", "input"),
    );
    const fixed = await cli(["validate", "suite.yaml"], dir);
    assert.equal(fixed.code, 2);
    assert.equal(
      fixed.stderr,
      'evalpipe: Target "api" cannot be sent 2 cases (the first: "data.jsonl" line 1): The template names {{metadata.topic}}, which this case does not have\n',
    );
  });
});

Deno.test("validate shows a target's URL without its password, as run's messages do", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/cases.jsonl`, '{"input":"q"}\n');
    for (
      const target of [
        '{ type: openai, base_url: "http://bob:pw-URLSECRET-77@127.0.0.1:9/v1", model: m }',
        '{ type: http, url: "http://bob:pw-URLSECRET-77@127.0.0.1:9/x", body: { q: "{{input}}" } }',
      ]
    ) {
      await Deno.writeTextFile(
        `${dir}/s.yaml`,
        `dataset: cases.jsonl\ntarget: ${target}\nscorers: [{ type: exact_match, value: a }]\n`,
      );
      for (
        const args of [["validate", "s.yaml"], ["validate", "s.yaml", "--json"]]
      ) {
        const out = await cli(args, dir);
        assert.equal(out.code, 0, out.stderr);
        const all = out.stdout + out.stderr;
        assert.doesNotMatch(all, /URLSECRET/);
        assert.match(all, /http:\/\/127\.0\.0\.1:9\//);
      }
    }
  });
});

Deno.test("validate shows the headers an openai target and its judges send, a ${NAME} as written: the value set in the environment is on neither stdout nor stderr", async () => {
  const SECRET = "pk-validate-secret-5150";
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/cases.jsonl`, '{"input":"q"}\n');
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      `dataset: cases.jsonl
target:
  type: openai
  base_url: http://127.0.0.1:9/v1
  model: m
  headers:
    X-Portkey-Api-Key: "\${EVALPIPE_TEST_HEADER}"
    OpenAI-Organization: org-test
scorers:
  - type: exact_match
    value: a
  - type: llm_judge
    base_url: http://127.0.0.1:9/v1
    model: judge
    headers: { x-judge-team: "team \${EVALPIPE_TEST_HEADER}" }
`,
    );
    const env = { EVALPIPE_TEST_HEADER: SECRET };
    const text = await cli(["validate", "s.yaml"], dir, env);
    assert.equal(text.code, 0, text.stderr);
    assert.match(
      text.stdout,
      /^target headers: X-Portkey-Api-Key: "\$\{EVALPIPE_TEST_HEADER\}", OpenAI-Organization: "org-test"$/m,
    );
    assert.match(
      text.stdout,
      /^scorer llm_judge headers: x-judge-team: "team \$\{EVALPIPE_TEST_HEADER\}"$/m,
    );
    assert.doesNotMatch(text.stdout, /^scorer exact_match headers/m);
    const json = await cli(["validate", "s.yaml", "--json"], dir, env);
    assert.equal(json.code, 0, json.stderr);
    const plan = JSON.parse(json.stdout);
    assert.deepEqual(plan.target.headers, {
      "X-Portkey-Api-Key": "${EVALPIPE_TEST_HEADER}",
      "OpenAI-Organization": "org-test",
    });
    assert.deepEqual(
      plan.scorers.map((s: { headers?: unknown }) => s.headers),
      [
        undefined,
        { "x-judge-team": "team ${EVALPIPE_TEST_HEADER}" },
      ],
    );
    for (const out of [text, json]) {
      assert.ok(!(out.stdout + out.stderr).includes(SECRET), out.stdout);
    }
  });
});

Deno.test("validate hides the text a credential's header writes out, and shows its ${NAME} and scheme", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/cases.jsonl`, '{"input":"q"}\n');
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      `dataset: cases.jsonl
target:
  type: openai
  base_url: http://127.0.0.1:9/v1
  model: m
  headers:
    Authorization: "Bearer sk-literal-4242"
    X-Team: refunds
scorers:
  - type: llm_judge
    base_url: http://127.0.0.1:9/v1
    model: judge
    headers: { x-api-key: "lit-key-77", x-gateway-token: "Bearer \${EVALPIPE_T}" }
`,
    );
    const env = { EVALPIPE_T: "t-secret-9" };
    const text = await cli(["validate", "s.yaml"], dir, env);
    assert.equal(text.code, 0, text.stderr);
    assert.match(
      text.stdout,
      /^target headers: Authorization: "Bearer \*\*\*", X-Team: "refunds"$/m,
    );
    assert.match(
      text.stdout,
      /^scorer llm_judge headers: x-api-key: "\*\*\*", x-gateway-token: "Bearer \$\{EVALPIPE_T\}"$/m,
    );
    const json = await cli(["validate", "s.yaml", "--json"], dir, env);
    assert.equal(json.code, 0, json.stderr);
    for (const out of [text, json]) {
      for (const literal of ["sk-literal-4242", "lit-key-77", "t-secret-9"]) {
        assert.ok(!(out.stdout + out.stderr).includes(literal), out.stdout);
      }
    }
  });
});

Deno.test("validate reads a credential's header by the words of its name: x-jwt is hidden, x-keyboard-layout and x-author are shown", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/cases.jsonl`, '{"input":"q"}\n');
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      `dataset: cases.jsonl
target:
  type: http
  url: http://127.0.0.1:9/ask
  headers:
    X-Keyboard-Layout: dvorak
    X-Author: ann
    X-Jwt: eyJhbGciOiJIUzI1NiJ9.e30.sig-literal
    X-Client-Secret: cs-literal-31
scorers: [{ type: exact_match }]
`,
    );
    const out = await cli(["validate", "s.yaml"], dir);
    assert.equal(out.code, 0, out.stderr);
    assert.match(
      out.stdout,
      /^target headers: X-Keyboard-Layout: "dvorak", X-Author: "ann", X-Jwt: "\*\*\*", X-Client-Secret: "\*\*\*"$/m,
    );
  });
});

Deno.test("validate refuses a prompt in another template language at its line, and points {{column}} of a CSV dataset at metadata.<column>", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/data.csv`,
      "input,topic\nwhere is my refund?,refunds\n",
    );
    const suite = (prompt: string) =>
      Deno.writeTextFile(
        `${dir}/suite.yaml`,
        `dataset: data.csv
target:
  type: openai
  base_url: http://127.0.0.1:9/v1
  model: m
  prompt: "${prompt}"
scorers: [{ type: exact_match }]
`,
      );
    await suite("A {{ input | upper }} B {% if context %}ctx{% endif %}");
    const syntax = await cli(["validate", "suite.yaml"], dir);
    assert.equal(syntax.code, 2, syntax.stderr);
    assert.match(
      syntax.stderr,
      /^evalpipe: Invalid config "suite\.yaml" line 6: "target\.prompt" has \{\{ input \| upper \}\}, which evalpipe would send as written: filters/,
    );
    await suite("{{topic}}: {{input}}");
    const column = await cli(["validate", "suite.yaml"], dir);
    assert.equal(column.code, 2, column.stderr);
    assert.equal(
      column.stderr,
      'evalpipe: The target cannot be sent a case ("data.csv" record 1): The template names {{topic}}, which this case does not have; did you mean {{metadata.topic}}?\n',
    );
  });
});

Deno.test('validate --cache replay counts an openai answer cached as "" before refusals were read as missing, as run --cache replay blocks it', async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({
      handler: (request) => reply.ok(`A: ${lastMessage(request)}`),
    });
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
    const run = await cli(["run", "suite.yaml"], dir);
    assert.equal(run.code, 0, run.stderr);
    // One answer as a version before e989e42 kept it: "", no reading.
    const cacheDir = `${dir}/.evalpipe/cache`;
    for (const entry of Deno.readDirSync(cacheDir)) {
      const path = `${cacheDir}/${entry.name}`;
      const text = Deno.readTextFileSync(path);
      Deno.writeTextFileSync(
        path,
        text.replace('"output":"A: two"', '"output":""').replaceAll(
          ',"reading":1',
          "",
        ),
      );
    }
    const out = await cli(
      ["validate", "suite.yaml", "--cache", "replay", "--json"],
      dir,
    );
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(JSON.parse(out.stdout).cache.target, {
      requests: 2,
      stored: 1,
      missing: 1,
    });
    const replayed = await cli(
      ["run", "suite.yaml", "--cache", "replay", "--record", "run.json"],
      dir,
    );
    const record = JSON.parse(await Deno.readTextFile(`${dir}/run.json`));
    assert.deepEqual(
      record.units.map((u: { target: { error_code?: string } }) =>
        u.target.error_code
      ),
      [undefined, "cache.miss"],
      replayed.stderr,
    );
  });
});

Deno.test("validate hides a credential header's pasted key written as ${...}, which no environment variable fills and a run sends as written", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/data.jsonl`, jsonl([{ input: "q" }]));
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: data.jsonl
target:
  type: http
  url: http://127.0.0.1:9/x
  headers:
    Authorization: "Bearer \${sk-live-abc123}"
    X-Api-Key: "\${HOME}-\${sk-live-zzz}"
scorers: [{ type: exact_match }]
`,
    );
    const text = await cli(["validate", "suite.yaml"], dir);
    assert.equal(text.code, 0, text.stderr);
    assert.doesNotMatch(text.stdout, /sk-live/);
    assert.match(
      text.stdout,
      /^target headers: Authorization: "Bearer \*\*\*", X-Api-Key: "\$\{HOME\}\*\*\*"$/m,
    );
  });
});
