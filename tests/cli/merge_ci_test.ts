// `merge` is the command that gates a sharded run in CI, so under GitHub
// Actions it says what `run` says there: the step summary and the
// annotations. `report` renders a record and gates nothing: it writes
// neither (the run or merge that made the record did).

import assert from "node:assert/strict";
import { CLI, cli, mergeShards, recordShards } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

async function writeSuite(dir: string): Promise<void> {
  const rows = Array.from({ length: 8 }, (_, i) =>
    JSON.stringify({
      id: `c${i}`,
      input: `q${i}`,
      output: i % 2 === 0 ? "yes" : "no",
      expected: "yes",
    }));
  await Deno.writeTextFile(`${dir}/cases.jsonl`, rows.join("\n") + "\n");
  await Deno.writeTextFile(
    `${dir}/suite.yaml`,
    "dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\ngates: { exact_match: { min_pass_rate: 0.9 } }\n",
  );
}

/** The suite, run in two shards with their records s1.json and s2.json. */
async function writeShards(dir: string): Promise<void> {
  await writeSuite(dir);
  await recordShards(dir, "suite.yaml");
}

Deno.test("merge under GitHub Actions appends the merged run's Markdown to the step summary and annotates its failed gates, as run does; report does neither", async () => {
  await withTempDir(async (dir) => {
    await writeShards(dir);
    const github = {
      GITHUB_ACTIONS: "true",
      GITHUB_STEP_SUMMARY: `${dir}/step.md`,
    };
    const merged = await cli(
      ["merge", "s1.json", "s2.json", "--record", "m.json"],
      dir,
      github,
    );
    assert.equal(merged.code, 1, merged.stderr);
    assert.match(
      merged.stderr,
      /^::error title=evalpipe gate failed%3A exact_match::exact_match: pass rate .* < min_pass_rate 0\.9$/m,
    );
    // The step summary is the merged record's Markdown, as report writes it.
    const markdown = await cli(
      ["report", "m.json", "--markdown", "m.md"],
      dir,
      { GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: `${dir}/report_step.md` },
    );
    assert.equal(markdown.code, 0, markdown.stderr);
    assert.equal(
      await Deno.readTextFile(`${dir}/step.md`),
      await Deno.readTextFile(`${dir}/m.md`),
    );
    // report gates nothing: no annotation, no step summary of its own.
    assert.doesNotMatch(markdown.stderr, /^::/m);
    await assert.rejects(
      Deno.stat(`${dir}/report_step.md`),
      Deno.errors.NotFound,
    );
    // --no-annotations keeps the workflow commands off, as run's does.
    const quiet = await cli(
      ["merge", "s1.json", "s2.json", "--no-annotations"],
      dir,
      { ...github, GITHUB_STEP_SUMMARY: `${dir}/step2.md` },
    );
    assert.equal(quiet.code, 1, quiet.stderr);
    assert.doesNotMatch(quiet.stderr, /^::/m);
  });
});

Deno.test("merge under GitHub Actions appends the merged run's Markdown to the step summary without --record too, as run does", async () => {
  await withTempDir(async (dir) => {
    await writeShards(dir);
    // Before, merge needed --record for it, while run writes the step
    // summary from a record of its own: a merge job showed nothing.
    const merged = await cli(["merge", "s1.json", "s2.json"], dir, {
      GITHUB_ACTIONS: "true",
      GITHUB_STEP_SUMMARY: `${dir}/step.md`,
    });
    assert.equal(merged.code, 1, merged.stderr);
    const step = await Deno.readTextFile(`${dir}/step.md`);
    assert.match(step, /^## evalpipe: suite\.yaml$/m);
    assert.match(step, /❌ 1 gate failed · 8 units, 4 failing/);
    // No record was asked for: the step summary says how to keep one.
    assert.match(step, /Keep the run's record \(`--record run\.json`\)/);
    assert.deepEqual(
      (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort(),
      ["cases.jsonl", "s1.json", "s2.json", "step.md", "suite.yaml"],
    );
  });
});

Deno.test("run and merge count one Score in the singular", async () => {
  await withTempDir(async (dir) => {
    // Before: "1 scores" and "merged 1 shard: 1 scores".
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      '{"id":"c0","input":"q","output":"yes","expected":"yes"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    const run = await cli(
      ["run", "suite.yaml", "--shard", "1/1", "--record", "s1.json"],
      dir,
    );
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /^1 score$/m);
    const merged = await cli(["merge", "s1.json"], dir);
    assert.equal(merged.code, 0, merged.stderr);
    assert.match(merged.stderr, /^merged 1 shard: 1 score$/m);
  });
});

Deno.test("under GitHub Actions a sharded run's errors are annotated once, by merge, counted over the whole run; a shard prints no workflow command", async () => {
  await withTempDir(async (dir) => {
    await writeSuite(dir);
    // A scorer that fails on every case: each shard holds some of its errors.
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }, { type: subprocess, cmd: 'cat > /dev/null; exit 3', name: broken }]\ngates: { broken: { allow_unmeasured: true } }\n",
    );
    const github = {
      GITHUB_ACTIONS: "true",
      GITHUB_STEP_SUMMARY: `${dir}/step.md`,
    };
    for (const k of [1, 2]) {
      // Before, each shard printed a ::warning for its half of the errors
      // and merge the same again for all of them: three on the pull
      // request for one broken scorer, two of them with partial counts.
      for (const flags of [[], ["--annotations"]]) {
        const shard = await cli(
          ["run", "suite.yaml", "--shard", `${k}/2`, "--record", `s${k}.json`]
            .concat(flags),
          dir,
          github,
        );
        assert.equal(shard.code, 0, shard.stderr);
        assert.match(shard.stderr, /^broken .* [1-8] +0 +0 +0$/m);
        assert.doesNotMatch(shard.stderr, /^::/m);
      }
    }
    const merged = await cli(["merge", "s1.json", "s2.json"], dir, github);
    assert.equal(merged.code, 0, merged.stderr);
    const commands = merged.stderr.split("\n").filter((l) =>
      l.startsWith("::")
    );
    assert.deepEqual(commands.length, 1, merged.stderr);
    assert.match(
      commands[0]!,
      /^::warning title=evalpipe%3A broken::8 error Scores \(first, cases\.jsonl#c\d: scorer error: /,
    );
  });
});

Deno.test("a merge under GitHub Actions that fails after writing the record behind the step summary removes it", async () => {
  await withTempDir(async (dir) => {
    await writeShards(dir);
    await Deno.mkdir(`${dir}/tmp`);
    // The baseline's folder cannot be made (in /proc): merge fails once the
    // temporary record (no --record given) is written. Before, it stayed in
    // TMPDIR.
    const merged = await cli(
      [
        "merge",
        "s1.json",
        "s2.json",
        "--save-baseline",
        "/proc/evalpipe-none/b.json",
      ],
      dir,
      {
        GITHUB_ACTIONS: "true",
        GITHUB_STEP_SUMMARY: `${dir}/step.md`,
        TMPDIR: `${dir}/tmp`,
      },
    );
    assert.equal(merged.code, 2, merged.stderr);
    assert.match(
      merged.stderr,
      /Cannot write baseline "\/proc\/evalpipe-none\/b\.json"/,
    );
    assert.deepEqual(await Array.fromAsync(Deno.readDir(`${dir}/tmp`)), []);
  });
});

Deno.test("merge annotates every shard whose budget ran out when their sum is not known, as it says each on stderr", async () => {
  await withTempDir(async (dir) => {
    await writeSuite(dir);
    for (const k of [1, 2, 3]) {
      const shard = await cli(
        ["run", "suite.yaml", "--shard", `${k}/3`, "--out", `s${k}.ndjson`],
        dir,
      );
      assert.equal(shard.code, 0, shard.stderr);
    }
    // Shards 1 and 2 refused calls; shard 3's sidecar is an older
    // evalpipe's, without a budget, so merge cannot sum them and names
    // each shard that ran out.
    const spent = { limit_usd: 1, spent_usd: 1.002, refused: 2 };
    for (const k of [1, 2, 3]) {
      const path = `${dir}/s${k}.ndjson.meta.json`;
      const meta = JSON.parse(await Deno.readTextFile(path));
      if (k < 3) meta.budget = spent;
      else delete meta.budget;
      await Deno.writeTextFile(path, JSON.stringify(meta));
    }
    const merged = await cli(
      ["merge", "s1.ndjson", "s2.ndjson", "s3.ndjson", "--annotations"],
      dir,
    );
    assert.equal(merged.code, 1, merged.stderr);
    const reached =
      "budget reached: $1.002 spent of budget_usd $1; 2 calls were not made, their Scores are blocked (budget.exhausted)";
    const lines = merged.stderr.split("\n");
    // Before, stderr named both shards but only the first got an ::error.
    for (const k of [1, 2]) {
      assert.ok(
        lines.includes(`evalpipe: "s${k}.ndjson": ${reached}`),
        merged.stderr,
      );
      assert.ok(
        lines.includes(
          `::error title=evalpipe budget reached::"s${k}.ndjson": ${reached}`,
        ),
        merged.stderr,
      );
    }
    assert.equal(
      lines.filter((l) => l.startsWith("::error title=evalpipe budget")).length,
      2,
    );
  });
});

Deno.test("merge --baseline annotates a regression and keeps it in its record as run does for the whole suite", async () => {
  await withTempDir(async (dir) => {
    await writeSuite(dir);
    const saved = await cli(
      ["run", "suite.yaml", "--save-baseline", "main"],
      dir,
    );
    assert.equal(saved.code, 1, saved.stderr);
    // c0 passed in the baseline and fails now.
    const cases = await Deno.readTextFile(`${dir}/cases.jsonl`);
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      cases.replace('"output":"yes"', '"output":"no"'),
    );
    const github = { GITHUB_ACTIONS: "true" };
    const whole = await cli(
      ["run", "suite.yaml", "--baseline", "main", "--record", "whole.json"],
      dir,
      github,
    );
    assert.equal(whole.code, 1, whole.stderr);
    const merged = await mergeShards(
      dir,
      "suite.yaml",
      ["--baseline", "main", "--record", "m.json"],
      github,
    );
    assert.equal(merged.code, 1, merged.stderr);
    const commands = (stderr: string) =>
      stderr.split("\n").filter((l) => l.startsWith("::"));
    assert.deepEqual(commands(merged.stderr), commands(whole.stderr));
    assert.ok(
      commands(merged.stderr).includes(
        '::error title=evalpipe regression::regressed against baseline "./.evalpipe/baselines/main.json": 1 newly failing (cases.jsonl#c0 on exact_match)',
      ),
      merged.stderr,
    );
    const baselineOf = async (path: string) =>
      JSON.parse(await Deno.readTextFile(`${dir}/${path}`)).baseline;
    assert.deepEqual(
      await baselineOf("m.json"),
      await baselineOf("whole.json"),
    );
  });
});

Deno.test("a merge under GitHub Actions stopped by a signal removes the record behind the step summary", async () => {
  await withTempDir(async (dir) => {
    // Enough Scores to fill the stdout pipe, which the test never reads:
    // the merge waits there, after writing its temporary record.
    const rows = Array.from(
      { length: 1500 },
      (_, i) =>
        JSON.stringify({ id: `c${i}`, input: "q", output: "a", expected: "a" }),
    );
    await Deno.writeTextFile(`${dir}/cases.jsonl`, rows.join("\n") + "\n");
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    const shard = await cli(
      ["run", "suite.yaml", "--shard", "1/1", "--record", "s1.json"],
      dir,
    );
    assert.equal(shard.code, 0, shard.stderr);
    await Deno.mkdir(`${dir}/tmp`);
    for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", CLI, "merge", "s1.json"],
        cwd: dir,
        stdin: "null",
        stdout: "piped",
        stderr: "null",
        env: {
          NO_COLOR: "1",
          GITHUB_ACTIONS: "true",
          GITHUB_STEP_SUMMARY: `${dir}/step.md`,
          TMPDIR: `${dir}/tmp`,
        },
      }).spawn();
      // Signalled once the record is being written (the file has bytes),
      // as a cancelled job's runner signals it. Before, a signal ended the
      // merge without unwinding its scopes and the file stayed in TMPDIR.
      const written = async () => {
        for await (const entry of Deno.readDir(`${dir}/tmp`)) {
          if ((await Deno.stat(`${dir}/tmp/${entry.name}`)).size > 0) {
            return true;
          }
        }
        return false;
      };
      while (!await written()) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      child.kill(signal);
      const status = await child.status;
      await child.stdout.cancel();
      assert.equal(status.code, code);
      assert.deepEqual(await Array.fromAsync(Deno.readDir(`${dir}/tmp`)), []);
    }
  });
});

Deno.test("merge --allow-partial of a gated run decides no gate, as its evalglass export blocks them: exit 2, 'gates undecided' on stderr, as an ::error and in the step summary", async () => {
  await withTempDir(async (dir) => {
    await writeShards(dir);
    // Shard 1's half fails min_pass_rate 0.9; max_errors 0 it passes. Before,
    // the merge exited 1 or 0 on that half, while the export of the same
    // merged record said "blocked".
    for (
      const [gate, before] of [["min_pass_rate: 0.9", 1], ["max_errors: 0", 0]]
    ) {
      const suite = await Deno.readTextFile(`${dir}/suite.yaml`);
      await Deno.writeTextFile(
        `${dir}/suite.yaml`,
        suite.replace(
          /gates: \{ exact_match: \{ [^}]* \} \}/,
          `gates: { exact_match: { ${gate} } }`,
        ),
      );
      const shard = await cli(
        ["run", "suite.yaml", "--shard", "1/2", "--record", "s1.json"],
        dir,
      );
      assert.equal(shard.code, 0, shard.stderr);
      await Deno.writeTextFile(`${dir}/step.md`, "");
      const merged = await cli(
        ["merge", "s1.json", "--allow-partial", "--record", "m.json"],
        dir,
        { GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: `${dir}/step.md` },
      );
      assert.equal(
        merged.code,
        2,
        `${gate} (exit ${before} before)\n${merged.stderr}`,
      );
      assert.match(
        merged.stderr,
        /^evalpipe: gates undecided: exact_match: the merged run is incomplete \(a partial merge\)/m,
      );
      assert.match(
        merged.stderr,
        /^::error title=evalpipe gates undecided::gates undecided: exact_match: /m,
      );
      assert.doesNotMatch(merged.stderr, /gate failed/);
      const step = await Deno.readTextFile(`${dir}/step.md`);
      assert.match(
        step.split("\n")[2]!,
        /^❌ gates undecided, the run did not finish: exact\\_match · .* · \*\*incomplete\*\*$/,
      );
      assert.match(
        step,
        /^\| exact\\_match \| \w+ \| 0?\.?\d+ \| ❌ undecided: the run did not finish \|$/m,
      );
      assert.doesNotMatch(step, /✅|❌ failed|gate failed|every gate held/);
      // `report` of the merged record writes the same Markdown.
      const report = await cli(["report", "m.json", "--markdown", "m.md"], dir);
      assert.equal(report.code, 0, report.stderr);
      assert.equal(await Deno.readTextFile(`${dir}/m.md`), step);
      // The export says the same of the same record.
      const out = await cli(
        ["export", "--to", "evalglass", "m.json", "eg"],
        dir,
      );
      assert.equal(out.code, 0, out.stderr);
      const rr = JSON.parse(
        await Deno.readTextFile(`${dir}/${out.stdout.trimEnd()}`),
      );
      assert.equal(rr.scorecard.verdict.verdict, "blocked");
      assert.deepEqual(rr.scorecard.verdict.blocked_gates, ["exact_match"]);
    }
  });
});

Deno.test("merge --baseline finds a name as run --baseline does: a file of that name in the current folder when no saved baseline has it", async () => {
  await withTempDir(async (dir) => {
    await writeShards(dir);
    const whole = await cli(["run", "suite.yaml", "--out", "base.ndjson"], dir);
    assert.equal(whole.code, 1, whole.stderr);
    // Before, merge looked for .evalpipe/baselines/base.ndjson.json only
    // (exit 2, no such file), where run reads ./base.ndjson.
    const compared =
      /^Compared with baseline "base\.ndjson":\nno case changed$/m;
    const run = await cli(
      ["run", "suite.yaml", "--baseline", "base.ndjson"],
      dir,
    );
    assert.match(run.stderr, compared);
    const merged = await cli(
      ["merge", "s1.json", "s2.json", "--baseline", "base.ndjson"],
      dir,
    );
    assert.equal(merged.code, run.code, merged.stderr);
    assert.match(merged.stderr, compared);
  });
});
