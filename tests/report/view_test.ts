import assert from "node:assert/strict";
import { cli, cliWithStdin } from "../_cli.ts";
import { errored, type Score, scored, skipped } from "../../src/score/mod.ts";
import {
  escapeControl,
  groupByCall,
  renderByCall,
  type UnitView,
} from "../../src/report/view.ts";
import { withTempDir } from "../_proc.ts";
import { Aggregator } from "../../src/aggregate/mod.ts";

/** Every character a terminal could act on rather than print. */
function unsafeChars(text: string): string[] {
  return [...text].filter((c) => {
    const cp = c.codePointAt(0)!;
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp === 0x2028 ||
      cp === 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
      (cp >= 0x2066 && cp <= 0x2069);
  });
}

function width(line: string): number {
  return [...line].length;
}

const HOSTILE = [
  "\x1b[2J\x1b[H",
  "clear\x1b[2J\x1b[Hscreen",
  "\x1b]0;pwned\x07title",
  "\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\",
  "overwrite\rOK",
  "backspace\b\b\b\bpass",
  "c1 csi \u009b31m red \u009d0;x\u009c",
  "bidi \u202eevil\u202c and \u2066isolate\u2069 \u202a\u202b\u202d",
  "line\u2028separator\u2029paragraph",
  "nul\0bell\x07del\x7fvt\vff\f",
  "tab\tnewline\nend",
];

Deno.test("escapeControl leaves no control, C1, bidi or separator character", () => {
  for (const text of HOSTILE) {
    const out = escapeControl(text);
    assert.deepEqual(unsafeChars(out), [], JSON.stringify(out));
  }
  // Every code point up to U+00A0 and the listed ones at once.
  const all = Array.from({ length: 0xa1 }, (_, i) => String.fromCodePoint(i))
    .join("") +
    "\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069";
  assert.deepEqual(unsafeChars(escapeControl(all)), []);
});

Deno.test("escapeControl keeps the text visible and readable", () => {
  assert.equal(escapeControl("\x1b[2J\x1b[H"), "\\u{1b}[2J\\u{1b}[H");
  assert.equal(
    escapeControl("\x1b]0;pwned\x07"),
    "\\u{1b}]0;pwned\\u{7}",
  );
  assert.equal(escapeControl("a\r\nb\tc"), "a\\r\\nb\\tc");
  assert.equal(escapeControl("x\u009by"), "x\\u{9b}y");
  assert.equal(escapeControl("\u202eabc"), "\\u{202e}abc");
  assert.equal(escapeControl("a\u2028b"), "a\\u{2028}b");
  assert.equal(escapeControl("b\bx"), "b\\u{8}x");
  const plain = "café – naïve ✓ 日本語 🙂 ok";
  assert.equal(escapeControl(plain), plain, "printable text is untouched");
});

Deno.test("escapeControl keeps the joiners and non-joiners a Persian, Arabic or Indic word is spelled with, and escapes them elsewhere", () => {
  const spelled = [
    "می\u200cخواهم", // Persian: "I want", a non-joiner inside the word
    "क्\u200dष", // Devanagari: a half form through a joiner after the virama
    "ক্\u200cষ", // Bengali: a non-joiner keeps the conjunct apart
    "ലെ\u200cൻ", // Malayalam
  ];
  for (const word of spelled) {
    assert.equal(escapeControl(word), word, JSON.stringify(word));
  }
  assert.equal(escapeControl("pay\u200cpal"), "pay\\u{200c}pal");
  assert.equal(escapeControl("a\u200db"), "a\\u{200d}b");
  assert.equal(escapeControl("\u200cمی"), "\\u{200c}می", "not inside a word");
  assert.equal(escapeControl("می\u200c"), "می\\u{200c}", "at the end");
  // Two scripts on either side are no word of one.
  assert.equal(escapeControl("क\u200cم"), "क\\u{200c}م");
});

function unit(
  example: string,
  unitId: string,
  value: number | "error",
  metric = "m",
): Score {
  const ids = { example_id: example, unit_id: unitId };
  return value === "error"
    ? errored(metric, "target error: boom", ids)
    : scored(metric, value, ids);
}

Deno.test("groupByCall puts failures first and keeps file order within each group", () => {
  const units = groupByCall([
    unit("d#1", "d#1", 1),
    unit("d#2", "d#2", 0),
    unit("d#3", "d#3", 1),
    unit("d#4", "d#4", "error"),
    unit("d#5", "d#5", 0.9),
  ]);
  assert.deepEqual(units.map((u) => u.unit_id), [
    "d#2",
    "d#4",
    "d#1",
    "d#3",
    "d#5",
  ]);
  assert.deepEqual(units.map((u) => u.failed), [
    true,
    true,
    false,
    false,
    false,
  ]);
});

Deno.test("groupByCall gathers the Scores of one unit, metrics in file order", () => {
  const units = groupByCall([
    unit("d#1", "d#1", 1, "exact"),
    unit("d#2", "d#2", 1, "exact"),
    unit("d#1", "d#1", 0.8, "judge"),
    skipped("extra", { example_id: "d#1", unit_id: "d#1", reason: "sampled" }),
    unit("d#2", "d#2", 0.9, "judge"),
  ]);
  assert.equal(units.length, 2);
  assert.deepEqual(units[0]!.scores.map((s) => s.metric), [
    "exact",
    "judge",
    "extra",
  ]);
  assert.deepEqual(units[0]!.scores[2], {
    metric: "extra",
    status: "skipped",
    value: null,
    reason: "sampled",
  });
  assert.equal(units[0]!.failed, false, "a skipped Score is not a failure");
  assert.equal(units[1]!.scores.length, 2);
});

Deno.test("groupByCall keeps the epochs of an example together as sub-units", () => {
  const units = groupByCall([
    unit("d#1", "d#1@1", 1),
    unit("d#2", "d#2@1", 1),
    unit("d#3", "d#3@1", 1),
    unit("d#1", "d#1@2", 1),
    unit("d#2", "d#2@2", 0),
    unit("d#3", "d#3@2", 1),
    unit("d#1", "d#1@3", 1),
    unit("d#2", "d#2@3", 1),
    unit("d#3", "d#3@3", "error"),
  ]);
  assert.deepEqual(units.map((u) => u.unit_id), [
    "d#2@1",
    "d#2@2",
    "d#2@3",
    "d#3@1",
    "d#3@2",
    "d#3@3",
    "d#1@1",
    "d#1@2",
    "d#1@3",
  ], "examples with a failing epoch first, each example's epochs in order");
  assert.deepEqual(
    units.filter((u) => u.failed).map((u) => u.unit_id),
    ["d#2@2", "d#3@3"],
  );
  const lines = renderByCall(units, 80);
  // One heading per example, its epochs below it.
  assert.deepEqual(
    lines.filter((l) => /^\S/.test(l)),
    ["✗ d#2", "✗ d#3", "✓ d#1"],
  );
  const d2 = lines.indexOf("✗ d#2");
  assert.deepEqual(lines.slice(d2 + 1, d2 + 3), [
    "  d#2@1",
    "    m       scored          1.000  pass",
  ]);
});

function hostileUnits(reasonLength: number): UnitView[] {
  const reason = "\x1b[31m" + "é🙂x".repeat(reasonLength / 3) + "\n\r\u009b";
  return groupByCall([
    scored("exact_match", 0, {
      example_id: "data.jsonl#\x1b]0;pwned\x07" + "long-id-".repeat(40),
      unit_id: "data.jsonl#\x1b]0;pwned\x07" + "long-id-".repeat(40),
      reason,
    }),
    scored("a_metric_with_a_very_long_name_\u202e_indeed", 0.75, {
      example_id: "data.jsonl#2",
      unit_id: "data.jsonl#2@1",
      reason: "fine",
    }),
    errored("judge", `scorer error: ${"y".repeat(reasonLength)}`, {
      example_id: "data.jsonl#2",
      unit_id: "data.jsonl#2@2",
    }),
    skipped("judge", { example_id: "data.jsonl#3", unit_id: "data.jsonl#3" }),
  ]);
}

Deno.test("renderByCall fits every line in the width, even with a 100 KB reason", () => {
  const units = hostileUnits(100_000);
  for (const w of [20, 40, 80, 200]) {
    const lines = renderByCall(units, w);
    assert.ok(lines.length >= 8);
    for (const line of lines) {
      assert.ok(width(line) <= w, `${width(line)} > ${w}: ${line}`);
      assert.deepEqual(unsafeChars(line), []);
    }
    // Long lines are cut and marked.
    assert.ok(lines.some((l) => width(l) === w && l.endsWith("…")));
  }
  const wide = renderByCall(units, 200);
  assert.ok(wide.some((l) => l.includes("\\u{1b}]0;pwned\\u{7}")));
  assert.ok(wide.some((l) => l.includes("FAIL  \\u{1b}[31m")));
});

Deno.test("renderByCall does not cut what fits", () => {
  const lines = renderByCall(
    groupByCall([
      scored("exact_match", 1, { example_id: "d#1", unit_id: "d#1" }),
    ]),
    80,
  );
  assert.deepEqual(lines, [
    "✓ d#1",
    "  exact_match  scored          1.000  pass",
  ]);
});

// --- the CLI ---------------------------------------------------------------

const HOSTILE_SCORES: Score[] = [
  scored("exact_match", 1, {
    example_id: "data.jsonl#1",
    unit_id: "data.jsonl#1",
  }),
  scored("judge", 0.2, {
    example_id: "data.jsonl#1",
    unit_id: "data.jsonl#1",
    reason: "\x1b[2J\x1b[H\x1b]0;pwned\x07You have been \x1b[5mhacked\x1b[0m",
  }),
  scored("exact_match", 0, {
    example_id: "data.jsonl#2",
    unit_id: "data.jsonl#2",
    reason: `huge: ${"\x1b[31mred ".repeat(12_000)}\u202eend\r\u009b`,
  }),
  errored("judge", "scorer error: \x1b]0;title\x07 exit status 1", {
    example_id: "data.jsonl#2",
    unit_id: "data.jsonl#2",
  }),
  scored("exact_match", 1, {
    example_id: "data.jsonl#3",
    unit_id: "data.jsonl#3",
  }),
];

function ndjson(scores: Score[]): string {
  return scores.map((s) => JSON.stringify(s) + "\n").join("");
}

Deno.test("cli view --by-call escapes control characters and fits --width", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/scores.ndjson`, ndjson(HOSTILE_SCORES));
    const out = await cli(
      ["view", "scores.ndjson", "--by-call", "--width", "60"],
      dir,
    );
    assert.equal(out.code, 0, out.stderr);
    assert.ok(!out.stdout.includes("\x1b"), "no ESC byte on stdout");
    assert.deepEqual(unsafeChars(out.stdout.replaceAll("\n", "")), []);
    const lines = out.stdout.trimEnd().split("\n");
    for (const line of lines) {
      assert.ok(width(line) <= 60, `${width(line)} > 60: ${line}`);
    }
    // The failing examples first, then the passing one.
    const headings = lines.filter((l) => /^[✗✓] /.test(l));
    assert.deepEqual(headings, [
      "✗ data.jsonl#1",
      "✗ data.jsonl#2",
      "✓ data.jsonl#3",
    ]);
    assert.match(out.stdout, /3 units, 2 with a failure/);
  });
});

Deno.test("cli view --by-call shows 200,000 Scores, where the metric column's width overflowed the call stack", async () => {
  await withTempDir(async (dir) => {
    const n = 200_000;
    const lines: string[] = [];
    for (let i = 1; i <= n; i++) {
      lines.push(JSON.stringify(
        scored("exact_match", i % 2, {
          example_id: `d.jsonl#${i}`,
          unit_id: `d.jsonl#${i}`,
        }),
      ));
    }
    await Deno.writeTextFile(`${dir}/scores.ndjson`, lines.join("\n") + "\n");
    const out = await cli(["view", "scores.ndjson", "--by-call"], dir);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stderr, "");
    assert.match(out.stdout, /200000 units, 100000 with a failure\n$/);
  });
});

Deno.test("cli view --by-call --json writes one JSON object per unit", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/scores.ndjson`, ndjson(HOSTILE_SCORES));
    const out = await cli(
      ["view", "scores.ndjson", "--by-call", "--json"],
      dir,
    );
    assert.equal(out.code, 0, out.stderr);
    assert.ok(!out.stdout.includes("\x1b"), "JSON escapes ESC");
    const units = out.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(units.map((u) => u.unit_id), [
      "data.jsonl#1",
      "data.jsonl#2",
      "data.jsonl#3",
    ]);
    for (const u of units) {
      assert.equal(typeof u, "object");
      assert.ok(Array.isArray(u.scores));
    }
    // The data is kept whole: reasons are not cut in JSON.
    assert.equal(units[1].scores[0].reason, HOSTILE_SCORES[2]!.reason);
    assert.equal(units[0].failed, true);
    assert.equal(units[2].failed, false);
  });
});

Deno.test("cli view --json without --by-call writes the Aggregates, as aggregate does", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/scores.ndjson`, ndjson(HOSTILE_SCORES));
    const out = await cli(["view", "scores.ndjson", "--json"], dir);
    assert.equal(out.code, 0, out.stderr);
    const lines = out.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
    const agg = new Aggregator({ grouped: true });
    for (const s of HOSTILE_SCORES) agg.add(s);
    assert.deepEqual(lines, JSON.parse(JSON.stringify(agg.results())));
    assert.doesNotMatch(out.stdout, /mean ± 95% CI/, "no table");
  });
});

Deno.test("cli view without --by-call prints the summary table", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/scores.ndjson`, ndjson(HOSTILE_SCORES));
    const out = await cli(["view", "scores.ndjson"], dir);
    assert.equal(out.code, 0, out.stderr);
    const lines = out.stdout.trimEnd().split("\n");
    assert.match(lines[0]!, /^metric\s+mean ± 95% CI\s/);
    assert.match(lines[0]!, /\spass rate\s+coverage\s/);
    assert.match(out.stdout, /^exact_match\s+0\.667 ± /m);
    assert.match(
      out.stdout,
      /^judge\s+0\.200\s.*\s50\.0% \(1\/2\)\s+1\s+0\s+0\s+0$/m,
    );
    assert.equal(lines.length, 5, "a header, a row per metric, 2 warnings");
    // 3 examples and 1 (its other Score is an error): fewer than 5 values each.
    assert.deepEqual(lines.slice(3), [
      'warning: the mean of "exact_match" rests on 3 values (fewer than 5): read its interval as a description of this sample, not a prediction',
      'warning: the mean of "judge" rests on 1 value (fewer than 5): read its interval as a description of this sample, not a prediction',
    ]);
    assert.ok(!out.stdout.includes("\x1b"));
  });
});

Deno.test("cli view reports malformed Score lines with their line numbers and exits 2", async () => {
  await withTempDir(async (dir) => {
    const good = ndjson(HOSTILE_SCORES.slice(0, 2)).trimEnd().split("\n");
    await Deno.writeTextFile(
      `${dir}/scores.ndjson`,
      [
        good[0],
        "{not json",
        good[1],
        '{"metric":"m","status":"scored","validity":"valid","value":null,"passed":true,"evaluator_version":"m@1"}',
        "",
        "[1,2]",
      ].join("\n") + "\n",
    );
    for (const extra of [[], ["--by-call"]]) {
      const out = await cli(["view", "scores.ndjson", ...extra], dir);
      assert.equal(out.code, 2);
      assert.match(out.stderr, /"scores\.ndjson" line 2:/);
      assert.match(out.stderr, /"scores\.ndjson" line 4:.*finite number/);
      assert.match(out.stderr, /"scores\.ndjson" line 6:/);
      assert.doesNotMatch(out.stderr, /line [135]:/);
      assert.match(out.stdout, /exact_match/, "the good lines are still shown");
      assert.match(out.stdout, /judge/);
    }
  });
});

Deno.test("cli view and diff read stdin as - or a pipe such as /dev/stdin, whole, a RunRecord or Scores", async () => {
  await withTempDir(async (dir) => {
    const text = ndjson(HOSTILE_SCORES);
    await Deno.writeTextFile(`${dir}/scores.ndjson`, text);
    const fromFile = await cli(["view", "scores.ndjson", "--json"], dir);
    assert.equal(fromFile.code, 0, fromFile.stderr);
    // A pipe is read once: before, the start went to a sniff and was lost.
    for (const path of ["-", "/dev/stdin"]) {
      const piped = await cliWithStdin(["view", path, "--json"], dir, text);
      assert.deepEqual([piped.code, piped.stderr], [0, ""], path);
      assert.equal(piped.stdout, fromFile.stdout, path);
    }
    const bad = await cliWithStdin(["view", "-"], dir, `{not json\n${text}`);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^evalpipe: Malformed Score in stdin line 1: /);
    // A RunRecord through a pipe, against the file it came from.
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input":"a","output":"a","expected":"a"}\n{"input":"b","output":"c","expected":"b"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    const run = await cli(["run", "suite.yaml", "--record", "run.json"], dir);
    assert.equal(run.code, 0, run.stderr);
    const record = await Deno.readTextFile(`${dir}/run.json`);
    const byCall = await cli(["view", "run.json", "--by-call", "--json"], dir);
    const pipedRecord = await cliWithStdin(
      ["view", "-", "--by-call", "--json"],
      dir,
      record,
    );
    assert.deepEqual([pipedRecord.code, pipedRecord.stderr], [0, ""]);
    assert.equal(pipedRecord.stdout, byCall.stdout);
    const diff = await cliWithStdin(["diff", "-", "run.json"], dir, record);
    assert.equal(diff.code, 0, diff.stderr);
    assert.match(diff.stdout, /"pairs":2/);
    const twice = await cliWithStdin(["diff", "-", "-"], dir, record);
    assert.equal(twice.code, 2);
    assert.match(twice.stderr, /^evalpipe: diff reads stdin \(-\) once/);
  });
});

Deno.test('cli view - names stdin as aggregate does: stdin, not "-"', async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input":"a","output":"a","expected":"a"}\n{"input":"b","output":"c","expected":"b"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    const run = await cli(
      ["run", "suite.yaml", "--out", "s.ndjson", "--save-baseline", "main"],
      dir,
    );
    assert.equal(run.code, 0, run.stderr);
    const scores = await Deno.readTextFile(`${dir}/s.ndjson`);
    const baseline = await Deno.readTextFile(
      `${dir}/.evalpipe/baselines/main.json`,
    );
    for (
      const [input, said] of [
        [
          `{not json\n${scores}`,
          /^evalpipe: Malformed Score (in|on) stdin line 1: /,
        ],
        [
          baseline,
          /^evalpipe: stdin is a baseline \(run --save-baseline\): 2 Scores read\n$/,
        ],
      ] as const
    ) {
      const view = await cliWithStdin(["view", "-"], dir, input);
      const aggregate = await cliWithStdin(["aggregate"], dir, input);
      assert.match(view.stderr, said);
      assert.match(aggregate.stderr, said);
      assert.equal(view.code, aggregate.code);
    }
  });
});
