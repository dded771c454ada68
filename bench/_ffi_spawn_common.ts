// What the two rungs of the spawn ladder share (bench/_ffi_spawn_sync.ts and
// bench/_ffi_spawn_async.ts): libc's calls that bench/_spawn_driver.c makes,
// a child started as the driver starts it (`sh -c CMD` through posix_spawn +
// POSIX_SPAWN_SETSID, SIGPIPE back to its default, its payload line written
// to stdin), and its pipes read to EOF once it has exited. No timeouts, caps
// or validation beyond finding "score" in stdout.

/** libc's calls that every rung makes. */
export const SPAWN_SYMBOLS = {
  pipe2: { parameters: ["buffer", "i32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  read: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  write: { parameters: ["i32", "pointer", "usize"], result: "isize" },
  waitpid: { parameters: ["i32", "buffer", "i32"], result: "i32" },
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
} as const;

type Calls = Deno.StaticForeignLibraryInterface<typeof SPAWN_SYMBOLS>;

const O_CLOEXEC = 0o2000000;
const SETSID_SETSIGDEF = 0x80 | 0x04;

/** A child once started: its pid, and this process's ends of stdout and stderr. */
export interface Started {
  pid: number;
  out: number;
  err: number;
}

/** Starts the children of `sh -c cmd` with payload lines of `input`, and reads them. */
export class Spawner {
  readonly #c: Calls;
  readonly #sh: Uint8Array;
  readonly #argv: BigUint64Array;
  readonly #environ: Deno.PointerValue;
  readonly #attr = new Uint8Array(1024);
  readonly #actions = new Uint8Array(256);
  readonly #fds = new Int32Array(6);
  readonly #pairs = [0, 2, 4].map((i) => this.#fds.subarray(i, i + 2));
  readonly #pid = new Int32Array(1);
  readonly #status = new Int32Array(1);
  readonly #out = new Uint8Array(4096);
  readonly #sink = new Uint8Array(4096);
  readonly #dec = new TextDecoder();
  readonly #base: Deno.PointerValue;
  /** The cmd's strings, kept alive while argv points at them. */
  readonly #strings: Uint8Array[];

  constructor(calls: Calls, cmd: string, input: Uint8Array) {
    this.#c = calls;
    const enc = new TextEncoder();
    const cstr = (s: string) => enc.encode(`${s}\0`);
    this.#strings = [cstr("/bin/sh"), cstr("-c"), cstr(cmd)];
    this.#sh = this.#strings[0]!;
    const addr = (b: Uint8Array) =>
      BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(b)));
    this.#argv = BigUint64Array.of(...this.#strings.map(addr), 0n);
    this.#environ = new Deno.UnsafePointerView(calls.environ!).getPointer();
    // SIGPIPE (which Deno ignores) back to its default in the children.
    const pipeDefault = new BigUint64Array(16);
    pipeDefault[0] = 1n << 12n;
    calls.posix_spawnattr_init(this.#attr);
    calls.posix_spawnattr_setflags(this.#attr, SETSID_SETSIGDEF);
    calls.posix_spawnattr_setsigdefault(this.#attr, pipeDefault);
    this.#base = Deno.UnsafePointer.of(input);
  }

  /** Starts the child of the line `input[at, end)`, its payload written. */
  start(at: number, end: number): Started {
    const c = this.#c;
    const fds = this.#fds;
    for (const pair of this.#pairs) {
      if (c.pipe2(pair, O_CLOEXEC)) throw new Error("pipe2 failed");
    }
    const actions = this.#actions;
    c.posix_spawn_file_actions_init(actions);
    c.posix_spawn_file_actions_adddup2(actions, fds[0]!, 0);
    c.posix_spawn_file_actions_adddup2(actions, fds[3]!, 1);
    c.posix_spawn_file_actions_adddup2(actions, fds[5]!, 2);
    if (
      c.posix_spawn(
        this.#pid,
        this.#sh,
        actions,
        this.#attr,
        this.#argv,
        this.#environ,
      )
    ) throw new Error("posix_spawn failed");
    c.posix_spawn_file_actions_destroy(actions);
    c.close(fds[0]!);
    c.close(fds[3]!);
    c.close(fds[5]!);
    // A child that exits without reading its payload is its verdict's business.
    c.write(
      fds[1]!,
      Deno.UnsafePointer.offset(this.#base!, at),
      BigInt(end - at),
    );
    c.close(fds[1]!);
    return { pid: this.#pid[0]!, out: fds[2]!, err: fds[4]! };
  }

  /**
   * Reads a child's stdout and stderr to EOF, reaps it unless its status is
   * given (`reaped`), and says whether it gave a verdict: exit 0 and "score"
   * in stdout.
   */
  finish(child: Started, reaped?: number): boolean {
    const c = this.#c;
    const out = this.#out;
    let len = 0;
    for (
      let n;
      (n = Number(
        c.read(child.out, out.subarray(len), BigInt(out.length - len)),
      )) > 0;
    ) {
      len += n;
      if (len === out.length) len = 0; // more than a verdict: keep reading
    }
    while (c.read(child.err, this.#sink, BigInt(this.#sink.length)) > 0);
    c.close(child.out);
    c.close(child.err);
    if (reaped === undefined) c.waitpid(child.pid, this.#status, 0);
    return (reaped ?? this.#status[0]) === 0 &&
      this.#dec.decode(out.subarray(0, len)).includes("score");
  }
}

/** stdin, read whole: the payload lines. */
export async function payloads(): Promise<Uint8Array> {
  return new Uint8Array(await new Response(Deno.stdin.readable).arrayBuffer());
}
