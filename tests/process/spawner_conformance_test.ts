/**
 * The spawner's conformance suite: the same cases against both backends,
 * glibc's `posix_spawn` over FFI and `Deno.Command` through the `setsid`
 * program, for one-shot runs (`runCommand`) and long-lived children
 * (`startCommand`), with real processes and `/proc`.
 */

import assert from "node:assert/strict";
import {
  assertNoneRunning,
  holdUntil,
  isGone,
  within,
  withTempDir,
} from "../_proc.ts";
import { type RunResult, startCommand } from "../../src/process/mod.ts";
import {
  BACKENDS,
  exited,
  fdsLeftOpen,
  fdTable,
  groupMembers,
  ids,
  on,
  readPids,
  run,
  sh,
} from "./_spawn.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

for (const path of BACKENDS) {
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

  Deno.test(`runCommand (${path}) runs in its cwd after this process changed folder`, async () => {
    await on(path, async () => {
      const here = Deno.cwd();
      assert.equal(exited(await run("pwd", { cwd: here })).stdout, `${here}\n`);
      await withTempDir(async (dir) => {
        Deno.chdir(dir);
        try {
          // The folder this process was in is no longer its own.
          const there = exited(await run("pwd", { cwd: here }));
          assert.equal(there.stdout, `${here}\n`);
          const own = exited(await run("pwd -P", { cwd: Deno.cwd() }));
          assert.equal(own.stdout, `${Deno.realPathSync(dir)}\n`);
        } finally {
          Deno.chdir(here);
        }
      });
    });
  });

  Deno.test(`runCommand (${path}) finds sh on PATH as PATH is at each run`, async () => {
    await on(path, async () => {
      await withTempDir(async (dir) => {
        assert.equal(exited(await run("echo real")).stdout, "real\n");
        await Deno.writeTextFile(`${dir}/sh`, '#!/bin/sh\necho "other $2"\n', {
          mode: 0o755,
        });
        const old = Deno.env.get("PATH")!;
        Deno.env.set("PATH", `${dir}:${old}`);
        try {
          assert.equal(
            exited(await run("echo real")).stdout,
            "other echo real\n",
          );
        } finally {
          Deno.env.set("PATH", old);
        }
        assert.equal(exited(await run("echo real")).stdout, "real\n");
      });
    });
  });

  Deno.test(`runCommand (${path}) gives each of many runs at once its own status and output`, async () => {
    await on(path, async () => {
      // Quick runs beside slower ones (past the first wait for an exit),
      // ending in any order.
      const results = await Promise.all(
        Array.from(
          { length: 24 },
          (_, i) =>
            run(`cat; ${i % 3 === 0 ? "sleep 0.1; " : ""}exit ${i % 5}`, {
              stdin: encoder.encode(`run ${i}`),
            }),
        ),
      );
      for (const [i, result] of results.entries()) {
        const { code, stdout } = exited(result);
        assert.deepEqual([code, stdout], [i % 5, `run ${i}`]);
      }
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

  Deno.test(`runCommand (${path}) reads more output than a pipe holds from several runs at once`, async () => {
    await on(path, async () => {
      // Runs beside others wait for their exit on the SIGCHLD listener, for
      // a while: that wait must end, on the spawner's timer, for output that
      // fills the pipes to be read at all.
      const results = await Promise.all(
        Array.from(
          { length: 4 },
          (_, i) =>
            run(
              `cat; head -c ${
                200000 + i
              } /dev/zero; head -c 100000 /dev/zero >&2`,
              {
                stdin: encoder.encode("x"),
              },
            ),
        ),
      );
      for (const [i, result] of results.entries()) {
        const { code, stdout, stderr } = exited(result);
        assert.deepEqual(
          [code, stdout.length, stderr.length],
          [0, 200001 + i, 100000],
        );
      }
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
        const running = run(cmd, { timeoutMs: 500 });
        // Spawned by now: held until all three have written their PIDs, the
        // timeout cannot be acted on before (on a loaded machine it came
        // first, and the PIDs it was to check were never written).
        holdUntil(
          () => words(readOrEmpty(`${dir}/pids`)) >= 3,
          "the three PIDs",
        );
        const result = await running;
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

  Deno.test(`runCommand (${path}) ends every run of an aborted signal, and only those`, async () => {
    await on(path, async () => {
      await withTempDir(async (dir) => {
        const shared = new AbortController();
        const other = new AbortController();
        // A run that ended before the abort, on the same signal.
        assert.equal(
          exited(await run("echo done", { signal: shared.signal })).stdout,
          "done\n",
        );
        const hang = (i: number, signal: AbortSignal) =>
          run(`echo $$ >${sh(`${dir}/${i}`)}; sleep 1000 & wait`, { signal });
        const aborted = [0, 1, 2].map((i) => hang(i, shared.signal));
        const spared = run(`read x; echo "$x"`, {
          signal: other.signal,
          stdin: encoder.encode("spared"),
        });
        const pids = (await Promise.all(
          [0, 1, 2].map((i) => readPids(`${dir}/${i}`, 1)),
        )).flat();
        shared.abort();
        for (const result of await Promise.all(aborted)) {
          assert.equal(result.kind, "aborted");
        }
        await assertNoneRunning(pids);
        assert.equal(exited(await spared).stdout, "spared\n");
        // A signal's later runs still end when it aborts.
        const again = hang(3, other.signal);
        const [last] = await readPids(`${dir}/3`, 1);
        other.abort();
        assert.equal((await again).kind, "aborted");
        await assertNoneRunning([last!]);
      });
    });
  });

  Deno.test(`runCommand (${path}) ends on timeout and on abort while a process that left the group holds stdout`, async () => {
    await on(path, async () => {
      await withTempDir(async (dir) => {
        const file = `${dir}/pids`;
        // The sleeper is the leader of a session of its own: out of the
        // group's reach, it keeps stdout open after the shell is killed
        // (which waits until it is in that session, then runs on; a shell
        // that exited in time would end its run by the drain instead).
        const cmd = `setsid sh -c ${
          sh(`echo $$ >${sh(file)}; exec sleep 1000`)
        } & while [ ! -s ${sh(file)} ]; do sleep 0.01; done; sleep 1000`;
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

  Deno.test(`runCommand (${path}) ends with what a command printed when, once it has exited, a process it left in another session holds stdout`, async () => {
    await on(path, async () => {
      await withTempDir(async (dir) => {
        const file = `${dir}/pids`;
        const cmd = `setsid sh -c ${
          sh(`echo $$ >${sh(file)}; exec sleep 1000`)
        } & while [ ! -s ${sh(file)} ]; do sleep 0.01; done; echo verdict`;
        const escaped: number[] = [];
        try {
          // The timeout is far: the run ends a short drain after the exit.
          const result = await within(
            run(cmd, { timeoutMs: 60_000 }),
            10_000,
            "the run",
          );
          escaped.push(...await readPids(file, 1));
          const out = exited(result);
          assert.equal(out.code, 0);
          assert.equal(out.stdout, "verdict\n");
        } finally {
          for (const pid of escaped) Deno.kill(pid, "SIGKILL");
        }
      });
    });
  });

  Deno.test(`runCommand (${path}) ends with what a command printed when, once it has exited, a process it left in another session holds its stdin unread`, async () => {
    await on(path, async () => {
      await withTempDir(async (dir) => {
        const file = `${dir}/pids`;
        // The sleeper takes the shell's stdin (fd 3: an asynchronous list's
        // own stdin is /dev/null) and never reads it, so the payload's
        // write, larger than a pipe holds, never ends.
        const cmd = `exec 3<&0; setsid sh -c ${
          sh(`echo $$ >${sh(file)}; exec sleep 1000`)
        } <&3 >/dev/null 2>&1 & while [ ! -s ${
          sh(file)
        } ]; do sleep 0.01; done; echo verdict`;
        const escaped: number[] = [];
        try {
          // The timeout is far: the run ends a short drain after the exit.
          const result = await within(
            run(cmd, { stdin: new Uint8Array(1 << 20), timeoutMs: 60_000 }),
            10_000,
            "the run",
          );
          escaped.push(...await readPids(file, 1));
          const out = exited(result);
          assert.deepEqual([out.code, out.stdout], [0, "verdict\n"]);
        } finally {
          escaped.push(...await readPids(file, 1).catch(() => []));
          for (const pid of escaped) Deno.kill(pid, "SIGKILL");
          await assertNoneRunning(escaped);
        }
      });
    });
  });

  Deno.test(`runCommand (${path}) leaves no file descriptor open`, async () => {
    await on(path, async () => {
      const before = fdTable();
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
      assert.deepEqual(await fdsLeftOpen(before), []);
    });
  });

  Deno.test(`runCommand (${path}) times out each of several commands at its own deadline`, async () => {
    await on(path, async () => {
      // A later run with an earlier deadline, runs that end before theirs,
      // and one that starts once the others are done. No run may end before
      // its deadline, and each ends at its own: the order they end in says
      // so, where an upper bound in milliseconds would only measure the load.
      const started = performance.now();
      const order: string[] = [];
      const ended = (name: string, ms: number) => (r: RunResult) => {
        order.push(name);
        return { kind: r.kind, early: started + ms - performance.now() };
      };
      const long = run("sleep 1000", { timeoutMs: 1500 }).then(
        ended("long", 1500),
      );
      const short = run("sleep 1000", { timeoutMs: 300 }).then(
        ended("short", 300),
      );
      const quick = run("true", { timeoutMs: 100 }).then(ended("quick", 100));
      const [l, s, q] = await Promise.all([long, short, quick]);
      assert.equal(q.kind, "exited");
      for (const r of [l, s]) {
        assert.equal(r.kind, "timeout");
        assert.ok(r.early <= 0, `ended ${r.early} ms early`);
      }
      assert.deepEqual(order.filter((n) => n !== "quick"), ["short", "long"]);
      // A `sleep 1000` that were not stopped would hold this test for 1000 s.
      const after = performance.now();
      const next = await run("sleep 1000", { timeoutMs: 200 });
      assert.equal(next.kind, "timeout");
      assert.ok(performance.now() - after >= 200, "the next run ended early");
    });
  });

  Deno.test(`runCommand (${path}) calls no timeout a command that exited before its deadline was acted on, this process being busy`, async () => {
    // Session 20 found it in the persistent scorer: on a loaded machine the
    // deadline and the exit, long in the pipes, were due together, and the
    // timer won. Here the command exits while this thread is held, and the
    // thread is let go once the deadline has passed: both are due at once.
    await on(path, async () => {
      await withTempDir(async (dir) => {
        const made = new Deno.Command("mkfifo", { args: [`${dir}/go`] })
          .outputSync();
        assert.ok(made.success, decoder.decode(made.stderr));
        const timeoutMs = 500;
        const running = run(
          "echo $$ >pid; cat go >/dev/null; printf verdict",
          { cwd: dir, timeoutMs },
        );
        // Spawned by now: its deadline is within timeoutMs from here.
        const since = performance.now();
        let pid = 0;
        holdUntil(
          () => (pid = Number(readOrEmpty(`${dir}/pid`))) > 0,
          "its PID",
        );
        // Late in its time, as a verdict that comes just in time: what the
        // spawner saw of it so far (posix_spawn's first poll, 20 ms) is old.
        holdUntil(
          () => performance.now() > since + timeoutMs / 2,
          "half its time",
        );
        // Opening the FIFO waits for the command's `cat`; closing it lets
        // the command print its verdict and exit, unreaped (a zombie) while
        // this thread holds on.
        Deno.openSync(`${dir}/go`, { write: true }).close();
        holdUntil(
          () => ["Z", undefined].includes(stateOf(pid)),
          "its exit",
        );
        holdUntil(
          () => performance.now() > since + timeoutMs,
          "its deadline",
        );
        const out = exited(await running);
        assert.deepEqual([out.code, out.stdout], [0, "verdict"]);
      });
    });
  });

  Deno.test(`runCommand (${path}) caps stderr as it caps stdout`, async () => {
    await on(path, async () => {
      const flood = await run("cat >/dev/null; yes >&2", {
        stdin: encoder.encode("x"),
        maxStderrBytes: 5000,
      });
      assert.deepEqual(
        flood.kind === "overflow" && [flood.stream, flood.limit],
        ["stderr", 5000],
      );
      // Output up to the cap is no overflow.
      const exact = exited(
        await run("printf 12345; printf 678 >&2", {
          maxStdoutBytes: 5,
          maxStderrBytes: 3,
        }),
      );
      assert.deepEqual([exact.stdout, exact.stderr], ["12345", "678"]);
    });
  });

  Deno.test(`runCommand (${path}) writes a stdin larger than a pipe to a command that writes as it reads`, async () => {
    await on(path, async () => {
      // Each line is echoed back before the next is read: the stdin write
      // finishes only if stdout is read meanwhile.
      const lines = Array.from({ length: 20_000 }, (_, i) => `line ${i}`);
      const input = encoder.encode(lines.join("\n") + "\n");
      assert.ok(input.length > 64 * 1024);
      const result = exited(
        await run('while read -r l; do echo "$l"; done', {
          stdin: input,
          maxStdoutBytes: 1 << 22,
        }),
      );
      assert.equal(result.code, 0);
      assert.equal(result.stdout, decoder.decode(input));
    });
  });

  Deno.test(`runCommand (${path}) ends at once when aborted before it starts`, async () => {
    await on(path, async () => {
      const controller = new AbortController();
      controller.abort();
      const result = await run("echo never", { signal: controller.signal });
      assert.equal(result.kind, "aborted");
    });
  });

  Deno.test(`startCommand (${path}) streams lines to and from a long-lived child in its own session`, async () => {
    await on(path, async () => {
      const child = startCommand(
        'echo "$$ $(cut -d" " -f5,6 /proc/$$/stat)"; while read -r l; do echo "got $l"; done',
      );
      const writer = child.stdin.getWriter();
      const reader = child.stdout.pipeThrough(new TextDecoderStream())
        .getReader();
      const stderr = new Response(child.stderr).text();
      let seen = "";
      const readLines = async (n: number) => {
        while (seen.split("\n").length <= n) {
          const { done, value } = await reader.read();
          if (done) break;
          seen += value;
        }
      };
      await readLines(1);
      const [pid, pgrp, session] = seen.split("\n")[0]!.split(" ").map(Number);
      assert.deepEqual([pid, pgrp, session], [child.pid, child.pid, child.pid]);
      // More than a pipe holds, written while the answers are read.
      const lines = Array.from({ length: 10_000 }, (_, i) => `case ${i}`);
      const written = writer.write(encoder.encode(lines.join("\n") + "\n"))
        .then(() => writer.close());
      await readLines(1 + lines.length);
      await written;
      await readLines(2 + lines.length);
      reader.releaseLock();
      assert.deepEqual(
        seen.split("\n").slice(1),
        [...lines.map((l) => `got ${l}`), ""],
      );
      const status = await child.status;
      assert.deepEqual([status.code, status.signal], [0, null]);
      assert.equal(await stderr, "");
    });
  });

  Deno.test(`startCommand (${path}) kills what the child left in its group once it exits`, async () => {
    await on(path, async () => {
      const child = startCommand("sleep 1000 & echo $!; exec 1>&-");
      await child.stdin.close();
      const [text, status] = await Promise.all([
        new Response(child.stdout).text(),
        child.status,
        child.stderr.cancel(),
      ]);
      assert.equal(status.code, 0);
      await assertNoneRunning([Number(text)]);
      await assertNoneRunning(groupMembers(child.pid));
    });
  });

  Deno.test(`startCommand (${path}) kill() ends the child and all its descendants`, async () => {
    await on(path, async () => {
      const child = startCommand(
        "(sleep 1000 & echo $!; wait) & echo $!; wait",
      );
      const out = child.stdout.pipeThrough(new TextDecoderStream())
        .getReader();
      let text = "";
      while (text.trim().split("\n").length < 2) {
        const { done, value } = await out.read();
        if (done) break;
        text += value;
      }
      const pids = text.trim().split("\n").map(Number);
      child.kill();
      const status = await child.status;
      assert.equal(status.signal, "SIGKILL");
      await out.cancel();
      await child.stderr.cancel();
      await child.stdin.close().catch((error) => {
        // The group is gone: its stdin may be a broken pipe by now.
        if (!(error instanceof Deno.errors.BrokenPipe)) throw error;
      });
      await assertNoneRunning([child.pid, ...pids]);
      await assertNoneRunning(groupMembers(child.pid));
      child.kill(); // a group already gone is no error
    });
  });

  Deno.test(`startCommand (${path}) throws when the command cannot start`, async () => {
    await on(path, () => {
      assert.throws(
        () => startCommand("true", { cwd: "/nonexistent/evalpipe" }),
        Deno.errors.NotFound,
      );
      return Promise.resolve();
    });
  });
}

Deno.test("startCommand leaves the one-shot backend unchosen: a long-lived child does not wait for libc's set-up", async () => {
  // A fresh process: the choice is per process, and this one has made it.
  const spawner = new URL("../../src/process/spawner.ts", import.meta.url);
  const process = new URL("../../src/process/mod.ts", import.meta.url);
  const script = `
    import { chosenBackend, startCommand, useSpawnBackend } from ${
    JSON.stringify(spawner.href)
  };
    import { runCommand } from ${JSON.stringify(process.href)};
    const child = startCommand("cat");
    const afterStart = chosenBackend() ?? "none";
    await child.stdin.close();
    await child.stdout.cancel();
    await child.stderr.cancel();
    await child.status;
    await runCommand("true", { stdin: new Uint8Array(), timeoutMs: 5000, maxStdoutBytes: 1024, maxStderrBytes: 1024 });
    const afterRun = chosenBackend();
    useSpawnBackend("setsid");
    startCommand("true").kill();
    console.log(afterStart, afterRun, chosenBackend() ?? "none");
  `;
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-check", script],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(code, 0, decoder.decode(stderr));
  const [afterStart, afterRun, afterSetsid] = decoder.decode(stdout).trim()
    .split(" ");
  assert.equal(afterStart, "none");
  assert.ok(BACKENDS.includes(afterRun as never), afterRun);
  // A backend asked for is the one a later choice makes.
  assert.equal(afterSetsid, "none");
});

/** How many words `text` holds (PIDs written one a line or a space apart). */
function words(text: string): number {
  return text.split(/\s+/).filter((w) => w !== "").length;
}

/** A file's text, or "" while it does not exist. */
function readOrEmpty(path: string): string {
  try {
    return Deno.readTextFileSync(path);
  } catch (error) {
    // Not written yet.
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    return "";
  }
}

/** A process's state (`R`, `S`, `Z`, ...), `undefined` once it is gone. */
function stateOf(pid: number): string | undefined {
  let stat: string;
  try {
    stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  } catch (error) {
    // Reaped: gone from /proc.
    if (!isGone(error)) throw error;
    return undefined;
  }
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ", 1)[0];
}
