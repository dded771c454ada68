// Rung B of the spawn ladder (issue 17, goal 1): the least an asynchronous
// Deno program needs to run C children at once without blocking its event
// loop. Each child is started as bench/_spawn_driver.c starts it (`sh -c CMD`
// through posix_spawn + POSIX_SPAWN_SETSID over `Deno.dlopen` symbols, the
// payload line written to its stdin); what differs is how the program learns
// of an exit without blocking:
//
// - `each`: one `nonblocking` FFI `poll` of the child's pidfd per child (a
//   thread-pool call: one thread hop per case);
// - `all`: one `nonblocking` `poll` over every live child's pidfd, as the C
//   driver's one poll loop (one hop per wake, which may serve several exits);
// - `sigchld`: a SIGCHLD listener (`Deno.addSignalListener`) that reaps with
//   `waitpid(WNOHANG)` (Deno's signal thread, then the event loop).
//
// After the exit the pipes hold all the child wrote: stdout and stderr are
// read to EOF, then it is reaped. No timeouts, caps or validation beyond
// finding "score" in stdout. Prints how many did, and exits 1 unless all
// did, as the driver does.
// Usage: deno run -A bench/_ffi_spawn_async.ts each|all|sigchld CMD C < payloads.ndjson

import {
  payloads,
  SPAWN_SYMBOLS,
  Spawner,
  type Started,
} from "./_ffi_spawn_common.ts";

const libc = Deno.dlopen(
  "libc.so.6",
  {
    ...SPAWN_SYMBOLS,
    syscall: { parameters: ["i64", "i64", "i64"], result: "i64" },
    poll: {
      parameters: ["buffer", "u64", "i32"],
      result: "i32",
      nonblocking: true,
    },
  } as const,
);
const c = libc.symbols;
const SYS_PIDFD_OPEN = 434n;
const POLLIN = 1;
const WNOHANG = 1;
const [how, cmd, width] = Deno.args;
if (!["each", "all", "sigchld"].includes(how!) || cmd === undefined) {
  throw new Error("usage: _ffi_spawn_async.ts each|all|sigchld CMD C < lines");
}
const concurrency = Number(width ?? 1);
const status = new Int32Array(1);
const input = await payloads();
const spawner = new Spawner(c, cmd, input);
let next = 0;
let ok = 0;
let started = 0;

interface Child extends Started {
  /** The child's pidfd (-1 when exits come by SIGCHLD). */
  pidfd: number;
}

/** Starts the next line's child, or returns undefined when none is left. */
function start(): Child | undefined {
  let end;
  for (;;) {
    if (next >= input.length) return undefined;
    end = input.indexOf(10, next);
    if (end < 0) end = input.length;
    if (end > next) break;
    next = end + 1;
  }
  const at = next;
  next = end + 1;
  started++;
  const child = spawner.start(at, end);
  const pidfd = how === "sigchld"
    ? -1
    : Number(c.syscall(SYS_PIDFD_OPEN, BigInt(child.pid), 0n));
  return { ...child, pidfd };
}

/** Reads an exited child's pipes to EOF, reaps it, counts its verdict. */
function finish(child: Child, reaped?: number): void {
  if (child.pidfd >= 0) c.close(child.pidfd);
  if (spawner.finish(child, reaped)) ok++;
}

if (how === "each") {
  const worker = async () => {
    const pollfd = new Int32Array(2);
    for (let child; (child = start()) !== undefined;) {
      pollfd[0] = child.pidfd;
      pollfd[1] = POLLIN;
      while (await c.poll(pollfd, 1n, -1) < 1);
      finish(child);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
} else if (how === "all") {
  const slots: (Child | undefined)[] = Array.from(
    { length: concurrency },
    start,
  );
  const pollfds = new Int32Array(2 * concurrency);
  const events = new Int16Array(pollfds.buffer);
  for (;;) {
    let n = 0;
    for (const child of slots) {
      if (child === undefined) continue;
      pollfds[2 * n] = child.pidfd;
      pollfds[2 * n + 1] = POLLIN;
      n++;
    }
    if (n === 0) break;
    if (await c.poll(pollfds, BigInt(n), -1) < 1) continue;
    for (let i = 0, j = 0; i < slots.length; i++) {
      const child = slots[i];
      if (child === undefined) continue;
      if (events[4 * j++ + 3] !== 0) {
        finish(child);
        slots[i] = start();
      }
    }
  }
} else {
  // One sweep may reap several: each wakes with its own status.
  const waiting = new Map<number, (status: number) => void>();
  const sweep = () => {
    for (const [pid, wake] of waiting) {
      if (c.waitpid(pid, status, WNOHANG) === pid) {
        waiting.delete(pid);
        wake(status[0]!);
      }
    }
  };
  Deno.addSignalListener("SIGCHLD", sweep);
  const worker = async () => {
    for (let child; (child = start()) !== undefined;) {
      const pid = child.pid;
      // The signal is served on the event loop, after this adds the child.
      finish(child, await new Promise((wake) => waiting.set(pid, wake)));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  Deno.removeSignalListener("SIGCHLD", sweep);
}
libc.close();
console.log(ok);
// As the driver: a failure for any case that did not give a verdict.
if (ok !== started) Deno.exit(1);
