// Baseline for `score`: the least a driver must do per case: spawn `sh -c CMD`
// with the payload on stdin, read its stdout, at the given concurrency. No
// process groups, timeouts, caps or validation.
// With `setsid`, each `sh` starts through the setsid program, as the
// spawner's portable backend starts it (still without the rest).
// Usage: deno run -A bench/_bare_spawn.ts CMD CONCURRENCY [setsid] < units.ndjson
const [cmd, c, how] = Deno.args;
const [program, ...prefix] = how === "setsid" ? ["setsid", "sh"] : ["sh"];
const concurrency = Number(c ?? 1);
const text = await new Response(Deno.stdin.readable).text();
const lines = text.split("\n").filter((l) => l !== "");
const enc = new TextEncoder();
let next = 0;
let ok = 0;
async function worker() {
  while (next < lines.length) {
    const u = JSON.parse(lines[next++]!);
    const payload = JSON.stringify({
      expected: u.expected ?? null,
      input: u.input,
      output: u.output,
    });
    const child = new Deno.Command(program!, {
      args: [...prefix, "-c", cmd!],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    })
      .spawn();
    const w = child.stdin.getWriter();
    await w.write(enc.encode(payload));
    await w.close();
    const out = await child.output();
    if (JSON.parse(new TextDecoder().decode(out.stdout)).score !== undefined) {
      ok++;
    }
  }
}
await Promise.all(Array.from({ length: concurrency }, worker));
console.log(ok);
