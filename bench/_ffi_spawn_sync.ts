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

import { payloads, SPAWN_SYMBOLS, Spawner } from "./_ffi_spawn_common.ts";

const cmd = Deno.args[0];
if (cmd === undefined) throw new Error("usage: _ffi_spawn_sync.ts CMD < lines");
const libc = Deno.dlopen("libc.so.6", SPAWN_SYMBOLS);
const input = await payloads();
const spawner = new Spawner(libc.symbols, cmd, input);
let ok = 0;
let started = 0;
for (let at = 0; at < input.length;) {
  let end = input.indexOf(10, at);
  if (end < 0) end = input.length;
  if (end > at) {
    started++;
    if (spawner.finish(spawner.start(at, end))) ok++;
  }
  at = end + 1;
}
libc.close();
console.log(ok);
// As the driver: a failure for any case that did not give a verdict.
if (ok !== started) Deno.exit(1);
