// The tool calls a unit carries (a trace's steps, an `openai` reply's
// tool_calls) in every report, as text: `view --by-call`, the HTML page
// (opened in real Chromium), JUnit's system-out and Markdown's worst cases.

import assert from "node:assert/strict";
import { XMLParser } from "fast-xml-parser";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { htmlReport } from "../../src/report/mod.ts";
import { scored } from "../../src/score/mod.ts";
import { launch, watchedPage } from "./_browser.ts";

const SUITE =
  new URL("../../examples/agent-trace/evalpipe.yaml", import.meta.url)
    .pathname;

// What boots-native.json records, step by step (read here from the trace
// itself, not from the code under test).
const BOOTS = [
  '1. verify_identity({"customer":"c-4411","email":"dana@example.com"}) → {"verified":true}',
  '2. lookup_order({"order":"PP-20931"}) → {"item":"Ridgeline hiking boots","delivered":"2026-11-12","total":129}',
  '3. search_policy({"query":"refund window for worn boots"}) → Returns are accepted within 30 days of delivery, including lightly worn footwear.',
  '4. issue_refund({"order":"PP-20931","amount":129}) → {"status":"issued","refund":"rf-5521"}',
];

Deno.test("view, report --html, --junit and --markdown show a unit's tool calls as text", async () => {
  await withTempDir(async (dir) => {
    const run = await cli(
      [
        "run",
        SUITE,
        "--record",
        "r.json",
        "--html",
        "r.html",
        "--junit",
        "j.xml",
        "--markdown",
        "m.md",
      ],
      dir,
    );
    assert.equal(run.code, 0, run.stderr);
    const view = await cli(
      ["view", "r.json", "--by-call", "--width", "400"],
      dir,
    );
    assert.equal(view.code, 0, view.stderr);
    const lines = view.stdout.split("\n");
    const at = lines.indexOf("✓ cases.jsonl#boots-native");
    assert.ok(at >= 0, view.stdout);
    assert.deepEqual(
      lines.slice(at + 3, at + 7),
      BOOTS.map((c) => `  call    ${c}`),
    );
    // JUnit: after the output, the calls.
    const doc = new XMLParser({
      ignoreAttributes: false,
      attributeNamePrefix: "",
      isArray: (name) => name === "testcase",
    }).parse(await Deno.readTextFile(`${dir}/j.xml`));
    const boots = doc.testsuites.testsuite.testcase.find((
      c: { name: string },
    ) => c.name === "cases.jsonl#boots-native");
    assert.match(boots["system-out"], /\n\ntool calls:\n/);
    assert.equal(
      boots["system-out"].split("\n\ntool calls:\n")[1],
      BOOTS.join("\n"),
    );
    // Markdown: a failing case names the tools it called.
    const md = await Deno.readTextFile(`${dir}/m.md`);
    assert.match(
      md,
      /^\| cases\.jsonl\\#jacket-unverified-native \| .*\\\(called search\\_policy, issue\\_refund, verify\\_identity\\\) \|$/m,
    );
    // The page: the case's detail lists the same lines.
    const browser = await launch();
    try {
      const [page, watch] = await watchedPage(browser);
      await page.goto(`file://${dir}/r.html`);
      await page.waitForSelector("html[data-ready]", { timeout: 20_000 });
      await page.click('.gr[data-unit="cases.jsonl#boots-native"]');
      const shown = await page.$eval("#detail", (d) => ({
        heads: [...d.querySelectorAll("h3")].map((h) => h.textContent),
        calls: [...d.querySelectorAll("ol.calls li")].map((l) => l.textContent),
      }));
      assert.ok(shown.heads.includes("Tool calls (4)"), String(shown.heads));
      assert.deepEqual(shown.calls, BOOTS);
      // A search finds a case by a tool's argument.
      await page.type("#f-text", "pp-20931");
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(
        await page.$eval("#count", (e) => e.textContent),
        "1 of 5 cases",
      );
      assert.deepEqual(watch, { refused: [], dialogs: [], errors: [] });
    } finally {
      await browser.close();
    }
  });
});

Deno.test("htmlReport shows a hostile tool call as text, its unparsed arguments with why", async () => {
  const hostile = "<img src=x onerror=window.__pwned=1>";
  const html = htmlReport({
    scores: [scored("m", 1, { example_id: "d#1", unit_id: "d#1" })],
    units: [{
      example_id: "d#1",
      unit_id: "d#1",
      input: "q",
      output: "a",
      tool_calls: [
        { name: hostile, arguments: { q: hostile } },
        {
          name: "refund",
          arguments: "{order: 7",
          arguments_error: "Expected property name",
        },
      ],
    }],
  });
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/r.html`, html);
    const browser = await launch();
    try {
      const [page, watch] = await watchedPage(browser);
      await page.goto(`file://${dir}/r.html`);
      await page.waitForSelector("html[data-ready]", { timeout: 20_000 });
      await page.click(".gr");
      const calls = await page.$$eval(
        "ol.calls li",
        (ls) => ls.map((l) => l.textContent),
      );
      assert.deepEqual(calls, [
        `1. ${hostile}({"q":"${hostile}"})`,
        "2. refund({order: 7) [arguments not JSON: Expected property name]",
      ]);
      assert.deepEqual({
        img: await page.evaluate('document.getElementsByTagName("img").length'),
        pwned: await page.evaluate("typeof window.__pwned"),
      }, { img: 0, pwned: "undefined" });
      assert.deepEqual(watch, { refused: [], dialogs: [], errors: [] });
    } finally {
      await browser.close();
    }
  });
});
