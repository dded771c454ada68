/**
 * `evalpipe export --to evalglass`: the files evalglass's result store
 * writes, their digests and marker, a Scorecard consistent with its Scores
 * (recomputed here as evalglass's reader recomputes it), and the refusals.
 */

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { assertSchema } from "./_schemas.ts";
import { type EveryStatusRun, withEveryStatusRun } from "./_every_status.ts";
import { recordHeader } from "../record/_header.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(text),
  );
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0"))
    .join("");
}

/** Exports the run's record into `reports/` and reads the run folder back. */
async function exported(run: EveryStatusRun) {
  const out = await cli(
    ["export", "--to", "evalglass", "run.json", "reports"],
    run.dir,
  );
  assert.equal(out.code, 0, out.stderr);
  const raw = JSON.parse(await Deno.readTextFile(run.recordPath));
  // The record keeps each unit's Scores beside the unit.
  const record = {
    ...raw,
    scores: raw.units.flatMap((u: { scores: unknown[] }) => u.scores),
  };
  const runDir = `${run.dir}/reports/${record.run_id}`;
  assert.equal(out.stdout, `reports/${record.run_id}/runrecord.json\n`);
  const read = (name: string) => Deno.readTextFile(`${runDir}/${name}`);
  return {
    record,
    runDir,
    texts: {
      runrecord: await read("runrecord.json"),
      scorecard: await read("scorecard.json"),
      manifest: await read("manifest.json"),
      marker: await read("run.complete"),
    },
  };
}

/** evalglass's `aggregate` + `PopulationSummary.from_scores`, written again. */
function recompute(scores: Json[], metric: string) {
  const own = scores.filter((s) => s.metric === metric);
  const values = own.filter((s) =>
    s.status === "scored" && s.validity === "valid"
  ).map((s) => s.value as number);
  const status_counts: Record<string, number> = {};
  for (const s of own) {
    status_counts[s.status] = (status_counts[s.status] ?? 0) + 1;
  }
  const count = (f: (s: Json) => boolean) => own.filter(f).length;
  return {
    value: values.length === 0
      ? null
      : values.reduce((a, b) => a + b, 0) / values.length,
    included_count: values.length,
    status_counts,
    population: {
      metric,
      scored_valid: values.length,
      non_evaluable: count((s) => s.status === "non_evaluable"),
      blocked: count((s) => s.status === "blocked"),
      skipped: count((s) => s.status === "skipped"),
      error: count((s) =>
        s.status === "error" ||
        (s.status === "scored" && s.validity !== "valid")
      ),
    },
  };
}

Deno.test("export --to evalglass writes runrecord.json, scorecard.json, manifest.json and run.complete as evalglass's store does", async () => {
  await withEveryStatusRun(async (run) => {
    const { record, runDir, texts } = await exported(run);
    const names = [];
    for await (const e of Deno.readDir(runDir)) names.push(e.name);
    assert.deepEqual(names.sort(), [
      "manifest.json",
      "run.complete",
      "runrecord.json",
      "scorecard.json",
    ]);
    for (const name of names) {
      const mode = (await Deno.stat(`${runDir}/${name}`)).mode! & 0o777;
      assert.equal(mode, 0o600, `${name} is ${mode.toString(8)}`);
    }
    // JSON as Python's json.dumps(indent=2, sort_keys=True) writes it.
    for (const text of [texts.runrecord, texts.scorecard, texts.manifest]) {
      assert.ok(text.endsWith("}\n"));
      assert.match(text, /^\{\n {2}"/);
      assert.ok([...text].every((c) => c.charCodeAt(0) < 0x7f), "ASCII only");
    }
    assert.ok(
      texts.runrecord.indexOf('"comparable"') <
        texts.runrecord.indexOf('"scorecard"'),
    );
    const manifest = JSON.parse(texts.manifest);
    assert.deepEqual(manifest, {
      schema: "evalglass.run-manifest/1",
      files: {
        "runrecord.json": await sha256(texts.runrecord),
        "scorecard.json": await sha256(texts.scorecard),
      },
    });
    assert.equal(texts.marker, `${await sha256(texts.manifest)}\n`);

    const rr = JSON.parse(texts.runrecord);
    assertSchema("runrecord", rr, "runrecord.json");
    assert.deepEqual(JSON.parse(texts.scorecard), rr.scorecard);
    assert.equal(rr.run_id, record.run_id);
    assert.equal(rr.scores.length, record.scores.length);

    // The Scorecard agrees with the Scores, as evalglass's reader checks.
    const metrics = ["checker", "exact_match", "judge"];
    assert.deepEqual(rr.scorecard.metrics.map((m: Json) => m.metric), metrics);
    for (const [i, metric] of metrics.entries()) {
      const want = recompute(rr.scores, metric);
      const m = rr.scorecard.metrics[i];
      assert.equal(m.aggregation, "mean");
      assert.ok(Math.abs(m.value - want.value!) < 1e-12, metric);
      assert.equal(m.included_count, want.included_count);
      assert.deepEqual(m.status_counts, want.status_counts);
      assert.deepEqual(rr.scorecard.populations[i], want.population);
      assert.equal(rr.scorecard.estimates[i].point, m.value);
      assert.equal(rr.scorecard.estimates[i].n_effective, want.included_count);
    }
    // By hand: exact_match is 1 (a) and 0 (b) scored, c non_evaluable, boom
    // and line 5 blocked; the judge is 0.9 (a, c) and 0.7 invalid (b).
    assert.deepEqual(rr.scorecard.metrics[1], {
      aggregation: "mean",
      included_count: 2,
      metric: "exact_match",
      status_counts: { blocked: 2, non_evaluable: 1, scored: 2 },
      value: 0.5,
    });
    assert.deepEqual(rr.scorecard.populations[2], {
      metric: "judge",
      scored_valid: 2,
      non_evaluable: 0,
      blocked: 2,
      skipped: 0,
      error: 1,
    });
    // One cluster per metric and diagnostic code, counted by hand.
    const clusters = Object.fromEntries(
      rr.scorecard.clusters.map((
        c: Json,
      ) => [`${c.metric} ${c.code}`, c.count]),
    );
    assert.equal(clusters["checker target.error"], 1);
    assert.equal(clusters["checker case.invalid"], 1);
    assert.equal(rr.scorecard.clusters[0].severity, "error");

    // No gate: every metric is informational, and so is the verdict.
    assert.equal(rr.scorecard.verdict.verdict, "informational");
    assert.equal(rr.scorecard.verdict.ci_should_fail, false);
    assert.deepEqual(rr.scorecard.verdict.informational_metrics, metrics);
    assert.equal(rr.scorecard.authority.judge.level, "informational");

    // The fingerprints as provenance dimensions.
    const dims = rr.provenance.dimensions;
    assert.equal(dims.config, record.fingerprints.config);
    assert.equal(dims.dataset, record.fingerprints.dataset);
    assert.equal(dims.target, record.fingerprints.target);
    const scorers = Object.fromEntries(
      Object.entries(record.fingerprints.scorers).sort(([a], [b]) =>
        a < b ? -1 : 1
      ),
    );
    assert.equal(dims.evaluator, await sha256(JSON.stringify(scorers)));
    assert.equal(dims.evidence, await sha256('{"example_count":5}'));
    assert.deepEqual(rr.comparable.current, rr.provenance);
  });
});

Deno.test("export --to evalglass makes a failed gate a failing gating metric, the others informational", async () => {
  await withEveryStatusRun(
    async (run) => {
      const { texts } = await exported(run);
      const { scorecard } = JSON.parse(texts.runrecord);
      assertSchema("runrecord", JSON.parse(texts.runrecord));
      assert.deepEqual(scorecard.verdict.failing_gates, ["exact_match"]);
      assert.deepEqual(scorecard.verdict.passing_gates, ["checker"]);
      assert.deepEqual(scorecard.verdict.informational_metrics, ["judge"]);
      assert.equal(scorecard.verdict.verdict, "fail");
      assert.equal(scorecard.verdict.ci_should_fail, true);
      assert.match(scorecard.verdict.reasons.exact_match[0], /min_mean 0\.9/);
      assert.deepEqual(scorecard.authority.exact_match, {
        can_gate: true,
        level: "gating",
        blocked: false,
        reasons: [],
      });
    },
    "gates:\n  exact_match: { min_mean: 0.9 }\n  checker: { max_errors: 9 }\n",
  );
});

Deno.test("export --to evalglass replaces an earlier export and writes through no symlink", async () => {
  await withEveryStatusRun(async (run) => {
    const first = await exported(run);
    const outside = `${run.dir}/outside.json`;
    await Deno.writeTextFile(outside, "keep\n");
    await Deno.remove(`${first.runDir}/runrecord.json`);
    await Deno.symlink(outside, `${first.runDir}/runrecord.json`);
    const again = await exported(run);
    assert.equal(await Deno.readTextFile(outside), "keep\n");
    assert.ok((await Deno.lstat(`${first.runDir}/runrecord.json`)).isFile);
    assert.equal(again.texts.runrecord, first.texts.runrecord);
    for await (const e of Deno.readDir(first.runDir)) {
      assert.doesNotMatch(e.name, /\.tmp$/);
    }

    // A run folder that is a symlink is refused.
    await Deno.remove(`${run.dir}/reports`, { recursive: true });
    await Deno.mkdir(`${run.dir}/reports`);
    await Deno.mkdir(`${run.dir}/elsewhere`);
    await Deno.symlink(
      `${run.dir}/elsewhere`,
      `${run.dir}/reports/${first.record.run_id}`,
    );
    const refused = await cli(
      ["export", "--to", "evalglass", "run.json", "reports"],
      run.dir,
    );
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /Refusing to write through the symlink/);
    assert.deepEqual(
      await Array.fromAsync(Deno.readDir(`${run.dir}/elsewhere`)),
      [],
    );
  });
});

Deno.test("export --to evalglass of a run that did not finish says so, on stderr and in the Scorecard", async () => {
  await withEveryStatusRun(async (run) => {
    // A crash: the record ends inside its third unit (its seventh Score),
    // after two whole units of three Scores each.
    const text = await Deno.readTextFile(run.recordPath);
    const lines = text.split("\n");
    await Deno.writeTextFile(
      run.recordPath,
      `${lines.slice(0, 3).join("\n")}\n${lines[3]!.slice(0, 20)}`,
    );
    const out = await cli(
      ["export", "--to", "evalglass", "run.json", "reports"],
      run.dir,
    );
    assert.equal(out.code, 0, out.stderr);
    assert.match(
      out.stderr,
      /"run\.json" is the record of a run that did not finish/,
    );
    const rr = JSON.parse(
      await Deno.readTextFile(`${run.dir}/${out.stdout.trimEnd()}`),
    );
    assertSchema("runrecord", rr);
    assert.equal(rr.scores.length, 6);
    assert.deepEqual(
      rr.scorecard.diagnostics.map((d: Json) => [d.code, d.severity]),
      [["evalpipe.export", "info"], ["evalpipe.run_incomplete", "warning"]],
    );
    assert.equal(rr.scorecard.diagnostics[0].details.complete, false);
  });
});

Deno.test("export refuses what it cannot export, with exit code 2", async () => {
  await withEveryStatusRun(async (run) => {
    const cases: Array<[string[], RegExp]> = [
      [["export", "run.json", "reports"], /export needs --to evalglass/],
      [
        ["export", "--to", "csv", "run.json", "reports"],
        /Unknown export format "csv"; expected evalglass/,
      ],
      [
        ["export", "--to", "evalglass", "scores.ndjson", "reports"],
        /Cannot export "scores\.ndjson": not a RunRecord/,
      ],
      [
        ["export", "--to", "evalglass", "missing.json", "reports"],
        /Cannot read "missing\.json": no such file/,
      ],
      [
        ["export", "--to", "evalglass", "run.json", "scores.ndjson"],
        /Cannot write the evalglass run "scores\.ndjson\/[^"]+": /,
      ],
      [
        ["export", "--to", "evalglass", "run.json"],
        /export takes a RunRecord and an output folder/,
      ],
    ];
    for (const [args, message] of cases) {
      const out = await cli(args, run.dir);
      assert.equal(out.code, 2, args.join(" "));
      assert.match(out.stderr, message);
      assert.equal(out.stdout, "");
    }
  });
});

Deno.test("export --to evalglass clamps a mean's interval to the metric's declared range, as evalglass clamps to score_range", async () => {
  await withEveryStatusRun(async (run) => {
    const { texts } = await exported(run);
    const rr = JSON.parse(texts.runrecord);
    assertSchema("runrecord", rr, "runrecord.json");
    // exact_match is 1 and 0 over two Scores: Student's t gives
    // 0.5 ± 12.706 × 0.5, far beyond the 0..1 every exact_match lies within.
    const exact = rr.scorecard.estimates.find((e: Json) =>
      e.metric === "exact_match"
    );
    assert.deepEqual(exact.interval, {
      method: "student_t",
      level: 0.95,
      lower: 0,
      upper: 1,
    });
  });
  // A record without ranges, and a range a value contradicts: not clamped.
  const dir = await Deno.makeTempDir();
  try {
    const score = (value: number, i: number) => ({
      metric: "m",
      status: "scored",
      validity: "valid",
      value,
      passed: value >= 0.5,
      evaluator_version: "m@1",
      example_id: `d#${i}`,
      unit_id: `d#${i}`,
      diagnostics: [],
      evidence_refs: [],
    });
    const record = (values: number[], ranges?: Record<string, number[]>) => ({
      evalpipe_run_record: 1,
      ...recordHeader({ scorers: { m: "m@1" } }),
      ...(ranges !== undefined ? { value_ranges: ranges } : {}),
      scores: values.map(score),
      aggregates: [],
      finished_at: "2026-12-01T08:00:01.000Z",
      complete: true,
    });
    for (
      const [name, rec] of [
        ["none.json", record([0, 1])],
        ["outside.json", record([0, 2], { m: [0, 1] })],
      ] as const
    ) {
      await Deno.writeTextFile(`${dir}/${name}`, JSON.stringify(rec));
      const out = await cli(
        ["export", "--to", "evalglass", name, name.replace(".json", "")],
        dir,
      );
      assert.equal(out.code, 0, out.stderr);
      const rr = JSON.parse(
        await Deno.readTextFile(`${dir}/${out.stdout.trim()}`),
      );
      const { lower, upper } = rr.scorecard.estimates[0].interval;
      assert.ok(lower < 0 && upper > 1, `${name}: [${lower}, ${upper}]`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("export --to evalglass reads the record a line at a time and writes what the record read whole gives, finished, cut short or edited by hand", async () => {
  const { readRunRecord } = await import("../../src/record/mod.ts");
  const { writeEvalglassRun } = await import("../../src/evalglass/mod.ts");
  await withEveryStatusRun(async (run) => {
    const text = await Deno.readTextFile(run.recordPath);
    const lines = text.split("\n");
    const forms: Record<string, string> = {
      finished: text,
      // A crash inside the third unit.
      torn: `${lines.slice(0, 3).join("\n")}\n${lines[3]!.slice(0, 20)}`,
      // `jq .`: not laid out a line per unit, read whole.
      edited: `${JSON.stringify(JSON.parse(text), null, 2)}\n`,
    };
    for (const [form, content] of Object.entries(forms)) {
      await Deno.writeTextFile(run.recordPath, content);
      const out = await cli(
        ["export", "--to", "evalglass", "run.json", `cli_${form}`],
        run.dir,
      );
      assert.equal(out.code, 0, out.stderr);
      const whole = await writeEvalglassRun(
        `${run.dir}/lib_${form}`,
        await readRunRecord(run.recordPath),
      );
      const name = whole.runDir.slice(whole.runDir.lastIndexOf("/") + 1);
      for (
        const file of [
          "runrecord.json",
          "scorecard.json",
          "manifest.json",
          "run.complete",
        ]
      ) {
        assert.equal(
          await Deno.readTextFile(`${run.dir}/cli_${form}/${name}/${file}`),
          await Deno.readTextFile(`${whole.runDir}/${file}`),
          `${form}: ${file}`,
        );
      }
    }
  });
});

Deno.test("writeEvalglassRunFile exports a record that grows while it is read (a run under way) as it was first read, and refuses one replaced in between", async () => {
  const { readRunRecord, RunRecordError } = await import(
    "../../src/record/mod.ts"
  );
  const { writeEvalglassRun, writeEvalglassRunFile } = await import(
    "../../src/evalglass/mod.ts"
  );
  await withEveryStatusRun(async (run) => {
    const text = await Deno.readTextFile(run.recordPath);
    const runId = JSON.parse(text).run_id;
    // Under way: the header and two units so far; then the run goes on.
    const early = `${text.split("\n").slice(0, 3).join("\n")}\n`;
    await Deno.writeTextFile(`${run.dir}/early.json`, early);
    const snapshot = await writeEvalglassRun(
      `${run.dir}/snapshot`,
      await readRunRecord(`${run.dir}/early.json`),
    );
    // A FIFO gives each read of the record what the file held then.
    const live = `${run.dir}/live.json`;
    const made = await new Deno.Command("mkfifo", { args: [live] }).output();
    assert.equal(made.code, 0);
    const exportOf = async (reports: string, first: string, next: string) => {
      const writes = (async () => {
        await Deno.writeTextFile(live, first);
        // Opened again before the first read has closed, the FIFO would go
        // on with the next text as one stream: wait for the first read to
        // end, which the run folder, made only then, shows.
        for (;;) {
          try {
            await Deno.stat(`${reports}/${runId}`);
            break;
          } catch (error) {
            if (!(error instanceof Deno.errors.NotFound)) throw error;
            await new Promise((resolve) => setTimeout(resolve, 5));
          }
        }
        await Deno.writeTextFile(live, next);
      })();
      try {
        return await writeEvalglassRunFile(reports, live);
      } finally {
        await writes;
      }
    };
    const { paths, record } = await exportOf(`${run.dir}/reports`, early, text);
    assert.equal(record.complete, false);
    for (
      const file of [
        "runrecord.json",
        "scorecard.json",
        "manifest.json",
        "run.complete",
      ]
    ) {
      assert.equal(
        await Deno.readTextFile(`${paths.runDir}/${file}`),
        await Deno.readTextFile(`${snapshot.runDir}/${file}`),
        file,
      );
    }
    // Fewer Scores the second time: not the record the Scorecard counted.
    await assert.rejects(
      () => exportOf(`${run.dir}/other`, text, early),
      (error: unknown) => {
        assert.ok(error instanceof RunRecordError, String(error));
        assert.equal(
          error.message,
          `Cannot export ${
            JSON.stringify(live)
          }: it changed while it was read (another run's record was written over it); export it again`,
        );
        return true;
      },
    );
    assert.deepEqual(
      [...Deno.readDirSync(`${run.dir}/other/${runId}`)].map((e) => e.name),
      [],
    );
  });
});

Deno.test('export --to evalglass of a record whose diagnostic has an empty message writes "(no message)", which evalglass reads', async () => {
  await withEveryStatusRun(async (run) => {
    // As an earlier evalpipe wrote it from a function scorer's diagnostic.
    const record = JSON.parse(await Deno.readTextFile(run.recordPath));
    let emptied = 0;
    for (const unit of record.units) {
      for (const s of unit.scores) {
        for (const d of s.diagnostics) {
          d.message = "";
          emptied++;
        }
      }
    }
    assert.ok(emptied > 0);
    await Deno.writeTextFile(run.recordPath, JSON.stringify(record));
    const { texts } = await exported(run);
    const rr = JSON.parse(texts.runrecord);
    assertSchema("runrecord", rr, "runrecord.json");
    const messages = rr.scores.flatMap((s: Json) =>
      (s.diagnostics ?? []).map((d: Json) => d.message)
    );
    assert.equal(messages.length, emptied);
    assert.ok(messages.every((m: string) => m === "(no message)"), messages);
    for (const c of rr.scorecard.clusters) {
      assert.equal(c.message, "(no message)");
    }
  });
});

/** A replay suite of four failing cases, gated on exact_match's mean. */
async function writeGatedSuite(dir: string): Promise<void> {
  await Deno.writeTextFile(
    `${dir}/suite.yaml`,
    "dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n  - type: exact_match\ngates:\n  exact_match: { min_mean: 0.9 }\n",
  );
  await Deno.writeTextFile(
    `${dir}/d.jsonl`,
    [1, 2, 3, 4].map((i) =>
      JSON.stringify({ input: `q${i}`, output: "no", expected: "yes" })
    ).join("\n") + "\n",
  );
}

Deno.test("export --to evalglass of a shard decides no gate, as run does not on a shard, and says so on stderr and in the Scorecard", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await writeGatedSuite(dir);
    const run = await cli(
      ["run", "suite.yaml", "--shard", "1/2", "--record", "run.json"],
      dir,
    );
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /gates are checked on the merged run/);
    const out = await cli(
      ["export", "--to", "evalglass", "run.json", "reports"],
      dir,
    );
    assert.equal(out.code, 0, out.stderr);
    assert.match(
      out.stderr,
      /"run\.json" is shard 1 of 2 of a run: its gates are checked on the merged run/,
    );
    const rr = JSON.parse(
      await Deno.readTextFile(`${dir}/${out.stdout.trimEnd()}`),
    );
    assertSchema("runrecord", rr);
    assert.equal(rr.scorecard.verdict.verdict, "informational");
    assert.equal(rr.scorecard.verdict.ci_should_fail, false);
    assert.deepEqual(rr.scorecard.verdict.failing_gates, []);
    assert.deepEqual(rr.scorecard.verdict.informational_metrics, [
      "exact_match",
    ]);
    assert.deepEqual(rr.scorecard.authority.exact_match, {
      can_gate: false,
      level: "informational",
      blocked: false,
      reasons: ["evalpipe_shard"],
    });
    assert.deepEqual(
      rr.scorecard.diagnostics.map((d: Json) => [d.code, d.severity]),
      [["evalpipe.export", "info"], ["evalpipe.shard", "warning"]],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("export --to evalglass of the merged record of shards decides its gates, without the shard's warning", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await writeGatedSuite(dir);
    for (const k of [1, 2]) {
      const run = await cli(
        ["run", "suite.yaml", "--shard", `${k}/2`, "--record", `r${k}.json`],
        dir,
      );
      assert.equal(run.code, 0, run.stderr);
    }
    const merge = await cli(
      ["merge", "r1.json", "r2.json", "--record", "run.json"],
      dir,
    );
    assert.equal(merge.code, 1, merge.stderr);
    const out = await cli(
      ["export", "--to", "evalglass", "run.json", "reports"],
      dir,
    );
    assert.equal(out.code, 0, out.stderr);
    assert.doesNotMatch(out.stderr, /shard/);
    const rr = JSON.parse(
      await Deno.readTextFile(`${dir}/${out.stdout.trimEnd()}`),
    );
    assertSchema("runrecord", rr);
    assert.equal(rr.scorecard.verdict.verdict, "fail");
    assert.equal(rr.scorecard.verdict.ci_should_fail, true);
    assert.deepEqual(rr.scorecard.verdict.failing_gates, ["exact_match"]);
    assert.equal(rr.scorecard.authority.exact_match.level, "gating");
    assert.deepEqual(
      rr.scorecard.diagnostics.map((d: Json) => d.code),
      ["evalpipe.export"],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("export --to evalglass of a partial merge blocks its gates, as evalglass blocks a gate over an incomplete measurement", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await writeGatedSuite(dir);
    // A gate the shard's half of the examples passes: a verdict that a
    // partial run must not hand evalglass as the run's.
    const suite = await Deno.readTextFile(`${dir}/suite.yaml`);
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      suite.replace("min_mean: 0.9", "max_errors: 0"),
    );
    const run = await cli(
      ["run", "suite.yaml", "--shard", "1/2", "--record", "r1.json"],
      dir,
    );
    assert.equal(run.code, 0, run.stderr);
    const merge = await cli(
      ["merge", "r1.json", "--allow-partial", "--record", "run.json"],
      dir,
    );
    assert.match(merge.stderr, /partial merge: shard 2\/2 is missing/);
    const out = await cli(
      ["export", "--to", "evalglass", "run.json", "reports"],
      dir,
    );
    assert.equal(out.code, 0, out.stderr);
    const rr = JSON.parse(
      await Deno.readTextFile(`${dir}/${out.stdout.trimEnd()}`),
    );
    assertSchema("runrecord", rr);
    assert.deepEqual(rr.scorecard.verdict, {
      verdict: "blocked",
      ci_should_fail: true,
      passing_gates: [],
      failing_gates: [],
      blocked_gates: ["exact_match"],
      informational_metrics: [],
      reasons: { exact_match: ["incomplete_measurement"] },
    });
    assert.match(
      out.stderr,
      /"run\.json" is the record of a run that did not finish: its gates are undecided, so the export blocks them/,
    );
    assert.deepEqual(rr.scorecard.authority.exact_match, {
      can_gate: true,
      level: "gating",
      blocked: false,
      reasons: [],
    });
    assert.deepEqual(
      rr.scorecard.diagnostics.map((d: Json) => [d.code, d.severity]),
      [["evalpipe.export", "info"], ["evalpipe.run_incomplete", "warning"]],
    );
    assert.match(
      rr.scorecard.diagnostics[1].message,
      /its gates are undecided \(blocked\): exact_match/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
