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

// [what the dataset is, its lines, how many are invalid, what one of run's
// gate lines says]
const datasets: Array<[string, string[], number, RegExp]> = [
  [
    "a metric measured despite an invalid case",
    [
      '{"input": "q", "output": "a", "expected": "a"}',
      '{"input": "q", "output": "b", "expected": "a"}',
      '{"output": "b"}',
    ],
    1,
    /^evalpipe: gate failed: exact_match: mean 0\.5/,
  ],
  // Only here does invalidCasesText's wording reach a line.
  [
    "a metric the invalid cases left unmeasured",
    ['{"output": "b"}', '{"output": "c"}'],
    2,
    /^evalpipe: gate failed: exact_match: nothing measured: .*, 2 cases are invalid \(the first: "d\.jsonl" line 1: .*\): fix the dataset and run again$/,
  ],
];

for (const [what, records, invalidCount, says] of datasets) {
  Deno.test(`gateLine and invalidCasesText give a script the lines run prints on failed gates: ${what}`, async () => {
    await withTempDir(async (dir) => {
      await Deno.writeTextFile(
        join(dir, "d.jsonl"),
        [...records, ""].join("\n"),
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
      assert.ok(printed.some((l) => says.test(l)), run.stderr);
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
      assert.equal(text?.count, invalidCount);
      const lines = summary.gateFailures.map((f) => gateLine(f, text));
      assert.deepEqual(
        lines,
        run.stderr.split("\n").filter((l) => lines.includes(l)),
        run.stderr,
      );
      assert.deepEqual(lines.filter((l) => printed.includes(l)), printed);
    });
  });
}
