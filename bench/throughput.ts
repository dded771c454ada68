// `deno task bench`: whole-process throughput of evalpipe beside baselines
// run in the same script, alternating A and B over several rounds; medians
// and ratios. Machines differ; ratios against a baseline measured here are
// what to compare.
//
// Usage: deno run -A bench/throughput.ts [--rounds N] [--units N] [--cases N]

import { parseArgs } from "../src/_args.ts";

const { flags } = parseArgs(Deno.args, {
  rounds: { type: "number" },
  units: { type: "number" },
  cases: { type: "number" },
});
const ROUNDS = (flags.rounds as number | undefined) ?? 3;
const UNITS = (flags.units as number | undefined) ?? 400;
const CASES = (flags.cases as number | undefined) ?? 100_000;
const ROOT = new URL("..", import.meta.url).pathname;
const SCORER = `cat >/dev/null; echo '{"score": 1}'`;

const dir = await Deno.makeTempDir({ prefix: "evalpipe_bench_" });
const units = Array.from(
  { length: UNITS },
  (_, i) =>
    JSON.stringify({
      input: `question ${i}`,
      expected: "answer",
      output: "answer",
    }),
).join("\n") + "\n";
await Deno.writeTextFile(`${dir}/units.ndjson`, units);
{
  const file = await Deno.open(`${dir}/data.jsonl`, {
    write: true,
    create: true,
  });
  const enc = new TextEncoder();
  let chunk = "";
  for (let i = 0; i < CASES; i++) {
    chunk += JSON.stringify({
      id: i,
      input: `question ${i}`,
      expected: "answer",
      output: i % 3 ? "answer" : "nope",
    }) +
      "\n";
    if (chunk.length > 1 << 20) {
      await file.write(enc.encode(chunk));
      chunk = "";
    }
  }
  await file.write(enc.encode(chunk));
  file.close();
}
await Deno.writeTextFile(
  `${dir}/suite.yaml`,
  "dataset: data.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
);

async function time(args: string[], stdinPath?: string): Promise<number> {
  const start = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    stdin: stdinPath !== undefined ? "piped" : "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  if (stdinPath !== undefined) {
    await (await Deno.open(stdinPath)).readable.pipeTo(child.stdin);
  }
  const { code, stderr } = await child.output();
  const ms = performance.now() - start;
  if (code !== 0) {
    throw new Error(
      `${args.join(" ")} failed: ${new TextDecoder().decode(stderr)}`,
    );
  }
  return ms;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

interface Row {
  name: string;
  n: number;
  a: number[];
  b: number[];
  goal: string;
}
const rows: Row[] = [];

async function compare(
  name: string,
  n: number,
  goal: string,
  a: () => Promise<number>,
  b: () => Promise<number>,
) {
  const row: Row = { name, n, a: [], b: [], goal };
  for (let r = 0; r < ROUNDS; r++) {
    row.a.push(await a());
    row.b.push(await b());
  }
  rows.push(row);
  const ma = median(row.a);
  const mb = median(row.b);
  console.error(
    `${name}: evalpipe ${(n / ma * 1000).toFixed(0)}/s, baseline ${
      (n / mb * 1000).toFixed(0)
    }/s, ratio ${(mb / ma).toFixed(2)}`,
  );
}

try {
  for (const c of [1, 4]) {
    await compare(
      `score, trivial sh scorer, c=${c}`,
      UNITS,
      "≥ 0.9× bare spawn (issue 6)",
      () =>
        time(
          [
            "run",
            "-A",
            "cli.ts",
            "score",
            "--scorer",
            SCORER,
            "--name",
            "t",
            "--concurrency",
            String(c),
          ],
          `${dir}/units.ndjson`,
        ),
      () =>
        time(
          ["run", "-A", "bench/_bare_spawn.ts", SCORER, String(c)],
          `${dir}/units.ndjson`,
        ),
    );
  }
  // The same trivial Python scorer, one process per case vs one long-lived process.
  await Deno.writeTextFile(
    `${dir}/per_case.py`,
    'import json, sys\ncase = json.load(sys.stdin)\nprint(json.dumps({"score": 1.0 if case["output"] == case.get("expected") else 0.0}))\n',
  );
  await Deno.writeTextFile(
    `${dir}/persistent.py`,
    'import json, sys\nfor line in sys.stdin:\n    case = json.loads(line)\n    print(json.dumps({"score": 1.0 if case["output"] == case.get("expected") else 0.0}), flush=True)\n',
  );
  await compare(
    `score, trivial Python scorer: persistent vs per case (c=4)`,
    UNITS,
    "≥ 50× (issue 6)",
    () =>
      time(
        [
          "run",
          "-A",
          "cli.ts",
          "score",
          "--scorer",
          `python3 ${dir}/persistent.py`,
          "--persistent",
        ],
        `${dir}/units.ndjson`,
      ),
    () =>
      time(
        [
          "run",
          "-A",
          "cli.ts",
          "score",
          "--scorer",
          `python3 ${dir}/per_case.py`,
          "--concurrency",
          "4",
        ],
        `${dir}/units.ndjson`,
      ),
  );
  await compare(
    `run, replay + exact_match, ${CASES} cases`,
    CASES,
    "≥ 0.5× bare NDJSON (issue 6)",
    () => time(["run", "-A", "cli.ts", "run", `${dir}/suite.yaml`]),
    () => time(["run", "-A", "bench/_bare_ndjson.ts", `${dir}/data.jsonl`]),
  );
} finally {
  await Deno.remove(dir, { recursive: true });
}

console.log(
  `\nevalpipe throughput (medians of ${ROUNDS} alternating rounds; Deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cores)\n`,
);
console.log(
  "| comparison | evalpipe cases/s | baseline cases/s | evalpipe ÷ baseline speed | goal |",
);
console.log("|---|---|---|---|---|");
for (const r of rows) {
  const ma = median(r.a);
  const mb = median(r.b);
  console.log(
    `| ${r.name} | ${(r.n / ma * 1000).toFixed(0)} | ${
      (r.n / mb * 1000).toFixed(0)
    } | ${(mb / ma).toFixed(2)}× | ${r.goal} |`,
  );
}
