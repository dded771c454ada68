// Units are data: the RunRecord keeps what went in and what came out of each
// unit, `run --units` writes the same records as NDJSON, and `score --config`
// scores them again with a suite's scorers, without calling the target.

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { fakeLlm, lastMessage, reply } from "../_fake_llm.ts";
import { parseRunRecord } from "../../src/record/run_record.ts";
import { parseUnit, type Unit } from "../../src/dataset/mod.ts";

function jsonl(records: unknown[]): string {
  return records.map((r) => JSON.stringify(r) + "\n").join("");
}

async function write(dir: string, files: Record<string, string>) {
  for (const [name, text] of Object.entries(files)) {
    await Deno.writeTextFile(`${dir}/${name}`, text);
  }
}

function lines(text: string): unknown[] {
  return text.trimEnd().split("\n").filter((l) => l !== "").map((l) =>
    JSON.parse(l)
  );
}

// An expected value JSON.parse would change (an integer beyond 2^53, key
// order with integer-like keys): it must reach the units file verbatim.
const DATA =
  '{"id":"big","input":"n?","expected":{"b":1,"2":12345678901234567890},"output":"x"}\n' +
  jsonl([
    {
      id: "ctx",
      input: "capital?",
      expected: "Paris",
      context: ["Paris is the capital."],
      metadata: { topic: "geo", level: 2 },
      output: "Paris",
    },
    { id: "none", input: "no output here", expected: "y" },
    { input: 7 },
    { id: "msgs", input: [{ role: "user", content: "hi" }], output: "hello" },
  ]);

// The same cases for a subprocess target, which answers `metadata.answer`.
const ANSWERS =
  '{"id":"big","input":"n?","expected":{"b":1,"2":12345678901234567890},"metadata":{"answer":"x"}}\n' +
  jsonl([
    {
      id: "ctx",
      input: "capital?",
      expected: "Paris",
      context: ["Paris is the capital."],
      metadata: { answer: "Paris" },
    },
    { id: "none", input: "no output here", expected: "y" },
    { input: 7 },
    {
      id: "msgs",
      input: [{ role: "user", content: "hi" }],
      metadata: { answer: "hello" },
    },
  ]);

const REPLAY = `dataset: data.jsonl
target: { type: replay }
scorers:
  - type: exact_match
  - type: contains
`;

Deno.test("run --record keeps every unit's input, expected, context, metadata, output and target; --units writes the same as NDJSON", async () => {
  await withTempDir(async (dir) => {
    await write(dir, { "suite.yaml": REPLAY, "data.jsonl": DATA });
    const out = await cli([
      "run",
      "suite.yaml",
      "--record",
      "rec.json",
      "--units",
      "units.ndjson",
      "--epochs",
      "2",
    ], dir);
    assert.equal(out.code, 2, out.stderr); // the malformed record
    const text = await Deno.readTextFile(`${dir}/rec.json`);
    const record = parseRunRecord(text, "rec.json");
    assert.equal(record.complete, true);
    assert.equal(record.units.length, 10);
    assert.equal(record.scores.length, 20);
    const unitsText = await Deno.readTextFile(`${dir}/units.ndjson`);
    const fromFile = lines(unitsText);
    // The same units, in the same order, in both files.
    const raw = JSON.parse(text);
    assert.equal(raw.evalpipe_run_record, 2);
    assert.deepEqual(
      raw.units.map(({ scores: _, ...u }: { scores: unknown }) => u),
      fromFile,
    );
    assert.deepEqual(
      record.units.map((u) => u.unit_id),
      [
        "big",
        "ctx",
        "none",
        "4",
        "msgs",
      ].flatMap((id) => [`data.jsonl#${id}@1`, `data.jsonl#${id}@2`]),
    );
    // What each unit holds.
    const [big, , ctx, , none, , bad, , msgs] = record.units as Unit[];
    assert.deepEqual(
      [big!.epoch, record.units[1]!.epoch],
      [1, 2],
    );
    assert.ok(
      unitsText.startsWith(
        '{"example_id":"data.jsonl#big","unit_id":"data.jsonl#big@1","epoch":1,"input":"n?","expected":{"b":1,"2":12345678901234567890},"output":"x","target":{"latency_ms":0}}\n',
      ),
      unitsText.slice(0, 200),
    );
    assert.deepEqual(ctx, {
      example_id: "data.jsonl#ctx",
      unit_id: "data.jsonl#ctx@1",
      epoch: 1,
      input: "capital?",
      expected: "Paris",
      context: ["Paris is the capital."],
      metadata: { topic: "geo", level: 2 },
      output: "Paris",
      target: { latency_ms: 0 },
    });
    assert.equal(none!.output, null);
    assert.match(none!.target!.error!, /no "output"/);
    assert.match(bad!.invalid!, /"input" must be a string/);
    assert.deepEqual(msgs!.input, [{ role: "user", content: "hi" }]);
    // Each record line holds its unit's Scores.
    for (const u of raw.units) {
      assert.deepEqual(
        u.scores.map((s: { metric: string; unit_id: string }) => [
          s.metric,
          s.unit_id,
        ]),
        [["exact_match", u.unit_id], ["contains", u.unit_id]],
      );
    }
    // Every unit record is one `score` reads.
    for (const [i, u] of fromFile.entries()) {
      assert.equal(parseUnit(u, `x#${i}`).unit_id, record.units[i]!.unit_id);
    }
  });
});

Deno.test("score --config scores run --units output as run did, with built-in, subprocess, persistent and judge scorers", async () => {
  await using judge = fakeLlm({
    handler: (r) =>
      reply.ok(
        JSON.stringify({
          score: lastMessage(r).includes("Paris") ? 0.9 : 0.2,
          reason: "judged",
        }),
      ),
  });
  await withTempDir(async (dir) => {
    const suite = `dataset: data.jsonl
target: { type: subprocess, cmd: "echo called >> calls.txt; sh target.sh" }
scorers:
  - type: exact_match
  - type: subprocess
    cmd: sh verbatim.sh
  - type: subprocess
    name: long
    cmd: python3 -u long.py
    persistent: true
  - type: llm_judge
    name: judge
    base_url: ${judge.baseUrl}
    model: fake-judge
    rubric: "Answer: {{output}}"
    retry_delay: 0.01
concurrency: 3
`;
    await write(dir, {
      "suite.yaml": suite,
      "data.jsonl": ANSWERS,
      // The target answers the case's `metadata.answer`, or fails without one.
      "target.sh":
        `python3 -c 'import json,sys; c=json.load(sys.stdin); a=c.get("metadata",{}).get("answer"); print(a) if a else sys.exit("no answer")'\n`,
      // Passes when it gets the expected value verbatim, as the dataset has it.
      "verbatim.sh":
        `p=$(cat); case "$p" in *'12345678901234567890'*|*'"expected":"Paris"'*) printf '{"score":1}';; *) printf '{"score":0,"reason":"%s"}' "not verbatim";; esac\n`,
      "long.py": `import json, sys
for line in sys.stdin:
    p = json.loads(line)
    n = len(p["output"] or "")
    print(json.dumps({"score": min(1, n / 5), "reason": f"{n} characters"}), flush=True)
`,
    });
    const out = await cli(
      ["run", "suite.yaml", "--units", "units.ndjson", "--no-cache"],
      dir,
    );
    assert.equal(out.code, 2, out.stderr);
    const calls = (await Deno.readTextFile(`${dir}/calls.txt`)).split("\n")
      .length;
    const units = await Deno.readTextFile(`${dir}/units.ndjson`);
    const rescored = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        new URL("../../cli.ts", import.meta.url).pathname,
        "score",
        "--config",
        "suite.yaml",
      ],
      cwd: dir,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = rescored.stdin.getWriter();
    await writer.write(new TextEncoder().encode(units));
    await writer.close();
    const result = await rescored.output();
    const stderr = new TextDecoder().decode(result.stderr);
    assert.equal(result.code, 0, stderr);
    // The same Scores, byte for byte, and the target was not called again.
    assert.equal(new TextDecoder().decode(result.stdout), out.stdout);
    assert.equal(
      (await Deno.readTextFile(`${dir}/calls.txt`)).split("\n").length,
      calls,
    );
    const scores = lines(out.stdout) as {
      metric: string;
      status: string;
      value: number | null;
      unit_id: string;
    }[];
    const of = (id: string, metric: string) =>
      scores.find((s) =>
        s.unit_id === `data.jsonl#${id}` && s.metric === metric
      );
    assert.equal(of("big", "verbatim")?.value, 1);
    assert.equal(of("ctx", "verbatim")?.value, 1);
    assert.equal(of("ctx", "long")?.value, 1);
    assert.equal(of("ctx", "judge")?.value, 0.9);
    assert.equal(of("none", "judge")?.status, "blocked");
    assert.equal(of("4", "exact_match")?.status, "blocked");
  });
});

Deno.test("score --config refuses --scorer beside it, and a config that is not there", async () => {
  await withTempDir(async (dir) => {
    await write(dir, { "suite.yaml": REPLAY });
    const both = await cli(
      ["score", "--config", "suite.yaml", "--scorer", "sh x.sh"],
      dir,
    );
    assert.equal(both.code, 2);
    assert.match(both.stderr, /--config takes the suite's scorers/);
    const missing = await cli(["score", "--config", "nope.yaml"], dir);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /nope\.yaml/);
  });
});

const KEY = "sk-unit-Zq9Lm-SECRET-42";

Deno.test("run --record and --units keep no secret of the openai and http targets, echoed or not", async () => {
  await using server = fakeLlm({
    handler: (r) => {
      const key = (r.headers.authorization ?? r.headers["x-api-key"] ?? "")
        .replace(/^Bearer /, "");
      const text = lastMessage(r) || r.body;
      return text.includes("fail")
        ? reply.error(401, `bad key ${key}`)
        : reply.ok(`your key is ${key}`);
    },
  });
  await withTempDir(async (dir) => {
    const data = jsonl([
      { input: "hello", expected: "key" },
      { input: "please fail", expected: "key" },
    ]);
    await write(dir, {
      "data.jsonl": data,
      "openai.yaml": `dataset: data.jsonl
target:
  type: openai
  base_url: ${server.baseUrl}
  model: m
  api_key_env: FAKE_API_KEY
  retries: 0
scorers: [{ type: contains, name: said }]
`,
      "http.yaml": `dataset: data.jsonl
target:
  type: http
  url: ${server.baseUrl}/chat/completions
  headers: { x-api-key: "\${FAKE_API_KEY}" }
  body: { messages: [{ role: user, content: "{{input}}" }] }
  output: choices.0.message.content
  retries: 0
scorers: [{ type: contains, name: said }]
`,
    });
    for (const suite of ["openai.yaml", "http.yaml"]) {
      const out = await cli(
        [
          "run",
          suite,
          "--record",
          "rec.json",
          "--units",
          "units.ndjson",
          "--no-cache",
        ],
        dir,
        { FAKE_API_KEY: KEY },
      );
      // Both cases blocked (the echo is not kept, the other got a 401):
      // nothing measured, the implicit gate fails.
      assert.equal(out.code, 1, out.stderr);
      const record = await Deno.readTextFile(`${dir}/rec.json`);
      const units = await Deno.readTextFile(`${dir}/units.ndjson`);
      const parsed = parseRunRecord(record, "rec.json");
      assert.equal(parsed.units.length, 2, suite);
      assert.equal(parsed.units[0]!.output, null, suite);
      assert.match(
        parsed.units[0]!.target!.error!,
        /answered with a secret the config sends .*: the answer is not kept/,
        suite,
      );
      assert.match(parsed.units[1]!.target!.error!, /401/, suite);
      for (
        const [what, text] of Object.entries({
          record,
          units,
          out: out.stdout + out.stderr,
        })
      ) {
        assert.ok(!text.includes(KEY), `${suite}: ${what} holds the key`);
        assert.ok(
          !text.includes("Zq9Lm"),
          `${suite}: ${what} holds part of the key`,
        );
      }
      assert.ok(record.includes("FAKE_API_KEY"), "the variable's name stays");
    }
    assert.ok(server.requests.length >= 4);
  });
});

Deno.test("run --resume --record keeps the units the earlier record holds, without calling them again", async () => {
  await withTempDir(async (dir) => {
    await write(dir, {
      "suite.yaml": `dataset: data.jsonl
target: { type: subprocess, cmd: "echo called >> calls.txt; cat" }
scorers: [{ type: contains }]
concurrency: 1
`,
      "data.jsonl": jsonl(
        ["a", "b", "c", "d"].map((x) => ({ input: x, expected: x })),
      ),
    });
    const first = await cli(
      ["run", "suite.yaml", "--out", "s.ndjson", "--record", "rec.json"],
      dir,
    );
    assert.equal(first.code, 0, first.stderr);
    const before = parseRunRecord(
      await Deno.readTextFile(`${dir}/rec.json`),
      "rec.json",
    );
    // As if the run had stopped after two units.
    const kept = (await Deno.readTextFile(`${dir}/s.ndjson`)).split("\n")
      .slice(0, 2);
    await Deno.writeTextFile(`${dir}/s.ndjson`, kept.join("\n") + "\n");
    const again = await cli(
      [
        "run",
        "suite.yaml",
        "--out",
        "s.ndjson",
        "--record",
        "rec.json",
        "--resume",
      ],
      dir,
    );
    assert.equal(again.code, 0, again.stderr);
    const calls = (await Deno.readTextFile(`${dir}/calls.txt`)).trimEnd()
      .split("\n");
    assert.equal(calls.length, 6, "two units called again, not four");
    const after = parseRunRecord(
      await Deno.readTextFile(`${dir}/rec.json`),
      "rec.json",
    );
    assert.equal(after.complete, true);
    assert.equal(after.scores.length, 4);
    assert.deepEqual(
      after.units.map((u) => [u.unit_id, u.output]),
      before.units.map((u) => [u.unit_id, u.output]),
    );
    // The first two are the earlier run's own records, latency and all.
    assert.deepEqual(after.units.slice(0, 2), before.units.slice(0, 2));
  });
});

Deno.test("view --by-call shows each unit's input and output from a record", async () => {
  await withTempDir(async (dir) => {
    await write(dir, {
      "suite.yaml": REPLAY,
      "data.jsonl": jsonl([
        { input: "2+2?", expected: "4", output: "5\u001b[2J" },
        { input: "q", expected: "y" },
      ]),
    });
    const out = await cli(["run", "suite.yaml", "--record", "rec.json"], dir);
    assert.equal(out.code, 0, out.stderr);
    const view = await cli(
      ["view", "rec.json", "--by-call", "--width", "200"],
      dir,
    );
    assert.equal(view.code, 0, view.stderr);
    assert.match(view.stdout, /^ {2}input {3}2\+2\?$/m);
    assert.match(view.stdout, /^ {2}output {2}5\\u\{1b\}\[2J$/m);
    assert.match(
      view.stdout,
      /^ {2}output {2}\(none: The case has no "output"/m,
    );
    const json = await cli(["view", "rec.json", "--by-call", "--json"], dir);
    const units = lines(json.stdout) as { input?: string; output?: string }[];
    assert.deepEqual(units.map((u) => u.input).sort(), ["2+2?", "q"]);
  });
});

Deno.test("parseRunRecord still reads a record of version 1, without units", () => {
  const text =
    '{"evalpipe_run_record":1,"run_id":"r1","started_at":"2026-12-01T08:00:00.000Z","config_path":"s.yaml","config":{},' +
    '"fingerprints":{"config":"c","dataset":null,"target":"t","scorers":{}},"scores":[\n' +
    '{"metric":"m","status":"scored","validity":"valid","value":1,"passed":true,"evaluator_version":"m@1","unit_id":"d#1"}\n' +
    '],"aggregates":[],"finished_at":"2026-12-01T08:00:01.000Z","complete":true}\n';
  const record = parseRunRecord(text, "old.json");
  assert.equal(record.complete, true);
  assert.deepEqual(record.units, []);
  assert.equal(record.scores.length, 1);
  // Torn, it is read up to its last whole Score, as before.
  const torn = parseRunRecord(text.slice(0, text.indexOf("]")), "old.json");
  assert.equal(torn.complete, false);
  assert.equal(torn.scores.length, 1);
});

Deno.test("run --units refuses the dataset as its file, and leaves it as it was", async () => {
  await withTempDir(async (dir) => {
    await write(dir, { "suite.yaml": REPLAY, "data.jsonl": DATA });
    const out = await cli(["run", "suite.yaml", "--units", "data.jsonl"], dir);
    assert.equal(out.code, 2, out.stderr);
    assert.match(out.stderr, /--units/);
    assert.equal(await Deno.readTextFile(`${dir}/data.jsonl`), DATA);
  });
});

Deno.test("run --units on a full disk exits 3 and still writes every Score", async () => {
  await withTempDir(async (dir) => {
    await write(dir, { "suite.yaml": REPLAY, "data.jsonl": DATA });
    const full = await cli(["run", "suite.yaml", "--units", "/dev/full"], dir);
    const whole = await cli(["run", "suite.yaml"], dir);
    assert.equal(full.code, 3, full.stderr);
    assert.match(
      full.stderr,
      /--units "\/dev\/full" could not be written in full; stdout has every Score/,
    );
    assert.equal(full.stdout, whole.stdout);
  });
});
