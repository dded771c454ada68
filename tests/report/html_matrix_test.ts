// The HTML report of a real three-target matrix run, opened in real Chromium
// from file://: every target's mean, every target against the first, the
// same figures the run's summary and `diff RECORD` print.

import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { launch, watchedPage } from "./_browser.ts";
import { matrixRun, textRows } from "./_matrix_fixture.ts";

function dataOf(html: string) {
  const m = /id="report-data">([^]*?)<\/script>/.exec(html);
  assert.ok(m !== null);
  return JSON.parse(m[1]!);
}

const inPage = <T>(page: Page, expression: string) =>
  page.evaluate(expression) as Promise<T>;

Deno.test("run --matrix --html shows every target and each against the first, as the summary and diff print them", async () => {
  await withTempDir(async (dir) => {
    const run = await matrixRun(dir);
    assert.equal(run.code, 0, run.stderr);
    const diff = await cli(["diff", "r.json"], dir);
    assert.equal(diff.code, 0, diff.stderr);
    const html = await Deno.readTextFile(`${dir}/r.html`);
    const data = dataOf(html);
    // The page's comparison is diff's NDJSON, line for line.
    assert.deepEqual(
      data.comparison,
      diff.stdout.trim().split("\n").map((l) => JSON.parse(l)),
    );
    assert.deepEqual(data.runs.map((r: { label: string }) => r.label), [
      "up",
      "same",
      "odd",
    ]);
    assert.equal(data.rows.length, 4);
    // The run's table and diff's are the same text.
    const printed = textRows(run.stderr);
    assert.deepEqual(textRows(diff.stderr), printed);
    assert.equal(printed.length, 3);

    const browser = await launch();
    try {
      const [page, watch] = await watchedPage(browser);
      await page.setViewport({ width: 1280, height: 800 });
      await page.goto(`file://${dir}/r.html`);
      await page.waitForSelector("html[data-ready]", { timeout: 20_000 });
      // The comparison table: its first seven columns are the printed ones.
      const shown = await page.$$eval(
        "section[aria-label=Comparison] tbody tr",
        (rows) =>
          rows.map((r) => [...r.children].map((c) => c.textContent ?? "")),
      );
      assert.deepEqual(
        shown.map((r) => r.slice(0, 7).filter((c) => c !== "")),
        printed,
      );
      assert.match(printed[1]!.join(" "), /^exact_match same vs up 0\.250/);
      // A summary per target.
      const heads = await page.$$eval("h2", (h) => h.map((e) => e.textContent));
      for (const t of ["up", "same", "odd"]) {
        assert.ok(heads.includes(`Summary — target ${t}`), String(heads));
      }
      assert.ok(heads.includes("Targets against up (paired by example)"));
      // The cases: one row per case, a column per metric and target.
      const columns = await page.$$eval(
        ".gh button",
        (b) => b.map((e) => e.textContent),
      );
      assert.deepEqual(columns, [
        "unit",
        "change",
        "exact_match · up",
        "exact_match · same",
        "exact_match · odd",
        "latency · up",
        "latency · same",
        "latency · odd",
      ]);
      assert.equal(
        await page.$eval("#count", (e) => e.textContent),
        "4 of 4 cases",
      );
      // Newly failing against up first: d#1, d#2 (same), d#4 (both).
      const rows = await page.$$eval(
        ".gr",
        (rs) => rs.map((r) => [...r.children].map((c) => c.textContent)),
      );
      assert.deepEqual(rows.map((r) => r[0]), [
        "d.jsonl#1",
        "d.jsonl#2",
        "d.jsonl#4",
        "d.jsonl#3",
      ]);
      assert.deepEqual(rows[0]!.slice(1, 5), [
        "newly failing",
        "✓ 1.00",
        "✗ 0.00",
        "✓ 1.00",
      ]);
      // d#3: up fails it, same passes it: newly passing.
      assert.equal(rows[3]![1], "newly passing");
      await page.select("#f-change", "1");
      assert.equal(
        await page.$eval("#count", (e) => e.textContent),
        "1 of 4 cases",
      );
      await page.select("#f-change", "");
      // A case's detail: each target's output side by side, the hostile one as text.
      await page.click('.gr[data-unit="d.jsonl#4"]');
      const sides = await page.$$eval(
        ".side > div",
        (cols) => cols.map((c) => c.textContent!),
      );
      assert.equal(sides.length, 3);
      assert.match(sides[0]!, /^Target up[\s\S]*Output[\s\S]*D/);
      assert.match(sides[1]!, /^Target same[\s\S]*Output\s*d/);
      assert.ok(
        sides[2]!.includes("<img src=x onerror=window.__pwned=1>\\u{202E}evil"),
        sides[2],
      );
      assert.deepEqual({
        img: await inPage(page, 'document.getElementsByTagName("img").length'),
        pwned: await inPage(page, "typeof window.__pwned"),
      }, { img: 0, pwned: "undefined" });
      assert.deepEqual(watch, { refused: [], dialogs: [], errors: [] });
    } finally {
      await browser.close();
    }
  });
});

Deno.test("report --html of a matrix record shows its targets in the facts and the same page as run --html", async () => {
  await withTempDir(async (dir) => {
    assert.equal((await matrixRun(dir)).code, 0);
    const out = await cli(["report", "r.json", "--html", "again.html"], dir);
    assert.equal(out.code, 0, out.stderr);
    const data = dataOf(await Deno.readTextFile(`${dir}/again.html`));
    assert.deepEqual(data, dataOf(await Deno.readTextFile(`${dir}/r.html`)));
    const facts = (i: number): Record<string, string> =>
      Object.fromEntries(data.runs[i].facts as [string, string][]);
    assert.match(facts(0).target!, /^subprocess: python3 .*upper/);
    assert.match(facts(1).target!, /^subprocess: python3 .*print\(i\)/);
    assert.equal(facts(2).matrix, "up, same, odd");
    assert.match(facts(2).run!, / \(target odd\)$/);
    // Two matrix records compared: A and B each list their targets.
    const two = await cli(
      ["report", "r.json", "r.json", "--html", "two.html"],
      dir,
    );
    assert.equal(two.code, 0, two.stderr);
    const a = Object.fromEntries(
      dataOf(await Deno.readTextFile(`${dir}/two.html`)).runs[0].facts,
    );
    for (const t of ["up", "same", "odd"]) {
      assert.match(a[`target ${t}`], /^subprocess: python3 /);
    }
    // Its paired diff is `diff A B`'s, target by target, line for line.
    const diff = await cli(["diff", "r.json", "r.json"], dir);
    assert.equal(diff.code, 0, diff.stderr);
    assert.deepEqual(
      dataOf(await Deno.readTextFile(`${dir}/two.html`)).diff,
      diff.stdout.trim().split("\n").map((l) => {
        const { regressions: _, ...rest } = JSON.parse(l);
        return rest;
      }),
    );
    assert.deepEqual(
      dataOf(await Deno.readTextFile(`${dir}/two.html`)).diff.map(
        (l: { target_name: string }) => l.target_name,
      ),
      ["up", "same", "odd"],
    );
  });
});

Deno.test("report --html of a matrix run's Scores file names each target and compares them as diff does", async () => {
  await withTempDir(async (dir) => {
    assert.equal((await matrixRun(dir, ["--out", "s.ndjson"])).code, 0);
    const out = await cli(["report", "s.ndjson", "--html", "s.html"], dir);
    assert.equal(out.code, 0, out.stderr);
    const diff = await cli(["diff", "s.ndjson"], dir);
    assert.equal(diff.code, 0, diff.stderr);
    const data = dataOf(await Deno.readTextFile(`${dir}/s.html`));
    assert.deepEqual(data.runs.map((r: { label: string }) => r.label), [
      "up",
      "same",
      "odd",
    ]);
    assert.deepEqual(
      data.runs.map((r: { aggregates: { mean: number }[] }) =>
        r.aggregates[0]!.mean
      ),
      [0.75, 0.25, 0.5],
    );
    assert.deepEqual(
      data.comparison,
      diff.stdout.trim().split("\n").map((l) => JSON.parse(l)),
    );
  });
});
