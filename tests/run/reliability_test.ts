/**
 * The reliability battery: `run` killed at many points and resumed, signals
 * with hung scorers, hostile datasets and configs, the process cap, and case
 * data that tries to reach a shell or a terminal. Everything goes through the
 * real command line, with real processes, in temporary folders.
 */

import assert from "node:assert/strict";
import { delay, isGone, reapAll, within } from "../_proc.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const CLI = `${ROOT}cli.ts`;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

interface Outcome {
  code: number;
  signal: Deno.Signal | null;
  stdout: string;
  stderr: string;
}

/** A running `evalpipe` command, with its output collected as it ends. */
class Evalpipe {
  readonly child: Deno.ChildProcess;
  readonly outcome: Promise<Outcome>;
  #exited = false;

  constructor(args: string[], cwd: string, stdout: "piped" | "null") {
    this.child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CLI, ...args],
      cwd,
      stdin: "null",
      stdout,
      stderr: "piped",
      // The user's shell is in cwd, even under `deno task test`: the
      // resume hint then goes nowhere first.
      env: { NO_COLOR: "1", INIT_CWD: cwd },
    }).spawn();
    this.child.status.then(() => (this.#exited = true));
    this.outcome = this.child.output().then((o) => ({
      code: o.code,
      signal: o.signal,
      stdout: stdout === "piped" ? decoder.decode(o.stdout) : "",
      stderr: decoder.decode(o.stderr),
    }));
  }

  get exited(): boolean {
    return this.#exited;
  }

  /** Sends `signal` unless the command has ended; returns whether it was sent. */
  kill(signal: Deno.Signal): boolean {
    if (this.#exited) return false;
    try {
      this.child.kill(signal);
      return true;
    } catch (error) {
      // It ended between the check and the kill: nothing left to signal.
      if (!(error instanceof TypeError)) throw error;
      return false;
    }
  }
}

function cli(args: string[], cwd: string): Promise<Outcome> {
  return new Evalpipe(args, cwd, "piped").outcome;
}

/** Waits, bounded, until `ready` holds. */
async function until(
  what: string,
  ready: () => Promise<boolean> | boolean,
  ms = 30_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting ${what}`);
    await delay(5);
  }
}

async function writeFiles(
  dir: string,
  files: Record<string, string | Uint8Array>,
): Promise<void> {
  for (const [name, content] of Object.entries(files)) {
    const path = `${dir}/${name}`;
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    if (typeof content === "string") await Deno.writeTextFile(path, content);
    else await Deno.writeFile(path, content);
  }
}

/** Runs `fn` in a fresh folder holding `files`; kills what is left in it and removes it. */
async function withDir(
  files: Record<string, string | Uint8Array>,
  fn: (dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "evalpipe_reliability_" }),
  );
  try {
    await writeFiles(dir, files);
    await fn(dir);
  } finally {
    await reap(dir);
    await Deno.remove(dir, { recursive: true });
  }
}

/** The state letter of a process (`R`, `S`, `Z`, ...), or `undefined` when it is gone. */
async function stateOf(pid: number): Promise<string | undefined> {
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2)[0];
  } catch (error) {
    if (isGone(error)) return undefined;
    throw error;
  }
}

/**
 * Live processes (zombies aside) whose working folder is `folder` or inside
 * it: every target and scorer runs in the config file's folder, so these are
 * the children evalpipe started there and whatever they started.
 */
async function processesIn(folder: string): Promise<number[]> {
  const found: number[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const pid = Number(entry.name);
    if (pid === Deno.pid) continue;
    try {
      const state = await stateOf(pid);
      if (state === undefined || state === "Z") continue;
      const cwd = await Deno.readLink(`/proc/${pid}/cwd`);
      if (cwd === folder || cwd.startsWith(`${folder}/`)) found.push(pid);
    } catch (error) {
      // It ended while we looked, or is not ours to inspect.
      if (
        !(error instanceof Deno.errors.NotFound) &&
        !(error instanceof Deno.errors.PermissionDenied)
      ) throw error;
    }
  }
  return found;
}

/**
 * Asserts that none of `pids` runs any more (a zombie has ended; a pid now
 * running elsewhere was recycled), allowing a moment for SIGKILL to land.
 */
async function assertGone(pids: number[], folder: string): Promise<void> {
  const running = async () => {
    const alive: number[] = [];
    for (const pid of pids) {
      const state = await stateOf(pid);
      if (state === undefined || state === "Z") continue;
      try {
        const cwd = await Deno.readLink(`/proc/${pid}/cwd`);
        if (cwd === folder || cwd.startsWith(`${folder}/`)) alive.push(pid);
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
    }
    return alive;
  };
  // A bound for SIGKILL to land, which takes its time on a loaded machine:
  // a process never killed is still there after it.
  for (let i = 0; i < 3000 && (await running()).length > 0; i++) {
    await delay(10);
  }
  assert.deepEqual(await running(), [], "processes left behind");
  assert.deepEqual(await processesIn(folder), [], "processes left behind");
}

function assertNoStackTrace(stderr: string): void {
  assert.doesNotMatch(stderr, /Uncaught|^\s+at .*:\d+:\d+\)?$/m, stderr);
}

function jsonl(records: unknown[]): string {
  return records.map((r) => JSON.stringify(r) + "\n").join("");
}

function lineCount(bytes: Uint8Array): number {
  let n = 0;
  for (const b of bytes) if (b === 10) n++;
  return n;
}

async function readOrEmpty(path: string): Promise<Uint8Array> {
  try {
    return await Deno.readFile(path);
  } catch (error) {
    // Not created yet: nothing written.
    if (error instanceof Deno.errors.NotFound) return new Uint8Array(0);
    throw error;
  }
}

/**
 * The Score lines of a Scores file by unit and metric, asserting that every
 * line is whole JSON and that no unit and metric comes twice.
 */
function scoresByKey(text: string): Map<string, string> {
  assert.ok(text === "" || text.endsWith("\n"), "a torn last line remains");
  const byKey = new Map<string, string>();
  for (const line of text.split("\n").slice(0, -1)) {
    const score = JSON.parse(line);
    const key = `${score.unit_id} ${score.metric}`;
    assert.ok(!byKey.has(key), `the Score of ${key} is there twice`);
    byKey.set(key, line);
  }
  return byKey;
}

function sorted(byKey: Map<string, string>): Array<[string, string]> {
  return [...byKey].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The summary table in a `run`'s stderr. */
function summaryTable(stderr: string): string {
  const lines = stderr.split("\n");
  const start = lines.findIndex((l) => l.startsWith("metric "));
  const end = lines.findIndex((l) => / scores( written|$)/.test(l));
  assert.ok(start >= 0 && end > start, stderr);
  return lines.slice(start, end).join("\n");
}

// ---------------------------------------------------------------------------
// 1. Fault injection: SIGKILL anywhere, then resume.

const FAULT_CASES = 60;
const FAULT_EPOCHS = 2;
const FAULT_SCORES = FAULT_CASES * FAULT_EPOCHS * 2;

const FAULT_SUITE = `dataset: data.jsonl
target: { type: subprocess, cmd: sh target.sh }
scorers:
  - type: exact_match
  - type: subprocess
    cmd: sh chars.sh
concurrency: 4
epochs: ${FAULT_EPOCHS}
`;

// Echoes its payload; fails on purpose for some cases (target error Scores).
const FAULT_TARGET = `p=$(cat)
case $p in
  *fail*) echo "the target fails on purpose" >&2; exit 3 ;;
esac
printf '%s\\n' "$p"
`;

// A deterministic verdict from the payload's length; no verdict for some
// cases (scorer error Scores).
const FAULT_SCORER = `p=$(cat)
case $p in
  *garble*) echo "no verdict here"; exit 0 ;;
esac
n=\${#p}
echo "{\\"score\\": 0.$((n % 10)), \\"reason\\": \\"$n characters\\"}"
`;

function faultCases(): string {
  return jsonl(Array.from({ length: FAULT_CASES }, (_, i) => {
    const input = `question ${i}${i % 17 === 5 ? " fail" : ""}${
      i % 13 === 7 ? " garble" : ""
    }`;
    const context = i % 4 === 1 ? [`chunk ${i}`, "shared chunk"] : undefined;
    return {
      ...(i % 5 === 0 ? { id: `case-${i}` } : {}),
      input,
      ...(context !== undefined ? { context } : {}),
      // What the echoing target answers, so exact_match passes; or not.
      ...(i % 3 === 0
        ? {
          expected: JSON.stringify({
            ...(context !== undefined ? { context } : {}),
            input,
          }),
        }
        : i % 3 === 1
        ? { expected: "something else" }
        : {}),
    };
  }));
}

type Moment = { lines: number } | { ms: number };

interface KillPoint {
  /** When the first run is killed. */
  at: Moment;
  /** A torn write appended after the kill. */
  torn?: Uint8Array;
  /** When the first resume is killed too. */
  again?: Moment;
}

const torn = (text: string) => encoder.encode(text);

// Right after start (before the dataset is read, before the meta sidecar is
// written), at Score counts spread over the run, near its end, and by
// elapsed time; a few with a torn write appended, a few killed twice.
const KILL_POINTS: KillPoint[] = [
  { at: { ms: 0 }, again: { lines: 30 } },
  { at: { ms: 40 }, torn: torn('{"metric":"chars","status":"sco') },
  { at: { ms: 120 }, again: { ms: 0 } },
  { at: { lines: 1 } },
  { at: { lines: 4 }, torn: torn('{"metric":"exact_match","unit_id":"da') },
  { at: { lines: 10 } },
  { at: { lines: 20 }, again: { lines: 60 } },
  { at: { lines: 35 } },
  {
    at: { lines: 50 },
    // A UTF-8 sequence cut in the middle.
    torn: new Uint8Array([...torn('{"metric":"chars","reason":"caf'), 0xc3]),
  },
  { at: { lines: 70 } },
  { at: { lines: 90 }, again: { ms: 0 } },
  { at: { lines: 110 } },
  { at: { lines: 130 } },
  {
    at: { lines: 150 },
    torn: torn('{"metric":"chars","status":"scored","value":0.5'),
    again: { lines: 200 },
  },
  { at: { lines: 170 } },
  { at: { lines: 190 } },
  { at: { lines: 210 } },
  { at: { lines: 225 } },
  { at: { lines: 235 } },
  { at: { lines: FAULT_SCORES - 1 } },
  { at: { ms: 250 } },
  { at: { ms: 350 }, again: { ms: 150 } },
  { at: { ms: 500 } },
  { at: { ms: 650 } },
];

/**
 * Starts `run`, kills it with SIGKILL at `moment`, and kills what it left
 * running. Returns whether the kill landed (the run had not ended) and how
 * many lines the Scores file had then.
 */
async function killAt(
  dir: string,
  args: string[],
  moment: Moment,
): Promise<{ killed: boolean; lines: number }> {
  const run = new Evalpipe(args, dir, "null");
  const part = `${dir}/part.ndjson`;
  let failure: unknown;
  try {
    if ("ms" in moment) {
      if (moment.ms > 0) {
        // The timer is cleared when the run ends first: a pending one would
        // leak out of the test.
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          new Promise((resolve) => (timer = setTimeout(resolve, moment.ms))),
          run.child.status,
        ]);
        clearTimeout(timer);
      }
    } else {
      // The lines, or the run's end, whichever comes first, however slow
      // the machine: at load 25-50 a run took more than the 30 s this once
      // allowed to reach its last lines. The bound is a guard against a
      // hung run, not a claim of speed.
      await until(
        `for ${moment.lines} Score lines`,
        async () =>
          run.exited || lineCount(await readOrEmpty(part)) >= moment.lines,
        600_000,
      );
    }
  } catch (error) {
    failure = error;
  }
  run.kill("SIGKILL");
  const outcome = await run.outcome;
  // SIGKILL leaves the running targets and scorers orphaned.
  await reap(`${dir}/suite`);
  if (failure !== undefined) throw failure;
  // A run that ended just before the kill must have ended well.
  const killed = outcome.signal === "SIGKILL";
  if (!killed) assert.equal(outcome.code, 0, outcome.stderr);
  return { killed, lines: lineCount(await readOrEmpty(part)) };
}

Deno.test(`run --resume after SIGKILL at ${KILL_POINTS.length} points, some twice, equals an uninterrupted run Score by Score`, async () => {
  await withDir({
    "suite/suite.yaml": FAULT_SUITE,
    "suite/target.sh": FAULT_TARGET,
    "suite/chars.sh": FAULT_SCORER,
    "suite/data.jsonl": faultCases(),
  }, async (dir) => {
    const reference = await cli(
      ["run", "suite/suite.yaml", "--out", "ref.ndjson"],
      dir,
    );
    assert.equal(reference.code, 0, reference.stderr);
    const expected = scoresByKey(await Deno.readTextFile(`${dir}/ref.ndjson`));
    assert.equal(expected.size, FAULT_SCORES);
    const statuses = new Set(
      [...expected.values()].map((l) => JSON.parse(l).status),
    );
    assert.deepEqual([...statuses].sort(), [
      "blocked",
      "error",
      "non_evaluable",
      "scored",
    ]);
    const table = summaryTable(reference.stderr);

    const args = ["run", "suite/suite.yaml", "--out", "part.ndjson"];
    const part = `${dir}/part.ndjson`;
    let landed = 0;
    const seenLines = new Set<number>();
    for (const [i, point] of KILL_POINTS.entries()) {
      const where = `kill point ${i} (${JSON.stringify(point.at)})`;
      await Deno.remove(part).catch((error) => {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      });
      await Deno.remove(`${part}.meta.json`).catch((error) => {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      });
      const first = await killAt(dir, args, point.at);
      if (first.killed) landed++;
      if (first.killed) seenLines.add(first.lines);
      let tornChars: number | undefined;
      if (point.torn !== undefined) {
        const before = await readOrEmpty(part);
        const whole = before.length === 0 || before.at(-1) === 10;
        await Deno.writeFile(part, point.torn, { append: true });
        if (whole) tornChars = decoder.decode(point.torn).length;
      }
      if (point.again !== undefined) {
        const second = await killAt(dir, [...args, "--resume"], point.again);
        if (second.killed) landed++;
        // Whether the killed resume had dropped the torn line is unknown.
        if (second.killed) tornChars = undefined;
      }
      const resumed = await cli([...args, "--resume"], dir);
      assert.equal(resumed.code, 0, `${where}: ${resumed.stderr}`);
      assertNoStackTrace(resumed.stderr);
      if (tornChars !== undefined) {
        assert.ok(
          resumed.stderr.includes(
            `evalpipe: dropped a torn last line of "part.ndjson" (${tornChars} characters)\n`,
          ),
          `${where}: ${resumed.stderr}`,
        );
      }
      // Old and new Scores add up to the whole run, none written twice.
      const count = resumed.stderr.match(
        /(\d+) scores written to part\.ndjson(?: \(after (\d+) already there\))?/,
      );
      assert.ok(count !== null, resumed.stderr);
      assert.equal(Number(count[1]) + Number(count[2] ?? 0), FAULT_SCORES);
      assert.equal(summaryTable(resumed.stderr), table, where);
      const actual = scoresByKey(await Deno.readTextFile(part));
      assert.deepEqual(sorted(actual), sorted(expected), where);
    }
    // The kills landed all over the run, not only at its ends: before its
    // first line and in each quarter of its lines. (Counted by quarter, not
    // by distinct counts: Scores come in bursts of a few units, so two kills
    // aimed a few lines apart may fall on one count, the more so when the
    // test reads the file late on a loaded machine.)
    assert.ok(landed >= 20, `only ${landed} kills landed`);
    const quarters = new Set(
      [...seenLines].map((n) =>
        n === 0 ? -1 : Math.min(3, Math.floor((4 * n) / FAULT_SCORES))
      ),
    );
    assert.deepEqual(
      [...quarters].sort((a, b) => a - b),
      [-1, 0, 1, 2, 3],
      `kills fell at ${[...seenLines].sort((a, b) => a - b)} lines`,
    );
  });
});

// ---------------------------------------------------------------------------
// 2. Resume refuses what it cannot continue safely.

const REPLAY_SUITE = `dataset: data.jsonl
target: { type: replay }
scorers:
  - type: exact_match
  - type: contains
    name: mentions
`;

const REPLAY_CASES = jsonl(
  Array.from({ length: 8 }, (_, i) => ({
    input: `q${i}`,
    expected: `a${i % 3}`,
    output: `a${i % 2}`,
  })),
);

/** Runs the replay suite to `part.ndjson`, then keeps only its first `keep` lines. */
async function interruptedFile(dir: string, keep: number): Promise<string> {
  const full = await cli(["run", "suite.yaml", "--out", "part.ndjson"], dir);
  assert.equal(full.code, 0, full.stderr);
  const text = await Deno.readTextFile(`${dir}/part.ndjson`);
  const lines = text.split("\n").slice(0, keep).map((l) => l + "\n").join("");
  await Deno.writeTextFile(`${dir}/part.ndjson`, lines);
  return text;
}

const RESUME = ["run", "suite.yaml", "--out", "part.ndjson", "--resume"];

Deno.test("run --resume refuses a changed config or dataset with exit 2, and --force continues", async () => {
  await withDir(
    { "suite.yaml": REPLAY_SUITE, "data.jsonl": REPLAY_CASES },
    async (dir) => {
      await interruptedFile(dir, 5);
      const kept = await Deno.readTextFile(`${dir}/part.ndjson`);
      const meta = JSON.parse(
        await Deno.readTextFile(`${dir}/part.ndjson.meta.json`),
      );
      const refusal = (what: string) =>
        `evalpipe: ${what} changed since "part.ndjson" was started (run ${meta.run_id}); ` +
        "its Scores would mix two suites. Start a new --out, or resume with --force\n";

      // A change that shapes the Scores; concurrency alone would not count.
      await Deno.writeTextFile(
        `${dir}/suite.yaml`,
        REPLAY_SUITE + "timeout: 30\n",
      );
      let out = await cli(RESUME, dir);
      assert.equal(out.code, 2);
      assert.equal(out.stderr, refusal("the config"));
      assert.equal(await Deno.readTextFile(`${dir}/part.ndjson`), kept);

      await Deno.writeTextFile(`${dir}/suite.yaml`, REPLAY_SUITE);
      const more = jsonl([{ input: "q8", expected: "a", output: "a" }]);
      await Deno.writeTextFile(`${dir}/data.jsonl`, REPLAY_CASES + more);
      out = await cli(RESUME, dir);
      assert.equal(out.code, 2);
      assert.equal(out.stderr, refusal("the dataset"));

      await Deno.writeTextFile(
        `${dir}/suite.yaml`,
        REPLAY_SUITE + "timeout: 45\n",
      );
      out = await cli(RESUME, dir);
      assert.equal(out.code, 2);
      assert.equal(out.stderr, refusal("the config and the dataset"));
      assert.equal(await Deno.readTextFile(`${dir}/part.ndjson`), kept);

      out = await cli([...RESUME, "--force"], dir);
      assert.equal(out.code, 0, out.stderr);
      assert.equal(out.stdout, "");
      assert.match(
        out.stderr,
        /\n13 scores written to part\.ndjson \(after 5 already there\)\n$/,
      );
      const all = scoresByKey(await Deno.readTextFile(`${dir}/part.ndjson`));
      assert.equal(all.size, 9 * 2);
      assert.ok(all.has("data.jsonl#9 mentions"));
    },
  );
});

Deno.test("run --resume without --out, or --force without --resume, is a usage error", async () => {
  await withDir(
    { "suite.yaml": REPLAY_SUITE, "data.jsonl": REPLAY_CASES },
    async (dir) => {
      let out = await cli(["run", "suite.yaml", "--resume"], dir);
      assert.equal(out.code, 2);
      assert.equal(out.stdout, "");
      assert.equal(
        out.stderr,
        "evalpipe: --resume continues the Scores file given with --out\n" +
          'Run "evalpipe run --help" for usage.\n',
      );
      out = await cli(
        ["run", "suite.yaml", "--out", "x.ndjson", "--force"],
        dir,
      );
      assert.equal(out.code, 2);
      assert.equal(
        out.stderr,
        "evalpipe: --force goes with --resume\n" +
          'Run "evalpipe run --help" for usage.\n',
      );
      assert.deepEqual(
        await Array.fromAsync(Deno.readDir(dir), (e) => e.name).then((n) =>
          n.sort()
        ),
        ["data.jsonl", "suite.yaml"],
      );
    },
  );
});

Deno.test("run --resume refuses a Scores file without its meta sidecar unless --force", async () => {
  await withDir(
    { "suite.yaml": REPLAY_SUITE, "data.jsonl": REPLAY_CASES },
    async (dir) => {
      const whole = scoresByKey(await interruptedFile(dir, 3));
      await Deno.remove(`${dir}/part.ndjson.meta.json`);
      let out = await cli(RESUME, dir);
      assert.equal(out.code, 2);
      assert.equal(
        out.stderr,
        'evalpipe: "part.ndjson.meta.json" is missing, so nothing shows that ' +
          "the config and dataset are unchanged; resume with --force to continue anyway and write it again\n",
      );
      out = await cli([...RESUME, "--force"], dir);
      assert.equal(out.code, 0, out.stderr);
      const resumed = scoresByKey(
        await Deno.readTextFile(`${dir}/part.ndjson`),
      );
      assert.deepEqual(sorted(resumed), sorted(whole));
    },
  );
});

Deno.test("run --resume refuses a damaged meta sidecar unless --force", async () => {
  await withDir(
    { "suite.yaml": REPLAY_SUITE, "data.jsonl": REPLAY_CASES },
    async (dir) => {
      const whole = scoresByKey(await interruptedFile(dir, 7));
      await Deno.writeTextFile(`${dir}/part.ndjson.meta.json`, '{"run_id":');
      let out = await cli(RESUME, dir);
      assert.equal(out.code, 2);
      assert.equal(
        out.stderr,
        'evalpipe: "part.ndjson.meta.json" is damaged; resume with --force to write it again\n',
      );
      out = await cli([...RESUME, "--force"], dir);
      assert.equal(out.code, 0, out.stderr);
      assert.deepEqual(
        sorted(scoresByKey(await Deno.readTextFile(`${dir}/part.ndjson`))),
        sorted(whole),
      );
    },
  );
});

Deno.test("run --resume of a missing or empty Scores file starts it afresh and writes its meta sidecar", async () => {
  await withDir(
    { "suite.yaml": REPLAY_SUITE, "data.jsonl": REPLAY_CASES },
    async (dir) => {
      // Nothing there yet: a plain run, whose meta lets a later resume check.
      let out = await cli(RESUME, dir);
      assert.equal(out.code, 0, out.stderr);
      const meta = JSON.parse(
        await Deno.readTextFile(`${dir}/part.ndjson.meta.json`),
      );
      assert.equal(
        scoresByKey(await Deno.readTextFile(`${dir}/part.ndjson`)).size,
        16,
      );
      // An empty file beside the meta of another suite: nothing to mix.
      await Deno.writeTextFile(`${dir}/part.ndjson`, "");
      await Deno.writeTextFile(
        `${dir}/suite.yaml`,
        REPLAY_SUITE + "timeout: 31\n",
      );
      out = await cli(RESUME, dir);
      assert.equal(out.code, 0, out.stderr);
      const fresh = JSON.parse(
        await Deno.readTextFile(`${dir}/part.ndjson.meta.json`),
      );
      assert.notEqual(fresh.fingerprints.config, meta.fingerprints.config);
      assert.equal(
        scoresByKey(await Deno.readTextFile(`${dir}/part.ndjson`)).size,
        16,
      );
    },
  );
});

Deno.test("run --resume refuses a Scores file whose earlier line is not a Score", async () => {
  await withDir(
    { "suite.yaml": REPLAY_SUITE, "data.jsonl": REPLAY_CASES },
    async (dir) => {
      await interruptedFile(dir, 4);
      const lines = (await Deno.readTextFile(`${dir}/part.ndjson`)).split("\n");
      lines[2] = "not a score";
      await Deno.writeTextFile(`${dir}/part.ndjson`, lines.join("\n"));
      const out = await cli([...RESUME, "--force"], dir);
      assert.equal(out.code, 2);
      assert.equal(
        out.stderr,
        `evalpipe: "part.ndjson" line 3 is not a Score (Unexpected token 'o', "not a score" is not valid JSON); it cannot be resumed\n`,
      );
    },
  );
});

// ---------------------------------------------------------------------------
// 3. Signals: nothing is left running.

const HANG_SUITE = `dataset: data.jsonl
target: { type: replay }
scorers:
  - type: exact_match
  - type: subprocess
    cmd: sh hang.sh
concurrency: 3
`;

// Records its pid and its child's, then hangs, until "release" exists.
const HANG_SCORER = `cat > /dev/null
if [ -e release ]; then echo '{"score": 1}'; exit 0; fi
echo $$ >> pids.txt
sleep 1000 &
echo $! >> pids.txt
wait
`;

const HANG_CASES = jsonl(
  Array.from({ length: 6 }, (_, i) => ({
    input: `q${i}`,
    expected: "a",
    output: "a",
  })),
);

async function pidsOf(dir: string): Promise<number[]> {
  return decoder.decode(await readOrEmpty(`${dir}/pids.txt`))
    .split("\n").filter((l) => l !== "").map(Number);
}

/** Starts the hanging suite and waits until three scorers and their children run. */
async function startHung(dir: string, extra: string[]): Promise<Evalpipe> {
  return await startUntil(
    dir,
    extra,
    "for 3 hung scorers",
    async () => (await pidsOf(dir)).length >= 6,
  );
}

/**
 * Starts `run suite.yaml --out part.ndjson` with `extra` and waits until
 * `ready` holds while it runs; kills it when that never comes.
 */
async function startUntil(
  dir: string,
  extra: string[],
  what: string,
  ready: () => Promise<boolean>,
): Promise<Evalpipe> {
  const run = new Evalpipe(
    ["run", "suite.yaml", "--out", "part.ndjson", ...extra],
    dir,
    "null",
  );
  try {
    await until(what, async () => {
      assert.ok(!run.exited, `the run ended before waiting ${what}`);
      return await ready();
    });
  } catch (error) {
    run.kill("SIGKILL");
    await run.outcome;
    throw error;
  }
  return run;
}

Deno.test("run on SIGINT prints a resume command that keeps every flag given, --epochs and the subset included", async () => {
  await withDir(
    {
      "suite.yaml": HANG_SUITE,
      "hang.sh": HANG_SCORER,
      "data.jsonl": HANG_CASES,
    },
    async (dir) => {
      const run = await startHung(dir, [
        "--grace",
        "0.5",
        "--epochs",
        "2",
        "--filter",
        "jsonl",
        "--units",
        "it's units.jsonl",
      ]);
      run.kill("SIGINT");
      const out = await run.outcome;
      assert.equal(out.code, 130, out.stderr);
      assert.match(
        out.stderr,
        /^evalpipe: resume with: (?:evalpipe|deno run -A \S+) run suite\.yaml --out part\.ndjson --grace 0\.5 --units 'it'\\''s units\.jsonl' --epochs 2 --filter jsonl --resume$/m,
      );
      const meta = JSON.parse(
        await Deno.readTextFile(`${dir}/part.ndjson.meta.json`),
      );
      assert.deepEqual(meta.settings, {
        epochs: 2,
        subset: { filter: "jsonl" },
        require: "all",
      });
    },
  );
});

for (
  const [sig, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const
) {
  Deno.test(`run on ${sig} with hung scorers exits ${code} after --grace, ends the record incomplete and leaves no process`, async () => {
    await withDir(
      {
        "suite.yaml": HANG_SUITE,
        "hang.sh": HANG_SCORER,
        "data.jsonl": HANG_CASES,
      },
      async (dir) => {
        const run = await startHung(dir, [
          "--grace",
          "0.5",
          "--record",
          "rec.json",
        ]);
        run.kill(sig);
        const out = await run.outcome;
        assert.equal(out.code, code, out.stderr);
        const said = out.stderr.split("\n");
        // The program as the user starts it: evalpipe when it is on PATH.
        const hint = said.at(-2)!;
        assert.match(
          hint,
          /^evalpipe: resume with: (?:evalpipe|deno run -A \S+) run suite\.yaml --out part\.ndjson --grace 0\.5 --record rec\.json --resume$/,
        );
        assert.equal(
          said[0],
          `evalpipe: ${sig}: taking no new cases, finishing the ones running (again to stop at once)`,
        );
        // Every unit hung: the summary says nothing was written.
        assert.deepEqual(said.slice(-4), [
          "0 scores written to part.ndjson",
          `evalpipe: interrupted by ${sig}; running commands were stopped, the run is incomplete`,
          hint,
          "",
        ]);
        const record = JSON.parse(await Deno.readTextFile(`${dir}/rec.json`));
        assert.equal(record.complete, false);
        assert.ok(Array.isArray(record.units));
        const pids = await pidsOf(dir);
        assert.equal(pids.length, 6);
        await assertGone(pids, dir);

        // The advice works: once the scorers no longer hang, the run completes.
        await Deno.writeTextFile(`${dir}/release`, "");
        const resumed = await cli(
          hint.slice(hint.indexOf(" run suite.yaml") + 1).split(" "),
          dir,
        );
        assert.equal(resumed.code, 0, resumed.stderr);
        assert.equal(
          scoresByKey(await Deno.readTextFile(`${dir}/part.ndjson`)).size,
          12,
        );
      },
    );
  });
}

// A call that hangs on case "t", a scorer that hangs on case "s"; the
// others answer at once. Each hung process records its pid.
const STALL_SUITE = `dataset: data.jsonl
target: { type: subprocess, cmd: sh target.sh }
scorers:
  - type: exact_match
  - type: subprocess
    cmd: sh scorer.sh
concurrency: 4
`;

const STALL_TARGET = `in=$(cat)
case "$in" in *'"t"'*) [ -e release ] || { echo $$ >> pids.txt; exec sleep 1000; } ;; esac
echo >> answered.txt
echo a
`;

const STALL_SCORER = `in=$(cat)
case "$in" in *'"s"'*) [ -e release ] || { echo $$ >> pids.txt; exec sleep 1000; } ;; esac
echo '{"score": 1}'
`;

Deno.test("run on SIGINT writes the units that finished behind a hung call or scorer, and drops the hung ones for the resume", async () => {
  await withDir(
    {
      "suite.yaml": STALL_SUITE,
      "target.sh": STALL_TARGET,
      "scorer.sh": STALL_SCORER,
      "data.jsonl": jsonl(
        ["t", "s", "a", "b", "c"].map((input) => ({ input, expected: "a" })),
      ),
    },
    async (dir) => {
      // The call of "t" hangs, the four others have answered: in input
      // order, they wait behind it, unscored.
      const run = await startUntil(
        dir,
        ["--grace", "10", "--record", "rec.json", "--units", "units.jsonl"],
        "for the hung call",
        async () =>
          (await pidsOf(dir)).length >= 1 &&
          lineCount(await readOrEmpty(`${dir}/answered.txt`)) >= 4,
      );
      assert.equal(lineCount(await readOrEmpty(`${dir}/units.jsonl`)), 0);
      run.kill("SIGINT");
      // Interrupted, they are scored and leave as they finish, and the
      // scorer of "s" hangs. Four scorers start after the signal: a grace
      // of 1.5 s did not always cover their start on a machine at load 20
      // to 40, and the units it had no time for were dropped. The grace
      // bounds what waits for the hung two; the test waits it out.
      await until("for the hung scorer", async () => {
        assert.ok(!run.exited, 'the run ended before the scorer of "s" ran');
        return (await pidsOf(dir)).length >= 2;
      });
      const pids = await pidsOf(dir);
      const out = await run.outcome;
      assert.equal(out.code, 130, out.stderr);
      assertNoStackTrace(out.stderr);
      await assertGone(pids, dir);
      // The three finished units are written whole; neither hung one is.
      const written = scoresByKey(
        await Deno.readTextFile(`${dir}/part.ndjson`),
      );
      assert.deepEqual([...written.keys()].sort(), [
        "data.jsonl#3 exact_match",
        "data.jsonl#3 scorer",
        "data.jsonl#4 exact_match",
        "data.jsonl#4 scorer",
        "data.jsonl#5 exact_match",
        "data.jsonl#5 scorer",
      ]);
      assert.match(out.stderr, /^6 scores written to part\.ndjson$/m);
      assert.match(out.stderr, /^exact_match +1\.000 /m);
      const record = JSON.parse(await Deno.readTextFile(`${dir}/rec.json`));
      assert.equal(record.complete, false);
      assert.deepEqual(
        record.units.map((u: { unit_id: string }) => u.unit_id).sort(),
        ["data.jsonl#3", "data.jsonl#4", "data.jsonl#5"],
      );

      // The resume runs only the two dropped units.
      await Deno.writeTextFile(`${dir}/release`, "");
      const resumed = await cli(
        ["run", "suite.yaml", "--out", "part.ndjson", "--resume"],
        dir,
      );
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.match(resumed.stderr, /^4 scores written .*after 6 already/m);
      assert.equal(
        scoresByKey(await Deno.readTextFile(`${dir}/part.ndjson`)).size,
        10,
      );
    },
  );
});

// The first call of case "t" answers; its other epochs hang (until
// "release" exists), each recording its pid. The first call of "a" answers,
// its other epochs after a second.
const EPOCH_TARGET = `in=$(cat)
case "$in" in
  *'"t"'*) if ! mkdir t.first 2>/dev/null && [ ! -e release ]; then echo $$ >> pids.txt; exec sleep 1000; fi ;;
  *'"a"'*) if ! mkdir a.first 2>/dev/null && [ ! -e release ]; then sleep 1; fi ;;
esac
echo >> answered.txt
echo a
`;

Deno.test("run --epochs on SIGINT keeps each example's epochs together: what finished behind a half-answered example is written after it, whole", async () => {
  await withDir(
    {
      "suite.yaml": `dataset: data.jsonl
target: { type: subprocess, cmd: sh target.sh }
scorers: [{ type: exact_match }]
concurrency: 8
`,
      "target.sh": EPOCH_TARGET,
      "data.jsonl": jsonl(
        ["t", "a", "b", "c"].map((input) => ({ input, expected: "a" })),
      ),
    },
    async (dir) => {
      // t@1, a@1 and the epochs of b and c answered; t@2 and t@3 hang,
      // a@2 and a@3 take a second.
      const run = await startUntil(
        dir,
        ["--epochs", "3", "--grace", "3"],
        "for the hung epochs",
        async () =>
          (await pidsOf(dir)).length >= 2 &&
          lineCount(await readOrEmpty(`${dir}/answered.txt`)) >= 8,
      );
      const pids = await pidsOf(dir);
      run.kill("SIGINT");
      const out = await run.outcome;
      assert.equal(out.code, 130, out.stderr);
      await assertGone(pids, dir);
      const text = await Deno.readTextFile(`${dir}/part.ndjson`);
      const units = text.trimEnd().split("\n").map((l) =>
        JSON.parse(l).unit_id as string
      );
      // Which epoch of "t" won the race to answer varies: one did.
      assert.equal(units.length, 10, text);
      const examples = units.map((u) => u.split("@")[0]!);
      assert.deepEqual(
        [...new Set(examples)].sort(),
        ["data.jsonl#1", "data.jsonl#2", "data.jsonl#3", "data.jsonl#4"],
      );
      // Each example's units one after the other.
      const runs = examples.filter((e, i) => i === 0 || examples[i - 1] !== e);
      assert.equal(runs.length, 4, units.join(" "));
      // Every example's Scores adjacent: plain aggregate reads the file.
      const aggregate = await cli(["aggregate", "part.ndjson"], dir);
      assert.equal(aggregate.code, 0, aggregate.stderr);
      assert.equal(JSON.parse(aggregate.stdout).n, 10);

      await Deno.writeTextFile(`${dir}/release`, "");
      const resumed = await cli(
        [
          "run",
          "suite.yaml",
          "--out",
          "part.ndjson",
          "--epochs",
          "3",
          "--resume",
        ],
        dir,
      );
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.equal(
        scoresByKey(await Deno.readTextFile(`${dir}/part.ndjson`)).size,
        12,
      );
    },
  );
});

Deno.test("run on SIGINT whose stdout nobody reads stops a few seconds after --grace, saying why, and ends its record", async () => {
  await withDir(
    {
      "suite.yaml": REPLAY_SUITE,
      // Enough Scores to fill the pipe that nobody reads.
      "data.jsonl": jsonl(
        Array.from({ length: 3000 }, (_, i) => ({
          input: `q${i}`,
          expected: "a",
          output: "a",
        })),
      ),
    },
    async (dir) => {
      const child = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          CLI,
          "run",
          "suite.yaml",
          "--grace",
          "0.1",
          "--record",
          "rec.json",
        ],
        cwd: dir,
        stdin: "null",
        stdout: "piped", // never read
        stderr: "piped",
      }).spawn();
      // Begun: the record's header is written, and the first batch of
      // units (a read of the file, a thousand cases) is already far more
      // Scores than the pipe holds. Before its first unit, a stop would
      // write nothing and have nothing to wait on.
      await until(
        "for the run to begin",
        async () => (await readOrEmpty(`${dir}/rec.json`)).length > 0,
      );
      const signalled = performance.now();
      child.kill("SIGINT");
      const errors = new Response(child.stderr).text();
      const status = await child.status;
      const waited = performance.now() - signalled;
      assert.equal(status.code, 130);
      assert.match(
        await errors,
        /evalpipe: interrupted by SIGINT; the output was not taken within 5 s of the grace period's end \(a stalled reader\?\): stopped\n$/,
      );
      // Not the reader's pace: it never reads.
      assert.ok(waited < 20_000, `${waited} ms`);
      await child.stdout.cancel();
      // The record ends, incomplete, after the units it holds, each whole.
      const record = JSON.parse(await Deno.readTextFile(`${dir}/rec.json`));
      assert.equal(record.complete, false);
      assert.ok(record.units.length > 0);
      for (const unit of record.units) assert.equal(unit.scores.length, 2);
    },
  );
});

Deno.test("run on a second SIGINT stops at once with exit 130 and leaves no process", async () => {
  await withDir(
    {
      "suite.yaml": HANG_SUITE,
      "hang.sh": HANG_SCORER,
      "data.jsonl": HANG_CASES,
    },
    async (dir) => {
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", CLI, "run", "suite.yaml", "--grace", "600"],
        cwd: dir,
        stdin: "null",
        stdout: "null",
        stderr: "piped",
      }).spawn();
      // Bounds on the test, not timing claims. The start (Deno's, three
      // scorers') may take minutes on a loaded machine; only the stop is
      // what this checks, bounded from the second signal on: a watchdog
      // counted from the start fired before it on a machine at load 17.
      let stderr = "";
      let exited = false;
      const status = child.status.then((s) => {
        exited = true;
        return s;
      });
      try {
        const reader = child.stderr.pipeThrough(new TextDecoderStream())
          .getReader();
        await until(
          "for 3 hung scorers",
          async () => (await pidsOf(dir)).length >= 6,
          600_000,
        );
        child.kill("SIGINT");
        while (!stderr.includes("taking no new cases")) {
          const { done, value } = await reader.read();
          if (done) break;
          stderr += value;
        }
        child.kill("SIGINT");
        const rest = (async () => {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            stderr += value;
          }
        })();
        await within(
          Promise.all([status, rest]),
          60_000,
          "the run after the second SIGINT",
        );
        assert.equal((await status).code, 130, stderr);
      } finally {
        // A run that did not stop: killed, and the test fails above.
        if (!exited) child.kill("SIGKILL");
        await status;
      }
      assert.equal(
        stderr,
        "evalpipe: SIGINT: taking no new cases, finishing the ones running (again to stop at once)\n" +
          "evalpipe: interrupted again by SIGINT: stopped at once\n",
      );
      const pids = await pidsOf(dir);
      assert.equal(pids.length, 6);
      await assertGone(pids, dir);
    },
  );
});

// ---------------------------------------------------------------------------
// 4. Hostile input.

const HOSTILE_SUITE = `dataset: data.jsonl
target: { type: replay }
scorers:
  - type: exact_match
`;

const deep = (open: string, inner: string, close: string, n: number) =>
  open.repeat(n) + inner + close.repeat(n);

Deno.test("run reports each malformed JSONL record by file, line and field, scores the others and exits 2", async () => {
  // [line, the reason of its Score: null when it is scored]
  const lines: Array<[string | Uint8Array, string | null]> = [
    ['{"id":"ok-1","input":"a","expected":"x","output":"x"}', null],
    [
      '{"input":"b", oops}',
      "Cannot parse JSON: Expected double-quoted property name in JSON at position 14 (line 1 column 15)",
    ],
    [
      '{"input":42,"output":"x"}',
      '"input" must be a string or a list of messages, not a number',
    ],
    [
      '{"input":"c","context":{"not":"a list"},"output":"c"}',
      '"context" must be a string or a list of strings, not an object',
    ],
    [
      '{"input":"d","metadata":[1],"output":"d"}',
      '"metadata" must be an object, not a list',
    ],
    [
      '{"id":true,"input":"e","output":"e"}',
      '"id" must be a string or a number, not a boolean',
    ],
    ['{"input":"f","output":7}', '"output" must be a string, not a number'],
    [
      '{"output":"g"}',
      '"input" is missing (the record has "output"): name its prompt "input"',
    ],
    [
      new Uint8Array([
        ...encoder.encode('{"input":"h'),
        0xff,
        0xfe,
        34,
        125,
      ]),
      "Invalid UTF-8",
    ],
    [
      deep("[", "", "]", 100_000),
      "The record is nested deeper than 256 levels",
    ],
    [
      `{"input":"i","output":"i","expected":${
        deep('{"a":', "1", "}", 100_000)
      }}`,
      "The record is nested deeper than 256 levels",
    ],
    [
      '{"id":"ok-1","input":"j","output":"j"}',
      'Duplicate id "ok-1" (first at line 1): ids must be unique',
    ],
    ['"just a string"', "A case must be an object, not a string"],
    ["", null], // blank: no case, no Score
    ['{"id":70,"input":"k","expected":"k","output":"k"}', null],
    [
      '{"id":"70","input":"l","output":"l"}',
      'Duplicate id "70" (first at line 15): ids must be unique',
    ],
    ['{"input":"m","expected":"m","output":"m"}', null],
  ];
  const bytes = lines.flatMap(([l]) => [
    ...(typeof l === "string" ? encoder.encode(l) : l),
    10,
  ]);
  await withDir(
    { "suite.yaml": HOSTILE_SUITE, "data.jsonl": new Uint8Array(bytes) },
    async (dir) => {
      const out = await cli(["run", "suite.yaml"], dir);
      assert.equal(out.code, 2, out.stderr);
      assertNoStackTrace(out.stderr);
      const problems = lines.flatMap(([, reason], i) =>
        reason === null
          ? []
          : [`evalpipe: Invalid case in "data.jsonl" line ${i + 1}: ${reason}`]
      );
      assert.deepEqual(
        out.stderr.split("\n").filter((l) => l.startsWith("evalpipe: ")),
        problems,
      );
      const scores = out.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
      const expected = lines.flatMap(([text, reason], i) => {
        if (text === "") return [];
        // A duplicate is named by where it stands: its id is taken.
        const id = i === 0
          ? "ok-1"
          : i === 14
          ? "70"
          : reason?.startsWith("Duplicate id")
          ? `line-${i + 1}`
          : String(i + 1);
        return [
          reason === null
            ? { example_id: `data.jsonl#${id}`, status: "scored", value: 1 }
            : {
              example_id: `data.jsonl#${id}`,
              status: "blocked",
              value: null,
              reason: `invalid case: ${reason}`,
            },
        ];
      });
      assert.deepEqual(
        scores.map((s) => ({
          example_id: s.example_id,
          status: s.status,
          value: s.value,
          ...(s.status === "blocked" ? { reason: s.reason } : {}),
        })),
        expected,
      );
    },
  );
});

Deno.test("run names the record of a malformed .json or .yaml case and scores the others", async () => {
  const json = `[{"id":"a","input":"x","expected":"x","output":"x"},
 {"id":"a","input":"y","output":"y"},
 ${deep("[", "", "]", 100_000)},
 {"input":"z","expected":"z","output":"z"}]`;
  const yaml = `- { id: a, input: x, expected: x, output: x }
- { id: a, input: y, output: y }
- { input: [{ role: user, content: q }], context: [1], output: w }
- { input: z, expected: z, output: z }
`;
  await withDir(
    {
      "json.yaml": HOSTILE_SUITE.replace("data.jsonl", "data.json"),
      "yaml.yaml": HOSTILE_SUITE.replace("data.jsonl", "data.yaml"),
      "data.json": json,
      "data.yaml": yaml,
    },
    async (dir) => {
      for (
        const [config, name, third] of [
          [
            "json.yaml",
            "data.json",
            "The record is nested deeper than 256 levels",
          ],
          [
            "yaml.yaml",
            "data.yaml",
            '"context" must be a string or a list of strings; item 1 is a number',
          ],
        ]
      ) {
        const out = await cli(["run", config!], dir);
        assert.equal(out.code, 2, out.stderr);
        assertNoStackTrace(out.stderr);
        assert.deepEqual(
          out.stderr.split("\n").filter((l) => l.startsWith("evalpipe: ")),
          [
            `evalpipe: Invalid case in "${name}" record 2 (line 2): Duplicate id "a" (first at record 1): ids must be unique`,
            `evalpipe: Invalid case in "${name}" record 3 (line 3): ${third}`,
          ],
        );
        const scores = out.stdout.trimEnd().split("\n").map((l) =>
          JSON.parse(l)
        );
        assert.deepEqual(
          scores.map((s) => [s.example_id, s.status]),
          [
            [`${name}#a`, "scored"],
            [`${name}#record-2`, "blocked"],
            [`${name}#3`, "blocked"],
            [`${name}#4`, "scored"],
          ],
        );
      }
    },
  );
});

Deno.test("run caps a 100 MB JSONL line at 32 MiB and scores the lines around it", async () => {
  await withDir({ "suite.yaml": HOSTILE_SUITE }, async (dir) => {
    // Streamed to disk: the test itself never holds the line.
    const file = await Deno.open(`${dir}/data.jsonl`, {
      write: true,
      create: true,
    });
    const write = async (bytes: Uint8Array) => {
      for (let n = 0; n < bytes.length;) {
        n += await file.write(bytes.subarray(n));
      }
    };
    await write(encoder.encode('{"input":"a","expected":"x","output":"x"}\n'));
    await write(encoder.encode('{"input":"'));
    const chunk = new Uint8Array(1 << 20).fill(0x79);
    for (let i = 0; i < 100; i++) await write(chunk);
    await write(encoder.encode('","output":"big"}\n'));
    await write(encoder.encode('{"input":"z","expected":"z","output":"z"}\n'));
    file.close();

    const out = await cli(["run", "suite.yaml", "--out", "out.ndjson"], dir);
    assert.equal(out.code, 2, out.stderr);
    assertNoStackTrace(out.stderr);
    assert.deepEqual(
      out.stderr.split("\n").filter((l) => l.startsWith("evalpipe: ")),
      [
        'evalpipe: Invalid case in "data.jsonl" line 2: Line is longer than 33554432 bytes',
      ],
    );
    const scores = [
      ...scoresByKey(await Deno.readTextFile(`${dir}/out.ndjson`)).values(),
    ].map((l) => JSON.parse(l));
    assert.deepEqual(
      scores.map((s) => [s.example_id, s.status, s.reason]),
      [
        ["data.jsonl#1", "scored", undefined],
        [
          "data.jsonl#2",
          "blocked",
          "invalid case: Line is longer than 33554432 bytes",
        ],
        ["data.jsonl#3", "scored", undefined],
      ],
    );
  });
});

/** A suite whose target leaves a mark when called: a refusal must leave none. */
const MARKING_SUITE = (dataset: string) =>
  `dataset: ${dataset}
target: { type: subprocess, cmd: "touch called; cat" }
scorers:
  - type: exact_match
`;

async function assertRefused(
  dir: string,
  config: string,
  message: string,
  extra: string[] = [],
): Promise<void> {
  const out = await cli(["run", config, ...extra], dir);
  const where = `${config} ${extra.join(" ")}`;
  assert.equal(out.code, 2, `${where}: ${out.stderr}`);
  assert.equal(out.stdout, "", where);
  assert.equal(out.stderr, `evalpipe: ${message}\n`, where);
  await assert.rejects(Deno.stat(`${dir}/called`), Deno.errors.NotFound);
}

Deno.test("run refuses an empty dataset (.jsonl, .json, .yaml) before any work with exit 2", async () => {
  const files: Record<string, string> = {
    "blank.jsonl": "\n  \n\t\n\n",
    "nothing.jsonl": "",
    "empty.json": " [ ] \n",
    "empty.yaml": "# no cases yet\n[]\n",
    "null.yaml": "# nothing at all\n",
    "blank.json": "",
  };
  const messages: Record<string, string> = {
    "blank.jsonl": 'Dataset "blank.jsonl" has no cases',
    "nothing.jsonl": 'Dataset "nothing.jsonl" has no cases',
    "empty.json": 'Dataset "empty.json" has no cases',
    "empty.yaml": 'Dataset "empty.yaml" has no cases',
    "null.yaml": 'Dataset "null.yaml" must hold a YAML list of cases',
    "blank.json":
      'Cannot parse dataset "blank.json": Unexpected end of JSON input',
  };
  for (const name of Object.keys(files)) {
    files[`${name}.suite.yaml`] = MARKING_SUITE(name);
  }
  await withDir(files, async (dir) => {
    for (const [name, message] of Object.entries(messages)) {
      await assertRefused(dir, `${name}.suite.yaml`, message);
      // Found once the outputs are open: said to leave them as they were.
      const kept = message.endsWith("has no cases")
        ? '\nevalpipe: nothing was written: --out "o.ndjson" is as it was'
        : "";
      await assertRefused(dir, `${name}.suite.yaml`, message + kept, [
        "--out",
        "o.ndjson",
      ]);
    }
  });
});

Deno.test("run refuses a missing or unreadable dataset, or a missing config, before any work with exit 2", async () => {
  await withDir({
    "missing.yaml": MARKING_SUITE("missing.jsonl"),
    "folder_jsonl.yaml": MARKING_SUITE("folder.jsonl"),
    "folder_json.yaml": MARKING_SUITE("folder.json"),
    "folder_yaml.yaml": MARKING_SUITE("folder.yaml"),
    "secret.yaml": MARKING_SUITE("secret.jsonl"),
    "secret.jsonl": '{"input":"a"}\n',
    "folder.jsonl/x": "",
    "folder.json/x": "",
    "folder.yaml/x": "",
  }, async (dir) => {
    for (const out of [[], ["--out", "o.ndjson"], ["--record", "r.json"]]) {
      await assertRefused(
        dir,
        "missing.yaml",
        'Cannot open dataset "missing.jsonl": no such file',
        out,
      );
      await assertRefused(
        dir,
        "folder_jsonl.yaml",
        'Cannot open dataset "folder.jsonl": it is a folder',
        out,
      );
      // Read whole, or fingerprinted first for --out and --record.
      const verb = out.length === 0 ? "read" : "open";
      await assertRefused(
        dir,
        "folder_json.yaml",
        `Cannot ${verb} dataset "folder.json": it is a folder`,
        out,
      );
      await assertRefused(
        dir,
        "folder_yaml.yaml",
        `Cannot ${verb} dataset "folder.yaml": it is a folder`,
        out,
      );
    }
    await Deno.chmod(`${dir}/secret.jsonl`, 0o000);
    // Root reads a file whatever its mode, so only another user can see
    // the refusal; the folder datasets above cover unreadable input then.
    if (Deno.uid() !== 0) {
      await assertRefused(
        dir,
        "secret.yaml",
        'Cannot open dataset "secret.jsonl": permission denied',
      );
    }
    await assertRefused(
      dir,
      "nope.yaml",
      'Invalid config "nope.yaml": cannot read it: no such file',
    );
  });
});

/** Nine levels of ten aliases: 10^9 strings once expanded. */
function billionLaughs(indent: string): string {
  const lines = [
    `${indent}a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]`,
  ];
  for (let i = 1; i <= 8; i++) {
    lines.push(
      `${indent}a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(",")}]`,
    );
  }
  lines.push(`${indent}a9: [${Array(10).fill("*a8").join(",")}]`);
  return lines.join("\n") + "\n";
}

Deno.test("run refuses a YAML billion-laughs dataset or config before any work with exit 2", async () => {
  await withDir({
    "suite.yaml": MARKING_SUITE("bomb.yaml"),
    "bomb.yaml": `- input: x\n  metadata:\n${billionLaughs("    ")}`,
    "bomb_config.yaml": `${billionLaughs("")}${MARKING_SUITE("data.jsonl")}`,
    "data.jsonl": '{"input":"a"}\n',
  }, async (dir) => {
    await assertRefused(
      dir,
      "suite.yaml",
      'Cannot parse dataset "bomb.yaml": its aliases expand to more than 1000000 nodes (a YAML bomb?)',
    );
    await assertRefused(
      dir,
      "bomb_config.yaml",
      'Invalid config "bomb_config.yaml": its aliases expand to more than 1000000 nodes (a YAML bomb?)',
    );
  });
});

Deno.test("run refuses unknown config keys and wrong types, naming file, line and key, before any work", async () => {
  const head =
    'dataset: data.jsonl\ntarget: { type: subprocess, cmd: "touch called; cat" }\n';
  const configs: Array<[string, string]> = [
    [
      `${head}scorers:\n  - type: exact_match\n    bogus: 1\n`,
      'line 5: unknown key "scorers[0].bogus"',
    ],
    [
      'dataset: data.jsonl\ntarget:\n  type: subprocess\n  cmd: "touch called; cat"\n  shell: bash\nscorers:\n  - type: exact_match\n',
      'line 5: unknown key "target.shell"',
    ],
    [
      `${head}scorers:\n  - type: exact_match\nepochs: 2\nepoch: 3\n`,
      'line 6: unknown key "epoch"; did you mean "epochs"?',
    ],
    [
      `${head}scorers:\n  - type: exact_match\nconcurrency: "8"\n`,
      'line 5: "concurrency" must be a number, not string "8"',
    ],
    [
      `${head}scorers: exact_match\n`,
      'line 3: "scorers" must be a list, not string "exact_match"',
    ],
    [
      `${head}scorers:\n  - type: exact_match\n  - type: jaccard\n`,
      'line 5: "scorers[1].type" is string "jaccard"; expected one of subprocess, exact_match, contains, not_contains, starts_with, regex, word_count, one_of, json, fields, json_match, numeric, levenshtein, token_f1, rouge_l, bleu, set_overlap, latency, cost, trajectory, tool_call_f1, llm_judge, faithfulness, answer_relevance, context_precision, context_recall, correctness, rubric, semantic_similarity',
    ],
  ];
  const files: Record<string, string> = { "data.jsonl": '{"input":"a"}\n' };
  configs.forEach(([text], i) => (files[`c${i}.yaml`] = text));
  await withDir(files, async (dir) => {
    for (const [i, [, detail]] of configs.entries()) {
      await assertRefused(
        dir,
        `c${i}.yaml`,
        `Invalid config "c${i}.yaml" ${detail}`,
      );
    }
  });
});

// ---------------------------------------------------------------------------
// 5. The process cap.

// Counts the commands of the suite running at once (its own file included).
const TRACK = `cat > /dev/null
touch running/$$
ls running | wc -l >> counts.txt
sleep 0.1
rm running/$$
echo '{"score": 1}'
`;

Deno.test("run with max_processes 2 never runs more than 2 commands at once", async () => {
  await withDir({
    "suite.yaml": `dataset: data.jsonl
target: { type: subprocess, cmd: sh track.sh }
scorers:
  - type: subprocess
    cmd: sh track.sh
concurrency: 8
max_processes: 2
`,
    "track.sh": TRACK,
    "running/.keep": "",
    "data.jsonl": jsonl(
      Array.from({ length: 16 }, (_, i) => ({ input: `q${i}` })),
    ),
  }, async (dir) => {
    const counts = async () => {
      const text = await Deno.readTextFile(`${dir}/counts.txt`);
      await Deno.remove(`${dir}/counts.txt`);
      // `ls` does not list `running/.keep`, which only makes the folder.
      return text.trim().split("\n").map((l) => Number(l.trim()));
    };
    const capped = await cli(["run", "suite.yaml"], dir);
    assert.equal(capped.code, 0, capped.stderr);
    const seen = await counts();
    assert.equal(seen.length, 32, "16 targets and 16 scorers");
    assert.ok(Math.max(...seen) <= 2, `${Math.max(...seen)} ran at once`);
    // The probe sees overlap when it is allowed: --max-processes overrides.
    const open = await cli(["run", "suite.yaml", "--max-processes", "8"], dir);
    assert.equal(open.code, 0, open.stderr);
    assert.ok(Math.max(...await counts()) > 2, "no overlap seen at all");
  });
});

// ---------------------------------------------------------------------------
// 6. Case data never reaches a shell or a terminal.

const EVIL =
  "$(touch pwned) `touch pwned` ; touch pwned && touch pwned | touch pwned ' \" \\ $HOME >pwned";

/** Every file and folder name under `dir`. */
async function namesUnder(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    names.push(entry.name);
    if (entry.isDirectory) {
      names.push(...await namesUnder(`${dir}/${entry.name}`));
    }
  }
  return names;
}

/** The contents of the files in `dir` whose names start with `prefix`, sorted. */
async function captured(dir: string, prefix: string): Promise<string[]> {
  const texts: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.name.startsWith(prefix)) {
      texts.push(await Deno.readTextFile(`${dir}/${entry.name}`));
    }
  }
  return texts.sort();
}

Deno.test("run never puts case data on a command line: shell syntax in every field reaches the commands verbatim on stdin", async () => {
  const cases = [
    {
      id: `id ${EVIL}`,
      input: `input ${EVIL}`,
      expected: { answer: `expected ${EVIL}`, [`key ${EVIL}`]: [EVIL, 1] },
      context: [`context ${EVIL}`, EVIL],
      metadata: { [`meta ${EVIL}`]: `metadata ${EVIL}`, nested: { v: EVIL } },
    },
    { id: EVIL, input: EVIL, expected: EVIL },
  ];
  // What the target reads (never `expected`), and so echoes back as output.
  const targetPayloads = cases.map((c) =>
    JSON.stringify({
      ...(c.context !== undefined ? { context: c.context } : {}),
      input: c.input,
      ...(c.metadata !== undefined ? { metadata: c.metadata } : {}),
    })
  );
  const scorerPayloads = cases.map((c, i) =>
    JSON.stringify({
      ...(c.context !== undefined ? { context: c.context } : {}),
      expected: c.expected,
      input: c.input,
      output: targetPayloads[i],
    })
  );
  await withDir({
    "suite.yaml": `dataset: data.jsonl
target: { type: subprocess, cmd: sh target.sh }
scorers:
  - type: subprocess
    cmd: sh capture.sh
  - type: subprocess
    cmd: python3 capture.py
    name: capture_py
`,
    "target.sh": 'cat > "target-$$.json"\ncat "target-$$.json"\n',
    "capture.sh": `cat > "sh-$$.json"\necho '{"score": 1}'\n`,
    "capture.py": `import os, sys
data = sys.stdin.buffer.read()
with open(f"py-{os.getpid()}.json", "wb") as f:
    f.write(data)
print('{"score": 1}')
`,
    "data.jsonl": jsonl(cases),
  }, async (dir) => {
    const out = await cli(["run", "suite.yaml"], dir);
    assert.equal(out.code, 0, out.stderr);
    const scores = out.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(
      scores.map((s) => [s.example_id, s.metric, s.status]),
      cases.flatMap((c) => [
        [`data.jsonl#${c.id}`, "capture", "scored"],
        [`data.jsonl#${c.id}`, "capture_py", "scored"],
      ]),
    );
    assert.deepEqual(
      await captured(dir, "target-"),
      [...targetPayloads].sort(),
    );
    assert.deepEqual(await captured(dir, "sh-"), [...scorerPayloads].sort());
    assert.deepEqual(await captured(dir, "py-"), [...scorerPayloads].sort());

    // The score command hands unit records to its scorers the same way.
    const units = cases.map((c) => ({
      example_id: c.id,
      unit_id: c.id,
      input: c.input,
      output: EVIL,
      expected: c.expected,
      ...(c.context !== undefined ? { context: c.context } : {}),
    }));
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CLI, "score", "--scorer", "sh capture.sh"],
      cwd: dir,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(encoder.encode(jsonl(units)));
    await writer.close();
    const scored = await child.output();
    assert.equal(scored.code, 0, decoder.decode(scored.stderr));
    assert.equal(decoder.decode(scored.stdout).trimEnd().split("\n").length, 2);
    const shTexts = await captured(dir, "sh-");
    for (const u of units) {
      const payload = JSON.stringify({
        ...(u.context !== undefined ? { context: u.context } : {}),
        expected: u.expected,
        input: u.input,
        output: u.output,
      });
      assert.ok(shTexts.includes(payload), payload);
    }

    const names = await namesUnder(dir);
    assert.ok(names.length > 8);
    assert.ok(!names.some((n) => n.includes("pwned")), names.join(", "));
    await assert.rejects(Deno.stat(`${ROOT}pwned`), Deno.errors.NotFound);
  });
});

const ANSI = "\x1b[31mred\x1b[0m";

Deno.test("run escapes control characters from ids and model output on stderr", async () => {
  const records = [
    jsonl([{
      id: ANSI,
      input: "a",
      expected: "x",
      output: "\x1b[2J\x1b]0;title\x07x\u009b2J",
    }]),
    jsonl([{ id: ANSI, input: "b", output: "\x1b[1A\r\u202eevil" }]),
    // Raw control bytes in malformed lines: the parser quotes the line.
    '\x1b[2J{"input":"c"}\n',
    '{"input":"d\x1b]0;t\x07"}\n',
    jsonl([{ input: "e\u2066", output: "\x1b[?1049h", expected: "e" }]),
  ].join("");
  await withDir({
    "suite.yaml": HOSTILE_SUITE,
    "data.jsonl": records,
  }, async (dir) => {
    const out = await cli(["run", "suite.yaml"], dir);
    assert.equal(out.code, 2, out.stderr);
    // No control character but the newline, and no bidi control.
    const unsafe = [...out.stderr].filter((c) => {
      const n = c.codePointAt(0)!;
      return (n < 0x20 && n !== 10) || (n >= 0x7f && n <= 0x9f) ||
        (n >= 0x2028 && n <= 0x202e) || (n >= 0x2066 && n <= 0x2069);
    });
    assert.deepEqual(unsafe, [], JSON.stringify(out.stderr));
    assert.ok(!out.stderr.includes("\x1b"));
    assert.deepEqual(
      out.stderr.split("\n").filter((l) => l.startsWith("evalpipe: ")),
      [
        'evalpipe: Invalid case in "data.jsonl" line 2: Duplicate id "\\u001b[31mred\\u001b[0m" (first at line 1): ids must be unique',
        `evalpipe: Invalid case in "data.jsonl" line 3: Cannot parse JSON: Unexpected token '\\u{1b}', "\\u{1b}[2J{"input":"c"}" is not valid JSON`,
        'evalpipe: Invalid case in "data.jsonl" line 4: Cannot parse JSON: Bad control character in string literal in JSON at position 11 (line 1 column 12)',
      ],
    );
    // The Scores themselves keep the ids exactly (JSON escapes them).
    const ids = out.stdout.trimEnd().split("\n").map((l) =>
      JSON.parse(l).example_id
    );
    assert.deepEqual(ids, [
      `data.jsonl#${ANSI}`,
      "data.jsonl#line-2", // the duplicate, named by where it stands
      "data.jsonl#3",
      "data.jsonl#4",
      "data.jsonl#5",
    ]);
  });
});

/** Kills, bounded, every process left running in `folder`; returns how many. */
function reap(folder: string): Promise<number> {
  return reapAll(() => processesIn(folder), folder);
}
