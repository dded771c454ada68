// `deno run -A bench/html_report_bench.ts [--units N] [--rounds N]`: the
// one-file HTML report of a run of 100,000 units. Its size per unit, and the
// time headless Chromium (Debian's, through puppeteer-core) takes from the
// start of navigation to the first rows shown (the table drawn and a frame
// painted), as a ratio to the same Chromium loading a bare page that holds the
// same JSON and only parses it (then paints one line). Alternating report and
// bare page in each round, a fresh tab each time; medians.

import { parseFlags } from "../src/cli/flags.ts";
import { htmlReport } from "../src/report/mod.ts";
import { makeRun } from "../tests/report/_report_fixture.ts";
import { launch } from "../tests/report/_browser.ts";

const { flags } = parseFlags(Deno.args, {
  units: { type: "integer", default: 100_000, help: "Units in the run" },
  rounds: { type: "integer", default: 7, help: "Loads of each page" },
});

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

const run = makeRun({ n: flags.units });
const built: number[] = [];
let html = "";
for (let i = 0; i < 3; i++) {
  const t = performance.now();
  html = htmlReport(run);
  built.push(performance.now() - t);
}
const bytes = new TextEncoder().encode(html).length;
const json =
  /<script type="application\/json" id="report-data">([^]*?)<\/script>/.exec(
    html,
  )![1]!;
const bare = `<!DOCTYPE html>
<html><head><meta charset="utf-8"></head><body>
<script type="application/json" id="report-data">${json}</script>
<script>
var d = JSON.parse(document.getElementById("report-data").textContent);
document.body.appendChild(document.createElement("p")).textContent = d.rows.length + " rows";
document.documentElement.setAttribute("data-ready", "1");
</script>
</body></html>
`;

const dir = await Deno.makeTempDir({ prefix: "evalpipe_bench_html_" });
const pages = { report: `${dir}/report.html`, bare: `${dir}/bare.html` };
await Deno.writeTextFile(pages.report, html);
await Deno.writeTextFile(pages.bare, bare);

const browser = await launch();
const times = { report: [] as number[], bare: [] as number[] };
const inPage = { report: [] as number[], bare: [] as number[] };
const heap = { report: [] as number[], bare: [] as number[] };
try {
  for (let round = 0; round < flags.rounds; round++) {
    const order = round % 2 === 0
      ? ["report", "bare"] as const
      : ["bare", "report"] as const;
    for (const which of order) {
      const page = await browser.newPage();
      await page.setViewport({ width: 1280, height: 800 });
      const t = performance.now();
      await page.goto(`file://${pages[which]}`, {
        waitUntil: "domcontentloaded",
      });
      await page.waitForSelector("html[data-ready]", { timeout: 120_000 });
      // Shown: a frame painted after the rows are in the document.
      const at = await page.evaluate(
        "new Promise((r) => requestAnimationFrame(() => setTimeout(() => r(performance.now()), 0)))",
      ) as number;
      times[which].push(performance.now() - t);
      inPage[which].push(at);
      heap[which].push((await page.metrics()).JSHeapUsedSize! / 2 ** 20);
      await page.close();
    }
  }
} finally {
  await browser.close();
  await Deno.remove(dir, { recursive: true });
}

const r = median(times.report);
const b = median(times.bare);
console.log(
  JSON.stringify({
    units: flags.units,
    rounds: flags.rounds,
    html_bytes: bytes,
    bytes_per_unit: Math.round(bytes / flags.units),
    json_bytes_per_unit: Math.round(json.length / flags.units),
    build_ms: Math.round(median(built)),
    first_rows_ms: Math.round(r),
    bare_page_ms: Math.round(b),
    ratio: Number((r / b).toFixed(2)),
    in_page_first_rows_ms: Math.round(median(inPage.report)),
    in_page_bare_ms: Math.round(median(inPage.bare)),
    js_heap_mib: {
      report: Math.round(median(heap.report)),
      bare: Math.round(median(heap.bare)),
    },
  }),
);
console.error(
  `HTML report of ${flags.units} units: ${(bytes / 2 ** 20).toFixed(1)} MiB, ${
    Math.round(bytes / flags.units)
  } bytes per unit; first rows shown ` +
    `after ${Math.round(r)} ms against ${Math.round(b)} ms for the bare page ` +
    `with the same JSON: ${(r / b).toFixed(2)}x (medians of ${flags.rounds})`,
);
