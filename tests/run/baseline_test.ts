import assert from "node:assert/strict";
import { cli, mergeShards, reportAgain, writeAnswersSuite } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { compareWithBaseline } from "../../src/run/mod.ts";
import { blocked, scored } from "../../src/score/mod.ts";

async function git(dir: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", {
    args,
    cwd: dir,
    stdout: "piped",
    stderr: "piped",
    env: {
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.com",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.com",
    },
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return text;
}

Deno.test("run --save-baseline writes a small deterministic file; --baseline gates on what changed", async () => {
  await withTempDir(async (dir) => {
    await git(dir, "init", "-q");
    await writeAnswersSuite(dir, { a: "1", b: "2", c: "3", d: "4" }, {
      a: "1",
      b: "2",
      c: "x",
      d: "4",
    });
    // From another folder: the baseline belongs to the config's.
    const saved = await cli(
      ["run", `${dir}/evalpipe.yaml`, "--save-baseline", "main"],
      "/",
    );
    assert.equal(saved.code, 0, saved.stderr);
    const path = `${dir}/.evalpipe/baselines/main.json`;
    const text = await Deno.readTextFile(path);
    assert.match(
      saved.stderr,
      /baseline saved to .*\.evalpipe\/baselines\/main\.json/,
    );
    // Reviewable: pretty-printed, stable keys, no times or run ids.
    assert.ok(
      text.startsWith(
        '{\n  "evalpipe_baseline": 1,\n  "epochs": 1,\n  "require": "all",\n  "case_fields": [\n    "input",\n    "expected",\n    "context",\n    "metadata"\n  ],\n  "units": [\n',
      ),
    );
    assert.doesNotMatch(text, /latency_ms|run_id|started_at|finished_at/);
    const file = JSON.parse(text);
    assert.deepEqual(file.units[0], {
      example_id: "d.jsonl#a",
      unit_id: "d.jsonl#a",
      input: "a",
      expected: "1",
      output: "1",
      scores: [{
        metric: "exact_match",
        status: "scored",
        validity: "valid",
        value: 1,
        passed: true,
        evaluator_version: "exact_match@1",
      }],
    });
    await git(dir, "add", "-A");
    await git(dir, "commit", "-q", "-m", "baseline");
    // The same system again: the same bytes, nothing to commit.
    const again = await cli(
      ["run", "evalpipe.yaml", "--save-baseline", "main"],
      dir,
    );
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await git(dir, "status", "--porcelain"), "");
    const unchanged = await cli(
      ["run", "evalpipe.yaml", "--baseline", "main"],
      dir,
    );
    assert.equal(unchanged.code, 0, unchanged.stderr);
    assert.match(unchanged.stderr, /no case changed/);

    // The change under review: a breaks, c is fixed, b leaves, e comes.
    await writeAnswersSuite(dir, { a: "1", c: "3", d: "4", e: "5" }, {
      a: "wrong",
      c: "3",
      d: "4",
      e: "5",
    });
    const changed = await cli(
      ["run", "evalpipe.yaml", "--baseline", "main"],
      dir,
    );
    assert.equal(changed.code, 1, changed.stderr);
    assert.match(
      changed.stderr,
      /newly failing \(1\):\n {2}d\.jsonl#a {2}exact_match {2}1\/1 → 0\/1\n/,
    );
    assert.match(
      changed.stderr,
      /fixed \(1\):\n {2}d\.jsonl#c {2}exact_match {2}0\/1 → 1\/1\n/,
    );
    assert.match(changed.stderr, /new cases \(1\): d\.jsonl#e\n/);
    assert.match(changed.stderr, /removed cases \(1\): d\.jsonl#b\n/);
    // a −1, c +1, d 0: Δ 0 ± t(0.975, 2) × 1/√3 = ±2.484, but a difference
    // of exact_match (0..1) lies within −1..1.
    assert.match(
      changed.stderr,
      /paired difference, now − baseline:\n {2}exact_match: Δ \+0\.000 \[-1\.000, \+1\.000\]\n/,
    );
    assert.match(
      changed.stderr,
      /evalpipe: regressed against baseline ".*main\.json": 1 newly failing/,
    );
    // A path names a baseline file as well as a name does.
    const byPath = await cli(
      ["run", "evalpipe.yaml", "--baseline", ".evalpipe/baselines/main.json"],
      dir,
    );
    assert.equal(byPath.code, 1);
    // The fix is committed as the new baseline; the next run is clean.
    await git(dir, "checkout", "--", ".");
    const missing = await cli(
      ["run", "evalpipe.yaml", "--baseline", "nope"],
      dir,
    );
    assert.equal(missing.code, 2);
    assert.match(
      missing.stderr,
      /Cannot read baseline ".*nope\.json": no such file/,
    );
    assert.equal(missing.stdout, "");
  });
});

Deno.test("report --markdown and --html of a record from run --baseline say what regressed, as run --markdown does", async () => {
  await withTempDir(async (dir) => {
    await writeAnswersSuite(dir, { a: "1", b: "2", c: "3" }, {
      a: "1",
      b: "2",
      c: "x",
    });
    const saved = await cli(
      ["run", "evalpipe.yaml", "--save-baseline", "main"],
      dir,
    );
    assert.equal(saved.code, 0, saved.stderr);
    // b breaks, c is fixed, d comes.
    await writeAnswersSuite(dir, { a: "1", b: "2", c: "3", d: "4" }, {
      a: "1",
      b: "wrong",
      c: "3",
      d: "4",
    });
    const run = await cli([
      "run",
      "evalpipe.yaml",
      "--baseline",
      "main",
      "--record",
      "r.json",
      "--markdown",
      "run.md",
    ], dir);
    assert.equal(run.code, 1, run.stderr);
    const record = JSON.parse(await Deno.readTextFile(`${dir}/r.json`));
    assert.equal(record.baseline.failed, true);
    assert.deepEqual(record.baseline.newly_failing, [
      {
        case: "d.jsonl#b",
        metric: "exact_match",
        baseline: [1, 1],
        now: [0, 1],
      },
    ]);
    assert.deepEqual(record.baseline.new_cases, ["d.jsonl#d"]);
    assert.equal(record.baseline.metrics[0].pairs, 3);
    assert.equal("regressions" in record.baseline.metrics[0], false);
    const metrics = record.baseline.metrics;
    // The record keeps what the run said: one Markdown from either.
    const { markdown, html } = await reportAgain(dir, "r.json", "run.md");
    assert.match(
      markdown,
      /^❌ regressed against baseline "\.\/\.evalpipe\/baselines\/main\.json"\\: 1 newly failing \\\(d\.jsonl\\#b on exact\\_match\\\) · 4 units/m,
    );
    assert.match(
      markdown,
      /### Against the baseline\n\nCompared with baseline "\.\/\.evalpipe\/baselines\/main\.json": ❌ 1 newly failing\n/,
    );
    assert.match(
      markdown,
      /^\| exact\\_match \| 3 \| 0\.667 \| 0\.667 \| \+0\.000 \[-1\.000, \+1\.000\] \| {2}\|$/m,
    );
    assert.match(
      markdown,
      /^\| d\.jsonl\\#b \| exact\\_match \| ❌ newly failing \| 1\/1 \| 0\/1 \|$/m,
    );
    assert.match(
      markdown,
      /^\| d\.jsonl\\#c \| exact\\_match \| ✅ fixed \| 0\/1 \| 1\/1 \|$/m,
    );
    assert.match(markdown, /^new cases \(1\): d\.jsonl\\#d$/m);
    assert.match(
      html,
      /\["baseline","regressed against baseline \\"\.\/\.evalpipe\/baselines\/main\.json\\": 1 newly failing \(d\.jsonl#b on exact_match\)"\]/,
    );

    // A record from before records kept the comparison renders as it did.
    delete record.baseline;
    await Deno.writeTextFile(`${dir}/old.json`, JSON.stringify(record));
    const old = await cli(["report", "old.json", "--markdown", "old.md"], dir);
    assert.equal(old.code, 0, old.stderr);
    const oldMarkdown = await Deno.readTextFile(`${dir}/old.md`);
    assert.doesNotMatch(oldMarkdown, /baseline/);
    assert.match(oldMarkdown, /^✅ no gate failed \(the config sets none\)/m);

    // Against a baseline of the same answers: no regression, said so.
    const now = await cli(
      ["run", "evalpipe.yaml", "--save-baseline", "now"],
      dir,
    );
    assert.equal(now.code, 0, now.stderr);
    const same = await cli(
      ["run", "evalpipe.yaml", "--baseline", "now", "--record", "same.json"],
      dir,
    );
    assert.equal(same.code, 0, same.stderr);
    const clean = await cli(
      ["report", "same.json", "--markdown", "same.md"],
      dir,
    );
    assert.equal(clean.code, 0, clean.stderr);
    const sameMarkdown = await Deno.readTextFile(`${dir}/same.md`);
    assert.match(sameMarkdown, /: ✅ no regression\n/);
    assert.match(sameMarkdown, /^No case changed\.$/m);
    assert.match(sameMarkdown, /^✅ no gate failed/m);

    // merge --baseline keeps the comparison in the merged record too.
    const merged = await mergeShards(dir, "evalpipe.yaml", [
      "--record",
      "m.json",
      "--baseline",
      "main",
    ]);
    assert.equal(merged.code, 1, merged.stderr);
    const m = JSON.parse(await Deno.readTextFile(`${dir}/m.json`));
    assert.deepEqual(m.baseline.newly_failing, [
      {
        case: "d.jsonl#b",
        metric: "exact_match",
        baseline: [1, 1],
        now: [0, 1],
      },
    ]);
    assert.equal(m.baseline.path, "./.evalpipe/baselines/main.json");
    // Its Δ interval is clamped to −1..1 as run's is: the shards' records
    // keep exact_match's range.
    assert.deepEqual(m.baseline.metrics[0].ci95, [-1, 1]);
    assert.deepEqual(m.baseline.metrics, metrics);
  });
});

Deno.test("run --baseline in a matrix compares target by target", async () => {
  await withTempDir(async (dir) => {
    await writeAnswersSuite(dir, { a: "1", b: "2" }, { a: "1", b: "2" });
    await Deno.writeTextFile(
      `${dir}/evalpipe.yaml`,
      "dataset: d.jsonl\ntargets:\n  one: { type: subprocess, cmd: python3 app.py }\n" +
        "  two: { type: subprocess, cmd: python3 app.py }\nmatrix: [one, two]\n" +
        "scorers: [{ type: exact_match }]\n",
    );
    const saved = await cli(
      ["run", "evalpipe.yaml", "--save-baseline", "m"],
      dir,
    );
    assert.equal(saved.code, 0, saved.stderr);
    const file = JSON.parse(
      await Deno.readTextFile(`${dir}/.evalpipe/baselines/m.json`),
    );
    assert.deepEqual(file.targets, ["one", "two"]);
    assert.equal(file.units[1].target_name, "two");
    await Deno.writeTextFile(
      `${dir}/answers.json`,
      JSON.stringify({ a: "1", b: "no" }),
    );
    const out = await cli(["run", "evalpipe.yaml", "--baseline", "m"], dir);
    assert.equal(out.code, 1);
    assert.match(
      out.stderr,
      /newly failing \(2\):\n {2}d\.jsonl#b~one .*\n {2}d\.jsonl#b~two /,
    );
  });
});

// A system right on its first `right` calls of each case and wrong after:
// epochs that disagree. One call at a time, so the count is exact.
const FLAKY = `import json, sys, os
case = json.load(sys.stdin)
path = "count-" + case["input"]
n = int(open(path).read()) if os.path.exists(path) else 0
open(path, "w").write(str(n + 1))
right = int(open("right").read())
print("1" if n % 5 < right else "wrong")
`;

async function flakySuite(dir: string): Promise<void> {
  await Deno.writeTextFile(`${dir}/app.py`, FLAKY);
  await Deno.writeTextFile(
    `${dir}/d.jsonl`,
    '{"id":"a","input":"a","expected":"1"}\n',
  );
  await Deno.writeTextFile(
    `${dir}/evalpipe.yaml`,
    "dataset: d.jsonl\n" +
      "target: { type: subprocess, cmd: python3 app.py }\n" +
      "scorers: [{ type: exact_match }]\nepochs: { n: 5, require: majority }\nconcurrency: 1\n",
  );
}

async function runWith(dir: string, right: number, ...args: string[]) {
  await Deno.writeTextFile(`${dir}/right`, String(right));
  for await (const e of Deno.readDir(dir)) {
    if (e.name.startsWith("count-")) await Deno.remove(`${dir}/${e.name}`);
  }
  return await cli(["run", "evalpipe.yaml", ...args], dir);
}

Deno.test("run --baseline with epochs reports a flaky case as flaky unless its pass fraction fell significantly", async () => {
  await withTempDir(async (dir) => {
    await flakySuite(dir);
    const saved = await runWith(dir, 5, "--save-baseline", "main");
    assert.equal(saved.code, 0, saved.stderr);
    // 5/5 → 2/5: now failing under majority, but flaky; Fisher's one-sided
    // p = C(7,5)·C(3,0)/C(10,5) = 21/252 = 0.083: not significant.
    const flaky = await runWith(dir, 2, "--baseline", "main");
    assert.equal(flaky.code, 0, flaky.stderr);
    assert.match(
      flaky.stderr,
      /flaky, epochs disagree \(not a regression\) \(1\):\n {2}d\.jsonl#a {2}exact_match {2}5\/5 → 2\/5 {2}\(Fisher p = 0\.083\)/,
    );
    assert.match(
      flaky.stderr,
      /exact_match: 0 of 1 cases pass \(require majority: more than half of 5 epochs\), 1 flaky/,
    );
    // 5/5 → 1/5: p = C(6,5)·C(4,0)/252 = 6/252 = 0.024 < 0.05: a regression.
    const fell = await runWith(dir, 1, "--baseline", "main");
    assert.equal(fell.code, 1, fell.stderr);
    assert.match(
      fell.stderr,
      /newly failing \(1\):\n {2}d\.jsonl#a {2}exact_match {2}5\/5 → 1\/5 {2}\(Fisher p = 0\.024\)/,
    );
    // 5/5 → 3/5: still passes by majority; flaky, no regression.
    const most = await runWith(dir, 3, "--baseline", "main");
    assert.equal(most.code, 0, most.stderr);
    assert.match(most.stderr, /5\/5 → 3\/5 {2}\(Fisher p = 0\.222\)/);
  });
});

Deno.test("compareWithBaseline follows the requirement over epochs and counts errors as failures", () => {
  const at = (id: string, values: (number | "b")[]) =>
    values.map((v, i) => {
      const ids = { example_id: id, unit_id: `${id}@${i + 1}` };
      return v === "b"
        ? blocked("m", "target error: down", ids)
        : scored("m", v, ids);
    });
  // d#1: 3 epochs all pass, then all blocked (0/3, unanimous): newly failing.
  // d#2: 0/3, then 3/3: fixed.
  const c = compareWithBaseline(
    [...at("d#1", [1, 1, 1]), ...at("d#2", [0, 0, 0])],
    [...at("d#1", ["b", "b", "b"]), ...at("d#2", [1, 1, 1])],
    "any",
  );
  assert.deepEqual(c.newly_failing, [{
    case: "d#1",
    metric: "m",
    baseline: [3, 3],
    now: [0, 3],
  }]);
  assert.deepEqual(c.fixed.map((x) => x.case), ["d#2"]);
  assert.equal(c.failed, true);
  // Under "any", 1/3 passes: d#1 at 3/3 → 1/3 is flaky, p = C(4,3)C(2,0)/C(6,3) = 4/20.
  const any = compareWithBaseline(
    at("d#1", [1, 1, 1]),
    at("d#1", [1, 0, 0]),
    "any",
  );
  assert.equal(any.flaky.length, 1);
  assert.ok(Math.abs(any.flaky[0]!.p_value! - 0.2) < 1e-12);
  assert.equal(any.failed, false);
});

Deno.test("run --save-baseline keeps no secret a target echoed", async () => {
  const token = "tok-SECRET-4242";
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request) =>
      Response.json({
        answer: `you sent ${request.headers.get("authorization")}`,
      }),
  );
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input":"q","expected":"a"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/evalpipe.yaml`,
      `dataset: d.jsonl\ntarget:\n  type: http\n  url: http://127.0.0.1:${server.addr.port}/\n` +
        '  headers: { authorization: "Bearer ${BOT_TOKEN}" }\n  body: { q: "{{input}}" }\n  output: answer\n' +
        "scorers: [{ type: exact_match }]\n",
    );
    const out = await cli(
      ["run", "evalpipe.yaml", "--save-baseline", "main", "--no-cache"],
      dir,
      { BOT_TOKEN: token },
    );
    // Its one case blocked: nothing measured, the implicit gate fails.
    assert.equal(out.code, 1, out.stderr);
    const text = await Deno.readTextFile(
      `${dir}/.evalpipe/baselines/main.json`,
    );
    // The answer that held the token is not kept at all.
    assert.match(text, /answered with a secret the config sends/);
    assert.doesNotMatch(text, /you sent/);
    assert.doesNotMatch(text, /SECRET/);
    assert.doesNotMatch(out.stderr, /SECRET/);
  });
});

Deno.test("run --resume --record --save-baseline keeps the earlier units' inputs and outputs", async () => {
  await withTempDir(async (dir) => {
    await writeAnswersSuite(dir, { a: "1", b: "2", c: "3", d: "4" }, {
      a: "1",
      b: "x",
      c: "3",
      d: "4",
    });
    const config = `${dir}/evalpipe.yaml`;
    const whole = await cli(
      ["run", config, "--out", "s.ndjson", "--record", "r.json"],
      dir,
    );
    assert.equal(whole.code, 0, whole.stderr);
    const full = await cli(["run", config, "--save-baseline", "full"], dir);
    assert.equal(full.code, 0, full.stderr);
    // As if the run had stopped after two cases: resume does the rest.
    const lines = (await Deno.readTextFile(`${dir}/s.ndjson`)).split("\n");
    await Deno.writeTextFile(
      `${dir}/s.ndjson`,
      lines.slice(0, 2).join("\n") + "\n",
    );
    const resumed = await cli([
      "run",
      config,
      "--out",
      "s.ndjson",
      "--record",
      "r.json",
      "--resume",
      "--save-baseline",
      "resumed",
    ], dir);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /after 2 already there/);
    const folder = `${dir}/.evalpipe/baselines`;
    const text = await Deno.readTextFile(`${folder}/resumed.json`);
    // Case a and b were scored before the resume: their outputs are kept.
    assert.match(
      text,
      /"unit_id": "d\.jsonl#b",\n\s+"input": "b",\n\s+"expected": "2",\n\s+"output": "x"/,
    );
    assert.equal(text, await Deno.readTextFile(`${folder}/full.json`));
  });
});

Deno.test("diff, view and aggregate read a saved baseline as the run it keeps, not as lines of Scores", async () => {
  await withTempDir(async (dir) => {
    await writeAnswersSuite(dir, { a: "1", b: "2", c: "3" }, {
      a: "1",
      b: "2",
      c: "x",
    });
    const saved = await cli(
      ["run", "evalpipe.yaml", "--save-baseline", "main", "--out", "b.ndjson"],
      dir,
    );
    assert.equal(saved.code, 0, saved.stderr);
    const base = ".evalpipe/baselines/main.json";
    const diff = await cli(["diff", base, "b.ndjson"], dir);
    assert.equal(diff.code, 0, diff.stderr);
    assert.equal(
      diff.stderr.split("\n")[0],
      `evalpipe: "${base}" is a baseline (run --save-baseline): 3 Scores read`,
    );
    assert.doesNotMatch(diff.stderr, /Malformed/);
    const line = JSON.parse(diff.stdout);
    assert.deepEqual([line.pairs, line.mean_a, line.mean_b], [3, 2 / 3, 2 / 3]);
    const view = await cli(["view", base], dir);
    assert.equal(view.code, 0, view.stderr);
    assert.match(view.stdout, /^exact_match +0\.667 /m);
    // aggregate: the same figures as from the run's own Scores.
    const fromBase = await cli(["aggregate", base], dir);
    assert.equal(fromBase.code, 0, fromBase.stderr);
    assert.equal(
      fromBase.stderr,
      `evalpipe: "${base}" is a baseline (run --save-baseline): 3 Scores read\n`,
    );
    const fromScores = await cli(["aggregate", "b.ndjson"], dir);
    assert.deepEqual(
      JSON.parse(fromBase.stdout),
      JSON.parse(fromScores.stdout),
    );
  });
});

Deno.test("run --baseline fails, saying why, when the run cannot be compared with the baseline", async () => {
  await withTempDir(async (dir) => {
    await writeAnswersSuite(dir, { a: "1", b: "2", c: "3" }, {
      a: "1",
      b: "2",
      c: "3",
    });
    const saved = await cli(
      ["run", "evalpipe.yaml", "--save-baseline", "main"],
      dir,
    );
    assert.equal(saved.code, 0, saved.stderr);
    // The dataset renamed, and case b now wrong: no case pairs, so the
    // regression cannot be seen; the run must not pass as unchanged.
    await Deno.rename(`${dir}/d.jsonl`, `${dir}/cases.jsonl`);
    await Deno.writeTextFile(
      `${dir}/evalpipe.yaml`,
      (await Deno.readTextFile(`${dir}/evalpipe.yaml`)).replace(
        "d.jsonl",
        "cases.jsonl",
      ),
    );
    await Deno.writeTextFile(
      `${dir}/answers.json`,
      JSON.stringify({ a: "1", b: "7", c: "3" }),
    );
    const run = await cli(
      ["run", "evalpipe.yaml", "--baseline", "main", "--markdown", "m.md"],
      dir,
      { GITHUB_ACTIONS: "true" },
    );
    assert.equal(run.code, 1, run.stderr);
    // Where CI users look: an annotation and the Markdown's headline.
    assert.match(run.stderr, /^::error[^\n]*cannot compare with baseline/m);
    assert.match(
      await Deno.readTextFile(`${dir}/m.md`),
      /cannot compare with baseline/,
    );
    assert.doesNotMatch(run.stderr, /regressed against baseline [^\n]*: $/m);
    assert.match(
      run.stderr,
      /evalpipe: cannot compare with baseline ".*main\.json": the runs share 0 examples of A's 3 and B's 3, under half/,
    );
    assert.match(
      run.stderr,
      /cannot compare with baseline .*: exact_match: no example is measured in both runs/,
    );
  });
  // The library says so too.
  const s = (id: string) => scored("m", 1, { example_id: id, unit_id: id });
  const c = compareWithBaseline(
    [s("a#1"), s("a#2")],
    [s("b#1"), s("b#2")],
    "all",
  );
  assert.equal(c.failed, true);
  assert.equal(c.unfit.length, 2);
  assert.deepEqual(c.newly_failing, []);
});

Deno.test("compareWithBaseline pairs a case whose id the baseline wrote in NFD and the run in NFC, and names it as each wrote it", () => {
  const nfc = "data.jsonl#Genève";
  const nfd = nfc.normalize("NFD");
  const s = (id: string, v: number) =>
    scored("m", v, { example_id: id, unit_id: id });
  const c = compareWithBaseline(
    [s(nfd, 1), s("data.jsonl#gone", 1), s("data.jsonl#x", 1)],
    [s(nfc, 0), s("data.jsonl#x", 1)],
    "all",
  );
  assert.deepEqual(c.newly_failing.map((x) => x.case), [nfc]);
  assert.deepEqual(c.new_cases, []);
  assert.deepEqual(c.removed_cases, ["data.jsonl#gone"]);
  const back = compareWithBaseline(
    [s(nfc, 1)],
    [s(nfd, 1), s("d#new", 1)],
    "all",
  );
  assert.deepEqual(back.new_cases, ["d#new"]);
  assert.deepEqual(back.metrics.map((l) => l.pairs), [1]);
});

Deno.test("run --baseline names a metric whose evaluator changed since the baseline (a judge's rubric now a criterion, a scorer's options), so a case's change is not read as the system's alone", async () => {
  await withTempDir(async (dir) => {
    await writeAnswersSuite(dir, { a: "x", b: "y", c: "z" }, {
      a: "x",
      b: "Y",
      c: "z",
    });
    const saved = await cli(
      ["run", "evalpipe.yaml", "--save-baseline", "main"],
      dir,
    );
    assert.equal(saved.code, 0, saved.stderr);
    // The same system, measured another way: b passes now.
    await Deno.writeTextFile(
      `${dir}/evalpipe.yaml`,
      "dataset: d.jsonl\ntarget: { type: subprocess, cmd: python3 app.py }\n" +
        "scorers: [{ type: exact_match, ignore_case: true }]\n",
    );
    const now = await cli(["run", "evalpipe.yaml", "--baseline", "main"], dir);
    assert.equal(now.code, 0, now.stderr);
    assert.match(now.stderr, /^fixed \(1\):\n {2}d\.jsonl#b {2}exact_match/m);
    assert.match(
      now.stderr,
      /^the evaluator of exact_match changed since the baseline \(exact_match@1 → exact_match@1\+ignore_case\): its cases are compared all the same, so a change may be the evaluator's; save a new baseline once it is accepted$/m,
    );
    // Measured as the baseline was: nothing to say.
    await writeAnswersSuite(dir, { a: "x", b: "y", c: "z" }, {
      a: "x",
      b: "Y",
      c: "z",
    });
    const same = await cli(["run", "evalpipe.yaml", "--baseline", "main"], dir);
    assert.equal(same.code, 0, same.stderr);
    assert.doesNotMatch(same.stderr, /evaluator of/);
  });
});

Deno.test("run and merge --save-baseline under a file where its folder should be: an error naming the baseline, no stack trace", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      '{"id":"a","input":"x","output":"x","expected":"x"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    // "taken" is a file: the baseline's folder cannot be made. Before, the
    // mkdir's AlreadyExists escaped as an uncaught error with its stack.
    await Deno.writeTextFile(`${dir}/taken`, "");
    const shard = await cli(
      ["run", "suite.yaml", "--shard", "1/1", "--record", "s1.json"],
      dir,
    );
    assert.equal(shard.code, 0, shard.stderr);
    // Deeper (taken/sub/b.json), mkdir says ENOTDIR: the file in the way
    // is named all the same, as the README says.
    for (const to of ["taken/b.json", "taken/sub/b.json"]) {
      for (
        const args of [
          ["run", "suite.yaml"],
          ["merge", "s1.json"],
        ]
      ) {
        const r = await cli([...args, "--save-baseline", to], dir);
        assert.equal(r.code, 2, r.stderr);
        assert.ok(
          r.stderr.split("\n").includes(
            `evalpipe: Cannot write baseline "${to}": "taken" is a file, not a folder`,
          ),
          r.stderr,
        );
        assert.doesNotMatch(r.stderr, /^\s+at /m);
      }
    }
  });
});
