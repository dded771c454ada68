// `deno task bench:limits`: the goals of issue 17, each a ratio of evalpipe
// against the limit of the machine, measured side by side in this one script:
// A and B alternate (the order flips every round), medians of the rounds.
//
// - spawn: per-case `score` (a trivial `sh` scorer, 400 units, start-up
//   included) against bench/_spawn_driver.c, a C driver that starts the same
//   `sh -c CMD` with posix_spawn + POSIX_SPAWN_SETSID, at c = 1, 4 and 16. The
//   driver is compiled here with the system's `cc` into bench/.work/; without
//   `cc` the rows are skipped, and the bench says so. Limit rows beside them
//   (no goal): how far a bare Deno program making the driver's own libc calls
//   gets against the same driver, rung A synchronously at c=1
//   (bench/_ffi_spawn_sync.ts), rung B without blocking its event loop at each
//   c (bench/_ffi_spawn_async.ts).
// - persistent: `score --persistent` against bench/_bare_persistent.ts, which
//   writes the same payload lines to the same long-lived Python process and
//   reads its verdict lines. Limit rows: bench/_limit_persistent.ts (the same
//   loop plus each verdict parsed, a Score-shaped line per case on stdout;
//   then with payloads written as stdin's chunks arrive) against the bare
//   loop.
// - run: `run` (replay → exact_match → validate → aggregate → NDJSON) over
//   200,000 cases against bench/_floor_run.ts (the same bytes, checked first).
//   Its ceiling: the ratio a `run` whose every case cost what the floor's
//   costs would reach, from `run`'s one-case start-up against the floor's on
//   the same one-line dataset, measured alternating in the same run.
// - startup: `run` and `score` on one case against bench/_bare_start.ts, which
//   reads the same one-line dataset and prints one Score line; both started as
//   `deno run -A` with the install task's V8 flags. Time ratios, medians of 11.
//   Limit rows beside them: bench/_startup_limits.ts doing only what a
//   one-case `run` cannot skip (its config parsed with js-yaml, its dataset
//   read through Web Streams, the same Score line out) against the bare
//   script; the same program with the dataset through Web Streams and one
//   `sh -c` (what `score --scorer` cannot skip) against the bare script with
//   one `sh -c`, and, beside it, that program with `score --scorer`'s modules
//   loaded too (a part row: how much of the gap is evalpipe's own code); and
//   Deno's own start (bench/_empty_start.ts) against the bare script with one
//   `sh -c`. Form rows: `score --scorer` with evalpipe's own code in other
//   shapes (bench/_module_forms.ts: per-file JavaScript without source maps,
//   the score path merged into one TypeScript module, that module as
//   JavaScript) against the same bare script: how much is the shape.
// - network: the `openai` target and `llm_judge` at c = 32 and c = 256 against
//   bench/_slow_server.ts (another process, answering after 50 ms) against
//   bench/_bare_fetch.ts at the same concurrency and server; a cached rerun of
//   10,000 cases against the replay target over the same cases. Limit rows:
//   bench/_limit_fetch.ts (the bare loop plus a stoppable call, the reply
//   parsed, a Score line per case) against the same bare loop, and
//   bench/_limit_cached.ts (the cases, each request's SHA-256 key, a `Map`
//   lookup in the pack read whole, a Score line per case) against the replay
//   target, and against itself without key and lookup.
//
// The load average is printed beside the table: on a shared machine wall time
// ratios move with it. bench/where_time_goes.ts measures without wall time.
//
// Usage: deno run -A bench/limits_bench.ts [--rounds N] [--only GROUP,...]
//          [--quick]   (--quick: one round of tiny sizes, to check it works)

import { parseFlags } from "../src/cli/flags.ts";
import { evalpipeArgs, V8_FLAGS } from "./_evalpipe.ts";

const GROUPS = ["spawn", "persistent", "run", "startup", "network"] as const;
type Group = typeof GROUPS[number];
const { flags } = parseFlags(Deno.args, {
  rounds: { type: "integer", help: "Rounds of each comparison (default: 5)" },
  "startup-rounds": {
    type: "integer",
    help: "Rounds of the start-up rows (default: 11)",
  },
  only: {
    type: "string",
    value: GROUPS.join("|"),
    help: "Comma-separated groups to run (default: all)",
  },
  quick: { type: "boolean", help: "One round of tiny sizes: does it work" },
});
const QUICK = flags.quick === true;
const ROUNDS = flags.rounds ?? (QUICK ? 1 : 5);
const STARTUP_ROUNDS = flags["startup-rounds"] ?? (QUICK ? 1 : 11);
const UNITS = QUICK ? 8 : 400;
const PERSISTENT_UNITS = QUICK ? 8 : 10_000;
const CASES = QUICK ? 500 : 200_000;
const NET_CASES = { 32: QUICK ? 40 : 2_000, 256: QUICK ? 300 : 10_000 };
const CACHED_CASES = QUICK ? 100 : 10_000;
const DELAY_MS = 50;
const only = new Set<string>(flags.only?.split(",") ?? GROUPS);
for (const g of only) {
  if (!(GROUPS as readonly string[]).includes(g)) {
    throw new Error(`Unknown group "${g}" in --only (${GROUPS.join(", ")})`);
  }
}
const ROOT = new URL("..", import.meta.url).pathname;
const WORK = `${ROOT}bench/.work`;
const SCORER = `cat >/dev/null; echo '{"score": 1}'`;
const EVALPIPE = evalpipeArgs(`${ROOT}cli.ts`);
/** A bare Deno script, started as evalpipe is. */
const bare = (script: string, ...args: string[]) => [
  "run",
  "-A",
  ...V8_FLAGS,
  `${ROOT}bench/${script}`,
  ...args,
];
const KEY = "sk-bench-SECRET-0000";
const load = () => Deno.readTextFileSync("/proc/loadavg").split(" ")[0]!;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

interface Run {
  /** The program; `deno` when absent. */
  command?: string;
  args: string[];
  stdin?: string;
  cwd?: string;
  /** Runs before the process starts (untimed). */
  before?: () => Promise<void>;
  /** Checks stderr (and the server's count, for network rows). */
  check?: (stderr: string) => Promise<void> | void;
}

/** Wall time of one whole process, in ms; throws when it fails. */
async function time(run: Run): Promise<number> {
  await run.before?.();
  const start = performance.now();
  const child = new Deno.Command(run.command ?? Deno.execPath(), {
    args: run.args,
    cwd: run.cwd ?? dir,
    stdin: run.stdin !== undefined ? "piped" : "null",
    stdout: "null",
    stderr: "piped",
    env: { NO_COLOR: "1", FAKE_API_KEY: KEY },
  }).spawn();
  if (run.stdin !== undefined) {
    await (await Deno.open(run.stdin)).readable.pipeTo(child.stdin);
  }
  const { code, stderr } = await child.output();
  const ms = performance.now() - start;
  const text = new TextDecoder().decode(stderr);
  if (code !== 0) {
    throw new Error(`${run.args.join(" ")} failed (${code}): ${text}`);
  }
  await run.check?.(text);
  return ms;
}

/** A whole process's stdout, hashed. */
async function stdoutOf(run: Run): Promise<string> {
  const child = new Deno.Command(run.command ?? Deno.execPath(), {
    args: run.args,
    cwd: run.cwd ?? dir,
    stdin: run.stdin !== undefined ? "piped" : "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  if (run.stdin !== undefined) {
    await (await Deno.open(run.stdin)).readable.pipeTo(child.stdin);
  }
  const { code, stdout } = await child.output();
  if (code !== 0) throw new Error(`${run.args.join(" ")} failed`);
  const digest = await crypto.subtle.digest("SHA-256", stdout);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16)).join("");
}

interface Row {
  group: Group;
  name: string;
  /** "speed": baseline time ÷ evalpipe time (≥ goal); "time": the inverse (≤ goal). */
  kind: "speed" | "time";
  /** Absent on a limit row: a bare Deno program doing only the work that a
   * goal's row cannot skip, against the same baseline, to show how far Deno
   * itself gets. */
  goal?: number;
  /** A part row: a piece of evalpipe's own work measured apart, not a limit. */
  part?: boolean;
  /** A form row: evalpipe's own code run in another shape (bench/_module_forms.ts). */
  form?: boolean;
  n: number;
  a: number[];
  b: number[];
  load: string[];
  /** The best ratio a Deno process could reach, from start-up alone. */
  ceiling?: number;
}
const rows: Row[] = [];
const notes: string[] = [];

async function compare(
  group: Group,
  name: string,
  how: {
    kind?: "speed" | "time";
    goal?: number;
    part?: boolean;
    form?: boolean;
    n: number;
    rounds?: number;
  },
  a: Run,
  b: Run,
): Promise<void> {
  const row: Row = {
    group,
    name,
    kind: how.kind ?? "speed",
    n: how.n,
    a: [],
    b: [],
    load: [load()],
  };
  if (how.goal !== undefined) row.goal = how.goal;
  if (how.part === true) row.part = true;
  if (how.form === true) row.form = true;
  for (let r = 0; r < (how.rounds ?? ROUNDS); r++) {
    if (r % 2 === 0) {
      row.a.push(await time(a));
      row.b.push(await time(b));
    } else {
      row.b.push(await time(b));
      row.a.push(await time(a));
    }
  }
  row.load.push(load());
  rows.push(row);
  console.error(
    `${name}: evalpipe ${median(row.a).toFixed(1)} ms, baseline ${
      median(row.b).toFixed(1)
    } ms, ${ratioText(row)} (load ${row.load.join("→")})`,
  );
}

function ratio(r: Row): number {
  return r.kind === "speed"
    ? median(r.b) / median(r.a)
    : median(r.a) / median(r.b);
}
function ratioText(r: Row): string {
  return `${ratio(r).toFixed(2)}× ${r.kind === "speed" ? "speed" : "time"}`;
}
function met(r: Row): string {
  if (r.goal === undefined) {
    return r.part === true
      ? "part row"
      : r.form === true
      ? "form row"
      : "limit row";
  }
  const ok = r.kind === "speed" ? ratio(r) >= r.goal : ratio(r) <= r.goal;
  return ok ? "met" : "not met";
}

const dir = await Deno.makeTempDir({ prefix: "evalpipe_limits_" });
/** Payload lines: unit records whose keys are in protocol v0's order, so that
 * each line is byte for byte the payload `score` sends for it. */
async function writeUnits(name: string, n: number): Promise<string> {
  const lines = Array.from(
    { length: n },
    (_, i) =>
      JSON.stringify({
        expected: "answer",
        input: `question ${i}`,
        output: "answer",
      }),
  );
  await Deno.writeTextFile(`${dir}/${name}`, lines.join("\n") + "\n");
  return `${dir}/${name}`;
}
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
    }) + "\n";
    if (chunk.length > 1 << 20) {
      await file.write(enc.encode(chunk));
      chunk = "";
    }
  }
  await file.write(enc.encode(chunk));
  file.close();
}

/** Compiles bench/_spawn_driver.c with `cc`, or says why not. */
async function spawnDriver(): Promise<string | undefined> {
  const out = `${WORK}/spawn_driver`;
  await Deno.mkdir(WORK, { recursive: true });
  try {
    const { code, stderr } = await new Deno.Command("cc", {
      args: ["-O2", "-o", out, `${ROOT}bench/_spawn_driver.c`],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (code !== 0) {
      notes.push(
        `spawn rows skipped: cc failed on bench/_spawn_driver.c: ${
          new TextDecoder().decode(stderr).trim()
        }`,
      );
      return undefined;
    }
  } catch (error) {
    // Only a missing compiler skips the rows; anything else is a bug here.
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    notes.push("spawn rows skipped: no `cc` on PATH to build the C driver");
    return undefined;
  }
  console.error(`built ${out} with cc -O2 from bench/_spawn_driver.c`);
  return out;
}

/** How rung B (bench/_ffi_spawn_async.ts) learns of exits, the fastest
 * measured of its three ways at c=4 and c=16, and its row's words for it. */
const RUNG_B = { how: "all", says: "one nonblocking poll per wake" };

async function spawnRows(): Promise<void> {
  const driver = await spawnDriver();
  if (driver === undefined) return;
  const units = await writeUnits("units.ndjson", UNITS);
  // What start-up alone allows: a Deno process that did each case exactly as
  // fast as the driver would still pay Deno's start (a bare one-line script)
  // where the driver pays its own (one unit).
  const oneUnit = await writeUnits("unit.ndjson", 1);
  await writeCases("start.jsonl", 1);
  const denoStart: number[] = [];
  const cStart: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    denoStart.push(
      await time({ args: bare("_bare_start.ts", `${dir}/start.jsonl`) }),
    );
    cStart.push(
      await time({ command: driver, args: [SCORER, "1"], stdin: oneUnit }),
    );
  }
  console.error(
    `start-up: bare Deno script ${
      median(denoStart).toFixed(1)
    } ms, C driver on 1 unit ${median(cStart).toFixed(1)} ms`,
  );
  for (const c of [1, 4, 16]) {
    const versus = { command: driver, args: [SCORER, String(c)], stdin: units };
    await compare(
      "spawn",
      `score, trivial sh scorer, ${UNITS} units, c=${c}, vs C posix_spawn driver`,
      { goal: 0.9, n: UNITS },
      {
        args: [
          ...EVALPIPE,
          "score",
          "--scorer",
          SCORER,
          "--name",
          "t",
          "--concurrency",
          String(c),
        ],
        stdin: units,
      },
      versus,
    );
    withCeiling();
    // The ladder: bare Deno programs making the driver's calls and nothing
    // evalpipe adds. Rung A, synchronous, cannot overlap cases: c=1 only.
    if (c === 1) {
      await compare(
        "spawn",
        `limit, rung A: Deno, the driver's libc calls, synchronous, ${UNITS} units, c=1, vs C posix_spawn driver`,
        { n: UNITS },
        { args: bare("_ffi_spawn_sync.ts", SCORER), stdin: units },
        versus,
      );
      withCeiling();
    }
    await compare(
      "spawn",
      `limit, rung B: Deno, the driver's libc calls, ${RUNG_B.says}, ${UNITS} units, c=${c}, vs C posix_spawn driver`,
      { n: UNITS },
      {
        args: bare("_ffi_spawn_async.ts", RUNG_B.how, SCORER, String(c)),
        stdin: units,
      },
      versus,
    );
    withCeiling();
  }

  /** The last row's best ratio from Deno's start-up alone. */
  function withCeiling(): void {
    const row = rows.at(-1)!;
    const b = median(row.b);
    row.ceiling = b / (b - median(cStart) + median(denoStart));
  }
}

async function persistentRows(): Promise<void> {
  await Deno.writeTextFile(
    `${dir}/persistent.py`,
    'import json, sys\nfor line in sys.stdin:\n    case = json.loads(line)\n    print(json.dumps({"score": 1.0 if case["output"] == case.get("expected") else 0.0}), flush=True)\n',
  );
  const cmd = `python3 ${dir}/persistent.py`;
  for (const n of new Set([UNITS, PERSISTENT_UNITS])) {
    const units = await writeUnits(`persistent-${n}.ndjson`, n);
    await compare(
      "persistent",
      `score --persistent, trivial Python scorer, ${n} units, vs bare loop over the same process`,
      { goal: 0.8, n },
      {
        args: [...EVALPIPE, "score", "--scorer", cmd, "--persistent"],
        stdin: units,
      },
      { args: bare("_bare_persistent.ts", cmd), stdin: units },
    );
    for (const stream of [false, true]) {
      await compare(
        "persistent",
        `limit: bare loop + verdicts parsed + Score lines${
          stream ? ", payloads streamed" : ""
        }, ${n} units, vs bare loop`,
        { n },
        {
          args: bare(
            "_limit_persistent.ts",
            cmd,
            ...(stream ? ["stream"] : []),
          ),
          stdin: units,
        },
        { args: bare("_bare_persistent.ts", cmd), stdin: units },
      );
    }
  }
}

/** The one-case dataset and suite the start-up figures share (written once). */
let oneCase: Promise<void> | undefined;
function writeOneCase(): Promise<void> {
  return oneCase ??= (async () => {
    await writeCases("one.jsonl", 1);
    await Deno.writeTextFile(
      `${dir}/one.yaml`,
      "dataset: one.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
  })();
}

async function runRows(): Promise<void> {
  await writeCases("data.jsonl", CASES);
  await writeOneCase();
  await Deno.writeTextFile(
    `${dir}/suite.yaml`,
    "dataset: data.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
  );
  const run = { args: [...EVALPIPE, "run", `${dir}/suite.yaml`] };
  const floor = { args: bare("_floor_run.ts", `${dir}/data.jsonl`) };
  const [ours, theirs] = [await stdoutOf(run), await stdoutOf(floor)];
  if (ours !== theirs) {
    notes.push("run row skipped: bench/_floor_run.ts's output differs");
    return;
  }
  // What start-up alone allows: a `run` whose every case cost what the
  // floor's costs would still pay its own one-case start-up where the floor
  // pays the floor's, both on the same one-line dataset, alternating.
  const runStart: number[] = [];
  const floorStart: number[] = [];
  const runOne = { args: [...EVALPIPE, "run", `${dir}/one.yaml`] };
  const floorOne = { args: bare("_floor_run.ts", `${dir}/one.jsonl`) };
  for (let r = 0; r < STARTUP_ROUNDS; r++) {
    const pair = [
      async () => runStart.push(await time(runOne)),
      async () => floorStart.push(await time(floorOne)),
    ];
    for (const step of r % 2 === 0 ? pair : pair.reverse()) await step();
  }
  console.error(
    `start-up: run on 1 case ${median(runStart).toFixed(1)} ms, ` +
      `the floor on 1 case ${median(floorStart).toFixed(1)} ms`,
  );
  await compare(
    "run",
    `run, replay + exact_match, ${CASES} cases, vs the same bytes from one tight loop`,
    { goal: 0.9, n: CASES },
    run,
    floor,
  );
  const row = rows.at(-1)!;
  const b = median(row.b);
  row.ceiling = b / (b - median(floorStart) + median(runStart));
}

async function startupRows(): Promise<void> {
  await writeOneCase();
  const unit = await writeUnits("one-unit.ndjson", 1);
  const floor = { args: bare("_bare_start.ts", `${dir}/one.jsonl`) };
  const run = { args: [...EVALPIPE, "run", `${dir}/one.yaml`] };
  // What a one-case `run` cannot skip, and nothing else: its YAML config
  // parsed with js-yaml, its dataset read through Web Streams, one line out.
  const shaped = {
    args: bare(
      "_startup_limits.ts",
      `${dir}/one.jsonl`,
      "--streams",
      "--yaml",
      `${dir}/one.yaml`,
    ),
  };
  const line = await stdoutOf(run);
  for (
    const [name, other] of [["_bare_start.ts", floor], [
      "_startup_limits.ts",
      shaped,
    ]] as const
  ) {
    if (await stdoutOf(other) !== line) {
      notes.push(`start-up: bench/${name}'s Score line differs from run's`);
    }
  }
  const how = { kind: "time" as const, n: 1, rounds: STARTUP_ROUNDS };
  const goal = { ...how, goal: 1.5 };
  await compare(
    "startup",
    "start-up: run, 1 case (replay + exact_match), vs bare script",
    goal,
    run,
    floor,
  );
  await compare(
    "startup",
    "start-up: score --config (exact_match), 1 unit, vs bare script",
    goal,
    {
      args: [...EVALPIPE, "score", "--config", `${dir}/one.yaml`],
      stdin: unit,
    },
    floor,
  );
  await compare(
    "startup",
    "start-up limit: bare program with js-yaml config + Web Streams dataset, 1 case, vs bare script",
    how,
    shaped,
    floor,
  );
  const spawning = {
    args: bare("_bare_start.ts", `${dir}/one.jsonl`, "--spawn", SCORER),
  };
  const scoring = {
    args: [...EVALPIPE, "score", "--scorer", SCORER, "--name", "t"],
    stdin: unit,
  };
  await compare(
    "startup",
    "start-up: score --scorer (sh), 1 unit, vs bare script with one sh -c",
    goal,
    scoring,
    spawning,
  );
  // What `score --scorer` cannot skip: its input through Web Streams, as
  // every stage of evalpipe is one, and the one `sh -c`.
  const streamed = [`${dir}/one.jsonl`, "--streams", "--spawn", SCORER];
  await compare(
    "startup",
    "start-up limit: bare program with Web Streams dataset + one sh -c, vs bare script with one sh -c",
    how,
    { args: bare("_startup_limits.ts", ...streamed) },
    spawning,
  );
  await compare(
    "startup",
    "start-up part: the same + score --scorer's modules loaded, vs bare script with one sh -c",
    { ...how, part: true },
    { args: bare("_startup_limits.ts", ...streamed, "--score-modules") },
    spawning,
  );
  await formRows(scoring, spawning, { ...how, form: true });
  // How much of the bare script with one `sh -c` is Deno's own start.
  await compare(
    "startup",
    "start-up limit: empty Deno script, vs bare script with one sh -c",
    how,
    { args: bare("_empty_start.ts") },
    spawning,
  );
}

/**
 * `score --scorer` with evalpipe's own code in other shapes
 * (bench/_module_forms.ts): how much of its start-up is the shape, one
 * TypeScript module per file, rather than the code. Skipped, with a note,
 * when the forms cannot be built (esbuild comes from npm).
 */
async function formRows(
  scoring: Run & { stdin: string },
  spawning: Run,
  how: { kind: "time"; n: number; rounds: number; form: true },
): Promise<void> {
  let forms;
  try {
    const { buildForms } = await import("./_module_forms.ts");
    forms = await buildForms(ROOT, `${WORK}/forms`);
  } catch (error) {
    notes.push(`start-up form rows skipped: no build (${error})`);
    return;
  }
  const rest = scoring.args.slice(EVALPIPE.length);
  const shapes = [
    [
      forms.js,
      "its modules as JavaScript, one file each, no source maps",
    ],
    [forms.merged, "its modules merged into one TypeScript module"],
    [forms.mergedJs, "that one module as JavaScript"],
  ] as const;
  const line = await stdoutOf(scoring);
  for (const [cli, what] of shapes) {
    const run = { args: [...evalpipeArgs(cli), ...rest], stdin: scoring.stdin };
    if (await stdoutOf(run) !== line) {
      notes.push(`start-up form row skipped: ${cli}'s Score line differs`);
      continue;
    }
    await compare(
      "startup",
      `start-up form: score --scorer, ${what}, vs bare script with one sh -c`,
      how,
      run,
      spawning,
    );
  }
}

async function networkRows(): Promise<void> {
  const server = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}bench/_slow_server.ts`, String(DELAY_MS)],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = server.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const baseUrl = (await lines.read()).value!.trim();
  lines.releaseLock();
  const count = async () =>
    Number(await (await fetch(baseUrl.replace(/\/v1$/, "/count"))).text());
  try {
    for (const c of [32, 256] as const) {
      const n = NET_CASES[c];
      await Deno.writeTextFile(
        `${dir}/net-${c}.jsonl`,
        Array.from({ length: n }, (_, i) =>
          JSON.stringify({
            input: `question ${i}`,
            expected: "answer",
            output: `answer ${i}`,
          })).join("\n") + "\n",
      );
      const target =
        `target:\n  type: openai\n  base_url: ${baseUrl}\n  model: fake-model\n  api_key_env: FAKE_API_KEY\n`;
      await Deno.writeTextFile(
        `${dir}/openai-${c}.yaml`,
        `dataset: net-${c}.jsonl\n${target}scorers: [{ type: exact_match }]\nconcurrency: ${c}\n`,
      );
      await Deno.writeTextFile(
        `${dir}/judge-${c}.yaml`,
        `dataset: net-${c}.jsonl\ntarget: { type: replay }\nscorers:\n  - type: llm_judge\n    base_url: ${baseUrl}\n    model: fake-model\n    api_key_env: FAKE_API_KEY\nconcurrency: ${c}\n`,
      );
      const fetchLoop = (judge: boolean): Run =>
        countedRun(
          bare(
            "_bare_fetch.ts",
            baseUrl,
            String(n),
            String(c),
            ...(judge ? ["judge"] : []),
          ),
          n,
        );
      await compare(
        "network",
        `openai target, ${n} cases, c=${c}, server 50 ms away, vs bare fetch loop`,
        { goal: 0.97, n },
        countedRun([
          ...EVALPIPE,
          "run",
          `${dir}/openai-${c}.yaml`,
          "--no-cache",
        ], n),
        fetchLoop(false),
      );
      await compare(
        "network",
        `llm_judge, ${n} cases, c=${c}, server 50 ms away, vs bare fetch loop (judge-sized bodies)`,
        { goal: 0.97, n },
        countedRun(
          [...EVALPIPE, "run", `${dir}/judge-${c}.yaml`, "--no-cache"],
          n,
        ),
        fetchLoop(true),
      );
      for (const judge of [false, true]) {
        await compare(
          "network",
          `limit: bare fetch loop + deadline + reply parsed + Score lines${
            judge ? " (judge)" : ""
          }, ${n} cases, c=${c}, vs bare fetch loop`,
          { n },
          countedRun(
            bare(
              "_limit_fetch.ts",
              baseUrl,
              `${dir}/net-${c}.jsonl`,
              String(c),
              ...(judge ? ["judge"] : []),
            ),
            n,
          ),
          fetchLoop(judge),
        );
      }
    }
    // The cached rerun: the cache filled once, untimed; then every case a hit.
    const n = CACHED_CASES;
    await Deno.writeTextFile(
      `${dir}/cached.jsonl`,
      Array.from({ length: n }, (_, i) =>
        JSON.stringify({
          input: `question ${i}`,
          expected: "answer",
          output: `answer ${i}`,
        })).join("\n") + "\n",
    );
    await Deno.writeTextFile(
      `${dir}/cached.yaml`,
      `dataset: cached.jsonl\ntarget:\n  type: openai\n  base_url: ${baseUrl}\n  model: fake-model\n  api_key_env: FAKE_API_KEY\nscorers: [{ type: exact_match }]\nconcurrency: 256\n`,
    );
    await Deno.writeTextFile(
      `${dir}/cached-replay.yaml`,
      `dataset: cached.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\nconcurrency: 256\n`,
    );
    const cached = [
      ...EVALPIPE,
      "run",
      `${dir}/cached.yaml`,
      "--cache-dir",
      `${dir}/cache`,
    ];
    await time(countedRun(cached, n, `target cache: 0 hits, ${n} calls`));
    await compare(
      "network",
      `cached rerun, ${n} cases, vs replay target over the same cases`,
      { goal: 0.9, n },
      countedRun(cached, 0, `target cache: ${n} hits, 0 calls`),
      countedRun([...EVALPIPE, "run", `${dir}/cached-replay.yaml`], 0),
    );
    const limit = (mode: string) =>
      bare("_limit_cached.ts", mode, `${dir}/cached.jsonl`, `${dir}/pack`);
    await time({ args: limit("fill") });
    await compare(
      "network",
      `limit: cases + SHA-256 key + Map lookup + Score lines, ${n} cases, vs replay target`,
      { n },
      { args: limit("hit") },
      countedRun([...EVALPIPE, "run", `${dir}/cached-replay.yaml`], 0),
    );
    await compare(
      "network",
      `limit: the same, ${n} cases, vs the same program without key and lookup`,
      { n },
      { args: limit("hit") },
      { args: limit("replay") },
    );
    // What a hit's own work (key, lookup, the entry's parse) adds to a replay
    // run, as the bare program pays it, bounds the cached rerun's ratio.
    const [floorRow, replayRun] = [rows.at(-1)!, rows.at(-2)!];
    const extra = median(floorRow.a) - median(floorRow.b);
    const b = median(replayRun.b);
    notes.push(
      `cached rerun: a hit's own work in a bare program (key, lookup, parse) took ${
        extra.toFixed(1)
      } ms over ${n} cases (${
        (extra * 1000 / n).toFixed(1)
      } µs each); added to the replay run's ${
        b.toFixed(1)
      } ms it leaves the cached rerun at most ${(b / (b + extra)).toFixed(2)}×`,
    );
  } finally {
    // Its stdout ends with it, which ends the pipe read above.
    server.kill();
    await server.status;
  }

  /** A run that must make exactly `calls` requests (and print `text`). */
  function countedRun(args: string[], calls: number, text?: string): Run {
    let start = 0;
    return {
      args,
      before: async () => {
        start = await count();
      },
      check: async (stderr) => {
        const made = await count() - start;
        if (made !== calls || (text !== undefined && !stderr.includes(text))) {
          throw new Error(
            `${args.join(" ")}: expected ${calls} requests${
              text !== undefined ? ` and "${text}"` : ""
            }, got ${made}: ${stderr}`,
          );
        }
      },
    };
  }
}

try {
  console.error(`load average at start: ${load()}`);
  if (only.has("spawn")) await spawnRows();
  if (only.has("persistent")) await persistentRows();
  if (only.has("run")) await runRows();
  if (only.has("startup")) await startupRows();
  if (only.has("network")) await networkRows();
} finally {
  await Deno.remove(dir, { recursive: true });
}

console.log(
  `\nevalpipe against the limits (issue 17): medians of ${ROUNDS} alternating rounds ` +
    `(start-up: ${STARTUP_ROUNDS}); Deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cores; ` +
    `evalpipe and the Deno baselines started as deno ${
      ["run", "-A", ...V8_FLAGS].join(" ")
    }${QUICK ? "; --quick: sizes too small to mean anything" : ""}\n`,
);
console.log(
  "| comparison | evalpipe (median) | baseline (median) | ratio | goal | met | load avg (before→after) | ceiling from Deno's start-up |",
);
console.log("|---|---:|---:|---:|---|---|---|---:|");
for (const r of rows) {
  console.log(
    `| ${r.name} | ${median(r.a).toFixed(1)} ms | ${
      median(r.b).toFixed(1)
    } ms | ${ratioText(r)} | ${
      r.goal === undefined ? "" : `${r.kind === "speed" ? "≥" : "≤"} ${r.goal}×`
    } | ${met(r)} | ${r.load.join("→")} | ${
      r.ceiling !== undefined ? `${r.ceiling.toFixed(2)}×` : ""
    } |`,
  );
}
for (const note of notes) console.log(`\n${note}`);
