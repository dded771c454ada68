/**
 * The status/validity table and the `passed` rule of DESIGN.md's "Score"
 * section, as every reader of Scores applies them: `parseScore`, the
 * validation stage, a function scorer's Score in `run`, and the commands
 * that read a Scores file.
 */

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import {
  functionScorer,
  makeScore,
  parseScore,
  readScoresFile,
  type Score,
  ScoreError,
  scoreLine,
  ScoreSyntaxError,
  scoreUnits,
  validateScores,
} from "../../mod.ts";

/** Each status and the validities the table gives it. */
const ALLOWED: Record<string, string[]> = {
  scored: ["valid", "invalid"],
  non_evaluable: ["not_applicable"],
  error: ["not_measured"],
  blocked: ["not_measured"],
  skipped: ["not_measured"],
};

const VALIDITIES = ["valid", "invalid", "not_measured", "not_applicable"];

/** A Score of `status` and `validity`, keys in canonical order. */
function candidate(
  status: string,
  validity: string,
  passed?: boolean,
): Record<string, unknown> {
  const c: Record<string, unknown> = {
    metric: "m",
    status,
    validity,
    value: status === "scored" ? 1 : null,
  };
  if (passed !== undefined) c.passed = passed;
  else if (status === "scored") c.passed = true;
  else if (status === "error" || status === "blocked") c.passed = false;
  c.evaluator_version = "m@1";
  c.diagnostics = [];
  c.evidence_refs = [];
  return c;
}

Deno.test("parseScore accepts exactly the status and validity pairs of the design's table", () => {
  for (const [status, allowed] of Object.entries(ALLOWED)) {
    for (const validity of VALIDITIES) {
      const c = candidate(status, validity);
      // The earlier vocabulary: a Score without a value called itself valid
      // or invalid.
      const earlier = status !== "scored" &&
        (validity === "valid" || validity === "invalid");
      if (allowed.includes(validity) || earlier) {
        const s = parseScore(c);
        assert.equal(s.status, status);
        assert.ok(allowed.includes(s.validity), `${status} ${validity}`);
        continue;
      }
      assert.throws(
        () => parseScore(c),
        (error: unknown) =>
          error instanceof ScoreSyntaxError &&
          error.message ===
            `"validity": ${
              status === "error" ? "An" : "A"
            } "${status}" Score must be ${
              allowed.map((v) => `"${v}"`).join(" or ")
            }, not "${validity}"`,
        `${status} ${validity}`,
      );
      assert.throws(() => makeScore(c as unknown as Score), ScoreError);
    }
  }
  // The earlier status, as files written before read it.
  for (const validity of ["valid", "invalid", "not_applicable"]) {
    const s = parseScore(candidate("not_applicable", validity));
    assert.equal(s.status, "non_evaluable");
    assert.equal(s.validity, "not_applicable");
  }
  // Named as the Score wrote it, judged as today's status.
  assert.throws(
    () => parseScore(candidate("not_applicable", "not_measured")),
    /^ScoreSyntaxError: "validity": A "not_applicable" Score must be "not_applicable", not "not_measured"$/,
  );
});

Deno.test("parseScore refuses a verdict on a skipped or a non-evaluable Score", () => {
  for (const status of ["skipped", "non_evaluable"]) {
    const validity = status === "skipped" ? "not_measured" : "not_applicable";
    for (const passed of [true, false]) {
      assert.throws(
        () => parseScore(candidate(status, validity, passed)),
        (error: unknown) =>
          error instanceof ScoreSyntaxError &&
          error.message.startsWith(`"passed": `) &&
          error.message.endsWith(
            `Score has no verdict: "passed" must be absent, not ${passed}`,
          ),
        `${status} ${passed}`,
      );
    }
    // `null` is absent, as older files wrote it.
    const read = parseScore({ ...candidate(status, validity), passed: null });
    assert.equal("passed" in read, false);
  }
});

Deno.test("parseScore reads a verdict on a skipped or a not-applicable Score of the earlier vocabulary as none", async () => {
  // Before not_measured and non_evaluable, evalpipe kept a function
  // scorer's verdict on these; such files still read, without it.
  for (
    const [status, validity] of [
      ["not_applicable", "valid"],
      ["not_applicable", "invalid"],
      ["not_applicable", "not_applicable"],
      ["skipped", "valid"],
      ["skipped", "invalid"],
    ]
  ) {
    for (const passed of [true, false]) {
      const read = parseScore(candidate(status!, validity!, passed));
      assert.equal("passed" in read, false, `${status} ${validity}`);
      assert.equal(
        read.validity,
        status === "skipped" ? "not_measured" : "not_applicable",
      );
    }
  }
  await withTempDir(async (dir) => {
    const old = [
      candidate("not_applicable", "valid", false),
      candidate("skipped", "valid", true),
      candidate("scored", "valid"),
    ].map((c) => JSON.stringify(c)).join("\n") + "\n";
    await Deno.writeTextFile(`${dir}/old.ndjson`, old);
    const { code, stdout, stderr } = await cli(
      ["aggregate", "old.ndjson"],
      dir,
    );
    assert.equal(code, 0, stderr);
    const [m] = stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(m.n, 3);
    assert.equal(m.not_applicable, 1);
    assert.equal(m.skipped, 1);
    assert.equal(m.passed, 1);
  });
});

Deno.test("validateScores and a function scorer's Score turn a ruled-out pair into an error", async () => {
  const bad = [
    candidate("error", "not_applicable"),
    candidate("skipped", "not_measured", true),
    candidate("scored", "not_measured"),
  ];
  const out = await Array.fromAsync(
    ReadableStream.from(bad).pipeThrough(validateScores()),
  );
  for (const [i, s] of out.entries()) {
    assert.equal(s.status, "error", `candidate ${i + 1}`);
    assert.match(s.reason ?? "", /^invalid Score: "(validity|passed)": /);
  }
  // What `run` does with a function scorer's result: the fast path for a
  // Score in canonical form checks the same rules.
  for (const c of bad) {
    const scorer = functionScorer("m", () => c as unknown as Score);
    const unit = { example_id: "d#1", unit_id: "d#1", input: "q", output: "a" };
    const [s] = await Array.fromAsync(
      ReadableStream.from([unit]).pipeThrough(scoreUnits([scorer])),
    );
    assert.equal(s?.status, "error", JSON.stringify(c));
    assert.match(s?.reason ?? "", /invalid Score: "(validity|passed)": /);
  }
});

Deno.test("readScoresFile and the commands that read Scores name the file, line and field of a ruled-out pair", async () => {
  await withTempDir(async (dir) => {
    const ids = (n: number) => ({ example_id: `d#${n}`, unit_id: `d#${n}` });
    const good = scoreLine(
      parseScore({ ...candidate("scored", "valid"), ...ids(1) }),
    );
    const lines = [
      good,
      JSON.stringify({
        ...candidate("skipped", "not_measured", true),
        ...ids(2),
      }),
      JSON.stringify({ ...candidate("error", "not_applicable"), ...ids(3) }),
    ];
    await Deno.writeTextFile(`${dir}/a.ndjson`, lines.join("\n") + "\n");
    const skippedMessage =
      '"passed": A "skipped" Score has no verdict: "passed" must be absent, not true';
    const errorMessage =
      '"validity": An "error" Score must be "not_measured", not "not_applicable"';
    const { scores, problems } = await readScoresFile(`${dir}/a.ndjson`);
    assert.equal(scores.length, 1);
    assert.deepEqual(problems, [
      { line: 2, message: skippedMessage },
      { line: 3, message: errorMessage },
    ]);
    for (
      const args of [
        ["aggregate", "a.ndjson"],
        ["diff", "a.ndjson", "a.ndjson"],
        ["view", "a.ndjson"],
        ["merge", "a.ndjson"],
      ]
    ) {
      const { code, stderr } = await cli(args, dir);
      assert.equal(code, 2, `${args.join(" ")}: ${stderr}`);
      assert.ok(
        stderr.includes(
          `evalpipe: Malformed Score in "a.ndjson" line 2: ${skippedMessage}\n`,
        ),
        `${args.join(" ")}: ${stderr}`,
      );
      // merge stops at the first; the others read on.
      if (args[0] === "merge") continue;
      assert.ok(
        stderr.includes(
          `evalpipe: Malformed Score in "a.ndjson" line 3: ${errorMessage}\n`,
        ),
        `${args.join(" ")}: ${stderr}`,
      );
    }
  });
});

Deno.test("parseScore and aggregate read an evalglass record's error Score that calls itself invalid", async () => {
  // evalglass's own word_count_bounds and numeric_bounds write a Score with
  // no value as "error" + "invalid" (word_count_bounds.not_text), as every
  // evalpipe before "not_measured" could: the earlier vocabulary, read as
  // the status's validity, as "valid" is.
  for (const status of ["error", "blocked", "skipped", "non_evaluable"]) {
    const s = parseScore(candidate(status, "invalid"));
    assert.equal(s.status, status);
    assert.deepEqual([s.validity], ALLOWED[status]);
  }
  const earlier = parseScore(candidate("not_applicable", "invalid"));
  assert.equal(earlier.validity, "not_applicable");
  await withTempDir(async (dir) => {
    const fixture = new URL(
      "../fixtures/evalglass/examples/groundedness/runrecord.json",
      import.meta.url,
    );
    const record = JSON.parse(await Deno.readTextFile(fixture));
    const first = record.scores[0];
    Object.assign(first, {
      status: "error",
      validity: "invalid",
      value: null,
      diagnostics: [{
        code: "word_count_bounds.not_text",
        severity: "error",
        message: "field 'answer' is int, expected a string",
      }],
    });
    await Deno.writeTextFile(`${dir}/r.json`, JSON.stringify(record));
    const { code, stdout, stderr } = await cli(["aggregate", "r.json"], dir);
    assert.equal(code, 0, stderr);
    const line = stdout.split("\n").map((l) => l && JSON.parse(l))
      .find((l) => l && l.metric === first.metric);
    assert.equal(line.errors, 1);
    assert.equal(line.invalid, 0);
  });
});

Deno.test("a ruled-out pair of the earlier vocabulary is named as the line wrote it: 'A \"not_applicable\" Score', not today's 'non_evaluable'", async () => {
  await withTempDir(async (dir) => {
    const ids = (n: number) => ({ example_id: `d#${n}`, unit_id: `d#${n}` });
    // Before, both said `A "non_evaluable" Score …` of lines that wrote
    // `not_applicable`, a word a reader searching the file does not find.
    const lines = [
      JSON.stringify({
        ...candidate("not_applicable", "not_applicable"),
        value: 0.5,
        ...ids(1),
      }),
      JSON.stringify({
        ...candidate("not_applicable", "not_measured"),
        ...ids(2),
      }),
      JSON.stringify({
        ...candidate("non_evaluable", "not_measured"),
        ...ids(3),
      }),
    ];
    await Deno.writeTextFile(`${dir}/old.ndjson`, lines.join("\n") + "\n");
    const messages = [
      '"value": A "not_applicable" Score must carry a null value, not 0.5',
      '"validity": A "not_applicable" Score must be "not_applicable", not "not_measured"',
      '"validity": A "non_evaluable" Score must be "not_applicable", not "not_measured"',
    ];
    const { problems } = await readScoresFile(`${dir}/old.ndjson`);
    assert.deepEqual(
      problems,
      messages.map((message, i) => ({ line: i + 1, message })),
    );
    const { code, stderr } = await cli(["aggregate", "old.ndjson"], dir);
    assert.equal(code, 2, stderr);
    for (const [i, message] of messages.entries()) {
      assert.ok(
        stderr.includes(
          `evalpipe: Malformed Score in "old.ndjson" line ${
            i + 1
          }: ${message}\n`,
        ),
        stderr,
      );
    }
  });
});
