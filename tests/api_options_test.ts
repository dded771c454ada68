/**
 * The options a script passes may be `undefined` field by field: a project
 * with `exactOptionalPropertyTypes` (as ours) writes `{ concurrency:
 * flags.c }` with `c: number | undefined`, and `deno check` must accept it,
 * and the stage must take the `undefined` as "not given". Every optional
 * field of every exported options type is read from `deno doc --json`, so a
 * new one is checked without a word here.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  aggregate,
  Aggregator,
  exactMatch,
  functionScorer,
  functionTarget,
  loadDataset,
  ndjsonSink,
  runSuite,
  runTarget,
  type Score,
  scoreLine,
  scoreUnits,
  subprocessScorer,
} from "../mod.ts";
import { withTempDir } from "./_proc.ts";

const ROOT = new URL("../", import.meta.url);

/**
 * Exported types a script builds and hands to us that are options by
 * another name: a target's result, a verdict, a gate, a subset, contexts.
 */
const OPTIONS_LIKE = new Set([
  "TargetResult",
  "Verdict",
  "Gate",
  "Subset",
  "TargetChoice",
  "TargetContext",
  "ScorerContext",
  "GenerationKeys",
]);

interface DocProperty {
  name: string;
  optional?: boolean;
}

interface DocJson {
  nodes: Record<string, {
    symbols?: {
      name: string;
      declarations: {
        kind: string;
        def?: { properties?: DocProperty[] };
      }[];
    }[];
  }>;
}

/** Every optional field of every exported options type, by type name. */
async function optionalFields(): Promise<Map<string, string[]>> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", "mod.ts"],
    cwd: ROOT.pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const doc = JSON.parse(new TextDecoder().decode(out.stdout)) as DocJson;
  const fields = new Map<string, string[]>();
  for (const node of Object.values(doc.nodes)) {
    for (const symbol of node.symbols ?? []) {
      const name = symbol.name;
      if (!/(Options|Settings)$/.test(name) && !OPTIONS_LIKE.has(name)) {
        continue;
      }
      for (const decl of symbol.declarations) {
        if (decl.kind !== "interface") continue;
        const optional = (decl.def?.properties ?? [])
          .filter((p) => p.optional === true)
          .map((p) => p.name);
        if (optional.length > 0) fields.set(name, optional);
      }
    }
  }
  return fields;
}

Deno.test("every optional field of an exported options type takes an explicit undefined under exactOptionalPropertyTypes", async () => {
  const fields = await optionalFields();
  for (const name of ["RunTargetOptions", "ScoreUnitsOptions", "Subset"]) {
    assert.ok(fields.has(name), `${name} is among the options checked`);
  }
  const mod = new URL("mod.ts", ROOT).href;
  // One declaration per field, so that each field that refuses is named.
  const lines = [`import type * as api from ${JSON.stringify(mod)};`];
  for (const [type, names] of fields) {
    for (const field of names) {
      const key = JSON.stringify(field);
      lines.push(
        `export const ${type}_${field}: Pick<api.${type}, ${key}> = { ${key}: undefined };`,
      );
    }
  }
  // Options objects written inline in a signature.
  lines.push(
    `import { Aggregator, httpTarget } from ${JSON.stringify(mod)};`,
    "declare const flag: boolean | undefined;",
    "new Aggregator({ grouped: flag, valueRange: undefined });",
    'httpTarget({ url: "http://127.0.0.1:1/" }, undefined, { budget: undefined, optionalKey: flag });',
  );
  await withTempDir(async (dir) => {
    const script = join(dir, "script.ts");
    await Deno.writeTextFile(script, lines.join("\n") + "\n");
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["check", "--config", new URL("deno.json", ROOT).pathname, script],
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const text = new TextDecoder().decode(out.stderr);
    // The fields refused, as `Type_field`, before the compiler's detail.
    const refused = [...text.matchAll(/export const (\w+):/g)].map((m) => m[1]);
    assert.equal(
      out.code,
      0,
      `refuse undefined: ${refused.join(", ")}\n${text}`,
    );
  });
});

Deno.test("stages given every option as undefined behave as given none", async () => {
  await withTempDir(async (dir) => {
    const dataset = join(dir, "cases.jsonl");
    await Deno.writeTextFile(
      dataset,
      '{"input":"2+2","expected":"4"}\n{"input":"3+3","expected":"7"}\n',
    );
    await Deno.writeTextFile(
      join(dir, "long.sh"),
      'cat >/dev/null; echo \'{"score": 1, "passed": true}\'\n',
    );
    const pipeline = async (undefinedOptions: boolean) => {
      const u = undefinedOptions;
      const examples = await loadDataset(
        dataset,
        u ? { name: undefined, format: undefined, stdin: undefined } : {},
      );
      const sum = (input: unknown) =>
        String(String(input).split("+").reduce((a, b) => a + Number(b), 0));
      const target = functionTarget((c) =>
        u ? { output: sum(c.input), info: undefined } : { output: sum(c.input) }
      );
      const scorers = [
        exactMatch(
          u
            ? {
              name: undefined,
              ignore_case: undefined,
              normalize: undefined,
              value: undefined,
              values: undefined,
            }
            : {},
        ),
        functionScorer(
          "short",
          (unit) =>
            u
              ? {
                score: 1,
                passed: (unit.output ?? "").length < 2,
                reason: undefined,
              }
              : { score: 1, passed: (unit.output ?? "").length < 2 },
          u ? { version: undefined, range: undefined, timeout: undefined } : {},
        ),
        subprocessScorer(
          "sh long.sh",
          u
            ? {
              name: undefined,
              cwd: dir,
              timeout: undefined,
              maxStdoutBytes: undefined,
              maxStderrBytes: undefined,
            }
            : { cwd: dir },
        ),
      ];
      const scores: Score[] = [];
      const aggregates = await Array.fromAsync(
        examples
          .pipeThrough(runTarget(
            target,
            u
              ? {
                concurrency: undefined,
                epochs: undefined,
                signal: undefined,
                stop: undefined,
                abandon: undefined,
                skip: undefined,
                onInvalidRecord: undefined,
                flow: undefined,
              }
              : {},
          ))
          .pipeThrough(scoreUnits(
            scorers,
            u
              ? {
                concurrency: undefined,
                signal: undefined,
                unordered: undefined,
                groupOf: undefined,
                abandon: undefined,
                flow: undefined,
                onStart: undefined,
              }
              : {},
          ))
          .pipeThrough(
            new TransformStream<Score, Score>({
              transform(score, controller) {
                scores.push(score);
                controller.enqueue(score);
              },
            }),
          )
          .pipeThrough(aggregate(
            u
              ? {
                aggregator: undefined,
                grouped: undefined,
                valueRange: undefined,
                onScattered: undefined,
                onDuplicate: undefined,
              }
              : {},
          )),
      );
      const chunks: Uint8Array[] = [];
      await ReadableStream.from(scores).pipeTo(ndjsonSink(
        {
          write: (bytes) =>
            Promise.resolve(chunks.push(bytes.slice()) && bytes.length),
        },
        u ? { flushChars: undefined, stringify: undefined } : {},
      ));
      const aggregator = new Aggregator(
        u ? { grouped: undefined, valueRange: undefined } : {},
      );
      for (const s of scores) aggregator.add(s);
      return {
        ndjson: new TextDecoder().decode(
          new Uint8Array(chunks.flatMap((c) => [...c])),
        ),
        aggregates: aggregates.map((a) => JSON.stringify(a)),
        aggregator: aggregator.results().map((a) => JSON.stringify(a)),
      };
    };
    const given = await pipeline(false);
    assert.equal(given.ndjson.trim().split("\n").length, 6);
    assert.deepEqual(await pipeline(true), given);

    // runSuite, with every option it has undefined but the sink.
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      "dataset: cases.jsonl\ntarget: { type: subprocess, cmd: cat }\nscorers: [{ type: exact_match }]\n",
    );
    const suite = async (undefinedOptions: boolean) => {
      const lines: string[] = [];
      const sink = new WritableStream<Score[]>({
        write: (batch) => void lines.push(...batch.map(scoreLine)),
      });
      const none = {
        record: undefined,
        units: undefined,
        previousUnits: undefined,
        concurrency: undefined,
        maxProcesses: undefined,
        epochs: undefined,
        timeout: undefined,
        targetTimeout: undefined,
        signal: undefined,
        onInvalidRecord: undefined,
        onScore: undefined,
        cacheDir: undefined,
        cacheMode: undefined,
        stop: undefined,
        outPath: undefined,
        resume: undefined,
        force: undefined,
        beforeWrite: undefined,
        begin: undefined,
        stdin: undefined,
        shard: undefined,
        subset: { filter: undefined, limit: undefined },
        target: undefined,
        matrix: undefined,
        saveBaseline: undefined,
        baseline: undefined,
        progress: undefined,
      };
      const summary = await runSuite(
        join(dir, "suite.yaml"),
        undefinedOptions ? { sink, ...none } : { sink },
      );
      return {
        lines,
        summary: JSON.stringify({
          ...summary,
          runId: undefined,
        }),
      };
    };
    const plain = await suite(false);
    assert.equal(plain.lines.length, 2);
    assert.deepEqual(await suite(true), plain);
  });
});
