// The HTML report's page as text: what it embeds, what it allows, what it
// computes. The browser tests (html_browser_test.ts) open it.

import assert from "node:assert/strict";
import { htmlReport, reportPolicy } from "../../src/report/mod.ts";
import { diffScores } from "../../src/diff/mod.ts";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { HOSTILE, makeRun } from "./_report_fixture.ts";

/** The page's data, read back as its script reads it. */
function dataOf(html: string) {
  const m =
    /<script type="application\/json" id="report-data">([^]*?)<\/script>/
      .exec(html);
  assert.ok(m !== null, "the data block");
  return JSON.parse(m[1]!);
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(text),
  );
  return btoa(String.fromCharCode(...new Uint8Array(digest)));
}

Deno.test("htmlReport embeds hostile text as inert JSON that reads back the same", () => {
  const run = makeRun({ n: 60, hostile: true });
  const html = htmlReport(run);
  const block = /id="report-data">([^]*?)<\/script>/.exec(html)![1]!;
  assert.doesNotMatch(block, /[<>&\u202a-\u202e\u2066-\u2069]/);
  const data = dataOf(html);
  const outputs = data.rows.map((r: { a: { out: unknown } }) => r.a.out);
  for (const bad of HOSTILE.slice(0, 6)) assert.ok(outputs.includes(bad), bad);
  assert.equal(data.rows.length, 60);
  // The page has exactly its own two scripts and loads nothing.
  assert.equal(html.match(/<script\b/g)?.length, 2);
  const markup = html.replace(block, "");
  assert.doesNotMatch(markup, /\s(src|href|action|srcset)=/i);
});

Deno.test("htmlReport allows by hash exactly the script and the styles it inlines", async () => {
  const html = htmlReport(makeRun({ n: 3 }));
  const script = /<script>([^]*?)<\/script>/.exec(html)![1]!;
  const style = /<style>([^]*?)<\/style>/.exec(html)![1]!;
  const policy = reportPolicy();
  assert.ok(html.includes(`content="${policy}"`));
  assert.equal(
    policy,
    `default-src 'none'; script-src 'sha256-${await sha256(script)}'; ` +
      `style-src 'sha256-${await sha256(style)}'; img-src 'none'; ` +
      "base-uri 'none'; form-action 'none'",
  );
  // The policy comes before anything it governs.
  assert.ok(html.indexOf("Content-Security-Policy") < html.indexOf("<style>"));
});

Deno.test("htmlReport shows the gates with their outcome, and hides a URL's password", () => {
  const data = dataOf(htmlReport(makeRun({ n: 100 })));
  const [run] = data.runs;
  assert.equal(run.outcome, "failed");
  assert.deepEqual(
    run.gates.map((g: { gate: string; held: boolean }) => [g.gate, g.held]),
    [["min_pass_rate", true], ["max_errors", false]],
  );
  const facts = Object.fromEntries(run.facts);
  assert.equal(facts.target, "openai: http://127.0.0.1:9/v1");
  assert.equal(facts.units, "100");
  assert.equal(facts.duration, "90.0 s");
  assert.ok(!JSON.stringify(data).includes("secret"));
});

Deno.test("htmlReport's cost fact counts one priced unit in the singular", () => {
  const run = makeRun({ n: 3 });
  const priced = run.units[0]!;
  priced.target = { ...(priced.target as object), cost_usd: 0.25 };
  const facts = Object.fromEntries(dataOf(htmlReport(run)).runs[0].facts);
  assert.equal(facts.cost, "0.2500 (1 unit priced of 3)");
  run.units[1]!.target = { ...(run.units[1]!.target as object), cost: 0.5 };
  const two = Object.fromEntries(dataOf(htmlReport(run)).runs[0].facts);
  assert.equal(two.cost, "0.7500 (2 units priced of 3)");
});

Deno.test("htmlReport of two runs: newly failing rows first, counted as diffScores counts them", () => {
  const a = makeRun({ n: 120 });
  const b = makeRun({ n: 120, shift: 1 });
  const data = dataOf(htmlReport(a, b));
  const lines = diffScores(a.scores, b.scores);
  assert.deepEqual(
    data.diff.map((l: { newly_failing: number }) => l.newly_failing),
    lines.map((l) => l.newly_failing),
  );
  const ch = data.rows.map((r: { ch: number }) => r.ch);
  const failing = ch.filter((c: number) => c === -1).length;
  const exact = lines.find((l) => l.metric === "exact_match")!;
  // Here only exact_match flips, so the rows flagged are its flips.
  assert.equal(failing, exact.newly_failing);
  assert.equal(ch.filter((c: number) => c === 1).length, exact.newly_passing);
  assert.deepEqual(
    ch,
    [...ch].sort((x: number, y: number) => {
      const rank = (c: number) => c === -1 ? 0 : c === 1 ? 1 : 2;
      return rank(x) - rank(y);
    }),
  );
  assert.ok(data.rows[0].a.out !== data.rows[0].b.out);
});

const CONFIG = "dataset: d.jsonl\ntarget: { type: replay }\n" +
  "scorers: [{ type: exact_match }]\ngates: { exact_match: { min_mean: 0.1 } }\n";
const DATA = [
  '{"id":"a","input":"q1","output":"</script><script>alert(1)</script>","expected":"x"}',
  '{"id":"b","input":"q2","output":"yes","expected":"yes"}',
].join("\n") + "\n";

Deno.test("cli run --html writes the report; report RECORD [B] --html writes it from records", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/s.yaml`, CONFIG);
    await Deno.writeTextFile(`${dir}/d.jsonl`, DATA);
    const ran = await cli(
      ["run", "s.yaml", "--html", "run.html", "--record", "r.json"],
      dir,
    );
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stderr, /^evalpipe: HTML report written to run\.html$/m);
    const page = await Deno.readTextFile(`${dir}/run.html`);
    const data = dataOf(page);
    assert.deepEqual(data.rows.map((r: { id: string }) => r.id), [
      "d.jsonl#a",
      "d.jsonl#b",
    ]);
    assert.equal(data.runs[0].outcome, "passed");
    // Without --record, no record is left behind.
    const bare = await cli(["run", "s.yaml", "--html", "bare.html"], dir);
    assert.equal(bare.code, 0, bare.stderr);
    assert.equal(
      dataOf(await Deno.readTextFile(`${dir}/bare.html`)).rows.length,
      2,
    );
    const left = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    assert.deepEqual(left, [
      "bare.html",
      "d.jsonl",
      "r.json",
      "run.html",
      "s.yaml",
    ]);

    const one = await cli(["report", "r.json", "--html", "one.html"], dir);
    assert.equal(one.code, 0, one.stderr);
    assert.equal(one.stdout, "");
    assert.equal(
      dataOf(await Deno.readTextFile(`${dir}/one.html`)).runs.length,
      1,
    );
    const two = await cli(
      ["report", "r.json", "r.json", "--html", "two.html"],
      dir,
    );
    assert.equal(two.code, 0, two.stderr);
    const diff = dataOf(await Deno.readTextFile(`${dir}/two.html`)).diff;
    assert.equal(diff[0].pairs, 2);
    assert.equal(diff[0].delta, 0);
  });
});

Deno.test("cli report: usage errors exit 2 and say why", async () => {
  await withTempDir(async (dir) => {
    const none = await cli(["report", "r.json"], dir);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /report needs a report to write: --html FILE/);
    const three = await cli(["report", "a", "b", "c", "--html", "x.html"], dir);
    assert.equal(three.code, 2);
    assert.match(three.stderr, /report takes one RunRecord, or two/);
    const missing = await cli(["report", "nope.json", "--html", "x.html"], dir);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /nope\.json/);
    await Deno.writeTextFile(
      `${dir}/s.ndjson`,
      '{"metric":"m","status":"scored","validity":"valid","value":1,"passed":true,"evaluator_version":"m@1","example_id":"d#1"}\n',
    );
    const bad = await cli([
      "report",
      "s.ndjson",
      "--html",
      "no/such/dir/x.html",
    ], dir);
    assert.equal(bad.code, 2);
    assert.match(
      bad.stderr,
      /^evalpipe: Cannot write HTML report "no\/such\/dir\/x\.html": /m,
    );
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), [
      "s.ndjson",
    ]);
    const scores = await cli(["report", "s.ndjson", "--html", "x.html"], dir);
    assert.equal(scores.code, 0, scores.stderr);
    assert.equal(
      dataOf(await Deno.readTextFile(`${dir}/x.html`)).rows[0].id,
      "d#1",
    );
  });
});

Deno.test("htmlReport: a metric that measured nothing fails the outcome, gated or not", async () => {
  const { errored, scored } = await import("../../src/score/mod.ts");
  const run = {
    scores: [
      scored("kept", 1, { example_id: "d#1", unit_id: "d#1" }),
      errored("broken", "scorer error: exit 1", {
        example_id: "d#1",
        unit_id: "d#1",
      }),
    ],
  };
  const [page] = dataOf(htmlReport(run)).runs;
  assert.equal(page.outcome, "failed");
  assert.deepEqual(
    page.gates.map((
      g: { metric: string; gate: string; held: boolean },
    ) => [g.metric, g.gate, g.held]),
    [["broken", "nothing measured", false]],
  );
  assert.match(
    page.gates[0].message,
    /^broken: nothing measured: 1 error of 1 Score/,
  );
});

Deno.test("cli run --html: a missing folder exits 2 before any call, as report --html does; an input is never overwritten", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/s.yaml`, CONFIG);
    await Deno.writeTextFile(`${dir}/d.jsonl`, DATA);
    // A folder that is not there is a mistake in the command line: refused
    // before any call, with the code and the words of `report --html`.
    const lost = await cli(
      ["run", "s.yaml", "--html", "no/such/dir/r.html", "--out", "s.ndjson"],
      dir,
    );
    assert.equal(lost.code, 2, lost.stderr);
    const words =
      /^evalpipe: Cannot write HTML report "no\/such\/dir\/r\.html": no such folder "no\/such\/dir"$/m;
    assert.match(lost.stderr, words);
    await assert.rejects(Deno.stat(`${dir}/s.ndjson`), Deno.errors.NotFound);
    await Deno.writeTextFile(`${dir}/r.json`, "");
    const ran = await cli(["run", "s.yaml", "--record", "r.json"], dir);
    assert.equal(ran.code, 0, ran.stderr);
    const report = await cli(
      ["report", "r.json", "--html", "no/such/dir/r.html"],
      dir,
    );
    assert.equal(report.code, lost.code);
    assert.match(report.stderr, words);
    // A file where the folder should be, for every report run writes.
    for (const flag of ["--html", "--junit", "--markdown"]) {
      const notDir = await cli(["run", "s.yaml", flag, "d.jsonl/r"], dir);
      assert.equal(notDir.code, 2, notDir.stderr);
      assert.match(notDir.stderr, /: "d\.jsonl" is not a folder$/m);
      assert.equal(notDir.stdout, "");
    }
    const same = await cli(["run", "s.yaml", "--html", "d.jsonl"], dir);
    assert.equal(same.code, 2, same.stderr);
    assert.match(same.stderr, /--html/);
    assert.equal(await Deno.readTextFile(`${dir}/d.jsonl`), DATA);
    // No temporary record is left behind either way.
    const temps = [...Deno.readDirSync(Deno.env.get("TMPDIR") ?? "/tmp")]
      .filter((e) => e.name.startsWith("evalpipe-record-"));
    assert.deepEqual(temps, []);
  });
});

Deno.test("report A B --html counts pass flips by the runs' epochs.require, as diff A B does", async () => {
  // One case over 3 epochs: run A answers it right once, run B twice. Under
  // `require: all` it fails in both (no flip); under majority it would flip.
  let right = 1;
  let calls = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      const body = await request.json();
      const answer = calls++ % 3 < right ? body.input : "wrong";
      return Response.json({ answer });
    },
  );
  try {
    await withTempDir(async (dir) => {
      await Deno.writeTextFile(
        `${dir}/d.jsonl`,
        '{"input":"q","expected":"q"}\n',
      );
      await Deno.writeTextFile(
        `${dir}/s.yaml`,
        `dataset: d.jsonl
target: { type: http, url: "http://127.0.0.1:${server.addr.port}/", body: { input: "{{input}}" }, output: answer }
scorers: [{ type: exact_match }]
epochs: { n: 3, require: all }
concurrency: 1
`,
      );
      const a = await cli(
        ["run", "s.yaml", "--record", "a.json", "--out", "a.ndjson"],
        dir,
      );
      assert.equal(a.code, 0, a.stderr);
      right = 2;
      const b = await cli(
        [
          "run",
          "s.yaml",
          "--record",
          "b.json",
          "--out",
          "b.ndjson",
          "--cache",
          "live",
        ],
        dir,
      );
      assert.equal(b.code, 0, b.stderr);
      const diff = await cli(["diff", "a.json", "b.json"], dir);
      assert.equal(diff.code, 0, diff.stderr);
      const [line] = diff.stdout.trim().split("\n").map((l) => JSON.parse(l));
      assert.deepEqual([line.newly_passing, line.newly_failing], [0, 0]);
      const two = await cli(
        ["report", "a.json", "b.json", "--html", "two.html"],
        dir,
      );
      assert.equal(two.code, 0, two.stderr);
      const { regressions: _, ...page } = line;
      assert.deepEqual(
        dataOf(await Deno.readTextFile(`${dir}/two.html`)).diff,
        [page],
      );
      // Scores files: diff reads the requirement from their sidecars, and
      // so does the page.
      const files = await cli(["diff", "a.ndjson", "b.ndjson"], dir);
      assert.equal(files.code, 0, files.stderr);
      const [fileLine] = files.stdout.trim().split("\n").map((l) =>
        JSON.parse(l)
      );
      assert.deepEqual([fileLine.newly_passing, fileLine.newly_failing], [
        0,
        0,
      ]);
      const fromFiles = await cli(
        ["report", "a.ndjson", "b.ndjson", "--html", "files.html"],
        dir,
      );
      assert.equal(fromFiles.code, 0, fromFiles.stderr);
      const { regressions: __, ...filePage } = fileLine;
      assert.deepEqual(
        dataOf(await Deno.readTextFile(`${dir}/files.html`)).diff,
        [filePage],
      );
    });
  } finally {
    await server.shutdown();
  }
});
