/**
 * `runCommand` both ways it starts commands: glibc's `posix_spawn` over FFI
 * straight into a new session, and the `setsid` program it falls back to.
 * Each behaviour is checked on both, with real processes and `/proc`.
 */

import assert from "node:assert/strict";
import {
  assertNoneRunning,
  delay,
  isGone,
  running,
  within,
  withTempDir,
} from "../_proc.ts";
import {
  forceSetsidPath,
  runCommand,
  type RunCommandOptions,
  type RunResult,
  spawnPath,
} from "../../src/process/run_command.ts";

/** The project root, where the child Deno processes below run. */
const ROOT = decodeURIComponent(new URL("../..", import.meta.url).pathname)
  .replace(/\/$/, "");

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const PATHS = ["posix_spawn", "setsid"] as const;
type Path = typeof PATHS[number];

/** Quotes a word for `sh`. */
function sh(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Runs `fn` with commands started the given way. */
async function on(path: Path, fn: () => Promise<void>): Promise<void> {
  forceSetsidPath(path === "setsid");
  try {
    assert.equal(spawnPath(), path);
    await fn();
  } finally {
    forceSetsidPath(false);
  }
}

function run(
  cmd: string,
  options: Partial<RunCommandOptions> = {},
): Promise<RunResult> {
  return runCommand(cmd, {
    stdin: new Uint8Array(),
    timeoutMs: 20_000,
    maxStdoutBytes: 1 << 20,
    maxStderrBytes: 1 << 20,
    ...options,
  });
}

/** The result of a run that must have exited, with its output as text. */
function exited(result: RunResult) {
  assert.equal(result.kind, "exited", JSON.stringify(result));
  if (result.kind !== "exited") throw new Error("unreachable");
  return {
    code: result.code,
    signal: result.signal,
    stdout: decoder.decode(result.stdout),
    stderr: decoder.decode(result.stderr),
  };
}

/** Fields 4 to 6 of `/proc/PID/stat`: parent, process group, session. */
function ids(stat: string): { ppid: number; pgrp: number; session: number } {
  const [, ppid, pgrp, session] = stat.slice(stat.lastIndexOf(")") + 2)
    .split(" ");
  return { ppid: Number(ppid), pgrp: Number(pgrp), session: Number(session) };
}

/**
 * The running processes (zombies excepted) of process group `pgid`. A member
 * sent SIGKILL may still run for a moment: check them with
 * `assertNoneRunning`, which waits (bounded) for them to die.
 */
function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    let stat: string;
    try {
      stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
    } catch (error) {
      // It exited while the folder was read.
      if (isGone(error)) continue;
      throw error;
    }
    const pid = Number(entry.name);
    if (ids(stat).pgrp === pgid && running(pid)) members.push(pid);
  }
  return members;
}

/** The PIDs a command wrote to `file`, once there are `count` of them. */
async function readPids(file: string, count: number): Promise<number[]> {
  for (let i = 0; i < 250; i++) {
    let text = "";
    try {
      text = await Deno.readTextFile(file);
    } catch (error) {
      // Not written yet.
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    const pids = text.split(/\s+/).filter((w) => w !== "").map(Number);
    if (pids.length >= count) return pids;
    await delay(20);
  }
  throw new Error(`Fewer than ${count} PIDs in ${file}`);
}

function openFds(): number {
  return [...Deno.readDirSync("/proc/self/fd")].length;
}

Deno.test("runCommand starts commands through posix_spawn when FFI is allowed", () => {
  // `deno task test` runs with -A on Linux with glibc: the fast path is
  // the one under test here, not a silent fallback.
  assert.equal(spawnPath(), "posix_spawn");
});

for (const path of PATHS) {
  Deno.test(`runCommand (${path}) starts the command as the leader of its own session and process group`, async () => {
    await on(path, async () => {
      const { stdout } = exited(await run("echo $$; cat /proc/$$/stat"));
      const [pid, stat] = stdout.split("\n");
      const { ppid, pgrp, session } = ids(stat!);
      assert.equal(ppid, Deno.pid);
      assert.equal(pgrp, Number(pid));
      assert.equal(session, Number(pid));
    });
  });

  Deno.test(`runCommand (${path}) gives the command the signal state Deno.Command gives`, async () => {
    await on(path, async () => {
      const cmd = "grep -E '^Sig(Blk|Ign):' /proc/self/status";
      const reference = await new Deno.Command("sh", { args: ["-c", cmd] })
        .output();
      const { stdout } = exited(await run(cmd));
      assert.equal(stdout, decoder.decode(reference.stdout));
      assert.match(stdout, /^SigBlk:\s+0+$/m);
      // SIGPIPE (13, bit 12), which Deno ignores, is back to its default:
      // `yes` dies of it quietly rather than reporting a broken pipe.
      const ignored = BigInt(`0x${stdout.match(/^SigIgn:\s+(\w+)$/m)![1]}`);
      assert.equal(ignored & (1n << 12n), 0n);
      const yes = exited(await run("yes | head -n 1"));
      assert.deepEqual([yes.code, yes.stdout, yes.stderr], [0, "y\n", ""]);
    });
  });

  Deno.test(`runCommand (${path}) runs the command in its cwd`, async () => {
    await on(path, async () => {
      await withTempDir(async (dir) => {
        const { stdout } = exited(await run("pwd -P", { cwd: dir }));
        assert.equal(stdout, `${Deno.realPathSync(dir)}\n`);
      });
      const missing = await run("true", { cwd: "/nonexistent/evalpipe" });
      assert.equal(missing.kind, "spawn_failed");
    });
  });

  Deno.test(`runCommand (${path}) passes the environment as Deno.env has it now`, async () => {
    await on(path, async () => {
      // Enough new variables for setenv to move the environment.
      const names = Array.from({ length: 200 }, (_, i) => `EVALPIPE_T_${i}`);
      try {
        for (const name of names) Deno.env.set(name, `v ${name} 'x'`);
        const { stdout } = exited(await run('printf %s "$EVALPIPE_T_199"'));
        assert.equal(stdout, "v EVALPIPE_T_199 'x'");
      } finally {
        for (const name of names) Deno.env.delete(name);
      }
      const { stdout } = exited(
        await run('printf %s "${EVALPIPE_T_199-unset}"'),
      );
      assert.equal(stdout, "unset");
    });
  });

  Deno.test(`runCommand (${path}) reports exit codes and signals as Deno.ChildProcess does`, async () => {
    await on(path, async () => {
      const cases: Array<[string, number, Deno.Signal | null]> = [
        ["exit 0", 0, null],
        ["exit 7", 7, null],
        ["kill -TERM $$", 143, "SIGTERM"],
        ["kill -KILL $$", 137, "SIGKILL"],
        ["kill -USR1 $$", 138, "SIGUSR1"],
      ];
      for (const [cmd, code, signal] of cases) {
        const reference = await new Deno.Command("sh", { args: ["-c", cmd] })
          .output();
        assert.deepEqual([reference.code, reference.signal], [code, signal]);
        const result = exited(await run(cmd));
        assert.deepEqual([result.code, result.signal], [code, signal], cmd);
      }
    });
  });

  Deno.test(`runCommand (${path}) writes a large stdin while reading large stdout and stderr`, async () => {
    await on(path, async () => {
      const input = new Uint8Array(3 << 20).map((_, i) => (i * 7919) % 251);
      const result = await run("tee /dev/stderr", {
        stdin: input.subarray(5), // not at the start of its buffer
        maxStdoutBytes: 4 << 20,
        maxStderrBytes: 4 << 20,
      });
      assert.equal(result.kind, "exited");
      if (result.kind !== "exited") return;
      assert.equal(result.code, 0);
      assert.ok(result.stdout.length === input.length - 5);
      assert.deepEqual(result.stdout, input.subarray(5));
      assert.deepEqual(result.stderr, input.subarray(5));
    });
  });

  Deno.test(`runCommand (${path}) reads more output than a pipe holds after a small payload`, async () => {
    await on(path, async () => {
      // The first wait is for the exit alone: output that fills the pipes
      // must still be read, or the command would never exit.
      const result = exited(
        await run(
          "cat; head -c 300000 /dev/zero; head -c 200000 /dev/zero >&2",
          {
            stdin: encoder.encode("x"),
          },
        ),
      );
      assert.deepEqual(
        [result.code, result.stdout.length, result.stderr.length],
        [0, 300001, 200000],
      );
    });
  });

  Deno.test(`runCommand (${path}) takes a timeout longer than a C int of milliseconds`, async () => {
    await on(path, async () => {
      // 10^13 ms: poll's and setTimeout's delays are 32-bit ints.
      const result = exited(
        await run("sleep 0.1; echo done", { timeoutMs: 1e13 }),
      );
      assert.deepEqual([result.code, result.stdout], [0, "done\n"]);
    });
  });

  Deno.test(`runCommand (${path}) accepts a command that exits without reading its stdin`, async () => {
    await on(path, async () => {
      const result = exited(
        await run("echo done", { stdin: new Uint8Array(1 << 20) }),
      );
      assert.deepEqual([result.code, result.stdout], [0, "done\n"]);
    });
  });

  Deno.test(`runCommand (${path}) kills what the command left in the background once it exits`, async () => {
    await on(path, async () => {
      // The background sleep holds stdout: the call ends only because the
      // group is killed when the shell exits.
      const { stdout } = exited(await run("sleep 1000 & echo $$ $!"));
      const [shell, sleeper] = stdout.trim().split(" ").map(Number);
      await assertNoneRunning([sleeper!]);
      await assertNoneRunning(groupMembers(shell!));
    });
  });

  Deno.test(`runCommand (${path}) kills a hung command and all its descendants on timeout`, async () => {
    await on(path, async () => {
      await withTempDir(async (dir) => {
        const file = sh(`${dir}/pids`);
        const cmd = `echo $$ >${file}; ` +
          `(sleep 1000 & echo $! >>${file}; wait) & echo $! >>${file}; wait`;
        const result = await run(cmd, { timeoutMs: 500 });
        assert.equal(result.kind, "timeout");
        const pids = await readPids(`${dir}/pids`, 3);
        await assertNoneRunning(pids);
        await assertNoneRunning(groupMembers(pids[0]!));
      });
    });
  });

  Deno.test(`runCommand (${path}) kills the group at the output cap and when aborted`, async () => {
    await on(path, async () => {
      await withTempDir(async (dir) => {
        const file = `${dir}/pids`;
        const flood = await run(`echo $$ >${sh(file)}; yes`, {
          maxStdoutBytes: 1000,
        });
        assert.deepEqual(
          flood.kind === "overflow" && [flood.stream, flood.limit],
          ["stdout", 1000],
        );
        const [flooder] = await readPids(file, 1);
        await assertNoneRunning([flooder!]);
        await Deno.remove(file);

        const controller = new AbortController();
        const running = run(`echo $$ >${sh(file)}; sleep 1000 & wait`, {
          signal: controller.signal,
        });
        const [hung] = await readPids(file, 1);
        controller.abort();
        assert.equal((await running).kind, "aborted");
        await assertNoneRunning([hung!]);
        await assertNoneRunning(groupMembers(hung!));
      });
    });
  });

  Deno.test(`runCommand (${path}) ends on timeout and on abort while a process that left the group holds stdout`, async () => {
    await on(path, async () => {
      await withTempDir(async (dir) => {
        const file = `${dir}/pids`;
        // The sleeper is the leader of a session of its own: out of the
        // group's reach, it keeps stdout open after the shell has exited
        // (which waits until it is in that session).
        const cmd = `setsid sh -c ${
          sh(`echo $$ >${sh(file)}; exec sleep 1000`)
        } & while [ ! -s ${sh(file)} ]; do sleep 0.01; done`;
        const escaped: number[] = [];
        try {
          const timedOut = await within(
            run(cmd, { timeoutMs: 300 }),
            10_000,
            "the run",
          );
          escaped.push(...await readPids(file, 1));
          assert.equal(timedOut.kind, "timeout");
          await Deno.remove(file);
          const controller = new AbortController();
          const aborted = run(cmd, { signal: controller.signal });
          escaped.push(...await readPids(file, 1));
          controller.abort();
          assert.equal(
            (await within(aborted, 5_000, "the aborted run")).kind,
            "aborted",
          );
        } finally {
          for (const pid of escaped) Deno.kill(pid, "SIGKILL");
        }
      });
    });
  });

  Deno.test(`runCommand (${path}) leaves no file descriptor open`, async () => {
    await on(path, async () => {
      const before = openFds();
      for (let i = 0; i < 10; i++) {
        exited(await run("cat; echo err >&2", { stdin: encoder.encode("x") }));
        assert.equal(
          (await run("yes", { maxStdoutBytes: 10 })).kind,
          "overflow",
        );
        assert.equal(
          (await run("sleep 1000", { timeoutMs: 1 })).kind,
          "timeout",
        );
        const missing = await run("true", { cwd: "/nonexistent/evalpipe" });
        assert.equal(missing.kind, "spawn_failed");
      }
      assert.equal(openFds(), before);
    });
  });
}

Deno.test("runCommand (posix_spawn) gets each status while Deno.Command children run beside", async () => {
  // Deno reaps only its own children, by pid: both kinds finish with their
  // own exit codes.
  const ours = Array.from({ length: 8 }, (_, i) => run(`exit ${i + 1}`));
  const deno = Array.from(
    { length: 8 },
    (_, i) =>
      new Deno.Command("sh", { args: ["-c", `exit ${i + 11}`] }).output(),
  );
  assert.deepEqual(
    (await Promise.all(ours)).map((r) => exited(r).code),
    [1, 2, 3, 4, 5, 6, 7, 8],
  );
  assert.deepEqual(
    (await Promise.all(deno)).map((r) => r.code),
    [11, 12, 13, 14, 15, 16, 17, 18],
  );
});

/**
 * Runs `prelude`, then a command through `runCommand`, in a child Deno with
 * the given permission flags; what it saw.
 */
async function inChildDeno(
  flags: string[],
  prelude = "",
): Promise<{ path: string; code: number; stdout: string; pgrp: number }> {
  let seen: unknown;
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/script.ts`,
      `${prelude}
import { runCommand, spawnPath } from ${
        JSON.stringify(`${ROOT}/src/process/run_command.ts`)
      };
const result = await runCommand("cat; echo $$ >&2", {
  stdin: new TextEncoder().encode("payload"),
  timeoutMs: 20000,
  maxStdoutBytes: 1000,
  maxStderrBytes: 1000,
});
if (result.kind !== "exited") throw new Error(JSON.stringify(result));
const text = new TextDecoder();
await Deno.writeTextFile(Deno.args[0]!, JSON.stringify({
  path: spawnPath(),
  code: result.code,
  stdout: text.decode(result.stdout),
  pgrp: Number(text.decode(result.stderr)),
}));
`,
    );
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...flags, `${dir}/script.ts`, `${dir}/seen.json`],
      cwd: ROOT,
      stdin: "null",
    }).output();
    assert.equal(code, 0, decoder.decode(stderr));
    seen = JSON.parse(await Deno.readTextFile(`${dir}/seen.json`));
  });
  return seen as { path: string; code: number; stdout: string; pgrp: number };
}

Deno.test("runCommand falls back to the setsid program without the ffi permission", async () => {
  const cases: Array<[string[], Path]> = [
    [["-A"], "posix_spawn"],
    [["-A", "--deny-ffi"], "setsid"],
    [["--allow-read", "--allow-write", "--allow-run"], "setsid"],
  ];
  for (const [flags, path] of cases) {
    const seen = await inChildDeno(flags);
    assert.deepEqual(
      [seen.path, seen.code, seen.stdout],
      [path, 0, "payload"],
      flags.join(" "),
    );
    assert.ok(seen.pgrp > 0);
  }
});

Deno.test("runCommand (posix_spawn) works in a process that closed its stdin and stdout", async () => {
  // The first pipe then lands on 0 and 1, where the child's stdio must go.
  const prelude = `
Deno.dlopen("libc.so.6", { close: { parameters: ["i32"], result: "i32" } })
  .symbols.close(0);
Deno.dlopen("libc.so.6", { close: { parameters: ["i32"], result: "i32" } })
  .symbols.close(1);
`;
  const seen = await inChildDeno(["-A"], prelude);
  assert.deepEqual(
    [seen.path, seen.code, seen.stdout],
    ["posix_spawn", 0, "payload"],
  );
});

Deno.test("isGone reads ESRCH in the message forms Deno has used", () => {
  // Reaped between opening /proc/PID/stat and reading it.
  assert.ok(isGone(new Error("No such process (os error 3)")));
  assert.ok(
    isGone(new Error("No such process (os error 3): readfile '/proc/9/stat'")),
  );
  assert.ok(isGone(new Deno.errors.NotFound("gone")));
  assert.ok(!isGone(new Error("Permission denied (os error 13)")));
});
