import assert from "node:assert/strict";
import { parseScore } from "../../mod.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const CLI = `${ROOT}cli.ts`;

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(
  args: string[],
  options: { cwd?: string; stdin?: string } = {},
): Promise<Outcome> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, ...args],
    cwd: options.cwd ?? ROOT,
    stdin: options.stdin !== undefined ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const { code, stdout, stderr } = await child.output();
  const dec = new TextDecoder();
  return { code, stdout: dec.decode(stdout), stderr: dec.decode(stderr) };
}

async function suite(files: Record<string, string>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_cli_" });
  for (const [name, text] of Object.entries(files)) {
    await Deno.mkdir(`${dir}/${name}`.replace(/\/[^/]*$/, ""), {
      recursive: true,
    });
    await Deno.writeTextFile(`${dir}/${name}`, text);
  }
  return dir;
}

const REPLAY_CONFIG = `dataset: data.jsonl
target: { type: replay }
scorers:
  - type: exact_match
  - type: contains
    name: mentions
`;

function jsonl(records: unknown[]): string {
  return records.map((r) => JSON.stringify(r)).join("\n") + "\n";
}

Deno.test("cli run writes only Scores on stdout and a summary on stderr", async () => {
  const dir = await suite({
    "suite.yaml": REPLAY_CONFIG,
    "data.jsonl": jsonl([
      { input: "a", expected: "x", output: "x" },
      { input: "b", expected: "y", output: "z" },
      { id: "c", input: "c", output: "w" },
    ]),
  });
  try {
    const { code, stdout, stderr } = await cli(["run", `${dir}/suite.yaml`]);
    assert.equal(code, 0, stderr);
    const scores = stdout.trim().split("\n").map((l) =>
      parseScore(JSON.parse(l))
    );
    assert.deepEqual(
      scores.map((s) => `${s.example_id} ${s.metric} ${s.status} ${s.value}`),
      [
        "data.jsonl#1 exact_match scored 1",
        "data.jsonl#1 mentions scored 1",
        "data.jsonl#2 exact_match scored 0",
        "data.jsonl#2 mentions scored 0",
        "data.jsonl#c exact_match non_evaluable null",
        "data.jsonl#c mentions non_evaluable null",
      ],
    );
    assert.match(stderr, /exact_match\s+0\.500/);
    assert.match(stderr, /mentions/);
    assert.match(stderr, /6 scores/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli run --out writes the Scores to a file and nothing to stdout", async () => {
  const dir = await suite({
    "suite.yaml": REPLAY_CONFIG,
    "data.jsonl": jsonl([{ input: "a", expected: "x", output: "x" }]),
  });
  try {
    const { code, stdout } = await cli([
      "run",
      "suite.yaml",
      "--out",
      "scores.ndjson",
    ], { cwd: dir });
    assert.equal(code, 0);
    assert.equal(stdout, "");
    const lines = (await Deno.readTextFile(`${dir}/scores.ndjson`)).trim()
      .split("\n");
    assert.equal(lines.length, 2);
    for (const line of lines) parseScore(JSON.parse(line));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli run reports malformed records with file and line, scores them as invalid case, exits 2", async () => {
  const dir = await suite({
    "suite.yaml": REPLAY_CONFIG,
    "data.jsonl":
      '{"input":"a","expected":"x","output":"x"}\n{"input": 3}\nnot json\n{"input":"d","output":"d"}\n',
  });
  try {
    const { code, stdout, stderr } = await cli(["run", "suite.yaml"], {
      cwd: dir,
    });
    assert.equal(code, 2);
    assert.match(
      stderr,
      /Invalid case in "data\.jsonl" line 2: "input" must be a string/,
    );
    assert.match(
      stderr,
      /Invalid case in "data\.jsonl" line 3: Cannot parse JSON/,
    );
    assert.doesNotMatch(stderr, /at .*\.ts:\d+/, "no stack trace");
    const scores = stdout.trim().split("\n").map((l) =>
      parseScore(JSON.parse(l))
    );
    assert.equal(scores.length, 8, "the other records are still scored");
    const invalid = scores.filter((s) =>
      s.reason?.startsWith("invalid case: ")
    );
    assert.equal(invalid.length, 4);
    for (const s of invalid) {
      assert.equal(s.status, "blocked");
      assert.equal(s.validity, "not_measured");
      assert.equal(s.value, null);
      assert.equal(s.diagnostics[0]?.code, "case.invalid");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const BAD_CONFIGS: Array<[string, string, RegExp]> = [
  [
    "unknown key",
    "dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n  - type: exact_match\n    ignore_cas: true\n",
    /Invalid config "suite\.yaml" line 5: unknown key "scorers\[0\]\.ignore_cas"/,
  ],
  [
    "unknown target type",
    "dataset: d.jsonl\ntarget:\n  type: carrier_pigeon\nscorers: [{ type: exact_match }]\n",
    /Invalid config "suite\.yaml" line 3: "target\.type" is string "carrier_pigeon"; expected one of openai, http, subprocess, replay/,
  ],
  [
    "wrong type",
    "dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n  - type: subprocess\n    cmd: 42\n",
    /Invalid config "suite\.yaml" line 5: "scorers\[0\]\.cmd" must be a string, not number 42/,
  ],
  [
    "missing key",
    "target: { type: replay }\nscorers: [{ type: exact_match }]\n",
    /Invalid config "suite\.yaml" line 1: "dataset" is missing/,
  ],
  [
    "bad number",
    "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\nconcurrency: 0\n",
    /Invalid config "suite\.yaml" line 4: "concurrency"/,
  ],
  [
    "duplicate scorer names",
    "dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n  - type: exact_match\n  - type: exact_match\n",
    /Invalid config "suite\.yaml" line 5: two scorers are named "exact_match"/,
  ],
  [
    "YAML syntax",
    "dataset: d.jsonl\ntarget: { type: replay\n",
    /Invalid config "suite\.yaml" line \d+: /,
  ],
];

for (const [what, yaml, message] of BAD_CONFIGS) {
  Deno.test(`cli run rejects a config with ${what}, naming file and line, exit 2`, async () => {
    const dir = await suite({
      "suite.yaml": yaml,
      "d.jsonl": jsonl([{ input: "a", output: "a" }]),
    });
    try {
      const { code, stdout, stderr } = await cli(["run", "suite.yaml"], {
        cwd: dir,
      });
      assert.equal(code, 2);
      assert.equal(stdout, "");
      assert.match(stderr, message);
      assert.doesNotMatch(stderr, /^\s+at /m, "no stack trace");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("cli run names a missing dataset and config plainly, exit 2", async () => {
  const dir = await suite({ "suite.yaml": REPLAY_CONFIG });
  try {
    const missingData = await cli(["run", "suite.yaml"], { cwd: dir });
    assert.equal(missingData.code, 2);
    assert.match(missingData.stderr, /Cannot open dataset "[^"]*data\.jsonl"/);
    const missingConfig = await cli(["run", "nope.yaml"], { cwd: dir });
    assert.equal(missingConfig.code, 2);
    assert.match(
      missingConfig.stderr,
      /Invalid config "nope\.yaml": cannot read it: no such file/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli rejects unknown commands and options with exit 2 and shows help with exit 0", async () => {
  const unknown = await cli(["frobnicate"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /Unknown command "frobnicate"/);
  const badFlag = await cli(["run", "x.yaml", "--bogus"]);
  assert.equal(badFlag.code, 2);
  assert.match(badFlag.stderr, /Unknown option "--bogus"/);
  const badNumber = await cli([
    "score",
    "--scorer",
    "true",
    "--concurrency",
    "many",
  ]);
  assert.equal(badNumber.code, 2);
  assert.match(badNumber.stderr, /"--concurrency" needs a positive number/);
  for (const command of ["run", "score", "aggregate"]) {
    const help = await cli([command, "--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, new RegExp(`Usage: evalpipe ${command}`));
  }
});

Deno.test("cli run ends quietly with exit 0 when the reader closes early (| head -1)", async () => {
  const records = Array.from(
    { length: 20_000 },
    (_, i) => ({ input: `q${i}`, expected: "a", output: "a" }),
  );
  const dir = await suite({
    "suite.yaml": REPLAY_CONFIG,
    "data.jsonl": jsonl(records),
  });
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CLI, "run", "suite.yaml"],
      cwd: dir,
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const reader = child.stdout.pipeThrough(new TextDecoderStream())
      .getReader();
    const { value } = await reader.read();
    assert.ok(value !== undefined && value.startsWith('{"metric"'));
    await reader.cancel();
    const status = await child.status;
    const stderr = new TextDecoder().decode(
      new Uint8Array(await new Response(child.stderr).arrayBuffer()),
    );
    assert.equal(status.code, 0, stderr);
    assert.doesNotMatch(stderr, /error|at .*\.ts/i);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * Runs the CLI with stdout a pipe whose reader takes one chunk and goes away,
 * as `| head -c 20` does.
 */
async function readOnce(
  args: string[],
  cwd: string,
): Promise<{ code: number; stderr: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const reader = child.stdout.getReader();
  const { value } = await reader.read();
  assert.ok(value !== undefined && value.length > 0);
  await reader.cancel();
  const { code } = await child.status;
  const stderr = new TextDecoder().decode(
    new Uint8Array(await new Response(child.stderr).arrayBuffer()),
  );
  return { code, stderr };
}

Deno.test("cli report --html to a pipe its reader closed (| head -c 20) exits 0 without saying the report was written", async () => {
  // Big enough that the HTML cannot all wait in the pipe before the reader
  // goes: the writes after that meet a closed pipe.
  const records = Array.from(
    { length: 2_000 },
    (_, i) => ({ input: `q${i}`, expected: "a", output: "a ".repeat(100) }),
  );
  const dir = await suite({
    "suite.yaml": REPLAY_CONFIG,
    "data.jsonl": jsonl(records),
  });
  try {
    const ran = await cli(
      ["run", "suite.yaml", "--record", "r.json", "--out", "s.ndjson"],
      { cwd: dir },
    );
    assert.equal(ran.code, 0, ran.stderr);
    const { code, stderr } = await readOnce(
      ["report", "r.json", "--html", "/dev/stdout", "--junit", "j.xml"],
      dir,
    );
    assert.equal(code, 0, stderr);
    assert.doesNotMatch(stderr, /written|error|at .*\.ts/i);
    // The report to a file is still written whole.
    assert.match(await Deno.readTextFile(`${dir}/j.xml`), /<\/testsuites>\s*$/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli run --junit and --html to a pipe its reader closed still exits 1 for a failed gate, and writes the other reports", async () => {
  // Big enough that the JUnit cannot all wait in the pipe before the reader
  // goes: the writes after that, and the HTML's, meet a closed pipe.
  const records = Array.from(
    { length: 2_000 },
    (_, i) => ({ input: `q${i}`, expected: "a", output: "b ".repeat(100) }),
  );
  const dir = await suite({
    "suite.yaml":
      `${REPLAY_CONFIG}gates:\n  exact_match: { min_pass_rate: 0.9 }\n`,
    "data.jsonl": jsonl(records),
  });
  try {
    const { code, stderr } = await readOnce(
      [
        "run",
        "suite.yaml",
        "--out",
        "s.ndjson",
        "--junit",
        "/dev/stdout",
        "--markdown",
        "m.md",
        "--html",
        "/dev/stdout",
      ],
      dir,
    );
    // The gate's verdict, not the closed pipe's: a CI step reading the
    // report through `| head` must still fail.
    assert.equal(code, 1, stderr);
    assert.match(stderr, /gate failed: exact_match/);
    assert.doesNotMatch(stderr, /written to \/dev|Uncaught|at .*\.ts/i);
    assert.match(await Deno.readTextFile(`${dir}/m.md`), /exact\\_match/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli run on SIGINT kills running commands and exits 130", async () => {
  const dir = await suite({
    "suite.yaml":
      "dataset: data.jsonl\ntarget: { type: subprocess, cmd: sh hang.sh }\nscorers: [{ type: exact_match }]\n",
    "hang.sh": "echo $$ >> pids.txt\nsleep 1000 &\necho $! >> pids.txt\nwait\n",
    "data.jsonl": jsonl([{ input: "a" }, { input: "b" }]),
  });
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CLI, "run", "suite.yaml"],
      cwd: dir,
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    // Wait until both targets and their children have written their pids.
    for (let i = 0; i < 200; i++) {
      const text = await Deno.readTextFile(`${dir}/pids.txt`).catch(() => "");
      if (text.trim().split("\n").length >= 4) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    // Each process's state and start time (field 22 of /proc/PID/stat): a
    // PID the kernel hands to a new process later is not the one killed.
    const stat = async (pid: number) => {
      try {
        const fields = (await Deno.readTextFile(`/proc/${pid}/stat`)).split(
          ") ",
        )[1]!.split(" ");
        return { state: fields[0]!, started: fields[19]! };
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
        return undefined;
      }
    };
    const pids = (await Deno.readTextFile(`${dir}/pids.txt`)).trim().split("\n")
      .map(Number);
    assert.equal(pids.length, 4);
    const before = await Promise.all(pids.map(stat));
    child.kill("SIGINT");
    const { code } = await child.output();
    assert.equal(code, 130);
    // A process sent SIGKILL may still show as running for a moment on a
    // loaded machine: it has until the signal is taken, a second at most.
    for (const [i, pid] of pids.entries()) {
      const alive = async () => {
        const now = await stat(pid);
        const same = now !== undefined && now.started === before[i]?.started;
        return same && now.state !== "Z" ? now.state : undefined;
      };
      let state = await alive();
      for (let t = 0; state !== undefined && t < 20; t++) {
        await new Promise((r) => setTimeout(r, 50));
        state = await alive();
      }
      assert.equal(state, undefined, `process ${pid} is still running`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli score --scorer past a cap names what a command-line user can raise: a suite's max_output_bytes, not a library option", async () => {
  const dir = await suite({
    "big.sh": "head -c 1100000 /dev/zero | tr '\\0' x\n",
  });
  const unit = { example_id: "d#1", unit_id: "d#1", input: "q", output: "a" };
  try {
    for (const persistent of [[], ["--persistent"]]) {
      const { stdout } = await cli(
        ["score", "--scorer", "sh big.sh", ...persistent, "-"],
        { cwd: dir, stdin: jsonl([unit]) },
      );
      const score = parseScore(JSON.parse(stdout.trim()));
      assert.equal(score.status, "error", stdout);
      assert.match(
        score.reason ?? "",
        /bytes on stdout \(max_output_bytes, in a suite scored with --config, raises the cap\)/,
        `${persistent}`,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
