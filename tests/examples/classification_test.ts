// The classification example runs offline, as its README says, and its
// figures are the ones worked out by hand from its 20 tickets below.

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { readRunRecord } from "../../mod.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const EXAMPLE = `${ROOT}examples/classification`;

// The router's predictions, ticket by ticket (see router.py's keyword order):
//
//   true \ predicted   account  billing  technical  invalid   support
//   account             5        2        0          0         7
//   billing             0        6        0          0         6
//   technical           1        0        5          1         7
//   predicted           6        8        5
//
// account-6 ("payment") and account-7 ("invoice") read as billing,
// technical-6 ("sign in") as account, technical-7 matches no keyword.
// correct 16 of 20: accuracy 0.8.
// account:   P 5/6, R 5/7, F1 2·5/(6+7) = 10/13
// billing:   P 6/8, R 6/6, F1 2·6/(8+6) = 6/7
// technical: P 5/5, R 5/7, F1 2·5/(5+7) = 5/6
// micro F1 = 2·16/(19 valid + 20) = 32/39.
const MACRO = (10 / 13 + 6 / 7 + 5 / 6) / 3;

const near = (actual: number | null | undefined, expected: number) =>
  assert.ok(
    typeof actual === "number" && Math.abs(actual - expected) < 1e-12,
    `${actual} is not ${expected}`,
  );

Deno.test("examples/classification runs offline; its figures are the hand-worked ones, in the summary, the record and the reports", async () => {
  await withTempDir(async (dir) => {
    const record = `${dir}/run.json`;
    const run = await cli([
      "run",
      `${EXAMPLE}/evalpipe.yaml`,
      "--record",
      record,
      "--junit",
      `${dir}/junit.xml`,
      "--markdown",
      `${dir}/summary.md`,
    ], ROOT);
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stderr,
      /classification: accuracy 0\.800 \(16\/20, 1 invalid\), macro F1 0\.820, micro F1 0\.821/,
    );
    assert.match(run.stderr, /\n {2}technical +1 +0 +5 +1\n/);
    const predictions = run.stdout.trim().split("\n").map((l) => JSON.parse(l))
      .filter((s) => s.metric === "classification");
    assert.equal(predictions.length, 20);
    const invalid = predictions.find((s) =>
      s.example_id.endsWith("#technical-7")
    );
    assert.equal(invalid.value, 0);
    assert.equal(invalid.provenance.classification.predicted, null);
    assert.equal(
      invalid.diagnostics[0].code,
      "classification.invalid_prediction",
    );

    // Read back from the RunRecord: recomputed from its Scores.
    const back = await readRunRecord(record);
    const c = back.aggregates.find((a) => a.metric === "classification")
      ?.classification;
    assert.ok(c !== undefined);
    assert.deepEqual(c.labels, ["account", "billing", "technical"]);
    assert.deepEqual(c.confusion, [[5, 2, 0], [0, 6, 0], [1, 0, 5]]);
    assert.deepEqual(c.invalid_by_label, [0, 0, 1]);
    near(c.accuracy, 16 / 20);
    near(c.macro_f1, MACRO);
    near(c.micro_f1, 32 / 39);
    near(c.per_label[0]!.precision, 5 / 6);
    near(c.per_label[1]!.precision, 6 / 8);
    near(c.per_label[2]!.recall, 5 / 7);

    const markdown = await Deno.readTextFile(`${dir}/summary.md`);
    assert.match(markdown, /### Classification: classification/);
    assert.match(
      markdown,
      /\| technical \| 1\.000 \| 0\.714 \| 0\.833 \| 7 \|/,
    );
    assert.match(markdown, /\| account \| 5 \| 2 \| 0 \| 0 \|/);
    assert.match(
      markdown,
      /\| classification \| min_accuracy \| 0\.75 \| ✅ held/,
    );
    const junit = await Deno.readTextFile(`${dir}/junit.xml`);
    assert.match(
      junit,
      /<property name="classification\.accuracy" value="0\.8"\/>/,
    );

    // The report command reads the same figures back from the record.
    const html = await cli(["report", record, "--html", `${dir}/r.html`], ROOT);
    assert.equal(html.code, 0, html.stderr);
    const page = await Deno.readTextFile(`${dir}/r.html`);
    assert.ok(page.includes('"invalid_by_label":[0,0,1]'));
  });
});

Deno.test("examples/classification fails its gates when the bars are raised: exit 1, the figures named", async () => {
  await withTempDir(async (dir) => {
    const text = await Deno.readTextFile(`${EXAMPLE}/evalpipe.yaml`);
    const stricter = text
      .replace("dataset: datasets/", `dataset: ${EXAMPLE}/datasets/`)
      .replace("cmd: python3 router.py", `cmd: python3 ${EXAMPLE}/router.py`)
      .replace("min_accuracy: 0.75", "min_accuracy: 0.85")
      .replace("min_macro_f1: 0.75", "min_macro_f1: 0.9");
    assert.notEqual(stricter, text);
    await Deno.writeTextFile(`${dir}/suite.yaml`, stricter);
    const run = await cli(["run", `${dir}/suite.yaml`], dir);
    assert.equal(run.code, 1, run.stderr);
    assert.match(
      run.stderr,
      /gate failed: classification: accuracy 0\.8 < min_accuracy 0\.85/,
    );
    assert.match(
      run.stderr,
      /gate failed: classification: macro F1 0\.819902 < min_macro_f1 0\.9/,
    );
  });
});
