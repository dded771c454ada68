// Open files: network calls in flight are bounded by the open-file limit
// (`ulimit -n`), with a warning, so that concurrency 512 under a limit of 256
// scores every case instead of failing most as a bare "fetch failed"; and
// a call that still meets EMFILE names it. Real processes under a real
// limit, against a server on loopback.

import assert from "node:assert/strict";
import {
  cliWithShellPrefix,
  type Outcome,
  type ShellOptions,
} from "../_cli.ts";
import { fakeLlm } from "../_fake_llm.ts";
import { withTempDir } from "../_proc.ts";
import { CallSlots, callsUnder } from "../../src/net/_slots.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** Runs `cli.ts ...args` (or `options.program`) under `ulimit -n limit`. */
function underLimit(
  limit: number,
  args: string[],
  cwd: string,
  options: ShellOptions = {},
): Promise<Outcome> {
  return cliWithShellPrefix('ulimit -n "$EVALPIPE_TEST_LIMIT";', args, cwd, {
    ...options,
    env: { EVALPIPE_TEST_LIMIT: String(limit) },
  });
}

Deno.test("cli run at concurrency 512 under ulimit -n 256 scores every case, with a warning", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm({ delayMs: 100, record: false });
    const cases = Array.from(
      { length: 1500 },
      (_, i) => JSON.stringify({ input: `q${i}`, expected: `echo: q${i}` }),
    );
    await Deno.writeTextFile(`${dir}/data.jsonl`, cases.join("\n") + "\n");
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: data.jsonl
target:
  type: openai
  base_url: ${server.baseUrl}
  model: m
  retries: 0
scorers:
  - type: exact_match
concurrency: 512
`,
    );
    const out = await underLimit(
      256,
      ["run", "suite.yaml", "--no-cache", "--out", "s.jsonl"],
      dir,
    );
    assert.equal(out.code, 0, out.stderr);
    assert.match(
      out.stderr,
      /evalpipe: warning: at most 112 network calls at once under the open-file limit \(ulimit -n 256\); the others wait/,
    );
    const scores = (await Deno.readTextFile(`${dir}/s.jsonl`)).trim()
      .split("\n").map((l) => JSON.parse(l));
    assert.equal(scores.length, 1500);
    assert.deepEqual(
      scores.filter((s) => s.status !== "scored").map((s) => s.reason),
      [],
    );
    assert.ok(server.count >= 1500);
  });
});

Deno.test("httpTarget names EMFILE when the process is out of file descriptors", async () => {
  await withTempDir(async (dir) => {
    await using server = fakeLlm();
    await using other = fakeLlm();
    // A first call, as a run makes, then every descriptor taken, then a call
    // that needs a new connection.
    await Deno.writeTextFile(
      `${dir}/exhaust.ts`,
      `import { httpTarget } from "${ROOT}mod.ts";
await httpTarget({ url: "${other.url}/answer" }).call({ input: "q" }, {});
const files = [];
for (;;) {
  try { files.push(Deno.openSync("/dev/null")); }
  catch (error) { if (!/os error 24/.test(String(error))) throw error; break; }
}
const target = httpTarget({ url: "${server.url}/answer", retries: 0 });
try { await target.call({ input: "q" }, {}); console.log("answered"); }
catch (error) { console.log(error.message); }
`,
    );
    const out = await underLimit(64, [], dir, {
      flags: ["--config", `${ROOT}deno.json`],
      program: `${dir}/exhaust.ts`,
    });
    assert.equal(out.code, 0, out.stderr);
    assert.match(
      out.stdout,
      /^POST http:\/\/127\.0\.0\.1:\d+\/answer failed: too many open files \(EMFILE, ulimit -n 64\): lower concurrency or raise the limit \(after 1 attempt\)\n$/,
    );
  });
});

Deno.test("callsUnder keeps half the open-file limit for the rest of the run", () => {
  assert.equal(callsUnder(256), 112);
  assert.equal(callsUnder(1024), 496);
  assert.equal(callsUnder(20), 8);
  assert.equal(callsUnder(undefined), Infinity);
});

Deno.test("CallSlots hands out its slots, then queues callers in order, and an abort leaves the queue", async () => {
  let warned = 0;
  const slots = new CallSlots(2, () => warned++);
  assert.equal(slots.acquire(), undefined);
  assert.equal(slots.acquire(), undefined);
  const order: string[] = [];
  const abort = new AbortController();
  const a = slots.acquire()!.then(() => order.push("a"));
  const gone = slots.acquire(abort.signal)!.catch(() => order.push("aborted"));
  const c = slots.acquire()!.then(() => order.push("c"));
  abort.abort();
  await gone;
  slots.release();
  await a;
  slots.release();
  await c;
  assert.deepEqual(order, ["aborted", "a", "c"]);
  assert.equal(warned, 1);
});
