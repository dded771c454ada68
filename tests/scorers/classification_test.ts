// The classification scorer: what a unit's label is, when a prediction is
// invalid, when a case does not apply; and `classification:` in a config.

import assert from "node:assert/strict";
import {
  buildScorers,
  checkConfigText,
  classification,
  type Score,
} from "../../mod.ts";
import { one, unit } from "./_unit.ts";
import { configError } from "../config/_config_error.ts";

const labels = (s: Score) =>
  s.provenance?.classification as
    | { label: string; predicted: string | null }
    | undefined;

Deno.test("classification takes the output's trimmed text as the label, numbers and booleans as text", () => {
  const s = one(classification(), unit("  spam \n", "spam"));
  assert.equal(s.value, 1);
  assert.equal(s.passed, true);
  assert.deepEqual(labels(s), { label: "spam", predicted: "spam" });
  assert.equal(s.reason, 'predicted "spam"');
  const wrong = one(classification(), unit("Spam", "spam"));
  assert.equal(wrong.value, 0);
  assert.equal(wrong.passed, false);
  assert.equal(wrong.reason, 'predicted "Spam", expected "spam"');
  assert.deepEqual(labels(one(classification(), unit("3", 3))), {
    label: "3",
    predicted: "3",
  });
  assert.deepEqual(labels(one(classification(), unit("true", true))), {
    label: "true",
    predicted: "true",
  });
});

Deno.test("classification field reads the label from a dotted path in the JSON output", () => {
  const scorer = classification({ field: "result.labels.0" });
  const s = one(scorer, unit('{"result": {"labels": ["ham", "spam"]}}', "ham"));
  assert.equal(s.value, 1);
  assert.deepEqual(labels(s), { label: "ham", predicted: "ham" });
  const n = one(classification({ field: "class" }), unit('{"class": 2}', "2"));
  assert.equal(n.value, 1);
});

Deno.test("classification counts an output without a label as an invalid prediction: a measured 0, never a label", () => {
  const field = classification({ field: "label" });
  for (
    const [output, why] of [
      ["not json", "the output is not JSON"],
      ['{"other": 1}', 'the output has no field "label"'],
      ['{"label": null}', 'the output has no field "label"'],
      ['{"label": {"a": 1}}', 'the output\'s field "label" is not a label'],
      ['{"label": "  "}', 'the output\'s field "label" is not a label'],
      ["", "the output is empty"],
    ] as const
  ) {
    const s = one(field, unit(output, "spam"));
    assert.equal(s.status, "scored", output);
    assert.equal(s.validity, "valid", output);
    assert.equal(s.value, 0, output);
    assert.equal(s.passed, false, output);
    assert.deepEqual(labels(s), { label: "spam", predicted: null }, output);
    assert.ok(s.reason?.startsWith(`invalid prediction: ${why}`), s.reason);
    assert.ok(s.reason?.endsWith('; expected "spam"'), s.reason);
    assert.equal(s.diagnostics[0]?.code, "classification.invalid_prediction");
    assert.equal(s.diagnostics[0]?.severity, "warning");
  }
  // Without a field, only an empty output gives no label.
  assert.equal(
    labels(one(classification(), unit(" \n", "spam")))?.predicted,
    null,
  );
});

Deno.test("classification is non_evaluable without an expected label", () => {
  for (const expected of [undefined, null, "  ", { a: 1 }, ["spam"]]) {
    const s = one(classification(), unit("spam", expected));
    assert.equal(s.status, "non_evaluable", JSON.stringify(expected));
    assert.equal(s.value, null);
    assert.ok(s.reason?.startsWith("not applicable: "), s.reason);
    assert.equal(labels(s), undefined);
  }
});

Deno.test("classification's version changes with its field; a bad field is refused", () => {
  assert.notEqual(
    classification().version,
    classification({ field: "label" }).version,
  );
  assert.throws(() => classification({ field: "a..b" }), RangeError);
});

const SUITE = "dataset: cases.jsonl\ntarget: { type: replay }\n" +
  "scorers: [{ type: exact_match }]\n";

Deno.test("classification: true in a config adds the classification metric after the scorers", async () => {
  for (
    const [text, field] of [
      [`${SUITE}classification: true\n`, undefined],
      [`${SUITE}classification: { field: label }\n`, "label"],
    ] as const
  ) {
    const config = await checkConfigText(text, "suite.yaml");
    const scorers = await buildScorers(config, "suite.yaml", { cwd: "." });
    assert.deepEqual(scorers.map((s) => s.name), [
      "exact_match",
      "classification",
    ]);
    assert.equal(
      scorers[1]!.version,
      classification(field !== undefined ? { field } : {}).version,
    );
  }
  const off = await checkConfigText(
    `${SUITE}classification: false\n`,
    "suite.yaml",
  );
  const scorers = await buildScorers(off, "suite.yaml", { cwd: "." });
  assert.deepEqual(scorers.map((s) => s.name), ["exact_match"]);
});

Deno.test("classification config errors name the key and its line", async () => {
  assert.equal(
    (await configError(`${SUITE}classification: { feild: label }\n`)).message,
    'Invalid config "suite.yaml" line 4: unknown key "classification.feild"; did you mean "field"?',
  );
  assert.equal(
    (await configError(`${SUITE}classification: yes please\n`)).message,
    'Invalid config "suite.yaml" line 4: "classification" must be a boolean or a mapping, not string "yes please"',
  );
  const named = "dataset: cases.jsonl\ntarget: { type: replay }\n" +
    "scorers:\n  - { type: exact_match }\n  - { type: contains, name: classification }\n" +
    "classification: true\n";
  assert.equal(
    (await configError(named)).message,
    'Invalid config "suite.yaml" line 5: a scorer is named "classification", the metric "classification:" adds; give it another "name"',
  );
  const elsewhere = `${SUITE}gates:\n  exact_match:\n    min_accuracy: 0.8\n`;
  assert.equal(
    (await configError(elsewhere)).message,
    'Invalid config "suite.yaml" line 6: "gates.exact_match.min_accuracy" needs "classification: true" (or "classification: { field: NAME }") in the suite',
  );
  assert.equal(
    (await configError(
      `${
        elsewhere.replace("min_accuracy", "min_macro_f1")
      }classification: true\n`,
    )).message,
    'Invalid config "suite.yaml" line 6: "gates.exact_match.min_macro_f1" applies only to the classification metric, "gates.classification.min_macro_f1"',
  );
  assert.match(
    (await configError(
      `${SUITE}classification: true\ngates: { classification: { min_accuracy: 80 } }\n`,
    )).message,
    /"gates\.classification\.min_accuracy" must be at most 1, not 80/,
  );
});
