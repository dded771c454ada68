// Rung A of the spawn ladder (issue 17, goal 1): the C driver's calls
// (bench/_spawn_driver.c) made from a Deno program, through `Deno.dlopen`
// symbols, synchronously and in the driver's order, one case at a time: per
// payload line, `sh -c CMD` started with posix_spawn + POSIX_SPAWN_SETSID, the
// line written to its stdin, its stdout and stderr read to EOF, then reaped.
// The cost of being a Deno program making the same calls; a synchronous loop
// blocks its event loop, so it cannot run two cases at once. No timeouts, caps
// or validation beyond finding "score" in stdout. Prints how many did, and
// exits 1 unless all did, as the driver does.
// Usage: deno run -A bench/_ffi_spawn_sync.ts CMD < payloads.ndjson

const libc = Deno.dlopen("libc.so.6", {
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
});
const c = libc.symbols;
const O_CLOEXEC = 0o2000000;
const SETSID_SETSIGDEF = 0x80 | 0x04;
const enc = new TextEncoder();
const cmd = Deno.args[0];
if (cmd === undefined) throw new Error("usage: _ffi_spawn_sync.ts CMD < lines");
const cstr = (s: string) => enc.encode(`${s}\0`);
const [sh, dashC, command] = [cstr("/bin/sh"), cstr("-c"), cstr(cmd)];
const addr = (b: Uint8Array) =>
  BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(b)));
const argv = BigUint64Array.of(
  addr(sh),
  addr(dashC),
  addr(command),
  0n,
);
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
const pid = new Int32Array(1);
const status = new Int32Array(1);
const out = new Uint8Array(4096);
const sink = new Uint8Array(4096);
const dec = new TextDecoder();

const input = new Uint8Array(
  await new Response(Deno.stdin.readable).arrayBuffer(),
);
const base = Deno.UnsafePointer.of(input);
let ok = 0;
let started = 0;
for (let at = 0; at < input.length;) {
  let end = input.indexOf(10, at);
  if (end < 0) end = input.length;
  if (end > at) {
    started++;
    ok += run(at, end - at) ? 1 : 0;
  }
  at = end + 1;
}
libc.close();
console.log(ok);
// As the driver: a failure for any case that did not give a verdict.
if (ok !== started) Deno.exit(1);

function run(at: number, length: number): boolean {
  if (
    c.pipe2(fds.subarray(0, 2), O_CLOEXEC) ||
    c.pipe2(fds.subarray(2, 4), O_CLOEXEC) ||
    c.pipe2(fds.subarray(4, 6), O_CLOEXEC)
  ) throw new Error("pipe2 failed");
  c.posix_spawn_file_actions_init(actions);
  c.posix_spawn_file_actions_adddup2(actions, fds[0]!, 0);
  c.posix_spawn_file_actions_adddup2(actions, fds[3]!, 1);
  c.posix_spawn_file_actions_adddup2(actions, fds[5]!, 2);
  if (c.posix_spawn(pid, sh, actions, attr, argv, environ)) {
    throw new Error("posix_spawn failed");
  }
  c.posix_spawn_file_actions_destroy(actions);
  c.close(fds[0]!);
  c.close(fds[3]!);
  c.close(fds[5]!);
  // A child that exits without reading its payload is its verdict's business.
  c.write(fds[1]!, Deno.UnsafePointer.offset(base!, at), BigInt(length));
  c.close(fds[1]!);
  let len = 0;
  for (
    let n;
    (n = Number(c.read(fds[2]!, out.subarray(len), BigInt(out.length - len)))) >
      0;
  ) {
    len += n;
    if (len === out.length) len = 0; // more than a verdict: keep reading
  }
  while (c.read(fds[4]!, sink, BigInt(sink.length)) > 0);
  c.close(fds[2]!);
  c.close(fds[4]!);
  c.waitpid(pid[0]!, status, 0);
  return status[0] === 0 && dec.decode(out.subarray(0, len)).includes("score");
}
