// The floor of start-up (issue 17): read a one-line dataset, parse it and
// print the one Score line `run` prints for it with `exact_match` (the same
// bytes as bench/_floor_run.ts writes). With `--spawn CMD`, the Score's value
// comes from one `sh -c CMD` given the protocol v0 payload, as `score --scorer`
// would get it.
// Usage: deno run -A bench/_bare_start.ts DATA.jsonl [--spawn CMD]
const [path, how, cmd] = Deno.args;
const name = path!.split("/").at(-1)!;
const line = (await Deno.readTextFile(path!)).split("\n")[0]!;
const r = JSON.parse(line);
const id = JSON.stringify(`${name}#${r.id ?? 1}`);
let hit = r.output.trim() === r.expected.trim();
if (how === "--spawn") {
  // Loaded only here: the floor without --spawn reads no module of its own.
  const { shScore } = await import("./_bare_parts.ts");
  hit = await shScore(cmd!, r) === 1;
}
console.log(
  `{"metric":"exact_match","status":"scored","validity":"valid","value":${
    hit ? 1 : 0
  },"passed":${hit}${
    hit
      ? ""
      : `,"reason":${
        JSON.stringify(`expected ${JSON.stringify(r.expected.trim())}`)
      }`
  },"evaluator_version":"exact_match@1","example_id":${id},"unit_id":${id},"diagnostics":[],"evidence_refs":[]}`,
);
