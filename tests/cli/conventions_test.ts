/**
 * The conventions a new user expects of a Unix command line, through the
 * real CLI: help anywhere, suggestions for typos, no argument ignored, and
 * files as well as stdin for the commands that read NDJSON.
 */

import assert from "node:assert/strict";
import { CLI, cli, cliWithStdin } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { scored, scoreLine } from "../../mod.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

Deno.test("cli suggests the nearest command and flag for a typo", async () => {
  const command = await cli(["rnu", "suite.yaml"], ROOT);
  assert.equal(command.code, 2);
  assert.match(command.stderr, /Unknown command "rnu"; did you mean "run"\?/);
  const flag = await cli(["run", "suite.yaml", "--concurency", "4"], ROOT);
  assert.equal(flag.code, 2);
  assert.match(
    flag.stderr,
    /Unknown option "--concurency"; did you mean "--concurrency"\?/,
  );
  assert.match(flag.stderr, /Run "evalpipe run --help" for usage\./);
  const help = await cli(["help", "veiw"], ROOT);
  assert.equal(help.code, 2);
  assert.match(help.stderr, /did you mean "view"\?/);
});

Deno.test("cli refuses a flag as another flag's value: --out --resume writes no file named --resume", async () => {
  await withTempDir(async (dir) => {
    const out = await cli(["run", "suite.yaml", "--out", "--resume"], dir);
    assert.equal(out.code, 2);
    assert.match(
      out.stderr,
      /Option "--out" needs a value, not the option "--resume"/,
    );
    const left = [...Deno.readDirSync(dir)].map((e) => e.name);
    assert.deepEqual(left, []);
  });
});

Deno.test("cli -h after arguments shows the help and reads no stdin", async () => {
  // stdin is a pipe left open: a command that read it would wait for ever.
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "aggregate", "-h"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill(), 10_000);
  const out = await child.output();
  clearTimeout(timer);
  await child.stdin.close();
  assert.equal(out.code, 0, "killed: it waited on stdin");
  assert.match(
    new TextDecoder().decode(out.stdout),
    /^Usage: evalpipe aggregate /,
  );
  const view = await cli(["view", "-h"], ROOT);
  assert.equal(view.code, 0);
  assert.match(view.stdout, /^Usage: evalpipe view /);
});

Deno.test("cli refuses arguments a command does not take, rather than ignore them", async () => {
  const out = await cli(["run", "suite.yaml", "extra.yaml"], ROOT);
  assert.equal(out.code, 2);
  assert.match(out.stderr, /^evalpipe: run takes one config file/);
  // One file is taken only when it is a matrix run (issue 14).
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/a.jsonl`,
      scoreLine(scored("m", 1, { example_id: "d#1", unit_id: "d#1" })) + "\n",
    );
    const diff = await cli(["diff", "a.jsonl"], dir);
    assert.equal(diff.code, 2);
    assert.match(diff.stderr, /diff takes two files/);
  });
  const three = await cli(["diff", "a", "b", "c"], ROOT);
  assert.equal(three.code, 2);
  assert.match(three.stderr, /diff takes two files/);
});

Deno.test("cli aggregate reads the files named, in order, - for stdin, and says which file a bad line is in", async () => {
  await withTempDir(async (dir) => {
    const line = (id: string, value: number) =>
      scoreLine(scored("m", value, { example_id: id, unit_id: id }));
    await Deno.writeTextFile(`${dir}/a.jsonl`, `${line("d#1", 1)}\n`);
    await Deno.writeTextFile(
      `${dir}/b.jsonl`,
      `${line("d#2", 0)}\n\nnot json\n${line("d#3", 0.5)}\n`,
    );
    await Deno.writeTextFile(`${dir}/a2.jsonl`, `${line("d#4", 1)}\n`);
    const out = await cliWithStdin(
      ["aggregate", "a.jsonl", "-", "b.jsonl"],
      dir,
      await Deno.readTextFile(`${dir}/a2.jsonl`),
    );
    assert.equal(out.code, 2, out.stderr);
    const [m] = out.stdout.trim().split("\n").map((l) => JSON.parse(l));
    // d#1 = 1, d#4 = 1 (stdin), d#2 = 0, d#3 = 0.5: mean 2.5/4.
    assert.equal(m.n, 4);
    assert.equal(m.mean, 0.625);
    assert.equal(
      out.stderr.trim(),
      'evalpipe: Malformed Score in "b.jsonl" line 3: Cannot parse JSON: ' +
        "Unexpected token 'o', \"not json\" is not valid JSON",
    );
    // The same lines on stdin alone still say stdin.
    const piped = await cliWithStdin(
      ["aggregate"],
      dir,
      await Deno.readTextFile(`${dir}/b.jsonl`),
    );
    assert.match(piped.stderr, /Malformed Score in stdin line 3: /);
    // A file that cannot be opened is named, with why; no stack trace.
    const missing = await cli(["aggregate", "a.jsonl", "nope.jsonl"], dir);
    assert.equal(missing.code, 2);
    assert.match(
      missing.stderr,
      /^evalpipe: Cannot open "nope\.jsonl": no such file$/m,
    );
    assert.doesNotMatch(missing.stderr, /\bat /);
  });
});

Deno.test("cli aggregate, view and diff read Scores as jq prints them without -c: indented, one after another, or in one list", async () => {
  await withTempDir(async (dir) => {
    const scores = [1, 0, 0.5].map((v, i) =>
      scored("m", v, { example_id: `d#${i + 1}`, unit_id: `d#${i + 1}` })
    );
    const ndjson = scores.map((s) => `${scoreLine(s)}\n`).join("");
    // `jq . scores.ndjson` and `jq -s . scores.ndjson`, as jq indents them.
    const indented = scores.map((s) => `${JSON.stringify(s, null, 2)}\n`)
      .join("");
    const listed = `${JSON.stringify(scores, null, 2)}\n`;
    await Deno.writeTextFile(`${dir}/s.ndjson`, ndjson);
    await Deno.writeTextFile(`${dir}/indented.json`, indented);
    await Deno.writeTextFile(`${dir}/listed.json`, listed);
    const expected = await cliWithStdin(["aggregate"], dir, ndjson);
    assert.equal(expected.code, 0, expected.stderr);
    for (const text of [indented, listed]) {
      const piped = await cliWithStdin(["aggregate"], dir, text);
      assert.equal(piped.code, 0, piped.stderr);
      assert.equal(piped.stderr, "");
      assert.equal(piped.stdout, expected.stdout);
    }
    const view = await cli(["view", "s.ndjson"], dir);
    for (const file of ["indented.json", "listed.json"]) {
      const shown = await cli(["view", file], dir);
      assert.equal(shown.code, 0, shown.stderr);
      assert.equal(shown.stdout, view.stdout);
      assert.equal(shown.stderr, view.stderr);
    }
    const diff = await cli(["diff", "s.ndjson", "indented.json"], dir);
    assert.equal(diff.code, 0, diff.stderr);
    assert.equal(JSON.parse(diff.stdout).pairs, 3);
    // A broken one among them is named at its line; the others are read.
    const broken = `${indented}{\n  "metric": "m",\n  "value": NaN\n}\n`;
    const bad = await cliWithStdin(["aggregate"], dir, broken);
    assert.equal(bad.code, 2);
    assert.equal(
      bad.stderr.trim(),
      'evalpipe: Malformed Score in stdin line 39: Cannot parse the JSON document that starts on line 37, at column 12: expected a JSON value, found "NaN"',
    );
    assert.equal(JSON.parse(bad.stdout).n, 3);
  });
});

/**
 * JSON as Jackson's default pretty printer (and Gson's) lays it out: `[ {`,
 * `"key" : value`, `}, {` between items, `} ]`.
 */
function jacksonLayout(value: unknown, indent = ""): string {
  if (Array.isArray(value)) {
    return value.length === 0
      ? "[ ]"
      : `[ ${value.map((v) => jacksonLayout(v, indent)).join(", ")} ]`;
  }
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value);
    if (entries.length === 0) return "{ }";
    const inner = `${indent}  `;
    return `{\n${
      entries.map(([k, v]) =>
        `${inner}${JSON.stringify(k)} : ${jacksonLayout(v, inner)}`
      ).join(",\n")
    }\n${indent}}`;
  }
  return JSON.stringify(value);
}

Deno.test("cli aggregate reads a list of Scores laid out as Jackson writes one ([ {, }, {), and a RunRecord indented by jq or Jackson, as view reads them", async () => {
  await withTempDir(async (dir) => {
    const scores = [1, 0, 0.5].map((v, i) =>
      scored("m", v, { example_id: `d#${i + 1}`, unit_id: `d#${i + 1}` })
    );
    const ndjson = scores.map((s) => `${scoreLine(s)}\n`).join("");
    const expected = await cliWithStdin(["aggregate"], dir, ndjson);
    assert.equal(expected.code, 0, expected.stderr);
    const listed = await cliWithStdin(
      ["aggregate"],
      dir,
      `${jacksonLayout(scores)}\n`,
    );
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal(listed.stderr, "");
    assert.equal(listed.stdout, expected.stdout);

    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input": "q", "expected": "a", "output": "a"}\n' +
        '{"input": "q", "expected": "a", "output": "b"}\n',
    );
    const run = await cli(["run", "suite.yaml", "--record", "run.json"], dir);
    assert.equal(run.code, 0, run.stderr);
    const whole = await cli(["aggregate", "run.json"], dir);
    assert.equal(whole.code, 0, whole.stderr);
    assert.match(whole.stdout, /"value_range":\[0,1\]/);
    const record = JSON.parse(await Deno.readTextFile(`${dir}/run.json`));
    for (
      const text of [JSON.stringify(record, null, 2), jacksonLayout(record)]
    ) {
      await Deno.writeTextFile(`${dir}/pretty.json`, `${text}\n`);
      const view = await cli(["view", "pretty.json"], dir);
      assert.equal(view.code, 0, view.stderr);
      const read = await cli(["aggregate", "pretty.json"], dir);
      assert.equal(read.code, 0, read.stderr);
      assert.equal(read.stderr, "");
      assert.equal(read.stdout, whole.stdout);
    }
  });
});

Deno.test("cli aggregate reads indented Scores in other layouts as jq's: nested brackets at the line start, tabs, CRLF, blank lines, one-line values between", async () => {
  await withTempDir(async (dir) => {
    const scores = [1, 0, 0.5, 0.25].map((v, i) =>
      scored("m", v, {
        example_id: `d#${i + 1}`,
        unit_id: `d#${i + 1}`,
        // A nested object, so that a layout with no indent puts an inner
        // `}` at the start of a line.
        provenance: { judge: { model: "x" } },
      })
    );
    const ndjson = scores.map((s) => `${scoreLine(s)}\n`).join("");
    const expected = await cliWithStdin(["aggregate"], dir, ndjson);
    assert.equal(expected.code, 0, expected.stderr);
    // Python's json.dumps(s, indent=0): every line at column 0.
    const flat = scores.map((s) =>
      JSON.stringify(s, null, 2).replace(/^ +/gm, "") + "\n"
    ).join("");
    const tabs = scores.map((s) => JSON.stringify(s, null, "\t") + "\n")
      .join("");
    const crlf = scores.map((s) => JSON.stringify(s, null, 2) + "\r\n\r\n")
      .join("");
    // Two indented, then one on a line, then one indented.
    const mixed = [0, 1].map((i) => JSON.stringify(scores[i], null, 2))
      .concat(scoreLine(scores[2]!), JSON.stringify(scores[3], null, 2))
      .join("\n") + "\n";
    for (const [name, text] of Object.entries({ flat, tabs, crlf, mixed })) {
      const piped = await cliWithStdin(["aggregate"], dir, text);
      assert.equal(piped.code, 0, `${name}: ${piped.stderr}`);
      assert.equal(piped.stderr, "", name);
      assert.equal(piped.stdout, expected.stdout, name);
    }
    // A value left open at the end is named; the ones before are counted.
    const first = JSON.stringify(scores[0], null, 2);
    const at = first.split("\n").length + 1;
    const cut = first + '\n{\n  "metric": "m",\n';
    const bad = await cliWithStdin(["aggregate"], dir, cut);
    assert.equal(bad.code, 2);
    assert.match(
      bad.stderr,
      new RegExp(
        `^evalpipe: Malformed Score in stdin line \\d+: Cannot parse the JSON document that starts on line ${at}\\b`,
        "m",
      ),
    );
    assert.equal(JSON.parse(bad.stdout).n, 1);
  });
});

Deno.test("cli aggregate names a line of an indented value that is not UTF-8 and does not count that value", async () => {
  await withTempDir(async (dir) => {
    const scores = [1, 0, 0.5].map((v, i) =>
      scored("m", v, {
        example_id: `d#${i + 1}`,
        unit_id: `d#${i + 1}`,
        reason: "fine",
      })
    );
    const enc = new TextEncoder();
    // jq's layout, and every line at column 0 (read whole): in each, the
    // second value's reason holds a byte that is not UTF-8.
    for (const indent of [2, 0]) {
      const texts = scores.map((s) => {
        const t = JSON.stringify(s, null, 2);
        return indent === 0 ? t.replace(/^ +/gm, "") : t;
      });
      const before = texts[0]!.split("\n").length;
      const bad = texts[1]!.split("\n");
      const at = bad.findIndex((l) => l.includes('"fine"'));
      const bytes = [
        enc.encode(texts[0] + "\n" + bad.slice(0, at).join("\n") + "\n"),
        enc.encode(bad[at]!.replace("fine", "fi")),
        new Uint8Array([0xff]),
        enc.encode(
          "ne\n" + bad.slice(at + 1).join("\n") + "\n" + texts[2] + "\n",
        ),
      ];
      const all = new Uint8Array(bytes.reduce((n, b) => n + b.length, 0));
      let o = 0;
      for (const b of bytes) all.set(b, (o += b.length) - b.length);
      await Deno.writeFile(`${dir}/s.json`, all);
      const { code, stdout, stderr } = await cli(["aggregate", "s.json"], dir);
      assert.equal(code, 2, `indent ${indent}: ${stderr}`);
      assert.match(
        stderr,
        new RegExp(`"s\\.json" line ${before + at + 1}: Invalid UTF-8`),
        `indent ${indent}`,
      );
      // Streamed, the value with the bad line is not counted.
      if (indent === 2) assert.equal(JSON.parse(stdout).n, 2);
    }
  });
});

Deno.test("cli aggregate and view read a list of Scores on one line: jq -sc, and jq -s selecting nothing", async () => {
  // `jq -s 'map(select(...))'` with no match prints `[]`: each was named a
  // malformed Score ('A Score must be an object, not a list'), exit 2.
  await withTempDir(async (dir) => {
    const scores = [1, 0].map((v, i) =>
      scored("m", v, { example_id: `d#${i + 1}`, unit_id: `d#${i + 1}` })
    );
    const ndjson = scores.map((s) => `${scoreLine(s)}\n`).join("");
    const expected = await cliWithStdin(["aggregate"], dir, ndjson);
    const compact = `${JSON.stringify(scores)}\n`;
    const piped = await cliWithStdin(["aggregate"], dir, compact);
    assert.equal(piped.code, 0, piped.stderr);
    assert.equal(piped.stdout, expected.stdout);
    const none = await cliWithStdin(["aggregate"], dir, "[]\n");
    assert.equal(none.code, 0, none.stderr);
    assert.equal(none.stdout, "");
    await Deno.writeTextFile(`${dir}/s.ndjson`, ndjson);
    await Deno.writeTextFile(`${dir}/c.json`, compact);
    const view = await cli(["view", "s.ndjson"], dir);
    const shown = await cli(["view", "c.json"], dir);
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(shown.stdout, view.stdout);
  });
});

Deno.test("a file named stdin is named as a file (quoted) by view, aggregate, diff, merge and report, and - as standard input", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const score = JSON.stringify({
      metric: "m",
      status: "scored",
      validity: "valid",
      value: 1,
      evaluator_version: "m@1",
      example_id: "d#1",
      unit_id: "d#1",
      diagnostics: [],
      evidence_refs: [],
    });
    const text = `${score}\n{bad\n`;
    await Deno.writeTextFile(`${dir}/stdin`, text);
    const file = 'Malformed Score in "stdin" line 2: ';
    for (
      const args of [
        ["view", "stdin"],
        ["aggregate", "stdin"],
        ["diff", "stdin", "stdin"],
        ["merge", "stdin"],
        ["report", "stdin", "--markdown", "m.md"],
      ]
    ) {
      const result = await cli(args, dir);
      assert.ok(
        result.stderr.includes(`evalpipe: ${file}`),
        `${args.join(" ")}: ${result.stderr}`,
      );
    }
    for (const args of [["view", "-"], ["aggregate", "-"], ["diff", "-"]]) {
      const result = await cliWithStdin(args, dir, text);
      assert.ok(
        result.stderr.includes("evalpipe: Malformed Score in stdin line 2: "),
        `${args.join(" ")}: ${result.stderr}`,
      );
    }
    const matrix = await cliWithStdin(["diff", "-"], dir, `${score}\n`);
    assert.equal(matrix.code, 2, matrix.stderr);
    assert.match(matrix.stderr, /, and stdin has Scores of one target\n/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test('aggregate names a baseline document\'s input as every message does: a file named stdin quoted, standard input stdin (not "-")', async () => {
  const dir = await Deno.makeTempDir();
  try {
    const baseline = JSON.stringify(
      {
        evalpipe_baseline: 1,
        epochs: 1,
        require: "all",
        units: [{
          example_id: "d#1",
          unit_id: "d#1",
          input: "x",
          output: "x",
          scores: [{
            metric: "m",
            status: "bogus",
            validity: "valid",
            value: 1,
            evaluator_version: "m@1",
          }],
        }],
      },
      null,
      2,
    ) + "\n";
    await Deno.writeTextFile(`${dir}/stdin`, baseline);
    const file = await cli(["aggregate", "stdin"], dir);
    assert.equal(file.code, 2, file.stderr);
    assert.match(
      file.stderr,
      /^evalpipe: Malformed Score in "stdin" line 1: Invalid baseline "stdin": unit 1 /m,
    );
    const piped = await cliWithStdin(["aggregate", "-"], dir, baseline);
    assert.equal(piped.code, 2, piped.stderr);
    assert.match(
      piped.stderr,
      /^evalpipe: Malformed Score in stdin line 1: Invalid baseline stdin: unit 1 /m,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
