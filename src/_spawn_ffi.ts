/**
 * Starting `sh -c CMD` as the leader of a new session through glibc's
 * `posix_spawn` over FFI, its stdin, stdout and stderr on pipes: no exec of
 * the `setsid` program, and glibc's vfork-style clone stays cheap in a
 * process as large as Deno's.
 *
 * Linux with glibc ≥ 2.29 only, with the `ffi` permission and the `run`
 * permission for `sh`; {@linkcode sessionSpawnAvailable} says whether this
 * process can use it. The library is loaded when this module is (a few ms
 * and MB, so only modules that spawn import it, and configs load those only
 * when they name a command), so that tests with the resource sanitizer do
 * not count it against the first test that spawns.
 *
 * @module
 */

/** The parts of a `Deno.ChildProcess` that running a command uses. */
export interface SessionChild {
  /** The shell's pid, which is also its session's and process group's id. */
  readonly pid: number;
  /** Settles once the shell has exited and been reaped. */
  readonly status: Promise<Deno.CommandStatus>;
  readonly stdin: WritableStream<Uint8Array>;
  readonly stdout: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<Uint8Array>;
  /**
   * Closes every pipe end still open and resolves once nothing of the child
   * is in flight (no poll or write pending), for a caller done with it.
   */
  release?(): Promise<void>;
}

// Linux values, the same on x86_64 and aarch64 (Deno's two Linux targets).
const O_NONBLOCK = 0o4000;
const O_CLOEXEC = 0o2000000;
const F_SETFL = 4;
const F_DUPFD_CLOEXEC = 1030;
const POLLIN = 0x1;
const POLLOUT = 0x4;
const EINTR = 4;
const EAGAIN = 11;
const EPIPE = 32;
const WNOHANG = 1;
const SIGPIPE = 13;
const SIGCHLD = 17;
const SIG_IGN = 1n;
const POSIX_SPAWN_SETSIGDEF = 0x04;
const POSIX_SPAWN_SETSIGMASK = 0x08;
const POSIX_SPAWN_SETSID = 0x80;
const SYS_PIDFD_OPEN = 434n; // the same on x86_64 and aarch64

// Pointers rather than buffers: Deno prepares "buffer" parameters twice as
// slowly when the library is loaded, which every evalpipe process pays.
const SYMBOLS = {
  pipe2: { parameters: ["pointer", "i32"], result: "i32" },
  eventfd: { parameters: ["u32", "i32"], result: "i32" },
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
  waitpid: {
    parameters: ["i32", "pointer", "i32"],
    result: "i32",
    nonblocking: true,
  },
  // The same, at once: for a child whose pidfd says it has exited.
  waitpid_now: {
    name: "waitpid",
    parameters: ["i32", "pointer", "i32"],
    result: "i32",
  },
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
  environ: { type: "pointer" },
} as const;

type Libc = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

interface Loaded {
  libc: Libc;
  /** The spawn attributes, the same for every child (glibc only reads them). */
  attributes: Uint8Array;
}

const loaded = load();

/**
 * Whether {@linkcode spawnSession} works in this process: Linux, a glibc
 * with the functions it needs, the permissions, and SIGCHLD not ignored (the
 * kernel would then reap the children before their status is read).
 *
 * @returns `true` when it can be used.
 */
export function sessionSpawnAvailable(): boolean {
  return loaded !== undefined;
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
  let library: Deno.DynamicLibrary<typeof SYMBOLS>;
  try {
    library = Deno.dlopen("libc.so.6", SYMBOLS);
  } catch (error) {
    // No glibc, or one older than 2.29: the setsid program does the job.
    if (error instanceof Error) return undefined;
    throw error;
  }
  const libc = library.symbols;
  const attributes = new Uint8Array(1024); // posix_spawnattr_t: 336 bytes
  if (!initAttributes(libc, attributes)) {
    library.close();
    return undefined;
  }
  return { libc, attributes };
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

const encoder = new TextEncoder();
const SH = encoder.encode("sh\0");
const DASH_C = encoder.encode("-c\0");

function cString(text: string, what: string): Uint8Array {
  if (text.includes("\0")) {
    throw new TypeError(`The ${what} contains a NUL character`);
  }
  return encoder.encode(`${text}\0`);
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
function errno(libc: Libc): number {
  return new Deno.UnsafePointerView(libc.__errno_location()!).getInt32();
}

/**
 * Starts `sh -c cmd` as the leader of a new session (so of a new process
 * group), with piped stdio, the environment of this process, and the signal
 * state `Deno.Command` gives. Only call it where
 * {@linkcode sessionSpawnAvailable} says so.
 *
 * @param cmd The shell command.
 * @param cwd The folder it runs in, if not this process's.
 * @returns The running child.
 * @throws {Error} When it cannot start, as `Deno.Command.spawn` would.
 */
export function spawnSession(cmd: string, cwd?: string): SessionChild {
  if (loaded === undefined) {
    throw new Error("Cannot spawn through posix_spawn in this process");
  }
  const { libc, attributes } = loaded;
  const command = cString(cmd, "command");
  const folder = cwd !== undefined ? cString(cwd, "folder") : undefined;
  // [stdin read, stdin write, stdout read, stdout write, stderr read, stderr
  // write, wake-up eventfd], all close-on-exec so that no other child
  // inherits them; posix_spawn's dup2 clears it on the child's 0, 1 and 2.
  const fds = new Int32Array(7).fill(-1);
  const fail = (code: number): never => {
    for (const fd of fds) if (fd >= 0) libc.close(fd);
    throw new Error(`Failed to spawn 'sh' (os error ${code})`);
  };
  for (let i = 0; i < 6; i += 2) {
    if (libc.pipe2(of(fds.subarray(i, i + 2)), O_CLOEXEC) !== 0) {
      fail(errno(libc));
    }
  }
  if (fds.some((fd, i) => i < 6 && fd < 3) && !moveAboveStdio(libc, fds)) {
    fail(errno(libc));
  }
  fds[6] = libc.eventfd(0, O_CLOEXEC | O_NONBLOCK); // EFD_ flags are these
  if (fds[6]! < 0) fail(errno(libc));
  // Our ends never block; the child's ends are other open files and do.
  for (const i of [1, 2, 4]) libc.fcntl(fds[i]!, F_SETFL, O_NONBLOCK);
  const buffer = new Uint8Array(256); // posix_spawn_file_actions_t: 80 bytes
  const actions = of(buffer);
  const pid = new Int32Array(1);
  let failed = libc.posix_spawn_file_actions_init(actions);
  if (failed !== 0) fail(failed);
  failed = libc.posix_spawn_file_actions_adddup2(actions, fds[0]!, 0) ||
    libc.posix_spawn_file_actions_adddup2(actions, fds[3]!, 1) ||
    libc.posix_spawn_file_actions_adddup2(actions, fds[5]!, 2) ||
    (folder !== undefined
      ? libc.posix_spawn_file_actions_addchdir_np(actions, of(folder))
      : 0);
  if (failed === 0) {
    // Read at each spawn: setenv (Deno.env.set) may have moved the array.
    const environ = new Deno.UnsafePointerView(libc.environ!).getPointer();
    const argv = new BigUint64Array([
      address(SH),
      address(DASH_C),
      address(command),
      0n,
    ]);
    // The child is in its own session before this returns: glibc waits for
    // its exec, and exec failures (no `sh`, no folder) are returned here.
    failed = libc.posix_spawnp(
      of(pid),
      of(SH),
      actions,
      of(attributes),
      of(argv),
      environ,
    );
  }
  libc.posix_spawn_file_actions_destroy(actions);
  if (failed !== 0) fail(failed);
  // The child's ends are the child's now.
  for (const i of [0, 3, 5]) libc.close(fds[i]!);
  // A descriptor that polls readable once the child has exited: its exit
  // joins the poll that serves the pipes (-1 before Linux 5.3: a waitpid on
  // a thread of its own instead).
  const pidfd = Number(libc.syscall(SYS_PIDFD_OPEN, BigInt(pid[0]!), 0n));
  return new FfiChild(libc, pid[0]!, [
    fds[1]!,
    fds[2]!,
    fds[4]!,
    fds[6]!,
    pidfd < 0 ? -1 : pidfd,
  ]);
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

/**
 * Waits for `pid` on a thread of Deno's pool, then decodes its wait status.
 * Deno reaps only the children it started, each by its pid, so the status
 * is ours to read.
 */
async function waitFor(libc: Libc, pid: number): Promise<Deno.CommandStatus> {
  const status = new Int32Array(1);
  const at = of(status); // `status` stays referenced until the end
  for (;;) {
    if (await libc.waitpid(pid, at, 0) === pid) break;
    // -1: a signal interrupted the wait, or the child is not ours to wait
    // for; errno stays on the pool's thread, so ask again without waiting.
    const now = await libc.waitpid(pid, at, WNOHANG);
    if (now === pid) break;
    if (now < 0) throw new Error(`Cannot wait for process ${pid}`);
  }
  return decodeStatus(status[0]!);
}

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

// Slots of the parent's pipe ends and of the eventfd, in #fds and #pollfds.
const IN = 0;
const OUT = 1;
const ERR = 2;
const WAKE = 3;
const PID = 4;
const PIPES = [IN, OUT, ERR];

/** One buffer for every read: reads are synchronous and copied out at once. */
const chunk = new Uint8Array(65536);
/** What wakes a poll through the eventfd, and where it is drained to. */
const one = new BigUint64Array([1n]);
const drained = new BigUint64Array(1);

/** A write to the child's stdin still under way. */
interface PendingWrite {
  bytes: Uint8Array;
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * A child started by {@linkcode spawnSession}. Reads and writes are
 * synchronous FFI calls on non-blocking pipe ends, made when a `poll` on
 * Deno's thread pool says they will not block; the same poll watches the
 * child's pidfd, and a waitpid that does not block reaps it. The eventfd
 * wakes that poll when stdin gets bytes the pipe would not take, or a
 * watched end must close.
 */
class FfiChild implements SessionChild {
  readonly pid: number;
  readonly status: Promise<Deno.CommandStatus>;
  readonly stdin: WritableStream<Uint8Array>;
  readonly stdout: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<Uint8Array>;
  readonly #libc: Libc;
  /** Open ends by slot; -1 once closed. */
  readonly #fds: Int32Array;
  /** `struct pollfd[5]`: an int fd, then a short events and a short revents. */
  readonly #pollfds = new Int32Array(10);
  readonly #events = new Int16Array(this.#pollfds.buffer);
  readonly #pollfdsAt = of(this.#pollfds);
  /** Ends in the poll under way: closing one must wait until it returns. */
  readonly #watched = [false, false, false];
  readonly #closing = [false, false, false, false];
  readonly #readers: ReadableStreamDefaultController<Uint8Array>[] = [];
  #pending: PendingWrite | undefined;
  /** Whether #pump runs: it owns closing what its poll watches. */
  #pumping = false;
  /** Settles when the #pump under way returns. */
  #pumped: Promise<void> = Promise.resolve();
  /** Settles `status`, once the child is reaped. */
  #exited!: (status: Deno.CommandStatus) => void;
  #failed!: (error: Error) => void;
  /** Whether the caller is done: the pump stops watching the pidfd. */
  #released = false;
  readonly #waitStatus = new Int32Array(1);

  /**
   * `fds`: stdin's write end, stdout's and stderr's read ends, the eventfd,
   * and the child's pidfd (-1 if there is none).
   */
  constructor(libc: Libc, pid: number, fds: number[]) {
    this.#libc = libc;
    this.pid = pid;
    this.#fds = Int32Array.from(fds);
    this.status = new Promise((resolve, reject) => {
      this.#exited = resolve;
      this.#failed = reject;
    });
    if (this.#fds[PID]! < 0) {
      waitFor(libc, pid).then(this.#exited, this.#failed);
    }
    this.stdout = this.#readable(OUT);
    this.stderr = this.#readable(ERR);
    this.stdin = new WritableStream({
      write: (bytes) => this.#write(bytes),
      close: () => this.#close(IN),
      abort: () => this.#close(IN),
    });
    this.#pump();
  }

  release(): Promise<void> {
    this.#released = true;
    const pending = this.#pending;
    this.#pending = undefined;
    pending?.reject(new Deno.errors.BrokenPipe("The stdin pipe is closed"));
    for (const slot of PIPES) this.#close(slot);
    this.#wake();
    return this.#pumped;
  }

  /** Reaps the child, whose pidfd polled readable; whether it was reaped. */
  #reap(): boolean {
    const at = of(this.#waitStatus);
    const reaped = this.#libc.waitpid_now(this.pid, at, WNOHANG);
    if (reaped === 0) return false; // not yet a zombie: poll again
    this.#closeNow(PID);
    if (reaped === this.pid) this.#exited(decodeStatus(this.#waitStatus[0]!));
    else this.#failed(new Error(`Cannot wait for process ${this.pid}`));
    return true;
  }

  #readable(slot: number): ReadableStream<Uint8Array> {
    // No backpressure: the reader reads on up to its cap, and the pump reads
    // a few chunks per poll before it lets the reader run.
    return new ReadableStream({
      start: (controller) => {
        this.#readers[slot] = controller;
      },
      cancel: () => this.#close(slot),
    });
  }

  #write(bytes: Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pending = { bytes, resolve, reject };
      this.#flush();
      if (this.#pending !== undefined) this.#pump();
    });
  }

  /** Writes what the pipe takes now; settles the write once done or broken. */
  #flush(): void {
    const pending = this.#pending;
    if (pending === undefined) return;
    const fd = this.#fds[IN]!;
    while (fd >= 0 && pending.bytes.length > 0) {
      const size = BigInt(pending.bytes.length);
      const n = Number(this.#libc.write(fd, of(pending.bytes), size));
      if (n >= 0) {
        pending.bytes = pending.bytes.subarray(n);
        continue;
      }
      const code = errno(this.#libc);
      if (code === EAGAIN) return;
      if (code === EINTR) continue;
      this.#pending = undefined;
      this.#closeNow(IN);
      pending.reject(
        code === EPIPE
          ? new Deno.errors.BrokenPipe("Broken pipe (os error 32)")
          : new Error(`Cannot write to the child's stdin (os error ${code})`),
      );
      return;
    }
    this.#pending = undefined;
    if (fd < 0) {
      pending.reject(new Deno.errors.BrokenPipe("The stdin pipe is closed"));
    } else {
      pending.resolve();
    }
  }

  /** Reads one chunk, or the end; whether there may be more to read now. */
  #read(slot: number): boolean {
    const fd = this.#fds[slot]!;
    if (fd < 0 || this.#closing[slot]) return false;
    const n = Number(this.#libc.read(fd, of(chunk), BigInt(chunk.length)));
    const reader = this.#readers[slot]!;
    if (n > 0) {
      reader.enqueue(chunk.slice(0, n));
      return true;
    }
    const code = n === 0 ? 0 : errno(this.#libc);
    if (code === EAGAIN || code === EINTR) return false;
    this.#closeNow(slot);
    if (code === 0) {
      reader.close();
    } else {
      reader.error(
        new Error(`Cannot read the child's output (os error ${code})`),
      );
    }
    return false;
  }

  /** Closes an end now, or, if the poll under way watches it, once it returns. */
  #close(slot: number): void {
    if (!this.#watched[slot]) {
      this.#closeNow(slot);
      return;
    }
    this.#closing[slot] = true;
    this.#wake();
  }

  #closeNow(slot: number): void {
    const fd = this.#fds[slot]!;
    if (fd < 0) return;
    this.#libc.close(fd);
    this.#fds[slot] = -1;
    this.#closing[slot] = false;
    if (
      slot !== WAKE && !this.#pumping && this.#fds[PID]! < 0 &&
      PIPES.every((s) => this.#fds[s]! < 0)
    ) {
      this.#closeNow(WAKE);
    }
  }

  #wake(): void {
    this.#libc.write(this.#fds[WAKE]!, of(one), 8n);
  }

  /**
   * Polls the ends with something to do (stdout and stderr until their end,
   * stdin while a write waits for room, the pidfd until the child is reaped
   * or released) and serves them, until none has. Only one runs at a time;
   * a second call wakes it to look again.
   */
  #pump(): void {
    if (this.#pumping) {
      this.#wake();
      return;
    }
    this.#pumping = true;
    this.#pumped = this.#serve();
  }

  async #serve(): Promise<void> {
    const fds = this.#fds;
    const pollfds = this.#pollfds;
    const events = this.#events;
    for (;;) {
      for (const slot of PIPES) if (this.#closing[slot]) this.#closeNow(slot);
      this.#watched[IN] = this.#pending !== undefined && fds[IN]! >= 0;
      this.#watched[OUT] = fds[OUT]! >= 0;
      this.#watched[ERR] = fds[ERR]! >= 0;
      const exit = fds[PID]! >= 0 && !this.#released;
      if (!exit && !this.#watched.some((watched) => watched)) break;
      for (let slot = IN; slot <= PID; slot++) {
        const watched = slot === WAKE ||
          (slot === PID ? exit : this.#watched[slot]);
        pollfds[2 * slot] = watched ? fds[slot]! : -1;
        events[4 * slot + 2] = slot === IN ? POLLOUT : POLLIN;
        events[4 * slot + 3] = 0;
      }
      // -1 (a signal interrupted it) leaves every revents at 0: poll again.
      await this.#libc.poll(this.#pollfdsAt, 5n, -1);
      this.#watched.fill(false);
      if (events[4 * WAKE + 3] !== 0) {
        this.#libc.read(fds[WAKE]!, of(drained), 8n);
      }
      if (events[4 * IN + 3] !== 0) this.#flush();
      for (const slot of [OUT, ERR]) {
        // A second read often finds the end already: one poll fewer.
        for (let i = 0; i < 4 && events[4 * slot + 3] !== 0; i++) {
          if (!this.#read(slot)) break;
        }
      }
      if (exit && events[4 * PID + 3] !== 0) this.#reap();
    }
    this.#pumping = false;
    // Released before the child exited: a waitpid on a thread reaps it.
    if (fds[PID]! >= 0) {
      this.#closeNow(PID);
      waitFor(this.#libc, this.pid).then(this.#exited, this.#failed);
    }
    if (PIPES.every((slot) => fds[slot]! < 0)) this.#closeNow(WAKE);
  }
}
