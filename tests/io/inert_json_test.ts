/**
 * What a terminal could act on never reaches stdout raw: C1 controls, bidi
 * overrides and invisible characters in model text are `\u` escapes in every
 * JSON output and escaped in every table (issue 18, item 6).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { inertJson } from "../../src/io/mod.ts";
import { escapeControl } from "../../src/report/mod.ts";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

// U+009B CSI, U+009D OSC, U+0085 NEL, U+202E RLO, U+2066-2069 isolates,
// U+200B ZWSP, U+200F RLM, U+061C ALM, U+FEFF BOM, U+2028 LS.
const NASTY = "a\u009b2Jb\u009d0;t\u0007c\u0085d\u202eexe.txt\u2066e\u2069" +
  "f\u200bg\u200fh\u061ci\ufeffj\u2028k";
const RAW =
  /[\u0080-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;

Deno.test("inertJson escapes what JSON.stringify leaves raw, and parses back the same", () => {
  const json = inertJson(JSON.stringify({ text: NASTY }));
  assert.doesNotMatch(json, RAW);
  assert.match(json, /\\u009b2Jb\\u009d0;t\\u0007c\\u0085d\\u202eexe/);
  assert.equal(JSON.parse(json).text, NASTY);
  // Nothing to escape: the very same string.
  const plain = JSON.stringify({ text: "ok, été 😀" });
  assert.equal(inertJson(plain), plain);
});

Deno.test("escapeControl escapes invisible and bidi characters in tables", () => {
  const shown = escapeControl(NASTY);
  assert.doesNotMatch(shown, RAW);
  for (const code of ["9b", "202e", "200b", "200f", "61c", "feff", "2028"]) {
    assert.ok(shown.includes(`\\u{${code}}`), `${code} in ${shown}`);
  }
});

Deno.test("score, view --json and view write model text inert on stdout", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      join(dir, "nasty.py"),
      `import json, sys\ncase = json.load(sys.stdin)\nprint(json.dumps({"score": 1, "reason": case["output"]}))\n`,
    );
    const unit = JSON.stringify({ input: "q", output: NASTY });
    await Deno.writeTextFile(join(dir, "units.ndjson"), unit + "\n");
    const scored = await new Deno.Command("sh", {
      args: [
        "-c",
        `"${Deno.execPath()}" run -A "${
          new URL("../../cli.ts", import.meta.url).pathname
        }" score --scorer "python3 nasty.py" < units.ndjson > scores.ndjson`,
      ],
      cwd: dir,
      stderr: "piped",
    }).output();
    assert.equal(scored.code, 0, new TextDecoder().decode(scored.stderr));
    const scores = await Deno.readTextFile(join(dir, "scores.ndjson"));
    assert.doesNotMatch(scores, RAW);
    assert.equal(JSON.parse(scores).reason, NASTY);

    const json = await cli(
      ["view", "scores.ndjson", "--by-call", "--json"],
      dir,
    );
    assert.equal(json.code, 0, json.stderr);
    assert.doesNotMatch(json.stdout, RAW);
    assert.ok(json.stdout.includes("\\u202e"), json.stdout);

    const table = await cli(["view", "scores.ndjson", "--by-call"], dir);
    assert.equal(table.code, 0, table.stderr);
    assert.doesNotMatch(table.stdout, RAW);
    assert.ok(table.stdout.includes("\\u{202e}"), table.stdout);
  });
});

Deno.test("run writes model text inert to --out and --record", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      join(dir, "nasty.py"),
      `import json, sys\ncase = json.load(sys.stdin)\nprint(json.dumps({"score": 1, "reason": case["output"]}))\n`,
    );
    await Deno.writeTextFile(
      join(dir, "cases.jsonl"),
      JSON.stringify({ input: "q", output: NASTY }) + "\n",
    );
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      "dataset: cases.jsonl\ntarget: { type: replay }\nscorers:\n  - type: subprocess\n    cmd: python3 nasty.py\n",
    );
    const run = await cli(
      ["run", "suite.yaml", "--out", "s.ndjson", "--record", "r.json"],
      dir,
    );
    assert.equal(run.code, 0, run.stderr);
    const scores = await Deno.readTextFile(join(dir, "s.ndjson"));
    const record = await Deno.readTextFile(join(dir, "r.json"));
    for (const text of [scores, record]) {
      assert.doesNotMatch(text, RAW);
      assert.ok(text.includes("\\u009b2Jb"), text);
    }
    assert.equal(JSON.parse(scores).reason, NASTY);
    assert.equal(JSON.parse(record).units[0].scores[0].reason, NASTY);
    assert.equal(JSON.parse(record).units[0].output, NASTY);
  });
});

/** A `\u` escape of a surrogate that has not its other half beside it. */
const LONE = new RegExp(
  [
    String
      .raw`(?<!\\)(?:\\\\)*\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])`,
    String
      .raw`(?<!\\)(?:\\\\)*(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}`,
  ].join("|"),
);

Deno.test("inertJson writes a lone surrogate as U+FFFD and leaves pairs and escaped backslashes alone", () => {
  for (
    const [value, expected] of [
      ["\ud800", "\ufffd"],
      ["a\udc00b", "a\ufffdb"],
      ["\udbff\udbff", "\ufffd\ufffd"],
      ["\ud83d\ude00 ok", "\ud83d\ude00 ok"],
      ["\\ud800 is text", "\\ud800 is text"],
      ["\\\ud800", "\\\ufffd"],
    ] as const
  ) {
    const json = inertJson(JSON.stringify({ reason: value }));
    assert.doesNotMatch(json, LONE, json);
    assert.equal(JSON.parse(json).reason, expected, json);
  }
});

Deno.test("a scorer's or a model's lone surrogate reaches no output: jq and other strict readers read every line", async () => {
  await withTempDir(async (dir) => {
    // The verdict's reason and the target's output hold half a pair each.
    await Deno.writeTextFile(
      join(dir, "half.sh"),
      `cat >/dev/null; printf '%s' '{"score": 1, "reason": "half \\ud83d here"}'\n`,
    );
    await Deno.writeTextFile(
      join(dir, "cases.jsonl"),
      '{"input": "q", "output": "out \\udc00 put", "id": "x\\ud800"}\n',
    );
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      "dataset: cases.jsonl\ntarget: { type: replay }\nscorers:\n  - type: subprocess\n    cmd: sh half.sh\n  - type: contains\n    value: zzz\n",
    );
    const run = await cli(["run", "suite.yaml", "--record", "r.json"], dir);
    assert.equal(run.code, 0, run.stderr);
    const record = await Deno.readTextFile(join(dir, "r.json"));
    for (const text of [run.stdout, record]) {
      assert.doesNotMatch(text, LONE, text);
    }
    const scores = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(scores[0].reason, "half \ufffd here");
    assert.equal(scores[0].example_id, "cases.jsonl#x\ufffd");
    assert.equal(JSON.parse(record).units[0].output, "out \ufffd put");
  });
});
