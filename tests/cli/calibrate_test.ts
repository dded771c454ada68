// `evalpipe calibrate` end to end: the real CLI, a suite whose judge talks to
// a loopback server speaking the OpenAI chat completions API, and a dataset
// of recorded outputs with human labels.

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { fakeLlm, lastMessage, reply } from "../_fake_llm.ts";
import { withTempDir } from "../_proc.ts";

const SUPPORTED = '{"claims": [{"claim": "x", "supported": true}]}';
const UNSUPPORTED = '{"claims": [{"claim": "x", "supported": false}]}';

/** A judge server: an output `pass-...` is all supported, `fail-...` none, `junk-...` prose. */
function judgeServer() {
  return fakeLlm({
    handler(request) {
      const answer = /Answer:\n(\w+)-/.exec(lastMessage(request))?.[1];
      if (answer === "pass") return reply.ok(SUPPORTED);
      if (answer === "fail") return reply.ok(UNSUPPORTED);
      return reply.ok("I cannot say.");
    },
  });
}

interface Row {
  output: string;
  human?: unknown;
  noOutput?: boolean;
}

async function suite(dir: string, baseUrl: string, rows: Row[]) {
  await Deno.writeTextFile(
    `${dir}/suite.yaml`,
    "dataset: cases.jsonl\ntarget: { type: replay }\nscorers:\n" +
      `  - { type: faithfulness, model: judge, base_url: "${baseUrl}" }\n` +
      "  - { type: contains, value: pass }\n",
  );
  await Deno.writeTextFile(
    `${dir}/cases.jsonl`,
    rows.map((r, i) =>
      JSON.stringify({
        id: `c${i + 1}`,
        input: "q",
        context: ["some passage"],
        ...(r.noOutput ? {} : { output: r.output }),
        ...(r.human !== undefined ? { metadata: { human: r.human } } : {}),
      }) + "\n"
    ).join(""),
  );
}

/** Wikipedia's Cohen's kappa example as cases: human rows, judge columns. */
function wikipediaRows(): Row[] {
  const rows: Row[] = [];
  const add = (n: number, human: string, judge: string) => {
    for (let i = 0; i < n; i++) {
      rows.push({
        output: `${judge}-${rows.length}`,
        // The contains scorer passes on "pass" in the output, so it agrees
        // with the judge; its own label says the opposite of the human's
        // faithfulness label, to tell the object form apart.
        human: {
          faithfulness: human,
          contains: human === "pass" ? "fail" : "pass",
        },
      });
    }
  };
  add(20, "pass", "pass");
  add(5, "pass", "fail");
  add(10, "fail", "pass");
  add(15, "fail", "fail");
  return rows;
}

Deno.test("calibrate reports agreement and Cohen's kappa per judge, matching Wikipedia's example", async () => {
  await using server = judgeServer();
  await withTempDir(async (dir) => {
    await suite(dir, server.baseUrl, wikipediaRows());
    const out = await cli(["calibrate", "suite.yaml"], dir);
    assert.equal(out.code, 0, out.stderr);
    const lines = out.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => l.metric), ["faithfulness", "contains"]);
    const [f, c] = lines;
    assert.equal(f.n, 50);
    assert.match(f.evaluator_version, /^faithfulness@/);
    assert.deepEqual(f.labels, ["pass", "fail"]);
    assert.deepEqual(f.confusion, [[20, 5], [10, 15]]);
    // By hand: p_o = 35/50, p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5, kappa 0.4,
    // and its standard error sqrt(0.016128) (tests/aggregate/agreement_test.ts).
    assert.ok(Math.abs(f.agreement - 0.7) < 1e-12);
    assert.ok(Math.abs(f.chance_agreement - 0.5) < 1e-12);
    assert.ok(Math.abs(f.kappa - 0.4) < 1e-12);
    assert.ok(Math.abs(f.kappa_stderr - Math.sqrt(0.016128)) < 1e-12);
    assert.deepEqual(
      f.kappa_ci95.map((x: number) => x.toFixed(3)),
      ["0.151", "0.649"],
    );
    assert.equal(f.per_label[0].label, "pass");
    assert.equal(f.per_label[0].human, 25);
    assert.equal(f.per_label[0].judge, 30);
    assert.equal(f.disagreements.length, 15);
    assert.deepEqual(f.disagreements[0], {
      example_id: "cases.jsonl#c21",
      human: "pass",
      judge: "fail",
      reason: '0 of 1 claim supported by the context; unsupported: "x"',
    });
    // The contains scorer agrees with the judge, so with its own labels
    // (the humans' flipped) it is the mirror image: kappa -0.4.
    assert.deepEqual(c.confusion, [[10, 15], [20, 5]]);
    assert.ok(Math.abs(c.kappa + 0.4) < 1e-12);
    // The table on stderr.
    assert.match(
      out.stderr,
      /faithfulness: n 50, agreement 0\.700 \[0\.562, 0\.809\], kappa 0\.400 \[0\.151, 0\.649\]/,
    );
    assert.match(
      out.stderr,
      /human \\ judge\s+pass\s+fail\n\s+pass\s+20\s+5\n\s+fail\s+10\s+15/,
    );
    assert.equal(server.count, 50, "one judge call per case");
  });
});

Deno.test("calibrate --metric picks a judge; cases without label or output, bad labels and judge errors are counted and said", async () => {
  await using server = judgeServer();
  await withTempDir(async (dir) => {
    await suite(dir, server.baseUrl, [
      { output: "pass-1", human: "pass" },
      { output: "fail-2", human: false },
      { output: "fail-3", human: "PASS" },
      { output: "pass-4" },
      { output: "junk-5", human: "pass" },
      { output: "pass-6", human: "maybe" },
      { output: "", noOutput: true, human: "pass" },
    ]);
    const out = await cli(
      ["calibrate", "suite.yaml", "--metric", "faithfulness"],
      dir,
    );
    assert.equal(out.code, 2, out.stderr);
    const lines = out.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(lines.length, 1);
    const [f] = lines;
    assert.equal(f.metric, "faithfulness");
    assert.equal(f.n, 3);
    assert.deepEqual(f.confusion, [[1, 1], [0, 1]]);
    // Case 4 has no label, 5 is a judge error, 6's label is unreadable,
    // 7 has no output to score (blocked).
    assert.equal(f.unlabelled, 2);
    assert.equal(f.errors, 1);
    assert.equal(f.blocked, 1);
    assert.match(
      out.stderr,
      /Case "cases\.jsonl#c6": "metadata\.human" is "maybe"; a human label is "pass" or "fail"/,
    );
    assert.match(
      out.stderr,
      /Case "cases\.jsonl#c7" has no "output": calibrate scores recorded outputs/,
    );
    assert.match(out.stderr, /left out: 2 unlabelled, 1 error, 1 blocked/);
  });
});

Deno.test("calibrate: an unknown --metric is a usage error; no labelled case exits 2", async () => {
  await using server = judgeServer();
  await withTempDir(async (dir) => {
    await suite(dir, server.baseUrl, [{ output: "pass-1" }]);
    const unknown = await cli(
      ["calibrate", "suite.yaml", "--metric", "faithful"],
      dir,
    );
    assert.equal(unknown.code, 2);
    assert.match(
      unknown.stderr,
      /--metric "faithful" names no scorer of "suite\.yaml"; its metrics are "faithfulness", "contains"/,
    );
    const none = await cli(["calibrate", "suite.yaml"], dir);
    assert.equal(none.code, 2);
    assert.match(
      none.stderr,
      /No case has both a measured Score and a human label/,
    );
    const line = JSON.parse(none.stdout.trim().split("\n")[0]!);
    assert.equal(line.n, 0);
    assert.equal(line.kappa, null);
    const missing = await cli(["calibrate"], dir);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /calibrate takes one config file/);
  });
});

Deno.test("calibrate says a persistent scorer's shifted verdicts and exits 2, as run and score do", async () => {
  await withTempDir(async (dir) => {
    // A banner on stdout: each case gets the verdict of the one before.
    await Deno.writeTextFile(
      `${dir}/judge.py`,
      `import json, sys
print("Loading model...", flush=True)
for line in sys.stdin:
    case = json.loads(line)
    print(json.dumps({"score": 1 if case["output"] == "good" else 0}), flush=True)
`,
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: cases.jsonl\ntarget: { type: replay }\nscorers:\n" +
        "  - { type: subprocess, cmd: python3 judge.py, persistent: true }\n",
    );
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      [["good", "pass"], ["bad", "fail"], ["good", "pass"]].map(([o, h], i) =>
        JSON.stringify({
          id: `c${i + 1}`,
          input: "q",
          output: o,
          metadata: { human: h },
        })
      ).join("\n") + "\n",
    );
    const out = await cli(["calibrate", "suite.yaml"], dir);
    assert.equal(out.code, 2, out.stderr);
    assert.equal(JSON.parse(out.stdout).metric, "judge");
    assert.match(
      out.stderr,
      /persistent scorer "judge" wrote 1 line on stdout that no case was waiting for: its verdicts were likely shifted/,
    );
  });
});

Deno.test("calibrate says an unreadable label once, however many scorers it applies to", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: cases.jsonl\ntarget: { type: replay }\nscorers:\n" +
        "  - { type: contains, value: ok }\n  - { type: exact_match, value: ok }\n",
    );
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      ['"pass"', '"maybe"'].map((h, i) =>
        `{"id": "c${
          i + 1
        }", "input": "q", "output": "ok", "metadata": {"human": ${h}}}`
      ).join("\n") + "\n",
    );
    const out = await cli(["calibrate", "suite.yaml"], dir);
    assert.equal(out.code, 2, out.stderr);
    assert.equal(
      out.stderr.match(/Case "cases\.jsonl#c2": "metadata\.human" is "maybe"/g)
        ?.length,
      1,
      out.stderr,
    );
  });
});
