// `deno task bench:where`: where the time of bench:limits's rows goes,
// measured without wall time (which a loaded machine ruins):
//
// - syscalls per case (`strace -c -f`) of per-case `score` and of the C
//   driver bench/_spawn_driver.c, children included: the calls of N units
//   less those of 1 unit, over N − 1, so that start-up is left out (and given
//   beside);
// - CPU per case (`perf stat -e task-clock,context-switches`, children
//   included) of the same pair, of `score --persistent` against the bare
//   loop, and of `run` over many cases against bench/_floor_run.ts, by the
//   same difference; CPU and context switches of one-case start-up against
//   bench/_bare_start.ts;
// - which modules a one-case `run` and `score` read and which they evaluate:
//   under `strace -e trace=openat`, every source file Deno opens is a module of
//   the graph it builds before running (dynamic `import()`s that it can read
//   included), and every file it opens from its emit cache (`gen/`) is a
//   module it evaluates.
//
// Each figure is a median of --rounds runs. Tools that are missing are said and
// their rows skipped.
//
// Usage: deno run -A bench/where_time_goes.ts [--rounds N] [--quick]

import { parseFlags } from "../src/cli/flags.ts";
import { evalpipeArgs, V8_FLAGS } from "./_evalpipe.ts";

const { flags } = parseFlags(Deno.args, {
  rounds: { type: "integer", help: "Runs of each measurement (default: 5)" },
  quick: { type: "boolean", help: "One round of tiny sizes: does it work" },
});
const QUICK = flags.quick === true;
const ROUNDS = flags.rounds ?? (QUICK ? 1 : 5);
const UNITS = QUICK ? 4 : 400;
const STRACE_UNITS = QUICK ? 4 : 100;
const CASES = QUICK ? 200 : 200_000;
const ROOT = new URL("..", import.meta.url).pathname;
const WORK = `${ROOT}bench/.work`;
const SCORER = `cat >/dev/null; echo '{"score": 1}'`;
const EVALPIPE = evalpipeArgs(`${ROOT}cli.ts`);
const DENO = Deno.execPath();
const bare = (script: string, ...args: string[]) => [
  DENO,
  "run",
  "-A",
  ...V8_FLAGS,
  `${ROOT}bench/${script}`,
  ...args,
];
const load = () => Deno.readTextFileSync("/proc/loadavg").split(" ")[0]!;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const dir = await Deno.makeTempDir({ prefix: "evalpipe_where_" });

/** Runs `argv` (stdout to /dev/null), stdin from `stdin`; throws on failure. */
async function exec(argv: string[], stdin?: string): Promise<string> {
  const child = new Deno.Command(argv[0]!, {
    args: argv.slice(1),
    cwd: dir,
    stdin: stdin !== undefined ? "piped" : "null",
    stdout: "null",
    stderr: "piped",
    env: { NO_COLOR: "1", FAKE_API_KEY: "sk-bench-SECRET-0000" },
  }).spawn();
  if (stdin !== undefined) {
    await (await Deno.open(stdin)).readable.pipeTo(child.stdin);
  }
  const { code, stderr } = await child.output();
  const text = new TextDecoder().decode(stderr);
  if (code !== 0) {
    throw new Error(`${argv.join(" ")} failed (${code}): ${text}`);
  }
  return text;
}

async function have(tool: string, ...args: string[]): Promise<boolean> {
  try {
    await new Deno.Command(tool, { args, stdout: "null", stderr: "null" })
      .output();
    return true;
  } catch (error) {
    // A missing tool skips its rows; anything else is a bug here.
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

async function writeUnits(n: number): Promise<string> {
  const path = `${dir}/units-${n}.ndjson`;
  await Deno.writeTextFile(
    path,
    Array.from(
      { length: n },
      (_, i) =>
        JSON.stringify({
          expected: "answer",
          input: `question ${i}`,
          output: "answer",
        }),
    ).join("\n") + "\n",
  );
  return path;
}
async function writeCases(name: string, n: number): Promise<string> {
  let text = "";
  for (let i = 0; i < n; i++) {
    text += JSON.stringify({
      id: i,
      input: `question ${i}`,
      expected: "answer",
      output: i % 3 ? "answer" : "nope",
    }) + "\n";
  }
  await Deno.writeTextFile(`${dir}/${name}.jsonl`, text);
  await Deno.writeTextFile(
    `${dir}/${name}.yaml`,
    `dataset: ${name}.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n`,
  );
  return `${dir}/${name}`;
}

interface Perf {
  cpuMs: number;
  switches: number;
}
/** `perf stat` of one process tree: CPU ms and context switches. */
async function perf(argv: string[], stdin?: string): Promise<Perf> {
  const out = `${dir}/perf.txt`;
  await exec([
    "perf",
    "stat",
    "-x,",
    "-e",
    "task-clock,context-switches",
    "-o",
    out,
    "--",
    ...argv,
  ], stdin);
  const text = await Deno.readTextFile(out);
  const field = (event: string) => {
    const line = text.split("\n").find((l) => l.split(",")[2] === event);
    const value = Number(line?.split(",")[0]);
    if (!Number.isFinite(value)) throw new Error(`no ${event} in: ${text}`);
    return value;
  };
  return { cpuMs: field("task-clock"), switches: field("context-switches") };
}
/** Medians of `ROUNDS` perf runs of each of `argvs`, interleaved. */
async function perfMedians(
  runs: Array<{ argv: string[]; stdin?: string | undefined }>,
): Promise<Perf[]> {
  const got: Perf[][] = runs.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [i, run] of runs.entries()) {
      got[i]!.push(await perf(run.argv, run.stdin));
    }
  }
  return got.map((g) => ({
    cpuMs: median(g.map((p) => p.cpuMs)),
    switches: median(g.map((p) => p.switches)),
  }));
}

/** `strace -c -f` of one process tree: calls per syscall. */
async function strace(
  argv: string[],
  stdin?: string,
): Promise<Map<string, number>> {
  const out = `${dir}/strace.txt`;
  await exec(["strace", "-f", "-c", "-o", out, "--", ...argv], stdin);
  const calls = new Map<string, number>();
  for (const line of (await Deno.readTextFile(out)).split("\n")) {
    // % time, seconds, usecs/call, calls, [errors,] syscall
    const cells = line.trim().split(/\s+/);
    if (cells.length < 5 || !/^\d/.test(cells[0]!)) continue;
    const name = cells.at(-1)!;
    if (name === "total") continue;
    calls.set(name, Number(cells[3]));
  }
  return calls;
}
/** Per-case syscalls of `argv`: (calls at n units − calls at 1) ÷ (n − 1). */
async function syscallsPerCase(
  argv: string[],
  one: string,
  many: string,
  n: number,
): Promise<{ perCase: Map<string, number>; startup: number }> {
  const a: Array<Map<string, number>> = [];
  const b: Array<Map<string, number>> = [];
  for (let r = 0; r < ROUNDS; r++) {
    a.push(await strace(argv, one));
    b.push(await strace(argv, many));
  }
  const names = new Set([...a, ...b].flatMap((m) => [...m.keys()]));
  const perCase = new Map<string, number>();
  for (const name of names) {
    const m1 = median(a.map((m) => m.get(name) ?? 0));
    const mn = median(b.map((m) => m.get(name) ?? 0));
    perCase.set(name, (mn - m1) / (n - 1));
  }
  const total = (m: Map<string, number>) =>
    [...m.values()].reduce((x, y) => x + y, 0);
  return { perCase, startup: median(a.map(total)) };
}

/** Source files Deno opens, and files it opens from its emit cache. */
async function modules(
  argv: string[],
  stdin?: string,
): Promise<{ read: string[]; evaluated: string[]; npm: string[] }> {
  const out = `${dir}/open.txt`;
  await exec([
    "strace",
    "-f",
    "-e",
    "trace=openat,open",
    "-o",
    out,
    "--",
    ...argv,
  ], stdin);
  const paths = new Set<string>();
  for (const line of (await Deno.readTextFile(out)).split("\n")) {
    if (line.includes("ENOENT")) continue;
    const m = /open(?:at)?\([^"]*"([^"]+)"/.exec(line);
    if (m) paths.add(m[1]!);
  }
  const all = [...paths];
  const evaluated = all.filter((p) => /\/gen\/file.*\.js$/.test(p))
    .map((p) =>
      p.replace(/^.*\/gen\/file/, "").replace(/\.js$/, "").replace(ROOT, "")
    );
  const read = all.filter((p) =>
    p.startsWith(ROOT) && /\.(ts|js|mjs)$/.test(p) && !p.includes("/.cache/")
  ).map((p) => p.slice(ROOT.length));
  const npm = all.filter((p) =>
    /\/npm\/registry\.npmjs\.org\/.*\.(m?js|cjs)$/.test(p)
  ).map((p) => p.replace(/^.*registry\.npmjs\.org\//, ""));
  return { read, evaluated, npm };
}

const report: string[] = [];
const say = (line = "") => {
  report.push(line);
};
const ms = (x: number) => `${x.toFixed(2)} ms`;
const us = (x: number) =>
  `${(x * 1000).toFixed(Math.abs(x) < 0.01 ? 2 : 0)} µs`;

try {
  say(
    `where the time goes (issue 17): medians of ${ROUNDS} runs; Deno ${Deno.version.deno}, ` +
      `${navigator.hardwareConcurrency} cores; load average at start ${load()}` +
      (QUICK ? "; --quick: sizes too small to mean anything" : ""),
  );
  const hasCc = await have("cc", "--version");
  const hasStrace = await have("strace", "-V");
  const hasPerf = hasStrace && await have("perf", "--version") &&
    await perf(["true"]).then(() => true, (error: Error) => {
      say(`\nperf rows skipped: perf stat failed (${error.message.trim()})`);
      return false;
    });
  if (!hasStrace) say("\nstrace rows skipped: no `strace` on PATH");
  let driver: string | undefined;
  if (hasCc) {
    await Deno.mkdir(WORK, { recursive: true });
    driver = `${WORK}/spawn_driver`;
    await exec(["cc", "-O2", "-o", driver, `${ROOT}bench/_spawn_driver.c`]);
  } else say("\nC driver rows skipped: no `cc` on PATH");

  const one = await writeUnits(1);
  const many = await writeUnits(UNITS);
  const scoreArgv = (c: number) => [
    DENO,
    ...EVALPIPE,
    "score",
    "--scorer",
    SCORER,
    "--name",
    "t",
    "--concurrency",
    String(c),
  ];

  if (hasStrace && driver !== undefined) {
    const few = await writeUnits(STRACE_UNITS);
    for (const c of [1, 4]) {
      const ours = await syscallsPerCase(scoreArgv(c), one, few, STRACE_UNITS);
      const theirs = await syscallsPerCase(
        [driver, SCORER, String(c)],
        one,
        few,
        STRACE_UNITS,
      );
      const sum = (m: Map<string, number>) =>
        [...m.values()].reduce((x, y) => x + y, 0);
      say(
        `\nsyscalls per case, per-case score c=${c} (strace -c -f, ${STRACE_UNITS} units − 1 unit, children included): ` +
          `evalpipe ${sum(ours.perCase).toFixed(1)}, C driver ${
            sum(theirs.perCase).toFixed(1)
          }; start-up (1 unit) ${ours.startup} against ${theirs.startup}\n`,
      );
      say("| syscall | evalpipe per case | C driver per case | difference |");
      say("|---|---:|---:|---:|");
      const names = [
        ...new Set([...ours.perCase.keys(), ...theirs.perCase.keys()]),
      ]
        .map((name) => ({
          name,
          a: ours.perCase.get(name) ?? 0,
          b: theirs.perCase.get(name) ?? 0,
        }))
        .filter((x) => Math.abs(x.a - x.b) >= 0.05)
        .sort((x, y) => (y.a - y.b) - (x.a - x.b));
      for (const x of names) {
        say(
          `| ${x.name} | ${x.a.toFixed(2)} | ${x.b.toFixed(2)} | ${
            (x.a - x.b).toFixed(2)
          } |`,
        );
      }
    }
  }

  if (hasPerf) {
    say(
      `\nCPU per case (perf stat -e task-clock,context-switches, children included; ` +
        `N units − 1 unit, over N − 1; load average ${load()})\n`,
    );
    say(
      "| work | evalpipe CPU per case | baseline CPU per case | ratio | evalpipe switches per case | baseline switches per case | evalpipe start-up CPU | baseline start-up CPU |",
    );
    say("|---|---:|---:|---:|---:|---:|---:|---:|");
    const row = async (
      name: string,
      a: string[],
      b: string[],
      oneIn: string | undefined,
      manyIn: string | undefined,
      n: number,
      oneArgs: [string[], string[]] = [a, b],
    ) => {
      const [a1, an, b1, bn] = await perfMedians([
        { argv: oneArgs[0], stdin: oneIn },
        { argv: a, stdin: manyIn },
        { argv: oneArgs[1], stdin: oneIn },
        { argv: b, stdin: manyIn },
      ]);
      const per = (x: Perf, y: Perf) => ({
        cpu: (y.cpuMs - x.cpuMs) / (n - 1),
        sw: (y.switches - x.switches) / (n - 1),
      });
      const pa = per(a1!, an!);
      const pb = per(b1!, bn!);
      say(
        `| ${name} | ${us(pa.cpu)} | ${us(pb.cpu)} | ${
          (pa.cpu / pb.cpu).toFixed(2)
        }× | ${pa.sw.toFixed(2)} | ${pb.sw.toFixed(2)} | ${ms(a1!.cpuMs)} | ${
          ms(b1!.cpuMs)
        } |`,
      );
    };
    if (driver !== undefined) {
      for (const c of [1, 4, 16]) {
        await row(
          `per-case score, c=${c}, vs C driver`,
          scoreArgv(c),
          [driver, SCORER, String(c)],
          one,
          many,
          UNITS,
        );
      }
    }
    await Deno.writeTextFile(
      `${dir}/persistent.py`,
      'import json, sys\nfor line in sys.stdin:\n    case = json.loads(line)\n    print(json.dumps({"score": 1.0 if case["output"] == case.get("expected") else 0.0}), flush=True)\n',
    );
    const py = `python3 ${dir}/persistent.py`;
    const manyP = await writeUnits(QUICK ? 8 : 5_000);
    await row(
      "score --persistent vs bare loop",
      [DENO, ...EVALPIPE, "score", "--scorer", py, "--persistent"],
      bare("_bare_persistent.ts", py),
      one,
      manyP,
      QUICK ? 8 : 5_000,
    );
    const small = await writeCases("small", 1);
    const large = await writeCases("large", CASES);
    await row(
      `run over ${CASES} cases vs floor`,
      [DENO, ...EVALPIPE, "run", `${large}.yaml`],
      bare("_floor_run.ts", `${large}.jsonl`),
      undefined,
      undefined,
      CASES,
      [
        [DENO, ...EVALPIPE, "run", `${small}.yaml`],
        bare("_floor_run.ts", `${small}.jsonl`),
      ],
    );
    // The network rows: CPU of the client process alone (the server is not
    // its child), per request.
    const server = new Deno.Command(DENO, {
      args: ["run", "-A", `${ROOT}bench/_slow_server.ts`, "50"],
      stdin: "null",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const reader = server.stdout.pipeThrough(new TextDecoderStream())
      .getReader();
    const baseUrl = (await reader.read()).value!.trim();
    reader.releaseLock();
    try {
      const N = QUICK ? 20 : 2_000;
      const cases = (name: string, n: number) =>
        Deno.writeTextFile(
          `${dir}/${name}.jsonl`,
          Array.from({ length: n }, (_, i) =>
            JSON.stringify({
              input: `question ${i}`,
              expected: "answer",
              output: `answer ${i}`,
            })).join("\n") + "\n",
        );
      await cases("net1", 1);
      await cases("netN", N);
      const openai = (data: string, c: number) =>
        `dataset: ${data}.jsonl\ntarget:\n  type: openai\n  base_url: ${baseUrl}\n  model: fake-model\n  api_key_env: FAKE_API_KEY\nscorers: [{ type: exact_match }]\nconcurrency: ${c}\n`;
      const judge = (data: string, c: number) =>
        `dataset: ${data}.jsonl\ntarget: { type: replay }\nscorers:\n  - type: llm_judge\n    base_url: ${baseUrl}\n    model: fake-model\n    api_key_env: FAKE_API_KEY\nconcurrency: ${c}\n`;
      for (const c of [32, 256]) {
        for (
          const [kind, yaml] of [["openai", openai], ["judge", judge]] as const
        ) {
          await Deno.writeTextFile(
            `${dir}/${kind}1-${c}.yaml`,
            yaml("net1", c),
          );
          await Deno.writeTextFile(
            `${dir}/${kind}N-${c}.yaml`,
            yaml("netN", c),
          );
          const fetchLoop = (n: number) =>
            bare(
              "_bare_fetch.ts",
              baseUrl,
              String(n),
              String(c),
              ...(kind === "judge" ? ["judge"] : []),
            );
          await row(
            `${
              kind === "openai" ? "openai target" : "llm_judge"
            }, c=${c}, vs bare fetch loop (client process only)`,
            [
              DENO,
              ...EVALPIPE,
              "run",
              `${dir}/${kind}N-${c}.yaml`,
              "--no-cache",
            ],
            fetchLoop(N),
            undefined,
            undefined,
            N,
            [
              [
                DENO,
                ...EVALPIPE,
                "run",
                `${dir}/${kind}1-${c}.yaml`,
                "--no-cache",
              ],
              fetchLoop(1),
            ],
          );
        }
      }
      // The cached rerun against replay over the same cases.
      await Deno.writeTextFile(`${dir}/cached1.yaml`, openai("net1", 256));
      await Deno.writeTextFile(`${dir}/cachedN.yaml`, openai("netN", 256));
      const replay = (data: string) =>
        `dataset: ${data}.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\nconcurrency: 256\n`;
      await Deno.writeTextFile(`${dir}/replay1.yaml`, replay("net1"));
      await Deno.writeTextFile(`${dir}/replayN.yaml`, replay("netN"));
      const cachedRun = (which: string) => [
        DENO,
        ...EVALPIPE,
        "run",
        `${dir}/cached${which}.yaml`,
        "--cache-dir",
        `${dir}/cache`,
      ];
      await exec(cachedRun("1"));
      await exec(cachedRun("N"));
      await row(
        "cached rerun vs replay target",
        cachedRun("N"),
        [DENO, ...EVALPIPE, "run", `${dir}/replayN.yaml`],
        undefined,
        undefined,
        N,
        [cachedRun("1"), [DENO, ...EVALPIPE, "run", `${dir}/replay1.yaml`]],
      );
    } finally {
      server.kill();
      await server.status;
    }

    // Start-up: one case, CPU and switches of the whole process.
    const [r1, s1, c1, b1] = await perfMedians([
      { argv: [DENO, ...EVALPIPE, "run", `${small}.yaml`] },
      {
        argv: [DENO, ...EVALPIPE, "score", "--scorer", SCORER, "--name", "t"],
        stdin: one,
      },
      {
        argv: [DENO, ...EVALPIPE, "score", "--config", `${small}.yaml`],
        stdin: one,
      },
      { argv: bare("_bare_start.ts", `${small}.jsonl`) },
    ]);
    say(
      `\nstart-up CPU, one case (perf stat; load average ${load()})\n`,
    );
    say("| process | CPU | context switches | CPU ÷ bare script |");
    say("|---|---:|---:|---:|");
    for (
      const [name, p] of [
        ["run, 1 case", r1],
        ["score --scorer (sh), 1 unit", s1],
        ["score --config (exact_match), 1 unit", c1],
        ["bare script (bench/_bare_start.ts)", b1],
      ] as const
    ) {
      say(
        `| ${name} | ${ms(p!.cpuMs)} | ${p!.switches.toFixed(0)} | ${
          (p!.cpuMs / b1!.cpuMs).toFixed(2)
        }× |`,
      );
    }
  }

  // Start-up phases, in CPU of the process (bench/_startup_phases.ts).
  {
    const small = await writeCases("small", 1);
    const phases = async (argv: string[], stdin?: string) => {
      const text = await exec(argv, stdin);
      return JSON.parse(text.trim().split("\n").at(-1)!) as Record<
        string,
        number
      >;
    };
    const runs = [
      {
        name: "run, 1 case",
        argv: bare(
          "_startup_phases.ts",
          "--preload",
          "run",
          "run",
          `${small}.yaml`,
        ),
      },
      {
        name: "score --scorer (sh), 1 unit",
        argv: bare(
          "_startup_phases.ts",
          "--preload",
          "score",
          "score",
          "--scorer",
          SCORER,
          "--name",
          "t",
        ),
        stdin: one,
      },
    ];
    const got = runs.map(() => [] as Array<Record<string, number>>);
    for (let r = 0; r < ROUNDS; r++) {
      for (const [i, run] of runs.entries()) {
        got[i]!.push(await phases(run.argv, run.stdin));
      }
    }
    say(
      `\nstart-up phases, CPU of the process (clock_gettime(CLOCK_PROCESS_CPUTIME_ID), children not included; load average ${load()})\n`,
    );
    say(
      "| process | Deno until a one-module script runs | import the command table | import the command's lazy modules | first main() (one case, cold) | second main() (warm) |",
    );
    say("|---|---:|---:|---:|---:|---:|");
    for (const [i, run] of runs.entries()) {
      const m = (k: string) => ms(median(got[i]!.map((g) => g[k]!)));
      say(
        `| ${run.name} | ${m("deno")} | ${m("table")} | ${m("imports")} | ${
          m("first")
        } | ${m("second")} |`,
      );
    }
  }

  if (hasStrace) {
    const small = `${dir}/small`;
    await writeCases("small", 1);
    say(
      "\nmodules of a one-case process (strace -e trace=openat: sources Deno reads to build its graph, emitted modules it evaluates)\n",
    );
    say(
      "| process | source files read | of them evalpipe's src/ | modules evaluated | npm files evaluated |",
    );
    say("|---|---:|---:|---:|---:|");
    const lists: string[] = [];
    for (
      const [name, argv, stdin] of [
        ["run, 1 case", [DENO, ...EVALPIPE, "run", `${small}.yaml`], undefined],
        ["score --scorer, 1 unit", [
          DENO,
          ...EVALPIPE,
          "score",
          "--scorer",
          SCORER,
          "--name",
          "t",
        ], one],
        ["score --config, 1 unit", [
          DENO,
          ...EVALPIPE,
          "score",
          "--config",
          `${small}.yaml`,
        ], one],
        ["bare script", bare("_bare_start.ts", `${small}.jsonl`), undefined],
      ] as const
    ) {
      const m = await modules([...argv], stdin);
      const src = m.read.filter((p) => p.startsWith("src/"));
      say(
        `| ${name} | ${m.read.length} | ${src.length} | ${m.evaluated.length} | ${m.npm.length} |`,
      );
      const evaluated = new Set(m.evaluated);
      const byLayer = (paths: string[]) => {
        const n = new Map<string, number>();
        for (const p of paths) {
          const layer = /^src\/([^/]+)\//.exec(p)?.[1] ?? p;
          n.set(layer, (n.get(layer) ?? 0) + 1);
        }
        return [...n].map(([k, v]) => `${k} ${v}`).join(", ");
      };
      lists.push(
        `${name}: evaluates ${byLayer(m.evaluated)}` +
          (m.npm.length > 0 ? `; npm ${m.npm.join(" ")}` : "") +
          `; reads without evaluating ${
            byLayer(src.filter((p) => !evaluated.has(p)))
          }`,
      );
    }
    say();
    for (const l of lists) say(`- ${l}`);
  }
} finally {
  await Deno.remove(dir, { recursive: true });
}
console.log(report.join("\n"));
