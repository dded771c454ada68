/**
 * What a command runs, read without running it (`src/process/command.ts`),
 * and what follows for the metric name: commands whose words are no file
 * names (an inline `python3 -c "..."` program, `x.py/y`) simply run, and an
 * unnamed scorer that names no script asks for a name.
 */

import assert from "node:assert/strict";
import { withTempDir } from "../_proc.ts";
import { cliWithStdin, type Outcome } from "../_cli.ts";
import {
  defaultScorerName,
  missingScript,
  scriptName,
  scriptOf,
} from "../../src/process/command.ts";
import {
  subprocessScorer,
  subprocessScorerVersion,
} from "../../src/scorers/subprocess_scorer.ts";
import { buildScorers, ConfigError, loadConfig } from "../../src/config/mod.ts";

/** An inline Python scorer whose program is one word of more than 255 bytes. */
const INLINE = `python3 -c "import json, sys; case = json.load(sys.stdin); ${
  "x = 1; ".repeat(40)
}print(json.dumps({'score': 1.0 if case['output'] == 'a' else 0.0}))"`;

const GRADE = 'import json, sys\nprint(json.dumps({"score": 1}))\n';

/** Runs evalpipe with `stdin`, in `cwd`. */
function evalpipe(args: string[], cwd: string, stdin = ""): Promise<Outcome> {
  return cliWithStdin(args, cwd, stdin);
}

Deno.test("scriptOf passes over words that cannot name a file: too long, through a file, looping, with a NUL", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/x.py`, GRADE);
    await Deno.symlink("loop", `${dir}/loop`);
    const long = "y".repeat(300);
    for (
      const cmd of [
        INLINE,
        `python3 ${long}`,
        `./${long}`,
        "python3 x.py/y",
        "./x.py/y",
        "python3 loop",
        `python3 "a\0b"`,
      ]
    ) {
      assert.equal(scriptOf(cmd, dir), undefined, cmd);
      assert.equal(scriptName(cmd, dir), undefined, cmd);
    }
    // A real script later in the command is still found.
    assert.equal(scriptOf(`python3 x.py/y ${long} x.py`, dir), "x.py");
    assert.equal(scriptName(`python3 x.py/y ${long} x.py`, dir), "x");
  });
});

Deno.test("scriptName is the script's file name without extension; defaultScorerName falls back to the program", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/scorers`);
    await Deno.writeTextFile(`${dir}/scorers/faithfulness.py`, GRADE);
    assert.equal(
      scriptName("python3 scorers/faithfulness.py", dir),
      "faithfulness",
    );
    assert.equal(
      defaultScorerName("python3 scorers/faithfulness.py", dir),
      "faithfulness",
    );
    assert.equal(scriptName(INLINE, dir), undefined);
    // The library's own default, for a scorer built in code without a name.
    assert.equal(defaultScorerName(INLINE, dir), "python3");
    assert.equal(subprocessScorer(INLINE, { cwd: dir }).name, "python3");
  });
});

Deno.test("subprocessScorerVersion stays what it was for ordinary commands", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/grade.py`, GRADE);
    // Pinned from the versions evalpipe wrote before the spawner's rework:
    // stored records compare by them.
    assert.equal(
      subprocessScorerVersion("grade", "python3 grade.py", dir),
      "grade@ee3d9a85",
    );
    assert.equal(
      subprocessScorerVersion("grade", "python3 -B grade.py --flag", dir),
      "grade@f8a74b91",
    );
    assert.equal(
      subprocessScorerVersion("t", `cat >/dev/null; echo '{"score": 1}'`, dir),
      "t@545331fb",
    );
    assert.equal(
      subprocessScorer("python3 grade.py", { cwd: dir }).version,
      "grade@ee3d9a85",
    );
  });
});

Deno.test("evalpipe run runs a named inline scorer and a target with a word longer than a file name", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      '{"input": "q", "output": "a"}\n{"input": "r", "output": "b"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: data.jsonl
target:
  type: subprocess
  cmd: ${JSON.stringify(`cat >/dev/null; echo a # ${"z".repeat(300)}`)}
scorers:
  - type: subprocess
    name: inline
    cmd: ${JSON.stringify(INLINE)}
  - type: subprocess
    name: odd
    cmd: ${JSON.stringify(`cat >/dev/null; echo '{"score": 1}' # x.py/y`)}
`,
    );
    await Deno.writeTextFile(`${dir}/x.py`, GRADE);
    // The record fingerprints the target's and the scorers' commands too.
    const { code, stdout, stderr } = await evalpipe(
      ["run", "suite.yaml", "--record", "record.json"],
      dir,
    );
    assert.equal(code, 0, stderr);
    assert.doesNotMatch(stderr, /^\s+at /m, "no stack trace");
    const scores = stdout.trim().split("\n").map((line) => JSON.parse(line));
    assert.deepEqual(
      scores.map((s) => [s.metric, s.status, s.value]),
      [
        ["inline", "scored", 1],
        ["odd", "scored", 1],
        ["inline", "scored", 1],
        ["odd", "scored", 1],
      ],
    );
  });
});

Deno.test("buildScorers asks for the name of an unnamed scorer whose command names no script", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/grade.py`, GRADE);
    const file = `${dir}/suite.yaml`;
    await Deno.writeTextFile(
      file,
      `dataset: data.jsonl
target: { type: replay }
scorers:
  - type: exact_match
  - type: subprocess
    cmd: python3 grade.py
  - type: subprocess
    cmd: ${JSON.stringify(INLINE)}
`,
    );
    const config = await loadConfig(file);
    await assert.rejects(
      buildScorers(config, file, { cwd: dir }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(error.file, file);
        assert.equal(error.line, 7);
        assert.match(
          error.message,
          /^Invalid config ".*suite\.yaml" line 7: scorer "python3 -c \\"import json.*…" names no script file to take a metric name from; give it a "name"$/,
        );
        return true;
      },
    );
    // Named, it builds, and the script of the other still names it.
    await Deno.writeTextFile(
      file,
      (await Deno.readTextFile(file)).replace(
        `    cmd: ${JSON.stringify(INLINE)}`,
        `    cmd: ${JSON.stringify(INLINE)}\n    name: inline`,
      ),
    );
    const scorers = await buildScorers(await loadConfig(file), file, {
      cwd: dir,
    });
    assert.deepEqual(scorers.map((s) => s.name), [
      "exact_match",
      "grade",
      "inline",
    ]);
  });
});

Deno.test("evalpipe run stops with a config error naming the line of an unnamed inline scorer", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/data.jsonl`, '{"input": "q"}\n');
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: data.jsonl
target: { type: replay }
scorers:
  - type: subprocess
    cmd: ${JSON.stringify(INLINE)}
`,
    );
    const { code, stdout, stderr } = await evalpipe(["run", "suite.yaml"], dir);
    assert.equal(code, 2, stderr);
    assert.equal(stdout, "");
    assert.match(
      stderr,
      /Invalid config "suite\.yaml" line 4: scorer "python3 -c .*" names no script file to take a metric name from; give it a "name"/,
    );
    assert.doesNotMatch(stderr, /^\s+at /m, "no stack trace");
  });
});

Deno.test("evalpipe score asks for --name for a scorer whose command names no script", async () => {
  await withTempDir(async (dir) => {
    const units = '{"input": "q", "output": "a"}\n';
    const unnamed = await evalpipe(["score", "--scorer", INLINE], dir, units);
    assert.equal(unnamed.code, 2);
    assert.equal(unnamed.stdout, "");
    assert.match(
      unnamed.stderr,
      /--scorer "python3 -c .*…" names no script file to take a metric name from: give it a --name/,
    );
    assert.doesNotMatch(unnamed.stderr, /^\s+at /m, "no stack trace");
    const named = await evalpipe(
      ["score", "--scorer", INLINE, "--name", "inline"],
      dir,
      units,
    );
    assert.equal(named.code, 0, named.stderr);
    const score = JSON.parse(named.stdout);
    assert.deepEqual([score.metric, score.status, score.value], [
      "inline",
      "scored",
      1,
    ]);
  });
});

Deno.test("evalpipe score names a --scorer script that does not exist, before any unit, named or not", async () => {
  await withTempDir(async (dir) => {
    const units = '{"input": "q", "output": "a"}\n';
    for (
      const args of [
        ["--scorer", "python3 scorers/typo.py"],
        ["--scorer", "python3 scorers/typo.py", "--name", "m"],
        ["--scorer", "./typo.sh", "--persistent", "--name", "m"],
      ]
    ) {
      const out = await evalpipe(["score", ...args], dir, units);
      assert.equal(out.code, 2, out.stderr);
      assert.equal(out.stdout, "", "no Score: nothing was run");
      assert.match(
        out.stderr,
        /^evalpipe: --scorer "[^"]+" runs "(scorers\/typo\.py|\.\/typo\.sh)", which does not exist \(paths resolve against the current folder\)\n$/,
      );
    }
  });
});

Deno.test("a command's leading ~ is the home folder, as sh reads it: its script exists, names the metric and runs", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/home/evals`, { recursive: true });
    await Deno.writeTextFile(`${dir}/home/evals/grade.py`, GRADE);
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: data.jsonl\ntarget: { type: replay }\nscorers:\n  - type: subprocess\n    cmd: python3 ~/evals/grade.py\n",
    );
    const home = Deno.env.get("HOME");
    Deno.env.set("HOME", `${dir}/home`);
    try {
      assert.equal(
        scriptOf("python3 ~/evals/grade.py", dir),
        `${dir}/home/evals/grade.py`,
      );
      // Quoted, or inside a word, it is no home folder (sh leaves it too).
      assert.equal(scriptOf('python3 "~/evals/grade.py"', dir), undefined);
      assert.equal(scriptOf("python3 x~/evals/grade.py", dir), undefined);
      const file = `${dir}/suite.yaml`;
      const scorers = await buildScorers(await loadConfig(file), file, {
        cwd: dir,
      });
      assert.deepEqual(scorers.map((s) => s.name), ["grade"]);
      const score = await scorers[0]!.score(
        { example_id: "d#1", unit_id: "d#1", input: "q", output: "a" },
        {},
      );
      assert.ok(!("scores" in score));
      assert.equal(score.status, "scored", score.reason);
      assert.equal(score.value, 1);
      await scorers[0]!.close?.();
    } finally {
      if (home === undefined) Deno.env.delete("HOME");
      else Deno.env.set("HOME", home);
    }
  });
});

Deno.test("missingScript leaves a ~ it cannot read to the shell: ~user, or HOME not readable", async () => {
  assert.equal(missingScript("python3 ~nosuchuser/grade.py", "/"), undefined);
  assert.equal(missingScript("~nosuchuser/grade.sh", "/"), undefined);
  // A script over mod.ts that may neither read HOME nor start sh: sh still
  // finds the file.
  const module = new URL("../../src/process/command.ts", import.meta.url).href;
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/check.ts`,
      `import { missingScript } from "${module}";\n` +
        `console.log(String(missingScript("python3 ~/evals/grade.py", "/")));\n`,
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", "--allow-read", `${dir}/check.ts`],
      stdout: "piped",
      stderr: "inherit",
    }).output();
    assert.equal(new TextDecoder().decode(out.stdout).trim(), "undefined");
  });
});

Deno.test("a ~ command's scorer, target and suite are refused, saying to allow HOME, when a script may not read it: no shell is asked", async () => {
  const root = new URL("../../", import.meta.url).pathname;
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/home/evals`, { recursive: true });
    await Deno.writeTextFile(`${dir}/home/evals/grade.py`, GRADE);
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n  - type: subprocess\n    cmd: python3 ~/evals/grade.py\n",
    );
    await Deno.writeTextFile(`${dir}/d.jsonl`, '{"input":"q","output":"a"}\n');
    await Deno.writeTextFile(
      `${dir}/names.ts`,
      `import { persistentScorer, planSuite, subprocessScorer, subprocessTarget } from "${root}mod.ts";
const cmd = "python3 ~/evals/grade.py";
const cwd = Deno.args[0]!;
const said = [];
for (const build of [
  () => subprocessScorer(cmd, { cwd }).name,
  () => persistentScorer(cmd, { cwd }).name,
  () => typeof subprocessTarget(cmd, { cwd }).call,
  async () => (await planSuite(cwd + "/s.yaml")).scorers.map((s) => s.name).join(),
]) {
  try {
    said.push(await build());
  } catch (error) {
    said.push((error as Error).message);
  }
}
console.log(JSON.stringify(said.map(String)));
`,
    );
    // Deno's own cache is found from HOME too: it stays where it is.
    const info = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json"],
      stdout: "piped",
    }).output();
    const denoDir = JSON.parse(new TextDecoder().decode(info.stdout)).denoDir;
    const said = async (permissions: string[]) => {
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--no-prompt",
          "--config",
          `${root}deno.json`,
          ...permissions,
          `${dir}/names.ts`,
          dir,
        ],
        env: { HOME: `${dir}/home`, DENO_DIR: denoDir },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const text = new TextDecoder();
      assert.equal(out.code, 0, text.decode(out.stderr));
      return JSON.parse(text.decode(out.stdout)) as string[];
    };
    const withEnv = await said(["--allow-read", "--allow-run", "--allow-env"]);
    assert.equal(withEnv[0], "grade");
    assert.equal(withEnv[1], "grade");
    assert.deepEqual(withEnv.slice(2), ["function", "grade"]);
    // Without it, sh was asked for HOME (a shell spawned to read the
    // environment around the permissions): now each says what to allow.
    const without = await said(["--allow-read", "--allow-run"]);
    for (const message of without) {
      assert.match(
        message,
        /runs "~\/evals\/grade\.py", but this process may not read HOME to find it: allow it \(--allow-env=HOME\) or write the path without ~/,
      );
    }
    assert.match(without[0]!, /^subprocessScorer's command/);
    assert.match(without[2]!, /^subprocessTarget's command/);
    assert.match(
      without[3]!,
      /s\.yaml" line 4: scorer "python3 ~\/evals\/grade\.py" runs/,
    );
  });
});
