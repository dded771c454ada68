// A subprocess target or scorer inherits the environment, keys included:
// what it echoes of a secret the config sends (a judge's `api_key_env`, a
// `${VAR}` header, a URL's password) in its stderr, its output or its
// verdict's reason must reach no Score, record, unit file or report.

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { embeddings, fakeLlm, reply } from "../_fake_llm.ts";
import { withTempDir } from "../_proc.ts";

const KEY = "sk-judge-0123456789abcdef";
const TOKEN = "tok/with+base64?chars";
const PASSWORD = "url-pass-4567";

Deno.test("cli run hides the config's secrets that a subprocess target or scorer echoes, in every output", async () => {
  await using server = fakeLlm({
    handler: embeddings(
      () => [1, 0],
      () => reply.ok('{"score": 0.8, "reason": "fine"}'),
    ),
  });
  await withTempDir(async (dir) => {
    const cases = [
      "FAILENV", // the target fails, its stderr quoting the key
      "ECHOKEY", // the target answers with the key
      "ECHOB64", // ... base64-encoded
      "ECHOTOOL", // the header token, URL-encoded
      "SCFAIL", // the scorer fails, its stderr quoting the URL password
      "SCREASON", // the scorer's reason quotes the key
      "SCBAD", // the scorer prints a broken verdict quoting the key
      "PLAIN",
    ];
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      cases.map((c, i) =>
        JSON.stringify({ id: `c${i}`, input: c, expected: "fine" }) + "\n"
      )
        .join(""),
    );
    await Deno.writeTextFile(
      `${dir}/tgt.sh`,
      `in=$(cat)
case "$in" in
  *FAILENV*) echo "AuthenticationError: key=$JUDGE_KEY" >&2; exit 1;;
  *ECHOKEY*) echo "the key is $JUDGE_KEY";;
  *ECHOB64*) printf %s "$JUDGE_KEY" | base64;;
  *ECHOTOOL*) echo "tok%2Fwith%2Bbase64%3Fchars";;
  *) echo "fine";;
esac
`,
    );
    await Deno.writeTextFile(
      `${dir}/sc.sh`,
      `in=$(cat)
case "$in" in
  *SCFAIL*) echo "cannot reach http://ann:${PASSWORD}@127.0.0.1:9/" >&2; exit 3;;
  *SCREASON*) printf '{"score": 1, "reason": "key %s"}\\n' "$JUDGE_KEY";;
  *SCBAD*) printf 'not json %s\\n' "$JUDGE_KEY";;
  *) printf '{"score": 1}\\n';;
esac
`,
    );
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      `dataset: d.jsonl
target: { type: subprocess, cmd: sh tgt.sh }
scorers:
  - { type: subprocess, name: sc, cmd: sh sc.sh }
  - type: llm_judge
    name: j
    base_url: ${server.baseUrl}
    model: m
    api_key_env: JUDGE_KEY
    rubric: "Score {{output}}"
  - type: semantic_similarity
    base_url: ${server.baseUrl.replace("//", `//ann:${PASSWORD}@`)}
    model: e
    headers: { x-team: "\${TEAM_TOKEN}" }
`,
    );
    const out = await cli(
      [
        "run",
        "s.yaml",
        "--out",
        "o.ndjson",
        "--record",
        "r.json",
        "--units",
        "u.ndjson",
        "--html",
        "h.html",
        "--junit",
        "j.xml",
        "--markdown",
        "m.md",
        "--annotations",
      ],
      dir,
      { JUDGE_KEY: KEY, TEAM_TOKEN: TOKEN },
    );
    assert.equal(out.code, 0, out.stderr);
    const written = [
      out.stdout,
      out.stderr,
      ...await Promise.all(
        ["o.ndjson", "r.json", "u.ndjson", "h.html", "j.xml", "m.md"].map((f) =>
          Deno.readTextFile(`${dir}/${f}`)
        ),
      ),
    ].join("\n");
    for (
      const form of [
        KEY,
        btoa(KEY).slice(0, 16),
        TOKEN,
        encodeURIComponent(TOKEN),
        PASSWORD,
      ]
    ) {
      assert.ok(!written.includes(form), `${form} leaked`);
    }
    const scores = (await Deno.readTextFile(`${dir}/o.ndjson`)).trim()
      .split("\n").map((l) => JSON.parse(l));
    const sc = (i: number) =>
      scores.find((s) => s.metric === "sc" && s.unit_id === `d.jsonl#c${i}`);
    assert.equal(
      sc(0).reason,
      'target error: target "sh tgt.sh" exited with status 1: AuthenticationError: key=***',
    );
    for (const i of [1, 2, 3]) {
      assert.equal(sc(i).status, "blocked");
      assert.match(
        sc(i).reason,
        /answered with a secret the config sends .*: the answer is not kept$/,
      );
    }
    assert.match(sc(4).reason, /cannot reach http:\/\/\*\*\*@127/);
    assert.equal(sc(5).reason, "key ***");
    assert.equal(sc(5).value, 1);
    assert.match(sc(6).reason, /invalid verdict JSON: "not json \*\*\*"/);
    assert.equal(sc(7).value, 1);
  });
});

Deno.test("cli score --config hides the suite's secrets that its scorer echoes", async () => {
  await withTempDir(async (dir) => {
    const secret = "team-token-0123456789";
    await Deno.writeTextFile(
      `${dir}/sc.sh`,
      `cat >/dev/null\nprintf '{"score": 1, "reason": "sent %s"}\\n' "$TEAM_TOKEN"\n`,
    );
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      `dataset: d.jsonl
target:
  type: http
  url: http://127.0.0.1:9/
  headers: { authorization: "Bearer \${TEAM_TOKEN}" }
scorers: [{ type: subprocess, name: sc, cmd: sh sc.sh }]
`,
    );
    await Deno.writeTextFile(
      `${dir}/u.ndjson`,
      '{"input": "q", "output": "a"}\n',
    );
    const out = await cli(["score", "--config", "s.yaml", "u.ndjson"], dir, {
      TEAM_TOKEN: secret,
    });
    assert.equal(out.code, 0, out.stderr);
    // Before, the reason carried the token: score does not go through run.
    assert.equal(JSON.parse(out.stdout).reason, "sent ***");
    assert.ok(!out.stdout.includes(secret) && !out.stderr.includes(secret));
  });
});

Deno.test("cli run hides a secret that a program's clipped stderr cuts in two", async () => {
  // A long stderr is quoted by its start and its end, cut before the guard
  // sees it: a key across a cut was kept in part ("key=sk-jud…").
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input": "a"}\n{"input": "b"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/tgt.sh`,
      `in=$(cat)
case "$in" in
  *'"a"'*) head -c 490 /dev/zero | tr '\\0' w >&2; echo "key=$JUDGE_KEY" >&2
    head -c 3000 /dev/zero | tr '\\0' v >&2;;
  *) head -c 3000 /dev/zero | tr '\\0' w >&2; echo "key=$JUDGE_KEY" >&2
    head -c 1490 /dev/zero | tr '\\0' v >&2;;
esac
exit 1
`,
    );
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      `dataset: d.jsonl
target: { type: subprocess, cmd: sh tgt.sh }
scorers:
  - type: exact_match
  - type: llm_judge
    base_url: http://127.0.0.1:9/v1
    model: m
    api_key_env: JUDGE_KEY
    rubric: "Score {{output}}"
`,
    );
    const out = await cli(
      ["run", "s.yaml", "--units", "u.ndjson"],
      dir,
      { JUDGE_KEY: KEY },
    );
    const written = [out.stdout, await Deno.readTextFile(`${dir}/u.ndjson`)]
      .join("\n");
    assert.match(written, /key=\*\*\*…/);
    assert.match(written, /…\*\*\*\\n/);
    for (const part of [KEY.slice(0, 6), KEY.slice(-6)]) {
      assert.ok(!written.includes(part), `${part} leaked`);
    }
  });
});

Deno.test("cli run hides the password of an http target's URL in any spelling fetch reads, when a subprocess scorer echoes it", async () => {
  // Only a URL starting "scheme://" was read for secrets; fetch reads
  // "http:ann:pw@host" as "http://ann:pw@host", and sends the password of
  // each as Basic auth. (A scheme a case fills, "{{metadata.scheme}}://",
  // is refused beside a password: url_credentials_test.ts.)
  await using server = fakeLlm({
    handler: () => ({ kind: "raw", status: 200, body: "fine" }),
  });
  for (
    const url of [
      server.url.replace("http://", `http:ann:${PASSWORD}@`),
      server.url.replace("http://", `HTTP:\\\\ann:${PASSWORD}@`),
    ]
  ) {
    await withTempDir(async (dir) => {
      await Deno.writeTextFile(
        `${dir}/d.jsonl`,
        JSON.stringify({
          id: "c",
          input: "q",
          expected: "fine",
          metadata: { scheme: "http", s: "" },
        }) + "\n",
      );
      await Deno.writeTextFile(
        `${dir}/sc.sh`,
        `cat >/dev/null; echo "cannot reach ${PASSWORD}" >&2; exit 3\n`,
      );
      await Deno.writeTextFile(
        `${dir}/s.yaml`,
        `dataset: d.jsonl
target: { type: http, url: ${JSON.stringify(`${url}/a`)} }
scorers:
  - { type: subprocess, name: sc, cmd: sh sc.sh }
`,
      );
      const out = await cli(["run", "s.yaml", "--out", "o.ndjson"], dir);
      const scores = await Deno.readTextFile(`${dir}/o.ndjson`);
      assert.match(scores, /cannot reach \*\*\*/, `${url}: ${out.stderr}`);
      for (const text of [out.stdout, out.stderr, scores]) {
        assert.ok(!text.includes(PASSWORD), `${url}: ${text}`);
      }
    });
  }
});
