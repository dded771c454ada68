/**
 * The Score vocabulary through the command line, case by case: each row of
 * the README's "what happened" table made to happen by a real run, and each
 * status counted by its name in the summary, `aggregate`, `view` and `diff`.
 */

import assert from "node:assert/strict";
import { cli, cliWithStdin } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { fakeLlm, lastMessage, reply } from "../_fake_llm.ts";
import { DIAGNOSTIC_CODES, parseScore, type Score } from "../../mod.ts";

const KEY = "sk-test-mapping";

// The system under test: "crash" makes it fail, anything else gets "4".
const TARGET = `input=$(cat)
case "$input" in *crash*) echo "the bot fell over" >&2; exit 1;; esac
echo 4`;

// A scorer that fails on every case it is given: exit status 3.
const BROKEN = `cat >/dev/null; echo "no model file" >&2; exit 3`;

const suite = (baseUrl: string, gates = "") =>
  `dataset: data.jsonl
target: { type: subprocess, cmd: sh target.sh }
scorers:
  - type: exact_match
  - type: subprocess
    name: broken
    cmd: sh broken.sh
  - type: llm_judge
    base_url: ${baseUrl}
    model: fake-judge
    api_key_env: FAKE_API_KEY
    retry_delay: 0.01
${gates}`;

const DATA = [
  '{"id": "ok", "input": "2+2", "expected": "4"}',
  '{"id": "open", "input": "say hi"}',
  '{"id": "down", "input": "crash now", "expected": "4"}',
  '{"id": "bad", "input": 5}',
].join("\n") + "\n";

type Row = [string, string, string, string, string | undefined];

function rows(scores: Score[]): Row[] {
  return scores.map((s) => [
    s.example_id!.replace(/^data\.jsonl#/, ""),
    s.metric,
    s.status,
    s.validity,
    s.diagnostics.find((d) => d.severity === "error")?.code,
  ]);
}

function parseLines(text: string): Score[] {
  return text.trim().split("\n").map((l) => parseScore(JSON.parse(l)));
}

Deno.test("cli run maps every outcome to evalglass's status and validity, with its code", async () => {
  // The judge answers 7 on a 0..1 scale: measured, but not trustworthy.
  await using judge = fakeLlm({
    handler: (request) =>
      lastMessage(request).includes("say hi")
        ? reply.ok('{"score": 0.9, "reason": "friendly"}')
        : reply.ok('{"score": 7, "reason": "great"}'),
  });
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/target.sh`, TARGET);
    await Deno.writeTextFile(`${dir}/broken.sh`, BROKEN);
    await Deno.writeTextFile(`${dir}/data.jsonl`, DATA);
    await Deno.writeTextFile(`${dir}/suite.yaml`, suite(judge.baseUrl));
    const out = await cli(
      ["run", "suite.yaml", "--out", "scores.jsonl"],
      dir,
      { FAKE_API_KEY: KEY },
    );
    // A malformed record is reported, the others are scored, and run exits 2.
    assert.equal(out.code, 2, out.stderr);
    assert.match(out.stderr, /data\.jsonl" line 4: "input" must be/);
    const scores = parseLines(await Deno.readTextFile(`${dir}/scores.jsonl`));
    assert.deepEqual(rows(scores), [
      // measured and trusted
      ["ok", "exact_match", "scored", "valid", undefined],
      // the scorer failed
      ["ok", "broken", "error", "not_measured", "scorer.exit_status"],
      // measured, not trustworthy
      ["ok", "llm_judge", "scored", "invalid", undefined],
      // the metric does not apply
      ["open", "exact_match", "non_evaluable", "not_applicable", undefined],
      ["open", "broken", "error", "not_measured", "scorer.exit_status"],
      ["open", "llm_judge", "scored", "valid", undefined],
      // the target failed: every metric is blocked, no scorer ran
      ["down", "exact_match", "blocked", "not_measured", "target.error"],
      ["down", "broken", "blocked", "not_measured", "target.error"],
      ["down", "llm_judge", "blocked", "not_measured", "target.error"],
      // the record is malformed
      ["bad", "exact_match", "blocked", "not_measured", "case.invalid"],
      ["bad", "broken", "blocked", "not_measured", "case.invalid"],
      ["bad", "llm_judge", "blocked", "not_measured", "case.invalid"],
    ]);
    const byKey = new Map(
      scores.map((s) => [`${s.example_id} ${s.metric}`, s]),
    );
    const at = (id: string, metric: string) =>
      byKey.get(`data.jsonl#${id} ${metric}`)!;
    // The reasons start as the README's table says.
    assert.equal(
      at("open", "exact_match").reason,
      "not applicable: the case has no expected",
    );
    assert.match(at("ok", "broken").reason!, /^scorer error: .*status 3/);
    assert.match(at("down", "broken").reason!, /^target error: .*status 1/);
    assert.match(at("bad", "broken").reason!, /^invalid case: /);
    // Verdicts: failures fail, a non-evaluable Score has none.
    assert.equal(at("down", "exact_match").passed, false);
    assert.equal(at("ok", "broken").passed, false);
    assert.equal("passed" in at("open", "exact_match"), false);
    // The judge's grade off its scale is a warning with its own code.
    assert.deepEqual(at("ok", "llm_judge").diagnostics.map((d) => d.code), [
      "judge.out_of_range",
    ]);
    // Every code written is one the README lists.
    for (const s of scores) {
      for (const d of s.diagnostics) {
        assert.ok(d.code in DIAGNOSTIC_CODES, `unlisted code ${d.code}`);
      }
    }
    // The judge was never asked about the case whose target failed.
    assert.equal(judge.requests.length, 2);

    // The summary counts each status by its name.
    assert.match(
      out.stderr,
      /\berror\s+blocked\s+skipped\s+non_evaluable\b/,
    );
    assert.match(out.stderr, /^broken\s.*\s2\s+2\s+0\s+0$/m);
    assert.match(out.stderr, /^exact_match\s.*\s0\s+2\s+0\s+1$/m);

    // aggregate counts them by name too; a skipped Score read from a file counts.
    const skippedLine = JSON.stringify({
      metric: "exact_match",
      status: "skipped",
      validity: "not_measured",
      value: null,
      reason: "filtered out",
      evaluator_version: "exact_match@1",
      example_id: "data.jsonl#later",
      unit_id: "data.jsonl#later",
      diagnostics: [],
      evidence_refs: [],
    });
    await Deno.writeTextFile(
      `${dir}/more.jsonl`,
      `${await Deno.readTextFile(`${dir}/scores.jsonl`)}${skippedLine}\n`,
    );
    const agg = await cliWithStdin(
      ["aggregate"],
      dir,
      await Deno.readTextFile(`${dir}/more.jsonl`),
    );
    assert.equal(agg.code, 0, agg.stderr);
    const aggregates = new Map(
      agg.stdout.trim().split("\n").map((l) => {
        const a = JSON.parse(l);
        return [a.metric, a];
      }),
    );
    const em = aggregates.get("exact_match");
    assert.deepEqual(
      [em.n, em.aggregatable, em.errors, em.blocked, em.skipped],
      [5, 1, 0, 2, 1],
    );
    assert.deepEqual([em.non_evaluable, em.not_applicable, em.invalid], [
      1,
      1,
      0,
    ]);
    // passed 1 of (1 aggregatable + 0 errors + 2 blocked).
    assert.equal(em.pass_rate, 1 / 3);
    const judged = aggregates.get("llm_judge");
    assert.deepEqual([judged.aggregatable, judged.invalid, judged.blocked], [
      1,
      1,
      2,
    ]);

    // view --by-call shows each status by name.
    const view = await cli(["view", "scores.jsonl", "--by-call"], dir);
    assert.equal(view.code, 0, view.stderr);
    assert.match(
      view.stdout,
      /exact_match\s+non_evaluable\s+–\s+–\s+not applicable/,
    );
    assert.match(view.stdout, /broken\s+blocked\s+–\s+FAIL\s+target error/);
    // Scored but invalid: neither a pass nor a failure.
    assert.match(view.stdout, /llm_judge\s+scored\/invalid\s+7\.000\s+–\s/);
  });
});

Deno.test("cli diff counts each status by name when a target breaks, and max_blocked gates it", async () => {
  await using judge = fakeLlm({
    handler: () => reply.ok('{"score": 1, "reason": "fine"}'),
  });
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/broken.sh`, BROKEN);
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      '{"id": "a", "input": "2+2", "expected": "4"}\n' +
        '{"id": "b", "input": "3+1", "expected": "4"}\n',
    );
    const gates = `gates:
  exact_match:
    max_blocked: 0
  broken:
    allow_unmeasured: true
`;
    await Deno.writeTextFile(`${dir}/suite.yaml`, suite(judge.baseUrl, gates));
    // Run A: the target answers everything.
    await Deno.writeTextFile(`${dir}/target.sh`, TARGET);
    const a = await cli(["run", "suite.yaml", "--out", "a.jsonl"], dir, {
      FAKE_API_KEY: KEY,
    });
    assert.equal(a.code, 0, a.stderr);
    // Run B: the target is down for every case; the gate on blocked fails.
    await Deno.writeTextFile(`${dir}/target.sh`, "cat >/dev/null; exit 1");
    const b = await cli(["run", "suite.yaml", "--out", "b.jsonl"], dir, {
      FAKE_API_KEY: KEY,
    });
    assert.equal(b.code, 1, b.stderr);
    assert.match(
      b.stderr,
      /gate failed: exact_match: blocked 2 > max_blocked 0/,
    );
    const diff = await cli(["diff", "a.jsonl", "b.jsonl"], dir);
    assert.equal(diff.code, 0, diff.stderr);
    const lines = new Map(
      diff.stdout.trim().split("\n").map((l) => {
        const d = JSON.parse(l);
        return [d.metric, d];
      }),
    );
    const em = lines.get("exact_match");
    assert.equal(em.pairs, 0, "no example is measured in both runs");
    assert.deepEqual(em.statuses_a, {
      scored: 2,
      blocked: 0,
      non_evaluable: 0,
      skipped: 0,
      error: 0,
    });
    assert.deepEqual(em.statuses_b, {
      scored: 0,
      blocked: 2,
      non_evaluable: 0,
      skipped: 0,
      error: 0,
    });
    assert.deepEqual(lines.get("broken").statuses_a.error, 2);
    assert.deepEqual(lines.get("broken").statuses_b.blocked, 2);
    // The table on stderr says it in words.
    assert.match(diff.stderr, /^exact_match: blocked 0 → 2$/m);
    assert.match(diff.stderr, /^broken: error 2 → 0, blocked 0 → 2$/m);
  });
});
