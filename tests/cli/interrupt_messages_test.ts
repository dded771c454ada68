// What `score` and `run` tell a person, and leave, when Ctrl-C stops them:
// the real command line in a child process, stopped by real signals.

import assert from "node:assert/strict";
import { CLI, spawnCli } from "../_cli.ts";
import { assertNoneRunning, delay, within, withTempDir } from "../_proc.ts";

const encoder = new TextEncoder();

/** A child's output stream, read as it comes. */
class Collected {
  text = "";
  constructor(stream: ReadableStream<Uint8Array>) {
    this.done = (async () => {
      for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
        this.text += chunk;
      }
    })();
  }
  readonly done: Promise<void>;

  async until(what: string, ready: (text: string) => boolean): Promise<void> {
    for (let i = 0; !ready(this.text); i++) {
      if (i > 6000) throw new Error(`Timed out waiting for ${what}`);
      await delay(5);
    }
  }
}

// Answers at once, except for the case whose input says "hang": it records
// its pid and sleeps until killed.
const SCORER = `payload=$(cat)
case "$payload" in
  *hang*) echo $$ >> pids.txt; exec sleep 1000 ;;
esac
echo '{"score": 1}'
`;

Deno.test("score on SIGINT says how many units were scored and that the rest were not", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/s.sh`, SCORER);
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        CLI,
        "score",
        "--scorer",
        "sh s.sh",
        "--name",
        "a",
        "--scorer",
        "sh s.sh",
        "--name",
        "b",
        "--concurrency",
        "1",
      ],
      cwd: dir,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).spawn();
    const stdout = new Collected(child.stdout);
    const stderr = new Collected(child.stderr);
    // Stdin stays open, as a stream piped from another program would.
    const writer = child.stdin.getWriter();
    await writer.write(encoder.encode(
      ["one", "two", "hang", "four"]
        .map((input) => JSON.stringify({ input, output: input }) + "\n")
        .join(""),
    ));
    await stdout.until("two units' Scores", (t) => t.split("\n").length > 4);
    // The third unit's scorer is running (and hangs).
    await stderr.until("the hung scorer", () => {
      try {
        return Deno.readTextFileSync(`${dir}/pids.txt`) !== "";
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
        return false;
      }
    });
    child.kill("SIGINT");
    const status = await child.status;
    await Promise.all([stdout.done, stderr.done]);
    await writer.close().catch((error) => {
      // The command stopped reading: expected once it is interrupted.
      if (!(error instanceof Deno.errors.BrokenPipe)) throw error;
    });
    assert.equal(status.code, 130, stderr.text);
    assert.equal(
      stderr.text,
      "evalpipe: interrupted by SIGINT; running scorers were stopped: 2 units scored (their Scores are on stdout), the rest were not\n",
    );
    const scores = stdout.text.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(
      scores.map((s) => `${s.unit_id} ${s.metric}`),
      ["stdin#1 a", "stdin#1 b", "stdin#2 a", "stdin#2 b"],
    );
    const pids = Deno.readTextFileSync(`${dir}/pids.txt`).trim().split("\n")
      .map(Number);
    await assertNoneRunning(pids);
  });
});

const HANG_SUITE = `dataset: data.jsonl
target: { type: replay }
scorers:
  - type: subprocess
    cmd: sh s.sh
concurrency: 2
`;

/** Lines of the scorer's hung pids so far. */
function hungScorers(dir: string): number {
  try {
    return Deno.readTextFileSync(`${dir}/pids.txt`).split("\n").length - 1;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    return 0;
  }
}

/**
 * Runs `run suite.yaml --grace 600 ...args` over four cases, two of which
 * hang; once both hang (the two others are scored), stops it with SIGINT and,
 * once `ready` holds, with a second SIGINT. Asserts that no scorer is left.
 */
async function stoppedTwice(
  dir: string,
  args: string[],
  options: {
    env?: Record<string, string>;
    ready?: () => boolean;
    /** Starts it another way (`deno task`), in a process group of its own. */
    spawn?: (args: string[]) => Deno.ChildProcess;
  } = {},
): Promise<{ code: number; stderr: string }> {
  await Deno.writeTextFile(`${dir}/suite.yaml`, HANG_SUITE);
  await Deno.writeTextFile(`${dir}/s.sh`, SCORER);
  await Deno.writeTextFile(
    `${dir}/data.jsonl`,
    ["one", "hang", "three", "hang too"]
      .map((input) => JSON.stringify({ input, output: input }) + "\n")
      .join(""),
  );
  const child = options.spawn?.(args) ?? spawnCli(
    ["run", "suite.yaml", "--grace", "600", ...args],
    dir,
    // The user's shell is where the run starts, even under `deno task test`.
    { INIT_CWD: dir, ...options.env },
  );
  // Ctrl-C signals the terminal's foreground group: `deno task` and the run.
  // `deno task` also passes the signal on to the run, which so gets two and
  // may have stopped at once, its group gone, before the second Ctrl-C.
  const interrupt = () => {
    if (options.spawn === undefined) return child.kill("SIGINT");
    try {
      Deno.kill(-child.pid, "SIGINT");
    } catch (error) {
      // No such group: the run already stopped, as that second signal asks.
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  };
  const stderr = new Collected(child.stderr);
  await stderr.until("the hung scorers", () => hungScorers(dir) === 2);
  interrupt();
  await stderr.until(
    "the first signal's word",
    (t) => t.includes("again") && (options.ready?.() ?? true),
  );
  interrupt();
  const status = await child.status;
  await stderr.done;
  const pids = Deno.readTextFileSync(`${dir}/pids.txt`).trim().split("\n")
    .map(Number);
  await assertNoneRunning(pids);
  return { code: status.code, stderr: stderr.text };
}

const FIRST_SIGINT =
  "evalpipe: SIGINT: taking no new cases, finishing the ones running (again to stop at once)\n" +
  "evalpipe: interrupted again by SIGINT: stopped at once\n";

/**
 * A PATH with deno, sh and the shell's tools, and no evalpipe command (a
 * clone run through `deno task eval`), unless a test adds one. Deno is
 * reached through a link of its own in `dir`: the folder deno is in holds
 * evalpipe too after the README's install (both in ~/.deno/bin).
 */
async function barePath(dir: string): Promise<string> {
  await Deno.mkdir(`${dir}/deno-only`);
  await Deno.symlink(Deno.execPath(), `${dir}/deno-only/deno`);
  return `${dir}/deno-only:/usr/bin:/bin`;
}

Deno.test("run stopped by a second SIGINT prints the command that resumes it, which runs as printed", async () => {
  await withTempDir(async (dir) => {
    const path = await barePath(dir);
    const { code, stderr } = await stoppedTwice(dir, [
      "--out",
      "part.ndjson",
    ], { env: { PATH: path } });
    assert.equal(code, 130, stderr);
    // No evalpipe command on PATH: the hint names this program, as init's
    // last line does; it said `evalpipe run`, which the shell did not find.
    assert.ok(stderr.startsWith(FIRST_SIGINT), stderr);
    const hint = stderr.slice(FIRST_SIGINT.length).trimEnd();
    const prefix = "evalpipe: resume with: ";
    assert.ok(hint.startsWith(`${prefix}deno run -A `), hint);
    assert.ok(
      hint.endsWith(` run suite.yaml --out part.ndjson --grace 600 --resume`),
      hint,
    );

    // The hint works as printed, through a shell: without the hanging
    // case, the resumed run completes.
    await Deno.writeTextFile(
      `${dir}/s.sh`,
      `cat > /dev/null\necho '{"score": 1}'\n`,
    );
    const resumed = await new Deno.Command("sh", {
      args: ["-c", hint.slice(prefix.length)],
      cwd: dir,
      env: { NO_COLOR: "1", PATH: path },
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(
      resumed.code,
      0,
      new TextDecoder().decode(resumed.stderr),
    );
    const ids = new Set(
      (await Deno.readTextFile(`${dir}/part.ndjson`)).trim().split("\n")
        .map((l) => JSON.parse(l).unit_id),
    );
    assert.equal(ids.size, 4);
  });
});

Deno.test("run stopped by SIGINT names the evalpipe command in its resume hint when the one on PATH runs this program", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/bin`);
    // As `deno install` writes a launcher: the module's URL, quoted.
    await Deno.writeTextFile(
      `${dir}/bin/evalpipe`,
      `#!/bin/sh\nexec deno run -A '${new URL(`file://${CLI}`).href}' "$@"\n`,
    );
    await Deno.chmod(`${dir}/bin/evalpipe`, 0o755);
    const { code, stderr } = await stoppedTwice(dir, [
      "--out",
      "part.ndjson",
    ], { env: { PATH: `${dir}/bin:${await barePath(dir)}` } });
    assert.equal(code, 130, stderr);
    assert.equal(
      stderr,
      `${FIRST_SIGINT}evalpipe: resume with: evalpipe run suite.yaml --out part.ndjson --grace 600 --resume\n`,
    );
  });
});

/** Runs `hint` through a shell in `cwd`, the scorer answering now; asserts the run completes. */
async function resumesAsPrinted(
  dir: string,
  hint: string,
  cwd: string,
  path: string,
): Promise<void> {
  await Deno.writeTextFile(
    `${dir}/s.sh`,
    `cat > /dev/null\necho '{"score": 1}'\n`,
  );
  const resumed = await new Deno.Command("sh", {
    args: ["-c", hint],
    cwd,
    env: { NO_COLOR: "1", PATH: path },
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.equal(resumed.code, 0, new TextDecoder().decode(resumed.stderr));
  const ids = new Set(
    (await Deno.readTextFile(`${dir}/part.ndjson`)).trim().split("\n")
      .map((l) => JSON.parse(l).unit_id),
  );
  assert.equal(ids.size, 4);
}

Deno.test("run stopped by SIGINT does not name an evalpipe on PATH that runs other code (an older install)", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/bin`);
    await Deno.writeTextFile(
      `${dir}/bin/evalpipe`,
      "#!/bin/sh\necho 'an older evalpipe' >&2\nexit 3\n",
    );
    await Deno.chmod(`${dir}/bin/evalpipe`, 0o755);
    const path = `${dir}/bin:${await barePath(dir)}`;
    const { code, stderr } = await stoppedTwice(dir, [
      "--out",
      "part.ndjson",
    ], { env: { PATH: path } });
    assert.equal(code, 130, stderr);
    const prefix = `${FIRST_SIGINT}evalpipe: resume with: `;
    assert.ok(stderr.startsWith(`${prefix}deno run -A `), stderr);
    await resumesAsPrinted(
      dir,
      stderr.slice(prefix.length).trimEnd(),
      dir,
      path,
    );
  });
});

Deno.test("run under deno task, from another folder, prints a resume hint that works in the user's shell", async () => {
  await withTempDir(async (dir) => {
    const path = await barePath(dir);
    // A project's task, as `deno task eval` runs the quickstart: in
    // deno.json's folder, the user's shell in a folder below it.
    await Deno.writeTextFile(
      `${dir}/deno.json`,
      JSON.stringify({
        tasks: { eval: `deno run -A ${CLI} run suite.yaml --grace 600` },
      }),
    );
    await Deno.mkdir(`${dir}/sub`);
    const { code, stderr } = await stoppedTwice(dir, [
      "--out",
      "part.ndjson",
    ], {
      spawn: (args) =>
        new Deno.Command("setsid", {
          args: ["deno", "task", "-q", "eval", ...args],
          cwd: `${dir}/sub`,
          stdin: "null",
          stdout: "null",
          stderr: "piped",
          env: { NO_COLOR: "1", PATH: path },
        }).spawn(),
    });
    assert.equal(code, 130, stderr);
    const prefix = `${FIRST_SIGINT}evalpipe: resume with: `;
    assert.ok(stderr.startsWith(prefix), stderr);
    const hint = stderr.slice(prefix.length).trimEnd();
    assert.ok(hint.startsWith(`(cd ${dir} && deno run -A `), hint);
    assert.ok(
      hint.endsWith(" run suite.yaml --out part.ndjson --grace 600 --resume)"),
      hint,
    );
    await resumesAsPrinted(dir, hint, `${dir}/sub`, path);
  });
});

Deno.test("run --record stopped by a second SIGINT ends the record, incomplete, with the units already in it", async () => {
  await withTempDir(async (dir) => {
    const { code, stderr } = await stoppedTwice(dir, ["--record", "rec.json"], {
      // The third case, scored behind a hung one, is written once stopped.
      ready: () =>
        Deno.readTextFileSync(`${dir}/rec.json`).includes('"input":"three"'),
    });
    assert.equal(code, 130, stderr);
    assert.equal(stderr, FIRST_SIGINT);
    const record = JSON.parse(await Deno.readTextFile(`${dir}/rec.json`));
    assert.equal(record.complete, false);
    assert.equal(typeof record.finished_at, "string");
    assert.deepEqual(
      record.units.map((u: { unit_id: string; scores: unknown[] }) =>
        `${u.unit_id} ${u.scores.length}`
      ),
      ["data.jsonl#1 1", "data.jsonl#3 1"],
    );
  });
});

Deno.test("run --junit stopped by a second SIGINT removes its temporary record and says there are no reports", async () => {
  await withTempDir(async (dir) => {
    const tmp = `${dir}/tmp`;
    await Deno.mkdir(tmp);
    const tempRecords = () =>
      [...Deno.readDirSync(tmp)].filter((e) =>
        e.name.startsWith("evalpipe-record-")
      );
    const { code, stderr } = await stoppedTwice(dir, ["--junit", "j.xml"], {
      env: { TMPDIR: tmp },
      ready: () => tempRecords().length === 1, // made where TMPDIR says
    });
    assert.equal(code, 130, stderr);
    assert.deepEqual(tempRecords(), []);
    assert.equal(
      stderr,
      `${FIRST_SIGINT}evalpipe: no reports: the run stopped before they were made\n`,
    );
    await assert.rejects(Deno.stat(`${dir}/j.xml`), Deno.errors.NotFound);
  });
});

Deno.test("run --limit stopped by SIGINT says how many examples were chosen, not that they all ran", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/suite.yaml`, HANG_SUITE);
    await Deno.writeTextFile(`${dir}/s.sh`, SCORER);
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      ["one", "hang", "three", "hang too", "five", "six"]
        .map((input) => JSON.stringify({ input, output: input }) + "\n")
        .join(""),
    );
    const child = spawnCli(
      ["run", "suite.yaml", "--limit", "4", "--grace", "0.2"],
      dir,
    );
    const stderr = new Collected(child.stderr);
    await stderr.until("the hung scorers", () => hungScorers(dir) === 2);
    child.kill("SIGINT");
    const status = await child.status;
    await stderr.done;
    assert.equal(status.code, 130, stderr.text);
    // Two of the four chosen were scored; before, the line said "4 examples
    // ran".
    assert.match(
      stderr.text,
      /\nsubset --limit 4: 4 examples chosen \(the run stopped before all ran\), 2 skipped \(their Scores say "skipped"\)\n/,
    );
    assert.doesNotMatch(stderr.text, /examples ran/);
    const pids = Deno.readTextFileSync(`${dir}/pids.txt`).trim().split("\n")
      .map(Number);
    await assertNoneRunning(pids);
  });
});

Deno.test("aggregate on SIGINT goes on to the end of its input, as run in front of it ends, and exits 130", async () => {
  const score = (i: number) =>
    JSON.stringify({
      metric: "m",
      status: "scored",
      validity: "valid",
      value: i % 2,
      evaluator_version: "m@1",
      example_id: `d#${i}`,
      unit_id: `d#${i}`,
      diagnostics: [],
      evidence_refs: [],
    }) + "\n";
  const lines = (from: number, to: number) =>
    encoder.encode(
      Array.from({ length: to - from }, (_, k) => score(from + k)).join(""),
    );
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "aggregate"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const stdout = new Collected(child.stdout);
  const stderr = new Collected(child.stderr);
  const writer = child.stdin.getWriter();
  // More than a pipe holds: once written, aggregate is reading, its
  // handlers installed before its first read.
  await writer.write(lines(0, 1500));
  child.kill("SIGINT");
  await stderr.until("the first signal's word", (t) => t.includes("again"));
  await writer.write(lines(1500, 1510));
  await writer.close();
  const status = await child.status;
  await Promise.all([stdout.done, stderr.done]);
  assert.equal(status.code, 130, stderr.text);
  assert.equal(
    stderr.text,
    "evalpipe: SIGINT: aggregating the Scores read until the input ends (again to stop at once)\n",
  );
  const aggregate = JSON.parse(stdout.text);
  assert.equal(aggregate.n, 1510);
  assert.equal(aggregate.mean, 755 / 1510);
});

/** Whether `path` exists, as a file or anything else. */
function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    return false;
  }
}

/** Whether `path` holds a whole line: a pid its writer has finished. */
function lineIn(path: string): boolean {
  return exists(path) && Deno.readTextFileSync(path).endsWith("\n");
}

// A subprocess target whose call records its pid and never answers.
const HUNG_TARGET_SUITE =
  `dataset: data.jsonl\ntarget: { type: subprocess, cmd: sh hang.sh }\nscorers:\n  - type: exact_match\n`;
const HUNG_TARGET = "cat > /dev/null\necho $$ >> pids.txt\nexec sleep 1000\n";

Deno.test("run stopped by a second SIGINT before its first unit leaves its outputs as they were and no new file", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/suite.yaml`, HUNG_TARGET_SUITE);
    await Deno.writeTextFile(`${dir}/hang.sh`, HUNG_TARGET);
    await Deno.writeTextFile(`${dir}/data.jsonl`, '{"input": "q"}\n');
    await Deno.writeTextFile(`${dir}/old.ndjson`, "the last run's Scores\n");
    // The first unit's target hangs through the grace period: the run waits
    // before its first unit until the second signal.
    const child = spawnCli(
      [
        "run",
        "suite.yaml",
        "--out",
        "old.ndjson",
        "--record",
        "rec.json",
        "--grace",
        "600",
      ],
      dir,
    );
    const stderr = new Collected(child.stderr);
    await stderr.until("the hung target", () => lineIn(`${dir}/pids.txt`));
    child.kill("SIGINT");
    await stderr.until("the first signal's word", (t) => t.includes("again"));
    child.kill("SIGINT");
    const status = await child.status;
    await stderr.done;
    await assertNoneRunning(
      Deno.readTextFileSync(`${dir}/pids.txt`).trim().split("\n").map(Number),
    );
    assert.equal(status.code, 130, stderr.text);
    assert.equal(
      stderr.text,
      `${FIRST_SIGINT}evalpipe: nothing was written: --out "old.ndjson" and --record "rec.json" are as they were\n`,
    );
    assert.equal(
      await Deno.readTextFile(`${dir}/old.ndjson`),
      "the last run's Scores\n",
    );
    // Not an empty file where no record was: `report rec.json` would call it
    // not a RunRecord.
    await assert.rejects(Deno.stat(`${dir}/rec.json`), Deno.errors.NotFound);
  });
});

const STDIN_SUITE =
  `dataset: "-"\ntarget: { type: replay }\nscorers:\n  - type: exact_match\n`;

Deno.test("run stopped by one SIGINT while its stdin dataset sends nothing stops without waiting for stdin and leaves its outputs as they were", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/suite.yaml`, STDIN_SUITE);
    await Deno.writeTextFile(`${dir}/old.ndjson`, "the last run's Scores\n");
    await Deno.writeTextFile(`${dir}/units.ndjson`, "the last run's units\n");
    // Stdin held open with no case on it (`sleep 100 | evalpipe run`), and a
    // grace period longer than the test: only the stop can end the run.
    const child = spawnCli(
      [
        "run",
        "suite.yaml",
        "--out",
        "old.ndjson",
        "--units",
        "units.ndjson",
        "--record",
        "rec.json",
        "--grace",
        "600",
      ],
      dir,
      {},
      "piped",
    );
    const stderr = new Collected(child.stderr);
    let status: Deno.CommandStatus;
    try {
      // The record, opened last, is there: every output is open.
      await stderr.until("the outputs opened", () => exists(`${dir}/rec.json`));
      child.kill("SIGINT");
      // A bound on the test, not a timing claim: a run that waits for its
      // stdin to end fails here, and ends once stdin closes below.
      status = await within(child.status, 60_000, "the run to stop");
    } finally {
      await child.stdin.close().catch((error) => {
        // The command stopped reading: expected once it is stopped.
        if (!(error instanceof Deno.errors.BrokenPipe)) throw error;
      });
      await child.status;
      await stderr.done;
    }
    assert.equal(status.code, 130, stderr.text);
    assert.equal(
      stderr.text,
      "evalpipe: SIGINT: taking no new cases, finishing the ones running (again to stop at once)\n" +
        "evalpipe: interrupted by SIGINT before the run's first unit\n" +
        `evalpipe: nothing was written: --out "old.ndjson", --record "rec.json" and --units "units.ndjson" are as they were\n`,
    );
    assert.equal(
      await Deno.readTextFile(`${dir}/old.ndjson`),
      "the last run's Scores\n",
    );
    assert.equal(
      await Deno.readTextFile(`${dir}/units.ndjson`),
      "the last run's units\n",
    );
    assert.ok(!exists(`${dir}/rec.json`), "an empty record was left");
    assert.ok(!exists(`${dir}/old.ndjson.meta.json`), "a sidecar was written");
  });
});

Deno.test("run stopped by one SIGINT whose first unit never answers leaves its outputs as they were and its target killed", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/suite.yaml`, HUNG_TARGET_SUITE);
    await Deno.writeTextFile(`${dir}/hang.sh`, HUNG_TARGET);
    await Deno.writeTextFile(`${dir}/data.jsonl`, '{"input": "q"}\n');
    await Deno.writeTextFile(`${dir}/old.ndjson`, "the last run's Scores\n");
    const child = spawnCli(
      ["run", "suite.yaml", "--out", "old.ndjson", "--grace", "0.1"],
      dir,
    );
    const stderr = new Collected(child.stderr);
    await stderr.until("the hung target", () => lineIn(`${dir}/pids.txt`));
    child.kill("SIGINT");
    const status = await child.status;
    await stderr.done;
    assert.equal(status.code, 130, stderr.text);
    assert.equal(
      stderr.text,
      "evalpipe: SIGINT: taking no new cases, finishing the ones running (again to stop at once)\n" +
        "evalpipe: interrupted by SIGINT before the run's first unit; running commands were stopped\n" +
        `evalpipe: nothing was written: --out "old.ndjson" is as it was\n`,
    );
    assert.equal(
      await Deno.readTextFile(`${dir}/old.ndjson`),
      "the last run's Scores\n",
    );
    assert.ok(!exists(`${dir}/old.ndjson.meta.json`), "a sidecar was written");
    const pids = Deno.readTextFileSync(`${dir}/pids.txt`).trim().split("\n")
      .map(Number);
    await assertNoneRunning(pids);
  });
});
