// Baseline for `run`: read NDJSON, parse each line, re-serialise it to stdout.
// Usage: deno run -A bench/_bare_ndjson.ts data.jsonl > /dev/null
const file = await Deno.open(Deno.args[0]!);
const enc = new TextEncoder();
let buffer = "";
let rest = "";
for await (const chunk of file.readable.pipeThrough(new TextDecoderStream())) {
  const lines = (rest + chunk).split("\n");
  rest = lines.pop()!;
  for (const line of lines) {
    if (line === "") continue;
    buffer += JSON.stringify(JSON.parse(line)) + "\n";
    if (buffer.length > 65536) {
      await Deno.stdout.write(enc.encode(buffer));
      buffer = "";
    }
  }
}
if (rest !== "") buffer += JSON.stringify(JSON.parse(rest)) + "\n";
await Deno.stdout.write(enc.encode(buffer));
