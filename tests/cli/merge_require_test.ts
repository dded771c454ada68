/**
 * `merge --baseline` of Scores-file shards judges a case over its epochs as
 * the shards did: by the `settings.require` their sidecars keep, not by the
 * baseline's; shards that disagree are refused, and sidecars that do not
 * say (an older evalpipe's) are named with what is assumed.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

// Answers each input; the first call of a run that finds "flaky" answers
// wrong. The target reads the case as JSON (`{"input":"a"}`).
const FLAKY = `echo x >> calls.txt
if [ -e flaky ] && [ "$(wc -l < calls.txt)" -eq 1 ]; then echo wrong; else cat; fi
`;

function suite(epochs: string): string {
  return `dataset: data.jsonl
target: { type: subprocess, cmd: sh flaky.sh }
scorers: [{ type: contains }]
concurrency: 1
epochs: ${epochs}
`;
}

const BASELINE = ".evalpipe/baselines/main.json";

/**
 * A baseline saved by a run judged by `all` (case a passing 2 of its 3
 * epochs), then the two shards of a run judged by `majority` (every epoch
 * passing) written to s1.ndjson and s2.ndjson.
 */
async function setUp(dir: string): Promise<void> {
  await Deno.writeTextFile(join(dir, "flaky.sh"), FLAKY);
  await Deno.writeTextFile(
    join(dir, "data.jsonl"),
    '{"id":"a","input":"a","expected":"a"}\n{"id":"b","input":"b","expected":"b"}\n',
  );
  await Deno.writeTextFile(join(dir, "base.yaml"), suite("3"));
  await Deno.writeTextFile(
    join(dir, "suite.yaml"),
    suite("{ n: 3, require: majority }"),
  );
  await Deno.writeTextFile(join(dir, "flaky"), "");
  const saved = await cli(
    ["run", "base.yaml", "--save-baseline", "main"],
    dir,
  );
  assert.equal(saved.code, 0, saved.stderr);
  const baseline = JSON.parse(await Deno.readTextFile(join(dir, BASELINE)));
  assert.equal(baseline.require, "all");
  await Deno.remove(join(dir, "flaky"));
  for (const k of [1, 2]) {
    const shard = await cli(
      ["run", "suite.yaml", "--shard", `${k}/2`, "--out", `s${k}.ndjson`],
      dir,
    );
    assert.equal(shard.code, 0, shard.stderr);
  }
}

/** Rewrites a sidecar's `settings.require` (`undefined` removes it). */
async function setRequire(
  dir: string,
  file: string,
  require: string | undefined,
): Promise<void> {
  const path = join(dir, `${file}.meta.json`);
  const meta = JSON.parse(await Deno.readTextFile(path));
  if (require === undefined) delete meta.settings.require;
  else meta.settings.require = require;
  await Deno.writeTextFile(path, JSON.stringify(meta));
}

const MERGE = ["merge", "s1.ndjson", "s2.ndjson", "--baseline", BASELINE];

Deno.test("merge --baseline of Scores files judges cases by the require the shards' sidecars keep, not the baseline's", async () => {
  await withTempDir(async (dir) => {
    await setUp(dir);
    // 2/3 → 3/3 passes by majority in both runs: no case was fixed, as
    // `run --baseline` of the whole suite says too.
    const merged = await cli(MERGE, dir);
    assert.equal(merged.code, 0, merged.stderr);
    assert.doesNotMatch(merged.stderr, /fixed/);
    assert.match(
      merged.stderr,
      /flaky, epochs disagree \(not a regression\) \(1\):\n\s+data\.jsonl#a\s+contains\s+2\/3 → 3\/3/,
    );
    assert.doesNotMatch(merged.stderr, /do not say when a case passes/);
    const whole = await cli(
      ["run", "suite.yaml", "--baseline", "main"],
      dir,
    );
    assert.equal(whole.code, 0, whole.stderr);
    assert.doesNotMatch(whole.stderr, /fixed/);
  });
});

Deno.test("merge refuses Scores-file shards whose sidecars keep different requires, and names sidecars that keep none with what is assumed", async () => {
  await withTempDir(async (dir) => {
    await setUp(dir);
    await setRequire(dir, "s2.ndjson", "any");
    const refused = await cli(MERGE, dir);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(
      refused.stderr,
      /"s1\.ndjson" judges a case over its epochs by require majority and "s2\.ndjson" by require any: shards of one run judge them alike/,
    );
    // One sidecar of an older evalpipe: the other's is taken, and said.
    await setRequire(dir, "s2.ndjson", undefined);
    const one = await cli(MERGE, dir);
    assert.equal(one.code, 0, one.stderr);
    assert.match(
      one.stderr,
      /the sidecars of "s2\.ndjson" do not say when a case passes over its epochs \(written before evalpipe kept settings\.require\): the merged run is compared with the baseline by the other shards' require majority/,
    );
    // Neither says: the baseline's, said.
    await setRequire(dir, "s1.ndjson", undefined);
    const none = await cli(MERGE, dir);
    assert.equal(none.code, 0, none.stderr);
    assert.match(
      none.stderr,
      /the sidecars of "s1\.ndjson", "s2\.ndjson" do not say .*: the merged run is compared with the baseline by the baseline's require all/,
    );
    assert.match(none.stderr, /fixed \(1\)/);
  });
});

Deno.test("diff of a matrix Scores file whose sidecar keeps no require says it judges cases by majority", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "flaky.sh"), FLAKY);
    await Deno.writeTextFile(
      join(dir, "data.jsonl"),
      '{"id":"a","input":"a","expected":"a"}\n',
    );
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      `dataset: data.jsonl
targets:
  one: { type: subprocess, cmd: sh flaky.sh }
  two: { type: subprocess, cmd: cat }
scorers: [{ type: contains }]
epochs: 3
`,
    );
    const run = await cli(
      ["run", "suite.yaml", "--matrix", "one,two", "--out", "m.ndjson"],
      dir,
    );
    assert.equal(run.code, 0, run.stderr);
    const kept = await cli(["diff", "m.ndjson"], dir);
    assert.equal(kept.code, 0, kept.stderr);
    assert.doesNotMatch(kept.stderr, /does not say when a case passes/);
    // As an evalpipe before session 23 wrote the sidecar.
    await setRequire(dir, "m.ndjson", undefined);
    const older = await cli(["diff", "m.ndjson"], dir);
    assert.equal(older.code, 0, older.stderr);
    assert.match(
      older.stderr,
      /"m\.ndjson" does not say when a case passes over its epochs \(no settings\.require beside it: .*\): newly_passing and newly_failing judge each case by require majority/,
    );
  });
});
