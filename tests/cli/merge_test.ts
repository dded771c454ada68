// `run --shard k/n` and `merge`: shards run at once against a loopback model
// merge into exactly the run one process makes.

import assert from "node:assert/strict";
import { CLI, cli, cliWithStdin, type Outcome } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { fakeLlm, reply } from "../_fake_llm.ts";

/** A suite of `n` cases against the model at `baseUrl`, two epochs, a gate. */
async function writeSuite(
  dir: string,
  baseUrl: string,
  n = 30,
  extra = "",
): Promise<string> {
  const lines: string[] = [];
  for (let i = 1; i <= n; i++) {
    lines.push(JSON.stringify({
      input: `q${i}`,
      // Half the cases expect what the model answers.
      expected: i % 2 === 0 ? `echo: q${i}` : `no ${i}`,
      metadata: { topic: i % 3 === 0 ? "math" : "geo" },
    }));
  }
  await Deno.writeTextFile(`${dir}/cases.jsonl`, lines.join("\n") + "\n");
  const config = `${dir}/suite.yaml`;
  await Deno.writeTextFile(
    config,
    `dataset: cases.jsonl
target: { type: openai, base_url: "${baseUrl}", model: m, retries: 0 }
scorers:
  - type: exact_match
  - type: contains
    value: "echo"
epochs: 2
gates:
  exact_match: { min_pass_rate: 0.1 }
${extra}`,
  );
  return config;
}

/**
 * Runs shards 1..n of `config` one after another in `dir`, each writing its
 * record to `s<k>.json` (and, with `out`, its Scores to `s<k>.ndjson`);
 * each must exit 0. Returns their outcomes.
 */
async function runShards(
  config: string,
  dir: string,
  n: number,
  options: { out?: boolean; args?: string[] } = {},
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (let k = 1; k <= n; k++) {
    const r = await cli([
      "run",
      config,
      ...(options.args ?? []),
      "--shard",
      `${k}/${n}`,
      "--record",
      `${dir}/s${k}.json`,
      ...(options.out ? ["--out", `${dir}/s${k}.ndjson`] : []),
    ], dir);
    assert.equal(r.code, 0, r.stderr);
    outcomes.push(r);
  }
  return outcomes;
}

/** A record's text with what differs between two runs of one suite masked. */
function masked(text: string): string {
  return text
    .replace(/"(run_id|started_at|finished_at)":"[^"]*"/g, '"$1":"*"')
    .replace(/"latency_ms":[0-9.e+-]+/g, '"latency_ms":0');
}

/** Runs `cli.ts` with these args in `dir`, the child's handle. */
function spawnRun(
  args: string[],
  dir: string,
  env: Record<string, string> = {},
) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, ...args],
    cwd: dir,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...env },
  }).output();
}

Deno.test("merge of 3 shards run at once equals the unsharded run, Scores, aggregates and record", async () => {
  await using server = fakeLlm({ delayMs: 5 });
  await withTempDir(async (dir) => {
    const config = await writeSuite(dir, server.baseUrl);
    const whole = await cli(
      ["run", config, "--no-cache", "--record", `${dir}/whole.json`],
      dir,
    );
    assert.equal(whole.code, 0, whole.stderr);
    // Three processes at once, as three machines would run them.
    const shards = await Promise.all([1, 2, 3].map((k) =>
      spawnRun([
        "run",
        config,
        "--no-cache",
        "--shard",
        `${k}/3`,
        "--record",
        `${dir}/shard-${k}.json`,
        "--out",
        `${dir}/shard-${k}.ndjson`,
      ], dir)
    ));
    const dec = new TextDecoder();
    for (const s of shards) assert.equal(s.code, 0, dec.decode(s.stderr));
    const sizes = shards.map((s) =>
      Number(
        /(\d+) of 30 examples are this shard's/.exec(dec.decode(s.stderr))?.[1],
      )
    );
    assert.equal(sizes.reduce((a, b) => a + b, 0), 30, String(sizes));
    const merged = await cli(
      [
        "merge",
        `${dir}/shard-3.json`,
        `${dir}/shard-1.json`,
        `${dir}/shard-2.json`,
        "--record",
        `${dir}/merged.json`,
      ],
      dir,
    );
    assert.equal(merged.code, 0, merged.stderr);
    assert.match(merged.stderr, /merged 3 shards: 120 scores/);
    // Score by Score, in order.
    assert.equal(merged.stdout, whole.stdout);
    // The record, times and run id aside (latency is a time).
    const a = masked(await Deno.readTextFile(`${dir}/whole.json`));
    const b = masked(await Deno.readTextFile(`${dir}/merged.json`));
    assert.equal(b, a);
    // Aggregates bit for bit: `aggregate` over each.
    const aggA = await cliWithStdin(["aggregate"], dir, whole.stdout);
    const aggB = await cliWithStdin(["aggregate"], dir, merged.stdout);
    assert.equal(aggB.stdout, aggA.stdout);
    // Scores files with their sidecars merge the same.
    const fromScores = await cli(
      ["merge", ...[2, 1, 3].map((k) => `${dir}/shard-${k}.ndjson`)],
      dir,
    );
    assert.equal(fromScores.code, 0, fromScores.stderr);
    assert.equal(fromScores.stdout, whole.stdout);
    // The merged record serves report, view and diff as a run's does.
    const view = await cli(["view", `${dir}/merged.json`], dir);
    assert.equal(view.code, 0, view.stderr);
    const diff = await cli(
      [
        "diff",
        `${dir}/whole.json`,
        `${dir}/merged.json`,
        "--fail-on-regression",
      ],
      dir,
    );
    assert.equal(diff.code, 0, diff.stderr);
    for (const line of diff.stdout.trim().split("\n")) {
      const d = JSON.parse(line);
      assert.equal(d.delta, 0);
      assert.equal(d.pairs, 30);
    }
    const report = await cli(
      ["report", `${dir}/merged.json`, "--markdown", `${dir}/r.md`],
      dir,
    );
    assert.equal(report.code, 0, report.stderr);
    // A record on stdin merges too.
    const one = await Deno.readTextFile(`${dir}/shard-1.json`);
    const partial = await cliWithStdin(
      ["merge", "-", `${dir}/shard-2.json`, "--allow-partial"],
      dir,
      one,
    );
    // Its gate is undecided on two shards of three (exit 2, as missing input).
    assert.equal(partial.code, 2, partial.stderr);
    assert.match(partial.stderr, /partial merge: shard 3\/3 is missing/);
    assert.match(partial.stderr, /gates undecided: exact_match/);
  });
});

Deno.test("merge refuses a missing shard, one given twice, another suite's, an unfinished one", async () => {
  await using server = fakeLlm();
  await withTempDir(async (dir) => {
    const config = await writeSuite(dir, server.baseUrl, 12);
    await runShards(config, dir, 2);
    const missing = await cli(["merge", `${dir}/s1.json`], dir);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /shard 2\/2 is missing/);
    const twice = await cli(
      ["merge", `${dir}/s1.json`, `${dir}/s1.json`, `${dir}/s2.json`],
      dir,
    );
    assert.equal(twice.code, 2);
    assert.match(twice.stderr, /are both shard 1\/2: give each shard once/);
    assert.ok(twice.stderr.includes(`"${dir}/s1.json"`), twice.stderr);
    // Another config: one more scorer.
    await Deno.mkdir(`${dir}/other`);
    const other = await writeSuite(
      `${dir}/other`,
      server.baseUrl,
      12,
      "timeout: 30\n",
    );
    const o = await cli(
      ["run", other, "--shard", "2/2", "--record", `${dir}/o2.json`],
      dir,
    );
    assert.equal(o.code, 0, o.stderr);
    const differ = await cli(
      ["merge", `${dir}/s1.json`, `${dir}/o2.json`],
      dir,
    );
    assert.equal(differ.code, 2);
    assert.match(differ.stderr, /are shards of different configs/);
    assert.ok(differ.stderr.includes(`"${dir}/o2.json"`), differ.stderr);
    // A record cut short by a crash.
    const text = await Deno.readTextFile(`${dir}/s2.json`);
    await Deno.writeTextFile(
      `${dir}/torn.json`,
      text.slice(0, text.indexOf("\n],")),
    );
    const torn = await cli(
      ["merge", `${dir}/s1.json`, `${dir}/torn.json`],
      dir,
    );
    assert.equal(torn.code, 2);
    assert.match(torn.stderr, /did not finish: resume it/);
    const allowed = await cli(
      ["merge", `${dir}/s1.json`, `${dir}/torn.json`, "--allow-partial"],
      dir,
    );
    assert.equal(allowed.code, 2, allowed.stderr);
    assert.match(allowed.stderr, /gates undecided: exact_match/);
    assert.match(
      allowed.stderr,
      /partial merge: .*torn\.json.* did not finish/,
    );
    // Scores on stdin say nothing of their shard; a sidecar is no shard.
    const stdinScores = await cliWithStdin(
      ["merge", "-", `${dir}/s2.json`],
      dir,
      '{"metric":"m","status":"skipped","validity":"not_measured","value":null,"evaluator_version":"m@1"}\n',
    );
    assert.equal(stdinScores.code, 2);
    assert.match(stdinScores.stderr, /stdin holds Scores, not a RunRecord/);
    const sidecar = await cli(
      ["merge", `${dir}/s1.json`, `${dir}/x.ndjson.meta.json`],
      dir,
    );
    assert.equal(sidecar.code, 2);
    assert.match(
      sidecar.stderr,
      /is the sidecar of a Scores file, not a shard/,
    );
    const overwrite = await cli(
      [
        "merge",
        `${dir}/s1.json`,
        `${dir}/s2.json`,
        "--record",
        `${dir}/s2.json`,
      ],
      dir,
    );
    assert.equal(overwrite.code, 2, overwrite.stderr);
    assert.equal(await Deno.readTextFile(`${dir}/s2.json`), text);
    // Not a shard at all.
    const plain = await cli(["run", config, "--record", `${dir}/p.json`], dir);
    assert.equal(plain.code, 0, plain.stderr);
    const notShard = await cli(["merge", `${dir}/p.json`], dir);
    assert.equal(notShard.code, 2);
    assert.match(notShard.stderr, /p\.json" is not a shard/);
  });
});

Deno.test("merge checks the config's gates on the merged run and exits 1, from records or from Scores files", async () => {
  await using server = fakeLlm({ handler: () => reply.ok("wrong") });
  await withTempDir(async (dir) => {
    const config = await writeSuite(dir, server.baseUrl, 8);
    // A shard's gate is not the run's: it exits 0, merge exits 1.
    for (const r of await runShards(config, dir, 2, { out: true })) {
      assert.match(r.stderr, /gates are checked on the merged run/);
    }
    for (const ext of ["json", "ndjson"]) {
      const merged = await cli(
        ["merge", `${dir}/s1.${ext}`, `${dir}/s2.${ext}`],
        dir,
      );
      assert.equal(merged.code, 1, `${ext}: ${merged.stderr}`);
      assert.match(
        merged.stderr,
        /gate failed: exact_match: pass rate 0 < min_pass_rate 0\.1/,
      );
    }
    // A sidecar of an older evalpipe keeps no gates: merge says it cannot
    // check them, rather than passing in silence.
    for (const k of [1, 2]) {
      const path = `${dir}/s${k}.ndjson.meta.json`;
      const { gates: _, ...meta } = JSON.parse(await Deno.readTextFile(path));
      await Deno.writeTextFile(path, JSON.stringify(meta));
    }
    const old = await cli(
      ["merge", `${dir}/s1.ndjson`, `${dir}/s2.ndjson`],
      dir,
    );
    assert.equal(old.code, 0, old.stderr);
    assert.match(
      old.stderr,
      /the config's gates are not checked: the sidecars of ".*s1\.ndjson", ".*s2\.ndjson" do not keep them/,
    );
  });
});

Deno.test("merge --save-baseline writes the unsharded run's baseline; merge --baseline gates on it", async () => {
  await using server = fakeLlm({ delayMs: 2 });
  await withTempDir(async (dir) => {
    // The suite in its own folder: a bare baseline name lives beside it.
    await Deno.mkdir(`${dir}/suite`);
    const config = await writeSuite(`${dir}/suite`, server.baseUrl, 12);
    const whole = await cli(
      ["run", config, "--no-cache", "--save-baseline", "whole"],
      dir,
    );
    assert.equal(whole.code, 0, whole.stderr);
    await runShards(config, dir, 3, { out: true, args: ["--no-cache"] });
    const records = [3, 1, 2].map((k) => `${dir}/s${k}.json`);
    const saved = await cli(
      [
        "merge",
        ...records,
        "--save-baseline",
        "merged",
        "--record",
        `${dir}/merged.json`,
      ],
      dir,
    );
    assert.equal(saved.code, 0, saved.stderr);
    const folder = `${dir}/suite/.evalpipe/baselines`;
    assert.match(
      saved.stderr,
      /baseline saved to .*suite\/\.evalpipe\/baselines\/merged\.json/,
    );
    // Byte for byte the baseline one machine saves: inputs, expected,
    // outputs, epochs and Scores in the unsharded run's order.
    const wholeText = await Deno.readTextFile(`${folder}/whole.json`);
    assert.equal(await Deno.readTextFile(`${folder}/merged.json`), wholeText);
    assert.match(wholeText, /"expected": "echo: q2"/);
    assert.match(wholeText, /"epoch": 2/);
    // Compared with the unsharded run's baseline, nothing changed.
    const same = await cli(["merge", ...records, "--baseline", "whole"], dir);
    assert.equal(same.code, 0, same.stderr);
    assert.match(
      same.stderr,
      /Compared with baseline .*whole\.json[\s\S]*no case changed/,
    );
    // The merged record serves as a baseline itself.
    const onRecord = await cli(
      ["run", config, "--no-cache", "--baseline", `${dir}/merged.json`],
      dir,
    );
    assert.equal(onRecord.code, 0, onRecord.stderr);
    assert.match(onRecord.stderr, /merged\.json":\nno case changed/);
    // But not one of a run that did not finish: its missing cases would
    // look removed.
    const recordText = await Deno.readTextFile(`${dir}/merged.json`);
    assert.match(recordText, /"complete":true/);
    await Deno.writeTextFile(
      `${dir}/cut.json`,
      recordText.replace('"complete":true', '"complete":false'),
    );
    const cut = await cli(
      ["run", config, "--no-cache", "--baseline", `${dir}/cut.json`],
      dir,
    );
    assert.equal(cut.code, 2, cut.stderr);
    assert.match(cut.stderr, /Invalid baseline .*cut\.json.*did not finish/);
    // A baseline in which q1 passed (it fails now): a regression, exit 1.
    const file = JSON.parse(wholeText);
    for (const unit of file.units) {
      if (unit.example_id !== "cases.jsonl#1") continue;
      for (const s of unit.scores) {
        if (s.metric === "exact_match") {
          Object.assign(s, { value: 1, passed: true });
        }
      }
    }
    await Deno.writeTextFile(`${dir}/edited.json`, JSON.stringify(file));
    // Scores files serve a comparison with a baseline given by path.
    const scoresFiles = [1, 2, 3].map((k) => `${dir}/s${k}.ndjson`);
    const worse = await cli(
      ["merge", ...scoresFiles, "--baseline", `${dir}/edited.json`],
      dir,
    );
    assert.equal(worse.code, 1, worse.stderr);
    assert.ok(
      worse.stderr.includes(
        "newly failing (1):\n  cases.jsonl#1  exact_match  2/2 → 0/2",
      ),
      worse.stderr,
    );
    assert.match(
      worse.stderr,
      /regressed against baseline .*edited\.json.*: 1 newly failing/,
    );
    // A bare name needs the records' config path; saving needs outputs.
    const bare = await cli(
      ["merge", ...scoresFiles, "--baseline", "whole"],
      dir,
    );
    assert.equal(bare.code, 2, bare.stderr);
    assert.match(
      bare.stderr,
      /a baseline name is found beside the shards' config/,
    );
    const noOutputs = await cli(
      ["merge", ...scoresFiles, "--save-baseline", `${dir}/b.json`],
      dir,
    );
    assert.equal(noOutputs.code, 2, noOutputs.stderr);
    assert.match(
      noOutputs.stderr,
      /--save-baseline needs every shard's RunRecord/,
    );
    // A missing baseline is heard before anything is written.
    const missing = await cli(
      ["merge", ...records, "--baseline", "nope", "--record", `${dir}/m.json`],
      dir,
    );
    assert.equal(missing.code, 2, missing.stderr);
    assert.match(missing.stderr, /Cannot read baseline .*nope\.json/);
    await assert.rejects(Deno.stat(`${dir}/m.json`), Deno.errors.NotFound);
  });
});

Deno.test("run --shard auto/n reads the engine's index; a missing or wrong one exits 2", async () => {
  await using server = fakeLlm();
  await withTempDir(async (dir) => {
    const config = await writeSuite(dir, server.baseUrl, 6);
    const none = await cli(["run", config, "--shard", "auto/3"], dir);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /no shard index in the environment/);
    const out = await cli(["run", config, "--shard", "auto/3"], dir, {
      JOB_COMPLETION_INDEX: "3",
    });
    assert.equal(out.code, 2);
    assert.match(out.stderr, /JOB_COMPLETION_INDEX is "3", not a shard of 3/);
    const bad = await cli(["run", config, "--shard", "0/3"], dir);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /k must be from 1 to 3/);
    const job = await cli(
      ["run", config, "--shard", "auto/3", "--record", `${dir}/j.json`],
      dir,
      { JOB_COMPLETION_INDEX: "0" },
    );
    assert.equal(job.code, 0, job.stderr);
    const gitlab = await cli(
      ["run", config, "--shard", "1/3", "--record", `${dir}/g.json`],
      dir,
      { CI_NODE_INDEX: "1" },
    );
    assert.equal(gitlab.code, 0, gitlab.stderr);
    assert.equal(job.stdout, gitlab.stdout);
    const record = JSON.parse(await Deno.readTextFile(`${dir}/j.json`));
    assert.deepEqual(record.shard, { index: 1, count: 3 });
    assert.match(record.fingerprints.config, /^sha256:/);
    assert.match(record.fingerprints.dataset, /^sha256:/);
  });
});

Deno.test("a shard killed mid-run resumes with the same command and merges into the whole run", async () => {
  await using server = fakeLlm({ delayMs: 40 });
  await withTempDir(async (dir) => {
    const config = await writeSuite(dir, server.baseUrl, 24);
    const whole = await cli(["run", config, "--no-cache"], dir);
    assert.equal(whole.code, 0, whole.stderr);
    const shardArgs = (k: number) => [
      "run",
      config,
      "--no-cache",
      "--concurrency",
      "2",
      "--shard",
      `${k}/2`,
      "--out",
      `${dir}/s${k}.ndjson`,
      "--record",
      `${dir}/s${k}.json`,
      "--resume", // as a restarted pod runs it: a fresh file starts afresh
    ];
    const first = await cli(shardArgs(1), dir);
    assert.equal(first.code, 0, first.stderr);
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CLI, ...shardArgs(2)],
      cwd: dir,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    // Killed once some of its Scores are written, as a node dies.
    for (let i = 0; i < 400; i++) {
      const text = await Deno.readTextFile(`${dir}/s2.ndjson`).catch(
        (error) => {
          if (error instanceof Deno.errors.NotFound) return "";
          throw error;
        },
      );
      if (text.split("\n").length > 6) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    child.kill("SIGKILL");
    await child.status;
    const before = (await Deno.readTextFile(`${dir}/s2.ndjson`)).split("\n")
      .length;
    assert.ok(before > 6 && before < 60, `${before} lines before the kill`);
    const torn = await cli(["merge", `${dir}/s1.json`, `${dir}/s2.json`], dir);
    assert.equal(torn.code, 2);
    assert.match(torn.stderr, /did not finish/);
    const calls = server.count;
    const again = await cli(shardArgs(2), dir);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /after \d+ already there/);
    assert.ok(
      server.count - calls < 24,
      "the units already scored are not called again",
    );
    const merged = await cli(
      ["merge", `${dir}/s1.ndjson`, `${dir}/s2.ndjson`],
      dir,
    );
    assert.equal(merged.code, 0, merged.stderr);
    assert.equal(merged.stdout, whole.stdout);
    const fromRecords = await cli(
      ["merge", `${dir}/s2.json`, `${dir}/s1.json`],
      dir,
    );
    assert.equal(fromRecords.code, 0, fromRecords.stderr);
    assert.equal(fromRecords.stdout, whole.stdout);
  });
});

Deno.test("run --resume refuses to continue a shard's file as another shard", async () => {
  await using server = fakeLlm();
  await withTempDir(async (dir) => {
    const config = await writeSuite(dir, server.baseUrl, 6);
    const out = `${dir}/s.ndjson`;
    const first = await cli(
      ["run", config, "--shard", "1/2", "--out", out],
      dir,
    );
    assert.equal(first.code, 0, first.stderr);
    const other = await cli(
      ["run", config, "--shard", "2/2", "--out", out, "--resume"],
      dir,
    );
    assert.equal(other.code, 2);
    assert.match(
      other.stderr,
      /was started with --shard 1\/2, this run has --shard 2\/2/,
    );
  });
});

Deno.test("merge checks a matrix's gates target by target, as run does, and export's verdict follows them", async () => {
  await withTempDir(async (dir) => {
    // v1 answers every case; v2 fails on case 3, so only v2 is blocked.
    const cases = [1, 2, 3, 4, 5, 6].map((i) =>
      JSON.stringify({ id: `c${i}`, input: String(i), expected: "ok" })
    );
    await Deno.writeTextFile(`${dir}/cases.jsonl`, cases.join("\n") + "\n");
    await Deno.writeTextFile(
      `${dir}/v2.sh`,
      'grep -q \'"input":"3"\' && exit 1\necho ok\n',
    );
    const config = `${dir}/suite.yaml`;
    await Deno.writeTextFile(
      config,
      `dataset: cases.jsonl
targets:
  v1: { type: subprocess, cmd: "cat > /dev/null; echo ok" }
  v2: { type: subprocess, cmd: sh v2.sh }
matrix: [v1, v2]
scorers: [{ type: exact_match }]
gates:
  exact_match: { max_blocked: 0 }
`,
    );
    const whole = await cli(
      ["run", config, "--record", `${dir}/run.json`],
      dir,
    );
    assert.equal(whole.code, 1, whole.stderr);
    const failed = /gate failed: v2: exact_match: blocked 1 > max_blocked 0/;
    assert.match(whole.stderr, failed);
    await runShards(config, dir, 2, { out: true });
    for (const ext of ["json", "ndjson"]) {
      const merged = await cli(
        ["merge", `${dir}/s1.${ext}`, `${dir}/s2.${ext}`],
        dir,
      );
      assert.equal(merged.code, 1, `${ext}: ${merged.stderr}`);
      assert.match(merged.stderr, failed);
      assert.doesNotMatch(merged.stderr, /gate failed: v1/);
    }
    // evalglass's verdict of the record is the run's: failing.
    const exported = await cli(
      ["export", "--to", "evalglass", `${dir}/run.json`, `${dir}/eg`],
      dir,
    );
    assert.equal(exported.code, 0, exported.stderr);
    const [runDir] = await Array.fromAsync(Deno.readDir(`${dir}/eg`));
    const scorecard = JSON.parse(
      await Deno.readTextFile(`${dir}/eg/${runDir!.name}/scorecard.json`),
    );
    assert.equal(scorecard.verdict.verdict, "fail");
    assert.deepEqual(scorecard.verdict.failing_gates, ["exact_match"]);
  });
});

Deno.test("merge sums the shards' budgets from their records or their Scores files' sidecars and exits 1 when one ran out; the shard itself exits 0", async () => {
  // 1000 prompt and 100 completion tokens at 1 and 10 USD per million: each
  // call costs $0.002.
  const usage = { prompt_tokens: 1000, completion_tokens: 100 };
  await using server = fakeLlm({ handler: () => reply.ok("ok", { usage }) });
  await withTempDir(async (dir) => {
    const n = 12;
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      Array.from(
        { length: n },
        (_, i) => JSON.stringify({ input: `q${i + 1}`, expected: "ok" }),
      ).join("\n") + "\n",
    );
    const suite = (budget: number) =>
      Deno.writeTextFile(
        `${dir}/suite.yaml`,
        `dataset: cases.jsonl
target:
  type: openai
  base_url: "${server.baseUrl}"
  model: m
  retries: 0
  cost: { input_per_1m: 1, output_per_1m: 10 }
scorers: [{ type: exact_match }]
concurrency: 1
budget_usd: ${budget}
`,
      );
    const shards = async () => {
      const outcomes: Outcome[] = [];
      for (const k of [1, 2]) {
        const r = await cli(
          [
            "run",
            "suite.yaml",
            "--no-cache",
            "--shard",
            `${k}/2`,
            "--record",
            `s${k}.json`,
            "--out",
            `s${k}.ndjson`,
          ],
          dir,
        );
        outcomes.push(r);
      }
      return outcomes;
    };
    // Within the budget: each shard ran under budget_usd $1 on its own, so
    // the two were allowed $2 together and spent $0.002 a case.
    await suite(1);
    assert.deepEqual((await shards()).map((r) => r.code), [0, 0]);
    assert.equal(server.count, n);
    const within = await cli(
      ["merge", "s1.json", "s2.json", "--record", "m.json"],
      dir,
    );
    assert.equal(within.code, 0, within.stderr);
    // The Scores files' sidecars keep the budget as the records do.
    const withinScores = await cli(["merge", "s1.ndjson", "s2.ndjson"], dir);
    assert.equal(withinScores.code, 0, withinScores.stderr);
    assert.doesNotMatch(withinScores.stderr, /keeps? no budget|budget reached/);
    assert.deepEqual(
      JSON.parse(await Deno.readTextFile(`${dir}/s1.ndjson.meta.json`)).budget,
      JSON.parse(await Deno.readTextFile(`${dir}/s1.json`)).budget,
    );
    const record = JSON.parse(await Deno.readTextFile(`${dir}/m.json`));
    assert.deepEqual(record.budget, {
      limit_usd: 2,
      spent_usd: 0.024,
      refused: 0,
    });
    const report = await cli(["report", "m.json", "--markdown", "r.md"], dir);
    assert.equal(report.code, 0, report.stderr);
    assert.match(
      await Deno.readTextFile(`${dir}/r.md`),
      /^\*\*Budget:\*\* \$0\.024 spent of budget\\_usd \$2$/m,
    );
    // $0.005 a shard: each stops once it has spent it (three calls, or its
    // every case), the rest are refused; the merged run fails as a run
    // whose budget ran out does. The shards exit 0, as for a gate: an
    // engine retrying one would pay for its calls again.
    await suite(0.005);
    const before = server.count;
    const over = await shards();
    const calls = server.count - before;
    assert.ok(calls <= 6, `${calls} calls`);
    for (const r of over) {
      assert.equal(r.code, 0, r.stderr);
      if (/budget reached/.test(r.stderr)) {
        assert.match(
          r.stderr,
          /the budget is checked on the merged run \(evalpipe merge\), not on a shard/,
        );
      }
    }
    assert.ok(over.some((r) => /budget reached/.test(r.stderr)));
    const merged = await cli(
      ["merge", "s1.json", "s2.json", "--record", "m.json"],
      dir,
    );
    assert.equal(merged.code, 1, merged.stderr);
    const spent = JSON.parse(await Deno.readTextFile(`${dir}/m.json`)).budget;
    assert.deepEqual(spent, {
      limit_usd: 0.01,
      spent_usd: Math.round(calls * 0.002 * 1e9) / 1e9,
      refused: n - calls,
    });
    const reached = new RegExp(
      `evalpipe: budget reached: \\$${
        String(spent.spent_usd).replace(".", "\\.")
      } spent of budget_usd \\$0\\.01; ${n - calls} calls were not made`,
    );
    assert.match(merged.stderr, reached);
    // So does the merge of their Scores files.
    const scores = await cli(["merge", "s1.ndjson", "s2.ndjson"], dir);
    assert.equal(scores.code, 1, scores.stderr);
    assert.match(scores.stderr, reached);
    // A record without its budget (an older evalpipe's): the sum is not
    // known, and merge says so rather than keep half of it.
    const old = JSON.parse(await Deno.readTextFile(`${dir}/s2.json`));
    delete old.budget;
    await Deno.writeTextFile(`${dir}/s2.json`, JSON.stringify(old));
    const partial = await cli(
      ["merge", "s1.json", "s2.json", "--record", "m.json"],
      dir,
    );
    assert.match(
      partial.stderr,
      /the merged run keeps no budget: "s2\.json" keeps none/,
    );
    // Shard 1's refusals are still known: they fail the merge.
    const first = JSON.parse(await Deno.readTextFile(`${dir}/s1.json`)).budget;
    assert.equal(partial.code, first.refused > 0 ? 1 : 0, partial.stderr);
    const none = JSON.parse(await Deno.readTextFile(`${dir}/m.json`));
    assert.equal("budget" in none, false);
  });
});

Deno.test("merge refuses shards run with different --epochs, from records or from Scores files, naming both files", async () => {
  await withTempDir(async (dir) => {
    const lines = [];
    for (let i = 1; i <= 12; i++) {
      lines.push(
        JSON.stringify({ input: `q${i}`, output: "a", expected: "a" }),
      );
    }
    await Deno.writeTextFile(`${dir}/cases.jsonl`, lines.join("\n") + "\n");
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    // One config file, one fingerprint: --epochs is a flag, not the file.
    // Before, these merged into a run of 1 epoch here and 2 there.
    for (const [k, epochs] of [[1, "1"], [2, "2"]] as const) {
      const r = await cli(
        [
          "run",
          "suite.yaml",
          "--shard",
          `${k}/2`,
          "--epochs",
          epochs,
          "--record",
          `s${k}.json`,
          "--out",
          `s${k}.ndjson`,
        ],
        dir,
      );
      assert.equal(r.code, 0, r.stderr);
    }
    for (const ext of ["json", "ndjson"]) {
      const m = await cli(["merge", `s1.${ext}`, `s2.${ext}`], dir);
      assert.equal(m.code, 2, m.stderr);
      assert.match(
        m.stderr,
        new RegExp(
          `"s1\\.${ext}" ran each example 1 time and "s2\\.${ext}" 2 times \\(--epochs\\)`,
        ),
      );
      assert.equal(m.stdout, "");
    }
    // The same epochs, given by the flag to one and left to the config
    // (1 by default) in the other, merge.
    const again = await cli(
      ["run", "suite.yaml", "--shard", "2/2", "--record", "t2.json"],
      dir,
    );
    assert.equal(again.code, 0, again.stderr);
    const same = await cli(["merge", "s1.json", "t2.json"], dir);
    assert.equal(same.code, 0, same.stderr);
  });
});

Deno.test("merge refuses a Scores file cut short after its shard finished, whose sidecar says it is complete", async () => {
  await withTempDir(async (dir) => {
    const lines = [];
    for (let i = 1; i <= 8; i++) {
      lines.push(
        JSON.stringify({ input: `q${i}`, output: "a", expected: "a" }),
      );
    }
    await Deno.writeTextFile(`${dir}/cases.jsonl`, lines.join("\n") + "\n");
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }, { type: contains, value: a }]\nepochs: 2\n",
    );
    for (const k of [1, 2]) {
      const r = await cli(
        ["run", "suite.yaml", "--shard", `${k}/2`, "--out", `s${k}.ndjson`],
        dir,
      );
      assert.equal(r.code, 0, r.stderr);
    }
    const whole = (await Deno.readTextFile(`${dir}/s1.ndjson`)).split("\n")
      .filter((l) => l !== "");
    // An artifact upload or a copy that stopped early: whole lines lost,
    // the sidecar (written last, small) intact. Before, merge wrote a run
    // of fewer examples than the dataset holds and exited 0.
    for (const keep of [whole.length - 4, whole.length - 1]) {
      await Deno.writeTextFile(
        `${dir}/s1.ndjson`,
        whole.slice(0, keep).join("\n") + "\n",
      );
      const m = await cli(["merge", "s1.ndjson", "s2.ndjson"], dir);
      assert.equal(m.code, 2, m.stderr);
      assert.match(
        m.stderr,
        /"s1\.ndjson" \(shard 1\/2\) says it finished but lacks Scores of its examples \("cases\.jsonl#\d+"/,
      );
      assert.equal(m.stdout, "");
    }
    await Deno.writeTextFile(`${dir}/s1.ndjson`, whole.join("\n") + "\n");
    const m = await cli(["merge", "s1.ndjson", "s2.ndjson"], dir);
    assert.equal(m.code, 0, m.stderr);
  });
});
