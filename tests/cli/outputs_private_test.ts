// Issue 18 item 7 (outputs) and the RunRecord's URL passwords: records,
// `--out` files and their sidecar follow the user's umask, and a URL
// password in the config never reaches the record or a message.

import assert from "node:assert/strict";
import { cli, cliInShell } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { fakeLlm, reply } from "../_fake_llm.ts";
import { parseRunRecord } from "../../src/record/mod.ts";

const SUITE =
  "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n";

/** The permission bits of `path`, in octal. */
async function modeOf(path: string): Promise<string> {
  return ((await Deno.stat(path)).mode! & 0o777).toString(8).padStart(4, "0");
}

async function runWithUmask(dir: string, umask: string): Promise<void> {
  const { code, stderr } = await cliInShell(
    dir,
    `umask ${umask}; exec "$0" run -A "$1" run s.yaml --out o.ndjson --record r.json`,
  );
  assert.equal(code, 0, stderr);
}

Deno.test("cli run --out and --record follow the umask: 077 makes them 0600, sidecar included", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input":"q","output":"a","expected":"a"}\n',
    );
    await Deno.writeTextFile(`${dir}/s.yaml`, SUITE);
    await runWithUmask(dir, "077");
    for (const file of ["o.ndjson", "o.ndjson.meta.json", "r.json"]) {
      assert.equal(await modeOf(`${dir}/${file}`), "0600", file);
    }
    for (const file of ["o.ndjson", "o.ndjson.meta.json", "r.json"]) {
      await Deno.remove(`${dir}/${file}`);
    }
    await runWithUmask(dir, "022");
    for (const file of ["o.ndjson", "o.ndjson.meta.json", "r.json"]) {
      assert.equal(await modeOf(`${dir}/${file}`), "0644", file);
    }
  });
});

Deno.test("cli run --record keeps no URL password of a target's url or base_url, nor do the messages", async () => {
  await using server = fakeLlm({
    handler: (r) =>
      r.path.endsWith("/ask") ? reply.json({ answer: "a" }) : reply.ok("a"),
  });
  const port = new URL(server.url).port;
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input":"q","expected":"a"}\n',
    );
    const targets = {
      http:
        `{ type: http, url: "http://ann:s3cret-pw@127.0.0.1:${port}/ask", output: answer }`,
      openai:
        `{ type: openai, base_url: "http://ann:s3cret-pw@127.0.0.1:${port}/v1", model: m }`,
    };
    for (const [type, target] of Object.entries(targets)) {
      await Deno.writeTextFile(
        `${dir}/s.yaml`,
        `dataset: d.jsonl\ntarget: ${target}\nscorers: [{ type: exact_match }]\n`,
      );
      const { code, stdout, stderr } = await cli(
        [
          "run",
          "s.yaml",
          "--record",
          "r.json",
          "--out",
          "o.ndjson",
          "--no-cache",
        ],
        dir,
      );
      assert.equal(code, 0, stderr);
      const text = await Deno.readTextFile(`${dir}/r.json`);
      const record = parseRunRecord(text, "r.json");
      assert.equal(record.scores[0]?.status, "scored", type);
      const shown = (record.config.target as Record<string, string>)[
        type === "http" ? "url" : "base_url"
      ];
      assert.equal(
        shown,
        `http://ann:***@127.0.0.1:${port}/${type === "http" ? "ask" : "v1"}`,
      );
      for (
        const [what, body] of [
          ["the record", text],
          ["stdout", stdout],
          ["stderr", stderr],
          ["--out", await Deno.readTextFile(`${dir}/o.ndjson`)],
          ["the sidecar", await Deno.readTextFile(`${dir}/o.ndjson.meta.json`)],
        ]
      ) {
        assert.ok(
          !body!.includes("s3cret"),
          `${type}: ${what} holds the password`,
        );
      }
    }
    // The password did go out, as Basic auth: the call was made with it.
    assert.equal(
      server.requests[0]?.headers.authorization,
      `Basic ${btoa("ann:s3cret-pw")}`,
    );
  });
});

Deno.test("cli run keeps no credential of a base_url's query (?key=...) in the record, the Scores or the messages", async () => {
  // Some APIs take their key in the query (Google's `key`, Azure Functions'
  // `code`); a server or proxy that quotes the request URL in its error
  // body would put it in the target error.
  const key = "AIzaSy-query-secret-123";
  const asked: string[] = [];
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      asked.push(req.url);
      return new Response(`unauthorized: ${req.url}`, { status: 401 });
    },
  );
  const port = server.addr.port;
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input":"q","expected":"a"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      `dataset: d.jsonl\ntarget: { type: openai, base_url: "http://127.0.0.1:${port}/v1?key=${key}", model: m, retries: 0 }\n` +
        "scorers: [{ type: exact_match }]\n",
    );
    const { stdout, stderr } = await cli(
      [
        "run",
        "s.yaml",
        "--record",
        "r.json",
        "--out",
        "o.ndjson",
        "--no-cache",
      ],
      dir,
    );
    assert.ok(asked[0]?.includes(`key=${key}`), "the call went out with it");
    const text = await Deno.readTextFile(`${dir}/r.json`);
    const record = parseRunRecord(text, "r.json");
    assert.equal(
      (record.config.target as Record<string, string>).base_url,
      `http://127.0.0.1:${port}/v1?key=***`,
    );
    assert.match(record.scores[0]?.reason ?? "", /HTTP 401/);
    for (
      const [what, body] of [
        ["the record", text],
        ["stdout", stdout],
        ["stderr", stderr],
        ["--out", await Deno.readTextFile(`${dir}/o.ndjson`)],
        ["the sidecar", await Deno.readTextFile(`${dir}/o.ndjson.meta.json`)],
      ]
    ) {
      assert.ok(!body!.includes("query-secret"), `${what} holds the key`);
    }
  });
});

Deno.test("cli run keeps no URL password in the message of a target that cannot be reached", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input":"q","expected":"a"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      'dataset: d.jsonl\ntarget: { type: http, url: "http://ann:s3cret-pw@127.0.0.1:1/ask", output: answer, retries: 0 }\n' +
        "scorers: [{ type: exact_match }]\n",
    );
    const { stdout, stderr } = await cli(
      ["run", "s.yaml", "--record", "r.json", "--no-cache"],
      dir,
    );
    const text = await Deno.readTextFile(`${dir}/r.json`);
    assert.match(text, /target error: /);
    for (const body of [text, stdout, stderr]) {
      assert.ok(!body.includes("s3cret"), body);
    }
  });
});

Deno.test("cli run --record keeps no credential a target's headers write out, only which header and its scheme", async () => {
  await using server = fakeLlm({ handler: () => reply.json({ answer: "a" }) });
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input":"q","expected":"a"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      `dataset: d.jsonl\ntarget: { type: http, url: "${server.url}/ask", output: answer, headers: { authorization: "Bearer sk-literal-0042xyz", x-api-key: "lit-key-7731", x-trace: "\${TRACE}", x-auth-token: "\${tok-unclosed-0042" } }\n` +
        "scorers: [{ type: exact_match }]\n",
    );
    const { code, stderr } = await cli(
      ["run", "s.yaml", "--record", "r.json", "--no-cache"],
      dir,
      { TRACE: "t-1" },
    );
    assert.equal(code, 0, stderr);
    const text = await Deno.readTextFile(`${dir}/r.json`);
    assert.ok(!text.includes("sk-literal-0042xyz"), text);
    assert.ok(!text.includes("lit-key-7731"), text);
    const headers = (parseRunRecord(text, "r.json").config.target as {
      headers: Record<string, string>;
    }).headers;
    assert.deepEqual(headers, {
      authorization: "Bearer ***",
      "x-api-key": "***",
      "x-trace": "${TRACE}",
      // No reference: the text is written out, an unclosed "${" and all.
      "x-auth-token": "***",
    });
    // The call itself carried them.
    assert.equal(
      server.requests[0]?.headers.authorization,
      "Bearer sk-literal-0042xyz",
    );
  });
});
