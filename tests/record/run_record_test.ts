import assert from "node:assert/strict";
import { reapAll } from "../_proc.ts";
import { cli, spawnCli } from "../_cli.ts";
import { type Aggregate, Aggregator } from "../../src/aggregate/mod.ts";
import {
  parseRunRecord,
  readRunRecord,
  type RunRecord,
  RunRecordError,
} from "../../src/record/run_record.ts";
import { parseScore, type Score } from "../../src/score/mod.ts";
import { readScoresFile } from "../../src/record/scores_file.ts";
import type { Unit } from "../../src/dataset/mod.ts";

async function withDir(
  files: Record<string, string>,
  fn: (dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_record_" });
  try {
    for (const [name, text] of Object.entries(files)) {
      await Deno.writeTextFile(`${dir}/${name}`, text);
    }
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function jsonl(records: unknown[]): string {
  return records.map((r) => JSON.stringify(r) + "\n").join("");
}

/** The aggregates of a run whose scorers are built-ins or subprocesses: every metric 0..1. */
function aggregatesOf(scores: readonly Score[]): Aggregate[] {
  const agg = new Aggregator({ valueRange: () => [0, 1] });
  for (const s of scores) agg.add(s);
  return JSON.parse(JSON.stringify(agg.results()));
}

const SHA256 = /^sha256:[0-9a-f]{64}$/;

/** The Scores of a record's raw JSON: each unit's, in order. */
function rawScores(record: { units: { scores: unknown[] }[] }): unknown[] {
  return record.units.flatMap((u) => u.scores);
}

// 10 replayed cases × 2 scorers = 20 Scores, with non-ASCII ids, outputs and
// reasons, and one case without an output (a target error: error Scores with
// diagnostics objects).
const CASES = [
  { input: "a", expected: "x", output: "x" },
  { id: "ünï-2", input: "b", expected: "café", output: "café" },
  { input: "c", expected: "y", output: "naïve → z" },
  { input: "d", expected: "日本", output: "日本語" },
  { input: "e", expected: "w" },
  { id: "🙂", input: "f", expected: "ok", output: "ok" },
  { input: "g", expected: "q", output: "\u001b[2J q" },
  { input: "h", output: "no expected" },
  { input: "i", expected: "é", output: "e" },
  { input: "j", expected: "last", output: "last" },
];

const REPLAY_SUITE = `dataset: data.jsonl
target: { type: replay }
scorers:
  - type: exact_match
  - type: contains
    name: mentions
`;

Deno.test("cli run --record writes a complete record with fingerprints, config, Scores and aggregates", async () => {
  await withDir(
    { "suite.yaml": REPLAY_SUITE, "data.jsonl": jsonl(CASES) },
    async (dir) => {
      const out = await cli(
        ["run", "suite.yaml", "--record", "rec.json", "--concurrency", "3"],
        dir,
      );
      assert.equal(out.code, 0, out.stderr);
      const stdoutScores = out.stdout.trimEnd().split("\n").map((l) =>
        parseScore(JSON.parse(l))
      );
      const text = await Deno.readTextFile(`${dir}/rec.json`);
      const record = JSON.parse(text);
      assert.equal(record.complete, true);
      assert.equal(record.evalpipe_run_record, 2);
      assert.equal(typeof record.run_id, "string");
      assert.ok(!Number.isNaN(Date.parse(record.started_at)));
      assert.ok(
        Date.parse(record.finished_at) >= Date.parse(record.started_at),
      );
      assert.equal(record.config_path, "suite.yaml");
      // The resolved config: the file's, with the concurrency and epochs in effect.
      assert.deepEqual(record.config, {
        dataset: "data.jsonl",
        target: { type: "replay" },
        scorers: [{ type: "exact_match" }, {
          type: "contains",
          name: "mentions",
        }],
        concurrency: 3,
        epochs: 1,
      });
      const fp = record.fingerprints;
      assert.match(fp.config, SHA256);
      assert.match(fp.dataset, SHA256);
      assert.match(fp.target, SHA256);
      assert.deepEqual(fp.scorers, {
        exact_match: "exact_match@1",
        mentions: "contains@1",
      });
      // All Scores, as on stdout, each beside its unit, and their aggregates.
      assert.equal(record.units.length, 10);
      assert.deepEqual(
        rawScores(record),
        JSON.parse(JSON.stringify(stdoutScores)),
      );
      for (const [i, unit] of record.units.entries()) {
        assert.equal(unit.input, CASES[i]!.input);
        assert.equal(unit.epoch, 1);
        assert.equal(unit.output, CASES[i]!.output ?? null);
        assert.equal(unit.expected, CASES[i]!.expected);
        assert.equal(typeof unit.target.latency_ms, "number");
        for (const s of unit.scores) assert.equal(s.unit_id, unit.unit_id);
      }
      assert.match(record.units[4].target.error, /no "output"/);
      for (const s of rawScores(record) as Score[]) {
        assert.equal(fp.scorers[s.metric], s.evaluator_version);
      }
      assert.deepEqual(record.aggregates, aggregatesOf(stdoutScores));
      assert.deepEqual(
        record.aggregates.map((
          a: Aggregate,
        ) => [a.metric, a.n, a.errors, a.blocked]),
        [["exact_match", 10, 0, 1], ["mentions", 10, 0, 1]],
      );
      // parseRunRecord reads it back the same.
      const parsed = parseRunRecord(text, "rec.json");
      assert.equal(parsed.complete, true);
      assert.equal(parsed.finished_at, record.finished_at);
      assert.deepEqual(parsed.scores, stdoutScores);
      assert.deepEqual(
        parsed.units.map((u) => [u.unit_id, u.output]),
        record.units.map((u: Unit) => [u.unit_id, u.output]),
      );
      assert.deepEqual(
        JSON.parse(JSON.stringify(parsed.aggregates)),
        record.aggregates,
      );
    },
  );
});

/** The byte offset just after each unit line's closing brace. */
function unitLineEnds(bytes: Uint8Array): { start: number; ends: number[] } {
  const enc = new TextEncoder();
  const marker = enc.encode('"units":[\n');
  let start = -1;
  outer: for (let i = 0; i + marker.length <= bytes.length; i++) {
    for (let j = 0; j < marker.length; j++) {
      if (bytes[i + j] !== marker[j]) continue outer;
    }
    start = i + marker.length - 1; // just after the "["
    break;
  }
  assert.ok(start > 0, "the record has a units section");
  const ends: number[] = [];
  let i = start + 1;
  while (bytes[i] === 0x7b) { // "{": a unit line
    let end = bytes.indexOf(0x0a, i);
    if (bytes[end - 1] === 0x2c) end--; // ","
    ends.push(end);
    i = bytes.indexOf(0x0a, i) + 1;
  }
  return { start, ends };
}

Deno.test("parseRunRecord reads a record cut at any byte up to its last whole unit, never a torn one", async () => {
  await withDir(
    { "suite.yaml": REPLAY_SUITE, "data.jsonl": jsonl(CASES) },
    async (dir) => {
      const out = await cli(["run", "suite.yaml", "--record", "rec.json"], dir);
      assert.equal(out.code, 0, out.stderr);
      const bytes = await Deno.readFile(`${dir}/rec.json`);
      const full = parseRunRecord(new TextDecoder().decode(bytes), "rec.json");
      assert.equal(full.scores.length, 20);
      const { start, ends } = unitLineEnds(bytes);
      assert.equal(ends.length, 10);
      // The JSON ends with the last "}"; only a trailing newline may follow.
      const jsonEnd = bytes.lastIndexOf(0x7d) + 1;
      const decoder = new TextDecoder(); // a torn character becomes U+FFFD
      let checked = 0;
      for (let cut = 0; cut <= bytes.length; cut++) {
        const text = decoder.decode(bytes.subarray(0, cut));
        if (cut < start) {
          // Cut inside the header (before the end of '"units":['): unreadable.
          assert.throws(
            () => parseRunRecord(text, "rec.json"),
            RunRecordError,
            `cut at ${cut}`,
          );
          continue;
        }
        let record: RunRecord;
        try {
          record = parseRunRecord(text, "rec.json");
        } catch (error) {
          throw new Error(`cut at ${cut} of ${bytes.length}`, { cause: error });
        }
        const wholeUnits = ends.filter((e) => e <= cut).length;
        const whole = wholeUnits * 2; // two Scores per unit
        if (cut >= jsonEnd) {
          assert.equal(record.complete, true, `cut at ${cut}`);
        } else {
          assert.equal(record.complete, false, `cut at ${cut}`);
          assert.equal(record.finished_at, null);
        }
        assert.equal(record.scores.length, whole, `cut at ${cut}`);
        assert.deepEqual(record.scores, full.scores.slice(0, whole));
        assert.deepEqual(record.units, full.units.slice(0, wholeUnits));
        assert.equal(record.run_id, full.run_id);
        assert.deepEqual(record.fingerprints, full.fingerprints);
        if (cut === ends[4]! + 1 || cut === ends[9]!) {
          assert.deepEqual(
            JSON.parse(JSON.stringify(record.aggregates)),
            aggregatesOf(full.scores.slice(0, whole)),
          );
        }
        checked++;
      }
      assert.ok(checked > 2000, `${checked} cuts checked`);
      // readRunRecord, a line at a time, reads each cut as parseRunRecord does.
      for (let cut = start; cut <= bytes.length; cut += 7) {
        await Deno.writeFile(`${dir}/cut.json`, bytes.subarray(0, cut));
        const text = new TextDecoder().decode(bytes.subarray(0, cut));
        assert.deepEqual(
          await readRunRecord(`${dir}/cut.json`),
          parseRunRecord(text, `${dir}/cut.json`),
          `cut at ${cut}`,
        );
      }
    },
  );
});

Deno.test("readScoresFile reads a record cut inside a multi-byte character", async () => {
  await withDir(
    { "suite.yaml": REPLAY_SUITE, "data.jsonl": jsonl(CASES) },
    async (dir) => {
      const out = await cli(["run", "suite.yaml", "--record", "rec.json"], dir);
      assert.equal(out.code, 0, out.stderr);
      const bytes = await Deno.readFile(`${dir}/rec.json`);
      const { start, ends } = unitLineEnds(bytes);
      // Every cut that splits a UTF-8 sequence in the units section: a
      // continuation byte (10xxxxxx) right after the cut.
      const cuts: number[] = [];
      for (let i = start; i < ends.at(-1)!; i++) {
        if ((bytes[i]! & 0xc0) === 0x80) cuts.push(i);
      }
      assert.ok(cuts.length >= 10, `${cuts.length} torn characters`);
      for (const cut of cuts) {
        await Deno.writeFile(`${dir}/torn.json`, bytes.subarray(0, cut));
        const file = await readScoresFile(`${dir}/torn.json`);
        assert.equal(file.record?.complete, false, `cut at ${cut}`);
        assert.equal(
          file.scores.length,
          ends.filter((e) => e <= cut).length * 2,
          `cut at ${cut}`,
        );
      }
      // The CLI reads it too.
      await Deno.writeFile(`${dir}/torn.json`, bytes.subarray(0, cuts.at(-1)));
      const view = await cli(["view", "torn.json", "--by-call"], dir);
      assert.equal(view.code, 0, view.stderr);
      assert.match(view.stderr, /did not finish/);
    },
  );
});

Deno.test("parseRunRecord rejects what is not a record and a record with an invalid Score", () => {
  assert.throws(
    () => parseRunRecord('{"metric":"m"}\n', "x.ndjson"),
    RunRecordError,
  );
  assert.throws(() => parseRunRecord("", "empty.json"), RunRecordError);
  const header =
    '{"evalpipe_run_record":1,"run_id":"r","started_at":"2026-01-01T00:00:00Z","config_path":"s.yaml","config":{},"fingerprints":{"config":"c","dataset":null,"target":"t","scorers":{}},"scores":[\n';
  assert.throws(
    () =>
      parseRunRecord(
        header +
          '{"metric":"m","status":"scored","validity":"valid","value":null,"passed":true,"evaluator_version":"m@1"}\n],"aggregates":[],"finished_at":null,"complete":true}\n',
        "bad.json",
      ),
    (error: unknown) =>
      error instanceof RunRecordError &&
      /"bad\.json": scores\[0\]: "value"/.test(error.message),
  );
  // Each header field is checked by name.
  const tail = '],"aggregates":[],"finished_at":null,"complete":true}\n';
  for (
    const [from, to, says] of [
      ['"run_id":"r"', '"run_id":5', '"run_id": must be a string, not 5'],
      [
        '"evalpipe_run_record":1',
        '"evalpipe_run_record":3',
        '"evalpipe_run_record": must be 1 or 2, not 3',
      ],
      ['"config":{}', '"config":[]', '"config": must be a mapping, not a list'],
      [
        '"dataset":null',
        '"dataset":0',
        '"fingerprints.dataset": must be a string or null, not 0',
      ],
      [
        '"scorers":{}',
        '"scorers":{"m":1}',
        '"fingerprints.scorers.m": must be a string, not 1',
      ],
    ]
  ) {
    assert.throws(
      () => parseRunRecord(header.replace(from!, to!) + tail, "h.json"),
      (error: unknown) =>
        error instanceof RunRecordError &&
        error.message === `Invalid run record "h.json": ${says}`,
      says,
    );
  }
  // A header damaged before "scores" cannot be read.
  assert.throws(
    () =>
      parseRunRecord(
        header.replace('"config":{}', '"config":{'),
        "damaged.json",
      ),
    RunRecordError,
  );
});

Deno.test("parseRunRecord reads a record's baseline and budget, and names a field of them that is wrong", () => {
  const header =
    '{"evalpipe_run_record":2,"run_id":"r","started_at":"2026-01-01T00:00:00Z","config_path":"s.yaml","config":{},"fingerprints":{"config":"c","dataset":null,"target":"t","scorers":{}},"units":[\n';
  const baseline = {
    path: "b.json",
    failed: true,
    newly_failing: [{
      case: "d#1",
      metric: "m",
      baseline: [1, 1],
      now: [0, 1],
    }],
    fixed: [],
    flaky: [],
    new_cases: [],
    removed_cases: [],
    metrics: [{
      metric: "m",
      pairs: 1,
      mean_a: 1,
      mean_b: 0,
      delta: -1,
      ci95: null,
    }],
    worse: [],
    unfit: [],
  };
  const budget = { limit_usd: 2, spent_usd: 0.5, refused: 0 };
  const tail = (more: Record<string, unknown>) =>
    `],${
      JSON.stringify({ aggregates: [], ...more, complete: true }).slice(1)
    }\n`;
  const record = parseRunRecord(header + tail({ baseline, budget }), "r.json");
  assert.deepEqual(record.baseline, baseline);
  assert.deepEqual(record.budget, budget);
  const old = parseRunRecord(header + tail({}), "old.json");
  assert.equal("baseline" in old || "budget" in old, false);
  for (
    const [more, says] of [
      [
        { baseline: { ...baseline, failed: "yes" } },
        '"baseline.failed": must be true or false, not "yes"',
      ],
      [
        {
          baseline: {
            ...baseline,
            newly_failing: [{ ...baseline.newly_failing[0], now: [0] }],
          },
        },
        '"baseline.newly_failing[0].now": must be two whole numbers, not a list',
      ],
      [
        { budget: { ...budget, refused: -1 } },
        '"budget.refused": must be a whole number of at least 0, not -1',
      ],
    ] as const
  ) {
    assert.throws(
      () => parseRunRecord(header + tail(more), "c.json"),
      (error: unknown) =>
        error instanceof RunRecordError &&
        error.message === `Invalid run record "c.json": ${says}`,
      says,
    );
  }
});

Deno.test("cli run --record fingerprints change with the dataset and the scorer script", async () => {
  const suite = `dataset: data.jsonl
target: { type: replay }
scorers:
  - type: subprocess
    cmd: sh judge.sh
  - type: exact_match
`;
  const judge = `cat >/dev/null\nprintf '{"score":0.7}'\n`;
  await withDir(
    {
      "suite.yaml": suite,
      "data.jsonl": jsonl(CASES.slice(0, 2)),
      "judge.sh": judge,
    },
    async (dir) => {
      const record = async (name: string) => {
        const out = await cli(["run", "suite.yaml", "--record", name], dir);
        assert.equal(out.code, 0, out.stderr);
        return JSON.parse(await Deno.readTextFile(`${dir}/${name}`));
      };
      const first = await record("1.json");
      const again = await record("2.json");
      assert.deepEqual(again.fingerprints, first.fingerprints, "stable");
      assert.notEqual(again.run_id, first.run_id);
      assert.match(first.fingerprints.scorers.judge, /^judge@[0-9a-f]+$/);
      assert.equal(
        first.units[0].scores[0].evaluator_version,
        first.fingerprints.scorers.judge,
      );

      await Deno.writeTextFile(`${dir}/data.jsonl`, jsonl(CASES.slice(0, 3)));
      const data = await record("3.json");
      assert.notEqual(data.fingerprints.dataset, first.fingerprints.dataset);
      assert.equal(data.fingerprints.config, first.fingerprints.config);
      assert.equal(data.fingerprints.target, first.fingerprints.target);
      assert.deepEqual(data.fingerprints.scorers, first.fingerprints.scorers);

      await Deno.writeTextFile(`${dir}/judge.sh`, `# v2\n${judge}`);
      const script = await record("4.json");
      assert.notEqual(
        script.fingerprints.scorers.judge,
        first.fingerprints.scorers.judge,
      );
      assert.equal(
        script.fingerprints.scorers.exact_match,
        first.fingerprints.scorers.exact_match,
      );
      for (const s of rawScores(script) as Score[]) {
        assert.equal(
          s.evaluator_version,
          script.fingerprints.scorers[s.metric],
        );
      }
      assert.equal(script.fingerprints.dataset, data.fingerprints.dataset);
      assert.equal(script.fingerprints.config, first.fingerprints.config);

      // A change that shapes the Scores (how long a scorer may take), not
      // only how fast they come (concurrency, which the fingerprint leaves out).
      await Deno.writeTextFile(`${dir}/suite.yaml`, `${suite}timeout: 30\n`);
      const config = await record("5.json");
      assert.notEqual(config.fingerprints.config, first.fingerprints.config);
      assert.equal(config.config.timeout, 30);
    },
  );
});

// --- a real crash ----------------------------------------------------------

const SLOW_SUITE = `dataset: data.jsonl
target:
  type: subprocess
  cmd: "echo $$ >> pids.txt; cat >/dev/null; sleep 0.05; echo ok"
scorers:
  - type: exact_match
concurrency: 4
`;

const SLOW_CASES = jsonl(
  Array.from({ length: 200 }, (_, i) => ({ input: `q${i}`, expected: "ok" })),
);

function scoreLines(text: string): number {
  return text.split("\n").filter((l) => l.startsWith('{"example_id"')).length;
}

/** Unit lines (one Score each here) that are whole JSON: a last line torn by a kill is not. */
function wholeScoreLines(text: string): number {
  return text.split("\n").filter((l) => {
    if (!l.startsWith('{"example_id"')) return false;
    try {
      JSON.parse(l.endsWith(",") ? l.slice(0, -1) : l);
      return true;
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      return false; // torn
    }
  }).length;
}

/** Waits, bounded, until the record holds at least `n` Score lines. */
async function waitForScores(path: string, n: number): Promise<void> {
  for (let i = 0; i < 6000; i++) {
    try {
      if (scoreLines(await Deno.readTextFile(path)) >= n) return;
    } catch (error) {
      // The run has not created the record yet.
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${path} never held ${n} Scores`);
}

/** Processes of the target's groups (pids it wrote) that run in `dir`. */
async function leftovers(dir: string): Promise<number[]> {
  let groups: Set<number>;
  try {
    groups = new Set(
      (await Deno.readTextFile(`${dir}/pids.txt`)).split("\n")
        .filter((l) => l !== "").map(Number),
    );
  } catch (error) {
    // No target ever started: nothing can be left.
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  const home = await Deno.realPath(dir);
  const found: number[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = await Deno.readTextFile(`/proc/${entry.name}/stat`);
      const [state, _ppid, pgrp] = stat.slice(stat.lastIndexOf(")") + 2)
        .split(" ");
      if (state === "Z" || !groups.has(Number(pgrp))) continue;
      // Ours only: a recycled pid elsewhere does not run in our folder.
      if (await Deno.readLink(`/proc/${entry.name}/cwd`) !== home) continue;
      found.push(Number(entry.name));
    } catch (error) {
      // The process ended while we looked, or is another user's: not ours.
      if (
        !(error instanceof Deno.errors.NotFound) &&
        !(error instanceof Deno.errors.PermissionDenied)
      ) throw error;
    }
  }
  return found;
}

async function slowRun(
  dir: string,
  signal: Deno.Signal,
): Promise<{ status: Deno.CommandStatus; stderr: string }> {
  const child = spawnCli(["run", "suite.yaml", "--record", "rec.json"], dir);
  try {
    await waitForScores(`${dir}/rec.json`, 5);
  } finally {
    child.kill(signal);
  }
  const { code, signal: sig, success, stderr } = await child.output();
  return {
    status: { code, signal: sig, success },
    stderr: new TextDecoder().decode(stderr),
  };
}

Deno.test("cli run --record leaves a readable record when the process is killed", async () => {
  await withDir(
    { "suite.yaml": SLOW_SUITE, "data.jsonl": SLOW_CASES },
    async (dir) => {
      try {
        const { status } = await slowRun(dir, "SIGKILL");
        assert.equal(status.signal, "SIGKILL");
        const text = await Deno.readTextFile(`${dir}/rec.json`);
        assert.throws(() => JSON.parse(text), SyntaxError, "no proper end");
        const record = parseRunRecord(text, "rec.json");
        assert.equal(record.complete, false);
        assert.equal(record.finished_at, null);
        assert.ok(record.scores.length >= 5, `${record.scores.length} Scores`);
        assert.ok(record.scores.length < 200);
        assert.equal(record.scores.length, wholeScoreLines(text));
        for (const s of record.scores) {
          assert.equal(s.metric, "exact_match");
          assert.equal(s.value, 1);
        }
        assert.equal(record.aggregates[0]!.n, record.scores.length);

        const view = await cli(["view", "rec.json", "--by-call"], dir);
        assert.equal(view.code, 0, view.stderr);
        assert.match(
          view.stderr,
          /"rec\.json" is the record of a run that did not finish/,
        );
        assert.match(view.stdout, new RegExp(`${record.scores.length} units`));
      } finally {
        await reap(dir);
      }
      assert.deepEqual(await leftovers(dir), []);
    },
  );
});

Deno.test("cli run --record ends the record, incomplete, on SIGINT and exits 130", async () => {
  await withDir(
    { "suite.yaml": SLOW_SUITE, "data.jsonl": SLOW_CASES },
    async (dir) => {
      try {
        const { status, stderr } = await slowRun(dir, "SIGINT");
        assert.equal(status.code, 130, stderr);
        assert.match(stderr, /interrupted by SIGINT/);
        const text = await Deno.readTextFile(`${dir}/rec.json`);
        const raw = JSON.parse(text); // it ends properly
        assert.equal(raw.complete, false);
        assert.equal(typeof raw.finished_at, "string");
        const scores = rawScores(raw) as Score[];
        assert.ok(scores.length >= 5 && scores.length < 200);
        assert.deepEqual(raw.aggregates, aggregatesOf(scores));
        const record = parseRunRecord(text, "rec.json");
        assert.equal(record.complete, false);
        assert.equal(record.scores.length, scores.length);
        assert.equal(record.units.length, scores.length);
        // evalpipe killed its targets' process groups itself.
        assert.equal(await reap(dir), 0, "nothing left for the test to kill");
      } finally {
        await reap(dir);
      }
    },
  );
});

/** Kills what the target left behind and checks, bounded, that it is gone. */
function reap(dir: string): Promise<number> {
  return reapAll(() => leftovers(dir), dir);
}

Deno.test("readScoresFile and view count a Score given twice once, naming the line of each copy", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const line = (
      unit: string,
      metric: string,
      value: number,
      target?: string,
    ) =>
      JSON.stringify({
        metric,
        status: "scored",
        validity: "valid",
        value,
        passed: value === 1,
        evaluator_version: `${metric}@1`,
        example_id: unit,
        unit_id: unit,
        ...(target !== undefined ? { target_name: target } : {}),
      });
    // Metrics whose names hold one another are apart: m, mm, m_m.
    const once = [
      line("d#1", "m", 1),
      line("d#1", "n", 0),
      line("d#1", "mm", 0),
      line("d#1", "m_m", 0),
      line("d#2", "m", 0),
      line("d#1", "m", 1, "t2"),
    ];
    await Deno.writeTextFile(`${dir}/once.ndjson`, once.join("\n") + "\n");
    await Deno.writeTextFile(
      `${dir}/twice.ndjson`,
      [...once, ...once].join("\n") + "\n",
    );
    const read = await readScoresFile(`${dir}/twice.ndjson`);
    assert.equal(read.scores.length, 6);
    assert.deepEqual(read.problems.map((p) => p.line), [7, 8, 9, 10, 11, 12]);
    assert.equal(
      read.problems[0]!.message,
      'unit "d#1" already has a Score of metric "m" on an earlier line: it is counted once',
    );
    const a = await cli(["view", "once.ndjson"], dir);
    const b = await cli(["view", "twice.ndjson"], dir);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 2, b.stderr);
    assert.equal(b.stdout, a.stdout);
    assert.match(
      b.stderr,
      /"twice\.ndjson" line 7: unit "d#1" already has a Score of metric "m" on an earlier line/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readScoresFile counts a unit's Score given with its id in NFC and again in NFD once, as aggregate and diff pair them", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // "café" with "é" as one code point (NFC), then as "e" and a combining
    // accent (NFD): one unit, its Score given twice.
    const line = (unit: string) =>
      JSON.stringify({
        metric: "m",
        status: "scored",
        validity: "valid",
        value: 1,
        passed: true,
        evaluator_version: "m@1",
        example_id: unit,
        unit_id: unit,
      });
    await Deno.writeTextFile(
      `${dir}/twice.ndjson`,
      [line("d#caf\u00e9"), line("d#cafe\u0301")].join("\n") + "\n",
    );
    const read = await readScoresFile(`${dir}/twice.ndjson`);
    assert.equal(read.scores.length, 1);
    assert.equal(read.scores[0]!.unit_id, "d#caf\u00e9");
    assert.deepEqual(read.problems.map((p) => p.line), [2]);
    assert.equal(
      read.problems[0]!.message,
      'unit "d#cafe\u0301" already has a Score of metric "m" on an earlier line: it is counted once',
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readRunRecord names a file it cannot read in a few words, as a RunRecordError", async () => {
  await withDir({}, async (dir) => {
    await Deno.mkdir(`${dir}/folder`);
    for (
      const [path, why] of [
        [`${dir}/no-such-run.json`, "no such file"],
        [`${dir}/folder`, "it is a folder"],
      ] as const
    ) {
      // Deno's own said "No such file or directory (os error 2): open '…'".
      await assert.rejects(() => readRunRecord(path), {
        name: "RunRecordError",
        message: `Cannot read run record ${JSON.stringify(path)}: ${why}`,
      });
    }
  });
});

/** The lines of a record of REPLAY_SUITE's run over CASES, run in `dir`. */
async function recordLines(dir: string): Promise<string[]> {
  const out = await cli(["run", "suite.yaml", "--record", "rec.json"], dir);
  assert.equal(out.code, 0, out.stderr);
  return (await Deno.readTextFile(`${dir}/rec.json`)).split("\n");
}

/** The record's lines with the second unit's (line 3) first value a NaN. */
function withNaN(lines: readonly string[]): string[] {
  const out = [...lines];
  out[2] = out[2]!.replace(/"value":[^,]+/, '"value":NaN');
  assert.match(out[2], /"value":NaN/);
  return out;
}

Deno.test("a record with a malformed Score names its file and the Score's place as a JSON path, read by lines or whole", async () => {
  await withDir(
    { "suite.yaml": REPLAY_SUITE, "data.jsonl": jsonl(CASES) },
    async (dir) => {
      // The second unit's (line 3) second Score: "contains" named mentions.
      const lines = await recordLines(dir);
      const scores = lines[2]!.split('"metric":"mentions"');
      assert.equal(scores.length, 2);
      lines[2] = `${scores[0]}"metric":"mentions"${
        scores[1]!.replace('"validity":"valid"', '"validity":"not_applicable"')
      }`;
      const text = lines.join("\n");
      await Deno.writeTextFile(`${dir}/bad.json`, text);
      const indented = JSON.stringify(JSON.parse(text), null, 2);
      await Deno.writeTextFile(`${dir}/indented.json`, indented);
      const why =
        '"validity": A "scored" Score must be "valid" or "invalid", not "not_applicable"';
      // It said `score 4`, counted over the whole record's Scores.
      for (const file of ["bad.json", "indented.json"]) {
        await assert.rejects(readRunRecord(`${dir}/${file}`), {
          name: "RunRecordError",
          message:
            `Invalid run record "${dir}/${file}": units[1].scores[1]: ${why}`,
        });
        const view = await cli(["view", file], dir);
        assert.equal(view.code, 2);
        assert.equal(
          view.stderr,
          `evalpipe: Invalid run record "${file}": units[1].scores[1]: ${why}\n`,
        );
      }
      assert.throws(() => parseRunRecord(text, "bad.json"), {
        name: "RunRecordError",
        message: `Invalid run record "bad.json": units[1].scores[1]: ${why}`,
      });
      // The path is jq's: it finds the Score.
      const score = JSON.parse(text).units[1].scores[1];
      assert.equal(score.validity, "not_applicable");
    },
  );
});

Deno.test("a record with a line that is not JSON before its last (a NaN written in by hand) is an input error naming the line, never read as cut short there", async () => {
  await withDir(
    { "suite.yaml": REPLAY_SUITE, "data.jsonl": jsonl(CASES) },
    async (dir) => {
      const lines = withNaN(await recordLines(dir));
      const text = lines.join("\n");
      await Deno.writeTextFile(`${dir}/nan.json`, text);
      const message =
        /^Invalid run record "nan\.json" line 3: it is not JSON \(.+\), and lines follow it: only a record's last line can be cut short by a crash$/;
      assert.throws(() => parseRunRecord(text, "nan.json"), (e: unknown) => {
        assert.ok(e instanceof RunRecordError);
        assert.match(e.message, message);
        return true;
      });
      await assert.rejects(readRunRecord(`${dir}/nan.json`), (e: unknown) => {
        assert.ok(e instanceof RunRecordError);
        assert.ok(
          e.message.includes(`"${dir}/nan.json" line 3: it is not JSON (`),
          e.message,
        );
        return true;
      });
      // Every command that reads it says so and exits 2, nothing written.
      for (
        const args of [
          ["view", "nan.json"],
          ["aggregate", "nan.json"],
          ["export", "--to", "evalglass", "nan.json", "out"],
        ]
      ) {
        const read = await cli(args, dir);
        assert.equal(read.code, 2, `${args[0]}: ${read.stderr}`);
        // The file and the line that is wrong, once: no outer place first.
        assert.match(
          read.stderr,
          /^evalpipe: Invalid run record "nan\.json" line 3: it is not JSON \(.+\), and lines follow it: only a record's last line can be cut short by a crash\n$/,
        );
        assert.equal(read.stdout, "");
      }
      // The same line last, as a crash leaves it: the record is read up to it.
      await Deno.writeTextFile(
        `${dir}/torn.json`,
        lines.slice(0, 3).join("\n"),
      );
      const torn = await readRunRecord(`${dir}/torn.json`);
      assert.equal(torn.complete, false);
      assert.equal(torn.units.length, 1);
    },
  );
});

Deno.test("a record line that is not UTF-8 before its last is an input error naming the file, the line and why, once, for every command that reads it", async () => {
  await withDir(
    { "suite.yaml": REPLAY_SUITE, "data.jsonl": jsonl(CASES) },
    async (dir) => {
      const lines = await recordLines(dir);
      const bytes = (text: string) => new TextEncoder().encode(text);
      // Line 3 with a byte no UTF-8 text holds inside a string, as a bad
      // copy leaves it: read leniently, it would still be JSON.
      const cut = lines[2]!.indexOf('"input":"') + '"input":"'.length;
      const damaged = [
        ...bytes(`${lines.slice(0, 2).join("\n")}\n${lines[2]!.slice(0, cut)}`),
        0xff,
        ...bytes(`${lines[2]!.slice(cut)}\n${lines.slice(3).join("\n")}`),
      ];
      await Deno.writeFile(`${dir}/bad.json`, new Uint8Array(damaged));
      await Deno.writeTextFile(`${dir}/rec2.json`, lines.join("\n"));
      const message =
        `evalpipe: Invalid run record "bad.json" line 3: it is not JSON (not valid UTF-8), and lines follow it: only a record's last line can be cut short by a crash\n`;
      for (
        const args of [
          ["view", "bad.json"],
          ["aggregate", "bad.json"],
          ["diff", "bad.json", "rec2.json"],
          ["export", "--to", "evalglass", "bad.json", "out"],
          ["report", "bad.json", "--markdown", "m.md"],
        ]
      ) {
        const read = await cli(args, dir);
        assert.equal(read.code, 2, `${args[0]}: ${read.stderr}`);
        assert.equal(read.stderr, message, args[0]);
        assert.equal(read.stdout, "", args[0]);
      }
      // The same line last, as a crash leaves it: aggregate reads the record
      // up to it, as view does.
      const torn = damaged.slice(
        0,
        damaged.lastIndexOf(10, damaged.indexOf(0xff)) + 1 + cut + 1,
      );
      await Deno.writeFile(`${dir}/torn.json`, new Uint8Array(torn));
      const view = await cli(["view", "torn.json"], dir);
      assert.equal(view.code, 0, view.stderr);
      const aggregate = await cli(["aggregate", "torn.json"], dir);
      assert.equal(aggregate.code, 0, aggregate.stderr);
      const [m] = aggregate.stdout.trim().split("\n").map((l) => JSON.parse(l));
      assert.equal(m.n, 1);
    },
  );
});

Deno.test("parseRunRecord reads a record with CRLF line ends as readRunRecord does: a torn last line ends it, a damaged line before it is named", async () => {
  await withDir(
    { "suite.yaml": REPLAY_SUITE, "data.jsonl": jsonl(CASES) },
    async (dir) => {
      const lines = await recordLines(dir);
      // Cut inside the fifth line, as a crash leaves it; then CRLF, as a
      // Windows checkout (git autocrlf) or an editor writes it.
      const torn = [...lines.slice(0, 4), lines[4]!.slice(0, 40)].join("\r\n");
      const lf = [...lines.slice(0, 4), lines[4]!.slice(0, 40)].join("\n");
      // Blank lines after the torn one (a copy, an editor) change nothing.
      for (
        const text of [torn, `${torn}\r\n`, `${torn}\r\n\r\n`, `${lf}\n\n`]
      ) {
        await Deno.writeTextFile(`${dir}/crlf.json`, text);
        const parsed = parseRunRecord(text, "crlf.json");
        const read = await readRunRecord(`${dir}/crlf.json`);
        assert.equal(parsed.complete, false);
        assert.equal(parsed.units.length, 3);
        assert.deepEqual(parsed.units, read.units);
      }
      // A line damaged before the last: both name it, not the line before.
      const text = withNaN(lines).join("\r\n");
      await Deno.writeTextFile(`${dir}/nan.json`, text);
      assert.throws(
        () => parseRunRecord(text, "nan.json"),
        /"nan\.json" line 3: it is not JSON/,
      );
      await assert.rejects(
        readRunRecord(`${dir}/nan.json`),
        /nan\.json" line 3: it is not JSON/,
      );
    },
  );
});
