// `deno task bench`: whole-process throughput of evalpipe beside baselines
// run in the same script, alternating A and B over several rounds; medians
// and ratios. Machines differ; ratios against a baseline measured here are
// what to compare.
//
// `score` runs with each of the spawner's backends: posix_spawn over FFI
// (the default with -A) and the setsid program (with --deny-ffi).
//
// Memory: peak RSS (through /usr/bin/time) of `run` at 10,000 and 1,000,000
// cases beside a bare streaming loop that keeps nothing, at the same sizes.
//
// Usage: deno run -A bench/throughput.ts [--rounds N] [--units N] [--cases N]
//          [--memory-cases N] [--no-memory] [--only score|run]

import { parseFlags } from "../src/cli/flags.ts";
import { evalpipeArgs, V8_FLAGS } from "./_evalpipe.ts";

const { flags } = parseFlags(Deno.args, {
  rounds: { type: "integer", default: 3, help: "Rounds of each comparison" },
  units: { type: "integer", default: 400, help: "Unit records to score" },
  cases: { type: "integer", default: 200_000, help: "Cases of the run rows" },
  "memory-cases": {
    type: "integer",
    default: 1_000_000,
    help: "Cases of the large memory row",
  },
  "no-memory": { type: "boolean", help: "Leave the memory rows out" },
  only: {
    type: "string",
    value: "score|run",
    help: "Only the score rows or only the run rows",
  },
});
const ONLY = flags.only;
const ROUNDS = flags.rounds;
const UNITS = flags.units;
const CASES = flags.cases;
const MEMORY_SMALL = 10_000;
const MEMORY_LARGE = flags["memory-cases"];
const ROOT = new URL("..", import.meta.url).pathname;
const SCORER = `cat >/dev/null; echo '{"score": 1}'`;
/** evalpipe as `deno task install` installs it. */
const EVALPIPE = evalpipeArgs();
/** The same without the ffi permission: the spawner's setsid backend. */
const EVALPIPE_SETSID = evalpipeArgs("cli.ts", ["--deny-ffi"]);

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
/** Writes `n` replay cases, two thirds matching, to `dir/name`. */
async function writeCases(name: string, n: number): Promise<void> {
  const file = await Deno.open(`${dir}/${name}`, { write: true, create: true });
  const enc = new TextEncoder();
  let chunk = "";
  for (let i = 0; i < n; i++) {
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
await writeCases("data.jsonl", CASES);
await Deno.writeTextFile(
  `${dir}/suite.yaml`,
  "dataset: data.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
);

async function time(
  args: string[],
  stdinPath?: string,
  cwd = ROOT,
): Promise<number> {
  return (await measure(Deno.execPath(), args, stdinPath, cwd)).ms;
}

/** Peak RSS in MiB of a whole process, through `/usr/bin/time -f %M`. */
async function peakMiB(args: string[]): Promise<number> {
  const { stderr } = await measure(TIME, [
    "-f",
    "peak %M",
    Deno.execPath(),
    ...args,
  ]);
  const kib = Number(/peak (\d+)\s*$/.exec(stderr)?.[1]);
  if (!Number.isFinite(kib)) throw new Error(`no peak RSS in: ${stderr}`);
  return kib / 1024;
}

async function measure(
  command: string,
  args: string[],
  stdinPath?: string,
  cwd = ROOT,
): Promise<{ ms: number; stderr: string }> {
  const start = performance.now();
  const child = new Deno.Command(command, {
    args,
    cwd,
    stdin: stdinPath !== undefined ? "piped" : "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  if (stdinPath !== undefined) {
    await (await Deno.open(stdinPath)).readable.pipeTo(child.stdin);
  }
  const { code, stderr } = await child.output();
  const ms = performance.now() - start;
  const text = new TextDecoder().decode(stderr);
  if (code !== 0) throw new Error(`${args.join(" ")} failed: ${text}`);
  return { ms, stderr: text };
}

/** A whole process's stdout, hashed: the outputs compared are large. */
async function stdoutOf(args: string[], cwd = ROOT): Promise<string> {
  const { code, stdout } = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  if (code !== 0) throw new Error(`${args.join(" ")} failed`);
  const digest = await crypto.subtle.digest("SHA-256", stdout);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16)).join("");
}

const TIME = "/usr/bin/time";
const canTime = await Deno.stat(TIME).then(() => true, () => false);

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
interface MemoryRow {
  name: string;
  small: number[];
  large: number[];
}
const memory: MemoryRow[] = [];

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
  if (ONLY === undefined || ONLY === "score") await scoreRows();
  if (ONLY === undefined || ONLY === "run") await runRows();
  if (!flags["no-memory"] && !canTime) {
    console.error(
      `memory: skipped, ${TIME} is missing (Debian: apt install time)`,
    );
  } else if (!flags["no-memory"]) await compareMemory();
} finally {
  await Deno.remove(dir, { recursive: true });
}

/** `score` against bare spawns, and persistent against per-case mode. */
async function scoreRows(): Promise<void> {
  for (const c of [1, 2, 4]) {
    const score = (evalpipe: string[]) => () =>
      time(
        [
          ...evalpipe,
          "score",
          "--scorer",
          SCORER,
          "--name",
          "t",
          "--concurrency",
          String(c),
        ],
        `${dir}/units.ndjson`,
      );
    const bare = (...how: string[]) => () =>
      time(
        ["run", "-A", "bench/_bare_spawn.ts", SCORER, String(c), ...how],
        `${dir}/units.ndjson`,
      );
    await compare(
      `score, trivial sh scorer, c=${c}`,
      UNITS,
      "≥ 0.9× bare spawn (issue 6)",
      score(EVALPIPE),
      bare(),
    );
    // The portable backend: without the ffi permission, the spawner starts
    // commands through the setsid program, one exec more per case. Against
    // the same floor, and against bare spawns through setsid too: what the
    // backend costs beyond that exec.
    await compare(
      `score, trivial sh scorer, c=${c}, setsid backend (--deny-ffi)`,
      UNITS,
      "none: the portable backend (issue 11)",
      score(EVALPIPE_SETSID),
      bare(),
    );
    await compare(
      `score, trivial sh scorer, c=${c}, setsid backend, vs bare setsid sh -c spawns`,
      UNITS,
      "none: its cost beyond the exec",
      score(EVALPIPE_SETSID),
      bare("setsid"),
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
          ...EVALPIPE,
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
          ...EVALPIPE,
          "score",
          "--scorer",
          `python3 ${dir}/per_case.py`,
          "--concurrency",
          "4",
        ],
        `${dir}/units.ndjson`,
      ),
  );
}

/**
 * `run` against a bare NDJSON loop and against the floor, and the script
 * the README shows against `run`.
 */
async function runRows(): Promise<void> {
  await compare(
    `run, replay + exact_match, ${CASES} cases`,
    CASES,
    "≥ 0.5× bare NDJSON (issue 6)",
    () => time([...EVALPIPE, "run", `${dir}/suite.yaml`]),
    () => time(["run", "-A", "bench/_bare_ndjson.ts", `${dir}/data.jsonl`]),
  );
  // The floor: the same output from one tight loop, checked byte for byte.
  const [ours, floor] = await Promise.all([
    stdoutOf([...EVALPIPE, "run", `${dir}/suite.yaml`]),
    stdoutOf(["run", "-A", "bench/_floor_run.ts", `${dir}/data.jsonl`]),
  ]);
  if (ours !== floor) {
    console.error("floor: skipped, its output differs from evalpipe's");
  } else {
    await compare(
      `run, replay + exact_match, ${CASES} cases, vs the same output from one tight loop`,
      CASES,
      "none: what the output alone costs",
      () => time([...EVALPIPE, "run", `${dir}/suite.yaml`]),
      () => time(["run", "-A", "bench/_floor_run.ts", `${dir}/data.jsonl`]),
    );
  }
  // The script runs in the dataset's folder, so that its example ids (and so
  // its output, checked byte for byte) are those of `run`.
  const script = [
    "run",
    "-A",
    ...V8_FLAGS,
    "--config",
    `${ROOT}deno.json`,
    `${ROOT}bench/_script_run.ts`,
    "data.jsonl",
  ];
  const [run, scripted] = await Promise.all([
    stdoutOf([...EVALPIPE, "run", `${dir}/suite.yaml`]),
    stdoutOf(script, dir),
  ]);
  if (run !== scripted) {
    console.error("script: skipped, its output differs from evalpipe run's");
  } else {
    await compare(
      `script from mod.ts as the README shows vs evalpipe run, ${CASES} cases`,
      CASES,
      "≥ 0.95× run (issue 11)",
      () => time(script, undefined, dir),
      () => time([...EVALPIPE, "run", `${dir}/suite.yaml`]),
    );
  }
}

/**
 * Peak RSS of `run` and of the bare loop at two sizes, alternating, and the
 * growth of each from the small to the large size.
 */
async function compareMemory(): Promise<void> {
  await writeCases("small.jsonl", MEMORY_SMALL);
  await writeCases("large.jsonl", MEMORY_LARGE);
  for (const size of ["small", "large"]) {
    await Deno.writeTextFile(
      `${dir}/${size}.yaml`,
      `dataset: ${size}.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n`,
    );
  }
  const run = { name: "evalpipe run", small: [], large: [] } as MemoryRow;
  const bare = {
    name: "bare streaming loop",
    small: [],
    large: [],
  } as MemoryRow;
  for (let r = 0; r < ROUNDS; r++) {
    for (const size of ["small", "large"] as const) {
      run[size].push(
        await peakMiB([...EVALPIPE, "run", `${dir}/${size}.yaml`]),
      );
      bare[size].push(
        await peakMiB([
          "run",
          "-A",
          "bench/_bare_ndjson.ts",
          `${dir}/${size}.jsonl`,
        ]),
      );
    }
    console.error(
      `memory round ${r + 1}: run ${run.small.at(-1)!.toFixed(0)} → ${
        run.large.at(-1)!.toFixed(0)
      } MiB, bare ${bare.small.at(-1)!.toFixed(0)} → ${
        bare.large.at(-1)!.toFixed(0)
      } MiB`,
    );
  }
  memory.push(run, bare);
}

console.log(
  `\nevalpipe throughput (medians of ${ROUNDS} alternating rounds; Deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cores;\n` +
    `evalpipe as installed: deno ${
      ["run", "-A", ...V8_FLAGS].join(" ")
    } cli.ts)\n`,
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

if (memory.length > 0) {
  const [run, bare] = memory as [MemoryRow, MemoryRow];
  const growth = (m: MemoryRow) => median(m.large) / median(m.small);
  console.log(
    `\npeak RSS (medians of ${ROUNDS} alternating rounds, /usr/bin/time)\n`,
  );
  console.log(
    `| process | ${MEMORY_SMALL} cases | ${MEMORY_LARGE} cases | growth |`,
  );
  console.log("|---|---|---|---|");
  for (const m of memory) {
    console.log(
      `| ${m.name} | ${median(m.small).toFixed(0)} MiB | ${
        median(m.large).toFixed(0)
      } MiB | ${growth(m).toFixed(2)}× |`,
    );
  }
  const ratio = growth(run) / growth(bare);
  console.log(
    `\ngrowth of run ÷ growth of the bare loop: ${ratio.toFixed(2)} ` +
      `(goal ≤ 1.2, issue 6: ${ratio <= 1.2 ? "met" : "not met"}); ` +
      `run at ${MEMORY_LARGE} cases: ${median(run.large).toFixed(0)} MiB ` +
      "(goal ≤ 0.5× promptfoo's peak at 1,000 cases: see deno task bench:promptfoo)",
  );
}

console.log(
  "\nissue 17's goals, each a ratio against the machine's limit: deno task bench:limits; " +
    "where their time goes (syscalls, CPU, modules): deno task bench:where",
);
