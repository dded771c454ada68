/**
 * Defaults that are safe in CI, through the real CLI: a run that measured
 * nothing does not pass, and a gate that can never hold is refused.
 */

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

const suite = (extra = "") =>
  `dataset: data.jsonl
target: { type: subprocess, cmd: "cat >/dev/null; echo down >&2; exit 1" }
scorers:
  - type: exact_match
${extra}`;

async function withSuite(
  config: string,
  fn: (dir: string) => Promise<void>,
): Promise<void> {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/suite.yaml`, config);
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      '{"input": "a", "expected": "x"}\n{"input": "b", "expected": "y"}\n',
    );
    await fn(dir);
  });
}

Deno.test("cli run exits 1 when every target call failed, though no gate is set", async () => {
  await withSuite(suite(), async (dir) => {
    const out = await cli(["run", "suite.yaml", "--out", "s.jsonl"], dir);
    assert.equal(out.code, 1, out.stderr);
    assert.match(
      out.stderr,
      /^evalpipe: exact_match: nothing measured: 2 blocked of 2 Scores; no gate names it, but a metric that measured nothing fails the run: the Scores' reasons say why \(let it pass with gates\.exact_match\.allow_unmeasured: true\)$/m,
    );
    // The Scores are written all the same: failures are data.
    const lines = (await Deno.readTextFile(`${dir}/s.jsonl`)).trim().split(
      "\n",
    );
    assert.equal(lines.length, 2);
  });
});

Deno.test("cli run exits 0 on a run that measured nothing when the config allows it", async () => {
  await withSuite(
    suite("gates:\n  exact_match:\n    allow_unmeasured: true\n"),
    async (dir) => {
      const out = await cli(["run", "suite.yaml", "--out", "s.jsonl"], dir);
      assert.equal(out.code, 0, out.stderr);
      assert.doesNotMatch(out.stderr, /gate failed/);
    },
  );
});

Deno.test("cli run refuses a gate no metric can meet, naming the key and its line", async () => {
  await withSuite(
    suite("gates:\n  exact_match:\n    min_mean: 1.5\n"),
    async (dir) => {
      const out = await cli(["run", "suite.yaml"], dir);
      assert.equal(out.code, 2);
      assert.match(out.stderr, /suite\.yaml" line 7/);
      assert.match(out.stderr, /gates\.exact_match\.min_mean/);
      assert.match(out.stderr, /1\.5/);
      assert.equal(out.stdout, "", "nothing ran");
    },
  );
});

Deno.test("cli run --target-timeout sets the target's timeout, --timeout the scorers'", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: data.jsonl
target: { type: subprocess, cmd: "cat >/dev/null; sleep 5; echo late", timeout: 60 }
scorers:
  - type: exact_match
gates:
  exact_match:
    allow_unmeasured: true
`,
    );
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      '{"input": "a", "expected": "x"}\n',
    );
    const out = await cli([
      "run",
      "suite.yaml",
      "--target-timeout",
      "0.3",
      "--timeout",
      "7",
      "--record",
      "r.json",
    ], dir);
    assert.equal(out.code, 0, out.stderr);
    const [score] = out.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(score.status, "blocked");
    assert.match(score.reason, /^target error: .*timed out after 0\.3 s/);
    const record = JSON.parse(await Deno.readTextFile(`${dir}/r.json`));
    assert.equal(record.config.target.timeout, 0.3);
    assert.equal(record.config.timeout, 7);
  });
});

Deno.test('cli run on Inspect\'s dataset (its answer under "target"), no gate set: exit 2 for the invalid cases, and no gate said to fail', async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      'dataset: data.jsonl\ntarget: { type: subprocess, cmd: "cat" }\nscorers:\n  - type: exact_match\n',
    );
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      '{"input": "a", "target": "a"}\n{"input": "b", "target": "b"}\n',
    );
    const out = await cli(["run", "suite.yaml", "--out", "s.jsonl"], dir);
    assert.equal(out.code, 2, out.stderr);
    assert.doesNotMatch(out.stderr, /gate failed/);
    assert.doesNotMatch(out.stderr, /allow_unmeasured/);
    assert.ok(
      out.stderr.endsWith(
        `evalpipe: exact_match: nothing measured: 2 blocked of 2 Scores, 2 cases are invalid (the first: "data.jsonl" line 1: "target" is Inspect's answer key; evalpipe's is "expected": rename the field): fix the dataset and run again\n`,
      ),
      out.stderr,
    );
  });
});

/** A gated suite over Inspect's dataset: its answers under "target". */
async function writeGatedInspectSuite(dir: string): Promise<void> {
  await Deno.writeTextFile(
    `${dir}/suite.yaml`,
    'dataset: data.jsonl\ntarget: { type: subprocess, cmd: "cat" }\nscorers:\n  - type: exact_match\ngates:\n  exact_match: { min_pass_rate: 0.9 }\n',
  );
  await Deno.writeTextFile(
    `${dir}/data.jsonl`,
    '{"input": "a", "target": "a"}\n{"input": "b", "target": "b"}\n',
  );
}

Deno.test("cli run on Inspect's dataset with a gate on the metric: the gate's \"nothing measured\" line says to fix the dataset, not to allow it", async () => {
  await withTempDir(async (dir) => {
    await writeGatedInspectSuite(dir);
    const out = await cli(["run", "suite.yaml", "--out", "s.jsonl"], dir);
    assert.equal(out.code, 2, out.stderr);
    assert.doesNotMatch(out.stderr, /allow_unmeasured/);
    assert.ok(
      out.stderr.includes(
        `evalpipe: gate failed: exact_match: nothing measured: 2 blocked of 2 Scores, 2 cases are invalid (the first: "data.jsonl" line 1: "target" is Inspect's answer key; evalpipe's is "expected": rename the field): fix the dataset and run again\n`,
      ),
      out.stderr,
    );
    // The threshold the config set is still said to have failed.
    assert.ok(
      out.stderr.includes(
        "evalpipe: gate failed: exact_match: pass rate 0 < min_pass_rate 0.9\n",
      ),
      out.stderr,
    );
  });
});

Deno.test("cli run on Inspect's dataset with a gate on the metric: the Markdown and HTML reports and the annotations say to fix the dataset, as stderr does", async () => {
  await withTempDir(async (dir) => {
    await writeGatedInspectSuite(dir);
    const out = await cli([
      "run",
      "suite.yaml",
      "--out",
      "s.jsonl",
      "--record",
      "run.json",
      "--markdown",
      "s.md",
      "--annotations",
    ], dir);
    assert.equal(out.code, 2, out.stderr);
    assert.doesNotMatch(out.stderr, /allow_unmeasured/);
    assert.ok(
      out.stderr.includes(
        `::error title=evalpipe gate failed%3A exact_match::exact_match: nothing measured: 2 blocked of 2 Scores, 2 cases are invalid (the first: "data.jsonl" line 1: "target" is Inspect's answer key; evalpipe's is "expected": rename the field): fix the dataset and run again\n`,
      ),
      out.stderr,
    );
    // The report run writes, and the one `report` writes of its record.
    const again = await cli(
      ["report", "run.json", "--markdown", "again.md"],
      dir,
    );
    assert.equal(again.code, 0, again.stderr);
    const html = await cli(["report", "run.json", "--html", "r.html"], dir);
    assert.equal(html.code, 0, html.stderr);
    const page = await Deno.readTextFile(`${dir}/r.html`);
    assert.doesNotMatch(page, /allow_unmeasured/);
    assert.ok(
      page.includes(
        'exact_match: nothing measured: 2 blocked of 2 Scores, 2 cases are invalid (the first: data.jsonl#1: \\"target\\" is Inspect',
      ),
    );
    for (const file of ["s.md", "again.md"]) {
      const md = await Deno.readTextFile(`${dir}/${file}`);
      assert.doesNotMatch(md, /allow\\?_unmeasured/, file);
      assert.ok(
        md.includes(
          '| exact\\_match | nothing measured | – | ❌ failed: exact\\_match\\: nothing measured\\: 2 blocked of 2 Scores, 2 cases are invalid \\(the first\\: data.jsonl\\#1\\: "target" is Inspect\'s answer key; evalpipe\'s is "expected"\\: rename the field\\)\\: fix the dataset and run again |',
        ),
        md,
      );
    }
  });
});

Deno.test("cli merge of shards of Inspect's dataset with a gate: the \"nothing measured\" line says to fix the dataset, as run's does", async () => {
  await withTempDir(async (dir) => {
    await writeGatedInspectSuite(dir);
    for (const k of [1, 2]) {
      const shard = await cli(
        ["run", "suite.yaml", "--shard", `${k}/2`, "--out", `s${k}.jsonl`],
        dir,
      );
      // 2 for a shard that holds an invalid case, 0 for one that holds none.
      assert.ok(shard.code === 2 || shard.code === 0, shard.stderr);
    }
    const out = await cli(["merge", "s1.jsonl", "s2.jsonl"], dir);
    assert.doesNotMatch(out.stderr, /allow_unmeasured/);
    assert.ok(
      out.stderr.includes(
        `evalpipe: gate failed: exact_match: nothing measured: 2 blocked of 2 Scores, 2 cases are invalid (the first: data.jsonl#1: "target" is Inspect's answer key; evalpipe's is "expected": rename the field): fix the dataset and run again\n`,
      ),
      out.stderr,
    );
  });
});
