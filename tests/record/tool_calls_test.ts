// A unit's tool calls are part of its record: `unitLine` writes them after
// the output, `parseUnit` reads them back and refuses malformed ones, and
// `score --config` scores a trajectory from unit records on stdin.

import assert from "node:assert/strict";
import { cliWithStdin } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { CaseError, parseUnit, type Unit, unitLine } from "../../mod.ts";

const UNIT: Unit = {
  example_id: "d#1",
  unit_id: "d#1",
  input: "Weather?",
  output: "",
  tool_calls: [
    { name: "get_weather", arguments: { city: "Paris" }, id: "call_1" },
    { name: "send", arguments: '{"to": ', arguments_error: "Unexpected end" },
  ],
  target: { latency_ms: 3 },
};

Deno.test("unitLine writes tool_calls after the output, and parseUnit reads them back", () => {
  const line = unitLine(UNIT);
  assert.equal(
    line,
    '{"example_id":"d#1","unit_id":"d#1","input":"Weather?","output":"",' +
      '"tool_calls":[{"name":"get_weather","arguments":{"city":"Paris"},"id":"call_1"},' +
      '{"name":"send","arguments":"{\\"to\\": ","arguments_error":"Unexpected end"}],' +
      '"target":{"latency_ms":3}}',
  );
  assert.deepEqual(parseUnit(JSON.parse(line), "x#1"), UNIT);
  // Without tool calls, the line is as it always was.
  const { tool_calls: _calls, ...plain } = UNIT;
  assert.doesNotMatch(unitLine(plain), /tool_calls/);
});

Deno.test("parseUnit refuses malformed tool_calls, naming the field; a call without arguments has null", () => {
  const bad: [unknown, string, string][] = [
    [{}, "tool_calls", '"tool_calls" must be a list'],
    [[7], "tool_calls[0]", '"tool_calls[0]" must be an object'],
    [
      [{ name: "a" }, { arguments: {} }],
      "tool_calls[1].name",
      '"tool_calls[1].name" must be a string',
    ],
    [
      [{ name: "a", id: 3 }],
      "tool_calls[0].id",
      '"tool_calls[0].id" must be a string',
    ],
  ];
  for (const [calls, field, message] of bad) {
    assert.throws(
      () => parseUnit({ input: "q", output: "a", tool_calls: calls }, "x#1"),
      (e) =>
        e instanceof CaseError && e.field === field && e.message === message,
    );
  }
  const unit = parseUnit({
    input: "q",
    output: "a",
    tool_calls: [{ name: "a" }],
  }, "x#1");
  assert.deepEqual(unit.tool_calls, [{ name: "a", arguments: null }]);
});

Deno.test("score --config scores the trajectory of unit records read from stdin", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: cases.jsonl\ntarget: { type: trace }\nscorers:\n" +
        "  - type: trajectory\n    rules:\n      - must_call: get_weather\n        with: { city: { equals: Paris } }\n",
    );
    const input = unitLine(UNIT) + "\n" +
      JSON.stringify({ input: "q", output: "no tools" }) + "\n";
    const out = await cliWithStdin(
      ["score", "--config", "suite.yaml"],
      dir,
      input,
    );
    assert.equal(out.code, 0, out.stderr);
    const [called, none] = out.stdout.trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    assert.equal(called.value, 1);
    assert.equal(called.unit_id, "d#1");
    assert.equal(none.status, "non_evaluable");
  });
});
