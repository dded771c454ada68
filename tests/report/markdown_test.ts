// Markdown reports and GitHub Actions output: `--markdown`, the step summary
// GITHUB_STEP_SUMMARY names, and `::error`/`::warning` workflow commands.

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { parseScore } from "../../src/score/mod.ts";
import { markdownCell } from "../../src/report/markdown.ts";
import { matrixRun, textRows } from "./_matrix_fixture.ts";
import {
  escapeCommandData,
  escapeCommandProperty,
} from "../../src/report/annotations.ts";

const HOSTILE =
  "<img src=x onerror=alert(1)> [click](javascript:alert(1)) | *x* https://evil.example\nsecond line";

const SUITE = `dataset: data.jsonl
target: { type: replay }
scorers:
  - type: exact_match
  - type: contains
    name: "odd:name,100%"
gates:
  exact_match: { min_mean: 0.9 }
  "odd:name,100%": { max_blocked: 5 }
`;

const DATA = [
  { id: "ok", input: "a", expected: "x", output: "x" },
  { id: "bad", input: "b", expected: "y", output: HOSTILE },
  { id: "down", input: "d", expected: "w" },
].map((r) => JSON.stringify(r) + "\n").join("");

async function setUp(dir: string): Promise<void> {
  await Deno.writeTextFile(`${dir}/suite.yaml`, SUITE);
  await Deno.writeTextFile(`${dir}/data.jsonl`, DATA);
}

Deno.test("run --markdown writes the summary, the gates, the worst failing cases and how to open the HTML report", async () => {
  await withTempDir(async (dir) => {
    await setUp(dir);
    const out = await cli(
      ["run", "suite.yaml", "--markdown", "summary.md", "--record", "rec.json"],
      dir,
    );
    assert.equal(out.code, 1, out.stderr); // the exact_match gate fails
    const md = await Deno.readTextFile(`${dir}/summary.md`);
    assert.match(
      md,
      /^## evalpipe: suite\.yaml\n\n❌ 1 gate failed · 3 units, 2 failing · run `/,
    );
    assert.match(
      md,
      /^\| metric \| mean ± 95% CI \| failures as low…high \| pass rate \| coverage \| scored \| error \| blocked \| skipped \| non_evaluable \| invalid \|$/m,
    );
    assert.match(
      md,
      /^\| exact\\_match \| 0\.500 .* \| 2 \| 0 \| 1 \| 0 \| 0 \| 0 \|$/m,
    );
    assert.match(md, /^\| exact\\_match \| min_mean \| 0\.9 \| ❌ failed: /m);
    assert.match(md, /^\| odd\\:name,100% \| max_blocked \| 5 \| ✅ held \|$/m);
    // The worst cases: the blocked one first, then the failed one.
    const rows = md.split("\n").filter((l) => l.startsWith("| data.jsonl"));
    assert.deepEqual(rows.map((r) => r.split(" | ")[0]), [
      "| data.jsonl\\#down",
      "| data.jsonl\\#down",
      "| data.jsonl\\#bad",
      "| data.jsonl\\#bad",
    ]);
    assert.match(rows[0]!, /\| blocked \| – \| target error\\: /);
    // Model output renders as text: no tag, no link, no table break.
    const bad = rows[2]!;
    assert.ok(bad.includes("\\<img src=x onerror=alert\\(1\\)\\>"), bad);
    assert.ok(bad.includes("\\[click\\]\\(javascript\\:alert\\(1\\)\\)"), bad);
    assert.ok(bad.includes("https\\://evil.ex…"), bad);
    assert.equal(bad.split(/(?<!\\)\|/).length, 8, "six cells");
    assert.doesNotMatch(md, /(?<!\\)<img|(?<!\\)\]\(javascript/);
    assert.match(
      md,
      /Open every case with its answer: `evalpipe report rec\.json --html report\.html`/,
    );
    // report RECORD --markdown writes the same.
    const report = await cli(
      ["report", "rec.json", "--markdown", "again.md"],
      dir,
    );
    assert.equal(report.code, 0, report.stderr);
    assert.equal(await Deno.readTextFile(`${dir}/again.md`), md);
  });
});

Deno.test("run --markdown and report --markdown name evalpipe by its name, not the path a runner started it from; markdownReport's command option names another", async () => {
  await withTempDir(async (dir) => {
    await setUp(dir);
    // No evalpipe command on PATH, as under a CI runner's `deno run -A
    // $GITHUB_ACTION_PATH/cli.ts`: the PR's readers run their own.
    const env = { PATH: `${dir}/no-such-folder` };
    const out = await cli(
      ["run", "suite.yaml", "--markdown", "summary.md", "--record", "rec.json"],
      dir,
      env,
    );
    assert.equal(out.code, 1, out.stderr);
    const md = await Deno.readTextFile(`${dir}/summary.md`);
    assert.ok(
      md.includes(
        "Open every case with its answer: `evalpipe report rec.json --html report.html`",
      ),
      md,
    );
    assert.doesNotMatch(md, /cli\.ts/);
    const { markdownReport } = await import("../../src/report/mod.ts");
    const { readRunRecord } = await import("../../src/record/mod.ts");
    const mine = markdownReport(await readRunRecord(`${dir}/rec.json`), {
      recordPath: "rec.json",
      command: "deno run -A tools/cli.ts",
    });
    assert.ok(
      mine.includes(
        "`deno run -A tools/cli.ts report rec.json --html report.html`",
      ),
      mine,
    );
  });
});

Deno.test("run --markdown and the step summary notify no one and reference no issue that model output names, and keep example ids as they are", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: data.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    const output =
      "@octocat cc @acme/sec: #12 (GH-34), bob@example.com, denoland/deno#567 a_b/c#5";
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      JSON.stringify({ input: "q", expected: "x", output }) + "\n",
    );
    const step = `${dir}/step.md`;
    const out = await cli(
      ["run", "suite.yaml", "--epochs", "2", "--markdown", "r.md"],
      dir,
      { GITHUB_STEP_SUMMARY: step },
    );
    assert.equal(out.code, 0, out.stderr);
    const md = await Deno.readTextFile(`${dir}/r.md`);
    assert.equal(await Deno.readTextFile(step), md);
    assert.ok(md.includes("@&#8203;octocat"), md);
    // The text as GitHub renders it, escapes undone, before it links
    // mentions, e-mail addresses and issue references in it.
    const shown = md.replace(/\\(.)/g, "$1").replaceAll("&#8203;", "\u200b");
    assert.doesNotMatch(shown, /(^|\W)@[A-Za-z0-9]/m);
    assert.doesNotMatch(shown, /\w@[\w-]+\.\w/);
    assert.doesNotMatch(shown, /(^|\W)(#|GH-)\d/im);
    // A cross-repository reference, which GitHub links too.
    assert.doesNotMatch(shown, /[\w.-]+\/[\w.-]+#\d/);
    assert.ok(md.includes("a\\_b/c\\#&#8203;5"), md);
    assert.ok(md.includes("denoland/deno\\#&#8203;567"), md);
    // The ids are as written: after a letter or digit, "#" and "@" are no
    // reference and no mention.
    assert.match(md, /^\| data\.jsonl\\#1@1 \| exact\\_match \|/m);
    assert.match(md, /^\| data\.jsonl\\#1@2 \| exact\\_match \|/m);
  });
});

Deno.test("run appends the same Markdown to GITHUB_STEP_SUMMARY, run after run", async () => {
  await withTempDir(async (dir) => {
    await setUp(dir);
    await Deno.writeTextFile(`${dir}/step.md`, "# earlier step\n");
    const env = { GITHUB_STEP_SUMMARY: `${dir}/step.md` };
    const first = await cli(
      ["run", "suite.yaml", "--markdown", "own.md"],
      dir,
      env,
    );
    assert.equal(first.code, 1, first.stderr);
    const own = await Deno.readTextFile(`${dir}/own.md`);
    assert.equal(
      await Deno.readTextFile(`${dir}/step.md`),
      `# earlier step\n${own}`,
    );
    const second = await cli(["run", "suite.yaml"], dir, env);
    assert.equal(second.code, 1, second.stderr);
    const step = await Deno.readTextFile(`${dir}/step.md`);
    assert.equal(step.split("## evalpipe: suite.yaml").length, 3);
    assert.match(step, /Keep the run's record \(`--record run\.json`\)/);
    // Stdout is still Scores only.
    for (const line of second.stdout.trimEnd().split("\n")) {
      parseScore(JSON.parse(line));
    }
  });
});

Deno.test("run under GitHub Actions prints ::error for failed gates and ::warning for errors on stderr, escaped", async () => {
  await withTempDir(async (dir) => {
    await setUp(dir);
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      SUITE.replace("max_blocked: 5", "max_blocked: 0"),
    );
    const out = await cli(["run", "suite.yaml"], dir, {
      GITHUB_ACTIONS: "true",
    });
    assert.equal(out.code, 1, out.stderr);
    const commands = out.stderr.split("\n").filter((l) => l.startsWith("::"));
    assert.deepEqual(commands, [
      "::error title=evalpipe gate failed%3A exact_match::exact_match: mean 0.5 < min_mean 0.9",
      "::error title=evalpipe gate failed%3A odd%3Aname%2C100%25::odd:name,100%25: blocked 1 > max_blocked 0",
      '::warning title=evalpipe%3A exact_match::1 blocked Score (first, data.jsonl#down: target error: The case has no "output" to replay)',
      '::warning title=evalpipe%3A odd%3Aname%2C100%25::1 blocked Score (first, data.jsonl#down: target error: The case has no "output" to replay)',
    ]);
    assert.ok(!out.stdout.includes("::"), "stdout carries Scores only");
    // Off with --no-annotations, and off by default outside GitHub Actions.
    const off = await cli(["run", "suite.yaml", "--no-annotations"], dir, {
      GITHUB_ACTIONS: "true",
    });
    assert.ok(!off.stderr.includes("::"), off.stderr);
    const plain = await cli(["run", "suite.yaml"], dir, { GITHUB_ACTIONS: "" });
    assert.ok(!plain.stderr.includes("::"), plain.stderr);
    const asked = await cli(["run", "suite.yaml", "--annotations"], dir, {
      GITHUB_ACTIONS: "",
    });
    assert.equal(
      asked.stderr.split("\n").filter((l) => l.startsWith("::")).length,
      4,
    );
  });
});

Deno.test("run --matrix under GitHub Actions names the target in each annotation and quotes its own first failure", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      ["a", "b", "c"].map((id) => JSON.stringify({ id, input: id })).join(
        "\n",
      ) + "\n",
    );
    // v1 fails on case a, v2 on case c.
    const target = (fail: string) =>
      `{ type: subprocess, cmd: "grep -q '\\"${fail}\\"' && exit 1; echo ok" }`;
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: cases.jsonl
targets:
  v1: ${target("a")}
  v2: ${target("c")}
matrix: [v1, v2]
scorers: [{ type: exact_match, value: ok }]
gates:
  exact_match: { max_blocked: 0 }
`,
    );
    const out = await cli(["run", "suite.yaml"], dir, {
      GITHUB_ACTIONS: "true",
    });
    assert.equal(out.code, 1, out.stderr);
    const commands = out.stderr.split("\n").filter((l) => l.startsWith("::"))
      .map((l) => l.replace(/target error: .*/, "…"));
    assert.deepEqual(commands, [
      "::error title=evalpipe gate failed%3A v1%3A exact_match::v1: exact_match: blocked 1 > max_blocked 0",
      "::error title=evalpipe gate failed%3A v2%3A exact_match::v2: exact_match: blocked 1 > max_blocked 0",
      "::warning title=evalpipe%3A v1%3A exact_match::1 blocked Score (first, cases.jsonl#a~v1: …",
      "::warning title=evalpipe%3A v2%3A exact_match::1 blocked Score (first, cases.jsonl#c~v2: …",
    ]);
  });
});

Deno.test("workflow command escaping follows GitHub's toolkit", () => {
  assert.equal(
    escapeCommandData("50% done\r\nnext: a,b"),
    "50%25 done%0D%0Anext: a,b",
  );
  assert.equal(
    escapeCommandProperty("50% done\r\nnext: a,b"),
    "50%25 done%0D%0Anext%3A a%2Cb",
  );
  assert.equal(markdownCell("a".repeat(300)).length, 200);
  assert.equal(markdownCell("x\u001b[31my"), "x\\\\u\\{1b\\}\\[31my");
});

Deno.test("run --matrix --markdown shows each target's summary and gates, and the comparison the run prints", async () => {
  await withTempDir(async (dir) => {
    const run = await matrixRun(
      dir,
      ["--markdown", "m.md"],
      "gates:\n  exact_match: { min_mean: 0.5 }\n",
    );
    assert.equal(run.code, 1, run.stderr); // same's mean is 0.25
    const md = await Deno.readTextFile(`${dir}/m.md`);
    assert.match(md, /^❌ 1 gate failed · 12 units, 6 failing/m);
    // A summary row per target, its interval as the run prints it.
    assert.match(md, /^\| target \| metric \| mean ± 95% CI \|/m);
    assert.match(
      md,
      /^\| up \| exact\\_match \| 0\.750 \[0\.000, 1\.000\] \| /m,
    );
    assert.match(
      md,
      /^\| same \| exact\\_match \| 0\.250 \[0\.000, 1\.000\] \| /m,
    );
    assert.match(md, /^\| odd \| exact\\_match \| 0\.500 /m);
    // The comparison: the run's table, cell for cell.
    assert.match(md, /^### Targets compared, each against up$/m);
    const table = md.split("\n").filter((l) =>
      l.startsWith("| exact\\_match | ")
    )
      .map((l) =>
        l.slice(2, -2).split(" | ").map((c) => c.replace(/\\/g, "")).filter(
          (c) => c !== "",
        )
      );
    const printed = textRows(run.stderr);
    assert.equal(printed.length, 3);
    assert.deepEqual(table.slice(0, 3), printed);
    // The gates per target: same fails, up and odd hold.
    assert.match(
      md,
      /^\| up \| exact\\_match \| min_mean \| 0\.5 \| ✅ held \|$/m,
    );
    assert.match(
      md,
      /^\| same \| exact\\_match \| min_mean \| 0\.5 \| ❌ failed: same\\: exact\\_match\\: mean 0\.25 /m,
    );
    assert.match(
      md,
      /^\| odd \| exact\\_match \| min_mean \| 0\.5 \| ✅ held \|$/m,
    );
    // Model output stays text.
    assert.match(md, /\\<img src=x onerror=window\.\\_\\_pwned=1\\>/);
    assert.doesNotMatch(md, /(?<!\\)<img/);
    const again = await cli(
      ["report", "r.json", "--markdown", "again.md"],
      dir,
    );
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await Deno.readTextFile(`${dir}/again.md`), md);
  });
});

Deno.test("run with an unusable GITHUB_STEP_SUMMARY warns naming the variable, writes the other reports and keeps the gate's exit 1", async () => {
  await withTempDir(async (dir) => {
    await setUp(dir);
    const out = await cli(
      ["run", "suite.yaml", "--markdown", "own.md"],
      dir,
      { GITHUB_STEP_SUMMARY: `${dir}/missing/step.md` },
    );
    assert.equal(out.code, 1, out.stderr);
    assert.match(
      out.stderr,
      new RegExp(
        `^evalpipe: warning: Cannot write GITHUB_STEP_SUMMARY "${dir}/missing/step\\.md": no such folder "${dir}/missing"; no step summary \\(the exit code is unchanged\\)$`,
        "m",
      ),
    );
    assert.match(out.stderr, /^evalpipe: gate failed: exact_match: /m);
    assert.doesNotMatch(out.stderr, /--help/);
    assert.match(await Deno.readTextFile(`${dir}/own.md`), /❌ 1 gate failed/);
  });
});

Deno.test("run --baseline that regresses says so in the Markdown's headline, the step summary and an ::error, not that no gate failed", async () => {
  await withTempDir(async (dir) => {
    await setUp(dir);
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: data.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      '{"id":"a","input":"a","expected":"x","output":"x"}\n{"id":"b","input":"b","expected":"y","output":"y"}\n',
    );
    const saved = await cli(
      ["run", "suite.yaml", "--save-baseline", "main"],
      dir,
    );
    assert.equal(saved.code, 0, saved.stderr);
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      '{"id":"a","input":"a","expected":"x","output":"x"}\n{"id":"b","input":"b","expected":"y","output":"z"}\n',
    );
    const out = await cli(
      ["run", "suite.yaml", "--baseline", "main", "--markdown", "m.md"],
      dir,
      { GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: `${dir}/step.md` },
    );
    assert.equal(out.code, 1, out.stderr);
    const md = await Deno.readTextFile(`${dir}/m.md`);
    assert.match(
      md,
      /^❌ regressed against baseline "\.\/\.evalpipe\/baselines\/main\.json"\\: 1 newly failing \\\(data\.jsonl\\#b on exact\\_match\\\) · 2 units, 1 failing · run `/m,
    );
    assert.doesNotMatch(md, /no gate failed/);
    assert.equal(await Deno.readTextFile(`${dir}/step.md`), md);
    assert.match(
      out.stderr,
      /^evalpipe: regressed against baseline "\.\/\.evalpipe\/baselines\/main\.json": 1 newly failing$/m,
    );
    assert.deepEqual(
      out.stderr.split("\n").filter((l) => l.startsWith("::")),
      [
        '::error title=evalpipe regression::regressed against baseline "./.evalpipe/baselines/main.json": 1 newly failing (data.jsonl#b on exact_match)',
      ],
    );
  });
});

Deno.test("report --markdown reads the record a unit at a time and writes what run --markdown wrote from the whole record", async () => {
  await withTempDir(async (dir) => {
    // More failing cases than the ten listed, with ties: errors first, then
    // the lowest values, then the record's order.
    const data = Array.from({ length: 30 }, (_, i) =>
      JSON.stringify(
        i % 7 === 3 ? { id: `e${i}`, input: `q${i}`, expected: "w" } : {
          id: `c${i}`,
          input: `q${i}`,
          expected: "x",
          output: i % 2 ? "x" : `no ${i % 3}`,
        },
      ) + "\n").join("");
    await Deno.writeTextFile(`${dir}/suite.yaml`, SUITE);
    await Deno.writeTextFile(`${dir}/data.jsonl`, data);
    const run = await cli(
      ["run", "suite.yaml", "--markdown", "run.md", "--record", "rec.json"],
      dir,
    );
    assert.equal(run.code, 1, run.stderr);
    const out = await cli(
      ["report", "rec.json", "--markdown", "again.md"],
      dir,
    );
    assert.equal(out.code, 0, out.stderr);
    const md = await Deno.readTextFile(`${dir}/run.md`);
    assert.match(md, /10 of 17 failing cases/);
    assert.equal(await Deno.readTextFile(`${dir}/again.md`), md);
  });
  await withTempDir(async (dir) => {
    const run = await matrixRun(dir, ["--markdown", "m.md"]);
    assert.equal(run.code, 0, run.stderr);
    const out = await cli(
      ["report", "r.json", "--markdown", "again.md"],
      dir,
    );
    assert.equal(out.code, 0, out.stderr);
    const md = await Deno.readTextFile(`${dir}/m.md`);
    assert.match(md, /### Targets compared/);
    assert.equal(await Deno.readTextFile(`${dir}/again.md`), md);
  });
});

Deno.test("run --markdown lists a blocked case among the worst when a scorer erred on more cases than are listed", async () => {
  await withTempDir(async (dir) => {
    // A grader that crashes on every case: its twelve errors filled the ten
    // rows, each with a 0 beside it, and the case the target failed on
    // (blocked, no value) was never listed.
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: data.jsonl\ntarget: { type: replay }\nscorers:\n  - type: exact_match\n  - { type: subprocess, cmd: sh crash.sh }\n",
    );
    await Deno.writeTextFile(
      `${dir}/crash.sh`,
      "cat > /dev/null\necho 'grader crashed' >&2\nexit 3\n",
    );
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      [
        ...Array.from({ length: 12 }, (_, i) => ({
          id: `q${i}`,
          input: `question ${i}`,
          expected: "right",
          output: "wrong",
        })),
        { id: "down", input: "question 12", expected: "right" },
      ].map((r) => JSON.stringify(r) + "\n").join(""),
    );
    const out = await cli(
      ["run", "suite.yaml", "--markdown", "run.md", "--record", "rec.json"],
      dir,
    );
    assert.equal(out.code, 1, out.stderr); // crash measured nothing
    const again = await cli(
      ["report", "rec.json", "--markdown", "again.md"],
      dir,
    );
    assert.equal(again.code, 0, again.stderr);
    for (const file of ["run.md", "again.md"]) {
      const md = await Deno.readTextFile(`${dir}/${file}`);
      assert.match(
        md,
        /^10 of 13 failing cases, errors and blocked first, in turn, then the lowest values:$/m,
      );
      const cases = md.split("\n").filter((l) => l.startsWith("| data.jsonl"))
        .map((l) => l.split(" | ")[0]);
      // The blocked case first (both its Scores), then the errors in turn.
      assert.deepEqual(cases.slice(0, 4), [
        "| data.jsonl\\#down",
        "| data.jsonl\\#down",
        "| data.jsonl\\#q0",
        "| data.jsonl\\#q0",
      ]);
    }
  });
});

Deno.test("markdownReport names a metric that measured nothing without a gate as such, not as a failed gate", async () => {
  const { parseRunRecord } = await import("../../src/record/mod.ts");
  const { markdownReport } = await import("../../src/report/mod.ts");
  const record = (gates: Record<string, unknown>) =>
    parseRunRecord(
      JSON.stringify({
        evalpipe_run_record: 1,
        run_id: "r1",
        started_at: "2026-12-01T08:00:00.000Z",
        config_path: "suite.yaml",
        config: { gates },
        fingerprints: {
          config: "sha256:aa",
          dataset: null,
          target: "sha256:cc",
          scorers: {},
        },
        scores: [{
          metric: "m",
          status: "blocked",
          validity: "not_measured",
          value: null,
          passed: false,
          reason: "target error: down",
          evaluator_version: "m@1",
          example_id: "d#1",
          unit_id: "d#1",
        }],
        aggregates: [],
        finished_at: "2026-12-01T08:00:01.000Z",
        complete: true,
      }),
      "run.json",
    );
  assert.match(
    markdownReport(record({})),
    /^❌ nothing measured: m · 1 unit, 1 failing/m,
  );
  assert.match(
    markdownReport(record({ m: { max_blocked: 0 } })),
    /^❌ 2 gates failed · 1 unit, 1 failing/m,
  );
  const { annotations } = await import("../../src/report/mod.ts");
  const { checkGates } = await import("../../src/aggregate/mod.ts");
  const { aggregates } = record({});
  assert.match(
    annotations(checkGates({}, aggregates), aggregates, new Map())[0]!,
    /^::error title=evalpipe nothing measured%3A m::m: nothing measured: 1 blocked of 1 Score; no gate names it/,
  );
});

Deno.test("run --markdown writes an example id as it is written, however much it looks like a reference or a mention", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: data.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      ["GH-12", "@alice", "x-#3"].map((id) =>
        JSON.stringify({ id, input: "q", expected: "x", output: "no" })
      ).join("\n") + "\n",
    );
    const out = await cli(["run", "suite.yaml", "--markdown", "r.md"], dir);
    assert.equal(out.code, 0, out.stderr);
    const md = await Deno.readTextFile(`${dir}/r.md`);
    // Copied from the rendered summary, each id is the one in the Scores.
    for (
      const id of [
        "data.jsonl\\#GH-12",
        "data.jsonl\\#@alice",
        "data.jsonl\\#x-\\#3",
      ]
    ) {
      assert.match(
        md,
        new RegExp(`^\\| ${RegExp.escape(id)} \\| exact\\\\_match \\|`, "m"),
        md,
      );
    }
  });
});

Deno.test("run --baseline --markdown lists new and removed cases by their ids as written, even one shaped as owner/repo#12", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/datasets`);
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: datasets/qa.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    const line = (id: string) =>
      JSON.stringify({ id, input: "q", expected: "x", output: "x" }) + "\n";
    await Deno.writeTextFile(`${dir}/datasets/qa.jsonl`, line("1") + line("2"));
    const saved = await cli(
      ["run", "suite.yaml", "--save-baseline", "main"],
      dir,
    );
    assert.equal(saved.code, 0, saved.stderr);
    await Deno.writeTextFile(`${dir}/datasets/qa.jsonl`, line("1") + line("3"));
    const out = await cli(
      ["run", "suite.yaml", "--baseline", "main", "--markdown", "m.md"],
      dir,
    );
    assert.equal(out.code, 0, out.stderr);
    const md = await Deno.readTextFile(`${dir}/m.md`);
    // Copied from the rendered summary, each id is the one in the Scores.
    assert.match(
      md,
      /^new cases \(1\): datasets\/qa\.jsonl\\#3 · removed cases \(1\): datasets\/qa\.jsonl\\#2$/m,
      md,
    );
  });
});

Deno.test("run --baseline --markdown names a newly failing case in its headline as written, as its table rows do", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/datasets`);
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: datasets/qa.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    const line = (id: string, output: string) =>
      JSON.stringify({ id, input: "q", expected: "x", output }) + "\n";
    await Deno.writeTextFile(
      `${dir}/datasets/qa.jsonl`,
      line("1", "x") + line("2", "x"),
    );
    const saved = await cli(
      ["run", "suite.yaml", "--save-baseline", "base/qa#7.json"],
      dir,
    );
    assert.equal(saved.code, 0, saved.stderr);
    await Deno.writeTextFile(
      `${dir}/datasets/qa.jsonl`,
      line("1", "x") + line("2", "no"),
    );
    const out = await cli(
      [
        "run",
        "suite.yaml",
        "--baseline",
        "base/qa#7.json",
        "--markdown",
        "m.md",
      ],
      dir,
    );
    assert.equal(out.code, 1, out.stderr);
    const md = await Deno.readTextFile(`${dir}/m.md`);
    const headline = md.split("\n").find((l) => l.startsWith("❌ regressed"));
    assert.ok(headline !== undefined, md);
    // The id (shaped as owner/repo#2) and the baseline's path as written;
    // the metric, the user's word, is still text that GitHub could link.
    assert.ok(
      headline.includes(
        "1 newly failing \\(datasets/qa.jsonl\\#2 on exact\\_match\\)",
      ),
      headline,
    );
    assert.ok(headline.includes('baseline "base/qa\\#7.json"'), headline);
    assert.ok(!headline.includes("&#8203;"), headline);
    assert.match(md, /^\| datasets\/qa\.jsonl\\#2 \| exact\\_match \|/m, md);
  });
});

Deno.test("run --shard --markdown heads its summary with the shard, not a gate verdict the shard does not apply", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: data.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\ngates: { exact_match: { min_pass_rate: 0.9 } }\n",
    );
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      Array.from({ length: 6 }, (_, i) =>
        JSON.stringify({
          id: `c${i}`,
          input: "q",
          expected: "x",
          output: i < 3 ? "x" : "y",
        }) + "\n").join(""),
    );
    for (const k of [1, 2]) {
      const out = await cli(
        ["run", "suite.yaml", "--shard", `${k}/2`, "--markdown", `m${k}.md`],
        dir,
      );
      assert.equal(out.code, 0, out.stderr);
      const md = await Deno.readTextFile(`${dir}/m${k}.md`);
      assert.match(
        md,
        new RegExp(
          `^shard ${k}/2: gates, budget and baseline are checked on the merged run \\(\`evalpipe merge\`\\) · 3 units, `,
          "m",
        ),
        md,
      );
      assert.doesNotMatch(md, /gate failed|every gate held/, md);
      assert.match(md, /^On this shard's examples alone, for a look: /m, md);
    }
  });
});
