// A Score that is scored but invalid (a judge's 7 on a 0..1 scale) is
// measured, not trusted: the pass rate leaves it out, and so must every
// report that says whether a case passed, whatever its `passed` says.

import assert from "node:assert/strict";
import { XMLParser } from "fast-xml-parser";
import { cli } from "../_cli.ts";
import { fakeLlm, lastMessage, reply } from "../_fake_llm.ts";
import { withTempDir } from "../_proc.ts";

Deno.test("JUnit, Markdown and view count a scored but invalid Score neither as a pass nor as a failure", async () => {
  // The judge grades "seven" 7 (off its scale), "good" 0.9, "bad" 0.1.
  await using server = fakeLlm({
    handler(request) {
      const prompt = lastMessage(request);
      const grade = prompt.includes("seven")
        ? 7
        : prompt.includes("good")
        ? 0.9
        : 0.1;
      return reply.ok(
        JSON.stringify({ score: grade, reason: `said ${grade}` }),
      );
    },
  });
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      ["seven", "good", "bad"].map((id) =>
        JSON.stringify({ id, input: "q", output: id }) + "\n"
      ).join(""),
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: cases.jsonl
target: { type: replay }
scorers:
  - { type: llm_judge, name: judge, model: m, base_url: "${server.baseUrl}", rubric: "Grade {{output}}" }
`,
    );
    const out = await cli(
      [
        "run",
        "suite.yaml",
        "--record",
        "rec.json",
        "--junit",
        "junit.xml",
        "--markdown",
        "report.md",
      ],
      dir,
    );
    assert.equal(out.code, 0, out.stderr);
    const scores = out.stdout.trim().split("\n").map((l) => JSON.parse(l));
    // The Score itself: scored (its value kept, as the spec has it), invalid.
    assert.deepEqual(
      scores.map((s) => [s.example_id, s.status, s.validity, s.value]),
      [
        ["cases.jsonl#seven", "scored", "invalid", 7],
        ["cases.jsonl#good", "scored", "valid", 0.9],
        ["cases.jsonl#bad", "scored", "valid", 0.1],
      ],
    );

    // JUnit: one pass, one failure, and the invalid one skipped, saying why.
    const doc = new XMLParser({
      ignoreAttributes: false,
      attributeNamePrefix: "",
      isArray: (name, _path, _leaf, attribute) =>
        !attribute && ["testsuite", "testcase", "skipped"].includes(name),
    }).parse(await Deno.readTextFile(`${dir}/junit.xml`));
    const suite = doc.testsuites.testsuite[0];
    assert.deepEqual(
      [suite.tests, suite.failures, suite.errors, suite.skipped],
      ["3", "1", "0", "1"],
    );
    const seven = suite.testcase.find((c: { name: string }) =>
      c.name === "cases.jsonl#seven"
    );
    assert.equal(seven.failure, undefined);
    // The reason is the element's text, as GitLab and Jenkins read it.
    assert.match(String(seven.skipped[0]), /^judge: scored but invalid \(/);
    const bad = suite.testcase.find((c: { name: string }) =>
      c.name === "cases.jsonl#bad"
    );
    assert.notEqual(bad.failure, undefined);

    // Markdown: one failing case, the bad one.
    const md = await Deno.readTextFile(`${dir}/report.md`);
    const worst = md.slice(md.indexOf("### Worst failing cases"));
    assert.match(worst, /^1 of 1 failing case/m);
    assert.match(worst, /^\| cases\.jsonl\\#bad \| judge \| scored \|/m);
    assert.doesNotMatch(worst, /seven/);

    // view: the invalid Score is shown as such, with no verdict.
    const view = await cli(
      ["view", "rec.json", "--by-call", "--width", "160"],
      dir,
    );
    assert.equal(view.code, 0, view.stderr);
    const line = view.stdout.split("\n").find((l) =>
      l.includes("scored/invalid")
    );
    assert.ok(line !== undefined, view.stdout);
    assert.match(line, /scored\/invalid\s+7\.000\s+–\s+the judge gave 7/);
    assert.doesNotMatch(line, /pass|FAIL/);
  });
});
