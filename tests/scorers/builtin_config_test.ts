// The built-in scorers from a suite's config: a CLI run of several, and the
// config errors their options can make, each at its line.

import assert from "node:assert/strict";
import {
  buildScorers,
  checkConfigText,
  ConfigError,
  readUnits,
  type Score,
  scoreUnits,
} from "../../mod.ts";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { staticGraph } from "../_static_graph.ts";
import { type Shape, SUITE as SUITE_SHAPE } from "../../src/config/_shape.ts";

const SCHEMA = {
  type: "object",
  required: ["answer", "sources"],
  properties: { answer: { type: "string" }, sources: { type: "array" } },
};

const CASES = [
  { id: "n", input: "2+2?", output: "The answer is 4.", expected: "4" },
  {
    id: "j",
    input: "as JSON",
    output: '{"answer": "4", "sources": ["a"]}',
    expected: { sources: ["a"], answer: "4" },
  },
  {
    id: "bad",
    input: "as JSON",
    output: '{"answer": 4}',
    expected: { answer: "4" },
  },
];

const SUITE = `dataset: cases.jsonl
target: { type: replay }
scorers:
  - type: json
    schema: schemas/answer.json
  - { type: json_match, ignore: [sources] }
  - { type: fields, required: [answer, sources] }
  - { type: numeric }
  - { type: regex, pattern: '\\d', name: has_digit }
  - { type: word_count, max: 4 }
  - { type: token_f1 }
  - { type: exact_match, value: "The answer is 4." }
`;

async function suiteDir(
  dir: string,
  suite = SUITE,
): Promise<void> {
  await Deno.mkdir(`${dir}/schemas`);
  await Deno.writeTextFile(
    `${dir}/schemas/answer.json`,
    JSON.stringify(SCHEMA),
  );
  await Deno.writeTextFile(
    `${dir}/cases.jsonl`,
    CASES.map((c) => JSON.stringify(c)).join("\n") + "\n",
  );
  await Deno.writeTextFile(`${dir}/suite.yaml`, suite);
}

Deno.test("cli run scores a suite of built-in scorers, honest where one does not apply", async () => {
  await withTempDir(async (dir) => {
    await suiteDir(dir);
    const out = await cli(["run", "suite.yaml"], dir);
    assert.equal(out.code, 0, out.stderr);
    const scores: Score[] = out.stdout.trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    const got = Object.fromEntries(
      scores.map((s) => [
        `${s.metric} ${s.example_id!.split("#")[1]}`,
        s.status === "scored" ? s.value : s.status,
      ]),
    );
    assert.deepEqual(got, {
      "json n": 0, // "The answer is 4." is not JSON
      "json j": 1,
      "json bad": 0, // answer is a number; sources is missing
      "json_match n": 0,
      "json_match j": 1,
      "json_match bad": 0,
      "fields n": 0,
      "fields j": 1,
      "fields bad": 0.5,
      "numeric n": 1,
      "numeric j": "non_evaluable", // expected is an object
      "numeric bad": "non_evaluable",
      "has_digit n": 1,
      "has_digit j": 1,
      "has_digit bad": 1,
      "word_count n": 1,
      "word_count j": 1,
      "word_count bad": 1,
      // "the answer is 4" -> answer is 4 (3 tokens) against 4: P 1/3, R 1.
      "token_f1 n": 0.5,
      "token_f1 j": got["token_f1 j"],
      "token_f1 bad": got["token_f1 bad"],
      "exact_match n": 1,
      "exact_match j": 0,
      "exact_match bad": 0,
    });
    const bad = scores.find((s) =>
      s.metric === "json" && s.example_id!.endsWith("#bad")
    )!;
    assert.equal(
      bad.reason,
      "$.sources: is required; $.answer: must be string",
    );
  });
});

Deno.test("a suite's run-fact scorers read unit records, non_evaluable where they lack the fact", async () => {
  const yaml =
    `${HEAD}  - { type: latency, max_ms: 1000 }\n  - { type: cost, max_usd: 0.01 }\n  - { type: set_overlap, measure: f1 }\n`;
  const scorers = await buildScorers(
    await checkConfigText(yaml, "suite.yaml"),
    "suite.yaml",
    { cwd: "." },
  );
  const units = [
    {
      input: "q",
      output: '["a", "b"]',
      expected: ["a", "c"],
      target: { latency_ms: 1200, cost_usd: 0.002 },
    },
    {
      input: "q",
      output: "a\nc",
      expected: ["a", "c"],
      target: { latency_ms: 300 },
    },
    { input: "q", output: "a" },
  ];
  const bytes = new TextEncoder().encode(
    units.map((u) => JSON.stringify(u)).join("\n") + "\n",
  );
  const scores = await Array.fromAsync(
    readUnits(ReadableStream.from([bytes]), "stdin", () => {}).pipeThrough(
      scoreUnits(scorers),
    ),
  );
  assert.deepEqual(
    scores.map((s) =>
      `${s.example_id} ${s.metric} ${
        s.status === "scored" ? s.value : s.status
      }`
    ),
    [
      "stdin#1 latency 0",
      "stdin#1 cost 1",
      // {a, b} and {a, c}: 2 * 1 / (2 + 2)
      "stdin#1 set_overlap 0.5",
      "stdin#2 latency 1",
      "stdin#2 cost non_evaluable",
      "stdin#2 set_overlap 1",
      "stdin#3 latency non_evaluable",
      "stdin#3 cost non_evaluable",
      "stdin#3 set_overlap non_evaluable",
    ],
  );
  assert.equal(scores[0]!.reason, "1200 ms, more than 1000 ms");
});

async function configError(yaml: string): Promise<ConfigError> {
  let error: unknown;
  await withTempDir(async (dir) => {
    await suiteDir(dir, yaml);
    const file = `${dir}/suite.yaml`;
    try {
      const config = await checkConfigText(yaml, file);
      await buildScorers(config, file, { cwd: dir });
    } catch (e) {
      error = e;
    }
  });
  assert.ok(error instanceof ConfigError, String(error));
  assert.equal(error.exitCode, 2);
  return error;
}

const HEAD = "dataset: cases.jsonl\ntarget: { type: replay }\nscorers:\n";

Deno.test("cli run refuses a regex that does not compile, naming its line", async () => {
  await withTempDir(async (dir) => {
    await suiteDir(
      dir,
      `${HEAD}  - type: exact_match\n  - type: regex\n    pattern: "(unclosed"\n`,
    );
    const out = await cli(["run", "suite.yaml"], dir);
    assert.equal(out.code, 2);
    assert.equal(out.stdout, "");
    assert.match(
      out.stderr,
      /Invalid config "suite\.yaml" line 6: "scorers\[1\]\.pattern" is not a valid regular expression: Invalid regular expression: \/\(unclosed\/: Unterminated group/,
    );
  });
});

Deno.test("cli run refuses a regex with \\p{…} but no u flag, which would match the letters p{…}, naming the pattern's line", async () => {
  await withTempDir(async (dir) => {
    const regex = (flags: string) =>
      `${HEAD}  - type: exact_match\n  - type: regex\n    name: capital\n    pattern: '^\\p{Lu}'\n${flags}`;
    await suiteDir(dir, regex(""));
    const out = await cli(["run", "suite.yaml"], dir);
    assert.equal(out.code, 2);
    assert.equal(out.stdout, "");
    assert.equal(
      out.stderr,
      `evalpipe: Invalid config "suite.yaml" line 7: "scorers[1].pattern": Invalid regular expression /^\\p{Lu}/: "\\p{Lu}" is a Unicode property escape only with the "u" flag (without it, it matches the text "p{Lu}"): add flags: u\n`,
    );
    // With the flag, \\p{Lu} is a capital letter ("The answer is 4."); an
    // escaped backslash before p is no property escape.
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      regex(
        "    flags: u\n  - { type: regex, name: lit, pattern: 'x\\\\p{1}' }\n",
      ),
    );
    const ran = await cli(["run", "suite.yaml"], dir);
    assert.equal(ran.code, 0, ran.stderr);
    const scores = ran.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(
      scores.filter((s) => s.metric === "capital").map((s) => s.value),
      CASES.map((c) => /^[A-Z]/.test(c.output) ? 1 : 0),
    );
  });
});

Deno.test("cli run: text scorers compare code points unless normalize says nfc or nfkc, and a miss that nfc would mend says so", async () => {
  await withTempDir(async (dir) => {
    const nfc = "Café crème"; // é and è one code point each
    const nfd = nfc.normalize("NFD"); // e and a combining accent
    assert.notEqual(nfc, nfd);
    const cases = [
      { id: "nfd", input: "q", output: nfc, expected: nfd },
      { id: "wide", input: "q", output: "ＡＢＣ－１２３", expected: "abc-123" },
    ];
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      cases.map((c) => JSON.stringify(c)).join("\n") + "\n",
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: cases.jsonl
target: { type: replay }
scorers:
  - { type: exact_match }
  - { type: exact_match, normalize: nfc, name: em_nfc }
  - { type: contains, normalize: nfkc, ignore_case: true, name: c_nfkc }
  - { type: not_contains, value: "${
        nfd.slice(0, 5)
      }", normalize: nfc, name: nc_nfc }
  - { type: not_contains, value: "${nfd.slice(0, 5)}", name: nc }
`,
    );
    const out = await cli(["run", "suite.yaml"], dir);
    assert.equal(out.code, 0, out.stderr);
    const got = out.stdout.trimEnd().split("\n").map((l) => JSON.parse(l))
      .map((
        s,
      ) => [s.example_id.slice(12), s.metric, s.value, s.reason ?? null]);
    const hint =
      'with normalize: nfc (the texts write a character two ways in Unicode, as "é" is one code point or "e" and a combining accent)';
    assert.deepEqual(got, [
      ["nfd", "exact_match", 0, `expected "${nfd}"; 1 ${hint}`],
      ["nfd", "em_nfc", 1, null],
      ["nfd", "c_nfkc", 1, null],
      ["nfd", "nc_nfc", 0, `found "${nfd.slice(0, 5)}"`],
      // Without normalize, the accent written apart hides the word.
      ["nfd", "nc", 1, null],
      ["wide", "exact_match", 0, 'expected "abc-123"'],
      ["wide", "em_nfc", 0, 'expected "abc-123"'],
      ["wide", "c_nfkc", 1, null],
      ["wide", "nc_nfc", 1, null],
      ["wide", "nc", 1, null],
    ]);
  });
});

Deno.test("cli run: levenshtein, bleu, one_of and set_overlap take normalize as the text scorers do, checked at its line", async () => {
  await withTempDir(async (dir) => {
    const nfc = "rendez-vous à Genève demain matin"; // à, è one code point
    const nfd = nfc.normalize("NFD");
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      JSON.stringify({ id: "a", input: "q", output: nfd, expected: [nfc] }) +
        "\n",
    );
    const kinds = [
      "levenshtein",
      "bleu",
      `one_of, labels: ["${nfc}"]`,
      "set_overlap",
    ];
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `${HEAD}${
        kinds.map((k) => `  - { type: ${k}, normalize: nfc }\n`).join("")
      }`,
    );
    const out = await cli(["run", "suite.yaml"], dir);
    assert.equal(out.code, 0, out.stderr);
    const scores = out.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(
      scores.map((s) => [s.metric, s.value]),
      [["levenshtein", 1], ["bleu", 1], ["one_of", 1], ["set_overlap", 1]],
    );
  });
  for (
    const [i, kind] of ["levenshtein", "bleu", "one_of", "set_overlap"]
      .entries()
  ) {
    const labels = kind === "one_of" ? "    labels: [a]\n" : "";
    const error = await configError(
      `${HEAD}  - type: exact_match\n  - type: ${kind}\n${labels}    normalize: nfd\n`,
    );
    assert.equal(error.line, 6 + (labels === "" ? 0 : 1), `${i} ${kind}`);
    assert.match(error.message, /"scorers\[1\]\.normalize"/);
    assert.match(error.message, /"nfc", "nfkc"|nfc.*nfkc/);
  }
  // token_f1 and rouge_l read tokens their own way: no such option.
  const tokens = await configError(
    `${HEAD}  - type: rouge_l\n    normalize: nfc\n`,
  );
  assert.match(tokens.message, /unknown key "scorers\[0\]\.normalize"/);
});

Deno.test("checkConfigText names the line of a scorer's bad options", async () => {
  const flags = await configError(
    `${HEAD}  - type: regex\n    pattern: a\n    flags: gi\n`,
  );
  assert.equal(flags.line, 6);
  assert.match(flags.message, /"scorers\[0\]\.flags".*"imsuv"/);
  const none = await configError(
    `${HEAD}  - type: exact_match\n  - type: word_count\n`,
  );
  assert.equal(none.line, 5);
  assert.match(
    none.message,
    /"scorers\[1\]" \(word_count\) needs "min", "max" or both/,
  );
  const order = await configError(
    `${HEAD}  - type: word_count\n    min: 5\n    max: 2\n`,
  );
  assert.equal(order.line, 6);
  assert.match(
    order.message,
    /"scorers\[0\]\.max" \(2\) is below its "min" \(5\)/,
  );
  const unknown = await configError(
    `${HEAD}  - type: levenshtein\n    treshold: 0.5\n`,
  );
  assert.equal(unknown.line, 5);
  const range = await configError(
    `${HEAD}  - type: bleu\n    threshold: 1.5\n`,
  );
  assert.equal(range.line, 5);
  const casing = await configError(
    `${HEAD}  - type: token_f1\n    ignore_case: true\n`,
  );
  assert.match(casing.message, /unknown key "scorers\[0\]\.ignore_case"/);
});

Deno.test("an empty text to look for, or an empty pattern, is a config error at its line: it would pass (or fail) every case", async () => {
  const cases: Array<[string, number, string]> = [
    [
      `  - type: contains\n    value: ""\n`,
      5,
      '"scorers[0].value" is empty: every output contains "", so it would pass every case; give a text',
    ],
    [
      `  - type: not_contains\n    values:\n      - sorry\n      - ""\n`,
      7,
      '"scorers[0].values[1]" is empty: every output contains "", so it would fail every case; give a text',
    ],
    [
      `  - type: starts_with\n    values: [""]\n`,
      5,
      '"scorers[0].values[0]" is empty: every output starts with "", so it would pass every case; give a text',
    ],
    [
      // starts_with sets leading white space aside: " " is "" there.
      `  - type: starts_with\n    values: ["Yes", " "]\n`,
      5,
      '"scorers[0].values[1]" is white space alone: every output starts with it, its leading white space aside, so it would pass every case; give a text',
    ],
    [
      `  - type: regex\n    pattern: ""\n    match: false\n`,
      5,
      '"scorers[0].pattern" is empty: it matches every output, so it would fail every case; give a pattern',
    ],
  ];
  for (const [yaml, line, message] of cases) {
    const error = await configError(`${HEAD}${yaml}`);
    assert.equal(error.line, line, yaml);
    assert.ok(error.message.endsWith(message), error.message);
  }
  // An exact match of "" measures something: that the system said nothing.
  await withTempDir(async (dir) => {
    await suiteDir(dir, `${HEAD}  - type: exact_match\n    value: ""\n`);
    const out = await cli(["run", "suite.yaml"], dir);
    assert.equal(out.code === 2, false, out.stderr);
  });
});

Deno.test("buildScorers names the line of a schema file it cannot read or use", async () => {
  const missing = await configError(
    `${HEAD}  - type: json\n    schema: schemas/nope.json\n`,
  );
  assert.equal(missing.line, 5);
  assert.match(
    missing.message,
    /"scorers\[0\]\.schema": cannot read "schemas\/nope\.json": no such file$/,
  );
  // JSON written in a string is read as a path: say how to write it inline.
  const quoted = await configError(
    `${HEAD}  - type: json\n    schema: '{"type": "object"}'\n`,
  );
  assert.equal(quoted.line, 5);
  assert.match(
    quoted.message,
    /cannot read "\{\\"type\\": \\"object\\"\}": no such file; an inline schema is a YAML mapping \(schema: \{ type: object \}\), not a string of JSON$/,
  );
  const invalid = await configError(
    `${HEAD}  - type: exact_match\n  - type: json\n    schema: { type: nope }\n`,
  );
  assert.equal(invalid.line, 6);
  assert.match(
    invalid.message,
    /"scorers\[1\]\.schema": Invalid JSON Schema: schema is invalid/,
  );
});

Deno.test("a json scorer's version follows its schema file's content", async () => {
  await withTempDir(async (dir) => {
    await suiteDir(dir);
    const yaml = `${HEAD}  - { type: json, schema: schemas/answer.json }\n`;
    const file = `${dir}/suite.yaml`;
    const version = async () =>
      (await buildScorers(await checkConfigText(yaml, file), file, {
        cwd: dir,
      }))[0]!.version;
    const before = await version();
    assert.equal(before, await version());
    await Deno.writeTextFile(`${dir}/schemas/answer.json`, '{"type": "array"}');
    assert.notEqual(await version(), before);
  });
});

Deno.test("every built-in scorer is built from the config by its type", async () => {
  const yaml = `${HEAD}  - { type: exact_match }
  - { type: contains, mode: any, values: [a] }
  - { type: not_contains, value: x }
  - { type: starts_with, value: a }
  - { type: regex, pattern: a }
  - { type: word_count, min: 1 }
  - { type: one_of, labels: [a] }
  - { type: json }
  - { type: fields, required: [a] }
  - { type: json_match }
  - { type: numeric, abs_tol: 1 }
  - { type: levenshtein }
  - { type: token_f1 }
  - { type: rouge_l }
  - { type: bleu }
  - { type: set_overlap, measure: f1 }
  - { type: latency, max_ms: 10 }
  - { type: cost, max_usd: 1 }
`;
  const config = await checkConfigText(yaml, "suite.yaml");
  const scorers = await buildScorers(config, "suite.yaml", { cwd: "." });
  assert.deepEqual(
    scorers.map((s) => s.name),
    config.scorers.map((s) => s.type),
  );
  const u = {
    example_id: "d#1",
    unit_id: "d#1",
    input: "q",
    output: "a",
    expected: "a",
  };
  for (const scorer of scorers) {
    const s = scorer.score(u, {});
    assert.ok(!(s instanceof Promise), `${scorer.name} returned a promise`);
  }
});

Deno.test("no start-up path loads Ajv: only a json scorer with a schema does", async () => {
  for (const entry of ["cli.ts", "mod.ts", "src/run/run_suite.ts"]) {
    const { modules } = await staticGraph(entry);
    const ajv = [...modules].filter((m) => m.includes("/ajv@"));
    assert.deepEqual(ajv, [], entry);
  }
});

Deno.test("the README's table of scorers has a row for every type, whose example is a valid config", async () => {
  const readme = await Deno.readTextFile(
    new URL("../../README.md", import.meta.url),
  );
  const section = readme.slice(
    readme.indexOf("### Scorers"),
    readme.indexOf("#### A model as a judge"),
  );
  const scorers = (SUITE_SHAPE as Shape & { kind: "mapping" }).fields.scorers!
    .shape as Shape & { kind: "list" };
  const types = Object.keys((scorers.of as Shape & { kind: "byType" }).types);
  for (const type of types) {
    const row = section.split("\n").find((l) => l.startsWith(`| \`${type}\``));
    assert.ok(row !== undefined, `no row for ${type}`);
    const example = row.match(/\| `(\{ type: [^`]+\})` +\|$/)?.[1];
    assert.ok(example !== undefined, `no example for ${type}`);
    const config = await checkConfigText(
      `${HEAD}  - ${example}\n`,
      "README.md",
    );
    assert.equal(config.scorers[0]!.type, type);
  }
});

Deno.test("every built-in scorer declares its range, 0..1, so run clamps its interval and records it", async () => {
  const unit = [
    "exact_match",
    "contains",
    "not_contains",
    "starts_with",
    "regex, pattern: x",
    "word_count, max: 3",
    "one_of, labels: [a, b]",
    "json",
    "fields, required: [a]",
    "json_match",
    "numeric",
    "levenshtein",
    "rouge_l",
    "bleu",
    "token_f1",
    "set_overlap",
  ];
  const config = await checkConfigText(
    `dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n${
      unit.map((t) => `  - { type: ${t} }\n`).join("")
    }  - { type: latency, max_ms: 100 }\n  - { type: cost, max_usd: 1 }\n`,
    "s.yaml",
  );
  const scorers = await buildScorers(config, "s.yaml", { cwd: "." });
  for (const s of scorers) {
    assert.deepEqual(s.range, [0, 1], s.name);
  }
  // A run of two cases, one right and one wrong, keeps the interval in 0..1.
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input":"q","output":"abc","expected":"abc"}\n{"input":"q","output":"x","expected":"abc"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: levenshtein }]\n",
    );
    const out = await cli(["run", "s.yaml", "--record", "r.json"], dir);
    assert.equal(out.code, 0, out.stderr);
    const ranges = /"value_ranges":(\{[^}]*\})/.exec(
      await Deno.readTextFile(`${dir}/r.json`),
    )?.[1];
    assert.deepEqual(JSON.parse(ranges!), { levenshtein: [0, 1] });
    // 1 and 0: the interval would reach far below 0 and above 1 unclamped.
    assert.match(out.stderr, /levenshtein\s+0\.500 \[0\.000, 1\.000\]/);
  });
});

Deno.test("cli run cuts the texts its reasons quote at whole characters: no half of an emoji, which JSON writes as \\ud83d", async () => {
  await withTempDir(async (dir) => {
    // Odd lengths before the emoji put each cut between a surrogate pair:
    // exact_match quotes 200 UTF-16 units, a scorer's stderr its first 500
    // and last 1500.
    const long = `a${"😀".repeat(150)}`;
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      JSON.stringify({ input: "q", output: "no", expected: long }) + "\n",
    );
    await Deno.writeTextFile(
      `${dir}/fails.py`,
      `import sys\nsys.stderr.write("a" + "\\U0001F600" * 1200 + "b")\nsys.exit(1)\n`,
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: cases.jsonl\ntarget: { type: replay }\nscorers:\n  - type: exact_match\n  - { type: subprocess, cmd: python3 fails.py }\n`,
    );
    const out = await cli(["run", "suite.yaml"], dir);
    // A metric with nothing measured fails the run's default gate.
    assert.equal(out.code, 1, out.stderr);
    assert.doesNotMatch(out.stdout, /\\ud[89a-f]/i);
    const [exact, fails] = out.stdout.trimEnd().split("\n").map((l) =>
      JSON.parse(l)
    );
    assert.equal(exact.reason, `expected "a${"😀".repeat(99)}…"`);
    assert.equal(fails.status, "error");
    assert.ok(
      fails.reason.endsWith(`: a${"😀".repeat(249)}…${"😀".repeat(749)}b`),
      fails.reason,
    );
  });
});
