// The agent-trace example runs offline (the network denied) and scores what
// its README says: the answer, the path and the calls of five recorded
// traces, native and OTel / OpenInference.

import assert from "node:assert/strict";
import { CLI } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

Deno.test("examples/agent-trace runs without the network and scores the answer, the path and the calls", async () => {
  await withTempDir(async (dir) => {
    const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--deny-net",
        CLI,
        "run",
        "examples/agent-trace/evalpipe.yaml",
        "--units",
        `${dir}/units.jsonl`,
      ],
      cwd: ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const err = new TextDecoder().decode(stderr);
    assert.equal(code, 0, err);
    const scores = new TextDecoder().decode(stdout).trim().split("\n")
      .map((l) => JSON.parse(l));
    const by = new Map(
      scores.map((s) => [`${s.example_id.split("#")[1]} ${s.metric}`, s]),
    );
    const value = (key: string) => by.get(key)?.value;
    assert.equal(scores.length, 15);
    assert.ok(scores.every((s) => s.status === "scored"), err);
    // The answer.
    assert.deepEqual(
      [
        "boots-native",
        "tent-otel",
        "stove-openinference",
        "jacket-unverified-native",
        "lantern-loop-native",
      ]
        .map((id) => value(`${id} refund_window`)),
      [1, 1, 0, 1, 0],
    );
    // The path: 2 of 5 rules fail on the jacket, 3 of 5 on the lantern.
    assert.equal(value("boots-native refund_policy"), 1);
    assert.equal(value("tent-otel refund_policy"), 1);
    assert.equal(value("stove-openinference refund_policy"), 1);
    assert.equal(value("jacket-unverified-native refund_policy"), 0.6);
    assert.equal(value("lantern-loop-native refund_policy"), 0.4);
    assert.match(
      by.get("jacket-unverified-native refund_policy").reason,
      /rule 3 \(must_not_call issue_refund before verify_identity\): step 2 calls "issue_refund" before the first "verify_identity" \(step 3\)/,
    );
    // The calls: recall 3/4 gives F1 6/7; precision 2/6 gives 1/2.
    assert.equal(value("tent-otel tool_call_f1"), 6 / 7);
    assert.equal(value("lantern-loop-native tool_call_f1"), 0.5);
    assert.equal(by.get("lantern-loop-native tool_call_f1").passed, false);
    assert.equal(value("jacket-unverified-native tool_call_f1"), 1);
    // What the exports' spans tell: tokens and latency.
    const units = new Map(
      (await Deno.readTextFile(`${dir}/units.jsonl`)).trim().split("\n")
        .map((l) => JSON.parse(l)).map((u) => [u.example_id.split("#")[1], u]),
    );
    const tent = units.get("tent-otel");
    assert.deepEqual(tent.target.usage, {
      prompt_tokens: 460,
      completion_tokens: 102,
      total_tokens: 562,
    });
    assert.equal(tent.target.latency_ms, 6200);
    assert.deepEqual(tent.tool_calls[0], {
      name: "verify_identity",
      arguments: { customer: "c-1207" },
      output: { verified: true },
      id: "call_v1",
    });
    assert.deepEqual(units.get("stove-openinference").target.usage, {
      prompt_tokens: 280,
      completion_tokens: 55,
      total_tokens: 335,
    });
    assert.match(
      units.get("lantern-loop-native").output,
      /^\{"steps":\[\{"tool":"search_policy"/,
    );
  });
});
