// What a config's URLs carry and where it goes: a password beside an API
// key, a scheme fetch cannot send, a `${NAME}` in a URL. Each config is run
// against a server on loopback that records what it receives.

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { embeddings, fakeLlm, reply } from "../_fake_llm.ts";
import { withTempDir } from "../_proc.ts";
import { openaiTarget, runTarget } from "../../src/targets/mod.ts";
import { llmJudge, semanticSimilarity } from "../../src/scorers/mod.ts";

const KEY = "sk-basic-beside-0123456789";
const PASSWORD = "pw-in-the-url-4567";

Deno.test("cli run and validate refuse an openai target's, a judge's or an embeddings scorer's base_url with a password beside a key sent as Bearer, naming both, before any call", async () => {
  // fetch sends the URL's userinfo as Basic auth in the authorization
  // header and the key joined to it ("Basic …, Bearer …"): the service
  // got neither as the config meant.
  await using server = fakeLlm({
    handler: embeddings(() => [1, 0], () => reply.ok("fine")),
  });
  const withPassword = server.baseUrl.replace("//", `//ann:${PASSWORD}@`);
  const cases: [string, string, string, string][] = [
    [
      `target: { type: openai, base_url: "${withPassword}", model: m, api_key_env: K }\nscorers: [{ type: exact_match }]\n`,
      "line 2",
      "target.base_url",
      `"target.api_key_env", whose key goes there as "Bearer …": the service would get both in that one header; keep one, the base_url's "user:password@" or "api_key_env"`,
    ],
    [
      `target: { type: openai, base_url: "${server.baseUrl}", model: m }\nscorers:\n  - { type: llm_judge, base_url: "${withPassword}", model: j, api_key_env: K }\n`,
      "line 4",
      "scorers[0].base_url",
      `"scorers[0].api_key_env", whose key goes there as "Bearer …": the service would get both in that one header; keep one, the base_url's "user:password@" or "api_key_env"`,
    ],
    [
      `target: { type: openai, base_url: "${server.baseUrl}", model: m }\nscorers:\n  - { type: faithfulness, base_url: "${withPassword}", model: j, api_key_env: K }\n`,
      "line 4",
      "scorers[0].base_url",
      `"scorers[0].api_key_env", whose key goes there as "Bearer …"`,
    ],
    [
      `target: { type: openai, base_url: "${server.baseUrl}", model: m }\nscorers:\n  - type: semantic_similarity\n    base_url: "${withPassword}"\n    model: e\n    headers: { Authorization: "Bearer \${K}" }\n`,
      "line 5",
      "scorers[0].base_url",
      `"scorers[0].headers.Authorization": the service would get both in that one header; keep one, the base_url's "user:password@" or the header`,
    ],
  ];
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input":"q","expected":"a"}\n',
    );
    for (const [tail, line, field, beside] of cases) {
      await Deno.writeTextFile(`${dir}/s.yaml`, `dataset: d.jsonl\n${tail}`);
      for (const command of ["run", "validate"]) {
        const out = await cli([command, "s.yaml"], dir, { K: KEY });
        assert.equal(out.code, 2, `${command} ${tail}\n${out.stderr}`);
        assert.ok(
          out.stderr.includes(
            `Invalid config "s.yaml" ${line}: "${field}" has a user name or password, which is sent as Basic auth in the authorization header, beside ${beside}`,
          ),
          out.stderr,
        );
        assert.equal(out.stdout, "");
        assert.ok(!(out.stderr + out.stdout).includes(PASSWORD));
        assert.ok(!(out.stderr + out.stdout).includes(KEY));
      }
    }
  });
  assert.equal(server.count, 0);
});

Deno.test("openaiTarget, llmJudge and semanticSimilarity refuse a base_url with a password beside a key sent as Bearer; Azure's api-key header and a password alone are sent as written", async () => {
  await using server = fakeLlm();
  const withPassword = server.baseUrl.replace("//", `//ann:${PASSWORD}@`);
  const env = (name: string) => name === "K" ? KEY : undefined;
  assert.throws(
    () =>
      openaiTarget(
        { base_url: withPassword, model: "m", api_key_env: "K" },
        env,
      ),
    new TypeError(
      `openaiTarget's "base_url" has a user name or password, which is sent as Basic auth in the authorization header, beside "api_key_env", whose key goes there as "Bearer …": the service would get both in that one header; keep one, the base_url's "user:password@" or "api_key_env"`,
    ),
  );
  assert.throws(
    () =>
      llmJudge({ base_url: withPassword, model: "j", api_key_env: "K" }, env),
    /^TypeError: llmJudge's "base_url" has a user name or password/,
  );
  assert.throws(
    () =>
      semanticSimilarity({
        base_url: withPassword,
        model: "e",
        threshold: 0.5,
        headers: { authorization: "Bearer ${K}" },
      }),
    /^TypeError: semanticSimilarity's "base_url" has a user name or password/,
  );
  assert.equal(server.count, 0);
  // Azure's key goes in a header of its own; a password alone is Basic auth.
  for (
    const settings of [
      {
        base_url: `${withPassword}?api-version=2024-10-21`,
        model: "m",
        api_key_env: "K",
      },
      { base_url: withPassword, model: "m" },
    ]
  ) {
    const examples = [{ example_id: "d#1", line: 1, case: { input: "q" } }];
    const [unit] = await Array.fromAsync(
      ReadableStream.from(examples).pipeThrough(
        runTarget(openaiTarget(settings, env)),
      ),
    );
    assert.equal(unit?.target?.error, undefined);
  }
  const basic = `Basic ${btoa(`ann:${PASSWORD}`)}`;
  assert.deepEqual(
    server.requests.map((r) => [r.headers.authorization, r.headers["api-key"]]),
    [[basic, KEY], [basic, undefined]],
  );
});

Deno.test("cli run and validate refuse an http target's url, or a base_url, whose scheme is not http or https, at its line, before any call", async () => {
  await using server = fakeLlm();
  const port = new URL(server.url).port;
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input":"q","expected":"a"}\n',
    );
    await Deno.writeTextFile(`${dir}/secret.txt`, "the-file-content-9931\n");
    const cases: [string, string, string][] = [
      [`{ type: http, url: "ftp://127.0.0.1:${port}/a" }`, "url", "ftp:"],
      [
        `{ type: http, method: GET, url: "file://${dir}/secret.txt" }`,
        "url",
        "file:",
      ],
      [`{ type: http, url: "data:text/plain,{{input}}" }`, "url", "data:"],
      [`{ type: http, url: "ws://127.0.0.1:${port}/a" }`, "url", "ws:"],
      [
        `{ type: openai, base_url: "ftp://127.0.0.1:${port}/v1", model: m }`,
        "base_url",
        "ftp:",
      ],
    ];
    for (const [target, field, scheme] of cases) {
      await Deno.writeTextFile(
        `${dir}/s.yaml`,
        `dataset: d.jsonl\ntarget: ${target}\nscorers: [{ type: exact_match }]\n`,
      );
      for (const command of ["run", "validate"]) {
        const out = await cli([command, "s.yaml"], dir);
        assert.equal(out.code, 2, `${command} ${target}\n${out.stderr}`);
        assert.equal(
          out.stderr,
          `evalpipe: Invalid config "s.yaml" line 2: "target.${field}" has the scheme "${scheme}", which evalpipe does not call: it sends to http:// and https:// URLs only\n`,
        );
        assert.equal(out.stdout, "");
      }
    }
  });
  assert.equal(server.count, 0);
});

Deno.test("cli run makes a case that fills an http target's scheme with anything but http or https that case's target error, sent nowhere and not retried", async () => {
  // A placeholder in the scheme reads as http at the config's line; a case
  // filling it with "file" read a file of this machine into its output.
  await using server = fakeLlm({
    handler: () => ({ kind: "raw", status: 200, body: "from-the-server" }),
  });
  const port = new URL(server.url).port;
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/secret.txt`, "the-file-content-9931\n");
    const rows = [
      { id: "f", input: "q", expected: "a", metadata: { s: "file", x: "" } },
      { id: "p", input: "q", expected: "a", metadata: { s: "ftp", x: "-ftp" } },
      // "file" for the first URL: "http" there would call port 80.
      { id: "h", input: "q", expected: "a", metadata: { s: "file", x: "" } },
    ];
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      rows.map((r) => JSON.stringify(r) + "\n").join(""),
    );
    for (
      const [url, sent] of [
        [`{{metadata.s}}://localhost${dir}/secret.txt`, 0],
        [`http{{metadata.x}}://127.0.0.1:${port}/a`, 2],
      ] as const
    ) {
      const before = server.count;
      await Deno.writeTextFile(
        `${dir}/s.yaml`,
        `dataset: d.jsonl\ntarget: { type: http, method: GET, url: "${url}", retries: 2 }\nscorers: [{ type: exact_match }]\n`,
      );
      const out = await cli(
        ["run", "s.yaml", "--units", "u.ndjson", "--cache", "off"],
        dir,
      );
      const units = await Deno.readTextFile(`${dir}/u.ndjson`);
      assert.ok(!units.includes("the-file-content"), units);
      assert.ok(!out.stdout.includes("the-file-content"), out.stdout);
      const reasons = out.stdout.trim().split("\n").map((l) => JSON.parse(l))
        .map((s) => [s.unit_id, s.reason]);
      const refused = (id: string, scheme: string, shown: string) => [
        `d.jsonl#${id}`,
        `target error: GET ${shown} has the scheme "${scheme}", which evalpipe does not call: it sends to http:// and https:// URLs only`,
      ];
      if (sent === 0) {
        assert.deepEqual(
          reasons[0],
          refused("f", "file:", `file://localhost${dir}/secret.txt`),
        );
        assert.deepEqual(
          reasons[1],
          refused("p", "ftp:", `ftp://localhost${dir}/secret.txt`),
        );
        assert.deepEqual(
          reasons[2],
          refused("h", "file:", `file://localhost${dir}/secret.txt`),
        );
      } else {
        assert.deepEqual(
          reasons[1],
          refused("p", "http-ftp:", `http-ftp://127.0.0.1:${port}/a`),
        );
        assert.deepEqual(reasons[2], ["d.jsonl#h", 'expected "a"']);
      }
      // The "http" case was sent, once; a refused scheme never retried.
      assert.equal(server.count - before, sent);
    }
  });
});

Deno.test("cli run keeps a plain word that a config URL's query credential holds (?code=javascript, ?auth=true) where a target or scorer says it", async () => {
  // Each such word was a secret: hidden as *** in every reason, and an
  // answer that said it (8 letters or more) was not kept, not scored.
  await using server = fakeLlm({
    handler: () => ({ kind: "raw", status: 200, body: "javascript is true" }),
  });
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input":"q","expected":"a"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/sc.sh`,
      `cat >/dev/null; printf '{"score": 1, "reason": "said javascript, true and TRUE"}\\n'\n`,
    );
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      `dataset: d.jsonl
target: { type: http, url: "${server.url}/a?code=javascript&auth=true&key=TRUE" }
scorers:
  - { type: exact_match }
  - { type: subprocess, name: sc, cmd: sh sc.sh }
`,
    );
    const out = await cli(["run", "s.yaml", "--units", "u.ndjson"], dir);
    assert.equal(out.code, 0, out.stderr);
    const unit = JSON.parse(await Deno.readTextFile(`${dir}/u.ndjson`));
    assert.equal(unit.output, "javascript is true");
    const scores = out.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(scores.map((s) => s.reason), [
      'expected "a"',
      "said javascript, true and TRUE",
    ]);
  });
  assert.equal(server.count, 1);
});

Deno.test("cli run hides the query credentials of a config URL that a subprocess scorer or the target echoes, though the config names no other secret", async () => {
  const values = [
    "Zk3-AzureFn_Key==",
    "letmein",
    "abcdEFGH1234",
    "sig0verylongkeyvalue",
  ];
  await using server = fakeLlm({
    handler: (r) => ({
      kind: "raw",
      status: 200,
      body: r.path.startsWith("/echo?") ? "abcdEFGH1234" : "fine",
    }),
  });
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"id":"a","input":"q","expected":"fine","metadata":{"p":"a"}}\n{"id":"e","input":"q","expected":"fine","metadata":{"p":"echo"}}\n',
    );
    await Deno.writeTextFile(
      `${dir}/sc.sh`,
      `cat >/dev/null; printf '{"score": 1, "reason": "saw ${
        values.join(" ")
      }"}\\n'\n`,
    );
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      `dataset: d.jsonl
target: { type: http, method: GET, url: "${server.url}/{{metadata.p}}?code=${
        values[0]
      }&password=${values[1]}&sig=${values[2]}&token=${values[3]}" }
scorers:
  - { type: subprocess, name: sc, cmd: sh sc.sh }
`,
    );
    const out = await cli(["run", "s.yaml", "--units", "u.ndjson"], dir);
    const units = await Deno.readTextFile(`${dir}/u.ndjson`);
    for (const value of values) {
      assert.ok(
        !(out.stdout + out.stderr + units).includes(value),
        `${value}: ${out.stdout}${out.stderr}${units}`,
      );
    }
    const scores = out.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(scores[0].reason, "saw *** *** *** ***");
    assert.match(
      scores[1].reason,
      /answered with a secret the config sends .*: the answer is not kept$/,
    );
  });
  assert.equal(server.count, 2);
});

Deno.test("a case may not choose the host or scheme of an http target whose query sends any value under a credential's name, a plain word too (?key=opensesame), though messages show such a word", async () => {
  // A plain word is shown in messages (no API issues it as a key), but it
  // may be a password: a dataset must not pick where it goes.
  const { checkConfigText } = await import("../../src/config/mod.ts");
  const { httpTarget } = await import("../../src/targets/mod.ts");
  const suite = (url: string) =>
    `dataset: d.jsonl\ntarget: { type: http, url: "${url}" }\nscorers: [{ type: exact_match }]\n`;
  for (
    const [url, name] of [
      ["http://{{metadata.host}}/a?key=opensesame", "key"],
      ["http://{{metadata.host}}/a?q=1&code=python&auth=true", "code"],
      ["http://{{metadata.host}}/a?token=EN", "token"],
      ["http://{{metadata.host}}/a?code=python&key=AIza-k1", "code"],
      ["http://{{metadata.host}}/a?password=letmein", "password"],
      ["http://{{metadata.host}}/a?auth=abcdefghijklmnop", "auth"],
      ["{{metadata.scheme}}://api.example.com/a?key=opensesame", "key"],
      ["http{{metadata.s}}://api.example.com/a?api_key=OPENSESAME", "api_key"],
    ]
  ) {
    const sends = `the URL's query sends a credential \\(${name}=\\)`;
    await assert.rejects(
      () => checkConfigText(suite(url!), "s.yaml"),
      new RegExp(`line 2: "target\\.url" lets a case choose .* while ${sends}`),
      url,
    );
    assert.throws(
      () => httpTarget({ url: url! }),
      (e) => e instanceof TypeError && new RegExp(sends).test(e.message),
      url,
    );
  }
  // Nothing of the config's goes to the host a case picks.
  for (
    const url of [
      "http://{{metadata.host}}/a?q=python",
      "http://{{metadata.host}}/a?key={{metadata.key}}",
      "{{metadata.scheme}}://api.example.com/a?lang=EN",
    ]
  ) {
    await checkConfigText(suite(url), "s.yaml");
    httpTarget({ url });
  }
});

Deno.test("cli run and validate refuse a ${NAME} or a {{field}} in a base_url, which nothing fills, at its line, before any call", async () => {
  // Sent as written before: Telegram's /bot${TOKEN}/ went out as
  // "/bot$%7BTOKEN%7D/" to every case, and validate said "valid".
  await using server = fakeLlm({
    handler: embeddings(() => [1, 0], () => reply.ok("fine")),
  });
  const variable =
    `has \${TOKEN}, which evalpipe would send as written: a base_url reads no environment variable; send the key with "api_key_env" or in a header (headers: { authorization: "Bearer \${TOKEN}" })`;
  const placeholder =
    "has {{metadata.tenant}}, which evalpipe would send as written: a base_url is the same for every case and fills no placeholder";
  const cases: [string, string][] = [
    [
      `target: { type: openai, base_url: "${server.url}/bot\${TOKEN}/v1", model: m }\nscorers: [{ type: exact_match }]\n`,
      `line 2: "target.base_url" ${variable}`,
    ],
    [
      `target: { type: openai, base_url: "${server.baseUrl}", model: m }\nscorers:\n  - { type: llm_judge, base_url: "${server.url}/{{metadata.tenant}}/v1", model: j }\n`,
      `line 4: "scorers[0].base_url" ${placeholder}`,
    ],
    [
      `target: { type: openai, base_url: "${server.baseUrl}", model: m }\nscorers:\n  - { type: semantic_similarity, base_url: "${server.url}/v1?k=\${TOKEN}", model: e }\n`,
      `line 4: "scorers[0].base_url" ${variable}`,
    ],
  ];
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input":"q","expected":"a"}\n',
    );
    for (const [tail, message] of cases) {
      await Deno.writeTextFile(`${dir}/s.yaml`, `dataset: d.jsonl\n${tail}`);
      for (const command of ["run", "validate"]) {
        const out = await cli([command, "s.yaml"], dir, { TOKEN: KEY });
        assert.equal(out.code, 2, `${command} ${tail}\n${out.stderr}`);
        assert.equal(
          out.stderr,
          `evalpipe: Invalid config "s.yaml" ${message}\n`,
        );
        assert.equal(out.stdout, "");
      }
    }
  });
  assert.equal(server.count, 0);
  assert.throws(
    () =>
      openaiTarget({ base_url: "http://127.0.0.1:9/bot${TOKEN}", model: "m" }),
    new TypeError(`openaiTarget's "base_url" ${variable}`),
  );
});

Deno.test("cli run refuses an http target whose scheme a case fills while it sends a secret: a case's http:// would send it unencrypted", async () => {
  await using server = fakeLlm({
    handler: () => ({ kind: "raw", status: 200, body: "a" }),
  });
  const port = new URL(server.url).port;
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input":"q","expected":"a","metadata":{"scheme":"http","s":""}}\n',
    );
    const cases: [string, string, string | undefined][] = [
      [
        `{{metadata.scheme}}://127.0.0.1:${port}/a`,
        '{ authorization: "Bearer ${TOKEN}" }',
        "the headers send ${TOKEN}",
      ],
      [
        `http{{metadata.s}}://ann:${PASSWORD}@127.0.0.1:${port}/a`,
        "{}",
        "the URL sends a password",
      ],
      [
        `{{metadata.scheme}}://127.0.0.1:${port}/a?key=AIza-${KEY}`,
        "{}",
        "the URL's query sends a credential (key=)",
      ],
      // No secret: the scheme is the case's to choose.
      [
        `{{metadata.scheme}}://127.0.0.1:${port}/a`,
        "{ x-trace: on }",
        undefined,
      ],
    ];
    for (const [url, headers, sends] of cases) {
      await Deno.writeTextFile(
        `${dir}/s.yaml`,
        `dataset: d.jsonl\ntarget: { type: http, url: "${url}", headers: ${headers} }\nscorers: [{ type: exact_match }]\n`,
      );
      const before = server.count;
      for (const command of ["validate", "run"]) {
        const out = await cli([command, "s.yaml"], dir, { TOKEN: KEY });
        if (sends === undefined) {
          assert.equal(out.code, 0, out.stderr);
          continue;
        }
        assert.equal(out.code, 2, `${command} ${url}\n${out.stderr}`);
        assert.equal(
          out.stderr,
          `evalpipe: Invalid config "s.yaml" line 2: "target.url" lets a case choose the scheme (${
            url.match(/\{\{[^}]*\}\}/)![0]
          }) while ${sends}: a dataset could send the secret unencrypted, over http://; write the scheme, as in https://\n`,
        );
      }
      assert.equal(server.count - before, sends === undefined ? 1 : 0, url);
    }
  });
});

Deno.test("cli run and validate do not print a key pasted where a variable's name goes (api_key_env: gsk_…, ${hf_…}), and name its line", async () => {
  // "The environment variable gsk_… is not set" put the whole key in every
  // CI log: such keys are valid variable names.
  const pasted = "gsk_AbCdEf0123456789XYZsecretKEY0123456789abcdef";
  const header = "hf_QwErTy0123456789AsDfGhJkLzXcVbNm";
  await using server = fakeLlm();
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input":"q","expected":"a"}\n',
    );
    const cases: [string, string][] = [
      [
        `target: { type: openai, base_url: "${server.baseUrl}", model: m, api_key_env: ${pasted} }\nscorers: [{ type: exact_match }]\n`,
        `line 2: The environment variable gsk_… is not set, and its name looks like a key: name the variable that holds the key (as OPENAI_API_KEY), never the key itself`,
      ],
      [
        `target: { type: openai, base_url: "${server.baseUrl}", model: m }\nscorers:\n  - { type: exact_match }\n  - { type: llm_judge, base_url: "${server.baseUrl}", model: j, headers: { x-key: "\${${header}}" } }\n`,
        `line 5: The environment variable hf_Q… is not set, and its name looks like a key: name the variable that holds the key (as OPENAI_API_KEY), never the key itself`,
      ],
      [
        `target: { type: openai, base_url: "${server.baseUrl}", model: m, api_key_env: MY_TEAM_OPENAI_KEY_2024 }\nscorers: [{ type: exact_match }]\n`,
        "line 2: The environment variable MY_TEAM_OPENAI_KEY_2024 is not set",
      ],
    ];
    for (const [tail, message] of cases) {
      await Deno.writeTextFile(`${dir}/s.yaml`, `dataset: d.jsonl\n${tail}`);
      for (const command of ["run", "validate"]) {
        const out = await cli([command, "s.yaml"], dir);
        assert.equal(out.code, 2, `${command}: ${out.stderr}`);
        assert.equal(
          out.stderr,
          `evalpipe: Invalid config "s.yaml" ${message}\n`,
        );
        for (const key of [pasted, header]) {
          assert.ok(!out.stderr.includes(key.slice(0, 12)), out.stderr);
        }
      }
    }
  });
  assert.equal(server.count, 0);
});

Deno.test("cli run --cache replay --record keeps a key pasted where a variable's name goes out of the record, by its first four characters", async () => {
  // A replay reads no variable, so it runs; its record kept the config
  // whole, and the key with it.
  const pasted = "gsk_AbCdEf0123456789XYZsecretKEY0123456789abcdef";
  const header = "hf_QwErTy0123456789AsDfGhJkLzXcVbNm";
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input":"q","expected":"a"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      `dataset: d.jsonl\ntarget: { type: openai, base_url: "http://127.0.0.1:9/v1", model: m, api_key_env: ${pasted} }\nscorers:\n  - { type: exact_match }\n  - { type: llm_judge, base_url: "http://127.0.0.1:9/v1", model: j, rubric: r, headers: { x-key: "k \${${header}}", x-team: "\${TEAM_TOKEN}" } }\n`,
    );
    const out = await cli(
      ["run", "s.yaml", "--cache", "replay", "--record", "r.json"],
      dir,
    );
    assert.equal(out.code, 1, out.stderr);
    const text = await Deno.readTextFile(`${dir}/r.json`);
    for (const key of [pasted, header]) {
      assert.ok(!text.includes(key.slice(0, 8)), key);
    }
    const config = JSON.parse(text).config;
    assert.equal(config.target.api_key_env, "gsk_…");
    assert.deepEqual(config.scorers[1].headers, {
      "x-key": "k ${hf_Q…}",
      "x-team": "${TEAM_TOKEN}",
    });
  });
});
