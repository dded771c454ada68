import assert from "node:assert/strict";
import { join } from "node:path";
import { configError } from "./_config_error.ts";
import { checkConfigText } from "../../src/config/mod.ts";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

Deno.test("checkConfigText names a misspelt top-level key and its line, and suggests the key meant", async () => {
  const error = await configError(
    "dataset: d.jsonl\ntarget: { type: replay }\nscorerz:\n  - type: exact_match\n",
  );
  assert.equal(
    error.message,
    'Invalid config "suite.yaml" line 3: unknown key "scorerz"; did you mean "scorers"?',
  );
  assert.equal(error.line, 3);
});

Deno.test("checkConfigText names a misspelt required key inside a mapping rather than calling it missing", async () => {
  const error = await configError(
    "dataset: d.jsonl\ntarget:\n  type: subprocess\n  cmdd: cat\nscorers: [{ type: exact_match }]\n",
  );
  assert.equal(
    error.message,
    'Invalid config "suite.yaml" line 4: unknown key "target.cmdd"; did you mean "cmd"?',
  );
});

Deno.test("checkConfigText names the misspelling of the first missing key when there are two", async () => {
  const error = await configError(
    "target: { type: replay }\nscorerz: [{ type: exact_match }]\ndatset: d.jsonl\n",
  );
  assert.equal(
    error.message,
    'Invalid config "suite.yaml" line 3: unknown key "datset"; did you mean "dataset"?',
  );
});

Deno.test("checkConfigText names an unknown key beside a missing one without suggesting what is not close", async () => {
  const error = await configError(
    "dataset: d.jsonl\ntarget: { type: replay }\njudges: [{ type: exact_match }]\n",
  );
  assert.equal(
    error.message,
    'Invalid config "suite.yaml" line 3: unknown key "judges"',
  );
  // A missing key with no unknown key beside it is still called missing.
  const missing = await configError(
    "target: { type: replay }\nscorers: [{ type: exact_match }]\n",
  );
  assert.match(missing.message, /line 1: "dataset" is missing$/);
});

Deno.test("checkConfigText suggests the key meant for a misspelt optional key, wherever it stands", async () => {
  const head = "dataset: d.jsonl\ntarget: { type: replay }\n";
  const cases: [string, string][] = [
    [
      `${head}scorers:\n  - { type: exact_match, ignore_cas: true }\n`,
      'line 4: unknown key "scorers[0].ignore_cas"; did you mean "ignore_case"?',
    ],
    [
      `${head}scorers: [{ type: numeric, rel_tl: 0.1 }]\n`,
      'line 3: unknown key "scorers[0].rel_tl"; did you mean "rel_tol"?',
    ],
    [
      `${head}scorers: [{ type: exact_match }]\nconcurency: 2\n`,
      'line 4: unknown key "concurency"; did you mean "concurrency"?',
    ],
    [
      `${head}scorers: [{ type: exact_match }]\nepochs: { n: 2, requre: all }\n`,
      'line 4: unknown key "epochs.requre"; did you mean "require"?',
    ],
    [
      `${head}scorers: [{ type: exact_match }]\ngates: { exact_match: { min_pas_rate: 1 } }\n`,
      'line 4: unknown key "gates.exact_match.min_pas_rate"; did you mean "min_pass_rate"?',
    ],
    [
      "dataset: d.jsonl\ntarget: { type: subprocess, cmd: cat, timout: 2 }\nscorers: [{ type: exact_match }]\n",
      'line 2: unknown key "target.timout"; did you mean "timeout"?',
    ],
    // A scorer's type misspelt as a key: named, not called missing.
    [
      `${head}scorers:\n  - { name: a, type: exact_match }\n  - { typ: exact_match }\n`,
      'line 5: unknown key "scorers[1].typ"; did you mean "type"?',
    ],
    // Nothing close: no guess.
    [
      `${head}scorers: [{ type: exact_match, zzzzzz: 1 }]\n`,
      'line 3: unknown key "scorers[0].zzzzzz"',
    ],
  ];
  for (const [text, message] of cases) {
    assert.equal(
      (await configError(text)).message,
      `Invalid config "suite.yaml" ${message}`,
    );
  }
});

Deno.test("checkConfigText names a value that is none of a key's words with the words and the one it is close to", async () => {
  const head = "dataset: d.jsonl\ntarget: { type: replay }\n";
  const cases: [string, string][] = [
    [
      `${head}scorers: [{ type: contains, value: a, mode: Any }]\n`,
      'line 3: "scorers[0].mode" is string "Any"; expected one of any, all; did you mean "any"?',
    ],
    [
      `${head}scorers: [{ type: exact_match }]\ncache: Replay\n`,
      'line 4: "cache" is string "Replay"; expected one of auto, replay, live, off; did you mean "replay"?',
    ],
    [
      `${head}scorers: [{ type: set_overlap, measure: dice }]\n`,
      'line 3: "scorers[0].measure" is string "dice"; expected one of jaccard, f1',
    ],
  ];
  for (const [text, message] of cases) {
    assert.equal(
      (await configError(text)).message,
      `Invalid config "suite.yaml" ${message}`,
    );
  }
  const type = await configError(`${head}scorers: [{ type: exact_mach }]\n`);
  assert.match(
    type.message,
    /line 3: "scorers\[0\]\.type" is string "exact_mach"; expected one of subprocess, .*, semantic_similarity; did you mean "exact_match"\?$/,
  );
});

Deno.test("checkConfigText names the scorer type a value is in another case or with other word breaks, short or long", async () => {
  const head = "dataset: d.jsonl\ntarget: { type: replay }\n";
  // Too many edits from a short word to be suggested by nearness alone.
  for (
    const [written, meant] of [
      ["JSON", "json"],
      ["Regex", "regex"],
      ["BLEU", "bleu"],
      ["Exact_Match", "exact_match"],
      ["exact-match", "exact_match"],
      ["Token F1", "token_f1"],
      ["ROUGE_L", "rouge_l"],
    ]
  ) {
    const error = await configError(
      `${head}scorers:\n  - type: ${written}\n`,
    );
    assert.match(
      error.message,
      new RegExp(
        `^Invalid config "suite\\.yaml" line 4: "scorers\\[0\\]\\.type" is string "${written}"; expected one of subprocess, .*; did you mean "${meant}"\\?$`,
      ),
      written,
    );
  }
});

Deno.test("cli run names a misspelt top-level key and its line, exit 2", async () => {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_config_test_" });
  try {
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      "dataset: d.jsonl\ntarget: { type: replay }\nscorerz:\n  - type: exact_match\n",
    );
    await Deno.writeTextFile(
      join(dir, "d.jsonl"),
      '{"input":"a","output":"a"}\n',
    );
    const { code, stdout, stderr } = await cli(["run", "suite.yaml"], dir);
    assert.equal(code, 2);
    assert.equal(stdout, "");
    assert.equal(
      stderr.trim(),
      'evalpipe: Invalid config "suite.yaml" line 3: unknown key "scorerz"; did you mean "scorers"?',
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("checkConfigText says bounds and empty lists in words, and calls the file the config", async () => {
  const cases: [string, string][] = [
    [
      "- dataset: d.jsonl\n",
      'Invalid config "suite.yaml" line 1: the config must be a mapping, not a list',
    ],
    [
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: []\n",
      'Invalid config "suite.yaml" line 3: "scorers" must list at least 1 item',
    ],
    [
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\nconcurrency: 5000\n",
      'Invalid config "suite.yaml" line 4: "concurrency" must be at most 1024, not 5000',
    ],
    [
      'dataset: ""\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n',
      'Invalid config "suite.yaml" line 1: "dataset" must not be empty',
    ],
    [
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\ngates:\n  exact_match:\n    min_mean: 1.5\n",
      'Invalid config "suite.yaml" line 6: "gates.exact_match.min_mean" must be at most 1, not 1.5',
    ],
    // A count or a mapping: the reason, not just "is not valid".
    ...([
      ["1.5", '"epochs" must be a whole number, not number 1.5'],
      ['"x"', '"epochs" must be a number or a mapping, not string "x"'],
      ["true", '"epochs" must be a number or a mapping, not boolean true'],
      ["[3]", '"epochs" must be a number or a mapping, not a list'],
      ["{ n: 2.5 }", '"epochs.n" must be a whole number, not number 2.5'],
      ["0", '"epochs" must be at least 1, not 0'],
    ].map(([epochs, why]): [string, string] => [
      `dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\nepochs: ${epochs}\n`,
      `Invalid config "suite.yaml" line 4: ${why}`,
    ])),
    [
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\nconcurrency: 2.5\n",
      'Invalid config "suite.yaml" line 4: "concurrency" must be a whole number, not number 2.5',
    ],
  ];
  for (const [text, message] of cases) {
    assert.equal((await configError(text)).message, message, text);
  }
});

Deno.test("cli run refuses a scorer whose script does not exist, before any work", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(dir, "scorers"));
    await Deno.writeTextFile(join(dir, "scorers", "grounded.py"), "print(1)\n");
    await Deno.writeTextFile(
      join(dir, "d.jsonl"),
      '{"input":"a","output":"b"}\n',
    );
    const suite = (cmd: string) =>
      `dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n  - type: exact_match\n  - type: subprocess\n    name: grounded\n    cmd: ${cmd}\n`;
    await Deno.writeTextFile(
      join(dir, "s.yaml"),
      suite("python3 scorers/grounded_typo.py"),
    );
    const out = await cli(["run", "s.yaml", "--out", "o.jsonl"], dir);
    assert.equal(out.code, 2);
    assert.equal(
      out.stderr.trim(),
      'evalpipe: Invalid config "s.yaml" line 5: scorer "python3 scorers/grounded_typo.py" runs "scorers/grounded_typo.py", which does not exist (paths resolve against the config\'s folder, ".")',
    );
    assert.equal(out.stdout, "");
    // The script that exists, an inline program and shell syntax all pass.
    for (
      const cmd of [
        "python3 scorers/grounded.py",
        `python3 -c 'print("{\\"score\\": 1}")'`,
        "cat > /dev/null; echo '{\"score\": 1}'",
      ]
    ) {
      await Deno.writeTextFile(join(dir, "s.yaml"), suite(JSON.stringify(cmd)));
      const run = await cli(["run", "s.yaml"], dir);
      assert.doesNotMatch(run.stderr, /does not exist/, cmd);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("missingScript names only a script plainly missing, never an option's value", async () => {
  const { missingScript } = await import("../../src/process/command.ts");
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(join(dir, "x.js"), "");
    assert.equal(missingScript("node y.js", dir), "y.js");
    assert.equal(missingScript("./grade.sh", dir), "./grade.sh");
    assert.equal(missingScript("deno run -A nope.ts", dir), "nope.ts");
    // An option's value that looks like a path, beside the script that exists.
    assert.equal(
      missingScript("node --loader ts-node/esm x.js", dir),
      undefined,
    );
    assert.equal(missingScript("node x.js", dir), undefined);
    assert.equal(missingScript("python3 -m my.module", dir), undefined);
    assert.equal(missingScript("echo hi", dir), undefined);
    assert.equal(missingScript("python3 grade.py | tee log", dir), undefined);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a bare `dataset: -` is refused with the quoting that reads stdin", async () => {
  const error = await configError(
    "# a suite over stdin\ndataset: -\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
  );
  assert.equal(error.line, 2);
  assert.match(error.message, /write dataset: "-" for stdin/);
});

Deno.test("a gate on a metric no scorer gives is a config error before any work, with the metric meant", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(dir, "scorers"));
    await Deno.writeTextFile(
      join(dir, "scorers", "grounded.py"),
      'import json, sys\njson.load(sys.stdin)\nprint(json.dumps({"score": 1}))\n',
    );
    await Deno.writeTextFile(
      join(dir, "d.jsonl"),
      '{"input":"yes","output":"yes","expected":"yes"}\n',
    );
    // The target leaves a mark when it is called: a refused suite calls nothing.
    const suite = (gates: string) =>
      `dataset: d.jsonl\ntargets:\n  a: { type: subprocess, cmd: "cat > /dev/null; touch called; echo yes" }\n  b: { type: replay }\nscorers:\n  - type: exact_match\n  - type: subprocess\n    cmd: python3 scorers/grounded.py\nclassification: true\ngates:\n${gates}`;
    const write = (gates: string) =>
      Deno.writeTextFile(join(dir, "s.yaml"), suite(gates));
    // The script's name, a built-in's and classification's are metrics;
    // a matrix gates each target on the same names.
    await write(
      "  exact_match: { min_mean: 0.5 }\n  grounded: { max_errors: 0 }\n  classification: { min_accuracy: 0.5 }\n",
    );
    const commands = [["validate", "s.yaml", "--matrix", "a,b"], [
      "run",
      "s.yaml",
      "--matrix",
      "a,b",
    ]];
    for (const args of commands) {
      const ok = await cli(args, dir);
      assert.equal(ok.code, 0, `${args.join(" ")}: ${ok.stderr}`);
      // validate lists classification's scorer (it once failed on it).
      if (args[0] === "validate") {
        assert.match(ok.stdout, /, classification \(classification@1\)\n/);
      }
    }
    await Deno.remove(join(dir, "called"));
    const cases: [string, string][] = [
      [
        "  exact_match: { min_mean: 0.5 }\n  grunded: { min_mean: 0.8 }\n",
        'line 12: gate "grunded" names no metric of this suite ("exact_match", "grounded", "classification"); did you mean "grounded"?',
      ],
      // A gate that only lets a metric go unmeasured is as misspelt.
      [
        "  exact_matc: { allow_unmeasured: true }\n",
        'line 11: gate "exact_matc" names no metric of this suite ("exact_match", "grounded", "classification"); did you mean "exact_match"?',
      ],
      [
        "  latency_p95: { max_errors: 0 }\n",
        'line 11: gate "latency_p95" names no metric of this suite ("exact_match", "grounded", "classification")',
      ],
    ];
    for (const [gates, message] of cases) {
      await write(gates);
      for (const args of commands) {
        const out = await cli(args, dir);
        assert.equal(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
        assert.equal(
          out.stderr.trim(),
          `evalpipe: Invalid config "s.yaml" ${message}`,
        );
        assert.equal(out.stdout, "");
      }
    }
    assert.equal(
      await Deno.stat(join(dir, "called")).then(() => true, () => false),
      false,
      "the target was called",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a config of two YAML documents is refused where the second starts; a lone --- at the end drops nothing", async () => {
  const suite =
    "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n";
  for (
    const [text, line] of [
      [`---\n${suite}---\ngates:\n  exact_match: { min_mean: 0.99 }\n`, 5],
      [`${suite}...\n---\nepochs: 3\n`, 5],
    ] as const
  ) {
    const error = await configError(text);
    assert.equal(
      error.message,
      `Invalid config "suite.yaml" line ${line}: a second YAML document starts here; the file must hold one (its first would be read, the rest dropped)`,
    );
  }
  const { checkConfigText } = await import("../../src/config/mod.ts");
  const config = await checkConfigText(`---\n${suite}---\n`, "suite.yaml");
  assert.equal(config.dataset, "d.jsonl");
});

Deno.test("a config or YAML dataset that gives a key twice names the key, at the line of the second", async () => {
  const suite =
    "dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n  - type: exact_match\n    name: a\n    name: b\n";
  const error = await configError(suite);
  assert.equal(
    error.message,
    'Invalid config "suite.yaml" line 6: key "name" appears twice in one mapping: keep one',
  );
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      join(dir, "d.yaml"),
      '- input: a\n- input: b\n  "input": c\n',
    );
    await Deno.writeTextFile(
      join(dir, "s.yaml"),
      "dataset: d.yaml\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    const out = await cli(["validate", "s.yaml"], dir);
    assert.equal(out.code, 2, out.stderr);
    assert.equal(
      out.stderr.trim(),
      'evalpipe: Cannot parse dataset "d.yaml" line 3: key "input" appears twice in one mapping: keep one',
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a config reads YAML merge keys (<<: *base) and names the line of a complex key", async () => {
  const { checkConfigText } = await import("../../src/config/mod.ts");
  const config = await checkConfigText(
    "dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n" +
      "  - &base { type: contains, value: refund }\n" +
      "  - <<: *base\n    name: mentions_days\n    value: days\n",
    "suite.yaml",
  );
  assert.deepEqual(
    config.scorers.map((
      s,
    ) => [s.type, s.name, (s as { value?: string }).value]),
    [
      ["contains", undefined, "refund"],
      ["contains", "mentions_days", "days"],
    ],
  );
  // A typo in a merged mapping is named at its own line.
  const typo = await configError(
    "dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n" +
      "  - &base { type: contains, value: refund }\n" +
      "  - <<: *base\n    name: b\n    valu: days\n",
  );
  assert.equal(typo.line, 7, typo.message);
  const complex = await configError(
    "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n? [a, b]\n: 1\n",
  );
  assert.equal(
    complex.message,
    'Invalid config "suite.yaml" line 4: a key must be a plain name, not a list or a mapping (a ? key)',
  );
});

Deno.test("a config takes top-level x- keys as extension fields (Docker Compose's anchors), and no other unknown key", async () => {
  const { parseConfigText } = await import("../../src/config/schema.ts");
  const text = "x-judge: &judge\n  type: llm_judge\n  model: gpt-4o\n" +
    "  pass_threshold: 0.7\nx-notes: [anything, { at: all }]\n" +
    "dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n" +
    '  - <<: *judge\n    name: tone\n    rubric: "Polite? {{output}}"\n';
  // The fast check and zod's agree: the x- keys are read no further.
  for (
    const config of [
      await checkConfigText(text, "suite.yaml"),
      parseConfigText(text, "suite.yaml"),
    ]
  ) {
    assert.deepEqual(Object.keys(config), ["dataset", "target", "scorers"]);
    assert.deepEqual(config.scorers[0], {
      type: "llm_judge",
      name: "tone",
      rubric: "Polite? {{output}}",
      pass_threshold: 0.7,
      model: "gpt-4o",
    });
  }
  // Further in, an x- key is unknown, named at its line.
  const nested = await configError(
    text + "  - type: exact_match\n    x-note: kept\n",
  );
  assert.equal(
    nested.message,
    'Invalid config "suite.yaml" line 13: unknown key "scorers[1].x-note"; "x-" keys are extension fields at the top of the file only',
  );
  // Another top-level key is still unknown.
  const other = await configError(text + "extras: &e { a: 1 }\n");
  assert.equal(
    other.message,
    'Invalid config "suite.yaml" line 12: unknown key "extras"',
  );
  // An upper-case X- key is none, as in Docker Compose: the message says so.
  const upper = await configError(text + "X-more: &m { a: 1 }\n");
  assert.equal(
    upper.message,
    'Invalid config "suite.yaml" line 12: unknown key "X-more"; extension keys start with lower-case "x-"',
  );
  // A mistake in what a scorer merges from an x- key is named in the scorer.
  const merged = await configError(
    text.replace("pass_threshold: 0.7", "pass_threshold: high"),
  );
  assert.equal(
    merged.message,
    'Invalid config "suite.yaml" line 9: "scorers[0].pass_threshold" must be a number, not string "high"',
  );
});

Deno.test("a config, a rubric or an env file that is not UTF-8 is refused at its line, never read with replacement characters", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const latin1 = (text: string) =>
      new Uint8Array(
        [...text].map((c) => c.charCodeAt(0)),
      );
    await Deno.writeTextFile(
      join(dir, "d.jsonl"),
      '{"input":"a","expected":"a"}\n',
    );
    await Deno.writeFile(
      join(dir, "suite.yaml"),
      latin1(
        "dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n  - type: exact_match\n    name: caf\u00e9\n",
      ),
    );
    const out = await cli(["validate", "suite.yaml"], dir);
    assert.equal(out.code, 2, out.stderr);
    assert.equal(
      out.stderr,
      'evalpipe: Invalid config "suite.yaml" line 5: not valid UTF-8; save it as UTF-8\n',
    );
    await Deno.writeFile(
      join(dir, "rubric.txt"),
      latin1("Grade it.\nCaf\u00e9 {{output}}\n"),
    );
    await Deno.writeTextFile(
      join(dir, "judged.yaml"),
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n  - type: rubric\n    file: rubric.txt\n    model: m\n    base_url: http://127.0.0.1:9/v1\n",
    );
    const judged = await cli(["validate", "judged.yaml"], dir);
    assert.equal(judged.code, 2, judged.stderr);
    assert.match(
      judged.stderr,
      /cannot read the rubric "rubric\.txt": not valid UTF-8 \(line 2\); save it as UTF-8/,
    );
    await Deno.writeFile(join(dir, "bad.env"), latin1("A=1\nB=caf\u00e9\n"));
    const env = await cli(
      ["validate", "judged.yaml", "--env-file", "bad.env"],
      dir,
    );
    assert.equal(env.code, 2, env.stderr);
    assert.match(
      env.stderr,
      /Cannot read env file "bad\.env": not valid UTF-8 \(line 2\); save it as UTF-8/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("stdin among datasets is refused with a hint that works as written", async () => {
  const error = await configError(
    'datasets: [{ path: "-" }]\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n',
  );
  const hint = /give it as (.*)$/.exec(error.message)?.[1];
  assert.equal(hint, 'dataset: "-"', error.message);
  // The hint, put in place of the datasets, is a valid config.
  const { checkConfigText } = await import("../../src/config/mod.ts");
  const config = await checkConfigText(
    `${hint}\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n`,
    "suite.yaml",
  );
  assert.equal(config.dataset, "-");
});

Deno.test("cli run refuses a target whose script or program is missing, as validate does, before any call", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(join(dir, "d.jsonl"), '{"input":"a"}\n');
    const cases: [string, string][] = [
      [
        "target: { type: subprocess, cmd: python3 nope.py }",
        'line 2: the target "python3 nope.py" runs "nope.py", which does not exist (paths resolve against the config\'s folder, ".")',
      ],
      [
        "targets:\n  a: { type: replay }\n  b: { type: subprocess, cmd: no-such-program-here --x }",
        'line 4: target "b" "no-such-program-here --x" runs "no-such-program-here", which is not on PATH',
      ],
    ];
    for (const [target, message] of cases) {
      await Deno.writeTextFile(
        join(dir, "s.yaml"),
        `dataset: d.jsonl\n${target}\nscorers: [{ type: exact_match }]\n`,
      );
      const pick = target.startsWith("targets") ? ["--matrix", "a,b"] : [];
      for (const command of ["run", "validate"]) {
        const out = await cli([command, "s.yaml", ...pick], dir);
        assert.equal(out.code, 2, `${command}: ${out.stderr}`);
        assert.equal(out.stdout, "");
        assert.equal(
          out.stderr,
          `evalpipe: Invalid config "s.yaml" ${message}\n`,
          command,
        );
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a variable a target, a header or a judge needs and the environment lacks is a config error at the line naming it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(join(dir, "d.jsonl"), '{"input":"a"}\n');
    const cases: [string, number, string][] = [
      [
        "target: { type: openai, model: m, api_key_env: EVALPIPE_NOPE_A }\nscorers: [{ type: exact_match }]\n",
        2,
        "EVALPIPE_NOPE_A",
      ],
      [
        'target:\n  type: http\n  url: http://127.0.0.1:9/x\n  headers:\n    # EVALPIPE_NOPE_B, in a comment, is not its line\n    Authorization: "Bearer ${EVALPIPE_NOPE_B}"\nscorers: [{ type: exact_match }]\n',
        7,
        "EVALPIPE_NOPE_B",
      ],
      [
        'target: { type: replay }\nscorers:\n  - type: llm_judge\n    rubric: "{{output}}"\n    model: m\n    api_key_env: EVALPIPE_NOPE_C\n',
        7,
        "EVALPIPE_NOPE_C",
      ],
    ];
    for (const [rest, line, name] of cases) {
      await Deno.writeTextFile(
        join(dir, "s.yaml"),
        `dataset: d.jsonl\n${rest}`,
      );
      const commands = [["validate", "s.yaml"], ["run", "s.yaml"]];
      if (rest.includes("llm_judge")) {
        commands.push(["score", "--config", "s.yaml"]);
      }
      for (const args of commands) {
        const out = await cli(args, dir);
        assert.equal(out.code, 2, `${args[0]}: ${out.stderr}`);
        assert.equal(
          out.stderr,
          `evalpipe: Invalid config "s.yaml" line ${line}: The environment variable ${name} is not set\n`,
          args[0],
        );
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a boolean written as YAML 1.1 wrote it (yes, Off, n) is refused with the YAML 1.2 word to write; other strings get no hint", async () => {
  for (
    const [word, meant] of [["yes", "true"], ["Off", "false"], ["n", "false"], [
      "ON",
      "true",
    ]]
  ) {
    const error = await configError(
      `dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n  - type: exact_match\n    ignore_case: ${word}\n`,
    );
    assert.equal(
      error.message,
      `Invalid config "suite.yaml" line 5: "scorers[0].ignore_case" must be a boolean, not string "${word}" (evalpipe reads YAML 1.2, where ${word} is text: write ${meant})`,
    );
  }
  const plain = await configError(
    "dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n  - type: exact_match\n    ignore_case: maybe\n",
  );
  assert.equal(
    plain.message,
    'Invalid config "suite.yaml" line 5: "scorers[0].ignore_case" must be a boolean, not string "maybe"',
  );
});

Deno.test("a config number written .inf or .nan is refused as not finite, named as YAML writes it (not as null)", async () => {
  for (
    const [line, message] of <[string, string][]> [
      [
        "concurrency: .inf",
        '"concurrency" must be a finite number, not number .inf',
      ],
      [
        "gates:\n  exact_match: { min_mean: .nan }",
        '"gates.exact_match.min_mean" must be a finite number, not number .nan',
      ],
      [
        "scorers: [{ type: exact_match, value: -.inf }]",
        '"scorers[0].value" must be a string, not number -.inf',
      ],
    ]
  ) {
    const text = line.startsWith("scorers")
      ? `dataset: d.jsonl\ntarget: { type: replay }\n${line}\n`
      : `dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n${line}\n`;
    const error = await configError(text);
    assert.equal(
      error.message.replace(/^Invalid config "suite.yaml" line \d+: /, ""),
      message,
    );
  }
});

Deno.test("a target template naming {{expected}} is a config error at its line: a target is never given the answer key", async () => {
  const http = await configError(
    `dataset: d.jsonl
target:
  type: http
  url: http://127.0.0.1:9/x
  headers: { X-Q: "{{input}}" }
  body:
    question: "{{input}}"
    parts: ["a", "{{ expected.answer }}"]
scorers: [{ type: exact_match }]
`,
  );
  assert.equal(
    http.message,
    'Invalid config "suite.yaml" line 8: "target.body.parts[1]" names {{expected.answer}}, which a target is never given: expected is the answer key, for scorers only',
  );
  const openai = await configError(
    `dataset: d.jsonl
targets:
  a: { type: replay }
  b:
    type: openai
    model: m
    base_url: http://127.0.0.1:9/v1
    prompt: "Q: {{input}} A: {{expected}}"
scorers: [{ type: exact_match }]
`,
  );
  assert.equal(
    openai.message,
    'Invalid config "suite.yaml" line 8: "targets.b.prompt" names {{expected}}, which a target is never given: expected is the answer key, for scorers only',
  );
});

Deno.test("params that make a reply evalpipe cannot read are a config error at their line: stream: true, n other than 1, for a target and a judge", async () => {
  const target = (params: string) =>
    configError(`dataset: d.jsonl
target:
  type: openai
  model: m
  params:
    temperature: 0
${params}
scorers: [{ type: exact_match }]
`);
  const stream = await target("    stream: true\n    n: 3");
  assert.equal(
    stream.message,
    'Invalid config "suite.yaml" line 7: "target.params.stream" is true: evalpipe reads each reply whole, as one JSON answer, and a streamed one comes as server-sent events; drop it',
  );
  const n = await target("    stream: false\n    n: 3");
  assert.equal(
    n.message,
    'Invalid config "suite.yaml" line 8: "target.params.n" is 3: evalpipe reads only the first choice of a reply, and the others would be paid for; drop it, or run several epochs (epochs: N)',
  );
  const judge = await configError(`dataset: d.jsonl
targets:
  a: { type: replay }
scorers:
  - type: exact_match
  - type: llm_judge
    model: m
    params: { n: 2 }
`);
  assert.equal(judge.line, 8);
  assert.match(judge.message, /"scorers\[1\]\.params\.n" is 2: /);
  const named = await configError(`dataset: d.jsonl
targets:
  a: { type: openai, model: m, params: { stream: "yes" } }
scorers: [{ type: faithfulness, model: m }]
`);
  assert.match(named.message, /line 3: "targets\.a\.params\.stream" is "yes"/);
  // n: 1 and stream: false ask for what is read: accepted.
  await checkConfigText(
    `dataset: d.jsonl
target: { type: openai, model: m, params: { n: 1, stream: false } }
scorers: [{ type: rubric, file: r.md, model: m, params: { n: 1 } }]
`,
    "suite.yaml",
  );
});

Deno.test("template syntax evalpipe does not fill is a config error at its line: filters, tags, an unclosed {{, in a target's templates and an llm_judge rubric", async () => {
  const fix =
    "a placeholder is a field's name alone, as {{input}} or {{metadata.topic}}";
  const filter = await configError(`dataset: d.jsonl
target:
  type: openai
  model: m
  system: "Be brief."
  prompt: "A {{ input | upper }} B {% if context %}ctx{% endif %}"
scorers: [{ type: exact_match }]
`);
  assert.equal(
    filter.message,
    `Invalid config "suite.yaml" line 6: "target.prompt" has {{ input | upper }}, which evalpipe would send as written: filters ("|") are not supported; ${fix}`,
  );
  const tag = await configError(`dataset: d.jsonl
target:
  type: openai
  model: m
  system: "{% if context %}Use the context.{% endif %}"
scorers: [{ type: exact_match }]
`);
  assert.equal(
    tag.message,
    `Invalid config "suite.yaml" line 5: "target.system" has {% if context %}, which evalpipe would send as written: tags ({% %}) are not supported; ${fix}`,
  );
  const unclosed = await configError(`dataset: d.jsonl
targets:
  api:
    type: http
    url: http://127.0.0.1:9/x?q={{input}}
    body:
      q: "{{input}}"
      parts: ["{{ context }}", "{{input}"]
scorers: [{ type: exact_match }]
`);
  assert.equal(
    unclosed.message,
    `Invalid config "suite.yaml" line 8: "targets.api.body.parts[1]" has {{input}, which evalpipe would send as written: no "}}" closes "{{"; ${fix}`,
  );
  const rubric = await configError(`dataset: d.jsonl
target: { type: replay }
scorers:
  - type: exact_match
  - type: llm_judge
    model: m
    rubric: "Is {{output|trim}} polite?"
`);
  assert.equal(rubric.line, 7);
  assert.match(
    rubric.message,
    /"scorers\[1\]\.rubric" has \{\{output\|trim\}\}, which evalpipe would send as written: filters/,
  );
  // Placeholders with spaces, dotted paths, and JSON braces in the text pass.
  await checkConfigText(
    `dataset: d.jsonl
target:
  type: openai
  model: m
  prompt: 'Answer as {"a": {"b": 1}}. {{ input }} {{metadata.topic}}'
scorers: [{ type: llm_judge, model: m, rubric: "{{input}} {{ output }}" }]
`,
    "suite.yaml",
  );
});

Deno.test("an http target's ${NAME} outside header values and {{field}} in a header value are config errors at their line, never sent as written", async () => {
  const http = (lines: string) =>
    configError(`dataset: d.jsonl
target:
  type: http
${lines}
scorers: [{ type: exact_match }]
`);
  const url = await http(
    '  url: "http://127.0.0.1:9/echo?key=${BOT_TOKEN}&q={{input}}"',
  );
  assert.equal(
    url.message,
    'Invalid config "suite.yaml" line 4: "target.url" has ${BOT_TOKEN}, which evalpipe would send as written: only header values read environment variables; send the secret in a header, e.g. headers: { authorization: "Bearer ${BOT_TOKEN}" }',
  );
  const body = await http(
    '  url: http://127.0.0.1:9/echo\n  body:\n    q: "{{input}}"\n    key: "${BOT_TOKEN}"',
  );
  assert.equal(body.line, 7);
  assert.match(body.message, /"target\.body\.key" has \$\{BOT_TOKEN\}, /);
  const header = await http(
    '  url: http://127.0.0.1:9/echo\n  headers:\n    authorization: "Bearer ${BOT_TOKEN}"\n    x-question: "{{input}}"',
  );
  assert.equal(
    header.message,
    'Invalid config "suite.yaml" line 7: "target.headers.x-question" has {{input}}, which evalpipe would send as written: a header value reads ${NAME} (an environment variable) only; put case fields in "url" or "body"',
  );
  // ${NAME} in a header and {{field}} in url and body are what each reads;
  // an openai prompt may hold ${...} as text.
  await checkConfigText(
    `dataset: d.jsonl
targets:
  api:
    type: http
    url: "http://127.0.0.1:9/echo?q={{input}}"
    headers: { authorization: "Bearer \${BOT_TOKEN}" }
    body: { q: "{{input}}" }
  chat: { type: openai, model: m, prompt: "Explain \${HOME} in sh: {{input}}" }
matrix: [api, chat]
scorers: [{ type: exact_match }]
`,
    "suite.yaml",
  );
});

Deno.test("checkConfigText says an empty config file is empty, and what a suite needs", async () => {
  // Before: 'the config is missing', of a file that is there.
  for (const text of ["", "# only a comment\n", "---\n"]) {
    const error = await configError(text);
    assert.match(
      error.message,
      /^Invalid config "suite\.yaml"( line 1)?: the file is empty \(or holds only comments\): a suite needs "dataset", "target" and "scorers"; "evalpipe init" writes a starter one$/,
      JSON.stringify(text),
    );
  }
});

Deno.test("an http target whose url lets a case choose the host while its headers send a secret is a config error; a fixed domain is not", async () => {
  // The dataset is not trusted: {{metadata.host}} as the host sent the
  // Bearer token to whatever host a case named. The host is the one a URL
  // parser reads: the check read the text between "://" and the first "/",
  // "?" or "#", so "\\" (a "/" to the parser), "http:{{x}}" and
  // "http:///{{x}}" put the case's field in the host unseen.
  const http = (
    url: string,
    headers = '{ authorization: "Bearer ${TOKEN}" }',
  ) =>
    `dataset: d.jsonl\ntarget:\n  type: http\n  url: ${
      JSON.stringify(url)
    }\n  headers: ${headers}\nscorers: [{ type: exact_match }]\n`;
  for (
    const [url, host] of [
      ["http://{{metadata.host}}:8080/x", "{{metadata.host}}"],
      ["https://api.{{metadata.tld}}/x", "{{metadata.tld}}"],
      ["https://{{metadata.name}}.com/x", "{{metadata.name}}.com"],
      ["http://{{metadata.host}}\\@api.example.com/x", "{{metadata.host}}"],
      ["HTTP://{{metadata.host}}\\@api.example.com/x", "{{metadata.host}}"],
      ["http://{{metadata.host}}\t\\@api.example.com/x", "{{metadata.host}}"],
      ["http://{{metadata.host}}\n\\@api.example.com/x", "{{metadata.host}}"],
      ["http://u@{{metadata.host}}\\@api.example.com/x", "{{metadata.host}}"],
      ["http:{{metadata.host}}/x", "{{metadata.host}}"],
      ["http:///{{metadata.host}}/x", "{{metadata.host}}"],
      ["http:\\\\{{metadata.host}}/x", "{{metadata.host}}"],
      ["https://{{metadata.name}}。com/x", "{{metadata.name}}.com"],
      ["https://{{metadata.name}}%2Ecom/x", "{{metadata.name}}.com"],
      // A host that ends in a number is an IP address the case completes.
      ["http://{{metadata.net}}.0.1/x", "{{metadata.net}}"],
      ["http://[::ffff:{{metadata.ip}}]/x", "{{metadata.ip}}"],
      ["http://[::{{metadata.a}}:{{metadata.b}}]/x", "{{metadata.a}}"],
      // A placeholder in the scheme made every reading no URL: unseen.
      ["{{metadata.scheme}}://{{metadata.host}}/x", "{{metadata.host}}"],
      ["{{metadata.scheme}}:{{metadata.host}}/x", "{{metadata.host}}"],
      // One that ends a scheme was read as "httphttp:": no host at all.
      ["http{{metadata.s}}:{{metadata.host}}/x", "{{metadata.host}}"],
    ]
  ) {
    const error = await configError(http(url!));
    assert.equal(
      error.message,
      `Invalid config "suite.yaml" line 4: "target.url" lets a case choose the host (${host}, as a URL parser reads it) while the headers send \${TOKEN}: a dataset could send the secret to any host; fix the domain, as in https://{{metadata.region}}.api.example.com`,
      url,
    );
  }
  // A case's part of a fixed domain, a path, or no secret to send: fine.
  for (
    const text of [
      http("https://{{metadata.region}}.api.example.com:8443/x"),
      http("https://api.example.com/{{metadata.host}}?q={{input}}"),
      http("http://{{metadata.host}}/x", '{ x-trace: "on" }'),
      // The port or the userinfo a case fills leaves the host fixed (the
      // userinfo beside an authorization header is refused, below).
      http("https://api.example.com:{{metadata.port}}/x"),
      http(
        "http://u:{{metadata.pw}}@api.example.com/x",
        '{ x-api-key: "${TOKEN}" }',
      ),
      http(
        "http://{{metadata.user}}@api.example.com/x",
        '{ x-api-key: "${TOKEN}" }',
      ),
      // A "\\" ends the host; a "。" is a dot.
      http("http://api.example.com\\{{metadata.path}}"),
      http("https://{{metadata.region}}。api.example.com/x"),
      http("https://{{metadata.region}}.api.example.com:{{metadata.port}}/x"),
      // Several placeholders in the port, or the scheme alone, pick no host
      // (a scheme a case fills beside a secret is refused for its own
      // reason: in url_credentials_test.ts).
      http("https://api.example.com:{{metadata.a}}{{metadata.b}}/x"),
      http("{{metadata.scheme}}://api.example.com/x", '{ x-trace: "on" }'),
      http("http{{metadata.s}}://api.example.com/x", '{ x-trace: "on" }'),
    ]
  ) await checkConfigText(text, "suite.yaml");
});

/** A suite whose target is an http target with `url` (and `headers`, YAML), on line 4. */
function httpSuite(url: string, headers?: string): string {
  return `dataset: d.jsonl\ntarget:\n  type: http\n  url: ${
    JSON.stringify(url)
  }\n${
    headers === undefined ? "" : `  headers: ${headers}\n`
  }scorers: [{ type: exact_match }]\n`;
}

Deno.test("an http target whose url lets a case choose the host while the url sends a password is a config error", async () => {
  // The URL's userinfo goes out as Basic auth: user:pw@{{metadata.host}}
  // sent the password to whatever host a case named.
  for (
    const url of [
      "http://me:hunter2pass@{{metadata.host}}/x",
      // A "\\" is a "/": the password goes to {{metadata.host}}.
      "http://me:hunter2pass@{{metadata.host}}\\@api.example.com/x",
      "{{metadata.scheme}}://me:hunter2pass@{{metadata.host}}/x",
    ]
  ) {
    const error = await configError(httpSuite(url));
    assert.equal(
      error.message,
      'Invalid config "suite.yaml" line 4: "target.url" lets a case choose the host ({{metadata.host}}, as a URL parser reads it) while the URL sends a password: a dataset could send the secret to any host; fix the domain, as in https://{{metadata.region}}.api.example.com',
    );
  }
  for (
    const url of [
      "https://me:hunter2pass@{{metadata.region}}.api.example.com/x",
      "http://me@{{metadata.host}}/x",
      "https://me:pw@api.example.com/{{metadata.host}}",
    ]
  ) await checkConfigText(httpSuite(url), "suite.yaml");
});

Deno.test("an http target's url that no filling makes a URL is a config error at its line, not a target error for every case", async () => {
  // http://127.0.0.1:99999/ passed validate, and each case of the run was
  // the same "cannot be sent: Invalid URL" target error.
  for (
    const url of [
      "http://127.0.0.1:99999/a",
      "http://me:hunter2pass@127.0.0.1:99999/a?key=AIza-1",
      "http://api example.com/a",
      "http://[{{metadata.ip}}]/a",
      "/answer",
      // No scheme: what a case fills never makes "/a?t=1" one.
      "{{metadata.host}}/a?t=1:2",
    ]
  ) {
    const error = await configError(httpSuite(url));
    assert.equal(
      error.message,
      'Invalid config "suite.yaml" line 4: "target.url" is no URL a URL parser can read, so no case could be sent: check its scheme (http:// or https://), its host and its port (at most 65535)',
      url,
    );
    assert.ok(!error.message.includes("hunter2pass"));
  }
  // A placeholder stands for digits in a port, for letters in a name.
  for (
    const url of [
      "http://127.0.0.1:{{metadata.port}}/a",
      "http://999.{{metadata.name}}/a",
      "{{metadata.scheme}}://api.example.com:8443/a",
      " {{metadata.scheme}}://api.example.com/a",
    ]
  ) await checkConfigText(httpSuite(url), "suite.yaml");
});

Deno.test("an http target's url with a user name or password beside an authorization header is a config error naming both", async () => {
  // fetch sends the URL's userinfo as Basic auth in the authorization
  // header, and the config's header joined to it ("Basic …, Bearer …"):
  // the service got neither as the config meant.
  for (
    const [url, header] of [
      ["https://me:hunter2pass@api.example.com/x", "authorization"],
      ["https://me@api.example.com/x", "Authorization"],
      [
        "https://{{metadata.user}}:{{metadata.pw}}@api.example.com/x",
        "AUTHORIZATION",
      ],
    ]
  ) {
    const error = await configError(
      httpSuite(url!, `{ ${header}: "Bearer \${TOKEN}" }`),
    );
    assert.equal(
      error.message,
      `Invalid config "suite.yaml" line 4: "target.url" has a user name or password, which is sent as Basic auth in the authorization header, beside "target.headers.${header}": the service would get both in that one header; keep one, the url's "user:password@" or the header`,
      url,
    );
    assert.ok(!error.message.includes("hunter2pass"));
  }
  for (
    const text of [
      httpSuite(
        "https://me:hunter2pass@api.example.com/x",
        '{ x-api-key: "k" }',
      ),
      httpSuite(
        "https://api.example.com/x",
        '{ authorization: "Bearer ${TOKEN}" }',
      ),
    ]
  ) await checkConfigText(text, "suite.yaml");
});

Deno.test("a __proto__ key anywhere in a config is a config error at its line, not a setting dropped unread", async () => {
  // gates: { __proto__: ... } passed every check and its gate was never
  // applied: a run whose metric __proto__ failed it exited 0.
  const suite =
    'dataset: d.jsonl\ntarget: { type: subprocess, cmd: "echo y" }\nscorers: [{ type: exact_match, name: __proto__ }]\n';
  for (
    const [tail, where, line] of [
      ["gates: { __proto__: { min_pass_rate: 1 } }\n", "gates.__proto__", 4],
      [
        // Merged in: named at the mapping it was merged into.
        "gates:\n  <<: { __proto__: { min_pass_rate: 1 } }\n",
        "gates.__proto__",
        4,
      ],
      [
        "x-shared: &h { __proto__: { a: 1 } }\n",
        "x-shared.__proto__",
        4,
      ],
    ] as const
  ) {
    const error = await configError(suite + tail);
    assert.equal(
      error.message,
      `Invalid config "suite.yaml" line ${line}: "${where}": "__proto__" is no key a config may have: JavaScript takes it for the mapping's prototype, and what it holds would be dropped unread (a gate never checked); rename it`,
    );
  }
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input": "x", "expected": "x"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      suite + "gates: { __proto__: { min_pass_rate: 1 } }\n",
    );
    const out = await cli(["run", "suite.yaml"], dir);
    assert.equal(out.code, 2, out.stderr);
  });
});

Deno.test("an unknown key that is another tool's word, or a typo of one, suggests evalpipe's key where it may stand", async () => {
  const head = "dataset: d.jsonl\ntarget: { type: replay }\n";
  for (
    const [text, message] of [
      [
        `${head}scorers: [{ type: exact_match }]\ntresholds:\n  exact_match: 0.5\n`,
        'line 4: unknown key "tresholds"; did you mean "gates" (the thresholds, per metric: { grounded: { min_mean: 0.8 } })?',
      ],
      [
        `${head}scorers: [{ type: exact_match }]\ntrials: 3\n`,
        'line 4: unknown key "trials"; did you mean "epochs" (how many times each case runs)?',
      ],
      [
        `${head}scorers:\n  - type: subprocess\n    command: python3 grade.py\n`,
        'line 5: unknown key "scorers[0].command"; did you mean "cmd" (the command, run via sh -c)?',
      ],
      [
        `${head}metrics: [{ type: exact_match }]\n`,
        'line 3: unknown key "metrics"; did you mean "scorers" (a list of checks, each a metric)?',
      ],
      // A typo of evalpipe's own key is still named as one.
      [
        `${head}scorerz: [{ type: exact_match }]\n`,
        'line 3: unknown key "scorerz"; did you mean "scorers"?',
      ],
    ] as const
  ) {
    const error = await configError(text);
    assert.equal(error.message, `Invalid config "suite.yaml" ${message}`);
  }
});

Deno.test("checkConfigText: a gate's bar without its min_ or max_, or written without its metric, is named with what was meant", async () => {
  const head =
    "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n";
  const cases: Array<[string, string]> = [
    [
      "gates: { exact_match: { pass_rate: 0.9 } }\n",
      'line 4: unknown key "gates.exact_match.pass_rate"; did you mean "min_pass_rate"?',
    ],
    [
      "gates: { exact_match: { errors: 0 } }\n",
      'line 4: unknown key "gates.exact_match.errors"; did you mean "max_errors"?',
    ],
    [
      "gates:\n  min_pass_rate: 0.9\n",
      'line 5: "gates.min_pass_rate" must be a mapping, not number 0.9; a gate is per metric: gates: { exact_match: { min_pass_rate: 0.9 } }',
    ],
  ];
  for (const [gates, message] of cases) {
    const error = await configError(head + gates);
    assert.equal(error.message, `Invalid config "suite.yaml" ${message}`);
  }
});

Deno.test("checkConfigText: a bar under gates: without its metric names the gate it was meant to be: a classification figure under classification, a bar without min_ with it", async () => {
  const head =
    "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\nclassification: true\n";
  const cases: Array<[string, string]> = [
    // min_accuracy on exact_match is refused: the hint must not lead there.
    [
      "gates:\n  min_accuracy: 0.8\n",
      'line 6: "gates.min_accuracy" must be a mapping, not number 0.8; a gate is per metric: gates: { classification: { min_accuracy: 0.8 } }',
    ],
    [
      "gates:\n  min_macro_f1: 0.7\n",
      'line 6: "gates.min_macro_f1" must be a mapping, not number 0.7; a gate is per metric: gates: { classification: { min_macro_f1: 0.7 } }',
    ],
    [
      "gates:\n  pass_rate: 0.9\n",
      'line 6: "gates.pass_rate" must be a mapping, not number 0.9; a gate is per metric: gates: { exact_match: { min_pass_rate: 0.9 } }',
    ],
    [
      "gates:\n  errors: 0\n",
      'line 6: "gates.errors" must be a mapping, not number 0; a gate is per metric: gates: { exact_match: { max_errors: 0 } }',
    ],
  ];
  for (const [gates, message] of cases) {
    const error = await configError(head + gates);
    assert.equal(error.message, `Invalid config "suite.yaml" ${message}`);
  }
  // The hints' gates are the suite's: each is valid where it was suggested.
  for (
    const gates of [
      "gates: { classification: { min_accuracy: 0.8, min_macro_f1: 0.7 } }\n",
      "gates: { exact_match: { min_pass_rate: 0.9, max_errors: 0 } }\n",
    ]
  ) await checkConfigText(head + gates, "suite.yaml");
});

Deno.test("checkConfigText: promptfoo's transformResponse or responseParser on an http target suggests output, the dot path", async () => {
  for (const key of ["transformResponse", "responseParser"]) {
    const error = await configError(
      `dataset: d.jsonl\ntarget:\n  type: http\n  url: http://127.0.0.1:9/x\n  ${key}: json.answer.text\nscorers: [{ type: exact_match }]\n`,
    );
    assert.equal(
      error.message,
      `Invalid config "suite.yaml" line 5: unknown key "target.${key}"; did you mean "output" (a dot path into the reply's JSON: promptfoo's "json.answer.text" is answer.text here)?`,
    );
  }
  // The suggestion works as said.
  const config = await checkConfigText(
    "dataset: d.jsonl\ntarget: { type: http, url: http://127.0.0.1:9/x, output: answer.text }\nscorers: [{ type: exact_match }]\n",
    "suite.yaml",
  );
  assert.equal((config.target as { output?: string }).output, "answer.text");
});

Deno.test("checkConfigText: a bar under gates: names the first scorer's real metric, a subprocess scorer's by its script, or says why it cannot", async () => {
  await withTempDir(async (dir) => {
    // The config in a folder of its own: its script resolves against it.
    await Deno.mkdir(join(dir, "suite", "scorers"), { recursive: true });
    await Deno.writeTextFile(
      join(dir, "suite", "scorers", "faithfulness.py"),
      "print(1)\n",
    );
    await Deno.writeTextFile(join(dir, "suite", "d.jsonl"), '{"input":"a"}\n');
    const head = "dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n";
    const cases: Array<[string, string]> = [
      [
        "  - type: subprocess\n    cmd: python3 scorers/faithfulness.py\n",
        "a gate is per metric: gates: { faithfulness: { min_pass_rate: 0.9 } }",
      ],
      [
        "  - type: subprocess\n    cmd: python3 scorers/faithfulness.py\n    persistent: true\n",
        "a gate is per metric: gates: { faithfulness: { min_pass_rate: 0.9 } }",
      ],
      [
        `  - type: subprocess\n    cmd: python3 -c "print(1)"\n`,
        'a gate is per metric: gates: { METRIC: { min_pass_rate: 0.9 } }, METRIC the first scorer\'s "name" (its command names no script file to take a metric name from)',
      ],
      [
        "  - type: subprocess\n    cmd: python3 scorers/faithfulness.py\n    name: grounded answer\n",
        'a gate is per metric: gates: { "grounded answer": { min_pass_rate: 0.9 } }',
      ],
    ];
    for (const [scorers, hint] of cases) {
      await Deno.writeTextFile(
        join(dir, "suite", "evalpipe.yaml"),
        `${head}${scorers}gates:\n  min_pass_rate: 0.9\n`,
      );
      const out = await cli(["validate", "suite/evalpipe.yaml"], dir);
      assert.equal(out.code, 2, out.stderr);
      assert.equal(
        out.stderr,
        `evalpipe: Invalid config "suite/evalpipe.yaml" line ${
          scorers.split("\n").length + 4
        }: "gates.min_pass_rate" must be a mapping, not number 0.9; ${hint}\n`,
      );
    }
    // The gate as the hint writes it is the suite's.
    await Deno.writeTextFile(
      join(dir, "suite", "evalpipe.yaml"),
      `${head}${cases[0]![0]}gates: { faithfulness: { min_pass_rate: 0.9 } }\n`,
    );
    const out = await cli(["validate", "suite/evalpipe.yaml"], dir);
    assert.equal(out.code, 0, out.stderr);
  });
});

Deno.test("checkConfigText: a bar under gates: that its gate cannot take is not copied into the hint, which says what the bar takes", async () => {
  const head =
    "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\ngates:\n";
  const cases: Array<[string, string]> = [
    [
      '  min_pass_rate: "90%"\n',
      '"gates.min_pass_rate" must be a mapping, not string "90%"; a gate is per metric: gates: { exact_match: { min_pass_rate: N } }, N a number from 0 to 1',
    ],
    [
      "  pass_rate: high\n",
      '"gates.pass_rate" must be a mapping, not string "high"; a gate is per metric: gates: { exact_match: { min_pass_rate: N } }, N a number from 0 to 1',
    ],
    [
      "  min_mean: 90\n",
      '"gates.min_mean" must be a mapping, not number 90; a gate is per metric: gates: { exact_match: { min_mean: N } }, N a number from 0 to 1',
    ],
    [
      "  min_mean: .nan\n",
      '"gates.min_mean" must be a mapping, not number .nan; a gate is per metric: gates: { exact_match: { min_mean: N } }, N a number from 0 to 1',
    ],
    [
      "  min_mean: [0.9]\n",
      '"gates.min_mean" must be a mapping, not a list; a gate is per metric: gates: { exact_match: { min_mean: N } }, N a number from 0 to 1',
    ],
    [
      "  max_errors: 1.5\n",
      '"gates.max_errors" must be a mapping, not number 1.5; a gate is per metric: gates: { exact_match: { max_errors: N } }, N a whole number, 0 or more',
    ],
    [
      "  min_mean_lower_bound: 2\n",
      '"gates.min_mean_lower_bound" must be a mapping, not number 2; a gate is per metric: gates: { exact_match: { min_mean_lower_bound: N } }, N a number at most 1',
    ],
    [
      "  allow_unmeasured: 1\n",
      '"gates.allow_unmeasured" must be a mapping, not number 1; a gate is per metric: gates: { exact_match: { allow_unmeasured: N } }, N true or false',
    ],
    // A bar its gate takes is kept as written.
    [
      "  allow_unmeasured: true\n",
      '"gates.allow_unmeasured" must be a mapping, not boolean true; a gate is per metric: gates: { exact_match: { allow_unmeasured: true } }',
    ],
    [
      "  min_mean_lower_bound: -0.5\n",
      '"gates.min_mean_lower_bound" must be a mapping, not number -0.5; a gate is per metric: gates: { exact_match: { min_mean_lower_bound: -0.5 } }',
    ],
  ];
  for (const [gates, message] of cases) {
    const error = await configError(head + gates);
    assert.equal(
      error.message,
      `Invalid config "suite.yaml" line 5: ${message}`,
    );
  }
});

Deno.test("checkConfigText: promptfoo's http provider keys and Inspect's generate config on a target name evalpipe's key, or say there is none", async () => {
  const http =
    "dataset: d.jsonl\ntarget:\n  type: http\n  url: http://127.0.0.1:9/x\n";
  const openai = "dataset: d.jsonl\ntarget:\n  type: openai\n  model: m\n";
  const cases: Array<[string, string, string]> = [
    // Not promptfoo's transformResponse, which it is nearest to.
    [
      http,
      `transformRequest: "{ q: prompt }"`,
      'unknown key "target.transformRequest"; did you mean "body" (the request, with {{input}} and the case\'s fields as placeholders: promptfoo\'s {{prompt}} is {{input}} here; a function has no equivalent)?',
    ],
    [
      http,
      "queryParams: { q: x }",
      'unknown key "target.queryParams"; did you mean "url" (the query is written in it, ?q={{input}}, each placeholder URL-encoded)?',
    ],
    [
      http,
      "maxRetries: 3",
      'unknown key "target.maxRetries"; did you mean "retries" (retries of a call after its first attempt)?',
    ],
    [
      http,
      "useHttps: true",
      'unknown key "target.useHttps"; did you mean "url" (its scheme says it: https://)?',
    ],
    [
      http,
      "auth: { type: bearer, token: x }",
      'unknown key "target.auth"; did you mean "headers" (a key is sent in a header, { authorization: "Bearer ${TOKEN}" }, ${NAME} read from the environment)?',
    ],
    [
      http,
      "request: x",
      'unknown key "target.request"; promptfoo\'s raw request is written here as "method", "url", "headers" and "body"',
    ],
    [
      http,
      "validateStatus: 'status < 500'",
      'unknown key "target.validateStatus"; a reply that is not 2xx is a target error here, its status and body quoted, and there is no other check of the status',
    ],
    [
      http,
      "sessionParser: data.body.id",
      'unknown key "target.sessionParser"; each case is one call here: no session is kept between cases',
    ],
    [
      http,
      "config: { url: http://127.0.0.1:9/y }",
      'unknown key "target.config"; a promptfoo provider\'s "config:" keys stand in the target itself here: { type: http, url: …, body: … }',
    ],
    // Inspect's GenerateConfig, and promptfoo's openai provider.
    [
      openai,
      "top_k: 3",
      'unknown key "target.top_k"; did you mean "params" (a request parameter beyond temperature, max_tokens, seed, top_p and stop, sent as written: params: { top_k: … })?',
    ],
    [
      openai,
      "max_retries: 3",
      'unknown key "target.max_retries"; did you mean "retries" (retries of a call after its first attempt)?',
    ],
    [
      openai,
      "system_message: Be brief.",
      'unknown key "target.system_message"; did you mean "system" (the system message)?',
    ],
    [
      openai,
      "stop_seqs: [END]",
      'unknown key "target.stop_seqs"; did you mean "stop" (the stop sequences)?',
    ],
    [
      openai,
      "extra_body: { a: 1 }",
      'unknown key "target.extra_body"; did you mean "params" (other fields of the request\'s body, sent as written)?',
    ],
    [
      openai,
      "apiKey: sk-x",
      'unknown key "target.apiKey"; did you mean "api_key_env" (the name of the environment variable that holds the key: a key is never written in a config)?',
    ],
    // The OpenAI SDK's words.
    [
      openai,
      "api_key: sk-x",
      'unknown key "target.api_key"; did you mean "api_key_env" (the name of the environment variable that holds the key: a key is never written in a config)?',
    ],
    [
      openai,
      "max_completion_tokens: 256",
      'unknown key "target.max_completion_tokens"; did you mean "params" (OpenAI\'s newer name for max_tokens, which its reasoning models require: sent as written under params: { max_completion_tokens: … }, where the target\'s max_tokens sends max_tokens)?',
    ],
    [
      openai,
      "max_connections: 4",
      'unknown key "target.max_connections"; Inspect\'s max_connections is "concurrency" here, at the top of the suite',
    ],
  ];
  for (const [head, line, message] of cases) {
    const error = await configError(
      `${head}  ${line}\nscorers: [{ type: exact_match }]\n`,
    );
    assert.equal(
      error.message,
      `Invalid config "suite.yaml" line 5: ${message}`,
      line,
    );
  }
  // The suggestions work as said.
  await checkConfigText(
    `${http}  url: "http://127.0.0.1:9/x?q={{input}}"\n  retries: 3\n  headers: { authorization: "Bearer \${TOKEN}" }\n  body: { q: "{{input}}" }\nscorers: [{ type: exact_match }]\n`
      .replace(
        "  url: http://127.0.0.1:9/x\n",
        "",
      ),
    "suite.yaml",
  );
  await checkConfigText(
    `${openai}  params: { top_k: 3, a: 1 }\n  retries: 3\n  system: Be brief.\n  stop: [END]\n  api_key_env: KEY\nscorers: [{ type: exact_match }]\n`,
    "suite.yaml",
  );
});

Deno.test("checkConfigText: another tool's target key is hinted at a target's own level and in an llm judge's chat settings, not in a target's cost", async () => {
  const head = "dataset: d.jsonl\n";
  const cases: Array<[string, string]> = [
    // A judge takes the chat settings a target does: top_k is no top_p there
    // either.
    [
      "target: { type: replay }\nscorers: [{ type: llm_judge, model: m, rubric: r, top_k: 3 }]\n",
      'line 3: unknown key "scorers[0].top_k"; did you mean "params" (a request parameter beyond temperature, max_tokens, seed, top_p and stop, sent as written: params: { top_k: … })?',
    ],
    [
      "target: { type: replay }\nscorers: [{ type: llm_judge, model: m, rubric: r, apiKey: sk-x }]\n",
      'line 3: unknown key "scorers[0].apiKey"; did you mean "api_key_env" (the name of the environment variable that holds the key: a key is never written in a config)?',
    ],
    // A price table is no provider's config.
    [
      "target: { type: openai, model: m, cost: { input_per_1m: 1, output_per_1m: 1, config: 1 } }\nscorers: [{ type: exact_match }]\n",
      'line 2: unknown key "target.cost.config"',
    ],
    [
      "targets: { a: { type: openai, model: m, cost: { input_per_1m: 1, output_per_1m: 1, max_connections: 1 } } }\nscorers: [{ type: exact_match }]\n",
      'line 2: unknown key "targets.a.cost.max_connections"',
    ],
    [
      "targets: { a: { type: openai, model: m, max_connections: 1 } }\nscorers: [{ type: exact_match }]\n",
      'line 2: unknown key "targets.a.max_connections"; Inspect\'s max_connections is "concurrency" here, at the top of the suite',
    ],
  ];
  for (const [text, message] of cases) {
    const error = await configError(head + text);
    assert.equal(error.message, `Invalid config "suite.yaml" ${message}`);
  }
});

Deno.test("checkConfigText: a whole-number bar under gates: beyond a safe integer is not copied, as its gate refuses it", async () => {
  const error = await configError(
    "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\ngates:\n  max_errors: 1e21\n",
  );
  assert.equal(
    error.message,
    'Invalid config "suite.yaml" line 5: "gates.max_errors" must be a mapping, not number 1e+21; a gate is per metric: gates: { exact_match: { max_errors: N } }, N a whole number, 0 or more',
  );
  // The gate as written is refused: the hint must not have offered it.
  const refused = await configError(
    "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\ngates: { exact_match: { max_errors: 1e+21 } }\n",
  );
  assert.match(refused.message, /"gates\.exact_match\.max_errors" must be/);
});

Deno.test("cli run and validate say where a missing script is when it is there from the current folder, as EvalCore's commands name it", async () => {
  await withTempDir(async (dir) => {
    // An EvalCore suite run from its repository's root: its commands name
    // their scripts from there.
    await Deno.mkdir(join(dir, "examples", "rag"), { recursive: true });
    await Deno.writeTextFile(
      join(dir, "examples", "rag", "cases.jsonl"),
      '{"input":"a"}\n',
    );
    await Deno.writeTextFile(join(dir, "examples", "rag", "bot.sh"), "cat\n");
    await Deno.writeTextFile(
      join(dir, "examples", "rag", "grade.py"),
      "print('{\"score\": 1}')\n",
    );
    const here =
      `; it is there from the current folder, where EvalCore runs a suite's commands: write its path from the config's folder`;
    const cases: [string, string][] = [
      [
        "target: { type: subprocess, cmd: sh examples/rag/bot.sh }\nscorers: [{ type: exact_match }]",
        `line 2: the target "sh examples/rag/bot.sh" runs "examples/rag/bot.sh", which does not exist (paths resolve against the config's folder, "examples/rag")${here}, "bot.sh"`,
      ],
      [
        "target: { type: replay }\nscorers:\n  - { type: subprocess, cmd: python3 ./examples/rag/grade.py }",
        `line 4: scorer "python3 ./examples/rag/grade.py" runs "./examples/rag/grade.py", which does not exist (paths resolve against the config's folder, "examples/rag")${here}, "grade.py"`,
      ],
    ];
    for (const [rest, message] of cases) {
      await Deno.writeTextFile(
        join(dir, "examples", "rag", "s.yaml"),
        `dataset: cases.jsonl\n${rest}\n`,
      );
      for (const command of ["run", "validate"]) {
        const out = await cli([command, "examples/rag/s.yaml"], dir);
        assert.equal(out.code, 2, `${command}: ${out.stderr}`);
        assert.ok(out.stderr.includes(message), `${command}: ${out.stderr}`);
      }
    }
    // The config named by its absolute path, or a script outside its
    // folder: the path from the config's folder is still given.
    await Deno.mkdir(join(dir, "scripts"));
    await Deno.writeTextFile(join(dir, "scripts", "bot.sh"), "cat\n");
    for (
      const [config, cmd, from] of [
        [
          join(dir, "examples", "rag", "s.yaml"),
          "examples/rag/bot.sh",
          "bot.sh",
        ],
        ["examples/rag/s.yaml", "scripts/bot.sh", "../../scripts/bot.sh"],
      ]
    ) {
      await Deno.writeTextFile(
        join(dir, "examples", "rag", "s.yaml"),
        `dataset: cases.jsonl\ntarget: { type: subprocess, cmd: sh ${cmd} }\nscorers: [{ type: exact_match }]\n`,
      );
      const out = await cli(["validate", config!], dir);
      assert.equal(out.code, 2, out.stderr);
      assert.ok(out.stderr.includes(`${here}, "${from}"`), out.stderr);
    }
    // Run from the config's folder, the script is nowhere: nothing is added.
    const out = await cli(["validate", "s.yaml"], join(dir, "examples", "rag"));
    assert.equal(out.code, 2, out.stderr);
    assert.ok(!out.stderr.includes("current folder"), out.stderr);
  });
});
