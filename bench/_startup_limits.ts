// What start-up costs a Deno program shaped like `run` before any of
// evalpipe's own work (issue 17, goal 4): bench/_bare_start.ts's work (read
// the one-line dataset, print its Score line), plus, each when named,
// - `--streams`: the dataset read through Web Streams (the file's byte
//   stream, a TransformStream, a WritableStream), as every stage of evalpipe
//   is one: Deno 2 loads its streams implementation on first use;
// - `--yaml CONFIG`: the config parsed with js-yaml, the npm package evalpipe
//   reads its YAML configs with (Deno sets up npm resolution for it);
// - `--graph`: evalpipe's module graph, which Deno reads before a program
//   runs (cli.ts behind an `import()` that is never taken);
// - `--spawn CMD`: the Score's value from one `sh -c CMD` given the protocol
//   v0 payload, as bench/_bare_start.ts --spawn gets it (what `score
//   --scorer` cannot skip, with `--streams`);
// - `--score-modules`: the modules `score --scorer` evaluates, loaded and
//   evaluated, none of their functions called (not a limit: a part of
//   evalpipe's own start-up, measured apart).
// Usage: deno run -A bench/_startup_limits.ts DATA.jsonl [--streams] [--yaml CONFIG]
//          [--graph] [--spawn CMD] [--score-modules]
const [path, ...rest] = Deno.args;
const has = (flag: string) => rest.includes(flag);
const name = path!.split("/").at(-1)!;
if (has("--yaml")) {
  const yaml = await import("js-yaml");
  const text = await Deno.readTextFile(rest[rest.indexOf("--yaml") + 1]!);
  if (yaml.load(text) === undefined) throw new Error("empty config");
}
if (has("--graph") && rest.includes("--never")) await import("../cli.ts");
if (has("--score-modules")) {
  // As src/cli/main.ts and src/cli/score.ts import them for `score --scorer`:
  // the command table, the command, then its modules at once.
  const { SCORE_PATH } = await import("./_score_path.ts");
  const [table, command, ...others] = SCORE_PATH.map((file) =>
    new URL(`../${file}`, import.meta.url).href
  );
  await import(table!);
  await import(command!);
  await Promise.all(others.map((module) => import(module)));
}
let line: string;
if (has("--streams")) {
  const file = await Deno.open(path!);
  const lines: string[] = [];
  const decoder = new TextDecoder();
  await file.readable
    .pipeThrough(
      new TransformStream<Uint8Array, string>({
        transform(chunk, c) {
          const text = decoder.decode(chunk, { stream: true });
          for (const l of text.split("\n")) if (l !== "") c.enqueue(l);
        },
      }),
    )
    .pipeTo(new WritableStream({ write: (l) => void lines.push(l) }));
  line = lines[0]!;
} else line = (await Deno.readTextFile(path!)).split("\n")[0]!;
const r = JSON.parse(line);
const id = JSON.stringify(`${name}#${r.id ?? 1}`);
let hit = r.output.trim() === r.expected.trim();
if (has("--spawn")) {
  // As bench/_bare_start.ts --spawn, its baseline, loads it.
  const { shScore } = await import("./_bare_parts.ts");
  hit = await shScore(rest[rest.indexOf("--spawn") + 1]!, r) === 1;
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
