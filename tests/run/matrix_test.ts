import assert from "node:assert/strict";
import { CLI, cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

// Three cases; "up" answers in capitals, "same" repeats the input: "up"
// passes d#1 and d#2, "same" passes d#3 only.
const DATA = '{"input":"a","expected":"A"}\n{"input":"b","expected":"B"}\n' +
  '{"input":"c","expected":"c"}\n';
const UP =
  `python3 -c 'import sys,json; print(json.load(sys.stdin)["input"].upper())'`;
const SAME =
  `python3 -c 'import sys,json; print(json.load(sys.stdin)["input"])'`;
const TARGETS = `targets:\n  up: { type: subprocess, cmd: ${
  JSON.stringify(UP)
} }\n  same: { type: subprocess, cmd: ${JSON.stringify(SAME)} }\n`;
const SCORERS = "scorers: [{ type: exact_match }]\n";

async function suite(dir: string, extra = ""): Promise<void> {
  await Deno.writeTextFile(`${dir}/d.jsonl`, DATA);
  await Deno.writeTextFile(
    `${dir}/s.yaml`,
    "dataset: d.jsonl\n" + TARGETS + SCORERS + extra,
  );
}

function lines(text: string): Record<string, unknown>[] {
  return text.trim().split("\n").map((l) => JSON.parse(l));
}

Deno.test("run --matrix runs each case through each target; units and Scores name their target", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    const out = await cli(
      ["run", "s.yaml", "--matrix", "up,same", "--units", "u.ndjson"],
      dir,
    );
    assert.equal(out.code, 0, out.stderr);
    const scores = lines(out.stdout);
    assert.deepEqual(
      scores.map((s) => `${s.unit_id} ${s.target_name} ${s.value}`),
      [
        "d.jsonl#1~up up 1",
        "d.jsonl#1~same same 0",
        "d.jsonl#2~up up 1",
        "d.jsonl#2~same same 0",
        "d.jsonl#3~up up 0",
        "d.jsonl#3~same same 1",
      ],
    );
    // The example id stays the case's: the targets pair by it.
    assert.ok(
      scores.every((s) => String(s.unit_id).startsWith(`${s.example_id}~`)),
    );
    // target_name stands after the ids, in the Score's key order.
    assert.deepEqual(Object.keys(scores[0]!).slice(6, 9), [
      "example_id",
      "unit_id",
      "target_name",
    ]);
    const units = lines(await Deno.readTextFile(`${dir}/u.ndjson`));
    assert.deepEqual(
      units.map((u) => `${u.unit_id} ${u.target_name} ${u.output}`),
      [
        "d.jsonl#1~up up A",
        "d.jsonl#1~same same a",
        "d.jsonl#2~up up B",
        "d.jsonl#2~same same b",
        "d.jsonl#3~up up C",
        "d.jsonl#3~same same c",
      ],
    );
    // The summary: a row per target and metric, then the comparison.
    assert.match(out.stderr, /\nup: exact_match {4}0\.667 \[0\.000, 1\.000\]/);
    assert.match(
      out.stderr,
      /\nsame: exact_match {2}0\.333 \[0\.000, 1\.000\]/,
    );
    assert.match(
      out.stderr,
      /exact_match {2}same vs up {2}0\.333 \[0\.000, 1\.000\] {2}-0\.333 \[-1\.000, \+1\.000\] {2}3 {6}2 {10}1/,
    );
  });
});

Deno.test("run with epochs in a matrix suffixes the epoch, then the target", async () => {
  await withTempDir(async (dir) => {
    await suite(dir, "matrix: [same, up]\nepochs: 2\n");
    const out = await cli(["run", "s.yaml"], dir);
    assert.equal(out.code, 0, out.stderr);
    const ids = lines(out.stdout).map((s) => s.unit_id);
    assert.deepEqual(ids.slice(0, 4), [
      "d.jsonl#1@1~same",
      "d.jsonl#1@2~same",
      "d.jsonl#1@1~up",
      "d.jsonl#1@2~up",
    ]);
  });
});

Deno.test("run --target NAME writes the Scores a config with that one target writes", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    await Deno.writeTextFile(
      `${dir}/one.yaml`,
      `dataset: d.jsonl\ntarget: { type: subprocess, cmd: ${
        JSON.stringify(UP)
      } }\n` + SCORERS,
    );
    const picked = await cli(["run", "s.yaml", "--target", "up"], dir);
    const single = await cli(["run", "one.yaml"], dir);
    assert.equal(picked.code, 0, picked.stderr);
    assert.equal(picked.stdout, single.stdout);
    // Today's shape: no target_name, the ids of one target.
    assert.equal(
      single.stdout.split("\n")[0],
      '{"metric":"exact_match","status":"scored","validity":"valid","value":1,"passed":true,"evaluator_version":"exact_match@1","example_id":"d.jsonl#1","unit_id":"d.jsonl#1","diagnostics":[],"evidence_refs":[]}',
    );
    assert.doesNotMatch(single.stderr, /target up:|vs/);
  });
});

Deno.test("run refuses a choice of targets the config cannot give, before any call", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    const none = await cli(["run", "s.yaml"], dir);
    assert.equal(none.code, 2);
    assert.match(
      none.stderr,
      /has several targets: pick one with --target NAME/,
    );
    const unknown = await cli(["run", "s.yaml", "--matrix", "up,down"], dir);
    assert.equal(unknown.code, 2);
    assert.match(
      unknown.stderr,
      /--matrix names "down", which is not a target in "s\.yaml"; the targets are "up", "same"/,
    );
    assert.equal(unknown.stdout, "");
  });
});

Deno.test("run checks the gates per target of a matrix", async () => {
  await withTempDir(async (dir) => {
    await suite(dir, "gates:\n  exact_match: { min_mean: 0.5 }\n");
    const out = await cli(["run", "s.yaml", "--matrix", "up,same"], dir);
    assert.equal(out.code, 1);
    assert.match(
      out.stderr,
      /gate failed: same: exact_match: mean 0\.333333 < min_mean 0\.5/,
    );
    assert.doesNotMatch(out.stderr, /gate failed: up:/);
  });
});

Deno.test("diff of one matrix record prints the comparison of its targets", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    const run = await cli(
      [
        "run",
        "s.yaml",
        "--matrix",
        "up,same",
        "--record",
        "r.json",
        "--out",
        "s.ndjson",
      ],
      dir,
    );
    assert.equal(run.code, 0, run.stderr);
    const out = await cli(["diff", "r.json"], dir);
    assert.equal(out.code, 0, out.stderr);
    // The Scores file says the same: its sidecar keeps the value ranges.
    const fromScores = await cli(["diff", "s.ndjson"], dir);
    assert.equal(fromScores.stdout, out.stdout);
    const [line] = lines(out.stdout) as {
      kind: string;
      metric: string;
      targets: { target: string; mean: number; ci95: number[] }[];
      versus: {
        target: string;
        against: string;
        pairs: number;
        delta: number;
        ci95: number[];
        ci95_unclamped: number[];
        newly_failing: number;
        newly_passing: number;
      }[];
    }[];
    assert.equal(line!.kind, "comparison");
    assert.deepEqual(line!.targets.map((t) => t.target), ["up", "same"]);
    assert.equal(line!.targets[0]!.mean, 2 / 3);
    assert.equal(line!.targets[1]!.mean, 1 / 3);
    // Clamped to exact_match's 0..1, as the run did.
    assert.deepEqual(line!.targets[0]!.ci95, [0, 1]);
    const v = line!.versus[0]!;
    // Differences −1, −1, +1: mean −1/3; variance ((2/3)²·2 + (4/3)²)/2 =
    // 4/3; stderr √(4/3 / 3) = 2/3; t(0.975, 2) = 4.302653, half 2.868435.
    assert.equal(v.against, "up");
    assert.equal(v.pairs, 3);
    assert.ok(Math.abs(v.delta + 1 / 3) < 1e-12);
    assert.ok(Math.abs(v.ci95_unclamped[0]! - (-1 / 3 - 2.868435)) < 1e-5);
    assert.ok(Math.abs(v.ci95_unclamped[1]! - (-1 / 3 + 2.868435)) < 1e-5);
    // A difference of exact_match (0..1) lies within −1..1.
    assert.deepEqual(v.ci95, [-1, 1]);
    assert.equal(v.newly_failing, 2);
    assert.equal(v.newly_passing, 1);
    assert.match(out.stderr, /same vs up/);
    // Two matrix records pair target by target.
    const same = await cli(["diff", "r.json", "r.json"], dir);
    assert.equal(same.code, 0);
    assert.deepEqual(
      lines(same.stdout).map((l) => `${l.target_name} ${l.pairs}`),
      ["up 3", "same 3"],
    );
    // One file of one target is no comparison.
    await cli(["run", "s.yaml", "--target", "up", "--out", "one.ndjson"], dir);
    const single = await cli(["diff", "one.ndjson"], dir);
    assert.equal(single.code, 2);
    assert.match(single.stderr, /has Scores of one target/);
  });
});

/**
 * A loopback chat completions server: model "up" answers each case's input
 * when `right.up` is set, else "wrong"; model "down" alike by `right.down`.
 */
function chatServer(right: { up: boolean; down: boolean }) {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      const body = await request.json();
      const model = body.model as "up" | "down";
      const input = body.messages.at(-1).content;
      return Response.json({
        model,
        choices: [{
          index: 0,
          message: {
            role: "assistant",
            content: right[model] ? input : "wrong",
          },
          finish_reason: "stop",
        }],
        usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
      });
    },
  );
  return { server, url: `http://127.0.0.1:${server.addr.port}/v1` };
}

Deno.test("diff of two matrix runs compares target by target: one target's regression is not averaged away by another's gain", async () => {
  const right = { up: false, down: true };
  const chat = chatServer(right);
  try {
    await withTempDir(async (dir) => {
      const data = Array.from(
        { length: 6 },
        (_, i) => JSON.stringify({ input: `q${i}`, expected: `q${i}` }),
      ).join("\n") + "\n";
      await Deno.writeTextFile(`${dir}/d.jsonl`, data);
      const target = (model: string) =>
        `{ type: openai, base_url: "${chat.url}", model: ${model} }`;
      await Deno.writeTextFile(
        `${dir}/s.yaml`,
        `dataset: d.jsonl\ntargets:\n  up: ${target("up")}\n  down: ${
          target("down")
        }\nmatrix: [up, down]\n${SCORERS}`,
      );
      const a = await cli(
        ["run", "s.yaml", "--out", "a.ndjson", "--record", "a.json"],
        dir,
      );
      assert.equal(a.code, 0, a.stderr);
      // Now "up" answers every case and "down" none: the pooled mean is
      // unchanged, but "down" fell on every case.
      right.up = true;
      right.down = false;
      const b = await cli(
        [
          "run",
          "s.yaml",
          "--cache",
          "live",
          "--out",
          "b.ndjson",
          "--record",
          "b.json",
        ],
        dir,
      );
      assert.equal(b.code, 0, b.stderr);
      for (const [x, y] of [["a.json", "b.json"], ["a.ndjson", "b.ndjson"]]) {
        const out = await cli(["diff", x!, y!, "--fail-on-regression"], dir);
        assert.equal(out.code, 1, out.stderr);
        const got = lines(out.stdout);
        assert.deepEqual(
          got.map((l) => [l.metric, l.target_name, l.pairs, l.delta]),
          [["exact_match", "up", 6, 1], ["exact_match", "down", 6, -1]],
        );
        assert.match(
          out.stderr,
          /evalpipe: down: exact_match got significantly worse: delta -1\.000/,
        );
        assert.doesNotMatch(out.stderr, /up: exact_match got significantly/);
        assert.match(out.stderr, /^down: exact_match +6 /m);
        assert.match(out.stderr, /Worst regressions of down: exact_match:/);
      }
    });
  } finally {
    await chat.server.shutdown();
  }
});

Deno.test("run --baseline of a matrix gives each target's paired difference and names the target that got worse", async () => {
  const right = { up: false, down: true };
  const chat = chatServer(right);
  try {
    await withTempDir(async (dir) => {
      const data = Array.from(
        { length: 6 },
        (_, i) => JSON.stringify({ input: `q${i}`, expected: `q${i}` }),
      ).join("\n") + "\n";
      await Deno.writeTextFile(`${dir}/d.jsonl`, data);
      const target = (model: string) =>
        `{ type: openai, base_url: "${chat.url}", model: ${model} }`;
      await Deno.writeTextFile(
        `${dir}/s.yaml`,
        `dataset: d.jsonl\ntargets:\n  up: ${target("up")}\n  down: ${
          target("down")
        }\nmatrix: [up, down]\n${SCORERS}`,
      );
      const saved = await cli(
        ["run", "s.yaml", "--save-baseline", "main"],
        dir,
      );
      assert.equal(saved.code, 0, saved.stderr);
      right.up = true;
      right.down = false;
      const now = await cli(
        [
          "run",
          "s.yaml",
          "--cache",
          "live",
          "--baseline",
          "main",
          "--record",
          "r.json",
          "--markdown",
          "r.md",
        ],
        dir,
      );
      assert.equal(now.code, 1, now.stderr);
      assert.match(now.stderr, /^ {2}up: exact_match: Δ \+1\.000/m);
      assert.match(
        now.stderr,
        /^ {2}down: exact_match: Δ -1\.000 \[-1\.000, -1\.000\] {2}significantly worse$/m,
      );
      assert.match(now.stderr, /down: exact_match significantly worse/);
      const record = JSON.parse(await Deno.readTextFile(`${dir}/r.json`));
      assert.deepEqual(record.baseline.worse, ["down: exact_match"]);
      assert.deepEqual(
        record.baseline.metrics.map((m: Record<string, unknown>) =>
          `${m.target_name} ${m.metric} ${m.delta}`
        ),
        ["up exact_match 1", "down exact_match -1"],
      );
      // The report of the record reads the same.
      const md = await Deno.readTextFile(`${dir}/r.md`);
      assert.match(
        md,
        /\| down\\: exact\\_match \| 6 \|.*❌ significantly worse \|/,
      );
      const again = await cli(["report", "r.json", "--markdown", "r2.md"], dir);
      assert.equal(again.code, 0, again.stderr);
      assert.match(
        await Deno.readTextFile(`${dir}/r2.md`),
        /\| down\\: exact\\_match \| 6 \|.*❌ significantly worse \|/,
      );
    });
  } finally {
    await chat.server.shutdown();
  }
});

/** A loopback service with two paths of different latency, counting calls in flight. */
function service(latency: Record<string, number>) {
  const inFlight: Record<string, number> = {};
  const most: Record<string, number> = {};
  let mostTotal = 0;
  let total = 0;
  let calls = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      const path = new URL(request.url).pathname.slice(1);
      const body = await request.json();
      calls++;
      inFlight[path] = (inFlight[path] ?? 0) + 1;
      total++;
      most[path] = Math.max(most[path] ?? 0, inFlight[path]!);
      mostTotal = Math.max(mostTotal, total);
      await new Promise((r) => setTimeout(r, latency[path] ?? 0));
      inFlight[path]!--;
      total--;
      return Response.json({ answer: String(body.input).toUpperCase() });
    },
  );
  return {
    server,
    url: (path: string) => `http://127.0.0.1:${server.addr.port}/${path}`,
    most,
    get mostTotal() {
      return mostTotal;
    },
    get calls() {
      return calls;
    },
  };
}

Deno.test("run --matrix gives each target the run's concurrency, side by side, and shares the cache", async () => {
  const svc = service({ fast: 5, slow: 60 });
  try {
    await withTempDir(async (dir) => {
      const data = Array.from(
        { length: 8 },
        (_, i) => JSON.stringify({ input: `q${i}`, expected: `Q${i}` }),
      ).join("\n") + "\n";
      await Deno.writeTextFile(`${dir}/d.jsonl`, data);
      const http = (path: string) =>
        `{ type: http, url: "${
          svc.url(path)
        }", body: { input: "{{input}}" }, output: answer }`;
      await Deno.writeTextFile(
        `${dir}/s.yaml`,
        `dataset: d.jsonl\ntargets:\n  fast: ${http("fast")}\n  slow: ${
          http("slow")
        }\nmatrix: [fast, slow]\n${SCORERS}concurrency: 2\n`,
      );
      const first = await cli(["run", "s.yaml"], dir);
      assert.equal(first.code, 0, first.stderr);
      assert.equal(svc.calls, 16);
      // Each target at most 2 at once, and both at once: more than 2 in all.
      assert.ok(
        svc.most.fast! <= 2 && svc.most.slow! <= 2,
        JSON.stringify(svc.most),
      );
      assert.equal(svc.most.slow, 2);
      assert.ok(svc.mostTotal > 2, String(svc.mostTotal));
      assert.match(first.stderr, /target cache: 0 hits, 16 calls/);
      // One cache for both: a second run calls nothing.
      const again = await cli(["run", "s.yaml"], dir);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(svc.calls, 16);
      assert.match(again.stderr, /target cache: 16 hits, 0 calls/);
      assert.equal(
        lines(again.stdout).filter((s) => s.target_name === "slow").length,
        8,
      );
    });
  } finally {
    await svc.server.shutdown();
  }
});

Deno.test("run --matrix --html shows each target and its comparison with the first", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    const out = await cli(
      ["run", "s.yaml", "--matrix", "up,same", "--html", "r.html"],
      dir,
    );
    assert.equal(out.code, 0, out.stderr);
    const html = await Deno.readTextFile(`${dir}/r.html`);
    const m =
      /<script type="application\/json" id="report-data">([^]*?)<\/script>/
        .exec(html);
    assert.ok(m !== null);
    const data = JSON.parse(m[1]!);
    assert.equal(data.runs.length, 2);
    assert.match(JSON.stringify(data.runs[0]), /\(target up\)/);
    assert.match(JSON.stringify(data.runs[1]), /\(target same\)/);
    // The paired difference of same against up, as the comparison has it.
    const versus = data.comparison[0].versus[0];
    assert.equal(versus.pairs, 3);
    assert.equal(versus.newly_failing, 2);
    assert.equal(versus.newly_passing, 1);
    // One row per case, both targets' units side by side.
    assert.equal(data.rows.length, 3);
  });
});

Deno.test("aggregate of a matrix run's Scores gives each target's Aggregates, then the comparison", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    const run = await cli(
      ["run", "s.yaml", "--matrix", "up,same", "--out", "s.ndjson"],
      dir,
    );
    assert.equal(run.code, 0, run.stderr);
    const out = await cli(["aggregate", "s.ndjson", "--range", "0..1"], dir);
    assert.equal(out.code, 0, out.stderr);
    const [up, same, comparison] = lines(out.stdout);
    assert.equal(up!.target_name, "up");
    assert.equal(up!.mean, 2 / 3);
    assert.equal(same!.target_name, "same");
    assert.equal(same!.mean, 1 / 3);
    assert.equal(comparison!.kind, "comparison");
    const versus = (comparison!.versus as { delta: number }[])[0]!;
    assert.ok(Math.abs(versus.delta + 1 / 3) < 1e-12);
    // Its own output read back: the comparison line is skipped, not malformed.
    await Deno.writeTextFile(`${dir}/agg.ndjson`, out.stdout);
    const again = await cli(["aggregate", "agg.ndjson"], dir);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(lines(again.stdout).length, 2);
  });
});

Deno.test("score --config of a matrix run's units stamps each Score with its unit's target", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    const run = await cli(
      ["run", "s.yaml", "--matrix", "up,same", "--units", "u.ndjson"],
      dir,
    );
    assert.equal(run.code, 0, run.stderr);
    const again = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CLI, "score", "--config", "s.yaml"],
      cwd: dir,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = again.stdin.getWriter();
    await writer.write(await Deno.readFile(`${dir}/u.ndjson`));
    await writer.close();
    const out = await again.output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    // The same Scores, the target included, as the run wrote them.
    assert.equal(new TextDecoder().decode(out.stdout), run.stdout);
  });
});
