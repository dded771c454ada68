// `deno task bench:shard`: what `run --shard k/n` and `merge` buy and cost.
//
// 1. Throughput: one `cli.ts run` process at concurrency C against 4 shard
//    processes (`--shard k/4`, each at concurrency C) started at once, against
//    a fake chat completions server on loopback (in this process, not the
//    runs') that answers after a fixed delay. Wall time from the first spawn
//    to the last exit, process start-up included; medians of the rounds.
//    Network-bound work: the ideal ratio is 4 (less the largest shard's excess
//    over a quarter, and start-up).
// 2. Balance: how the hash split spreads 10^5 ids over 100 shards (the largest
//    shard's size over the mean).
// 3. Merge cost: a 10^5-case replay suite run as 100 shards, then `merge` of
//    the 100 records (wall time of the process, and per shard), checked
//    against the unsharded run Score by Score.
//
// Usage: deno run -A bench/shard_bench.ts [--rounds N] [--cases N]
//          [--concurrency N] [--delay MS] [--merge-cases N] [--merge-shards N]

import { evalpipeArgs } from "./_evalpipe.ts";
import { parseFlags } from "../src/cli/flags.ts";
import { fakeLlm } from "../tests/_fake_llm.ts";
import { shardOf } from "../src/run/select.ts";

const { flags } = parseFlags(Deno.args, {
  rounds: { type: "integer", default: 3, help: "Rounds of the comparison" },
  cases: { type: "integer", default: 4000, help: "Cases per run" },
  concurrency: { type: "integer", default: 8, help: "Concurrency per process" },
  delay: { type: "number", default: 50, help: "The fake model's delay (ms)" },
  shards: { type: "integer", default: 4, help: "Shards to compare with one" },
  "merge-cases": { type: "integer", default: 100_000, help: "Cases to merge" },
  "merge-shards": { type: "integer", default: 100, help: "Shards to merge" },
});
const ROOT = new URL("..", import.meta.url).pathname;
const CLI = `${ROOT}cli.ts`;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** Runs evalpipe with these args, stdout to `out` (or nowhere); checks it. */
async function evalpipe(args: string[], cwd: string, out?: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...evalpipeArgs(CLI), ...args],
    cwd,
    stdin: "null",
    stdout: out === undefined ? "null" : "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const [status, text, err] = await Promise.all([
    child.status,
    out === undefined
      ? Promise.resolve(undefined)
      : new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  if (status.code !== 0) {
    throw new Error(
      `evalpipe ${args.join(" ")} exited ${status.code}:\n${err}`,
    );
  }
  if (out !== undefined) await Deno.writeTextFile(out, text!);
}

const dir = await Deno.makeTempDir({ prefix: "evalpipe_shard_bench_" });
const server = fakeLlm({ delayMs: flags.delay, record: false });
try {
  // 1. Throughput.
  const lines: string[] = [];
  for (let i = 0; i < flags.cases; i++) {
    lines.push(
      JSON.stringify({
        input: `question ${i}`,
        expected: `echo: question ${i}`,
      }),
    );
  }
  await Deno.writeTextFile(`${dir}/cases.jsonl`, lines.join("\n") + "\n");
  await Deno.writeTextFile(
    `${dir}/suite.yaml`,
    `dataset: cases.jsonl
target: { type: openai, base_url: "${server.baseUrl}", model: m }
scorers: [{ type: exact_match }]
concurrency: ${flags.concurrency}
`,
  );
  const one: number[] = [];
  const many: number[] = [];
  const n = flags.shards;
  for (let round = 0; round < flags.rounds; round++) {
    let t = performance.now();
    await evalpipe(["run", "suite.yaml", "--no-cache"], dir);
    one.push(performance.now() - t);
    t = performance.now();
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        evalpipe([
          "run",
          "suite.yaml",
          "--no-cache",
          "--shard",
          `${i + 1}/${n}`,
          "--out",
          `shard-${i + 1}.ndjson`,
        ], dir)),
    );
    many.push(performance.now() - t);
    console.error(
      `round ${round + 1}: 1 process ${
        one.at(-1)!.toFixed(0)
      } ms, ${n} shards ${many.at(-1)!.toFixed(0)} ms`,
    );
  }
  const sizes = new Array(n).fill(0);
  for (let i = 1; i <= flags.cases; i++) {
    sizes[shardOf(`cases.jsonl#${i}`, n) - 1]++;
  }
  const ideal = (flags.cases / flags.concurrency) * flags.delay;
  const t1 = median(one);
  const tn = median(many);
  console.log(
    `## throughput: ${flags.cases} cases, concurrency ${flags.concurrency} per process, ${flags.delay} ms latency`,
  );
  console.log(
    `1 process:        ${t1.toFixed(0)} ms (${
      (flags.cases / t1 * 1000).toFixed(0)
    } cases/s; ideal ${ideal.toFixed(0)} ms)`,
  );
  console.log(
    `${n} shards at once: ${tn.toFixed(0)} ms (${
      (flags.cases / tn * 1000).toFixed(0)
    } cases/s; largest shard ${Math.max(...sizes)} of ${flags.cases})`,
  );
  console.log(
    `throughput ratio: ${(t1 / tn).toFixed(2)}x (ideal ${
      (flags.cases / Math.max(...sizes)).toFixed(2)
    }x for this split)`,
  );

  // 2. Balance.
  const counts = new Array(100).fill(0);
  for (let i = 1; i <= 100_000; i++) {
    counts[shardOf(`cases.jsonl#${i}`, 100) - 1]++;
  }
  const mean = 100_000 / 100;
  console.log(`## balance: 10^5 ids over 100 shards`);
  console.log(
    `largest shard / mean: ${
      (Math.max(...counts) / mean).toFixed(3)
    } (largest ${Math.max(...counts)}, smallest ${
      Math.min(...counts)
    }, mean ${mean})`,
  );

  // 3. Merge cost.
  const m = flags["merge-shards"];
  const mc = flags["merge-cases"];
  const big: string[] = [];
  for (let i = 0; i < mc; i++) {
    big.push(
      JSON.stringify({
        input: `q${i}`,
        output: i % 3 ? "a" : "b",
        expected: "a",
      }),
    );
  }
  await Deno.mkdir(`${dir}/merge`);
  await Deno.writeTextFile(`${dir}/merge/cases.jsonl`, big.join("\n") + "\n");
  await Deno.writeTextFile(
    `${dir}/merge/suite.yaml`,
    "dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
  );
  await evalpipe(
    ["run", "suite.yaml"],
    `${dir}/merge`,
    `${dir}/merge/whole.ndjson`,
  );
  // Two shards at a time: the machine has two cores.
  for (let k = 1; k <= m; k += 2) {
    await Promise.all(
      [k, k + 1].filter((j) => j <= m).map((j) =>
        evalpipe([
          "run",
          "suite.yaml",
          "--shard",
          `${j}/${m}`,
          "--record",
          `r${j}.json`,
        ], `${dir}/merge`)
      ),
    );
  }
  const merges: number[] = [];
  for (let round = 0; round < flags.rounds; round++) {
    const t = performance.now();
    await evalpipe(
      [
        "merge",
        ...Array.from({ length: m }, (_, i) => `r${i + 1}.json`),
        "--record",
        "merged.json",
      ],
      `${dir}/merge`,
      `${dir}/merge/merged.ndjson`,
    );
    merges.push(performance.now() - t);
  }
  const same = await Deno.readTextFile(`${dir}/merge/merged.ndjson`) ===
    await Deno.readTextFile(`${dir}/merge/whole.ndjson`);
  if (!same) {
    throw new Error("the merged Scores differ from the unsharded run's");
  }
  const tm = median(merges);
  console.log(`## merge: ${m} shard records of a ${mc}-case run`);
  console.log(
    `merge: ${tm.toFixed(0)} ms in all (process start-up included), ${
      (tm / m).toFixed(1)
    } ms per shard; merged Scores equal the unsharded run's`,
  );
  console.log(
    `load average: ${(await Deno.readTextFile("/proc/loadavg")).trim()}`,
  );
} finally {
  await server.close();
  await Deno.remove(dir, { recursive: true });
}
