// A service that declares its charset (`text/plain; charset=shift_jis`, a
// system older than UTF-8) is read in it, against a real server on loopback:
// fetch's `response.text()` reads every body as UTF-8, so a Latin-1 "café"
// became "caf\u{fffd}" and was scored as a wrong answer.

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

// "日本" in Shift_JIS; "café" in Latin-1; "café" in UTF-8.
const BODIES: Record<string, [number[], string | undefined]> = {
  sjis: [[0x93, 0xfa, 0x96, 0x7b], "text/plain; charset=Shift_JIS"],
  latin1: [[0x63, 0x61, 0x66, 0xe9], 'text/plain; charset="iso-8859-1"'],
  utf8: [[0x63, 0x61, 0x66, 0xc3, 0xa9], "text/plain"],
  unknown: [[0x63, 0x61, 0x66, 0xc3, 0xa9], "text/plain; charset=x-nonesuch"],
  // JSON is UTF-8 whatever its label (RFC 8259): the label is not obeyed.
  json: [
    [0x63, 0x61, 0x66, 0xc3, 0xa9],
    "application/json; charset=iso-8859-1",
  ],
  problem: [
    [0x63, 0x61, 0x66, 0xc3, 0xa9],
    "application/problem+json;charset=latin1",
  ],
};

Deno.test("cli run: an http target reads a body in the charset its Content-Type declares, declared length or streamed", async () => {
  for (const streamed of [false, true]) {
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      async (request) => {
        const { q } = await request.json();
        const [bytes, type] = BODIES[q]!;
        const body = new Uint8Array(bytes);
        const headers: Record<string, string> = type === undefined
          ? {}
          : { "content-type": type };
        // A stream has no declared length: read chunk by chunk.
        return new Response(
          streamed ? ReadableStream.from([body]) : body,
          { headers },
        );
      },
    );
    try {
      await withTempDir(async (dir) => {
        const cases = [
          { id: "sjis", input: "sjis", expected: "日本" },
          { id: "latin1", input: "latin1", expected: "café" },
          { id: "utf8", input: "utf8", expected: "café" },
          { id: "unknown", input: "unknown", expected: "café" },
          { id: "json", input: "json", expected: "café" },
          { id: "problem", input: "problem", expected: "café" },
        ];
        await Deno.writeTextFile(
          `${dir}/cases.jsonl`,
          cases.map((c) => JSON.stringify(c)).join("\n") + "\n",
        );
        await Deno.writeTextFile(
          `${dir}/suite.yaml`,
          `dataset: cases.jsonl
target: { type: http, url: "http://127.0.0.1:${server.addr.port}/", body: { q: "{{input}}" } }
scorers: [{ type: exact_match }]
`,
        );
        const out = await cli(["run", "suite.yaml", "--cache", "off"], dir);
        assert.equal(out.code, 0, out.stderr);
        const scores = out.stdout.trimEnd().split("\n").map((l) =>
          JSON.parse(l)
        );
        assert.deepEqual(
          scores.map((s) => [s.example_id, s.value, s.reason ?? null]),
          cases.map((c) => [`cases.jsonl#${c.id}`, 1, null]),
          `streamed: ${streamed}`,
        );
      });
    } finally {
      await server.shutdown();
    }
  }
});
