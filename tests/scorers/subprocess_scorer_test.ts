/**
 * Conformance of the subprocess scorer to protocol v0 and to DESIGN.md's
 * "The subprocess scorer, beyond the seed's words", driving real scorer
 * processes (sh, python3, node) from `tests/fixtures/scorers/`.
 */

import assert from "node:assert/strict";
import {
  assertNoneRunning,
  delay,
  holdUntil,
  scoreAll,
  within,
  withTempDir as inTempDir,
  writeAndClose,
} from "../_proc.ts";
import {
  exactMatch,
  parseScore,
  persistentScorer,
  readUnits,
  type Score,
  type Scorer,
  scorerPayload,
  scoreUnits,
  subprocessScorer,
  type SubprocessScorerOptions,
  type Unit,
} from "../../mod.ts";
import { defaultScorerName, scriptOf } from "../../src/process/command.ts";
import { cliWithStdin } from "../_cli.ts";

/** The project root: fixture commands are written relative to it. */
const ROOT = decodeURIComponent(new URL("../..", import.meta.url).pathname)
  .replace(/\/$/, "");
const FIXTURES = "tests/fixtures/scorers";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Quotes a word for `sh`. */
function sh(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

function unit(fields: Partial<Unit> = {}): Unit {
  return {
    example_id: "t#1",
    unit_id: "t#1",
    input: "q",
    output: "a",
    ...fields,
  };
}

function scorer(cmd: string, options: SubprocessScorerOptions = {}): Scorer {
  return subprocessScorer(cmd, { cwd: ROOT, timeout: 20, ...options });
}

async function scoreOne(s: Scorer, u: Unit = unit()): Promise<Score> {
  const scores = await scoreAll([s], [u]);
  assert.equal(scores.length, 1);
  return scores[0]!;
}

/**
 * Asserts that a Score is a scorer error in DESIGN.md's shape, its
 * diagnostic of the README's `code`, and returns
 * its message (the reason without the `scorer error: ` prefix).
 */
function scorerErrorMessage(score: Score, code: string): string {
  assert.equal(score.status, "error", JSON.stringify(score));
  assert.equal(score.validity, "not_measured");
  assert.equal(score.value, null);
  assert.equal(score.passed, false);
  assert.ok(typeof score.reason === "string", "an error Score has a reason");
  assert.ok(
    score.reason.startsWith("scorer error: "),
    `reason ${JSON.stringify(score.reason)}`,
  );
  const message = score.reason.slice("scorer error: ".length);
  const errors = score.diagnostics.filter((d) => d.severity === "error");
  assert.equal(errors.length, 1, JSON.stringify(score.diagnostics));
  assert.equal(errors[0]!.code, code, JSON.stringify(score.diagnostics));
  assert.ok(
    errors[0]!.message.endsWith(message),
    `diagnostic ${JSON.stringify(errors[0]!.message)} lacks the message`,
  );
  return message;
}

function invalidVerdict(cmd: string, stdout: string): string {
  return `scorer ${JSON.stringify(cmd)} printed invalid verdict JSON: ${
    JSON.stringify(stdout.trim())
  }`;
}

async function readPids(file: string, count: number): Promise<number[]> {
  const pids = (await Deno.readTextFile(file)).split("\n")
    .filter((line) => line.trim() !== "").map(Number);
  assert.equal(pids.length, count, `PIDs in ${file}: ${pids.join(", ")}`);
  for (const pid of pids) assert.ok(Number.isInteger(pid) && pid > 1);
  return pids;
}

/** Waits (bounded) until `file` lists `count` PIDs, and returns them. */
async function waitForPids(file: string, count: number): Promise<number[]> {
  for (let i = 0; i < 500 && pidLines(file) < count; i++) await delay(10);
  return await readPids(file, count);
}

/** How many lines `file` holds now: 0 while it does not exist. */
function pidLines(file: string): number {
  try {
    return Deno.readTextFileSync(file).split("\n")
      .filter((line) => line.trim() !== "").length;
  } catch (error) {
    // Not written yet.
    if (error instanceof Deno.errors.NotFound) return 0;
    throw error;
  }
}

function cli(args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli.ts", ...args],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
}

async function runCli(
  args: string[],
  input: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = cli(args);
  const [, output] = await within(
    Promise.all([
      writeAndClose(child.stdin, encoder.encode(input)),
      child.output(),
    ]),
    60_000,
    "evalpipe score",
  );
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

function ndjson(text: string): unknown[] {
  assert.ok(text === "" || text.endsWith("\n"), "NDJSON ends with a newline");
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

// ---------------------------------------------------------------------------
// The error table

Deno.test("subprocessScorer reports a non-zero exit with its status and trimmed stderr", async () => {
  const cmd = `sh ${FIXTURES}/fail.sh 3`;
  const s = scorer(cmd);
  const score = await scoreOne(s);
  const message = scorerErrorMessage(score, "scorer.exit_status");
  assert.ok(message.startsWith(`scorer ${JSON.stringify(cmd)} `), message);
  assert.match(message, /\b3\b.*something broke: 3$/s);
  assert.ok(!/\s$/.test(message) && !message.includes("\n"), message);
  assert.equal(score.metric, "fail");
  assert.equal(score.evaluator_version, s.version);
  assert.equal(score.example_id, "t#1");
  assert.equal(score.unit_id, "t#1");
  assert.equal(score.validity, "not_measured");
});

Deno.test("subprocessScorer quotes a long stderr by its start and its end, where Python's exception is", async () => {
  // Warnings first (a library's), then the traceback: the exception that
  // says what went wrong is the last line, past 2,000 characters.
  const program = [
    "import json, sys, warnings",
    "json.load(sys.stdin)",
    "for i in range(40):",
    "    warnings.warn(f'option {i} is deprecated and will be removed', DeprecationWarning)",
    "raise ValueError('this metric requires per-case context')",
  ].join("\n");
  const cmd = `python3 -W always -c ${sh(program)}`;
  const message = scorerErrorMessage(
    await scoreOne(scorer(cmd, { name: "warns" })),
    "scorer.exit_status",
  );
  assert.match(message, /exited with status 1: .*option 0 is deprecated/s);
  assert.match(message, /…/);
  assert.ok(
    message.endsWith("ValueError: this metric requires per-case context"),
    message.slice(-200),
  );
  // Still a bounded quote: 2,000 characters of stderr and the cut.
  assert.ok(message.length < cmd.length + 2100, String(message.length));
});

Deno.test("subprocessScorer reports a non-zero exit without stderr, and a missing program", async () => {
  const quiet = `cat >/dev/null; exit 1`;
  const message = scorerErrorMessage(
    await scoreOne(scorer(quiet)),
    "scorer.exit_status",
  );
  assert.ok(message.startsWith(`scorer ${JSON.stringify(quiet)} `), message);
  assert.match(message, /\b1$/);

  const missing = `cat >/dev/null; no-such-program-evalpipe`;
  const m2 = scorerErrorMessage(
    await scoreOne(scorer(missing)),
    "scorer.exit_status",
  );
  assert.match(m2, /\b127\b/);
  assert.match(m2, /no-such-program-evalpipe.*not found$/);
});

Deno.test("subprocessScorer reports a scorer killed by a signal", async () => {
  const cmd = `cat >/dev/null; kill -KILL $$`;
  const message = scorerErrorMessage(
    await scoreOne(scorer(cmd)),
    "scorer.exit_status",
  );
  assert.ok(message.startsWith(`scorer ${JSON.stringify(cmd)} `), message);
  assert.match(message, /SIGKILL|\b137\b/);
});

Deno.test("subprocessScorer says that a verdict printed before a silent non-zero exit fails the case as an error, not as a failing case", async () => {
  // A first scorer's slip: its exit status taken for the case's pass or fail.
  for (const verdict of ['{"score": 0, "passed": false}', '{"score": 1}']) {
    const cmd = `sh ${FIXTURES}/verdict.sh ${sh(verdict)}; exit 1`;
    const message = scorerErrorMessage(
      await scoreOne(scorer(cmd, { name: "exits" })),
      "scorer.exit_status",
    );
    assert.equal(
      message,
      `scorer ${
        JSON.stringify(cmd)
      } exited with status 1 (after a verdict on stdout: a non-zero exit is a scorer error, not a failing case; say that with "passed": false and exit 0)`,
    );
  }
  // Without a verdict, or with a word on stderr (a crash), no such note.
  for (const cmd of ["cat >/dev/null; exit 1", `sh ${FIXTURES}/fail.sh 1`]) {
    const message = scorerErrorMessage(
      await scoreOne(scorer(cmd, { name: "exits" })),
      "scorer.exit_status",
    );
    assert.ok(!message.includes("after a verdict"), message);
  }
});

Deno.test("subprocessScorer reports non-JSON stdout with the protocol's message", async () => {
  const empty = ' (stdout is empty: print one JSON object, {"score": …})';
  for (
    const [stdout, why] of [
      ["not json", ""],
      ["", empty],
      ["  \n", empty],
      [
        "{score: 1}",
        " (a JavaScript object, not JSON: print JSON.stringify(verdict))",
      ],
      ['{"score":1', ""],
    ]
  ) {
    const cmd = `sh ${FIXTURES}/verdict.sh ${sh(stdout!)}`;
    const message = scorerErrorMessage(
      await scoreOne(scorer(cmd)),
      "scorer.invalid_verdict",
    );
    assert.equal(message, invalidVerdict(cmd, stdout!) + why);
  }
});

Deno.test("subprocessScorer reports a score outside 0..1 with the protocol's message", async () => {
  for (
    const [verdict, n] of [
      ['{"score":1.5}', "1.5"],
      ['{"score":-0.1,"passed":true}', "-0.1"],
      ['{"score":2}', "2"],
      ['{"score":100,"reason":"percent"}', "100"],
    ]
  ) {
    const cmd = `sh ${FIXTURES}/verdict.sh ${sh(verdict!)}`;
    const message = scorerErrorMessage(
      await scoreOne(scorer(cmd)),
      "scorer.out_of_range",
    );
    assert.equal(
      message,
      `scorer ${JSON.stringify(cmd)} returned score ${n} outside 0.0..=1.0`,
    );
  }
});

Deno.test("subprocessScorer reports a spawn failure with the protocol's message", async () => {
  const cmd = `sh ${FIXTURES}/verdict.sh '{"score":1}'`;
  const missingDir = `${ROOT}/tests/fixtures/no-such-folder-evalpipe`;
  const s = scorer(cmd, { cwd: missingDir, name: "spawn" });
  const score = await scoreOne(s);
  assert.equal(
    scorerErrorMessage(score, "scorer.spawn_failed"),
    `failed to spawn subprocess scorer: ${cmd}`,
  );
  assert.equal(score.metric, "spawn");
  assert.match(score.evaluator_version, /^spawn@[0-9a-f]{8}$/);
});

// ---------------------------------------------------------------------------
// Verdicts

Deno.test("subprocessScorer defaults passed to score >= 0.5 and honours an explicit passed", async () => {
  const cases: Array<[string, number, boolean]> = [
    ['{"score":0.5}', 0.5, true],
    ['{"score":0.49}', 0.49, false],
    ['{"score":1}', 1, true],
    ['{"score":0}', 0, false],
    ['{"score":0.9,"passed":false}', 0.9, false],
    ['{"score":0.1,"passed":true}', 0.1, true],
    ['{"score":0.5,"passed":false}', 0.5, false],
  ];
  for (const [verdict, value, passed] of cases) {
    const score = await scoreOne(
      scorer(`sh ${FIXTURES}/verdict.sh ${sh(verdict)}`),
    );
    assert.equal(score.status, "scored", verdict);
    assert.equal(score.value, value, verdict);
    assert.equal(score.passed, passed, verdict);
  }
});

Deno.test("subprocessScorer trims stdout, ignores extra verdict fields and omits an absent reason", async () => {
  const trimmed = await scoreOne(scorer(
    `sh ${FIXTURES}/verdict.sh ${
      sh('\n\n  \t{"score":0.7,"reason":" kept as is "}\n \n\n')
    }`,
  ));
  assert.equal(trimmed.value, 0.7);
  assert.equal(trimmed.passed, true);
  assert.equal(trimmed.reason, " kept as is ");

  const extra = await scoreOne(scorer(
    `sh ${FIXTURES}/verdict.sh ${
      sh(
        '{"score":0.8,"extra":{"x":[1]},"metric":"hijack","status":"error",' +
          '"value":0.1,"example_id":"other#9","diagnostics":[1]}',
      )
    }`,
    { name: "judge" },
  ));
  assert.equal(extra.metric, "judge");
  assert.equal(extra.status, "scored");
  assert.equal(extra.value, 0.8);
  assert.equal(extra.example_id, "t#1");
  assert.deepEqual(extra.diagnostics, []);
  assert.ok(!("extra" in extra));
  assert.ok(!("reason" in extra), "reason is omitted when absent");

  const plain = await scoreOne(scorer(
    `sh ${FIXTURES}/verdict.sh '{"score":0.25}'`,
  ));
  assert.ok(!("reason" in plain), JSON.stringify(plain));
  assert.equal(parseScore(JSON.parse(JSON.stringify(plain))).value, 0.25);
});

Deno.test("subprocessScorer refuses verdicts of the wrong shape as invalid verdict JSON", async () => {
  // The protocol's message, then what to change.
  const object = ' (a verdict is a JSON object: {"score": …})';
  const bad: [string, string][] = [
    [
      '{"score":0.9,"passed":"yes"}',
      ' ("passed" is "yes": true, false or null)',
    ],
    ['{"score":0.9,"passed":1}', ' ("passed" is 1: true, false or null)'],
    ['{"score":0.9,"reason":42}', ' ("reason" is 42: a string or null)'],
    ['{"score":0.9,"reason":["a"]}', ' ("reason" is ["a"]: a string or null)'],
    ['{"score":0.9,"reason":5}', ' ("reason" is 5: a string or null)'],
    [
      '{"passed":true,"reason":"no score"}',
      ' (it has no "score", which every verdict gives: {"score": 1, "passed": true})',
    ],
    [
      '{"pass":false}',
      ' (it has no "score", which every verdict gives: {"score": 0, "passed": false})',
    ],
    ['{"reason":"fine"}', ' (it has no "score")'],
    // A key named like a score that holds its reason is no score to rename.
    [
      '{"score_reason":"cites the source","passed":true}',
      ' (it has no "score", which every verdict gives: {"score": 1, "passed": true})',
    ],
    [
      '{"scorer":"faith","faithfulness_score":0.8}',
      ' (it has no "score"; it gives "faithfulness_score": name it "score")',
    ],
    [
      '{"value":0.8,"passed":true}',
      ' (it has no "score"; it gives "value": name it "score")',
    ],
    [
      '{"Score":0.8}',
      ' (it has no "score"; it gives "Score": name it "score")',
    ],
    [
      '{"faithfulness_score":0.8}',
      ' (it has no "score"; it gives "faithfulness_score": name it "score")',
    ],
    [
      '{"verdict":1}',
      ' (it has no "score"; it gives "verdict": name it "score")',
    ],
    // Renamed alone, a value out of range would be refused again.
    [
      '{"Score":1.5}',
      ' (it has no "score"; it gives "Score": name it "score", and give a number within 0..1, not 1.5)',
    ],
    [
      '{"value":85,"explanation":"mostly right"}',
      ' (it has no "score"; it gives "value": name it "score", and give a number within 0..1, not 85)',
    ],
    [
      '{"verdict":"pass"}',
      ' (it has no "score"; it gives "verdict": a verdict\'s number is its "score")',
    ],
    [
      '{"score":"0.9"}',
      ' ("score" is the string "0.9": write the number, 0.9)',
    ],
    [
      '{"score":" .5 "}',
      ' ("score" is the string " .5 ": write the number, 0.5)',
    ],
    ['{"score":"high"}', ' ("score" is the string "high", not a number)'],
    // Only a plain decimal is taken for the number it was meant to be.
    ['{"score":"0x1"}', ' ("score" is the string "0x1", not a number)'],
    ['{"score":"1e3"}', ' ("score" is the string "1e3", not a number)'],
    [
      '{"score":"Infinity"}',
      ' ("score" is the string "Infinity", not a number)',
    ],
    [
      '{"score":"85"}',
      ' ("score" is the string "85", and a score is a number within 0..1)',
    ],
    [
      '{"score":true}',
      ' ("score" is true, not a number: write 1, and "passed": true if it says whether the case passes)',
    ],
    [
      '{"score":null}',
      ' ("score" is null: a scorer that cannot score a case exits non-zero, saying why on stderr)',
    ],
    ['{"score":1e400}', ' ("score" is too large a number)'],
    ['[{"score":1}]', object],
    ["0.5", ' (a verdict is a JSON object: {"score": 0.5})'],
    [
      '"{\\"score\\":1}"',
      " (a JSON string holding a verdict: its JSON was encoded twice; print the object once)",
    ],
    ["null", object],
    ["true", object],
    [
      '{"score":1}\n{"score":1}',
      " (it printed 2 JSON objects, one a line: print one verdict)",
    ],
    [
      'checking "a"\n{"score":1}',
      " (a verdict line among other lines: write logs and debug lines to stderr, and only the verdict to stdout)",
    ],
    [
      "{'score': 1.0, 'passed': True}",
      " (a Python dict, not JSON: print json.dumps(verdict))",
    ],
    [
      "{ score: 1, passed: true }",
      " (a JavaScript object, not JSON: print JSON.stringify(verdict))",
    ],
    [
      '{"score": NaN}',
      " (NaN and Infinity are neither JSON nor a score: a scorer that cannot score a case exits non-zero, saying why on stderr)",
    ],
    [
      '{"score": 1, "passed": -Infinity}',
      " (NaN and Infinity are neither JSON nor a score: a scorer that cannot score a case exits non-zero, saying why on stderr)",
    ],
    // A case printed for debugging before a good verdict: no dict or object
    // note, which would tell the author to change the verdict.
    [
      `{ input: 'q', output: 'a' }\n{"score":1}`,
      " (a verdict line among other lines: write logs and debug lines to stderr, and only the verdict to stdout)",
    ],
    [
      `{'input': 'q', 'output': 'a'}\n{"score":1}`,
      " (a verdict line among other lines: write logs and debug lines to stderr, and only the verdict to stdout)",
    ],
    [
      "got the case\n{'score': 1.0}",
      " (a Python dict, not JSON: print json.dumps(verdict))",
    ],
    // A log line's NaN is no verdict's.
    [
      'loss is NaN\n{"score":1}',
      " (a verdict line among other lines: write logs and debug lines to stderr, and only the verdict to stdout)",
    ],
    [
      `{"score":1,"passed":{"why":"${"x".repeat(100)}"}}`,
      ` ("passed" is {"why":"${"x".repeat(32)}…: true, false or null)`,
    ],
    ["", ' (stdout is empty: print one JSON object, {"score": …})'],
    ["Score: 0.8", ' (a verdict is a JSON object: {"score": 0.8})'],
    ["score=1", ' (a verdict is a JSON object: {"score": 1})'],
    ["Score: 85", ' (a verdict is a JSON object: {"score": …})'],
    ["not json", ""],
  ];
  for (const [verdict, why] of bad) {
    const cmd = `sh ${FIXTURES}/verdict.sh ${sh(verdict)}`;
    const message = scorerErrorMessage(
      await scoreOne(scorer(cmd)),
      "scorer.invalid_verdict",
    );
    assert.equal(message, invalidVerdict(cmd, verdict) + why, verdict);
  }
});

// ---------------------------------------------------------------------------
// The payload

Deno.test("subprocessScorer sends the exact payload bytes: context, expected, input, output", async () => {
  await withTempDir(async (dir) => {
    const file = `${dir}/payload.json`;
    const s = scorer(`sh ${FIXTURES}/capture.sh ${sh(file)}`);
    const cases: Array<[Unit, string]> = [
      [
        unit({ context: ["Refunds take 30 days.", 'c"2'], expected: "30" }),
        '{"context":["Refunds take 30 days.","c\\"2"],"expected":"30",' +
        '"input":"q","output":"a"}',
      ],
      [unit({ expected: "30" }), '{"expected":"30","input":"q","output":"a"}'],
      [unit(), '{"expected":null,"input":"q","output":"a"}'],
      [
        unit({ context: [], input: "héllo ☃", output: "line\nbreak" }),
        '{"context":[],"expected":null,"input":"héllo ☃","output":"line\\nbreak"}',
      ],
      [
        unit({ expected: { b: 1, a: [true, null] }, output: "" }),
        '{"expected":{"b":1,"a":[true,null]},"input":"q","output":""}',
      ],
      [
        unit({ input: [{ role: "user", content: "hi" }] }),
        // Protocol v0's input is a string: the messages' JSON text.
        String
          .raw`{"expected":null,"input":"[{\"role\":\"user\",\"content\":\"hi\"}]","output":"a"}`,
      ],
    ];
    for (const [u, payload] of cases) {
      const score = await scoreOne(s, u);
      assert.equal(score.status, "scored");
      assert.deepEqual(await Deno.readFile(file), encoder.encode(payload));
      assert.equal(scorerPayload(u), payload);
    }
  });
});

Deno.test("subprocessScorer sends a chat-message input as a string, as protocol v0 says, so a scorer written for EvalCore reads it", async () => {
  // A scorer that treats input as text, as EvalCore's always is; and reads
  // the messages back from that text.
  const script = "import json, sys\n" +
    "data = json.load(sys.stdin)\n" +
    "text = data['input'].lower()\n" +
    "messages = json.loads(data['input'])\n" +
    "ok = messages[-1]['content'] == 'Refund?' and 'refund' in text\n" +
    "print(json.dumps({'score': 1 if ok else 0}))\n";
  const s = scorer(`python3 -c ${sh(script)}`, { name: "reads_input" });
  const score = await scoreOne(
    s,
    unit({
      input: [{ role: "system", content: "Be brief." }, {
        role: "user",
        content: "Refund?",
      }],
    }),
  );
  assert.equal(score.status, "scored", score.reason);
  assert.equal(score.value, 1);
});

Deno.test("subprocessScorer and persistentScorer send a unit's null output as the empty string, as protocol v0's output is a string", async () => {
  // A Unit a script builds may say `output: null` without a target error:
  // the stage blocks it (below), but a script may call score() itself, and
  // a scorer written for EvalCore treats output as text.
  await withTempDir(async (dir) => {
    const file = `${dir}/payload.json`;
    const bare = unit({ output: null });
    assert.equal(
      scorerPayload(bare),
      '{"expected":null,"input":"q","output":""}',
    );
    await scorer(`sh ${FIXTURES}/capture.sh ${sh(file)}`).score(bare, {});
    assert.equal(
      await Deno.readTextFile(file),
      '{"expected":null,"input":"q","output":""}',
    );
    const script = "import json, sys\n" +
      "data = json.load(sys.stdin)\n" +
      "print(json.dumps({'score': 1 if data['output'].lower() == '' else 0}))\n";
    const once = await scorer(`python3 -c ${sh(script)}`, {
      name: "reads_output",
    }).score(bare, {}) as Score;
    assert.equal(once.status, "scored", once.reason);
    assert.equal(once.value, 1);
    const lines = "import json, sys\n" +
      "for line in sys.stdin:\n" +
      "    data = json.loads(line)\n" +
      "    ok = data['output'].lower() == ''\n" +
      "    print(json.dumps({'score': 1 if ok else 0}), flush=True)\n";
    const persistent = persistentScorer(`python3 -c ${sh(lines)}`, {
      cwd: ROOT,
      name: "reads_lines",
      timeout: 20,
    });
    try {
      const held = await persistent.score(bare, {}) as Score;
      assert.equal(held.status, "scored", held.reason);
      assert.equal(held.value, 1);
    } finally {
      await persistent.close?.();
    }
  });
});

Deno.test("scoreUnits blocks a unit with no output and no target error, as score does its record, for every scorer", async () => {
  await withTempDir(async (dir) => {
    const file = `${dir}/payload.json`;
    const bare = unit({ output: null });
    const scores = await scoreAll(
      [
        scorer(`sh ${FIXTURES}/capture.sh ${sh(file)}`, { name: "sub" }),
        exactMatch(),
      ],
      [bare],
    );
    assert.deepEqual(
      scores.map((s) => [s.metric, s.status, s.value, s.reason]),
      [
        ["sub", "blocked", null, 'invalid case: "output" must be a string'],
        [
          "exact_match",
          "blocked",
          null,
          'invalid case: "output" must be a string',
        ],
      ],
    );
    // The scorer was not run.
    await assert.rejects(Deno.stat(file), Deno.errors.NotFound);
  });
});

/** Unit records whose `expected` must reach the scorer verbatim. */
const VERBATIM_LINES = [
  '{ "input" : "q1", "output":"a1", "expected" : { "b" : 1 , "10":2, "2" : 3 }, "context": ["c1", "c 2"] }',
  '{"input":"q2","output":"a2","expected":123456789012345678901234567890}',
  '{"input":"q3","output":"a3","expected": 1.0}\r',
  String
    .raw`{"input":"q4","output":"a4","expected":"caf\u00e9 \"q\"\t\\ \/ end"}`,
  '{"input":"q5","output":"a5","context":null}',
  '{"input":"q6","output":"a6","context":[],"expected":null}',
  String
    .raw`{"output":"a7","expected":{"z":[1.0, 2.50E3, -0, 9007199254740993], "a": {"2": null, "1": true, "k e y": "v  w"}, "s": "caf\u00e9"},"input":"q7","metadata":{"expected":1}}`,
  String
    .raw`{"input":"h\u00e9llo ☃","output":"a8","expected":false,"example_id":"ex-8","unit_id":"ex-8@2"}`,
  '{"input":[{"role":"user","content":"hi"}],"output":"a9","expected":[3, 1.10, {"b":0,"a":1}]}',
  String.raw`{"input":"q10","output":"a10","\u0065xpected":{"2":1,"1":2}}`,
];

const VERBATIM_PAYLOADS = [
  '{"context":["c1","c 2"],"expected":{"b":1,"10":2,"2":3},"input":"q1","output":"a1"}',
  '{"expected":123456789012345678901234567890,"input":"q2","output":"a2"}',
  '{"expected":1.0,"input":"q3","output":"a3"}',
  String
    .raw`{"expected":"caf\u00e9 \"q\"\t\\ \/ end","input":"q4","output":"a4"}`,
  '{"expected":null,"input":"q5","output":"a5"}',
  '{"context":[],"expected":null,"input":"q6","output":"a6"}',
  String
    .raw`{"expected":{"z":[1.0,2.50E3,-0,9007199254740993],"a":{"2":null,"1":true,"k e y":"v  w"},"s":"caf\u00e9"},"input":"q7","output":"a7"}`,
  '{"expected":false,"input":"héllo ☃","output":"a8"}',
  String
    .raw`{"expected":[3,1.10,{"b":0,"a":1}],"input":"[{\"role\":\"user\",\"content\":\"hi\"}]","output":"a9"}`,
  '{"expected":{"2":1,"1":2},"input":"q10","output":"a10"}',
];

const VERBATIM_IDS = [
  "#1",
  "#2",
  "#3",
  "#4",
  "#5",
  "#6",
  "#7",
  "ex-8@2",
  "#9",
  "#10",
];

async function readPayloads(dir: string): Promise<string[]> {
  const payloads: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    payloads.push(decoder.decode(await Deno.readFile(`${dir}/${entry.name}`)));
  }
  return payloads.sort();
}

Deno.test("subprocessScorer receives expected verbatim from units read by readUnits", async () => {
  await withTempDir(async (dir) => {
    const bytes = encoder.encode(VERBATIM_LINES.join("\n") + "\n");
    // Small chunks split lines, and UTF-8 characters, across reads.
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < bytes.length; i += 7) {
      chunks.push(bytes.slice(i, i + 7));
    }
    const malformed: unknown[] = [];
    const units = await Array.fromAsync(
      readUnits(ReadableStream.from(chunks), "mem", (m) => malformed.push(m)),
    );
    assert.deepEqual(malformed, []);
    assert.deepEqual(
      units.map((u) => u.unit_id),
      VERBATIM_IDS.map((id) => id.startsWith("#") ? `mem${id}` : id),
    );
    assert.deepEqual(units.map(scorerPayload), VERBATIM_PAYLOADS);

    const s = scorer(`sh ${FIXTURES}/capture.sh ${sh(dir)}`);
    const scores = await scoreAll([s], units);
    assert.deepEqual(scores.map((x) => x.status), units.map(() => "scored"));
    assert.deepEqual(await readPayloads(dir), [...VERBATIM_PAYLOADS].sort());
  });
});

Deno.test("subprocessScorer receives expected verbatim through the score command", async () => {
  await withTempDir(async (dir) => {
    const { code, stdout, stderr } = await runCli([
      "score",
      "--scorer",
      `sh ${FIXTURES}/capture.sh ${sh(dir)}`,
    ], VERBATIM_LINES.join("\n") + "\n");
    assert.equal(stderr, "");
    assert.equal(code, 0);
    const scores = ndjson(stdout).map((line) => parseScore(line));
    assert.deepEqual(
      scores.map((x) => [x.unit_id, x.metric, x.status]),
      VERBATIM_IDS.map((id) => [
        id.startsWith("#") ? `stdin${id}` : id,
        "capture",
        "scored",
      ]),
    );
    assert.deepEqual(await readPayloads(dir), [...VERBATIM_PAYLOADS].sort());
  });
});

// ---------------------------------------------------------------------------
// Pipes: the early-exit race, deadlocks, caps

/** A unit whose payload is several MB. */
function bigUnit(megabytes: number): Unit {
  return unit({ output: "x".repeat(megabytes * 1024 * 1024) });
}

Deno.test("subprocessScorer accepts a verdict from a scorer that exits 0 without reading stdin", async () => {
  const big = bigUnit(8);
  const cmds = [
    `sh ${FIXTURES}/no_read.sh`,
    `python3 ${FIXTURES}/no_read.py`,
    `node ${FIXTURES}/no_read.js`,
    `head -c 10 >/dev/null; printf '{"score":1,"reason":"did not read stdin"}'`,
    `exec 0<&-; sleep 0.05; printf '{"score":1,"reason":"did not read stdin"}'`,
  ];
  for (const cmd of cmds) {
    for (let round = 0; round < 3; round++) {
      const score = await scoreOne(scorer(cmd, { name: "no_read" }), big);
      assert.equal(score.status, "scored", `${cmd}: ${score.reason}`);
      assert.equal(score.value, 1);
      assert.equal(score.reason, "did not read stdin");
    }
  }
});

Deno.test("subprocessScorer still reports a non-zero exit of a scorer that did not read stdin", async () => {
  const cmd = `echo 'gave up early' >&2; exit 4`;
  const message = scorerErrorMessage(
    await scoreOne(scorer(cmd), bigUnit(4)),
    "scorer.exit_status",
  );
  assert.ok(message.startsWith(`scorer ${JSON.stringify(cmd)} `), message);
  assert.match(message, /\b4\b.*gave up early$/);
});

Deno.test("subprocessScorer does not deadlock on a scorer that prints 256 KiB before reading stdin", async () => {
  const big = bigUnit(4);
  const bytes = encoder.encode(scorerPayload(big)).length;
  for (const stream of ["stderr", "stdout"]) {
    const score = await scoreOne(
      scorer(`sh ${FIXTURES}/chatty.sh ${stream}`),
      big,
    );
    assert.equal(score.status, "scored", `${stream}: ${score.reason}`);
    assert.equal(score.reason, `read ${bytes} bytes`);
  }
});

Deno.test("subprocessScorer errors, naming the cap, when a scorer prints more than it", async () => {
  const out = `sh ${FIXTURES}/flood.sh stdout 2000000`;
  const m1 = scorerErrorMessage(
    await scoreOne(scorer(out)),
    "scorer.output_cap",
  );
  assert.ok(m1.startsWith(`scorer ${JSON.stringify(out)} `), m1);
  assert.match(m1, /1048576/);
  assert.match(m1, /stdout/);

  const err = `sh ${FIXTURES}/flood.sh stderr 10000`;
  const m2 = scorerErrorMessage(
    await scoreOne(scorer(err, { maxStderrBytes: 4096 })),
    "scorer.output_cap",
  );
  assert.ok(m2.startsWith(`scorer ${JSON.stringify(err)} `), m2);
  assert.match(m2, /4096/);
  assert.match(m2, /stderr/);
});

Deno.test("a suite's max_output_bytes raises the stderr cap as well as stdout's, so the cap an error names can be raised, in persistent mode too", async () => {
  await withTempDir(async (dir) => {
    // A scorer that logs 1.5 MiB on stderr (a model's progress, say) and
    // gives a verdict: past the default cap on stderr, within a raised one.
    // It reads all its input first, so it serves one case in either mode.
    const flood = sh(`${ROOT}/${FIXTURES}/flood.sh`);
    const suite = (cap: string) =>
      `dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n  - type: subprocess\n    name: noisy\n    cmd: sh ${flood} stderr 1500000\n${cap}`;
    const units = '{"input":"q","output":"a"}\n';
    for (const mode of ["", "    persistent: true\n"]) {
      await Deno.writeTextFile(`${dir}/default.yaml`, suite(mode));
      await Deno.writeTextFile(
        `${dir}/raised.yaml`,
        suite(`${mode}    max_output_bytes: 4000000\n`),
      );
      const capped = await runCli(
        ["score", "--config", `${dir}/default.yaml`],
        units,
      );
      assert.equal(capped.code, 0, capped.stderr);
      const [error] = ndjson(capped.stdout) as Score[];
      assert.match(
        scorerErrorMessage(error!, "scorer.output_cap"),
        / printed more than 1048576 bytes on stderr \(max_output_bytes raises the cap\)$/,
        mode,
      );
      const raised = await runCli(
        ["score", "--config", `${dir}/raised.yaml`],
        units,
      );
      assert.equal(raised.code, 0, raised.stderr);
      const [score] = ndjson(raised.stdout) as Score[];
      assert.equal(score!.status, "scored", score!.reason);
      assert.equal(score!.value, 1);
    }
  });
});

Deno.test("subprocessScorer accepts output of exactly the cap and refuses one byte more", async () => {
  const verdict = '{"score":0.6}';
  const exact = `sh ${FIXTURES}/verdict.sh ${sh(verdict.padEnd(100))}`;
  const ok = await scoreOne(scorer(exact, { maxStdoutBytes: 100 }));
  assert.equal(ok.status, "scored", ok.reason);
  assert.equal(ok.value, 0.6);

  const over = `sh ${FIXTURES}/verdict.sh ${sh(verdict.padEnd(101))}`;
  const message = scorerErrorMessage(
    await scoreOne(scorer(over, { maxStdoutBytes: 100 })),
    "scorer.output_cap",
  );
  assert.match(message, /\b100\b.*stdout/);
});

Deno.test("subprocessScorer kills a scorer that prints without end past the cap", async () => {
  await withTempDir(async (dir) => {
    for (const stream of ["stdout", "stderr"]) {
      const pidFile = `${dir}/${stream}.pids`;
      const cmd = `sh ${FIXTURES}/flood.sh ${stream} forever ${sh(pidFile)}`;
      const message = scorerErrorMessage(
        await scoreOne(
          scorer(cmd, { maxStdoutBytes: 65536, maxStderrBytes: 65536 }),
        ),
        "scorer.output_cap",
      );
      assert.match(message, new RegExp(`65536.*${stream}`));
      await assertNoneRunning(await readPids(pidFile, 2));
    }
  });
});

// ---------------------------------------------------------------------------
// Timeouts and leftovers

Deno.test("subprocessScorer kills the process group of a hung scorer on timeout", async () => {
  await withTempDir(async (dir) => {
    // hang.sh never reads stdin: its multi-MB payload is still being written
    // when the timeout strikes.
    const hung: Array<[string, number, number, Unit]> = [
      [`sh ${FIXTURES}/hang.sh`, 0.5, 2, bigUnit(4)],
      [`sh ${FIXTURES}/hang_bg.sh`, 0.5, 2, unit()],
      [`python3 ${FIXTURES}/hang.py`, 2, 2, unit()],
    ];
    for (const [script, timeout, count, u] of hung) {
      const pidFile = `${dir}/pids`;
      const cmd = `${script} ${sh(pidFile)}`;
      const s = scorer(cmd, { timeout });
      // `score` spawns before its first await. Holding this thread until
      // the scorer and its child have written their PIDs keeps the timeout
      // from being acted on before: on a loaded machine a 0.5 s scorer was
      // killed before it wrote them, and there was nothing to check.
      const held: Scorer = {
        ...s,
        score(unit, context) {
          const scoring = s.score(unit, context);
          holdUntil(
            () => pidLines(pidFile) >= count,
            `the PIDs of ${JSON.stringify(cmd)}`,
          );
          return scoring;
        },
      };
      const score = await scoreOne(held, u);
      const message = scorerErrorMessage(score, "scorer.timeout");
      assert.ok(message.startsWith(`scorer ${JSON.stringify(cmd)} `), message);
      assert.match(message, /time/i);
      assert.ok(message.includes(String(timeout)), message);
      await assertNoneRunning(await readPids(pidFile, count));
      await Deno.remove(pidFile);
    }
  });
});

Deno.test("subprocessScorer returns when a scorer exits 0 and kills the child holding its stdout", async () => {
  await withTempDir(async (dir) => {
    const pidFile = `${dir}/pids`;
    // Waiting for the child's end of stdout would hit the timeout instead.
    const score = await scoreOne(
      scorer(`sh ${FIXTURES}/leave_bg.sh ${sh(pidFile)}`, { timeout: 20 }),
    );
    assert.equal(score.status, "scored", score.reason);
    assert.equal(score.value, 0.75);
    assert.equal(score.reason, "left a child behind");
    await assertNoneRunning(await readPids(pidFile, 1));
  });
});

Deno.test("subprocessScorer kills the process group of a running scorer when the run is aborted", async () => {
  await withTempDir(async (dir) => {
    const pidFile = `${dir}/pids`;
    const cmd = `sh ${FIXTURES}/hang_bg.sh ${sh(pidFile)}`;
    const controller = new AbortController();
    const scoring = Array.fromAsync(
      ReadableStream.from([unit()]).pipeThrough(
        scoreUnits([scorer(cmd, { timeout: 20 })], {
          signal: controller.signal,
        }),
      ),
    );
    // Abort once the scorer and its child run.
    const pids = await waitForPids(pidFile, 2);
    controller.abort();
    const [score, ...rest] = await scoring;
    assert.equal(rest.length, 0);
    const message = scorerErrorMessage(score!, "scorer.interrupted");
    assert.ok(message.startsWith(`scorer ${JSON.stringify(cmd)} `), message);
    // Interrupted, not left to run into its 20 s timeout.
    assert.doesNotMatch(message, /\b20\b/);
    await assertNoneRunning(pids);
  });
});

Deno.test("subprocessScorer times out even when a process that left the group holds stdin", async () => {
  await withTempDir(async (dir) => {
    const pidFile = `${dir}/escaped.pid`;
    const cmd = `sh ${FIXTURES}/escape.sh ${sh(pidFile)}`;
    try {
      // The payload outgrows the pipe, and the escaped process never reads
      // it: an unbounded write would last as long as that process.
      const score = await within(
        scoreOne(scorer(cmd, { timeout: 0.5 }), bigUnit(4)),
        20_000,
        "the timed-out scorer",
      );
      const message = scorerErrorMessage(score, "scorer.timeout");
      assert.match(message, /time/i);
      assert.ok(message.includes("0.5"), message);
    } finally {
      // The group kill cannot reach it: it is ours to end.
      const [escaped] = await waitForPids(pidFile, 1);
      Deno.kill(escaped!, "SIGKILL");
      await assertNoneRunning([escaped!]);
      // Its death fails the library's pending write; let that settle before
      // the sanitizers look.
      await delay(100);
    }
  });
});

// ---------------------------------------------------------------------------
// Several scorers, versions

const COVERAGE = `python3 ${FIXTURES}/coverage.py`;
const CONTAINS = `node ${FIXTURES}/contains.js`;

const REFUND_UNITS: Unit[] = [
  {
    example_id: "d#1",
    unit_id: "d#1",
    input: "How long do refunds take?",
    output: "Refunds are honored within 30 days.",
    expected: "30 days",
    context: ["Refunds are processed within 30 days."],
  },
  {
    example_id: "d#2",
    unit_id: "d#2",
    input: "Largest animal?",
    output: "It is the elephant.",
    expected: "blue whale",
  },
  {
    example_id: "d#3",
    unit_id: "d#3",
    input: "Say anything",
    output: "Anything.",
  },
];

Deno.test("subprocessScorer failing among several scorers leaves the others' Scores unaffected", async () => {
  const coverage = scorer(COVERAGE);
  const broken = scorer(`sh ${FIXTURES}/fail.sh 2`);
  const contains = scorer(CONTAINS);
  assert.deepEqual(
    [coverage.name, broken.name, contains.name],
    ["coverage", "fail", "contains"],
  );
  const scores = await scoreAll([coverage, broken, contains], REFUND_UNITS, 2);
  assert.deepEqual(
    scores.map((s) => `${s.unit_id} ${s.metric}`),
    REFUND_UNITS.flatMap((u) =>
      ["coverage", "fail", "contains"].map((m) => `${u.unit_id} ${m}`)
    ),
  );
  assert.deepEqual(
    scores.map((s) => [s.status, s.value, s.passed, s.reason ?? null]),
    [
      ["scored", 1, true, "2/2 expected terms present"],
      ["error", null, false, scores[1]!.reason],
      ["scored", 1, true, "expected text found"],
      ["scored", 0, false, "0/2 expected terms present"],
      ["error", null, false, scores[4]!.reason],
      ["scored", 0, false, 'missing "blue whale"'],
      ["scored", 1, true, "0/0 expected terms present"],
      ["error", null, false, scores[7]!.reason],
      ["scored", 1, true, "expected text found"],
    ],
  );
  for (const i of [1, 4, 7]) {
    assert.match(
      scorerErrorMessage(scores[i]!, "scorer.exit_status"),
      /\b2\b.*something broke: 2$/,
    );
  }
  // The same Scores as without the failing scorer.
  const alone = await scoreAll([coverage, contains], REFUND_UNITS, 2);
  assert.deepEqual(scores.filter((s) => s.metric !== "fail"), alone);
});

Deno.test("subprocessScorer runs its command via sh -c once per unit: through run with epochs, score, and scoreUnits", async () => {
  await withTempDir(async (dir) => {
    // Shell syntax (`;`, `>>`, `$$`) works because the command goes to sh -c,
    // in the config file's folder.
    const cmd = `cat >/dev/null; echo $$ >> calls.txt; echo '{"score": 1}'`;
    const calls = async () =>
      (await Deno.readTextFile(`${dir}/calls.txt`)).split("\n")
        .filter((l) => l !== "");
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      ['{"input":"a"}', '{"input":"b"}', '{"input":"c"}', ""].join("\n"),
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      [
        "dataset: cases.jsonl",
        "target: { type: subprocess, cmd: cat }",
        "epochs: 2",
        "concurrency: 3",
        "scorers:",
        `  - { type: subprocess, name: counted, cmd: ${JSON.stringify(cmd)} }`,
        "",
      ].join("\n"),
    );
    const run = await cliWithStdin(["run", "suite.yaml"], dir, "");
    assert.equal(run.code, 0, run.stderr);
    const units = ndjson(run.stdout).map((s) => (s as Score).unit_id);
    assert.equal(units.length, 6);
    assert.equal(new Set(units).size, 6);
    const ran = await calls();
    // One process per unit: six runs, six shells.
    assert.equal(ran.length, 6);
    assert.equal(new Set(ran).size, 6);

    await Deno.remove(`${dir}/calls.txt`);
    const score = await cliWithStdin(
      ["score", "--scorer", cmd, "--name", "counted"],
      dir,
      '{"input":"q","output":"a"}\n'.repeat(4),
    );
    assert.equal(score.code, 0, score.stderr);
    assert.equal(ndjson(score.stdout).length, 4);
    assert.equal((await calls()).length, 4);

    await Deno.remove(`${dir}/calls.txt`);
    const s = subprocessScorer(cmd, { cwd: dir, name: "counted" });
    const scores = await scoreAll(
      [s],
      [1, 2, 3, 4, 5].map((i) =>
        unit({ example_id: `t#${i}`, unit_id: `t#${i}` })
      ),
      3,
    );
    assert.deepEqual(scores.map((x) => x.value), [1, 1, 1, 1, 1]);
    assert.equal((await calls()).length, 5);
  });
});

Deno.test("subprocessScorer's reason for a failing case is shown in every report: view --by-call, Markdown, JUnit and HTML", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/grade.py`,
      [
        "import json, sys",
        "case = json.load(sys.stdin)",
        "ok = case['output'] == case['expected']",
        "print(json.dumps({'score': 1.0 if ok else 0.0,",
        "  'reason': 'matches' if ok else 'said ' + case['output'] + ', wanted ' + case['expected']}))",
        "",
      ].join("\n"),
    );
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      '{"id":"good","input":"yes","expected":"yes"}\n' +
        '{"id":"bad","input":"nope","expected":"yes"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: cases.jsonl\ntarget: { type: subprocess, cmd: cat, stdin: text }\n" +
        "scorers:\n  - { type: subprocess, cmd: python3 grade.py }\n",
    );
    const run = await cliWithStdin(
      [
        "run",
        "suite.yaml",
        "--record",
        "r.json",
        "--markdown",
        "r.md",
        "--junit",
        "r.xml",
        "--html",
        "r.html",
      ],
      dir,
      "",
    );
    assert.equal(run.code, 0, run.stderr);
    const failing = "said nope, wanted yes";
    const scores = ndjson(run.stdout) as Score[];
    assert.deepEqual(scores.map((s) => [s.example_id, s.passed, s.reason]), [
      ["cases.jsonl#good", true, "matches"],
      ["cases.jsonl#bad", false, failing],
    ]);
    const view = await cliWithStdin(["view", "r.json", "--by-call"], dir, "");
    assert.equal(view.code, 0, view.stderr);
    const markdown = await Deno.readTextFile(`${dir}/r.md`);
    const junit = await Deno.readTextFile(`${dir}/r.xml`);
    const html = await Deno.readTextFile(`${dir}/r.html`);
    for (
      const [report, text] of [
        ["view --by-call", view.stdout],
        ["Markdown", markdown],
        ["JUnit", junit],
        ["HTML", html],
      ] as const
    ) {
      assert.ok(text.includes(failing), `${report} lacks the reason:\n${text}`);
    }
    // JUnit names the failing case with its reason in a <failure>.
    assert.match(junit, /<failure message="[^"]*said nope, wanted yes"/);
  });
});

Deno.test("subprocessScorer evaluator_version is name@hash and follows the script's content", async () => {
  await withTempDir(async (dir) => {
    const script = `${dir}/faithfulness.py`;
    const source = await Deno.readTextFile(`${ROOT}/${FIXTURES}/coverage.py`);
    await Deno.writeTextFile(script, source);
    const cmd = "python3 faithfulness.py";
    const first = subprocessScorer(cmd, { cwd: dir });
    assert.equal(first.name, "faithfulness");
    assert.match(first.version, /^faithfulness@[0-9a-f]{8}$/);
    assert.equal(subprocessScorer(cmd, { cwd: dir }).version, first.version);
    const score = await scoreOne(first, REFUND_UNITS[0]!);
    assert.equal(score.metric, "faithfulness");
    assert.equal(score.evaluator_version, first.version);
    assert.equal(score.value, 1);

    await Deno.writeTextFile(script, source + "# edited\n");
    const edited = subprocessScorer(cmd, { cwd: dir });
    assert.equal(edited.name, "faithfulness");
    assert.match(edited.version, /^faithfulness@[0-9a-f]{8}$/);
    assert.notEqual(edited.version, first.version);

    await Deno.writeTextFile(script, source);
    assert.equal(subprocessScorer(cmd, { cwd: dir }).version, first.version);
    // The same script by absolute path, run as a program, or renamed.
    assert.equal(
      subprocessScorer(`python3 ${script}`, { cwd: ROOT }).name,
      "faithfulness",
    );
    await Deno.chmod(script, 0o755);
    const direct = subprocessScorer("./faithfulness.py", { cwd: dir });
    assert.equal(direct.name, "faithfulness");
    assert.equal((await scoreOne(direct, REFUND_UNITS[0]!)).value, 1);
    const named = subprocessScorer(cmd, { cwd: dir, name: "grounded" });
    assert.match(named.version, /^grounded@[0-9a-f]{8}$/);
    // Another command running the same script is another evaluator.
    assert.notEqual(
      subprocessScorer("python3 -B faithfulness.py", { cwd: dir }).version,
      first.version,
    );
  });
});

Deno.test("subprocessScorer default name is the script's file name without extension", () => {
  const cases: Array<[string, string]> = [
    [COVERAGE, "coverage"],
    [CONTAINS, "contains"],
    [`sh ${FIXTURES}/verdict.sh '{"score":1}'`, "verdict"],
    [`sh ./${FIXTURES}/capture.sh /tmp/x`, "capture"],
  ];
  for (const [cmd, name] of cases) {
    const s = subprocessScorer(cmd, { cwd: ROOT });
    assert.equal(s.name, name, cmd);
    assert.match(s.version, new RegExp(`^${name}@[0-9a-f]{8}$`));
  }
});

// ---------------------------------------------------------------------------
// The score command end to end

const CLI_UNITS = REFUND_UNITS.map((u) =>
  JSON.stringify({ ...u, example_id: undefined, unit_id: undefined })
);

Deno.test("subprocessScorer through the score command writes NDJSON Scores on stdout only", async () => {
  const { code, stdout, stderr } = await runCli([
    "score",
    "--scorer",
    COVERAGE,
    "--scorer",
    CONTAINS,
    "--name",
    "cov",
    "--name",
    "has",
    "--concurrency",
    "2",
  ], CLI_UNITS.join("\n") + "\n");
  assert.equal(stderr, "");
  assert.equal(code, 0);
  const scores = ndjson(stdout).map((line) => parseScore(line));
  assert.deepEqual(
    scores.map((s) => [s.unit_id, s.example_id, s.metric, s.value]),
    [
      ["stdin#1", "stdin#1", "cov", 1],
      ["stdin#1", "stdin#1", "has", 1],
      ["stdin#2", "stdin#2", "cov", 0],
      ["stdin#2", "stdin#2", "has", 0],
      ["stdin#3", "stdin#3", "cov", 1],
      ["stdin#3", "stdin#3", "has", 1],
    ],
  );
  for (const s of scores) {
    assert.match(s.evaluator_version, new RegExp(`^${s.metric}@[0-9a-f]{8}$`));
  }
});

Deno.test("subprocessScorer through the score command writes the same Scores to a file, /dev/null and a pipe", async () => {
  // A file and /dev/null are written at once, a pipe asynchronously.
  const args = ["score", "--scorer", COVERAGE, "--concurrency", "2"];
  const input = CLI_UNITS.join("\n") + "\n";
  const piped = await runCli(args, input);
  assert.equal(piped.code, 0);
  await withTempDir(async (dir) => {
    for (const target of [`${dir}/scores.ndjson`, "/dev/null"]) {
      const child = new Deno.Command("sh", {
        args: [
          "-c",
          'exec "$@" >"$TARGET"',
          "sh",
          Deno.execPath(),
          "run",
          "-A",
          "cli.ts",
          ...args,
        ],
        cwd: ROOT,
        env: { TARGET: target, NO_COLOR: "1" },
        stdin: "piped",
        stdout: "null",
        stderr: "piped",
      }).spawn();
      const [, output] = await Promise.all([
        writeAndClose(child.stdin, encoder.encode(input)),
        child.output(),
      ]);
      assert.deepEqual(
        [output.code, decoder.decode(output.stderr)],
        [0, ""],
        target,
      );
    }
    assert.equal(await Deno.readTextFile(`${dir}/scores.ndjson`), piped.stdout);
  });
  assert.equal(ndjson(piped.stdout).length, CLI_UNITS.length);
});

Deno.test("subprocessScorer through the score command reports a malformed line, blocks its Scores and scores the rest", async () => {
  const input = [
    CLI_UNITS[0],
    "this is not json",
    '{"input":"no output"}',
    CLI_UNITS[1],
  ].join("\n") + "\n";
  const { code, stdout, stderr } = await runCli(
    ["score", "--scorer", COVERAGE],
    input,
  );
  assert.equal(code, 2);
  assert.match(stderr, /line 2\b/);
  assert.match(stderr, /line 3\b/);
  assert.doesNotMatch(stderr, /line [14]\b/);
  assert.doesNotMatch(stderr, /^\s+at /m, "no stack trace");
  const scores = ndjson(stdout).map((line) => parseScore(line));
  // As run does: a malformed record's Scores are blocked, never dropped.
  assert.deepEqual(
    scores.map((s) => [s.unit_id, s.status, s.value, s.diagnostics[0]?.code]),
    [
      ["stdin#1", "scored", 1, undefined],
      ["stdin#2", "blocked", null, "case.invalid"],
      ["stdin#3", "blocked", null, "case.invalid"],
      ["stdin#4", "scored", 0, undefined],
    ],
  );
  assert.match(scores[2]!.reason!, /^invalid case: "output" is missing/);
});

Deno.test("the score command names a record by its id, as run names a case", async () => {
  const input = [
    '{"id": "greeting", "input": "hi", "output": "hello"}',
    '{"id": 7, "input": "q", "output": "a"}',
    '{"input": "q", "output": "a"}',
    '{"id": "broken", "input": 5, "output": "a"}',
    '{"example_id": "d#9", "unit_id": "d#9@2", "input": "q", "output": "a"}',
  ].join("\n") + "\n";
  const { code, stdout } = await runCli(["score", "--scorer", COVERAGE], input);
  assert.equal(code, 2);
  assert.deepEqual(
    ndjson(stdout).map((line) => parseScore(line)).map((s) => [
      s.example_id,
      s.unit_id,
      s.status,
    ]),
    [
      ["stdin#greeting", "stdin#greeting", "scored"],
      ["stdin#7", "stdin#7", "scored"],
      ["stdin#3", "stdin#3", "scored"],
      ["stdin#broken", "stdin#broken", "blocked"],
      ["d#9", "d#9@2", "scored"],
    ],
  );
});

Deno.test("subprocessScorer through the score command exits 0 quietly when its reader goes away", async () => {
  await withTempDir(async (dir) => {
    const units = 200;
    const input = Array.from(
      { length: units },
      (_, i) => JSON.stringify({ input: `q${i}`, output: `a${i}` }),
    ).join("\n") + "\n";
    const child = cli([
      "score",
      "--scorer",
      `mktemp ${sh(`${dir}/run.XXXXXX`)} >/dev/null; sh ${FIXTURES}/slow.sh`,
      "--name",
      "slow",
    ]);
    const stderrText = new Response(child.stderr).text();
    const [, first, status, stderr] = await within(
      Promise.all([
        writeAndClose(child.stdin, encoder.encode(input)),
        (async () => {
          // `| head -1`: read one line, then close the pipe.
          const reader = child.stdout.pipeThrough(new TextDecoderStream())
            .getReader();
          let text = "";
          while (!text.includes("\n")) {
            const { done, value } = await reader.read();
            if (done) break;
            text += value;
          }
          await reader.cancel();
          return text.slice(0, text.indexOf("\n"));
        })(),
        child.status,
        stderrText,
      ]),
      60_000,
      "evalpipe score",
    );
    assert.equal(parseScore(JSON.parse(first)).unit_id, "stdin#1");
    assert.equal(stderr, "");
    assert.equal(status.code, 0);
    let runs = 0;
    for await (const _ of Deno.readDir(dir)) runs++;
    assert.ok(runs < units, `the run stopped early (${runs} scorer runs)`);
  });
});

Deno.test("subprocessScorer through the score command honours --timeout", async () => {
  await withTempDir(async (dir) => {
    const pidFile = `${dir}/pids`;
    const cmd = `sh ${FIXTURES}/hang.sh ${sh(pidFile)}`;
    const { code, stdout, stderr } = await runCli(
      ["score", "--scorer", cmd, "--name", "hung", "--timeout", "0.5"],
      CLI_UNITS[0] + "\n",
    );
    assert.equal(stderr, "");
    assert.equal(code, 0, "a scorer error is data, not a failed command");
    const [score, ...rest] = ndjson(stdout).map((line) => parseScore(line));
    assert.equal(rest.length, 0);
    assert.equal(score!.metric, "hung");
    const message = scorerErrorMessage(score!, "scorer.timeout");
    assert.match(message, /time/i);
    assert.ok(message.includes("0.5"), message);
    await assertNoneRunning(await readPids(pidFile, 2));
  });
});

Deno.test("subprocessScorer through the score command refuses two scorers with one name", async () => {
  const { code, stdout, stderr } = await runCli(
    [
      "score",
      "--scorer",
      COVERAGE,
      "--scorer",
      `python3 -B ${FIXTURES}/coverage.py`,
    ],
    CLI_UNITS[0] + "\n",
  );
  assert.equal(code, 2);
  assert.equal(stdout, "");
  assert.match(stderr, /"coverage"/);
  assert.doesNotMatch(stderr, /^\s+at /m, "no stack trace");
});

Deno.test("defaultScorerName reads quoted script paths as a shell would", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/my scorer.py`,
      "print('{\"score\": 1}')\n",
    );
    assert.equal(defaultScorerName(`python3 "my scorer.py"`, dir), "my scorer");
    assert.equal(
      defaultScorerName(`python3 my\\ scorer.py --flag`, dir),
      "my scorer",
    );
    assert.equal(scriptOf(`python3 'my scorer.py'`, dir), "my scorer.py");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("subprocessScorer and persistentScorer refuse, as they are built, a command whose script does not exist under their cwd", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/grade.sh`,
      `cat >/dev/null; echo '{"score": 1}'\n`,
    );
    for (
      const [make, built] of [
        [subprocessScorer, "subprocessScorer"],
        [persistentScorer, "persistentScorer"],
      ] as const
    ) {
      // Built in another folder, it took "sh" for its metric, and every
      // unit failed with sh's "Can't open grade.sh".
      assert.throws(() => make("sh grade.sh"), {
        name: "InputError",
        message: `${built}'s command "sh grade.sh" runs "grade.sh", which ` +
          `does not exist (paths resolve against its cwd, ${
            JSON.stringify(Deno.cwd())
          })`,
      });
    }
    const s = subprocessScorer("sh grade.sh", { cwd: dir });
    const [score] = await scoreAll([s], [{
      example_id: "d#1",
      unit_id: "d#1",
      input: "q",
      output: "a",
    }]);
    assert.equal(score?.metric, "grade");
    assert.equal(score?.value, 1);
  });
});

Deno.test("subprocessScorer and persistentScorer run a script given by URL, which is no missing file", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/grade.ts`,
      `await new Response(Deno.stdin.readable).text();\nconsole.log('{"score": 1}');\n`,
    );
    // deno (on PATH, as an interpreter is) reads file:, jsr: and https:
    // URLs; the cwd holds no such path.
    const s = subprocessScorer(`deno run -A file://${dir}/grade.ts`, {
      name: "graded",
      cwd: "/",
    });
    const p = persistentScorer("deno run -A jsr:@evalpipe/none/grade.ts", {
      name: "p",
      cwd: "/",
    });
    await p.close?.();
    const [score] = await scoreAll([s], [{
      example_id: "d#1",
      unit_id: "d#1",
      input: "q",
      output: "a",
    }]);
    assert.equal(score?.value, 1, JSON.stringify(score));
  });
});

Deno.test("subprocessScorer refuses a timeout that is not a positive number", () => {
  for (const timeout of [0, -1, NaN, Infinity]) {
    assert.throws(() => subprocessScorer("true", { timeout }), RangeError);
  }
});

function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  return inTempDir(fn, "evalpipe_scorer_test_");
}

Deno.test("score refuses a unit id read before, across its inputs, and keeps integer ids beyond 2^53 exact", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/a.ndjson`,
      '{"unit_id":"u","input":"q1","output":"refund"}\n' +
        '{"id":12345678901234567891,"input":"q2","output":"no"}\n' +
        '{"id":12345678901234567892,"input":"q3","output":"no"}\n',
    );
    const args = ["score", "--scorer", `python3 ${FIXTURES}/coverage.py`];
    const out = await runCli(
      [...args, `${dir}/a.ndjson`, "-"],
      '{"unit_id":"v","input":"q4","output":"refund"}\n' +
        '{"unit_id":"u","input":"q5","output":"refund"}\n',
    );
    assert.equal(out.code, 2, out.stderr);
    assert.equal(
      out.stderr,
      `evalpipe: Malformed unit record in stdin line 2: Duplicate unit_id "u" (first at ${
        JSON.stringify(`${dir}/a.ndjson`)
      } line 1): unit ids must be unique\n`,
    );
    const scores = ndjson(out.stdout).map((l) => parseScore(l));
    assert.deepEqual(scores.map((s) => [s.unit_id, s.status]), [
      ["u", "scored"],
      [`${dir}/a.ndjson#12345678901234567891`, "scored"],
      [`${dir}/a.ndjson#12345678901234567892`, "scored"],
      ["v", "scored"],
      ["stdin#line-2", "blocked"],
    ]);
  });
});

Deno.test("score names a file called stdin as a file, and standard input as stdin, in one message about a unit id read twice", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/stdin`,
      '{"unit_id":"u","input":"q1","output":"refund"}\n' +
        '{"unit_id":"u","input":"q2","output":"refund"}\n',
    );
    const args = [
      "score",
      "--scorer",
      `python3 ${ROOT}/${FIXTURES}/coverage.py`,
    ];
    const file = await cliWithStdin([...args, "stdin"], dir, "");
    assert.equal(file.code, 2, file.stderr);
    // The note comes once the file has read as units (its first batch).
    assert.equal(
      file.stderr,
      'evalpipe: Malformed unit record in "stdin" line 2: Duplicate unit_id "u" (first at "stdin" line 1): unit ids must be unique\n' +
        `evalpipe: note: "stdin" is a file here, and its records without ids are named stdin#<line>, as piped input's are: give it as ./stdin for ids of its own (./stdin#<line>)\n`,
    );
    const piped = await cliWithStdin(
      args,
      dir,
      await Deno.readTextFile(`${dir}/stdin`),
    );
    assert.equal(piped.code, 2, piped.stderr);
    assert.equal(
      piped.stderr,
      'evalpipe: Malformed unit record in stdin line 2: Duplicate unit_id "u" (first at stdin line 1): unit ids must be unique\n',
    );
  });
});

Deno.test("score reads unit record files in order, - for stdin, ids and messages named after each, and refuses a missing one before any Score", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/a.ndjson`,
      '{"input":"q1","output":"refund"}\n{"input":"q2","output":"no"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/b.ndjson`,
      '{"input":"q3"}\n{"input":"q4","output":"refund","unit_id":"own"}\n',
    );
    const args = ["score", "--scorer", `python3 ${FIXTURES}/coverage.py`];
    const out = await runCli(
      [...args, `${dir}/a.ndjson`, "-", `${dir}/b.ndjson`],
      '{"input":"q5","output":"refund"}\n',
    );
    assert.equal(out.code, 2, out.stderr);
    assert.equal(
      out.stderr,
      `evalpipe: Malformed unit record in ${
        JSON.stringify(`${dir}/b.ndjson`)
      } line 1: "output" is missing\n`,
    );
    const scores = ndjson(out.stdout).map((l) => parseScore(l));
    assert.deepEqual(scores.map((s) => [s.unit_id, s.status]), [
      [`${dir}/a.ndjson#1`, "scored"],
      [`${dir}/a.ndjson#2`, "scored"],
      ["stdin#1", "scored"],
      [`${dir}/b.ndjson#1`, "blocked"],
      ["own", "scored"],
    ]);
    // A missing file: nothing is scored, exit 2, the file named.
    const missing = await runCli(
      [...args, `${dir}/a.ndjson`, `${dir}/nope.ndjson`],
      "",
    );
    assert.deepEqual([missing.code, missing.stdout], [2, ""]);
    assert.match(
      missing.stderr,
      /^evalpipe: Cannot open ".*nope\.ndjson": no such file\n$/,
    );
    const twice = await runCli([...args, "-", "-"], "");
    assert.equal(twice.code, 2);
    assert.match(twice.stderr, /^evalpipe: score reads stdin \(-\) once/);
  });
});
