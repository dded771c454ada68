/**
 * Every Score evalpipe writes satisfies evalglass's Score contract, as the
 * JSON Schemas in `schemas/evalglass/` state it; and those schemas refuse
 * what evalglass's reader refuses.
 */

import assert from "node:assert/strict";
import { assertSchema, schema } from "./_schemas.ts";
import { withEveryStatusRun } from "./_every_status.ts";
import { scoreLine, skipped } from "../../src/score/mod.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const EXAMPLES = new URL("../fixtures/evalglass/examples/", import.meta.url);

Deno.test("run writes only Scores evalglass's Score schema accepts, every status included, in its Scores file and its RunRecord", async () => {
  await withEveryStatusRun(async ({ outcome, scoresPath, recordPath }) => {
    // Line 5 of the dataset is not JSON: reported, and the run exits 2.
    assert.equal(outcome.code, 2, outcome.stderr);
    assert.match(outcome.stderr, /"cases\.jsonl" line 5/);
    const lines = (await Deno.readTextFile(scoresPath)).trimEnd().split("\n")
      .map((l) => JSON.parse(l));
    const raw = JSON.parse(await Deno.readTextFile(recordPath));
    // The record keeps each unit's Scores beside the unit.
    const record = {
      scores: raw.units.flatMap((u: { scores: unknown[] }) => u.scores),
    };
    assert.equal(lines.length, 15);
    assert.deepEqual(record.scores, lines);
    lines.forEach((s, i) =>
      assertSchema("score", s, `scores.ndjson line ${i + 1}`)
    );
    record.scores.forEach((s: unknown, i: number) =>
      assertSchema("score", s, `run.json score ${i + 1}`)
    );
    for (const s of lines) {
      for (const d of s.diagnostics) assertSchema("diagnostic", d);
    }
    const kinds = new Set(lines.map((s) => `${s.status}/${s.validity}`));
    assert.deepEqual([...kinds].sort(), [
      "blocked/not_measured",
      "error/not_measured",
      "non_evaluable/not_applicable",
      "scored/invalid",
      "scored/valid",
    ]);
    const batch = { evaluator: "judge@1", scores: lines.slice(0, 3) };
    assertSchema("score_batch", batch);
  });
});

Deno.test("a skipped Score (no suite run writes one yet) satisfies evalglass's Score schema", () => {
  const s = JSON.parse(scoreLine(skipped("m", { reason: "sampled out" })));
  assert.equal(s.status, "skipped");
  assertSchema("score", s);
});

Deno.test("evalglass's own example records satisfy the schemas", async () => {
  for (const name of ["groundedness", "judge-calibration"]) {
    const record = JSON.parse(
      await Deno.readTextFile(new URL(`${name}/runrecord.json`, EXAMPLES)),
    );
    assertSchema("runrecord", record, name);
    for (const s of record.scores) assertSchema("score", s, name);
  }
});

Deno.test("the schemas refuse what evalglass's reader refuses", () => {
  const ok = {
    metric: "m",
    status: "error",
    validity: "not_measured",
    value: null,
    evaluator_version: "m@1",
  };
  const score = schema("score");
  assert.ok(score(ok));
  const refused: Array<[string, unknown]> = [
    ["a value on an error", { ...ok, value: 0 }],
    ["no value on a scored Score", {
      ...ok,
      status: "scored",
      validity: "valid",
    }],
    ["a boolean value", {
      ...ok,
      status: "scored",
      validity: "valid",
      value: true,
    }],
    ["the old status not_applicable", { ...ok, status: "not_applicable" }],
    ["a missing value key", { ...ok, value: undefined }],
    ["an empty evaluator_version", { ...ok, evaluator_version: "" }],
    ["a diagnostic with level and no code", {
      ...ok,
      diagnostics: [{ level: "error", message: "boom" }],
    }],
    ["a null evidence list", { ...ok, evidence_refs: null }],
  ];
  for (const [what, value] of refused) {
    const v = JSON.parse(JSON.stringify(value));
    assert.equal(score(v), false, what);
  }
  assert.equal(
    schema("score_batch")({ evaluator: "e", scores: [] }),
    false,
    "an empty batch",
  );
});

Deno.test("the runrecord schema refuses a contradictory verdict, authority or a missing dimension", async () => {
  const record = JSON.parse(
    await Deno.readTextFile(new URL("groundedness/runrecord.json", EXAMPLES)),
  );
  const runrecord = schema("runrecord");
  assert.ok(runrecord(record));
  const edits: Array<[string, (r: Json) => void]> = [
    ["a pass with a failing gate", (r) => {
      r.scorecard.verdict.verdict = "pass";
      r.scorecard.verdict.failing_gates = ["set_overlap"];
    }],
    ["a fail that does not fail CI", (r) => {
      r.scorecard.verdict.verdict = "fail";
      r.scorecard.verdict.failing_gates = ["set_overlap"];
    }],
    ["an authority that gates and blocks", (r) => {
      r.scorecard.authority.set_overlap = {
        can_gate: true,
        level: "gating",
        blocked: true,
        reasons: [],
      };
    }],
    ["an informational authority that gates", (r) => {
      r.scorecard.authority.set_overlap.can_gate = true;
    }],
    ["no evaluator dimension", (r) => {
      delete r.provenance.dimensions.evaluator;
    }],
    ["a negative count", (r) => {
      r.scorecard.metrics[0].included_count = -1;
    }],
    ["no run id", (r) => {
      r.run_id = "";
    }],
  ];
  for (const [what, edit] of edits) {
    const copy = structuredClone(record);
    edit(copy);
    assert.equal(runrecord(copy), false, what);
  }
});
