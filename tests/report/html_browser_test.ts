// The HTML report opened in real Chromium (Debian's `chromium`, driven by
// puppeteer-core) from file://, with every request off file: refused.

import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";
import { htmlReport, type ReportRun } from "../../src/report/mod.ts";
import { withTempDir } from "../_proc.ts";
import { cli } from "../_cli.ts";
import { type FixtureRun, HOSTILE, makeRun } from "./_report_fixture.ts";
import { launch, type Watch, watchedPage } from "./_browser.ts";

/** Opens `html` from a file in a fresh browser; closes it after `fn`. */
async function withReport(
  html: string,
  fn: (page: Page, watch: Watch, dir: string) => Promise<void>,
  viewport = { width: 1280, height: 800 },
): Promise<void> {
  await withTempDir(async (dir) => {
    const path = `${dir}/report.html`;
    await Deno.writeTextFile(path, html);
    const browser = await launch();
    try {
      const [page, watch] = await watchedPage(browser);
      await page.setViewport(viewport);
      await page.goto(`file://${path}`);
      await page.waitForSelector("html[data-ready]", { timeout: 20_000 });
      await fn(page, watch, dir);
    } finally {
      await browser.close();
    }
  }, "evalpipe_report_");
}

/**
 * Evaluates `expression` in the page. Expressions are strings: the browser's
 * types (lib.dom) would clash with Deno's in the one program the tests make.
 */
function inPage<T>(page: Page, expression: string): Promise<T> {
  return page.evaluate(expression) as Promise<T>;
}

const frame = (page: Page) =>
  inPage(page, "new Promise((r) => requestAnimationFrame(r))");

const tags = (page: Page, name: string) =>
  inPage<number>(page, `document.getElementsByTagName("${name}").length`);
const count = (page: Page) => page.$eval("#count", (e) => e.textContent);
const shownUnits = (page: Page) =>
  page.$$eval(".gr", (rows) => rows.map((r) => r.getAttribute("data-unit")));
const elements = (page: Page) =>
  inPage<number>(page, 'document.getElementsByTagName("*").length');

async function setSelect(page: Page, id: string, value: string) {
  await page.select(`#${id}`, value);
}

async function search(page: Page, text: string) {
  await inPage(page, 'document.getElementById("f-text").value = ""');
  if (text === "") {
    await inPage(
      page,
      'document.getElementById("f-text").dispatchEvent(new Event("input"))',
    );
  } else {
    await page.type("#f-text", text);
  }
  // The search waits for typing to pause (120 ms).
  await new Promise((r) => setTimeout(r, 300));
}

/** Every unit the table shows, scrolling it from top to bottom. */
async function allShown(page: Page): Promise<Set<string>> {
  const seen = new Set<string>();
  await page.$eval("#grid", (g) => {
    g.scrollTop = 0;
  });
  for (let step = 0; step < 1000; step++) {
    for (const id of await shownUnits(page)) seen.add(id!);
    const done = await page.$eval("#grid", (g) => {
      const end = g.scrollTop + g.clientHeight >= g.scrollHeight - 1;
      g.scrollTop += g.clientHeight - 40;
      return end;
    });
    await frame(page);
    if (done) break;
  }
  return seen;
}

const unitIds = (run: ReportRun) => run.units!.map((u) => u.unit_id!);

Deno.test("htmlReport opens from file:// offline and shows every case", async () => {
  const run = makeRun({ n: 300 });
  await withReport(htmlReport(run), async (page, watch) => {
    assert.equal(await count(page), "300 of 300 cases");
    assert.deepEqual(await allShown(page), new Set(unitIds(run)));
    // The summary and gates: judge has errors, so its gate fails.
    const outcome = await page.$eval("[data-outcome]", (e) => e.textContent);
    assert.equal(outcome, "failed");
    const text = await inPage<string>(page, "document.body.innerText");
    assert.match(text, /exact_match/);
    assert.match(text, /max_errors/);
    assert.match(text, /fake-model/);
    assert.doesNotMatch(text, /secret/, "a URL's password is not shown");
    assert.equal(await page.$$eval("svg", (s) => s.length), 2);
    assert.deepEqual(watch, { refused: [], dialogs: [], errors: [] });
  });
});

Deno.test("htmlReport's summary bounds a mean with failures as 0 and 1 only where there are failures, as stderr does", async () => {
  // 30 units: the judge errored on one, exact_match on none.
  const run = makeRun({ n: 30 });
  await withReport(htmlReport(run), async (page) => {
    const cells = await inPage<string[][]>(
      page,
      `Array.from(document.querySelector('section[aria-label^="Summary"] table').tBodies[0].rows)
        .map((r) => [r.cells[0].textContent, r.cells[4].textContent])`,
    );
    const byMetric = new Map(cells.map(([m, b]) => [m, b]));
    assert.equal(byMetric.get("exact_match"), "\u2013");
    assert.match(byMetric.get("judge")!, /^\[0\.\d{3}, 0\.\d{3}\]$/);
  });
});

Deno.test("htmlReport filters by metric, status and verdict, and searches input and output", async () => {
  const run = makeRun({ n: 300 });
  await withReport(htmlReport(run), async (page, watch) => {
    const expect = (pred: (s: ReportRun["scores"][number]) => boolean) =>
      new Set(run.scores.filter(pred).map((s) => s.unit_id)).size;
    await setSelect(page, "f-status", "error");
    assert.equal(
      await count(page),
      `${expect((s) => s.status === "error")} of 300 cases`,
    );
    await setSelect(page, "f-status", "blocked");
    assert.equal(await count(page), "7 of 300 cases");
    await setSelect(page, "f-status", "");
    await setSelect(page, "f-metric", "0"); // exact_match
    await setSelect(page, "f-pass", "fail");
    const failing = expect((s) =>
      s.metric === "exact_match" && s.passed === false
    );
    assert.equal(await count(page), `${failing} of 300 cases`);
    await setSelect(page, "f-pass", "pass");
    assert.equal(
      await count(page),
      `${
        expect((s) => s.metric === "exact_match" && s.passed === true)
      } of 300 cases`,
    );
    await setSelect(page, "f-pass", "");
    await setSelect(page, "f-metric", "");
    await search(page, "question 123 about");
    assert.equal(await count(page), "1 of 300 cases");
    assert.deepEqual(await shownUnits(page), ["cases.jsonl#123"]);
    await search(page, "the answer is 124");
    assert.deepEqual(await shownUnits(page), ["cases.jsonl#124"]);
    await search(page, "no such text anywhere");
    assert.equal(await count(page), "0 of 300 cases");
    assert.deepEqual(watch, { refused: [], dialogs: [], errors: [] });
  });
});

Deno.test("htmlReport sorts by any column, both ways", async () => {
  const run = makeRun({ n: 300 });
  const latency = (id: string) =>
    (run.units!.find((u) => u.unit_id === id)!.target as {
      latency_ms: number;
    }).latency_ms;
  await withReport(htmlReport(run), async (page) => {
    const first = async () => (await shownUnits(page))[0]!;
    const latencies = run.units.map((u) => latency(u.unit_id!));
    await page.click('button[data-col="3"]'); // latency
    assert.equal(latency(await first()), Math.min(...latencies));
    await page.click('button[data-col="3"]');
    assert.equal(latency(await first()), Math.max(...latencies));
    const sorted = await page.$eval(
      'button[data-col="3"]',
      (b) => b.parentElement!.getAttribute("aria-sort"),
    );
    assert.equal(sorted, "descending");
    await page.click('button[data-col="0"]'); // unit id, as strings
    assert.equal(await first(), "cases.jsonl#1");
    await page.click('button[data-col="0"]');
    assert.equal(await first(), "cases.jsonl#99");
    await page.click('button[data-col="2"]'); // judge: errors first
    const id = await first();
    assert.equal(
      run.scores.find((s) => s.unit_id === id && s.metric === "judge")!.status,
      "error",
    );
  });
});

Deno.test("htmlReport's search finds text however Unicode writes it: NFD accents, full-width letters", async () => {
  const run = makeRun({ n: 3 });
  // As macOS and some exports write it: e and a combining accent.
  run.units[0]!.output = "Café crème".normalize("NFD");
  run.units[1]!.output = "ＡＢＣ－１２３"; // full-width, as CJK input methods type it
  await withReport(htmlReport(run), async (page, watch) => {
    // A keyboard types é as one code point (NFC).
    for (
      const [query, want] of [
        ["café", ["cases.jsonl#1"]],
        ["CAFÉ CRÈME", ["cases.jsonl#1"]],
        ["abc-123", ["cases.jsonl#2"]],
        ["ＡＢＣ", ["cases.jsonl#2"]],
      ] as const
    ) {
      await search(page, query);
      assert.deepEqual(await shownUnits(page), want, query);
    }
    assert.deepEqual(watch, { refused: [], dialogs: [], errors: [] });
  });
});

Deno.test("htmlReport opens a unit's detail by click and by keyboard", async () => {
  const run = makeRun({ n: 300 });
  await withReport(htmlReport(run), async (page) => {
    await search(page, "question 25 about");
    await page.click(".gr");
    const detail = await page.$eval("#detail", (d) => ({
      hidden: d.hasAttribute("hidden"),
      text: d.textContent!,
    }));
    assert.equal(detail.hidden, false);
    for (
      const want of [
        "question 25 about refunds", // input
        "policy 25", // context
        "answer 25", // expected
        "the answer is unknown", // output
        "scorer error: timed out after 60 s", // a reason
        "scorer.timeout", // its diagnostic's code
        "latency_ms",
        "fake-model", // target facts
        "refunds", // metadata
      ]
    ) assert.ok(detail.text.includes(want), `detail shows ${want}`);
    await page.keyboard.press("Escape");
    assert.equal(
      await page.$eval("#detail", (d) => d.hasAttribute("hidden")),
      true,
    );
    // Keyboard only: focus the table, move down, open with Enter.
    await search(page, "");
    await page.focus("#grid");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    assert.equal(
      await page.$eval("#detail-title", (h) => h.textContent),
      "cases.jsonl#3",
    );
    assert.equal(
      await inPage(page, "document.activeElement?.id"),
      "detail",
    );
    await page.keyboard.press("Tab");
    assert.equal(
      await inPage(page, "document.activeElement?.id"),
      "close",
    );
    await page.keyboard.press("Enter");
    assert.equal(await inPage(page, "document.activeElement?.id"), "grid");
  });
});

Deno.test("htmlReport: hostile case fields change nothing and run nothing", async () => {
  const run = makeRun({ n: 100, hostile: true });
  // Hostile text in a metric's name and the title too.
  run.scores.push({
    ...run.scores[0]!,
    metric: "</script><img src=x onerror=alert(9)>",
  });
  const html = htmlReport(run, undefined, {
    title: "</title><script>alert(8)</script>",
  });
  assert.equal(
    html.match(/<script/g)?.length,
    2,
    "the two scripts of the page",
  );
  await withReport(html, async (page, watch) => {
    assert.equal(await count(page), "100 of 100 cases");
    const state = {
      pwned: await inPage(page, "typeof window.__pwned"),
      img: await tags(page, "img"),
      a: await tags(page, "a"),
      scripts: await tags(page, "script"),
      iframes: await tags(page, "iframe"),
      title: await inPage(page, "document.title"),
    };
    assert.deepEqual(state, {
      pwned: "undefined",
      img: 0,
      a: 0,
      scripts: 2,
      iframes: 0,
      title: "</title><script>alert(8)</script>",
    });
    // Every hostile unit: shown, opened, its text shown as text.
    const ids = unitIds(run).filter((id) =>
      HOSTILE.some((h) => id.includes(h))
    );
    assert.ok(ids.length >= 5);
    const seen = await allShown(page);
    for (const id of unitIds(run)) assert.ok(seen.has(id), id);
    for (const [i, bad] of HOSTILE.entries()) {
      // The page shows bidi controls as their codes, and searches what it shows.
      const shown = bad.replace(
        /[\u202a-\u202e\u2066-\u2069]/g,
        (c) => `\\u{${c.charCodeAt(0).toString(16).toUpperCase()}}`,
      );
      await search(page, shown);
      if (await count(page) === "0 of 100 cases") {
        throw new Error(`payload ${i} not found by search`);
      }
      await page.click(".gr");
      const text = await page.$eval("#detail", (d) => d.textContent!);
      assert.ok(text.includes(shown), `payload ${i} shown as text`);
      await page.keyboard.press("Escape");
    }
    // A bidi override cannot reach past its own text: none is in the page's text.
    const raw = await inPage<string>(page, "document.body.textContent");
    assert.doesNotMatch(raw, /[\u202a-\u202e\u2066-\u2069]/);
    assert.equal(
      await inPage(page, "typeof window.__pwned"),
      "undefined",
    );
    assert.deepEqual(watch, { refused: [], dialogs: [], errors: [] });
  });
});

Deno.test("htmlReport of two runs: the paired diff, newly failing then newly passing first, outputs side by side", async () => {
  const a = makeRun({ n: 200, runId: "run-a" });
  const b = makeRun({ n: 200, shift: 1, runId: "run-b" });
  // A unit only B has.
  b.units!.push({ ...b.units![0]!, example_id: "new#1", unit_id: "new#1" });
  b.scores.push({ ...b.scores[0]!, example_id: "new#1", unit_id: "new#1" });
  await withReport(htmlReport(a, b), async (page, watch) => {
    assert.equal(await count(page), "201 of 201 cases");
    const text = await inPage<string>(page, "document.body.innerText");
    assert.match(text, /B against A/);
    assert.match(text, /run-a/);
    assert.match(text, /run-b/);
    const changes = await page.$$eval(
      ".gr",
      (rows) => rows.map((r) => r.children[1]!.textContent),
    );
    assert.equal(changes[0], "newly failing");
    await setSelect(page, "f-change", "-1");
    const failing = Number((await count(page))!.split(" ")[0]);
    await setSelect(page, "f-change", "1");
    const passing = Number((await count(page))!.split(" ")[0]);
    assert.ok(failing > 0 && passing > 0);
    // The diff's newly_failing for exact_match equals the rows flagged.
    const diffRow = await page.$$eval(
      "section[aria-label=Diff] tbody tr",
      (rows) => rows.map((r) => [...r.children].map((c) => c.textContent)),
    );
    assert.equal(diffRow[0]![0], "exact_match");
    assert.equal(Number(diffRow[0]![9]), failing);
    assert.equal(Number(diffRow[0]![8]), passing);
    // Order: scrolling from the top, all newly failing before the newly passing.
    await setSelect(page, "f-change", "");
    const order = await inPage<number[]>(
      page,
      'JSON.parse(document.getElementById("report-data").textContent).rows.map((r) => r.ch)',
    );
    const firstOther = order.findIndex((c: number) => c !== -1);
    assert.equal(firstOther, failing);
    assert.ok(
      order.slice(failing, failing + passing).every((c: number) => c === 1),
    );
    await page.click(".gr");
    const sides = await page.$$eval(
      ".side > div",
      (cols) => cols.map((c) => c.textContent!),
    );
    assert.equal(sides.length, 2);
    assert.match(sides[0]!, /Run A[\s\S]*the answer is/);
    assert.match(sides[1]!, /Run B[\s\S]*the answer is/);
    assert.notEqual(sides[0], sides[1]);
    assert.deepEqual(watch, { refused: [], dialogs: [], errors: [] });
  });
});

Deno.test("htmlReport without units shows Scores only", async () => {
  const { units: _, ...run } = makeRun({ n: 50 });
  await withReport(htmlReport(run), async (page, watch) => {
    assert.equal(await count(page), "50 of 50 cases");
    await page.click(".gr");
    const text = await page.$eval(
      "#detail",
      (d) => d.textContent!,
    );
    assert.match(text, /Scores only/);
    assert.match(text, /exact_match/);
    assert.deepEqual(watch, { refused: [], dialogs: [], errors: [] });
  });
});

Deno.test("htmlReport with 100,000 units keeps under 5,000 DOM elements", async () => {
  const run = makeRun({ n: 100_000 });
  await withReport(htmlReport(run), async (page, watch) => {
    assert.equal(await count(page), "100000 of 100000 cases");
    const sizes = [await elements(page)];
    await page.$eval("#grid", (g) => {
      g.scrollIntoView();
      g.scrollTop = g.scrollHeight / 2;
    });
    await frame(page);
    await frame(page);
    const middle = await shownUnits(page);
    assert.ok(middle.includes("cases.jsonl#50000"), String(middle));
    sizes.push(await elements(page));
    // A row in the middle of the view (the sticky header covers the top one).
    const pick = middle[Math.floor(middle.length / 2)]!;
    await page.click(`.gr[data-unit="${pick}"]`);
    assert.equal(
      await page.$eval("#detail-title", (h) => h.textContent),
      pick,
    );
    sizes.push(await elements(page));
    await page.keyboard.press("Escape");
    await setSelect(page, "f-pass", "fail");
    sizes.push(await elements(page));
    await search(page, "about refunds");
    sizes.push(await elements(page));
    for (const n of sizes) assert.ok(n < 5000, `${n} elements`);
    assert.deepEqual(watch, { refused: [], dialogs: [], errors: [] });
  });
});

Deno.test("htmlReport is readable in the light and the dark theme, at 1280x800 and at a phone's width", async () => {
  const run = makeRun({ n: 300 });
  // The screenshots are for a person to look at: kept with
  // EVALPIPE_KEEP_SCREENSHOTS=1, else removed with the folder.
  const shots = await Deno.makeTempDir({ prefix: "evalpipe_report_shots_" });
  const keep = Deno.env.get("EVALPIPE_KEEP_SCREENSHOTS") === "1";
  try {
    await screenshotThemes(run, shots);
  } finally {
    if (keep) console.log(`screenshots in ${shots}`);
    else await Deno.remove(shots, { recursive: true });
  }
});

/** Shoots the report of `run` in both themes at two widths into `shots`, checking each. */
async function screenshotThemes(
  run: FixtureRun,
  shots: string,
): Promise<void> {
  const backgrounds: string[] = [];
  for (
    const viewport of [{ width: 1280, height: 800 }, {
      width: 390,
      height: 844,
    }]
  ) {
    await withReport(htmlReport(run), async (page) => {
      for (const theme of ["light", "dark"]) {
        await page.emulateMediaFeatures([
          { name: "prefers-color-scheme", value: theme },
        ]);
        const path = `${shots}/report-${theme}-${viewport.width}.png`;
        await page.screenshot({ path: path as `${string}.png` });
        assert.ok((await Deno.stat(path)).size > 10_000);
        backgrounds.push(
          await inPage(page, "getComputedStyle(document.body).backgroundColor"),
        );
        // Nothing wider than the viewport but the tables that scroll sideways.
        const overflow = await inPage<number>(
          page,
          "document.documentElement.scrollWidth - innerWidth",
        );
        assert.ok(
          overflow <= 0,
          `the page is ${overflow}px wider than the screen`,
        );
        const grid = await page.$eval(
          "#grid",
          (g) => g.getBoundingClientRect().width,
        );
        assert.ok(grid <= viewport.width);
      }
    }, viewport);
  }
  assert.deepEqual(backgrounds, [
    "rgb(255, 255, 255)",
    "rgb(15, 18, 22)",
    "rgb(255, 255, 255)",
    "rgb(15, 18, 22)",
  ]);
}

Deno.test("report A B of runs with different epochs pairs A's unit with B's first epoch, outputs side by side", async () => {
  await withTempDir(async (dir) => {
    const cases = [1, 2, 3].map((i) =>
      JSON.stringify({ id: `c${i}`, input: `q${i}`, expected: "yes" })
    );
    await Deno.writeTextFile(`${dir}/cases.jsonl`, cases.join("\n") + "\n");
    const suite = (answer: string) =>
      `dataset: cases.jsonl
target: { type: subprocess, cmd: "cat > /dev/null; echo ${answer}" }
scorers: [{ type: exact_match }]
`;
    await Deno.writeTextFile(`${dir}/a.yaml`, suite("no"));
    await Deno.writeTextFile(`${dir}/b.yaml`, suite("yes"));
    for (
      const args of [
        ["run", "a.yaml", "--record", "a.json"],
        ["run", "b.yaml", "--record", "b.json", "--epochs", "2"],
        ["report", "a.json", "b.json", "--html", "report.html"],
      ]
    ) {
      const r = await cli(args, dir);
      assert.equal(r.code, 0, r.stderr);
    }
    const html = await Deno.readTextFile(`${dir}/report.html`);
    await withReport(html, async (page, watch) => {
      // c1..c3 with both runs' epoch 1, then B's second epochs alone.
      assert.equal(await count(page), "6 of 6 cases");
      assert.deepEqual((await shownUnits(page)).slice(0, 3), [
        "cases.jsonl#c1@1",
        "cases.jsonl#c2@1",
        "cases.jsonl#c3@1",
      ]);
      await page.click(".gr");
      const sides = await page.$$eval(
        ".side > div",
        (cols) => cols.map((c) => c.textContent!),
      );
      assert.equal(sides.length, 2);
      assert.match(sides[0]!, /Run A[\s\S]*Output\s*no/);
      assert.match(sides[1]!, /Run B[\s\S]*Output\s*yes/);
      assert.deepEqual(watch, { refused: [], dialogs: [], errors: [] });
    });
  }, "evalpipe_report_");
});
