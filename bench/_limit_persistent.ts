// The limit row of `score --persistent` (issue 17, goal 2): bench/_bare_persistent.ts
// plus only what any scorer of this kind must do per case, and nothing of
// evalpipe's: each unit parsed for its ids, each verdict line parsed, a
// Score-shaped object built with the unit's ids, and one NDJSON line per case
// on stdout, a write per read of the scorer's stdout. No timeouts, caps,
// restarts or Score checks. With `stream`, payloads go to the scorer as stdin's
// chunks arrive (as `score` must, for a stdin that never ends), not after the
// whole of stdin is read.
// Usage: deno run -A bench/_limit_persistent.ts CMD [stream] < payloads.ndjson
const [cmd, mode] = Deno.args;
const child = new Deno.Command("sh", {
  args: ["-c", cmd!],
  stdin: "piped",
  stdout: "piped",
  stderr: "inherit",
}).spawn();
const enc = new TextEncoder();
const dec = new TextDecoder();
/** The unit ids, in order; a unit without `id` is `stdin#LINE`. */
const ids: string[] = [];
let ended = false;
function addUnits(text: string): void {
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const unit = JSON.parse(line);
    ids.push(typeof unit.id === "string" ? unit.id : `stdin#${ids.length + 1}`);
  }
}

async function feed(): Promise<void> {
  const writer = child.stdin.getWriter();
  if (mode === "stream") {
    let rest = "";
    for await (const chunk of Deno.stdin.readable) {
      const text = rest + dec.decode(chunk, { stream: true });
      const cut = text.lastIndexOf("\n") + 1;
      rest = text.slice(cut);
      if (cut === 0) continue;
      const lines = text.slice(0, cut);
      addUnits(lines);
      await writer.write(enc.encode(lines));
    }
  } else {
    const payloads = await new Response(Deno.stdin.readable).text();
    addUnits(payloads);
    await writer.write(enc.encode(payloads));
  }
  ended = true;
  await writer.close();
}
const feeding = feed();

const stdout = Deno.stdout.writable.getWriter();
let done = 0;
let rest = "";
for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
  const lines = (rest + chunk).split("\n");
  rest = lines.pop()!;
  let out = "";
  for (const line of lines) {
    const verdict = JSON.parse(line);
    if (typeof verdict.score !== "number") throw new Error(`Verdict ${line}`);
    const id = ids[done++]!;
    out += JSON.stringify({
      metric: "persistent",
      status: "scored",
      validity: "valid",
      value: verdict.score,
      passed: verdict.score >= 0.5,
      evaluator_version: "persistent@1",
      example_id: id,
      unit_id: id,
      diagnostics: [],
      evidence_refs: [],
    }) + "\n";
  }
  if (out !== "") await stdout.write(enc.encode(out));
}
await feeding;
await stdout.close();
const { code } = await child.status;
if (code !== 0 || !ended || done !== ids.length) {
  throw new Error(`${done} of ${ids.length} verdicts, exit code ${code}`);
}
