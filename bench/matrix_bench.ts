// `deno task bench:matrix`: the wall time of a two-target matrix against the
// slower target alone. A loopback HTTP service in another process answers
// two paths, one fast and one slow; `cli.ts run` calls them as two `http`
// targets of one suite. Each round times, in turn, `--target slow`,
// `--target fast` and `--matrix fast,slow` (cache off: every case a call);
// medians over the rounds. The matrix gives each target the run's
// concurrency, so it should take the slow target's time, not the sum:
// the claim is matrix / slow <= 1.10.
//
// Usage: deno run -A bench/matrix_bench.ts [--rounds N] [--cases N]
//          [--concurrency N] [--fast MS] [--slow MS]

import { evalpipeArgs } from "./_evalpipe.ts";
import { parseFlags } from "../src/cli/flags.ts";

const { flags } = parseFlags(Deno.args, {
  rounds: { type: "integer", default: 5, help: "Rounds of each run" },
  cases: { type: "integer", default: 400, help: "Cases per run" },
  concurrency: { type: "integer", default: 8, help: "Calls in flight" },
  fast: { type: "number", default: 10, help: "The fast target's delay (ms)" },
  slow: { type: "number", default: 40, help: "The slow target's delay (ms)" },
});
const ROOT = new URL("..", import.meta.url).pathname;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

// The service, in a process of its own: its work is not this process's.
const service = new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    "-A",
    `${ROOT}bench/_latency_server.ts`,
    "--delay",
    `fast=${flags.fast}`,
    "--delay",
    `slow=${flags.slow}`,
  ],
  stdin: "null",
  stdout: "piped",
  stderr: "inherit",
}).spawn();
const reader = service.stdout.pipeThrough(new TextDecoderStream()).getReader();
let first = "";
while (!first.includes("\n")) {
  const { value, done } = await reader.read();
  if (done) throw new Error("the service ended before printing its port");
  first += value;
}
const port = Number(first.trim());

const dir = await Deno.makeTempDir({ prefix: "evalpipe_matrix_bench_" });
try {
  await Deno.writeTextFile(
    `${dir}/d.jsonl`,
    Array.from(
      { length: flags.cases },
      (_, i) => JSON.stringify({ input: `q${i}`, expected: `Q${i}` }),
    ).join("\n") + "\n",
  );
  const target = (name: string) =>
    `{ type: http, url: "http://127.0.0.1:${port}/${name}", body: { input: "{{input}}" }, output: answer }`;
  await Deno.writeTextFile(
    `${dir}/suite.yaml`,
    `dataset: d.jsonl\ntargets:\n  fast: ${target("fast")}\n  slow: ${
      target("slow")
    }\nscorers: [{ type: exact_match }]\nconcurrency: ${flags.concurrency}\n`,
  );

  const time = async (choice: string[], scores: number): Promise<number> => {
    const start = performance.now();
    const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        ...evalpipeArgs(`${ROOT}cli.ts`),
        "run",
        "suite.yaml",
        "--no-cache",
        ...choice,
      ],
      cwd: dir,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const ms = performance.now() - start;
    const lines = new TextDecoder().decode(stdout).trim().split("\n").length;
    if (code !== 0 || lines !== scores) {
      throw new Error(
        `run ${
          choice.join(" ")
        }: exit ${code}, ${lines} Scores (expected ${scores}): ${
          new TextDecoder().decode(stderr)
        }`,
      );
    }
    return ms;
  };

  const runs = {
    slow: [] as number[],
    fast: [] as number[],
    matrix: [] as number[],
  };
  // A warm-up round, not counted: compile caches, the service's first calls.
  await time(["--target", "slow"], flags.cases);
  for (let r = 0; r < flags.rounds; r++) {
    runs.slow.push(await time(["--target", "slow"], flags.cases));
    runs.fast.push(await time(["--target", "fast"], flags.cases));
    runs.matrix.push(
      await time(["--matrix", "fast,slow"], 2 * flags.cases),
    );
  }
  const slow = median(runs.slow);
  const fast = median(runs.fast);
  const matrix = median(runs.matrix);
  const ideal = (flags.cases / flags.concurrency) * flags.slow;
  console.log(
    `matrix bench: ${flags.cases} cases, concurrency ${flags.concurrency}, fast ${flags.fast} ms, slow ${flags.slow} ms, ${flags.rounds} rounds (medians)`,
  );
  console.log(`  --target fast        ${fast.toFixed(0)} ms`);
  console.log(
    `  --target slow        ${slow.toFixed(0)} ms (calls alone: ${
      ideal.toFixed(0)
    } ms)`,
  );
  console.log(`  --matrix fast,slow   ${matrix.toFixed(0)} ms`);
  console.log(
    `  matrix / slow = ${(matrix / slow).toFixed(3)} (claim: <= 1.10)`,
  );
  console.log(
    `  load average: ${(await Deno.readTextFile("/proc/loadavg")).trim()}`,
  );
  if (matrix / slow > 1.1) Deno.exitCode = 1;
} finally {
  service.kill();
  await service.status;
  await reader.cancel();
  await Deno.remove(dir, { recursive: true });
}
