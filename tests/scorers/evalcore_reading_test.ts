/**
 * Protocol v0 as EvalCore, its reference implementation, reads it: a
 * verdict's `"passed": null` and `"reason": null` are absent (serde reads
 * `Option` fields so, and Python writes `None` as `null`), and a case's
 * `context` that is one string is one chunk. Real Python 3 scorers, through
 * `score` and `run`, one process per case and persistent.
 */

import assert from "node:assert/strict";
import { cli, cliWithStdin } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { parseVerdict, SubprocessScorerError } from "../../mod.ts";

/**
 * A scorer that answers with the Python dict given as its last argument,
 * written by `json.dumps` (so `None` is `null`); with `--persistent`, once
 * per payload line.
 */
const VERDICT_PY = `import ast, json, sys
verdict = ast.literal_eval(sys.argv[-1])
if sys.argv[1] == "--persistent":
    for line in sys.stdin:
        print(json.dumps(verdict), flush=True)
else:
    sys.stdin.read()
    print(json.dumps(verdict))
`;

/** A scorer whose reason is the payload it was given, exactly. */
const ECHO_PY = `import json, sys
def verdict(payload):
    return {"score": 1, "passed": None, "reason": payload.rstrip("\\n")}
if len(sys.argv) > 1 and sys.argv[1] == "--persistent":
    for line in sys.stdin:
        print(json.dumps(verdict(line)), flush=True)
else:
    print(json.dumps(verdict(sys.stdin.read())))
`;

const BOTH_NULL = "{'score': 0.7, 'passed': None, 'reason': None}";
const PASSED_NULL = "{'score': 0.3, 'passed': None}";

function lines(text: string): Record<string, unknown>[] {
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

/** The fields of a Score these tests are about. */
function verdictOf(score: Record<string, unknown>): unknown[] {
  return [
    score.metric,
    score.status,
    score.value,
    score.passed,
    "reason" in score ? score.reason : "(absent)",
  ];
}

/** A quoted word for `sh`. */
function sh(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

async function withScripts(fn: (dir: string) => Promise<void>): Promise<void> {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/verdict.py`, VERDICT_PY);
    await Deno.writeTextFile(`${dir}/echo.py`, ECHO_PY);
    await fn(dir);
  });
}

const MODES = [
  { mode: "one process per case", flag: [] as string[], arg: "" },
  { mode: "persistent", flag: ["--persistent"], arg: "--persistent " },
];

Deno.test("parseVerdict reads null passed and reason as absent and keeps every other wrong type invalid", () => {
  const none = parseVerdict(
    "x",
    '{"score": 0.7, "passed": null, "reason": null}',
  );
  assert.deepEqual(none, { score: 0.7 });
  assert.deepEqual(parseVerdict("x", '{"score": 0.3, "passed": null}'), {
    score: 0.3,
  });
  for (
    const [bad, why] of [
      [
        '{"score": 0.9, "passed": "yes"}',
        '"passed" is "yes": true, false or null',
      ],
      ['{"score": 0.9, "reason": 5}', '"reason" is 5: a string or null'],
      [
        '{"score": null, "passed": null}',
        '"score" is null: a scorer that cannot score a case exits non-zero, saying why on stderr',
      ],
      ['{"passed": null, "reason": null}', 'it has no "score"'],
    ]
  ) {
    assert.throws(
      () => parseVerdict("x", bad!),
      (e: unknown) =>
        e instanceof SubprocessScorerError &&
        e.message ===
          `scorer "x" printed invalid verdict JSON: ${
            JSON.stringify(bad)
          } (${why})`,
      bad,
    );
  }
});

Deno.test("parseVerdict trims stdout as EvalCore does (NEL too, a BOM kept taken) and refuses a verdict field given twice", () => {
  // Rust's str::trim takes U+0085; JavaScript's trim does not.
  assert.deepEqual(parseVerdict("x", '\u0085{"score": 1}\u0085\n'), {
    score: 1,
  });
  assert.deepEqual(parseVerdict("x", '\ufeff{"score": 1}\n'), { score: 1 });
  // A reason that quotes a field name is no repeat.
  assert.deepEqual(
    parseVerdict("x", '{"score": 1, "reason": "the \\"score\\" was 1"}'),
    { score: 1, reason: 'the "score" was 1' },
  );
  for (
    const [bad, field] of [
      ['{"score": 0, "score": 1}', "score"],
      ['{"score": 1, "passed": true, "passed": false}', "passed"],
      ['{"score": 1, "sc\\u006fre": 0}', "score"],
    ]
  ) {
    assert.throws(
      () => parseVerdict("x", bad!),
      (e: unknown) =>
        e instanceof SubprocessScorerError &&
        e.code === "scorer.invalid_verdict" &&
        e.message ===
          `scorer "x" printed invalid verdict JSON: ${
            JSON.stringify(bad)
          } (it gives "${field}" twice)`,
      bad,
    );
  }
});

for (const { mode, flag, arg } of MODES) {
  Deno.test(`score (${mode}) reads a Python scorer's None passed and reason as absent`, async () => {
    await withScripts(async (dir) => {
      const out = await cliWithStdin(
        [
          "score",
          ...flag,
          "--scorer",
          `python3 verdict.py ${arg}${sh(BOTH_NULL)}`,
          "--name",
          "both_null",
          "--scorer",
          `python3 verdict.py ${arg}${sh(PASSED_NULL)}`,
          "--name",
          "passed_null",
        ],
        dir,
        '{"input":"q1","output":"a1"}\n{"input":"q2","output":"a2"}\n',
        60_000,
      );
      assert.deepEqual([out.code, out.stderr], [0, ""]);
      // passed defaults to score >= 0.5: 0.7 passes, 0.3 fails; no reason.
      assert.deepEqual(lines(out.stdout).map(verdictOf), [
        ["both_null", "scored", 0.7, true, "(absent)"],
        ["passed_null", "scored", 0.3, false, "(absent)"],
        ["both_null", "scored", 0.7, true, "(absent)"],
        ["passed_null", "scored", 0.3, false, "(absent)"],
      ]);
    });
  });

  Deno.test(`score (${mode}) still calls a Python scorer's "yes" passed and numeric reason invalid verdicts`, async () => {
    await withScripts(async (dir) => {
      const yes = `python3 verdict.py ${arg}${
        sh("{'score': 0.9, 'passed': 'yes'}")
      }`;
      const five = `python3 verdict.py ${arg}${
        sh("{'score': 0.9, 'reason': 5}")
      }`;
      const out = await cliWithStdin(
        [
          "score",
          ...flag,
          "--scorer",
          yes,
          "--name",
          "yes",
          "--scorer",
          five,
          "--name",
          "five",
        ],
        dir,
        '{"input":"q","output":"a"}\n',
        60_000,
      );
      assert.deepEqual([out.code, out.stderr], [0, ""]);
      const invalid = (cmd: string, stdout: string) =>
        `scorer error: scorer ${
          JSON.stringify(cmd)
        } printed invalid verdict JSON: ${JSON.stringify(stdout)}`;
      assert.deepEqual(lines(out.stdout).map(verdictOf), [
        [
          "yes",
          "error",
          null,
          false,
          invalid(yes, '{"score": 0.9, "passed": "yes"}') +
          ' ("passed" is "yes": true, false or null)',
        ],
        [
          "five",
          "error",
          null,
          false,
          invalid(five, '{"score": 0.9, "reason": 5}') +
          ' ("reason" is 5: a string or null)',
        ],
      ]);
    });
  });

  Deno.test(`run (${mode}) reads a Python scorer's None passed and reason as absent`, async () => {
    await withScripts(async (dir) => {
      const persistent = arg !== "";
      await Deno.writeTextFile(
        `${dir}/cases.jsonl`,
        '{"id":"a","input":"q1","output":"a1"}\n{"id":"b","input":"q2","output":"a2"}\n',
      );
      // YAML reads JSON: the commands' quotes stay as written.
      await Deno.writeTextFile(
        `${dir}/suite.yaml`,
        JSON.stringify({
          dataset: "cases.jsonl",
          target: { type: "replay" },
          scorers: [
            {
              type: "subprocess",
              name: "both_null",
              cmd: `python3 verdict.py ${arg}${sh(BOTH_NULL)}`,
              persistent,
            },
            {
              type: "subprocess",
              name: "passed_null",
              cmd: `python3 verdict.py ${arg}${sh(PASSED_NULL)}`,
              persistent,
            },
          ],
        }),
      );
      const out = await cli(["run", "suite.yaml"], dir);
      assert.equal(out.code, 0, out.stderr);
      const scores = lines(out.stdout);
      assert.deepEqual(scores.map((s) => s.example_id), [
        "cases.jsonl#a",
        "cases.jsonl#a",
        "cases.jsonl#b",
        "cases.jsonl#b",
      ]);
      assert.deepEqual(scores.map(verdictOf), [
        ["both_null", "scored", 0.7, true, "(absent)"],
        ["passed_null", "scored", 0.3, false, "(absent)"],
        ["both_null", "scored", 0.7, true, "(absent)"],
        ["passed_null", "scored", 0.3, false, "(absent)"],
      ]);
    });
  });
}

/** One case, `context` one string, in each dataset format. */
const ONE_STRING_DATASETS: Array<[string, string]> = [
  ["cases.jsonl", '{"id":"c","input":"q","context":"one string"}\n'],
  ["cases.json", '[{"id":"c","input":"q","context":"one string"}]'],
  ["cases.yaml", "- id: c\n  input: q\n  context: one string\n"],
  ["cases.csv", "id,input,context\nc,q,one string\n"],
];

const ONE_CHUNK_PAYLOAD =
  '{"context":["one string"],"expected":null,"input":"q","output":"a"}';

for (const { mode, arg } of MODES) {
  Deno.test(`run (${mode}) hands a dataset's one-string context to the target and the scorer as one chunk, in every format`, async () => {
    await withScripts(async (dir) => {
      for (const [file, text] of ONE_STRING_DATASETS) {
        await Deno.writeTextFile(`${dir}/${file}`, text);
        // The target answers with its own payload: what it was given.
        await Deno.writeTextFile(
          `${dir}/suite.yaml`,
          JSON.stringify({
            dataset: file,
            target: { type: "subprocess", cmd: "cat" },
            scorers: [{
              type: "subprocess",
              cmd: `python3 echo.py ${arg}`.trim(),
              persistent: arg !== "",
            }],
          }),
        );
        const out = await cli(["run", "suite.yaml"], dir);
        assert.equal(out.code, 0, `${file}: ${out.stderr}`);
        const targetPayload = '{"context":["one string"],"input":"q"}';
        const scorerPayload = `{"context":["one string"],"expected":null,` +
          `"input":"q","output":${JSON.stringify(targetPayload)}}`;
        assert.deepEqual(
          lines(out.stdout).map(verdictOf),
          [["echo", "scored", 1, true, scorerPayload]],
          file,
        );
      }
    });
  });
}

for (const { mode, flag, arg } of MODES) {
  Deno.test(`score (${mode}) hands a unit record's one-string context to the scorer as one chunk`, async () => {
    await withScripts(async (dir) => {
      const out = await cliWithStdin(
        ["score", ...flag, "--scorer", `python3 echo.py ${arg}`.trim()],
        dir,
        '{"input":"q","output":"a","context":"one string"}\n' +
          '{"input":"q","output":"a","context":["one string"]}\n' +
          '{"input":"q","output":"a","context":5}\n',
        60_000,
      );
      assert.equal(out.code, 2, out.stderr);
      assert.equal(
        out.stderr,
        'evalpipe: Malformed unit record in stdin line 3: "context" must be a string or a list of strings, not a number\n',
      );
      assert.deepEqual(lines(out.stdout).map(verdictOf), [
        ["echo", "scored", 1, true, ONE_CHUNK_PAYLOAD],
        ["echo", "scored", 1, true, ONE_CHUNK_PAYLOAD],
        // The malformed record's Score is blocked, never dropped.
        [
          "echo",
          "blocked",
          null,
          false,
          'invalid case: "context" must be a string or a list of strings, not a number',
        ],
      ]);
    });
  });
}
