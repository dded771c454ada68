/**
 * evalglass's own example records (`tests/fixtures/evalglass/examples/`)
 * open in `view`, `aggregate` and `diff`, with figures worked out by hand
 * from the files, and what is not mapped named on stderr.
 */

import assert from "node:assert/strict";
import { cli, cliWithStdin } from "../_cli.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const EXAMPLES = new URL("../fixtures/evalglass/examples/", import.meta.url)
  .pathname;
const GROUNDEDNESS = "groundedness/runrecord.json";
const JUDGE = "judge-calibration/runrecord.json";

const ndjson = (text: string): Json[] =>
  text.trimEnd().split("\n").map((l) => JSON.parse(l));
const close = (a: number, b: number) => Math.abs(a - b) < 1e-12;

// By hand, from the files. groundedness: set_overlap 0.4, 1/13 and 6/13
// (mean 12.2/39, none >= 0.5); field_presence and structural_shape 1, 1, 1.
// judge-calibration: faithfulness 0.9, 0.7, 0.6 (mean 2.2/3, all >= 0.5);
// field_presence 1, 1, 1. Every Score is scored and valid, none has "passed".

Deno.test("aggregate reads evalglass's example records piped in, with figures worked out by hand", async () => {
  const expected: Record<string, Record<string, [number, number]>> = {
    [GROUNDEDNESS]: {
      field_presence: [1, 3],
      set_overlap: [12.2 / 39, 0],
      structural_shape: [1, 3],
    },
    [JUDGE]: { faithfulness: [2.2 / 3, 3], field_presence: [1, 3] },
  };
  for (const [file, metrics] of Object.entries(expected)) {
    const text = await Deno.readTextFile(`${EXAMPLES}${file}`);
    const out = await cliWithStdin(["aggregate"], EXAMPLES, text);
    assert.equal(out.code, 0, out.stderr);
    const lines = ndjson(out.stdout);
    assert.deepEqual(lines.map((l) => l.metric), Object.keys(metrics));
    for (const l of lines) {
      const [mean, passed] = metrics[l.metric]!;
      assert.ok(close(l.mean, mean), `${file} ${l.metric} mean ${l.mean}`);
      assert.equal(l.n, 3);
      assert.equal(l.aggregatable, 3);
      assert.equal(l.errors, 0);
      assert.equal(l.passed, passed);
      assert.ok(close(l.pass_rate, passed / 3));
    }
    assert.match(
      out.stderr,
      new RegExp(
        `^evalpipe: stdin is an evalglass RunRecord \\(run "[a-z-]+"\\): ${
          Object.keys(metrics).length * 3
        } Scores read`,
      ),
    );
  }
});

Deno.test("aggregate reads evalglass records named as files, one after the other, each named on stderr", async () => {
  const out = await cli(["aggregate", GROUNDEDNESS, JUDGE], EXAMPLES);
  assert.equal(out.code, 0, out.stderr);
  const lines = new Map(ndjson(out.stdout).map((l) => [l.metric, l]));
  // field_presence is in both records: 3 + 3 Scores, every one 1.
  assert.equal(lines.get("field_presence").n, 6);
  assert.equal(lines.get("field_presence").mean, 1);
  assert.ok(close(lines.get("set_overlap").mean, 12.2 / 39));
  assert.ok(close(lines.get("faithfulness").mean, 2.2 / 3));
  assert.match(
    out.stderr,
    new RegExp(`"${GROUNDEDNESS}" is an evalglass RunRecord`),
  );
  assert.match(
    out.stderr,
    new RegExp(`"${JUDGE}" is an evalglass RunRecord`),
  );
  // Named as view names it: the file, not "line 1" of it.
  for (const file of [GROUNDEDNESS, JUDGE]) {
    const view = await cli(["view", file], EXAMPLES);
    assert.equal(view.code, 0, view.stderr);
    for (const line of view.stderr.trimEnd().split("\n")) {
      assert.ok(out.stderr.includes(`${line}\n`), `${line}\n${out.stderr}`);
    }
  }
});

Deno.test("view shows an evalglass example record and names, once, what it does not map", async () => {
  const out = await cli(
    ["view", GROUNDEDNESS, "--by-call", "--json"],
    EXAMPLES,
  );
  assert.equal(out.code, 0, out.stderr);
  const units = ndjson(out.stdout);
  assert.equal(units.length, 3);
  const one = units.find((u) => u.unit_id === "datasets/grounded.jsonl#2");
  assert.deepEqual(
    one.scores.map((s: Json) => [s.metric, s.status, s.value, s.passed]),
    [
      ["set_overlap", "scored", 1 / 13, false],
      ["field_presence", "scored", 1, true],
      ["structural_shape", "scored", 1, true],
    ],
  );
  assert.equal(
    out.stderr,
    `evalpipe: "${GROUNDEDNESS}" is an evalglass RunRecord (run "groundedness"): 9 Scores read, aggregates computed from them, "passed" derived for 9 (value >= 0.5; false for error and blocked)\n` +
      `evalpipe: not mapped from "${GROUNDEDNESS}": scorecard.authority, scorecard.baseline_state "comparison_not_requested", scorecard.verdict "informational", comparable, provenance.dimensions\n`,
  );

  const summary = await cli(["view", JUDGE], EXAMPLES);
  assert.equal(summary.code, 0, summary.stderr);
  const row = summary.stdout.split("\n").find((l) =>
    l.startsWith("faithfulness")
  );
  assert.match(row ?? "", /0\.733/);

  // The judge's example ids (q1...) and unit ids (datasets/answers.jsonl#1...) both survive.
  const byCall = ndjson(
    (await cli(["view", JUDGE, "--by-call", "--json"], EXAMPLES)).stdout,
  );
  assert.deepEqual(
    byCall.map((u) => [u.example_id, u.unit_id]).sort(),
    [
      ["q1", "datasets/answers.jsonl#1"],
      ["q2", "datasets/answers.jsonl#2"],
      ["q3", "datasets/answers.jsonl#3"],
    ],
  );
});

Deno.test("diff compares evalglass example records with each other", async () => {
  const same = await cli(["diff", GROUNDEDNESS, GROUNDEDNESS], EXAMPLES);
  assert.equal(same.code, 0, same.stderr);
  for (const l of ndjson(same.stdout)) {
    assert.equal(l.pairs, 3, l.metric);
    assert.equal(l.delta, 0, l.metric);
  }
  assert.equal(same.stderr.match(/is an evalglass RunRecord/g)?.length, 2);

  // Different example ids: nothing pairs, field_presence is in both runs.
  const other = await cli(["diff", GROUNDEDNESS, JUDGE], EXAMPLES);
  assert.equal(other.code, 0, other.stderr);
  const lines = ndjson(other.stdout);
  assert.deepEqual(lines.map((l) => l.metric), [
    "faithfulness",
    "field_presence",
    "set_overlap",
    "structural_shape",
  ]);
  const field = lines.find((l) => l.metric === "field_presence");
  assert.equal(field.pairs, 0);
  assert.equal(field.only_a, 3);
  assert.equal(field.only_b, 3);
});

Deno.test("an evalglass record on one line opens too; one with an invalid Score is an input error naming the Score", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const record = JSON.parse(
      await Deno.readTextFile(`${EXAMPLES}${GROUNDEDNESS}`),
    );
    await Deno.writeTextFile(`${dir}/compact.json`, JSON.stringify(record));
    const compact = await cli(
      ["view", "compact.json", "--by-call", "--json"],
      dir,
    );
    assert.equal(compact.code, 0, compact.stderr);
    assert.equal(ndjson(compact.stdout).length, 3);
    assert.match(compact.stderr, /"compact\.json" is an evalglass RunRecord/);

    // A hand-edited aggregate: evalglass refuses the record, evalpipe says so.
    const edited = structuredClone(record);
    edited.scorecard.metrics[0].value = 0.9;
    await Deno.writeTextFile(
      `${dir}/edited.json`,
      JSON.stringify(edited, null, 2),
    );
    const warned = await cli(["view", "edited.json"], dir);
    assert.equal(warned.code, 0, warned.stderr);
    assert.match(
      warned.stderr,
      /"edited\.json": the Scorecard's aggregate of "set_overlap" contradicts its Scores/,
    );
    const clean = await cli(["view", "compact.json"], dir);
    assert.doesNotMatch(clean.stderr, /contradicts/);

    // A diagnostic evalglass's reader refuses: the Score, the diagnostic
    // and its field are named.
    const fatal = structuredClone(record);
    fatal.scores[2].diagnostics = [
      { code: "judge.timeout", severity: "fatal", message: "timed out" },
    ];
    await Deno.writeTextFile(
      `${dir}/fatal.json`,
      JSON.stringify(fatal, null, 2),
    );
    const refused = await cli(["view", "fatal.json"], dir);
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      /^evalpipe: Invalid evalglass run record "fatal\.json" line \d+: score 3: "diagnostics" item 1: "severity" must be one of info, warning, error, not "fatal"$/m,
    );

    // A list or mapping given as null, which evalglass's reader refuses
    // ("must be a list when present"): the Score and the field are named.
    for (
      const [field, edit] of [
        ['"diagnostics"', (s: Json) => s.diagnostics = null],
        ['"evidence_refs"', (s: Json) => s.evidence_refs = null],
        ['"provenance"', (s: Json) => s.provenance = null],
        [
          '"diagnostics" item 1: "details"',
          (s: Json) =>
            s.diagnostics = [
              { code: "c", severity: "info", message: "m", details: null },
            ],
        ],
      ] as const
    ) {
      const nulled = structuredClone(record);
      edit(nulled.scores[2]);
      await Deno.writeTextFile(
        `${dir}/nulled.json`,
        JSON.stringify(nulled, null, 2),
      );
      for (
        const args of [["view", "nulled.json"], ["aggregate", "nulled.json"]]
      ) {
        const out = await cli(args, dir);
        assert.equal(out.code, 2, `${field}: ${out.stderr}`);
        assert.ok(
          out.stderr.includes(
            `score 3: ${field} must be ${
              field.endsWith('"details"') || field === '"provenance"'
                ? "a mapping"
                : "a list"
            } when present, not null`,
          ),
          out.stderr,
        );
      }
    }

    record.scores[1].value = null; // a scored Score without a value
    const pretty = JSON.stringify(record, null, 2);
    await Deno.writeTextFile(`${dir}/runrecord.json`, pretty);
    // The line the second Score opens on, as an editor shows it.
    const lines = pretty.split("\n");
    const scoresAt = lines.indexOf('  "scores": [');
    const second = lines.findIndex((l, i) => i > scoresAt + 1 && l === "    {");
    assert.ok(scoresAt > 0 && second > scoresAt);
    const out = await cli(["view", "runrecord.json"], dir);
    assert.equal(out.code, 2);
    assert.match(
      out.stderr,
      new RegExp(
        `^evalpipe: Invalid evalglass run record "runrecord\\.json" line ${
          second + 1
        }: score 2: `,
      ),
    );
    assert.equal(out.stdout, "");
    const piped = await cliWithStdin(["aggregate"], dir, pretty);
    assert.equal(piped.code, 2);
    assert.match(
      piped.stderr,
      new RegExp(
        `^evalpipe: Malformed Score in stdin line ${
          second + 1
        }: Invalid evalglass run record: score 2: `,
        "m",
      ),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("aggregate checks a min and a max Scorecard aggregate over 200,000 Scores, where Math.min(...values) overflowed the call stack", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const record = JSON.parse(
      await Deno.readTextFile(`${EXAMPLES}${GROUNDEDNESS}`),
    );
    const n = 200_000;
    const first = record.scores[0];
    record.scores = [];
    for (let i = 1; i <= n; i++) {
      for (const metric of ["low", "high"]) {
        record.scores.push({
          ...first,
          metric,
          evaluator_version: `${metric}@1`,
          example_id: `d.jsonl#${i}`,
          unit_id: `d.jsonl#${i}`,
          value: (i % 10) / 10,
        });
      }
    }
    const counts = { included_count: n, status_counts: { scored: n } };
    record.scorecard.metrics = [
      { aggregation: "min", metric: "low", value: 0, ...counts },
      { aggregation: "max", metric: "high", value: 0.5, ...counts },
    ];
    await Deno.writeTextFile(
      `${dir}/runrecord.json`,
      JSON.stringify(record, null, 2),
    );
    const out = await cli(["aggregate", "runrecord.json"], dir);
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(
      ndjson(out.stdout).map((a) => [a.metric, a.n]),
      [["high", n], ["low", n]],
    );
    // The max is 0.9, not the 0.5 the Scorecard claims; the min holds.
    assert.match(
      out.stderr,
      /the Scorecard's aggregate of "high" contradicts its Scores/,
    );
    assert.doesNotMatch(out.stderr, /"low" contradicts/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an evalglass record cut short or holding a NaN is one error naming its line and column, not one per line", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const pretty = await Deno.readTextFile(`${EXAMPLES}${GROUNDEDNESS}`);
    const lines = pretty.split("\n");
    // Cut in the middle of a string, as an interrupted copy leaves it.
    const cutLine = lines.findIndex((l) => l.includes('"example_id"'));
    const cutColumn = lines[cutLine]!.indexOf('"example_id"') + 5;
    const cut = lines.slice(0, cutLine).join("\n") + "\n" +
      lines[cutLine]!.slice(0, cutColumn - 1);
    // Python's json.dumps writes a float NaN as a bare word.
    const nanLine = lines.findIndex((l) => l.includes('"value": 0.4'));
    const nanColumn = lines[nanLine]!.indexOf("0.4") + 1;
    const nan = lines.map((l, i) => i === nanLine ? l.replace("0.4", "NaN") : l)
      .join("\n");
    const cases: Array<[string, string, number, number, string]> = [
      [
        "cut.json",
        cut,
        cutLine + 1,
        cutColumn,
        "the text ends inside the string",
      ],
      [
        "nan.json",
        nan,
        nanLine + 1,
        nanColumn,
        'expected a JSON value, found "NaN"',
      ],
    ];
    for (const [name, text, line, column, problem] of cases) {
      await Deno.writeTextFile(`${dir}/${name}`, text);
      for (
        const args of [["view", name], ["diff", name, name], [
          "report",
          name,
          "--html",
          "r.html",
        ]]
      ) {
        const out = await cli(args, dir);
        assert.equal(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
        assert.equal(out.stdout, "");
        const said = out.stderr.trimEnd().split("\n");
        assert.equal(said.length, 1, `${args.join(" ")}: ${out.stderr}`);
        assert.ok(
          said[0]!.startsWith(
            `evalpipe: Cannot parse evalglass run record "${name}" line ${line} column ${column}: ${problem}`,
          ),
          said[0],
        );
      }
      const named = await cli(["aggregate", name], dir);
      const piped = await cliWithStdin(["aggregate"], dir, text);
      for (
        const [out, where] of [[named, `"${name}"`], [piped, "stdin"]] as const
      ) {
        assert.equal(out.code, 2, out.stderr);
        const said = out.stderr.trimEnd().split("\n");
        assert.equal(said.length, 1, out.stderr);
        assert.ok(
          said[0]!.startsWith(
            `evalpipe: Malformed Score in ${where} line ${line}: Cannot parse the JSON document that starts on line 1, at column ${column}: ${problem}`,
          ),
          said[0],
        );
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an evalglass record whose Scores carry no ids is read by position, alike in aggregate, view and diff", async () => {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_no_ids_" });
  try {
    const original = JSON.parse(
      await Deno.readTextFile(`${EXAMPLES}${GROUNDEDNESS}`),
    );
    await Deno.copyFile(`${EXAMPLES}${GROUNDEDNESS}`, `${dir}/ids.json`);
    // As evalglass wrote it before its Scores had ids.
    const older = (edit: (scores: Json[]) => Json[]) => ({
      ...original,
      scores: edit(original.scores.map((s: Json) => {
        const { example_id: _e, unit_id: _u, ...rest } = s;
        return rest;
      })),
    });
    const write = (name: string, record: Json) =>
      Deno.writeTextFile(`${dir}/${name}`, JSON.stringify(record, null, 2));
    await write("old.json", older((s) => s));
    // The second set_overlap Score (example 2) rises from 1/13 to 0.9.
    await write(
      "new.json",
      older((s) => s.map((x, i) => i === 1 ? { ...x, value: 0.9 } : x)),
    );
    await write("short.json", older((s) => s.filter((_, i) => i !== 2)));
    const note = (place: string) =>
      `evalpipe: ${place}: no Score carries an example id (an older evalglass record): the k-th Score of each metric is taken as example "#k"\n`;

    // aggregate: each Score an example of its own, as with ids.
    const withIds = await cli(["aggregate", "ids.json"], dir);
    const agg = await cli(["aggregate", "old.json"], dir);
    assert.equal(agg.code, 0, agg.stderr);
    assert.equal(agg.stdout, withIds.stdout);
    assert.ok(ndjson(agg.stdout).every((l) => l.examples === 3));
    assert.ok(agg.stderr.endsWith(note('"old.json"')), agg.stderr);

    // view: three examples #1, #2, #3, not one "(no id)".
    const view = await cli(["view", "old.json", "--by-call", "--json"], dir);
    assert.equal(view.code, 0, view.stderr);
    const units = ndjson(view.stdout);
    assert.deepEqual(units.map((u) => u.unit_id).sort(), ["#1", "#2", "#3"]);
    assert.deepEqual(
      units.find((u) => u.example_id === "#2").scores.map((s: Json) => [
        s.metric,
        s.value,
      ]),
      [["set_overlap", 1 / 13], ["field_presence", 1], [
        "structural_shape",
        1,
      ]],
    );
    assert.ok(view.stderr.endsWith(note('"old.json"')), view.stderr);

    // diff: the k-th Score of a metric in A paired with the k-th in B.
    const diff = await cli(["diff", "old.json", "new.json"], dir);
    assert.equal(diff.code, 0, diff.stderr);
    const overlap = ndjson(diff.stdout).find((l) => l.metric === "set_overlap");
    assert.equal(overlap.pairs, 3);
    assert.equal(overlap.improved, 1);
    assert.equal(overlap.newly_passing, 1);
    assert.ok(diff.stderr.includes(note('"old.json"')), diff.stderr);
    assert.ok(diff.stderr.includes(note('"new.json"')), diff.stderr);
    assert.ok(
      diff.stderr.includes(
        `evalpipe: "old.json" and "new.json" are paired by position: the k-th Score of each metric in A with the k-th in B\n`,
      ),
      diff.stderr,
    );

    // Positions that need not match, and ids on one side only: refused.
    const short = await cli(["diff", "old.json", "short.json"], dir);
    assert.equal(short.code, 2, short.stderr);
    assert.equal(short.stdout, "");
    assert.ok(
      short.stderr.includes(
        `Cannot pair "old.json" with "short.json" by position: no Score in either carries an example id, and A has 3 Scores of "set_overlap" and B 2, so the k-th Score of one need not be the k-th example of the other\n`,
      ),
      short.stderr,
    );
    const mixed = await cli(["diff", "ids.json", "old.json"], dir);
    assert.equal(mixed.code, 2, mixed.stderr);
    assert.ok(
      mixed.stderr.includes(
        `Cannot pair "ids.json" with "old.json": no Score in "old.json" carries an example id (an older evalglass record) and those in "ids.json" do, so no example can be paired; compare it with a run read by position too\n`,
      ),
      mixed.stderr,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a Scores file of one's own whose Scores carry no ids is not read by position: its order need not be its cases'", async () => {
  // Only an older evalglass record is read by position: Scores a script
  // wrote without ids may come in the order they finished, and pairing the
  // k-th of one run with the k-th of another would be silently wrong.
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_no_ids_" });
  try {
    const lines = (values: number[]) =>
      values.map((v) =>
        JSON.stringify({
          metric: "m",
          status: "scored",
          validity: "valid",
          value: v,
          passed: v >= 0.5,
          evaluator_version: "m@1",
          diagnostics: [],
          evidence_refs: [],
        }) + "\n"
      ).join("");
    await Deno.writeTextFile(`${dir}/a.ndjson`, lines([1, 0, 1]));
    await Deno.writeTextFile(`${dir}/b.ndjson`, lines([0, 1, 1]));
    const view = await cli(["view", "a.ndjson", "--by-call", "--json"], dir);
    assert.equal(view.code, 0, view.stderr);
    assert.ok(!view.stderr.includes("taken as example"), view.stderr);
    assert.ok(
      ndjson(view.stdout).every((u) => u.unit_id !== "#1"),
      view.stdout,
    );
    const diff = await cli(["diff", "a.ndjson", "b.ndjson"], dir);
    assert.ok(!diff.stderr.includes("by position"), diff.stderr);
    assert.ok(!diff.stderr.includes("taken as example"), diff.stderr);
    const m = ndjson(diff.stdout).find((l) => l.metric === "m");
    assert.equal(m?.pairs ?? 0, 0, diff.stdout);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("aggregate names an evalglass record it refuses by its file and line, never the two quoted as one name", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const record = JSON.parse(
      await Deno.readTextFile(`${EXAMPLES}${GROUNDEDNESS}`),
    );
    const text = JSON.stringify({ ...record, run_id: "" }) + "\n";
    await Deno.writeTextFile(`${dir}/norun.json`, text);
    const named = await cli(["aggregate", "norun.json"], dir);
    assert.equal(named.code, 2);
    assert.match(
      named.stderr,
      /^evalpipe: Malformed Score in "norun\.json" line 1: Invalid evalglass run record: "run_id" must be a non-empty string$/m,
    );
    const piped = await cliWithStdin(["aggregate"], dir, text);
    assert.equal(piped.code, 2);
    assert.match(
      piped.stderr,
      /^evalpipe: Malformed Score in stdin line 1: Invalid evalglass run record: "run_id" must be a non-empty string$/m,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
