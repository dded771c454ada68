/**
 * Export, then import: `view`, `aggregate` and `diff` on the exported
 * `runrecord.json` give the aggregates and the per-example values of the
 * original RunRecord.
 */

import assert from "node:assert/strict";
import { cli, cliWithStdin } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { assertSchema } from "./_schemas.ts";
import { withEveryStatusRun } from "./_every_status.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const ndjson = (text: string): Json[] =>
  text.trimEnd().split("\n").map((l) => JSON.parse(l));

Deno.test("an exported record read back gives the original's aggregates, per-unit values and a diff of nothing", async () => {
  await withEveryStatusRun(async (run) => {
    const exported = await cli(
      ["export", "--to", "evalglass", "run.json", "reports"],
      run.dir,
    );
    assert.equal(exported.code, 0, exported.stderr);
    const path = exported.stdout.trimEnd();
    const text = await Deno.readTextFile(`${run.dir}/${path}`);

    // aggregate: the RunRecord, the evalglass record on stdin (as evalglass
    // writes it, and compacted to one line). The export keeps the ranges the
    // run declared, so its intervals are clamped as the RunRecord's are,
    // and unlike the bare Scores', which do not carry them.
    const ranged = await cli(["aggregate", "run.json"], run.dir);
    assert.equal(ranged.code, 0, ranged.stderr);
    const original = await cliWithStdin(
      ["aggregate"],
      run.dir,
      await Deno.readTextFile(run.scoresPath),
    );
    assert.equal(original.code, 0, original.stderr);
    assert.notDeepEqual(ndjson(ranged.stdout), ndjson(original.stdout));
    for (const input of [text, `${JSON.stringify(JSON.parse(text))}\n`]) {
      const back = await cliWithStdin(["aggregate"], run.dir, input);
      assert.equal(back.code, 0, back.stderr);
      assert.deepEqual(ndjson(back.stdout), ndjson(ranged.stdout));
      assert.equal(back.stderr.match(/is an evalglass RunRecord/g)?.length, 1);
      assert.match(back.stderr, /^evalpipe: stdin is an evalglass RunRecord/m);
      assert.match(back.stderr, /15 Scores read/);
    }
    assert.equal(ndjson(original.stdout).length, 3);
    const named = await cli(["aggregate", path], run.dir);
    assert.equal(named.code, 0, named.stderr);
    assert.deepEqual(ndjson(named.stdout), ndjson(ranged.stdout));

    // view: the summary and the by-call view, from either file.
    for (const args of [[], ["--by-call", "--json"]]) {
      const a = await cli(["view", "run.json", ...args], run.dir);
      const b = await cli(["view", path, ...args], run.dir);
      assert.equal(a.code, 0, a.stderr);
      assert.equal(b.code, 0, b.stderr);
      // evalpipe's record also shows each unit's input and output, which the
      // exported record does not carry.
      const unitless = (text: string) =>
        args.length === 0 ? text : ndjson(text).map((
          { input: _i, output: _o, target_error: _e, ...rest }: Json,
        ) => rest);
      assert.deepEqual(unitless(b.stdout), unitless(a.stdout));
      // What evalpipe does not take back is named once.
      assert.equal(b.stderr.match(/not mapped from/g)?.length, 1);
      for (
        const part of [
          'scorecard.verdict "informational"',
          "scorecard.authority",
          'scorecard.baseline_state "comparison_not_requested"',
          "scorecard.diagnostics (1 entry)",
          "provenance.dimensions",
          "comparable",
        ]
      ) assert.ok(b.stderr.includes(part), `${part} in ${b.stderr}`);
      // Every Score written by evalpipe has its verdict: none is derived.
      assert.doesNotMatch(b.stderr, /derived/);
    }
    const units = ndjson(
      (await cli(["view", path, "--by-call", "--json"], run.dir)).stdout,
    );
    assert.equal(units.length, 5);

    // diff: every pair is equal.
    const diff = await cli(["diff", "run.json", path], run.dir);
    assert.equal(diff.code, 0, diff.stderr);
    const lines = ndjson(diff.stdout);
    assert.deepEqual(lines.map((l) => l.metric), [
      "checker",
      "exact_match",
      "judge",
    ]);
    for (const l of lines) {
      assert.equal(l.delta, 0, l.metric);
      assert.equal(l.pairs, 2, l.metric);
      assert.equal(l.only_a + l.only_b, 0);
      assert.equal(l.improved + l.regressed, 0);
      assert.equal(l.newly_passing + l.newly_failing, 0);
    }
    const record = JSON.parse(await Deno.readTextFile(run.recordPath));
    const original_a = record.units.flatMap((u: Json) => u.scores).find((
      s: Json,
    ) => s.metric === "judge" && s.example_id === "cases.jsonl#a");
    const back = JSON.parse(text).scores.find((s: Json) =>
      s.metric === "judge" && s.example_id === "cases.jsonl#a"
    );
    assert.equal(back.value, original_a.value);
    assert.equal(back.passed, original_a.passed);
    assert.equal(back.reason, original_a.reason);
    // The provenance keeps the verdict too, for evalglass writing it again.
    const { evalpipe, ...provenance } = back.provenance;
    assert.deepEqual(provenance, original_a.provenance);
    assert.deepEqual(evalpipe, {
      passed: original_a.passed,
      reason: original_a.reason,
    });
  });
});

Deno.test("an exported matrix record keeps each Score's target_name, so read back it gives the run's per-target aggregates and comparison", async () => {
  await withTempDir(async (dir) => {
    // Two targets that answer differently: "upper" matches every expected,
    // "lower" none.
    await Deno.writeTextFile(
      `${dir}/answer.py`,
      `import json, sys
case = json.load(sys.stdin)
print(case["input"].upper() if sys.argv[1] == "upper" else case["input"])
`,
    );
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      '{"id":"a","input":"a","expected":"A"}\n' +
        '{"id":"\u00e9 \u{1F642}","input":"b","expected":"B"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: cases.jsonl
targets:
  upper: { type: subprocess, cmd: python3 answer.py upper }
  lower: { type: subprocess, cmd: python3 answer.py lower }
scorers:
  - type: exact_match
`,
    );
    const run = await cli(
      ["run", "suite.yaml", "--matrix", "upper,lower", "--record", "run.json"],
      dir,
    );
    assert.equal(run.code, 0, run.stderr);
    const exported = await cli(
      ["export", "--to", "evalglass", "run.json", "reports"],
      dir,
    );
    assert.equal(exported.code, 0, exported.stderr);
    const path = exported.stdout.trimEnd();

    // Each Score says which target it measured, beside evalglass's fields
    // (which its reader ignores), as passed and reason do.
    const scores = JSON.parse(await Deno.readTextFile(`${dir}/${path}`)).scores;
    assert.deepEqual(
      scores.map((s: Json) => [s.unit_id, s.target_name, s.value]),
      [
        ["cases.jsonl#a~upper", "upper", 1],
        ["cases.jsonl#a~lower", "lower", 0],
        ["cases.jsonl#\u00e9 \u{1F642}~upper", "upper", 1],
        ["cases.jsonl#\u00e9 \u{1F642}~lower", "lower", 0],
      ],
    );
    for (const s of scores) assertSchema("score", s, "an exported Score");

    // Read back, the targets stay apart: the same Aggregates per target and
    // the same comparison as the RunRecord gives.
    for (const command of ["aggregate", "diff"]) {
      const a = await cli([command, "run.json"], dir);
      const b = await cli([command, path], dir);
      assert.equal(a.code, 0, a.stderr);
      assert.equal(b.code, 0, b.stderr);
      assert.deepEqual(ndjson(b.stdout), ndjson(a.stdout), command);
    }
    const back = ndjson((await cli(["aggregate", path], dir)).stdout);
    assert.deepEqual(
      back.filter((a) => a.target_name !== undefined).map((a) => [
        a.target_name,
        a.mean,
      ]),
      [["upper", 1], ["lower", 0]],
    );
  });
});

Deno.test("an exported record that evalglass writes again keeps each Score's passed, reason and target_name", async () => {
  await withTempDir(async (dir) => {
    // A scorer whose verdict is not value >= 0.5, with a reason, in a matrix
    // run: what evalglass's Score has no field for.
    await Deno.writeTextFile(
      `${dir}/strict.py`,
      `import json, sys
case = json.load(sys.stdin)
print(json.dumps({"score": 0.75, "passed": "yes" in case["output"], "reason": "strict: " + case["output"]}))
`,
    );
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      '{"id":"1","input":"yes please"}\n{"id":"2","input":"no thanks"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: cases.jsonl
targets:
  echo: { type: subprocess, cmd: cat, stdin: text }
  shout: { type: subprocess, cmd: "tr a-z A-Z", stdin: text }
scorers:
  - type: subprocess
    cmd: python3 strict.py
`,
    );
    const run = await cli(
      ["run", "suite.yaml", "--matrix", "echo,shout", "--record", "run.json"],
      dir,
    );
    assert.equal(run.code, 0, run.stderr);
    const exported = await cli(
      ["export", "--to", "evalglass", "run.json", "reports"],
      dir,
    );
    assert.equal(exported.code, 0, exported.stderr);
    // evalglass reads the record and writes it again: its Scores keep only
    // evalglass's own fields.
    const rewrite = new URL(
      "../fixtures/evalglass/rewrite/rewrite.py",
      import.meta.url,
    ).pathname;
    const rewritten = await new Deno.Command("python3", {
      args: [rewrite, exported.stdout.trimEnd(), "rewritten.json"],
      cwd: dir,
    }).output();
    assert.equal(rewritten.code, 0, new TextDecoder().decode(rewritten.stderr));
    const scores = JSON.parse(await Deno.readTextFile(`${dir}/rewritten.json`))
      .scores;
    assert.ok(scores.every((s: Json) => !("passed" in s) && !("reason" in s)));
    for (const s of scores) assertSchema("score", s, "a rewritten Score");

    // Read back, every Score is the one the run wrote.
    const a = await cli(["view", "run.json", "--by-call", "--json"], dir);
    const b = await cli(["view", "rewritten.json", "--by-call", "--json"], dir);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    const unitless = (text: string) =>
      ndjson(text).map(({ input: _i, output: _o, ...rest }: Json) => rest);
    assert.deepEqual(unitless(b.stdout), unitless(a.stdout));
    assert.doesNotMatch(b.stderr, /derived/);
    for (const command of ["aggregate", "diff"]) {
      const original = await cli([command, "run.json"], dir);
      const back = await cli([command, "rewritten.json"], dir);
      assert.equal(original.code, 0, original.stderr);
      assert.equal(back.code, 0, back.stderr);
      assert.deepEqual(ndjson(back.stdout), ndjson(original.stdout), command);
    }
    const paired = await cli(["diff", "run.json", "rewritten.json"], dir);
    assert.equal(paired.code, 0, paired.stderr);
    for (const l of ndjson(paired.stdout)) {
      assert.equal(l.newly_passing + l.newly_failing, 0, l.metric);
      assert.equal(l.only_a + l.only_b, 0, l.metric);
    }
  });
});
