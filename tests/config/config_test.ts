import assert from "node:assert/strict";
import { join } from "node:path";
import { configError } from "./_config_error.ts";
import { cli } from "../_cli.ts";

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
