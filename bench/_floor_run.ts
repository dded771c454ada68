// Floor for `run` on the bench's replay data: the same Score lines, byte for
// byte, as `evalpipe run` writes for `exact_match` on records
// {id, input, expected, output} with string fields, from one tight loop: no
// streams, no validation, no identity checks, no aggregation. What is left
// is what the output itself costs: parse each line, compare, write a Score
// line about three times as long as the record.
// Usage: deno run -A bench/_floor_run.ts data.jsonl > /dev/null
const path = Deno.args[0]!;
const name = path.split("/").at(-1)!;
const file = await Deno.open(path);
const enc = new TextEncoder();
let buffer = "";
let rest = "";
function score(line: string): string {
  const r = JSON.parse(line);
  const id = JSON.stringify(`${name}#${r.id}`);
  const hit = r.output.trim() === r.expected.trim();
  return `{"metric":"exact_match","status":"scored","validity":"valid","value":${
    hit ? 1 : 0
  },"passed":${hit}${
    hit
      ? ""
      : `,"reason":${
        JSON.stringify(`expected ${JSON.stringify(r.expected.trim())}`)
      }`
  },"evaluator_version":"exact_match@1","example_id":${id},"unit_id":${id},"diagnostics":[],"evidence_refs":[]}\n`;
}
for await (const chunk of file.readable.pipeThrough(new TextDecoderStream())) {
  const lines = (rest + chunk).split("\n");
  rest = lines.pop()!;
  for (const line of lines) {
    if (line === "") continue;
    buffer += score(line);
    if (buffer.length > 65536) {
      await Deno.stdout.write(enc.encode(buffer));
      buffer = "";
    }
  }
}
if (rest !== "") buffer += score(rest);
await Deno.stdout.write(enc.encode(buffer));
