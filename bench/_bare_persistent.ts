// The floor of `score --persistent` (issue 17): one long-lived `sh -c CMD`,
// every payload line on stdin written to it as it reads them, its verdict lines
// read back and parsed, in order. No timeouts, caps, restarts or Scores.
// Usage: deno run -A bench/_bare_persistent.ts CMD < payloads.ndjson
const cmd = Deno.args[0]!;
const payloads = await new Response(Deno.stdin.readable).text();
const want = payloads.split("\n").filter((l) => l !== "").length;
const child = new Deno.Command("sh", {
  args: ["-c", cmd],
  stdin: "piped",
  stdout: "piped",
  stderr: "inherit",
}).spawn();
const writer = child.stdin.getWriter();
const writing = writer.write(new TextEncoder().encode(payloads)).then(() =>
  writer.close()
);
let ok = 0;
let rest = "";
for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
  const lines = (rest + chunk).split("\n");
  rest = lines.pop()!;
  for (const line of lines) {
    if (typeof JSON.parse(line).score === "number") ok++;
  }
}
await writing;
const { code } = await child.status;
if (code !== 0 || ok !== want) {
  throw new Error(`${ok} of ${want} verdicts, exit code ${code}`);
}
console.log(ok);
