// Protocol v0 is unchanged by trajectories: a subprocess scorer of a trace
// unit reads `expected`, `input` and `output` (the final answer), and never
// the tool calls. Through a real run and a real scorer process.

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { parseUnit, scorerPayload } from "../../mod.ts";

Deno.test("a trace unit's protocol v0 payload has no trajectory: expected, input and the final answer only", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/traces`);
    await Deno.mkdir(`${dir}/scorers`);
    await Deno.writeTextFile(
      `${dir}/traces/t.json`,
      JSON.stringify({
        final_output: "Refunds within 30 days.",
        steps: [
          {
            tool: "verify_identity",
            input: { user: "u-1" },
            output: { ok: true },
          },
          { tool: "search_kb", input: { query: "refund" } },
        ],
      }),
    );
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      '{"id": "t", "trace": "traces/t.json", "expected": "30 days"}\n',
    );
    // The scorer keeps what it was sent, byte for byte.
    await Deno.writeTextFile(
      `${dir}/scorers/dump.sh`,
      "cat > payload.json\nprintf '{\"score\": 1}'\n",
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: cases.jsonl\ntarget: { type: trace }\nscorers:\n  - { type: subprocess, cmd: sh scorers/dump.sh }\n",
    );
    const out = await cli(["run", "suite.yaml", "--units", "units.jsonl"], dir);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(JSON.parse(out.stdout).value, 1);
    const payload = await Deno.readTextFile(`${dir}/payload.json`);
    assert.equal(
      payload,
      '{"expected":"30 days","input":"","output":"Refunds within 30 days."}',
    );
    // The unit itself does carry the trajectory: only the payload leaves it out.
    const unit = parseUnit(
      JSON.parse(await Deno.readTextFile(`${dir}/units.jsonl`)),
      "units#1",
    );
    assert.deepEqual(unit.tool_calls?.map((c) => c.name), [
      "verify_identity",
      "search_kb",
    ]);
    assert.equal(scorerPayload(unit), payload);
  });
});
