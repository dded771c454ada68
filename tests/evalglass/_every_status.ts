/**
 * A real run of `tests/fixtures/evalglass/every_status/` through the CLI,
 * with its judge on loopback: the Scores file, the RunRecord and what the
 * run said.
 */

import { cli, type Outcome } from "../_cli.ts";
import { fakeLlm, lastMessage, reply } from "../_fake_llm.ts";

const FIXTURE = new URL("../fixtures/evalglass/every_status/", import.meta.url);

async function copy(from: URL, to: string): Promise<void> {
  for await (const entry of Deno.readDir(from)) {
    await Deno.copyFile(new URL(entry.name, from), `${to}/${entry.name}`);
  }
}

/** A finished run in a temporary folder. */
export interface EveryStatusRun {
  dir: string;
  scoresPath: string;
  recordPath: string;
  outcome: Outcome;
}

/**
 * Runs the suite in a fresh folder and hands it to `fn`, removing it after.
 *
 * @param fn What to do with the run.
 * @param gates Gates for the suite's YAML, if any.
 */
export async function withEveryStatusRun(
  fn: (run: EveryStatusRun) => Promise<void>,
  gates = "",
): Promise<void> {
  // The judge reads "B" in prose (an invalid Score), anything else in JSON.
  await using judge = fakeLlm({
    handler: (request) =>
      lastMessage(request).includes("Output: B")
        ? reply.ok("I would say Score: 0.7 overall")
        : reply.ok('{"score": 0.9, "reason": "fine"}'),
  });
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_evalglass_" });
  try {
    await copy(FIXTURE, dir);
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: cases.jsonl
target: { type: subprocess, cmd: python3 target.py }
scorers:
  - type: exact_match
  - type: subprocess
    cmd: python3 checker.py
  - type: llm_judge
    name: judge
    base_url: ${judge.baseUrl}
    model: fake-judge
    rubric: "Grade it.\\nInput: {{input}}\\nOutput: {{output}}"
concurrency: 1
${gates}`,
    );
    const outcome = await cli(
      ["run", "suite.yaml", "--out", "scores.ndjson", "--record", "run.json"],
      dir,
    );
    await fn({
      dir,
      scoresPath: `${dir}/scores.ndjson`,
      recordPath: `${dir}/run.json`,
      outcome,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
