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

const libc = Deno.dlopen("libc.so.6", {
  pipe2: { parameters: ["buffer", "i32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  read: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  write: { parameters: ["i32", "pointer", "usize"], result: "isize" },
  waitpid: { parameters: ["i32", "buffer", "i32"], result: "i32" },
  syscall: { parameters: ["i64", "i64", "i64"], result: "i64" },
  poll: {
    parameters: ["buffer", "u64", "i32"],
    result: "i32",
    nonblocking: true,
  },
  posix_spawn: {
    parameters: ["buffer", "buffer", "buffer", "buffer", "buffer", "pointer"],
    result: "i32",
  },
  posix_spawnattr_init: { parameters: ["buffer"], result: "i32" },
  posix_spawnattr_setflags: { parameters: ["buffer", "i16"], result: "i32" },
  posix_spawnattr_setsigdefault: {
    parameters: ["buffer", "buffer"],
    result: "i32",
  },
  posix_spawn_file_actions_init: { parameters: ["buffer"], result: "i32" },
  posix_spawn_file_actions_destroy: { parameters: ["buffer"], result: "i32" },
  posix_spawn_file_actions_adddup2: {
    parameters: ["buffer", "i32", "i32"],
    result: "i32",
  },
  environ: { type: "pointer" },
});
const c = libc.symbols;
const O_CLOEXEC = 0o2000000;
const SETSID_SETSIGDEF = 0x80 | 0x04;
const SYS_PIDFD_OPEN = 434n;
const POLLIN = 1;
const WNOHANG = 1;
const [how, cmd, width] = Deno.args;
if (!["each", "all", "sigchld"].includes(how!) || cmd === undefined) {
  throw new Error("usage: _ffi_spawn_async.ts each|all|sigchld CMD C < lines");
}
const concurrency = Number(width ?? 1);
const enc = new TextEncoder();
const cstr = (s: string) => enc.encode(`${s}\0`);
const [sh, dashC, command] = [cstr("/bin/sh"), cstr("-c"), cstr(cmd)];
const addr = (b: Uint8Array) =>
  BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(b)));
const argv = BigUint64Array.of(addr(sh), addr(dashC), addr(command), 0n);
const environ = new Deno.UnsafePointerView(c.environ!).getPointer();
// SIGPIPE (which Deno ignores) back to its default in the children.
const pipeDefault = new BigUint64Array(16);
pipeDefault[0] = 1n << 12n;
const attr = new Uint8Array(1024);
c.posix_spawnattr_init(attr);
c.posix_spawnattr_setflags(attr, SETSID_SETSIGDEF);
c.posix_spawnattr_setsigdefault(attr, pipeDefault);
const actions = new Uint8Array(256);
const fds = new Int32Array(6);
const pairs = [0, 2, 4].map((i) => fds.subarray(i, i + 2));
const pidOut = new Int32Array(1);
const status = new Int32Array(1);
const out = new Uint8Array(4096);
const sink = new Uint8Array(4096);
const dec = new TextDecoder();

const input = new Uint8Array(
  await new Response(Deno.stdin.readable).arrayBuffer(),
);
const base = Deno.UnsafePointer.of(input)!;
let next = 0;
let ok = 0;
let started = 0;

interface Child {
  pid: number;
  /** stdout and stderr's read ends, then the pidfd. */
  out: number;
  err: number;
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
  for (const pair of pairs) {
    if (c.pipe2(pair, O_CLOEXEC)) throw new Error("pipe2 failed");
  }
  c.posix_spawn_file_actions_init(actions);
  c.posix_spawn_file_actions_adddup2(actions, fds[0]!, 0);
  c.posix_spawn_file_actions_adddup2(actions, fds[3]!, 1);
  c.posix_spawn_file_actions_adddup2(actions, fds[5]!, 2);
  if (c.posix_spawn(pidOut, sh, actions, attr, argv, environ)) {
    throw new Error("posix_spawn failed");
  }
  c.posix_spawn_file_actions_destroy(actions);
  c.close(fds[0]!);
  c.close(fds[3]!);
  c.close(fds[5]!);
  // A child that exits without reading its payload is its verdict's business.
  c.write(fds[1]!, Deno.UnsafePointer.offset(base, at), BigInt(end - at));
  c.close(fds[1]!);
  const pid = pidOut[0]!;
  const pidfd = how === "sigchld"
    ? -1
    : Number(c.syscall(SYS_PIDFD_OPEN, BigInt(pid), 0n));
  return { pid, out: fds[2]!, err: fds[4]!, pidfd };
}

/** Reads an exited child's pipes to EOF, reaps it, counts its verdict. */
function finish(child: Child, reaped?: number): void {
  let len = 0;
  for (
    let n;
    (n = Number(c.read(child.out, out.subarray(len), 4096n - BigInt(len)))) > 0;
  ) {
    len += n;
    if (len === out.length) len = 0; // more than a verdict: keep reading
  }
  while (c.read(child.err, sink, 4096n) > 0);
  c.close(child.out);
  c.close(child.err);
  if (child.pidfd >= 0) c.close(child.pidfd);
  if (reaped === undefined) c.waitpid(child.pid, status, 0);
  if (
    (reaped ?? status[0]) === 0 &&
    dec.decode(out.subarray(0, len)).includes("score")
  ) {
    ok++;
  }
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
