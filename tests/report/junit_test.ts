// JUnit XML, read back by an independent parser (fast-xml-parser): a suite
// per run, a case per unit, counts that add up, hostile output kept as text.

import assert from "node:assert/strict";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { xmlAttr, xmlText } from "../../src/report/junit.ts";
import { matrixRun } from "./_matrix_fixture.ts";

interface Case {
  name: string;
  classname: string;
  time: string;
  failure?: { message: string; type: string; "#text": string }[];
  error?: { message: string; type: string; "#text": string }[];
  skipped?: unknown[];
  "system-out"?: string[];
  "system-err"?: string[];
}

interface Suite {
  name: string;
  tests: string;
  failures: string;
  errors: string;
  skipped: string;
  testcase: Case[];
}

function parseJunit(xml: string): { suites: Suite[]; root: Suite } {
  assert.equal(XMLValidator.validate(xml), true, "well-formed XML");
  // What XML 1.0 forbids, which this parser does not check itself.
  assert.doesNotMatch(
    xml,
    // deno-lint-ignore no-control-regex
    /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/,
  );
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: "",
    htmlEntities: true,
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: false,
    isArray: (name, _path, _leaf, attribute) =>
      !attribute && [
        "testsuite",
        "testcase",
        "failure",
        "error",
        "skipped",
        "system-out",
        "system-err",
      ].includes(name),
  });
  const doc = parser.parse(xml);
  return { suites: doc.testsuites.testsuite, root: doc.testsuites };
}

const HOSTILE = "<script>alert(1)</script> & ]]> \u001b[2J \"q\" 'a' \r\n end";

const SUITE = `dataset: data.jsonl
target: { type: replay }
scorers:
  - type: exact_match
  - type: subprocess
    name: judge
    cmd: sh judge.sh
`;

// judge.sh: fails "crash" cases, scores the rest by length.
const JUDGE = `p=$(cat)
case "$p" in *crash*) echo "model file missing" >&2; exit 3;; esac
printf '{"score":1,"reason":"fine"}'
`;

const DATA = [
  { id: "ok", input: "a", expected: "x", output: "x" },
  { id: "wrong", input: "b", expected: "y", output: HOSTILE },
  { id: "boom", input: "crash", expected: "z", output: "z" },
  { id: "down", input: "d", expected: "w" },
  { id: "open", input: "e", output: "no expected here" },
].map((r) => JSON.stringify(r) + "\n").join("");

Deno.test("run --junit writes a suite per run and a case per unit that an independent reader counts alike", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/suite.yaml`, SUITE);
    await Deno.writeTextFile(`${dir}/judge.sh`, JUDGE);
    await Deno.writeTextFile(`${dir}/data.jsonl`, DATA);
    const out = await cli(
      ["run", "suite.yaml", "--junit", "junit.xml", "--record", "rec.json"],
      dir,
    );
    assert.equal(out.code, 0, out.stderr);
    const xml = await Deno.readTextFile(`${dir}/junit.xml`);
    const { suites, root } = parseJunit(xml);
    assert.equal(suites.length, 1);
    const [suite] = suites as [Suite];
    assert.equal(suite.name, "suite.yaml");
    const cases = suite.testcase;
    assert.deepEqual(
      cases.map((c) => c.name),
      [
        "data.jsonl#ok",
        "data.jsonl#wrong",
        "data.jsonl#boom",
        "data.jsonl#down",
        "data.jsonl#open",
      ],
    );
    const byName = (id: string) =>
      cases.find((c) => c.name === `data.jsonl#${id}`)!;
    // ok: passes. wrong: exact_match failed. boom: the judge is an error.
    // down: the target failed, both blocked. open: exact_match not applicable.
    assert.equal(byName("ok").failure, undefined);
    assert.equal(byName("ok").error, undefined);
    assert.deepEqual(byName("ok")["system-out"], ["x"]);
    const failure = byName("wrong").failure!;
    assert.equal(failure.length, 1);
    assert.equal(failure[0]!.type, "score.failed");
    assert.match(failure[0]!.message, /^exact_match: /);
    assert.equal(byName("wrong").error, undefined);
    // The output comes back as it was, but for the character XML 1.0 cannot
    // hold (ESC, shown as \u{1b}).
    assert.deepEqual(byName("wrong")["system-out"], [
      HOSTILE.replace("\u001b", "\\u{1b}"),
    ]);
    const boom = byName("boom").error!;
    assert.equal(boom.length, 1);
    assert.equal(boom[0]!.type, "scorer.exit_status");
    assert.match(boom[0]!.message, /^judge: scorer error: /);
    assert.match(boom[0]!["#text"], /model file missing/);
    // Both metrics blocked: one <error>, naming both.
    const down = byName("down");
    assert.deepEqual(down.error!.map((e) => e.type), ["target.error"]);
    assert.match(down.error![0]!.message, /^exact_match: [\s\S]*; judge: /);
    assert.equal(down["system-out"], undefined);
    assert.match(down["system-err"]![0]!, /^target error: /);
    // Counts: each case once, as an error if it has one, else a failure.
    const count = (pred: (c: Case) => boolean) =>
      String(cases.filter(pred).length);
    assert.equal(suite.tests, "5");
    assert.equal(suite.errors, count((c) => c.error !== undefined));
    assert.equal(
      suite.failures,
      count((c) => c.error === undefined && c.failure !== undefined),
    );
    assert.equal(suite.skipped, count((c) => c.skipped !== undefined));
    assert.deepEqual([suite.errors, suite.failures, suite.skipped], [
      "2",
      "1",
      "0",
    ]);
    assert.deepEqual(
      [root.tests, root.errors, root.failures],
      [suite.tests, suite.errors, suite.failures],
    );
    // The Jenkins JUnit schema allows `skipped` on a <testsuite> only.
    assert.equal(root.skipped, undefined);
    // report RECORD --junit writes the same document from the record.
    const report = await cli(
      ["report", "rec.json", "--junit", "again.xml"],
      dir,
    );
    assert.equal(report.code, 0, report.stderr);
    assert.equal(await Deno.readTextFile(`${dir}/again.xml`), xml);
  });
});

// The `type` values Rails' Hash.from_xml, which GitLab's JUnit reader uses,
// refuses (symbol, yaml) or turns the element's text into a value by.
const RAILS_TYPES = [
  "symbol",
  "yaml",
  "date",
  "datetime",
  "dateTime",
  "integer",
  "float",
  "double",
  "decimal",
  "boolean",
  "string",
  "base64Binary",
  "binary",
  "file",
  "array",
  "hash",
];

/**
 * A test case's status as GitLab's reader gives it: a <failure> before an
 * <error> before a <skipped> (lib/gitlab/ci/parsers/test/junit.rb).
 */
function gitlabStatus(c: Case): string {
  return c.failure !== undefined
    ? "failed"
    : c.error !== undefined
    ? "error"
    : c.skipped !== undefined
    ? "skipped"
    : "success";
}

Deno.test("run --junit gives a failing unit one <error> or one <failure>, as it counts it and GitLab reads it, and no metric's name as its type", async () => {
  await withTempDir(async (dir) => {
    // Metrics named as Rails' types: GitLab refused a file with type="yaml".
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: data.jsonl
target: { type: replay }
scorers:
  - type: exact_match
    name: yaml
  - type: subprocess
    name: date
    cmd: sh judge.sh
`,
    );
    await Deno.writeTextFile(`${dir}/judge.sh`, JUDGE);
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      [
        { id: "ok", input: "a", expected: "x", output: "x" },
        { id: "wrong", input: "b", expected: "y", output: "n" },
        // yaml fails and date errors: an error, not a failed assertion.
        { id: "both", input: "crash", expected: "z", output: "q" },
      ].map((r) => JSON.stringify(r) + "\n").join(""),
    );
    const out = await cli(["run", "suite.yaml", "--junit", "j.xml"], dir);
    assert.equal(out.code, 0, out.stderr);
    const xml = await Deno.readTextFile(`${dir}/j.xml`);
    const [suite] = parseJunit(xml).suites as [Suite];
    const byName = (id: string) =>
      suite.testcase.find((c) => c.name === `data.jsonl#${id}`)!;
    const both = byName("both");
    assert.equal(both.failure, undefined, "no <failure> beside the <error>");
    assert.equal(both.error!.length, 1);
    assert.equal(both.error![0]!.type, "scorer.exit_status");
    assert.match(
      both.error![0]!.message,
      /^date: scorer error: [\s\S]*; yaml: /,
    );
    assert.match(
      both.error![0]!["#text"],
      /^date: error[\s\S]*\nyaml: scored value 0/,
    );
    const wrong = byName("wrong");
    assert.equal(wrong.error, undefined);
    assert.equal(wrong.failure!.length, 1);
    assert.equal(wrong.failure![0]!.type, "score.failed");
    assert.match(wrong.failure![0]!.message, /^yaml: /);
    // GitLab counts each case as the suite's counts do.
    const count = (status: string) =>
      String(suite.testcase.filter((c) => gitlabStatus(c) === status).length);
    assert.deepEqual(
      [suite.errors, suite.failures, suite.skipped],
      [count("error"), count("failed"), count("skipped")],
    );
    assert.deepEqual([suite.errors, suite.failures], ["1", "1"]);
    for (const [, type] of xml.matchAll(/ type="([^"]*)"/g)) {
      assert.ok(!RAILS_TYPES.includes(type!), `type="${type}"`);
    }
  });
});

Deno.test("run --junit names a unit's case by its epoch when there are several", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: data.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      '{"input":"q","expected":"a","output":"a"}\n{"input":"r","expected":"b","output":"c"}\n',
    );
    const out = await cli([
      "run",
      "suite.yaml",
      "--epochs",
      "2",
      "--junit",
      "j.xml",
    ], dir);
    assert.equal(out.code, 0, out.stderr);
    const { suites } = parseJunit(await Deno.readTextFile(`${dir}/j.xml`));
    assert.deepEqual(suites[0]!.testcase.map((c) => c.name), [
      "data.jsonl#1 (epoch 1)",
      "data.jsonl#1 (epoch 2)",
      "data.jsonl#2 (epoch 1)",
      "data.jsonl#2 (epoch 2)",
    ]);
    assert.equal(suites[0]!.failures, "2");
    // No record was asked for: the temporary one is gone.
    assert.deepEqual(
      [...Deno.readDirSync(dir)].map((e) => e.name).sort(),
      ["data.jsonl", "j.xml", "suite.yaml"],
    );
  });
});

Deno.test("xmlText and xmlAttr escape markup and what XML 1.0 cannot carry, and a reader gets the text back", () => {
  const text = "a<b>&c\"d'e\tf\ng\rh\u0000i\ud800j\uffffk😀";
  const xml = `<r a="${xmlAttr(text)}">${xmlText(text)}</r>`;
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: "",
    htmlEntities: true,
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: false,
  });
  assert.equal(XMLValidator.validate(xml), true);
  const { r } = parser.parse(xml);
  const shown = "a<b>&c\"d'e\tf\ng\rh\\u{0}i\\u{d800}j\\u{ffff}k😀";
  assert.equal(r["#text"], shown);
  assert.equal(r.a, shown);
});

Deno.test("cli run --junit names a test case whose id holds a bidi override or an invisible character by their codes, as the Markdown does", async () => {
  await withTempDir(async (dir) => {
    // "invoice\u202Etxt.exe" would show in a CI page as "invoiceexe.txt".
    const ids = ["invoice\u202etxt.exe", "a\u200bb"];
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      ids.map((id) =>
        JSON.stringify({ id, input: "q", expected: "a", output: "a" })
      ).join("\n") + "\n",
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: data.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    const r = await cli(["run", "suite.yaml", "--junit", "j.xml"], dir);
    assert.equal(r.code, 0, r.stderr);
    const xml = await Deno.readTextFile(`${dir}/j.xml`);
    assert.equal(XMLValidator.validate(xml), true);
    assert.ok(!/[\u202e\u200b]/.test(xml), xml);
    assert.ok(
      xml.includes('name="data.jsonl#invoice\\u{202e}txt.exe"'),
      xml,
    );
    assert.ok(xml.includes('name="data.jsonl#a\\u{200b}b"'), xml);
  });
});

Deno.test("cli run --junit and --markdown keep an emoji's joiners and selectors, and escape them where they would hide text", async () => {
  await withTempDir(async (dir) => {
    const kept = [
      "dev-👩\u200d💻", // woman technologist: 👩 ZWJ 💻
      "tone-👨🏽\u200d💻", // a skin tone before the joiner
      "flag-🏳\ufe0f\u200d🌈", // a presentation selector before it
      "heart-❤\ufe0f", // a text character shown as an emoji
      "key-1\ufe0f\u20e3", // a keycap
    ];
    const escaped = [
      ["ab-a\u200db", "ab-a\\u{200d}b"], // between letters: "ab-ab" on screen
      ["end-x\u200d", "end-x\\u{200d}"], // alone at the end
      ["lead-\u200d👩", "lead-\\u{200d}👩"], // no pictograph before it
      ["vs-a\ufe0f", "vs-a\\u{fe0f}"], // a selector after a letter
    ];
    const ids = [...kept, ...escaped.map(([id]) => id!)];
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      ids.map((id) =>
        JSON.stringify({ id, input: "q", expected: "a", output: "b" })
      ).join("\n") + "\n",
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: data.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    const r = await cli(
      ["run", "suite.yaml", "--junit", "j.xml", "--markdown", "r.md"],
      dir,
    );
    assert.equal(r.code, 0, r.stderr);
    const xml = await Deno.readTextFile(`${dir}/j.xml`);
    assert.equal(XMLValidator.validate(xml), true);
    const names = new XMLParser({ ignoreAttributes: false }).parse(xml)
      .testsuites.testsuite.testcase.map((c: Record<string, string>) =>
        c["@_name"]
      );
    assert.deepEqual(names, [
      ...kept.map((id) => `data.jsonl#${id}`),
      ...escaped.map(([, shown]) => `data.jsonl#${shown}`),
    ]);
    // The Markdown's worst cases show the ids as the same function does.
    const md = await Deno.readTextFile(`${dir}/r.md`);
    assert.ok(md.includes("dev-👩\u200d💻"), md);
    assert.ok(md.includes("ab-a\\\\u\\{200d\\}b"), md);
  });
});

Deno.test("report refuses a Scores file, and wants at least one report", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/s.ndjson`,
      '{"metric":"m","status":"scored","validity":"valid","value":1,"passed":true,"evaluator_version":"m@1"}\n',
    );
    const scores = await cli(["report", "s.ndjson", "--junit", "j.xml"], dir);
    assert.equal(scores.code, 2);
    assert.match(scores.stderr, /is not a RunRecord of evalpipe's/);
    const none = await cli(["report", "s.ndjson"], dir);
    assert.equal(none.code, 2);
    assert.match(
      none.stderr,
      /report needs a report to write: --html FILE, --junit FILE, --markdown FILE/,
    );
  });
});

Deno.test("run --matrix --junit writes a test suite per target, so CI shows which target failed", async () => {
  await withTempDir(async (dir) => {
    const run = await matrixRun(dir, ["--junit", "j.xml"]);
    assert.equal(run.code, 0, run.stderr);
    const xml = await Deno.readTextFile(`${dir}/j.xml`);
    const { suites, root } = parseJunit(xml);
    assert.deepEqual(suites.map((s) => s.name), [
      "s.yaml (target up)",
      "s.yaml (target same)",
      "s.yaml (target odd)",
    ]);
    // up fails d#3; same fails d#1, d#2, d#4; odd fails d#3, d#4.
    const failing = suites.map((s) =>
      s.testcase.filter((c) => c.failure !== undefined).map((c) => c.name)
    );
    assert.deepEqual(failing, [
      ["d.jsonl#3"],
      ["d.jsonl#1", "d.jsonl#2", "d.jsonl#4"],
      ["d.jsonl#3", "d.jsonl#4"],
    ]);
    assert.deepEqual(suites.map((s) => [s.tests, s.failures]), [
      ["4", "1"],
      ["4", "3"],
      ["4", "2"],
    ]);
    assert.deepEqual([root.tests, root.failures, root.errors], [
      "12",
      "6",
      "0",
    ]);
    // Each case's classname names its target too, and its output is its own.
    for (const s of suites) {
      assert.ok(s.testcase.every((c) => c.classname === s.name));
    }
    assert.deepEqual(suites[1]!.testcase[0]!["system-out"], ["a"]);
    assert.match(
      suites[2]!.testcase[3]!["system-out"]![0]!,
      /^<img src=x onerror=window\.__pwned=1>/,
    );
    assert.match(xml, /<property name="target" value="same"\/>/);
    const again = await cli(["report", "r.json", "--junit", "again.xml"], dir);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await Deno.readTextFile(`${dir}/again.xml`), xml);
  });
});

Deno.test("run --target of a config with several targets reports its cases in the JUnit XML and its gates in the Markdown", async () => {
  await withTempDir(async (dir) => {
    const cases = ["a", "a", "b", "a"].map((output, i) =>
      JSON.stringify({ input: `q${i}`, output, expected: "a" })
    );
    await Deno.writeTextFile(`${dir}/d.jsonl`, cases.join("\n") + "\n");
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      "dataset: d.jsonl\ntargets: { v1: { type: replay }, v2: { type: replay } }\nmatrix: [v1, v2]\nscorers: [{ type: exact_match }]\ngates: { exact_match: { min_pass_rate: 0.9 } }\n",
    );
    // One target picked: the record's config says `matrix: [v1]` and the
    // Scores name no target. Before, the JUnit XML had a suite for v1 with
    // tests="0" (a green test report of nothing), and the Markdown's gate
    // said "no Scores for this metric" where the run said the pass rate.
    for (const pick of [["--target", "v1"], ["--matrix", "v1"]]) {
      const run = await cli(
        ["run", "s.yaml", ...pick, "--junit", "j.xml", "--markdown", "s.md"],
        dir,
      );
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, /gate failed: exact_match: pass rate 0\.75/);
      const { suites } = parseJunit(await Deno.readTextFile(`${dir}/j.xml`));
      assert.equal(suites.length, 1);
      assert.equal(suites[0]!.name, "s.yaml");
      assert.deepEqual([suites[0]!.tests, suites[0]!.failures], ["4", "1"]);
      assert.equal(suites[0]!.testcase.length, 4);
      const markdown = await Deno.readTextFile(`${dir}/s.md`);
      assert.doesNotMatch(markdown, /no Scores for this metric/);
      assert.match(
        markdown,
        /\| exact\\_match \| min_pass_rate \| 0\.9 \| ❌ failed: exact\\_match\\: pass rate 0\.75 /,
      );
    }
  });
});
