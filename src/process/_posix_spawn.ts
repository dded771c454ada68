/**
 * The `posix_spawn` backend of the spawner: `sh -c CMD` started as the leader
 * of a new session through glibc's `posix_spawn` over FFI, its stdin, stdout
 * and stderr on pipes: no exec of the `setsid` program, and glibc's
 * vfork-style clone stays cheap in a process as large as Deno's.
 *
 * A run is served without streams or exceptions: the payload is written at
 * once (the pipe takes it whole unless it is large), then the run waits for
 * its command's exit alone (most commands exit before their output fills a
 * pipe, and the pipes then hold all they wrote). A run that starts while
 * others are live waits on one SIGCHLD listener that serves them all, on the
 * event loop: a signal reaps with `waitpid(WNOHANG)` every waiting run whose
 * command exited. A run alone waits in a `poll` of its pidfd on Deno's
 * thread pool (one thread hop, where Deno's signal thread would add one).
 * After 20 ms, when the payload did not fit, or while a process that left the
 * group holds a pipe, `poll` calls on the thread pool watch its pipes and
 * pidfd, with the time left as their timeout; synchronous reads of the
 * non-blocking pipe ends follow each poll. A kill of the process group
 * (timeout, output cap, abort) makes the pidfd readable, which ends the poll
 * under way, or the wait for the exit.
 *
 * libc's functions are called through their addresses for the first spawns
 * of a process, and the fourteen that every spawn calls become `Deno.dlopen`
 * symbols (fast calls once optimised) once a run has made enough spawns to
 * repay their set-up; `sh` is looked up on PATH once per value of PATH, and
 * a child changes folder only when its folder is not this process's.
 *
 * Linux ≥ 5.3 (pidfd) with glibc ≥ 2.29 only, with the `ffi` permission and
 * the `run` permission for `sh`; {@linkcode loadPosixSpawn} says whether this
 * process can use it. Nothing happens at import: libc is looked up at the
 * first spawn (see `spawner.ts`).
 *
 * @module
 */

import { type EarlyEnding, earlyResult } from "./_ending.ts";
import { concat } from "./_concat.ts";
import {
  clearDeadline,
  type Deadline,
  EXIT_DRAIN_MS,
  setDeadline,
} from "./_deadlines.ts";
import type { RunCommandOptions, RunResult } from "./types.ts";

// Linux values, the same on x86_64 and aarch64 (Deno's two Linux targets).
const O_NONBLOCK = 0o4000;
const O_CLOEXEC = 0o2000000;
const F_SETFL = 4;
const F_DUPFD_CLOEXEC = 1030;
const POLLIN = 0x1;
const POLLOUT = 0x4;
const ENOENT = 2;
const EINTR = 4;
const EACCES = 13;
const EAGAIN = 11;
const EPIPE = 32;
const WNOHANG = 1;
const SIGKILL = 9;
const SIGPIPE = 13;
const SIGCHLD = 17;
const X_OK = 1;
const SIG_IGN = 1n;
const POSIX_SPAWN_SETSIGDEF = 0x04;
const POSIX_SPAWN_SETSIGMASK = 0x08;
const POSIX_SPAWN_SETSID = 0x80;
const SYS_PIDFD_OPEN = 434n; // the same on x86_64 and aarch64

// Pointers rather than buffers: a buffer's address would be taken at each
// call, where `Scratch` takes them once.
const FUNCTIONS = {
  pipe2: { parameters: ["pointer", "i32"], result: "i32" },
  // Variadic; its third argument is an int in both uses here.
  fcntl: { parameters: ["i32", "i32", "i32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  read: { parameters: ["i32", "pointer", "usize"], result: "isize" },
  write: { parameters: ["i32", "pointer", "usize"], result: "isize" },
  poll: {
    parameters: ["pointer", "u64", "i32"],
    result: "i32",
    nonblocking: true,
  },
  // Blocks only for a child just killed; else WNOHANG, once its pidfd says
  // it has exited.
  waitpid: { parameters: ["i32", "pointer", "i32"], result: "i32" },
  // A failed kill is an errno, not an exception to build on every exit.
  kill: { parameters: ["i32", "i32"], result: "i32" },
  // For pidfd_open (Linux ≥ 5.3), which glibc wraps only from 2.36 on.
  syscall: { parameters: ["i64", "i64", "i64"], result: "i64" },
  sigaction: { parameters: ["i32", "pointer", "pointer"], result: "i32" },
  posix_spawnattr_init: { parameters: ["pointer"], result: "i32" },
  posix_spawnattr_setflags: { parameters: ["pointer", "i16"], result: "i32" },
  posix_spawnattr_setsigmask: {
    parameters: ["pointer", "pointer"],
    result: "i32",
  },
  posix_spawnattr_setsigdefault: {
    parameters: ["pointer", "pointer"],
    result: "i32",
  },
  posix_spawn_file_actions_init: { parameters: ["pointer"], result: "i32" },
  posix_spawn_file_actions_destroy: { parameters: ["pointer"], result: "i32" },
  posix_spawn_file_actions_adddup2: {
    parameters: ["pointer", "i32", "i32"],
    result: "i32",
  },
  // glibc ≥ 2.29: without it, dlopen fails and the setsid program is used.
  posix_spawn_file_actions_addchdir_np: {
    parameters: ["pointer", "pointer"],
    result: "i32",
  },
  // Where the PATH search for `sh` is made, once per PATH (see `shell`).
  getenv: { parameters: ["pointer"], result: "pointer" },
  access: { parameters: ["pointer", "i32"], result: "i32" },
  getcwd: { parameters: ["pointer", "usize"], result: "pointer" },
  posix_spawn: {
    parameters: [
      "pointer",
      "pointer",
      "pointer",
      "pointer",
      "pointer",
      "pointer",
    ],
    result: "i32",
  },
  posix_spawnp: {
    parameters: [
      "pointer",
      "pointer",
      "pointer",
      "pointer",
      "pointer",
      "pointer",
    ],
    result: "i32",
  },
  __errno_location: { parameters: [], result: "pointer" },
} as const;

type Functions = typeof FUNCTIONS;

/** The functions above. */
type Libc = {
  [K in keyof Functions]: Deno.UnsafeFnPointer<Functions[K]>["call"];
};

/**
 * What is looked up in libc: the address of each function, and `environ`'s.
 * Functions called through an address are slow calls (0.8–3 µs each), but
 * looking an address up costs nothing, where a function looked up as a
 * symbol costs 80–100 µs of CPU to set up its fast call: 2 ms for all of
 * them, a few percent of a one-unit `score`'s start-up.
 */
const ADDRESSES = {
  ...Object.fromEntries(
    Object.keys(FUNCTIONS).map((name) => [name, { name, type: "pointer" }]),
  ),
  environ: { type: "pointer" },
} as unknown as
  & { [K in keyof Functions]: { name: K; type: "pointer" } }
  & { environ: { type: "pointer" } };

/**
 * The functions a spawn, its reads and its reaping call every time: after
 * {@linkcode FAST_AFTER} spawns, these are looked up as symbols too, fast
 * calls once optimised (about 0.2 µs against 0.8 µs through an address).
 */
const HOT = [
  "pipe2",
  "fcntl",
  "close",
  "read",
  "write",
  "waitpid",
  "kill",
  "syscall",
  "getenv",
  "getcwd",
  "posix_spawn",
  "posix_spawn_file_actions_init",
  "posix_spawn_file_actions_adddup2",
  "posix_spawn_file_actions_destroy",
] as const;

/**
 * Spawns served through addresses before the hot functions get their fast
 * calls: about 10 µs more per spawn until then, against about 1 ms to set
 * them up, which a run of a few units never gets back.
 */
const FAST_AFTER = 64;

interface Loaded {
  /** Through addresses at first, with fast calls for the hot ones later. */
  libc: Libc;
  /** Spawns so far, up to {@linkcode FAST_AFTER}. */
  spawns: number;
  /** The address of libc's `environ`. */
  environ: Deno.PointerObject;
  /** The spawn attributes, the same for every child (glibc only reads them). */
  attributes: Uint8Array;
  attributesAt: Deno.PointerValue;
  scratch: Scratch;
  /** This thread's errno, where every synchronous call here runs. */
  errno: Deno.UnsafePointerView;
}

/**
 * The buffers that spawning, reading and reaping use: one set for every
 * child, since those calls are synchronous, with their addresses taken once
 * (taking one costs about a microsecond).
 */
class Scratch {
  /** [stdin read, stdin write, stdout read, stdout write, stderr read, stderr write] */
  readonly fds = new Int32Array(6);
  readonly pairsAt = [0, 2, 4].map((i) => of(this.fds.subarray(i, i + 2)));
  readonly pid = new Int32Array(1);
  readonly pidAt = of(this.pid);
  /** `sh`, `-c`, the command, NULL. */
  readonly argv = BigUint64Array.of(address(SH), address(DASH_C), 0n, 0n);
  readonly argvAt = of(this.argv);
  readonly shAt = of(SH);
  readonly status = new Int32Array(1);
  readonly statusAt = of(this.status);
  /** Reads are copied out at once. */
  readonly chunk = new Uint8Array(65536);
  readonly chunkAt = of(this.chunk);
  /** The file actions of the spawn under way (posix_spawn_file_actions_t: 80 bytes). */
  readonly actions = new Uint8Array(256);
  readonly actionsAt = of(this.actions);
  /** This process's folder, as `getcwd` writes it (NUL-terminated). */
  readonly cwd = new Uint8Array(4097);
  readonly cwdAt = of(this.cwd);
}

const encoder = new TextEncoder();
const SH = encoder.encode("sh\0");
const DASH_C = encoder.encode("-c\0");
const PATH = encoder.encode("PATH\0");

/** The backend once loaded: `null` when this process cannot use it. */
let loaded: Loaded | null | undefined;

/**
 * The `posix_spawn` backend, when this process can use it: Linux with
 * pidfds, a glibc with the functions it needs, the permissions, and SIGCHLD
 * not ignored (the kernel would then reap the children before their status
 * is read). Looks libc up the first time it is called.
 *
 * @returns Its `run`, or `undefined` when it cannot be used.
 */
export function loadPosixSpawn():
  | { run(cmd: string, options: RunCommandOptions): Promise<RunResult> }
  | undefined {
  if (loaded === undefined) loaded = load() ?? null;
  return loaded === null ? undefined : { run: runSession };
}

function load(): Loaded | undefined {
  if (Deno.build.os !== "linux") return undefined;
  if (Deno.build.arch !== "x86_64" && Deno.build.arch !== "aarch64") {
    return undefined;
  }
  if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") {
    return undefined;
  }
  // FFI could start any program: keep to what the run permission allows.
  const run = Deno.permissions.querySync({ name: "run", command: "sh" });
  if (run.state !== "granted") return undefined;
  const found = lookUp();
  if (found === undefined) return undefined;
  const { libc, environ } = found;
  const attributes = new Uint8Array(1024); // posix_spawnattr_t: 336 bytes
  // Without pidfd_open (Linux < 5.3) a child's exit cannot join the poll
  // that serves its pipes: the setsid program does the job then.
  const self = Number(libc.syscall(SYS_PIDFD_OPEN, BigInt(Deno.pid), 0n));
  if (self >= 0) libc.close(self);
  if (self < 0 || !initAttributes(libc, attributes)) return undefined;
  return {
    libc,
    spawns: 0,
    environ,
    attributes,
    attributesAt: of(attributes),
    scratch: new Scratch(),
    errno: new Deno.UnsafePointerView(libc.__errno_location()!),
  };
}

/**
 * libc's functions and `environ`, by address. The library is closed at once:
 * it is the glibc Deno itself runs on, so it stays loaded (dlclose drops
 * only the reference dlopen took), and no library stays open to count as a
 * leak against whatever spawned first (a test, under the resource
 * sanitizer).
 */
function lookUp(): { libc: Libc; environ: Deno.PointerObject } | undefined {
  let symbols: Deno.DynamicLibrary<typeof ADDRESSES>["symbols"];
  try {
    const library = Deno.dlopen("libc.so.6", ADDRESSES);
    symbols = library.symbols;
    library.close();
  } catch (error) {
    // No glibc, or one older than 2.29: the setsid program does the job.
    if (error instanceof Error) return undefined;
    throw error;
  }
  const libc: Record<string, unknown> = {};
  for (const [name, definition] of Object.entries(FUNCTIONS)) {
    const at = symbols[name as keyof Functions];
    if (at === null) return undefined;
    // The address is that of the function the definition describes.
    const fn = new Deno.UnsafeFnPointer(
      at as Deno.PointerObject<typeof definition>,
      definition,
    );
    libc[name] = fn.call.bind(fn);
  }
  if (symbols.environ === null) return undefined;
  return { libc: libc as Libc, environ: symbols.environ };
}

/**
 * The hot functions as symbols: fast calls once optimised. They outlive the
 * library's handle (each holds its symbol and trampoline, and calls an
 * address that stays mapped). `poll` stays a call through its address: it
 * is `nonblocking`, and a nonblocking symbol calls through the library's
 * handle.
 *
 * @returns `libc` with the hot functions replaced, or as it was when they
 *   cannot be looked up.
 */
function withFastCalls(libc: Libc): Libc {
  const definitions = Object.fromEntries(
    HOT.map((name) => [name, FUNCTIONS[name]]),
  ) as { [K in typeof HOT[number]]: Functions[K] };
  try {
    const library = Deno.dlopen("libc.so.6", definitions);
    const fast = { ...libc, ...library.symbols };
    library.close();
    return fast;
  } catch (error) {
    // Found once by address, so not expected; the slow calls still work.
    if (error instanceof Error) return libc;
    throw error;
  }
}

/** Whether SIGCHLD is as a child's status needs, and the attributes are set. */
function initAttributes(libc: Libc, attributes: Uint8Array): boolean {
  const old = new BigUint64Array(32); // struct sigaction, sa_handler first
  if (libc.sigaction(SIGCHLD, null, of(old)) !== 0 || old[0] === SIG_IGN) {
    return false;
  }
  // What Rust's std (and so Deno.Command) gives a child: no blocked signal,
  // and SIGPIPE, which Deno ignores, back to its default. Handled signals
  // are reset by exec itself. A sigset_t is glibc's array of unsigned long.
  const none = new BigUint64Array(16);
  const pipe = new BigUint64Array(16);
  pipe[0] = 1n << BigInt(SIGPIPE - 1);
  const attr = of(attributes);
  const flags = POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
    POSIX_SPAWN_SETSIGDEF;
  return libc.posix_spawnattr_init(attr) === 0 &&
    libc.posix_spawnattr_setsigmask(attr, of(none)) === 0 &&
    libc.posix_spawnattr_setsigdefault(attr, of(pipe)) === 0 &&
    // EINVAL before glibc 2.26, which has no POSIX_SPAWN_SETSID.
    libc.posix_spawnattr_setflags(attr, flags) === 0;
}

/** NUL-terminated copies of the commands and folders in use, with their addresses. */
const cStrings = new Map<
  string,
  { bytes: Uint8Array; at: Deno.PointerValue }
>();

function cString(text: string, what: string): Deno.PointerValue {
  let entry = cStrings.get(text);
  if (entry === undefined) {
    if (text.includes("\0")) {
      throw new TypeError(`The ${what} contains a NUL character`);
    }
    if (cStrings.size >= 256) cStrings.clear(); // a bound, not a working set
    const bytes = encoder.encode(`${text}\0`);
    entry = { bytes, at: of(bytes) };
    cStrings.set(text, entry);
  }
  return entry.at;
}

/** Where a view's bytes start (its offset included). */
function of(bytes: ArrayBufferView): Deno.PointerValue {
  // Typed as BufferSource, which leaves out views of a SharedArrayBuffer;
  // their bytes have an address all the same.
  return Deno.UnsafePointer.of(bytes as ArrayBufferView<ArrayBuffer>);
}

function address(bytes: Uint8Array): bigint {
  return BigInt(Deno.UnsafePointer.value(of(bytes)));
}

/** errno of this thread, right after a synchronous call that failed. */
function errno(): number {
  return loaded!.errno.getInt32();
}

/**
 * Starts `sh -c cmd` as the leader of a new session (so of a new process
 * group), with piped stdio, the environment of this process, and the signal
 * state `Deno.Command` gives.
 *
 * @returns The pid and this process's ends: stdin's write end, stdout's and
 *   stderr's read ends (non-blocking), and the child's pidfd.
 * @throws {Error} When it cannot start, as `Deno.Command.spawn` would.
 */
function spawn(
  loaded: Loaded,
  cmd: string,
  cwd: string | undefined,
): { pid: number; fds: Int32Array } {
  if (loaded.spawns < FAST_AFTER && ++loaded.spawns === FAST_AFTER) {
    loaded.libc = withFastCalls(loaded.libc);
  }
  const { libc, scratch } = loaded;
  const command = cString(cmd, "command");
  // No chdir in the child when the folder is already this process's.
  const folder = cwd !== undefined && !isCwd(loaded, cwd)
    ? cString(cwd, "folder")
    : undefined;
  // All close-on-exec so that no other child inherits them; posix_spawn's
  // dup2 clears it on the child's 0, 1 and 2.
  const fds = scratch.fds.fill(-1);
  for (let i = 0; i < 6; i += 2) {
    if (libc.pipe2(scratch.pairsAt[i >> 1]!, O_CLOEXEC) !== 0) {
      failSpawn(libc, fds, errno());
    }
  }
  if (anyStdio(fds) && !moveAboveStdio(libc, fds)) {
    failSpawn(libc, fds, errno());
  }
  // Our ends never block; the child's ends are other open files and do.
  libc.fcntl(fds[1]!, F_SETFL, O_NONBLOCK);
  libc.fcntl(fds[2]!, F_SETFL, O_NONBLOCK);
  libc.fcntl(fds[4]!, F_SETFL, O_NONBLOCK);
  const pid = scratch.pid;
  const actions = fileActions(
    libc,
    scratch,
    fds,
    folder !== undefined ? cwd : undefined,
  );
  if (typeof actions === "number") failSpawn(libc, fds, actions);
  // Read at each spawn: setenv (Deno.env.set) may have moved the array.
  const environ = new Deno.UnsafePointerView(loaded.environ).getPointer();
  scratch.argv[2] = BigInt(Deno.UnsafePointer.value(command));
  // The child is in its own session before this returns: glibc waits for
  // its exec, and exec failures (no `sh`, no folder) are returned here.
  const at = shell(loaded);
  let failed = at === null ? ENOENT : libc.posix_spawn(
    scratch.pidAt,
    at,
    actions as Deno.PointerValue,
    loaded.attributesAt,
    scratch.argvAt,
    environ,
  );
  if (failed === ENOENT || failed === EACCES) {
    // Not found where it was, not searched, or not a program (a folder
    // named `sh`): PATH as posix_spawnp searches it, error for error.
    found = undefined;
    failed = libc.posix_spawnp(
      scratch.pidAt,
      scratch.shAt,
      actions as Deno.PointerValue,
      loaded.attributesAt,
      scratch.argvAt,
      environ,
    );
  }
  libc.posix_spawn_file_actions_destroy(actions as Deno.PointerValue);
  if (failed !== 0) failSpawn(libc, fds, failed);
  // The child's ends are the child's now.
  libc.close(fds[0]!);
  libc.close(fds[3]!);
  libc.close(fds[5]!);
  // A descriptor that polls readable once the child has exited: its exit
  // joins the poll that serves the pipes.
  const child = pid[0]!;
  const pidfd = Number(libc.syscall(SYS_PIDFD_OPEN, BigInt(child), 0n));
  if (pidfd < 0) {
    // Out of descriptors: the child cannot be watched, so it must not run.
    const code = errno();
    libc.kill(-child, SIGKILL);
    libc.kill(child, SIGKILL);
    for (;;) {
      const reaped = libc.waitpid(child, scratch.statusAt, 0);
      if (reaped === child || errno() !== EINTR) break;
    }
    failSpawn(libc, fds, code);
  }
  return { pid: child, fds: Int32Array.of(fds[1]!, fds[2]!, fds[4]!, pidfd) };
}

function anyStdio(fds: Int32Array): boolean {
  for (let i = 0; i < 6; i++) if (fds[i]! < 3) return true;
  return false;
}

/** Closes what a spawn opened, and throws as `Deno.Command.spawn` would. */
function failSpawn(libc: Libc, fds: Int32Array, code: number): never {
  for (let i = 0; i < 6; i++) {
    if (fds[i]! >= 0) libc.close(fds[i]!);
    fds[i] = -1;
  }
  throw new Error(`Failed to spawn 'sh' (os error ${code})`);
}

/** Whether `cwd` is this process's folder now, as `getcwd` spells it. */
function isCwd({ libc, scratch }: Loaded, cwd: string): boolean {
  const bytes = cStrings.get(cwd)?.bytes;
  // Only a folder already spelled out once is compared: its bytes are kept.
  if (bytes === undefined) return false;
  if (libc.getcwd(scratch.cwdAt, 4097n) === null) return false;
  const here = scratch.cwd;
  for (let i = 0; i < bytes.length; i++) {
    if (here[i] !== bytes[i]) return false;
  }
  return true;
}

/** `sh` as `posix_spawnp` would find it on PATH, by the PATH it was found on. */
let found:
  | { path: Deno.PointerValue; bytes: Uint8Array | null; at: Deno.PointerValue }
  | undefined;

/**
 * Where `posix_spawnp` would find `sh`: searched once per value of PATH
 * (glibc never frees a value setenv gave it, so a new value has a new
 * address), not by a failed exec in each child per folder before it.
 *
 * @returns Its path, or `null` to leave the search to `posix_spawnp`: not
 *   found, or after a relative entry of PATH (which the child's folder
 *   would resolve).
 */
function shell({ libc }: Loaded): Deno.PointerValue | null {
  const path = libc.getenv(of(PATH));
  if (found === undefined || !Deno.UnsafePointer.equals(found.path, path)) {
    const bytes = search(libc, path);
    found = { path, bytes, at: bytes === null ? null : of(bytes) };
  }
  return found.at;
}

function search(libc: Libc, pathAt: Deno.PointerValue): Uint8Array | null {
  // glibc's default PATH when there is none.
  const path = pathAt === null
    ? "/bin:/usr/bin"
    : new Deno.UnsafePointerView(pathAt).getCString();
  for (const dir of path.split(":")) {
    // A relative entry (the empty one is the folder) is searched in the
    // child's folder.
    if (!dir.startsWith("/")) return null;
    const bytes = encoder.encode(`${dir.replace(/\/$/, "")}/sh\0`);
    if (libc.access(of(bytes), X_OK) === 0) return bytes;
  }
  return null;
}

/**
 * The file actions that give the child its pipe ends as 0, 1 and 2, and its
 * folder, made in the scratch buffer for each spawn, and destroyed once it
 * has started: five fast calls. Kept from one spawn to the next instead,
 * by descriptors, they were missed at every other spawn with 16 children
 * at once (the descriptors free and taken in another order each time), and
 * each miss cost more than the calls. glibc keeps its own copy of the
 * folder's path.
 *
 * @returns The actions, or the error number when they cannot be made.
 */
function fileActions(
  libc: Libc,
  scratch: Scratch,
  fds: Int32Array,
  cwd: string | undefined,
): Deno.PointerValue | number {
  const at = scratch.actionsAt;
  const failed = libc.posix_spawn_file_actions_init(at);
  if (failed !== 0) return failed;
  const added = libc.posix_spawn_file_actions_adddup2(at, fds[0]!, 0) ||
    libc.posix_spawn_file_actions_adddup2(at, fds[3]!, 1) ||
    libc.posix_spawn_file_actions_adddup2(at, fds[5]!, 2) ||
    (cwd !== undefined
      ? libc.posix_spawn_file_actions_addchdir_np(at, cString(cwd, "folder"))
      : 0);
  if (added !== 0) {
    libc.posix_spawn_file_actions_destroy(at);
    return added;
  }
  return at;
}

/**
 * Moves pipe ends that landed on 0, 1 or 2 (this process closed its own
 * stdio) above them: copying them onto the child's 0, 1 and 2 in turn would
 * otherwise overwrite one still to be copied.
 *
 * @returns `false` when out of file descriptors.
 */
function moveAboveStdio(libc: Libc, fds: Int32Array): boolean {
  const low: number[] = [];
  let moved = true;
  for (let i = 0; i < 6; i++) {
    if (fds[i]! >= 3) continue;
    low.push(fds[i]!);
    fds[i] = libc.fcntl(fds[i]!, F_DUPFD_CLOEXEC, 3);
    moved &&= fds[i]! >= 0;
  }
  for (const fd of low) libc.close(fd);
  return moved;
}

/** Names of Linux signals by number, as `Deno.ChildProcess` reports them. */
const SIGNALS: Record<number, Deno.Signal> = {
  1: "SIGHUP",
  2: "SIGINT",
  3: "SIGQUIT",
  4: "SIGILL",
  5: "SIGTRAP",
  6: "SIGABRT",
  7: "SIGBUS",
  8: "SIGFPE",
  9: "SIGKILL",
  10: "SIGUSR1",
  11: "SIGSEGV",
  12: "SIGUSR2",
  13: "SIGPIPE",
  14: "SIGALRM",
  15: "SIGTERM",
  16: "SIGSTKFLT",
  17: "SIGCHLD",
  18: "SIGCONT",
  19: "SIGSTOP",
  20: "SIGTSTP",
  21: "SIGTTIN",
  22: "SIGTTOU",
  23: "SIGURG",
  24: "SIGXCPU",
  25: "SIGXFSZ",
  26: "SIGVTALRM",
  27: "SIGPROF",
  28: "SIGWINCH",
  29: "SIGIO",
  30: "SIGPWR",
  31: "SIGSYS",
};

/** A wait status as `Deno.ChildProcess` reports it: 128 + n, the signal's name. */
function decodeStatus(raw: number): Deno.CommandStatus {
  const signal = raw & 0x7f;
  if (signal === 0) {
    const code = (raw >> 8) & 0xff;
    return { success: code === 0, code, signal: null };
  }
  // Real-time signals have no Deno.Signal name; the code still tells them.
  return {
    success: false,
    code: 128 + signal,
    signal: SIGNALS[signal] ?? null,
  };
}

// Slots of this process's ends in a run's descriptors and `struct pollfd`s.
const IN = 0;
const OUT = 1;
const ERR = 2;
const PID = 3;

/** The size of the read buffer, as a read's argument. */
const CHUNK = 65536n;
/** Reads per stream before the others get their turn. */
const READS_PER_TURN = 16;
/** The longest poll (ms): its timeout is a C int. */
const MAX_POLL_MS = 0x7fffffff;
/** How long the first poll of a run waits for its exit alone (ms). */
const EXIT_WAIT_MS = 20;
/** While only a process that left the group holds a pipe, aborts are checked this often (ms). */
const ORPHAN_POLL_MS = 100;

/**
 * Runs `sh -c cmd` in a new session and process group, as `runCommand`
 * says: stdin written while stdout and stderr are read, a timeout, output
 * caps, and on exit, timeout, overflow or abort the whole group killed.
 *
 * @param cmd The shell command.
 * @param options Input, limits, folder and abort signal.
 * @returns How it ended, once nothing of it is in flight any more.
 */
function runSession(
  cmd: string,
  options: RunCommandOptions,
): Promise<RunResult> {
  if (!loaded) {
    throw new Error("Cannot spawn through posix_spawn in this process");
  }
  const started = performance.now();
  let child: { pid: number; fds: Int32Array };
  try {
    child = spawn(loaded, cmd, options.cwd);
  } catch (error) {
    return Promise.resolve({
      kind: "spawn_failed",
      message: error instanceof Error ? error.message : String(error),
    });
  }
  return new Session(loaded.libc, child.pid, child.fds, options, started)
    .run();
}

/**
 * The live runs of each abort signal. One listener per signal ends them all:
 * `addEventListener` and `removeEventListener` for every run cost about as
 * much as the spawn itself (profiled at c=16: 16 samples against 25, of the
 * spawner's 113 on the main thread), where most runs share one signal.
 */
const runsOf = new WeakMap<AbortSignal, Set<Session>>();

function watchAbort(signal: AbortSignal, session: Session): void {
  let runs = runsOf.get(signal);
  if (runs === undefined) {
    const live = new Set<Session>();
    runs = live;
    runsOf.set(signal, live);
    // Held by the signal, and holding only the runs under way.
    signal.addEventListener("abort", () => {
      for (const run of live) run.handleEvent();
    }, { once: true });
  }
  runs.add(session);
}

/** Runs waiting for their command's exit, which the SIGCHLD listener serves. */
const awaitingExit = new Set<Session>();
/**
 * Whether the SIGCHLD listener is in place: while two runs or more are live
 * (none is left behind, for the test sanitizer's sake), `false` when this
 * runtime will not listen.
 */
let listening: boolean | undefined = false;
/** Runs spawned and not yet done. */
let live = 0;

/**
 * Listens for SIGCHLD on the event loop, for every run at once: a signal
 * that does not keep this process alive (each waiting run's timer does).
 *
 * @returns Whether it listens.
 */
function listen(): boolean {
  if (listening !== false) return listening === true;
  try {
    Deno.addSignalListener("SIGCHLD", onChildExit);
    listening = true;
  } catch (error) {
    // A runtime that will not listen for it: each run then polls its
    // pidfd on the thread pool, as a run alone does.
    if (!(error instanceof Error)) throw error;
    listening = undefined;
  }
  return listening === true;
}

/** The last run is done: nothing listens between runs. */
function unlisten(): void {
  if (listening !== true) return;
  Deno.removeSignalListener("SIGCHLD", onChildExit);
  listening = false;
}

/** Some child exited (signals of several exits may come as one): reap ours. */
function onChildExit(): void {
  for (const session of awaitingExit) session.checkExit();
}

/** Why a run ended before its command did. */
type Ending = EarlyEnding;

const EMPTY = new Uint8Array(0);

/** One run of a child started by `spawn`, from its first write to its reaping. */
class Session {
  readonly #libc: Libc;
  readonly #pid: number;
  /** This process's ends by slot, -1 once closed. */
  readonly #fds: Int32Array;
  readonly #options: RunCommandOptions;
  readonly #started: number;
  readonly #deadline: number;
  /** `struct pollfd[4]`: an int fd, then a short events and a short revents (made at the first poll). */
  #pollfds: Int32Array | undefined;
  #events: Int16Array | undefined;
  #pollfdsAt: Deno.PointerValue = null;
  /** What is left to write on stdin. */
  #stdin: Uint8Array;
  /** What stdout and stderr gave: one read's bytes, or the list of several. */
  #out: Uint8Array | Uint8Array[] | undefined;
  #err: Uint8Array | Uint8Array[] | undefined;
  #outSize = 0;
  #errSize = 0;
  #ending: Ending | undefined;
  /** Whether the poll watches stdout and stderr, or waits for the exit alone. */
  #watchPipes = true;
  /** When the child was reaped (`performance.now()`). */
  #reapedAt: number | undefined;
  #status: Deno.CommandStatus | undefined;
  #error: Error | undefined;
  /** Ends the wait for the exit alone, while it lasts. */
  #wake: (() => void) | undefined;
  /** When the wait for the exit alone ends: the spawner's one timer, not
   * `setTimeout`, which loads Deno's Node compatibility layer at its first
   * call and costs more per call (measured: 6-15 ms once, then tens of
   * microseconds a run). */
  #timer: Deadline | undefined;

  constructor(
    libc: Libc,
    pid: number,
    fds: Int32Array,
    options: RunCommandOptions,
    started: number,
  ) {
    this.#libc = libc;
    this.#pid = pid;
    this.#fds = fds;
    this.#options = options;
    this.#started = started;
    this.#deadline = started + options.timeoutMs;
    this.#stdin = options.stdin;
  }

  async run(): Promise<RunResult> {
    const signal = this.#options.signal;
    if (signal !== undefined) watchAbort(signal, this);
    live++;
    try {
      if (signal?.aborted) this.#end("aborted");
      this.#write();
      const fds = this.#fds;
      if (fds[IN]! < 0 && this.#ending === undefined) {
        // A payload the pipe took whole: most commands now exit before
        // their output fills a pipe, so the run waits for the exit alone,
        // for a while: output that fills a pipe waits that long. With other
        // runs live, on the SIGCHLD listener that serves them all; alone, in
        // a poll of its pidfd (measured: a signal costs this process one
        // thread hop more than the poll, as Deno serves it on a thread of
        // its own, so it pays only when one signal serves several runs).
        if (live > 1 && listen()) {
          await this.#exit();
          // After the exit the pipes hold all the child wrote.
          if (this.#status !== undefined) {
            this.#read(OUT);
            this.#read(ERR);
          }
        } else this.#watchPipes = false;
      }
      if (fds[OUT]! >= 0 || fds[ERR]! >= 0 || fds[PID]! >= 0) {
        await this.#poll();
      }
    } finally {
      if (--live === 0) unlisten();
      if (signal !== undefined) runsOf.get(signal)?.delete(this);
      this.stopWaiting();
      // Only a bug gets here with the child unreaped: no process outlives the run.
      if (this.#status === undefined) this.#kill();
      for (let slot = IN; slot <= PID; slot++) this.#close(slot);
    }
    if (this.#error !== undefined) throw this.#error;
    return this.#result(performance.now() - this.#started);
  }

  /** Its abort signal has aborted. */
  handleEvent(): void {
    this.#end("aborted");
  }

  /**
   * Waits for the exit alone, on the SIGCHLD listener, for `EXIT_WAIT_MS`
   * at most (or the time left).
   */
  #exit(): Promise<void> {
    const ms = Math.min(
      EXIT_WAIT_MS,
      Math.max(0, Math.ceil(this.#deadline - performance.now())),
    );
    return new Promise<void>((resolve) => {
      this.#wake = resolve;
      awaitingExit.add(this);
      this.#timer = setDeadline(
        performance.now() + ms,
        () => this.stopWaiting(),
      );
      // An exit whose signal came before this run listened.
      this.checkExit();
    });
  }

  /** Reaps the child if it has exited, and ends the wait for its exit then. */
  checkExit(): void {
    this.#reap();
    if (this.#status !== undefined) this.stopWaiting();
  }

  /** Ends the wait for the exit alone, if it is under way. */
  stopWaiting(): void {
    const wake = this.#wake;
    if (wake === undefined) return;
    this.#wake = undefined;
    awaitingExit.delete(this);
    if (this.#timer !== undefined) clearDeadline(this.#timer);
    this.#timer = undefined;
    wake();
  }

  /**
   * Serves the run in `poll` calls on the thread pool until it is done:
   * stdin while bytes wait for room, stdout and stderr until their end, the
   * pidfd until the child is reaped.
   */
  async #poll(): Promise<void> {
    if (this.#pollfds === undefined) {
      this.#pollfds = new Int32Array(8);
      this.#events = new Int16Array(this.#pollfds.buffer);
      this.#pollfdsAt = of(this.#pollfds);
    }
    const events = this.#events!;
    for (;;) {
      const timeout = this.#arm();
      if (timeout === undefined) break;
      const polledAt = performance.now();
      // -1 (a signal interrupted it) leaves every revents at 0: look again.
      await this.#libc.poll(this.#pollfdsAt, 4n, timeout);
      this.#watchPipes = true;
      const exited = events[4 * PID + 3] !== 0;
      if (events[4 * IN + 3] !== 0) this.#write();
      // After the exit the pipes hold all the child wrote.
      if (exited || events[4 * OUT + 3] !== 0) this.#read(OUT);
      if (exited || events[4 * ERR + 3] !== 0) this.#read(ERR);
      // Both pipes at their end: the exit is near or past, and a waitpid
      // that does not block may spare the poll that would wait for it.
      if (exited || (this.#fds[OUT]! < 0 && this.#fds[ERR]! < 0)) {
        this.#reap();
      }
      // A run whose command has exited, its output read to the end, is
      // done even if the time is up.
      const done = this.#status !== undefined && this.#fds[OUT]! < 0 &&
        this.#fds[ERR]! < 0;
      // Reaped, its group killed, yet a pipe is open: a process it left in
      // another session holds it. What the command wrote is read by now.
      if (
        !done && this.#reapedAt !== undefined &&
        performance.now() >= this.#reapedAt + EXIT_DRAIN_MS
      ) {
        this.#close(OUT);
        this.#close(ERR);
        continue;
      }
      // Past the deadline by the clock, yet what this poll saw may be older:
      // made before it, and read late by a busy process (a loaded machine),
      // while the command exited in time. A poll made after it decides. A
      // command reaped has exited in time: the drain above ends its run.
      if (
        !done && this.#ending === undefined && this.#status === undefined &&
        polledAt >= this.#deadline
      ) {
        this.#end("timeout");
      }
    }
  }

  #result(ms: number): RunResult {
    const early = earlyResult(this.#ending, this.#options, ms);
    if (early !== undefined) return early;
    const status = this.#status!;
    return {
      kind: "exited",
      code: status.code,
      signal: status.signal,
      stdout: bytesOf(this.#out, this.#outSize),
      stderr: bytesOf(this.#err, this.#errSize),
      ms,
    };
  }

  /**
   * Sets up the poll: stdin while bytes wait for room, stdout and stderr
   * until their end, the pidfd until the child is reaped. Once the run has
   * ended, the pipes are closed and only the reaping is waited for.
   *
   * @returns The poll's timeout in ms, or `undefined` when it is all done.
   */
  #arm(): number | undefined {
    const fds = this.#fds;
    if (this.#ending !== undefined) {
      this.#close(IN);
      this.#close(OUT);
      this.#close(ERR);
    }
    const pollfds = this.#pollfds!;
    const events = this.#events!;
    pollfds[2 * IN] = fds[IN]!;
    events[4 * IN + 2] = POLLOUT;
    pollfds[2 * OUT] = this.#watchPipes ? fds[OUT]! : -1;
    events[4 * OUT + 2] = POLLIN;
    pollfds[2 * ERR] = this.#watchPipes ? fds[ERR]! : -1;
    events[4 * ERR + 2] = POLLIN;
    pollfds[2 * PID] = fds[PID]!;
    events[4 * PID + 2] = POLLIN;
    for (let slot = IN; slot <= PID; slot++) events[4 * slot + 3] = 0;
    if (fds[OUT]! < 0 && fds[ERR]! < 0 && fds[PID]! < 0) return undefined;
    if (this.#ending !== undefined) return -1;
    // poll takes an int: longer waits are made of several polls.
    const left = Math.min(
      MAX_POLL_MS,
      Math.max(0, Math.ceil(this.#deadline - performance.now())),
    );
    if (!this.#watchPipes) return Math.min(left, EXIT_WAIT_MS);
    if (fds[PID]! >= 0) return left;
    // Reaped, yet a pipe is open: a process that left the group holds it,
    // and no exit will end the poll when an abort kills the group. Exited
    // in time, the command is no longer bound by its deadline, only by the
    // drain.
    const drain = Math.max(
      0,
      Math.ceil(this.#reapedAt! + EXIT_DRAIN_MS - performance.now()),
    );
    return Math.min(drain, ORPHAN_POLL_MS);
  }

  /** Ends the run early: the whole group is killed, the pipes closed. */
  #end(why: Ending): void {
    this.#ending ??= why;
    this.#kill();
    this.stopWaiting();
  }

  /**
   * Kills the group and, while it is not reaped, the leader by pid too (in
   * case it is not yet its group's leader). Once reaped, its pid may belong
   * to another process; the group's id stays reserved while it has members.
   */
  #kill(): void {
    this.#libc.kill(-this.#pid, SIGKILL);
    if (this.#status === undefined) this.#libc.kill(this.#pid, SIGKILL);
  }

  /** Writes what the pipe takes now; a child that stopped reading is no error. */
  #write(): void {
    const fd = this.#fds[IN]!;
    if (fd < 0) return;
    const libc = this.#libc;
    while (this.#stdin.length > 0) {
      const bytes = this.#stdin;
      const n = Number(libc.write(fd, of(bytes), BigInt(bytes.length)));
      if (n >= 0) {
        this.#stdin = bytes.subarray(n);
        continue;
      }
      const code = errno();
      if (code === EAGAIN) return;
      if (code === EINTR) continue;
      // EPIPE: it exited, or closed stdin, without reading all of it. The
      // protocol judges it by its exit status and output.
      if (code !== EPIPE) {
        this.#error = new Error(
          `Cannot write to the child's stdin (os error ${code})`,
        );
      }
      break;
    }
    this.#close(IN);
  }

  /** Reads what `slot` holds now, up to its end or its cap. */
  #read(slot: typeof OUT | typeof ERR): void {
    const fd = this.#fds[slot]!;
    if (fd < 0) return;
    const libc = this.#libc;
    const isOut = slot === OUT;
    const limit = isOut
      ? this.#options.maxStdoutBytes
      : this.#options.maxStderrBytes;
    const { chunk, chunkAt } = loaded!.scratch;
    for (let turn = 0; turn < READS_PER_TURN; turn++) {
      const n = Number(libc.read(fd, chunkAt, CHUNK));
      if (n > 0) {
        const size = (isOut ? this.#outSize : this.#errSize) + n;
        if (isOut) this.#outSize = size;
        else this.#errSize = size;
        if (size > limit) {
          this.#end(isOut ? "stdout" : "stderr");
          return;
        }
        const bytes = chunk.slice(0, n);
        const got = isOut ? this.#out : this.#err;
        const kept = got === undefined
          ? bytes
          : got instanceof Uint8Array
          ? [got, bytes]
          : (got.push(bytes), got);
        if (isOut) this.#out = kept;
        else this.#err = kept;
        continue;
      }
      const code = n === 0 ? 0 : errno();
      if (code === EAGAIN) return;
      if (code === EINTR) continue;
      if (code !== 0) {
        this.#error = new Error(
          `Cannot read the child's output (os error ${code})`,
        );
      }
      this.#close(slot);
      return;
    }
  }

  /** Reaps the child if it has exited, then kills what it left in its group. */
  #reap(): void {
    if (this.#fds[PID]! < 0) return;
    const { status, statusAt } = loaded!.scratch;
    const reaped = this.#libc.waitpid(this.#pid, statusAt, WNOHANG);
    if (reaped === 0) return; // not yet a zombie: poll again
    if (reaped < 0 && errno() === EINTR) return;
    this.#close(PID);
    this.#reapedAt = performance.now();
    if (reaped !== this.#pid) {
      this.#error = new Error(`Cannot wait for process ${this.#pid}`);
      this.#status = { success: false, code: -1, signal: null };
      return;
    }
    this.#status = decodeStatus(status[0]!);
    // Whatever the command left behind in its group dies with it; this also
    // closes pipes that a background descendant still holds.
    this.#libc.kill(-this.#pid, SIGKILL);
  }

  #close(slot: number): void {
    const fd = this.#fds[slot]!;
    if (fd < 0) return;
    this.#libc.close(fd);
    this.#fds[slot] = -1;
  }
}

/** What a stream gave, as one array. */
function bytesOf(
  got: Uint8Array | Uint8Array[] | undefined,
  size: number,
): Uint8Array {
  if (got === undefined) return EMPTY;
  return got instanceof Uint8Array ? got : concat(got, size);
}
