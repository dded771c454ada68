// A real three-target matrix run for the reports' tests.

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";

// "up" answers in capitals, "same" repeats the input, "odd" answers in
// capitals for a and b and a hostile line (shown as text) for the rest:
// up passes d#1, d#2, d#4; same d#3; odd d#1, d#2.
const DATA = '{"input":"a","expected":"A"}\n{"input":"b","expected":"B"}\n' +
  '{"input":"c","expected":"c"}\n{"input":"d","expected":"D"}\n';
const py = (expr: string) =>
  JSON.stringify(
    `python3 -c 'import sys,json; i=json.load(sys.stdin)["input"]; print(${expr})'`,
  );
export const SUITE = `dataset: d.jsonl
targets:
  up: { type: subprocess, cmd: ${py("i.upper()")} }
  same: { type: subprocess, cmd: ${py("i")} }
  odd: { type: subprocess, cmd: ${
  py(
    'i.upper() if i in "ab" else "<img src=x onerror=window.__pwned=1>\\u202eevil"',
  )
} }
scorers: [{ type: exact_match }]
`;

/**
 * Runs the suite (with `extra` config lines) as a 3-target matrix into
 * `r.json` and `r.html`, and any other report `flags` ask for.
 */
export async function matrixRun(
  dir: string,
  flags: string[] = [],
  extra = "",
) {
  await Deno.writeTextFile(`${dir}/d.jsonl`, DATA);
  await Deno.writeTextFile(`${dir}/s.yaml`, SUITE + extra);
  const run = await cli(
    [
      "run",
      "s.yaml",
      "--matrix",
      "up,same,odd",
      "--record",
      "r.json",
      "--html",
      "r.html",
      ...flags,
    ],
    dir,
  );
  return run;
}

/** The rows of the comparison table `formatComparison` prints, cell by cell. */
export function textRows(stderr: string): string[][] {
  const lines = stderr.split("\n");
  const head = lines.findIndex((l) =>
    l.startsWith("metric ") && /Δ vs/.test(l)
  );
  assert.ok(head >= 0, stderr);
  const out: string[][] = [];
  for (const line of lines.slice(head + 1)) {
    if (!line.startsWith("exact_match")) break;
    out.push(line.split(/ {2,}/));
  }
  return out;
}
