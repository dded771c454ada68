// A script that runs a suite prints the gate lines `run` prints, from
// mod.ts alone.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  gateLine,
  type InvalidCase,
  invalidCasesText,
  runSuite,
} from "../../mod.ts";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

Deno.test("gateLine and invalidCasesText give a script the lines run prints on failed gates, invalid cases included", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      join(dir, "d.jsonl"),
      [
        '{"input": "q", "output": "a", "expected": "a"}',
        '{"input": "q", "output": "b", "expected": "a"}',
        '{"output": "b"}',
        "",
      ].join("\n"),
    );
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      [
        "dataset: d.jsonl",
        "target: { type: replay }",
        "scorers: [{ type: exact_match }, { type: contains, value: zzz, name: z }]",
        "gates:",
        "  exact_match: { min_mean: 0.9 }",
        "",
      ].join("\n"),
    );
    const run = await cli(["run", "suite.yaml"], dir);
    assert.equal(run.code, 2, run.stderr);
    const printed = run.stderr.split("\n").filter((l) =>
      l.startsWith("evalpipe: gate failed: ")
    );
    assert.equal(printed.length, 1, run.stderr);
    let first: InvalidCase | undefined;
    const summary = await runSuite(join(dir, "suite.yaml"), {
      sink: new WritableStream(),
      onInvalidRecord: (_message, _example, invalid) => {
        first ??= invalid;
      },
    });
    const text = invalidCasesText(
      first === undefined
        ? undefined
        : { count: summary.invalidRecords, first },
    );
    assert.equal(text?.count, 1);
    const lines = summary.gateFailures.map((f) => gateLine(f, text));
    assert.deepEqual(
      lines,
      run.stderr.split("\n").filter((l) => lines.includes(l)),
      run.stderr,
    );
    assert.deepEqual(lines.filter((l) => printed.includes(l)), printed);
  });
});
