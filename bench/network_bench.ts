// `deno task bench:network`: whole-process throughput of `cli.ts run` with an
// openai target against a fake chat completions server on loopback that
// answers after a fixed delay. A first run with an empty cache dir (every case
// a call) alternates with a second run over the same cache (every case a hit),
// for several rounds; medians. At concurrency C and delay D the ideal first
// run is C / D cases per second (32 / 0.05 s = 640/s).
//
// Two references run in the same rounds, to tell what limits each run: a bare
// fetch loop sending the same requests (what this machine and server allow a
// client without evalpipe), and the same cases through the `replay` target (no
// network, no cache: evalpipe's start-up plus its pipeline, the floor of a
// cached run).
//
// Usage: deno run -A bench/network_bench.ts [--rounds N] [--cases N]
//          [--concurrency N] [--delay MS]

import { evalpipeArgs } from "./_evalpipe.ts";
import { parseFlags } from "../src/cli/flags.ts";
import { fakeLlm } from "../tests/_fake_llm.ts";

const { flags } = parseFlags(Deno.args, {
  rounds: { type: "integer", default: 5, help: "Rounds of each comparison" },
  cases: { type: "integer", default: 2000, help: "Cases per run" },
  concurrency: { type: "integer", default: 32, help: "Requests in flight" },
  delay: { type: "number", default: 50, help: "The fake model's delay (ms)" },
});
const ROUNDS = flags.rounds;
const CASES = flags.cases;
const CONCURRENCY = flags.concurrency;
const DELAY_MS = flags.delay;
const IDEAL = CONCURRENCY / (DELAY_MS / 1000);
const ROOT = new URL("..", import.meta.url).pathname;
const KEY = "sk-bench-SECRET-0000";

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const server = fakeLlm({ delayMs: DELAY_MS, record: false });
const dir = await Deno.makeTempDir({ prefix: "evalpipe_network_bench_" });

/**
 * Times one process; checks that it made exactly `calls` requests and, when
 * `cache` is given, that stderr reports those hits and calls.
 */
async function time(
  args: string[],
  expect: { calls: number; cache?: string },
): Promise<number> {
  const before = server.count;
  const start = performance.now();
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: dir,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
    env: { NO_COLOR: "1", FAKE_API_KEY: KEY },
  }).output();
  const ms = performance.now() - start;
  const text = new TextDecoder().decode(stderr);
  if (code !== 0) {
    throw new Error(`${args.join(" ")} failed (${code}): ${text}`);
  }
  const calls = server.count - before;
  if (
    calls !== expect.calls ||
    (expect.cache !== undefined && !text.includes(expect.cache))
  ) {
    throw new Error(
      `${args.join(" ")}: expected ${expect.calls} requests${
        expect.cache !== undefined ? ` and "${expect.cache}"` : ""
      }, got ${calls} requests and: ${text}`,
    );
  }
  return ms;
}

const times = { first: [], cached: [], bare: [], replay: [] } as Record<
  "first" | "cached" | "bare" | "replay",
  number[]
>;
try {
  await Deno.writeTextFile(
    `${dir}/data.jsonl`,
    Array.from(
      { length: CASES },
      (_, i) =>
        JSON.stringify({
          input: `question ${i}`,
          expected: `echo: question ${i}`,
          output: `echo: question ${i}`, // read by the replay reference only
        }),
    ).join("\n") + "\n",
  );
  await Deno.writeTextFile(
    `${dir}/suite.yaml`,
    `dataset: data.jsonl
target:
  type: openai
  base_url: ${server.baseUrl}
  model: fake-model
  api_key_env: FAKE_API_KEY
scorers:
  - type: exact_match
concurrency: ${CONCURRENCY}
`,
  );
  await Deno.writeTextFile(
    `${dir}/replay.yaml`,
    `dataset: data.jsonl
target: { type: replay }
scorers:
  - type: exact_match
concurrency: ${CONCURRENCY}
`,
  );
  const cli = [...evalpipeArgs(`${ROOT}cli.ts`), "run"];
  for (let r = 0; r < ROUNDS; r++) {
    const cache = `cache-${r}`;
    const run = [...cli, "suite.yaml", "--cache-dir", cache];
    times.first.push(
      await time(run, {
        calls: CASES,
        cache: `target cache: 0 hits, ${CASES} calls`,
      }),
    );
    times.cached.push(
      await time(run, {
        calls: 0,
        cache: `target cache: ${CASES} hits, 0 calls`,
      }),
    );
    times.bare.push(
      await time([
        "run",
        "-A",
        `${ROOT}bench/_bare_fetch.ts`,
        server.baseUrl,
        String(CASES),
        String(CONCURRENCY),
      ], { calls: CASES }),
    );
    times.replay.push(await time([...cli, "replay.yaml"], { calls: 0 }));
    console.error(
      `round ${r + 1}: ` +
        Object.entries(times).map(([k, v]) =>
          `${k} ${(v.at(-1)! / 1000).toFixed(2)} s`
        ).join(", "),
    );
    await Deno.remove(`${dir}/${cache}`, { recursive: true });
  }
} finally {
  await Deno.remove(dir, { recursive: true });
  await server.close();
}

const ms = {
  first: median(times.first),
  cached: median(times.cached),
  bare: median(times.bare),
  replay: median(times.replay),
};
const rate = (t: number) => CASES / t * 1000;
const ofIdeal = (t: number) => `${(rate(t) / IDEAL * 100).toFixed(0)}%`;
const speedUp = (t: number) => `${(ms.first / t).toFixed(1)}×`;
const row = (cells: string[]) => console.log(`| ${cells.join(" | ")} |`);

console.log(
  `\nevalpipe network throughput: ${CASES} cases, concurrency ${CONCURRENCY}, ` +
    `server delay ${DELAY_MS} ms (ideal ${IDEAL.toFixed(0)} cases/s); ` +
    `whole processes, medians of ${ROUNDS} alternating rounds; ` +
    `Deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cores\n`,
);
row(["run", "wall time", "cases/s", "÷ ideal", "speed-up vs first", "goal"]);
row(["---", "---:", "---:", "---:", "---:", "---"]);
row([
  "first run (empty cache)",
  `${(ms.first / 1000).toFixed(2)} s`,
  rate(ms.first).toFixed(0),
  ofIdeal(ms.first),
  "1×",
  `≥ 90% of ideal: ${rate(ms.first) >= 0.9 * IDEAL ? "met" : "missed"}`,
]);
row([
  "second run (cached)",
  `${(ms.cached / 1000).toFixed(2)} s`,
  rate(ms.cached).toFixed(0),
  ofIdeal(ms.cached),
  speedUp(ms.cached),
  `≥ 20× first: ${ms.first / ms.cached >= 20 ? "met" : "missed"}`,
]);
row([
  "reference: bare fetch loop, same requests",
  `${(ms.bare / 1000).toFixed(2)} s`,
  rate(ms.bare).toFixed(0),
  ofIdeal(ms.bare),
  speedUp(ms.bare),
  "what the machine allows a client",
]);
row([
  "reference: replay target, same cases",
  `${(ms.replay / 1000).toFixed(2)} s`,
  rate(ms.replay).toFixed(0),
  ofIdeal(ms.replay),
  speedUp(ms.replay),
  "floor of a cached run",
]);
