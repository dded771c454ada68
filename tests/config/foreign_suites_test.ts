// Another tool's suite given to `validate` and `run`: the first problem's
// message says what evalpipe calls the thing at fault, through the real CLI.

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { fakeLlm, lastMessage, reply } from "../_fake_llm.ts";
import { withTempDir } from "../_proc.ts";

const README =
  'the README\'s "Coming from EvalCore or promptfoo" lists every word that differs';

// An EvalCore evals.yaml, in that tool's words; each step fixes the problem
// the one before was refused for, as a user following the messages would.
const EVALCORE = `targets:
  bot:
    type: shell
    cmd: sh bot.sh
datasets:
  - file: cases.jsonl
scorers:
  - type: contains
    value: policy
    case_sensitive: false
  - type: exact
run:
  gates:
    - type: pass_rate
      min: 0.9
`;

Deno.test("validate names what evalpipe calls each EvalCore word, one problem at a time", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      '{"id": "a", "input": "q", "expected": "policy 1"}\n',
    );
    await Deno.writeTextFile(`${dir}/bot.sh`, "echo policy 1\n");
    const steps: Array<[(yaml: string) => string, string]> = [
      [
        (y) => y,
        `line 6: unknown key "datasets[0].file"; this is an EvalCore suite: a dataset's "file" is its "path" here; ${README}`,
      ],
      [
        (y) => y.replace("- file:", "- path:"),
        `line 3: "targets.bot.type" is string "shell"; expected one of openai, http, subprocess, replay, trace; this is an EvalCore suite: EvalCore's "shell" target is "subprocess" here, with "stdin: text" so that its command reads the input text alone on stdin, as under EvalCore (without it, the case as JSON, {"input": …}); ${README}`,
      ],
      [
        (y) => y.replace("type: shell", "type: subprocess"),
        `line 10: unknown key "scorers[0].case_sensitive"; this is an EvalCore suite: "case_sensitive: false" is "ignore_case: true" here; ${README}`,
      ],
      [
        (y) => y.replace("case_sensitive: false", "ignore_case: true"),
        `line 11: "scorers[1].type" is string "exact"; expected one of subprocess, exact_match, `,
      ],
      [
        (y) => y.replace("type: exact\n", "type: exact_match\n"),
        `line 12: unknown key "run"; this is an EvalCore suite: EvalCore's "run:" keys stand at the top here`,
      ],
      [
        // Moved to the top as they are, EvalCore's gates are still a list:
        // nothing else here is EvalCore's, and the message said only that
        // "gates" must be a mapping.
        (y) =>
          y.replace("run:\n  gates:\n    - ", "gates:\n  - ").replace(
            "      min:",
            "    min:",
          ),
        `line 12: "gates" must be a mapping, not a list; this is an EvalCore suite: EvalCore's list of gates is a mapping by metric here: { type: pass_rate, min: 0.95 } is a gate on each metric, { contains: { min_pass_rate: 0.95 } } (EvalCore's counts the cases that pass every scorer), { type: mean_score, scorer: judge, min: 0.8 } is { judge: { min_mean: 0.8 } }, and "accuracy" and "macro_f1" are { classification: { min_accuracy: 0.8, min_macro_f1: 0.7 } }; ${README}`,
      ],
    ];
    let yaml = EVALCORE;
    for (const [edit, message] of steps) {
      yaml = edit(yaml);
      await Deno.writeTextFile(`${dir}/evals.yaml`, yaml);
      const out = await cli(["validate", "evals.yaml"], dir);
      assert.equal(out.code, 2, out.stderr);
      assert.ok(
        out.stderr.startsWith(
          `evalpipe: Invalid config "evals.yaml" ${message}`,
        ),
        out.stderr,
      );
    }
    // A type in EvalCore's words gets evalpipe's, not the nearest word.
    await Deno.writeTextFile(
      `${dir}/evals.yaml`,
      yaml.replace("type: exact_match\n", "type: exact\n"),
    );
    const exact = await cli(["validate", "evals.yaml"], dir);
    assert.ok(
      exact.stderr.endsWith(
        `; this is an EvalCore suite: EvalCore's "exact" scorer is "exact_match" here; ${README}\n`,
      ),
      exact.stderr,
    );
    assert.doesNotMatch(exact.stderr, /did you mean/);
    // With the gates in evalpipe's words, it runs.
    await Deno.writeTextFile(
      `${dir}/evals.yaml`,
      yaml.replace(
        /gates:\n[\s\S]*$/,
        "gates:\n  contains:\n    min_pass_rate: 0.9\n",
      ),
    );
    const run = await cli(["run", "evals.yaml"], dir);
    assert.equal(run.code, 0, run.stderr);
  });
});

Deno.test("run: an EvalCore shell target's script runs unchanged as a subprocess target with stdin: text, the input alone on stdin; the key is checked and suggested", async () => {
  await withTempDir(async (dir) => {
    // EvalCore writes the input's bytes and nothing more, and a script
    // reads them as its question.
    await Deno.writeTextFile(
      `${dir}/bot.py`,
      'import sys\nprint(f"[{sys.stdin.read()}]")\n',
    );
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      '{"input": "two\\nlines", "expected": "[two\\nlines]"}\n' +
        '{"input": [{"role": "user", "content": "Hi"}], "expected": "[[{\\"role\\":\\"user\\",\\"content\\":\\"Hi\\"}]]"}\n',
    );
    const suite = (target: string) =>
      `dataset: cases.jsonl\ntarget: { type: subprocess, cmd: python3 bot.py${target} }\nscorers: [{ type: exact_match }]\n`;
    await Deno.writeTextFile(`${dir}/text.yaml`, suite(", stdin: text"));
    const text = await cli(["run", "text.yaml"], dir);
    assert.equal(text.code, 0, text.stderr);
    assert.deepEqual(
      text.stdout.trim().split("\n").map((l) => JSON.parse(l).value),
      [1, 1],
    );
    // The default, and stdin: json, give the case as JSON.
    for (const target of ["", ", stdin: json"]) {
      await Deno.writeTextFile(`${dir}/json.yaml`, suite(target));
      const json = await cli(["run", "json.yaml"], dir);
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual(
        json.stdout.trim().split("\n").map((l) => JSON.parse(l).value),
        [0, 0],
      );
    }
    await Deno.writeTextFile(`${dir}/typo.yaml`, suite(", stdn: text"));
    const typo = await cli(["validate", "typo.yaml"], dir);
    assert.equal(typo.code, 2);
    assert.match(
      typo.stderr,
      /unknown key "target\.stdn"; did you mean "stdin"\?/,
    );
    await Deno.writeTextFile(`${dir}/raw.yaml`, suite(", stdin: raw"));
    const raw = await cli(["validate", "raw.yaml"], dir);
    assert.equal(raw.code, 2);
    assert.match(
      raw.stderr,
      /"target\.stdin" is string "raw"; expected one of json, text/,
    );
  });
});

Deno.test("run says a promptfoo config is one, and how its parts map; evalpipe's own typos get no such word", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/promptfooconfig.yaml`,
      'description: demo\nprompts: ["Answer: {{question}}"]\nproviders: [openai:gpt-4o-mini]\ntests:\n  - vars: { question: "2+2?" }\n    assert: [{ type: contains, value: "4" }]\n',
    );
    const out = await cli(["run", "promptfooconfig.yaml"], dir);
    assert.equal(out.code, 2);
    assert.match(
      out.stderr,
      /^evalpipe: Invalid config "promptfooconfig\.yaml" line 1: unknown key "description"; this is a promptfoo config: an evalpipe suite has a "dataset" .*"Coming from EvalCore or promptfoo" shows how each maps\n$/,
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: contains, value: x, ignore_cas: true }]\n",
    );
    const own = await cli(["run", "suite.yaml"], dir);
    assert.match(own.stderr, /did you mean "ignore_case"\?\n$/);
    assert.doesNotMatch(own.stderr, /EvalCore|promptfoo/);
    // A scorer type that names a method of every object ("valueOf") was
    // taken for EvalCore's: "type in EVALCORE_SCORERS" walked the prototype.
    for (const type of ["valueOf", "constructor", "__proto__"]) {
      await Deno.writeTextFile(
        `${dir}/suite.yaml`,
        `dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: ${type} }]\n`,
      );
      const named = await cli(["validate", "suite.yaml"], dir);
      assert.equal(named.code, 2);
      assert.match(named.stderr, /"scorers\[0\]\.type" is string/, type);
      assert.doesNotMatch(named.stderr, /EvalCore|promptfoo/, type);
    }
  });
});

Deno.test("run: an EvalCore judge's rubric, ported as the README says, is a criterion the judge sees with the case and the answer", async () => {
  // EvalCore's rubric and promptfoo's llm-rubric name no field: each tool
  // shows the judge the case and the output beside it. Sent alone, it
  // asked the judge to grade an answer it was never given.
  await using server = fakeLlm({
    handler: () => reply.ok('{"score": 0.9, "reason": "grounded"}'),
  });
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      '{"id": "late-refund", "input": "Where is my refund?", "expected": "30 days", "context": ["Policy 4.2: refunds take 30 business days."]}\n',
    );
    await Deno.writeTextFile(
      `${dir}/evals.yaml`,
      `datasets:
  - path: cases.jsonl
targets:
  bot:
    type: subprocess
    stdin: text
    cmd: echo "Within 30 business days, per policy 4.2."
scorers:
  - type: llm_judge
    base_url: ${server.baseUrl}
    model: judge
    rubric: "Is every claim in the answer supported by the policy context?"
    pass_threshold: 0.7
`,
    );
    const run = await cli(["run", "evals.yaml", "--cache", "off"], dir);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(JSON.parse(run.stdout).value, 0.9);
    const prompt = lastMessage(server.requests[0]!);
    for (
      const part of [
        "Is every claim in the answer supported by the policy context?",
        "Where is my refund?",
        "Within 30 business days, per policy 4.2.",
        "30 days",
        "Policy 4.2: refunds take 30 business days.",
      ]
    ) assert.ok(prompt.includes(part), `${part} not in ${prompt}`);
  });
});

// A suite as an Inspect or Braintrust user first writes it, in those tools'
// words; each step fixes what the one before was refused for.
const INSPECT_BRAINTRUST = `data: cases.jsonl
solver: { type: subprocess, cmd: sh bot.sh }
scorers:
  - type: includes
  - type: NumericDiff
epochs: { n: 3, reducer: pass_at_k }
experiment_name: first try
`;

Deno.test("validate names evalpipe's word for Inspect's and Braintrust's keys and scorers, one problem at a time", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      '{"input": "2+2?", "expected": ["4", "four"]}\n',
    );
    await Deno.writeTextFile(`${dir}/bot.sh`, "cat > /dev/null; echo 4\n");
    const steps: Array<[(yaml: string) => string, string]> = [
      [
        (y) => y,
        'line 1: unknown key "data"; did you mean "dataset" (the file of cases)?',
      ],
      [
        (y) => y.replace("data:", "dataset:"),
        `line 4: "scorers[0].type" is string "includes"; expected one of `,
      ],
      [
        (y) => y.replace("type: includes", "type: contains\n    mode: any"),
        `line 6: "scorers[1].type" is string "NumericDiff"; expected one of `,
      ],
      [
        (y) => y.replace("NumericDiff", "numeric"),
        'line 7: unknown key "epochs.reducer"; did you mean "require" (when a case passes over its epochs: all, majority or any (Inspect\'s pass_at_k); values are averaged per example, as Inspect\'s mean)?',
      ],
      [
        (y) => y.replace("reducer: pass_at_k", "require: any"),
        'line 2: unknown key "solver"; did you mean "target" (the system under test)?',
      ],
      [
        (y) => y.replace("solver:", "target:"),
        'line 8: unknown key "experiment_name"; a suite names no experiment: --record FILE keeps a run, --save-baseline NAME keeps it to compare later runs with (--baseline NAME), and "evalpipe diff A B" compares two records',
      ],
    ];
    const ends = new Map([
      [
        1,
        '; Inspect\'s includes() is "contains" here, with ignore_case: true (its default there) and mode: any when "expected" lists several answers\n',
      ],
      [
        2,
        '; autoevals\' NumericDiff is "numeric" here: 1 within abs_tol or rel_tol of "expected", else 0\n',
      ],
    ]);
    let yaml = INSPECT_BRAINTRUST;
    for (const [i, [edit, message]] of steps.entries()) {
      yaml = edit(yaml);
      await Deno.writeTextFile(`${dir}/suite.yaml`, yaml);
      const out = await cli(["validate", "suite.yaml"], dir);
      assert.equal(out.code, 2, out.stderr);
      const prefix = `evalpipe: Invalid config "suite.yaml" ${message}`;
      const end = ends.get(i);
      if (end === undefined) assert.equal(out.stderr, `${prefix}\n`);
      else {
        assert.ok(out.stderr.startsWith(prefix), out.stderr);
        assert.ok(out.stderr.endsWith(end), out.stderr);
        assert.doesNotMatch(out.stderr, /did you mean/);
      }
    }
    // In evalpipe's words, it runs: "4" is one of the expected answers
    // (numeric does not apply to a list of them).
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      yaml.replace("experiment_name: first try\n", ""),
    );
    const run = await cli(["run", "suite.yaml"], dir);
    assert.equal(run.code, 0, run.stderr);
    const scores = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(
      scores.map((s) => [s.metric, s.value]),
      [
        ["contains", 1],
        ["numeric", null],
        ["contains", 1],
        ["numeric", null],
        ["contains", 1],
        ["numeric", null],
      ],
    );
  });
});

Deno.test("validate: Inspect's and autoevals' scorer names, written any way, get evalpipe's; its own typos still get the nearest word", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/cases.jsonl`, '{"input": "q"}\n');
    const cases: Array<[string, string]> = [
      [
        "model_graded_fact",
        '; Inspect\'s model_graded_fact() is "correctness" here',
      ],
      ["ModelGradedQA", '; Inspect\'s model_graded_qa() is "llm_judge" here'],
      ["JSONDiff", '; autoevals\' JSONDiff is "json_match" here'],
      ["choice", "; Inspect's choice() has no built-in here"],
      ["Levenshtein", '; did you mean "levenshtein"?'],
      ["exact_mach", '; did you mean "exact_match"?'],
    ];
    for (const [type, hint] of cases) {
      await Deno.writeTextFile(
        `${dir}/suite.yaml`,
        `dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: ${type} }]\n`,
      );
      const out = await cli(["validate", "suite.yaml"], dir);
      assert.equal(out.code, 2, out.stderr);
      assert.ok(out.stderr.includes(hint), `${type}: ${out.stderr}`);
    }
  });
});

Deno.test("validate: promptfoo's assert types, kept in a suite of evalpipe's shape, get evalpipe's scorer and how to set it", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/cases.jsonl`, '{"input": "q"}\n');
    const cases: Array<[string, string]> = [
      ["equals", '; promptfoo\'s "equals" assert is "exact_match" here'],
      [
        "icontains",
        '; promptfoo\'s "icontains" assert is "contains" here, with ignore_case: true',
      ],
      [
        "contains-any",
        '; promptfoo\'s "contains-any" assert is "contains" here, with mode: any',
      ],
      ["is-json", '; promptfoo\'s "is-json" assert is "json" here'],
      [
        "llm-rubric",
        '; promptfoo\'s "llm-rubric" assert is "llm_judge" here, with a judge "model" and its value as the "rubric"',
      ],
      // Its model and its bar: promptfoo's 0.75 kept unsaid would pass at 0.5.
      [
        "similar",
        '; promptfoo\'s "similar" assert is "semantic_similarity" here, with an embedding "model", its value as the case\'s "expected", and its "threshold": 0.5 unless set, where promptfoo\'s is 0.75',
      ],
      [
        "javascript",
        '; promptfoo\'s "javascript" assert is a "subprocess" scorer here',
      ],
      [
        "python",
        '; promptfoo\'s "python" assert is a "subprocess" scorer here',
      ],
      // A scorer function in a .ts file, as a library user writes one.
      ...["typescript", "ts", "function", "module"].map((
        type,
      ): [string, string] => [
        type,
        '; a suite runs a TypeScript scorer as a "subprocess" scorer: a script (cmd: deno run grade.ts) reads the case as JSON on stdin and prints {"score": …}, as the README\'s "Writing a scorer in any language" shows; a function of a unit is functionScorer in a script over mod.ts',
      ]),
      // evalpipe's own words and near misses keep their answers.
      ["containz", '; did you mean "contains"?'],
      ["starts-with", '; did you mean "starts_with"?'],
    ];
    for (const [type, hint] of cases) {
      await Deno.writeTextFile(
        `${dir}/suite.yaml`,
        `dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: ${type} }]\n`,
      );
      const out = await cli(["validate", "suite.yaml"], dir);
      assert.equal(out.code, 2, out.stderr);
      assert.ok(out.stderr.includes(hint), `${type}: ${out.stderr}`);
    }
  });
});
