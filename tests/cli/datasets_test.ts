// `datasets:` — several datasets in one suite, ids unique per dataset.

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { checkConfigText, ConfigError } from "../../src/config/mod.ts";

const SCORERS = "target: { type: replay }\nscorers: [{ type: exact_match }]\n";

async function configError(yaml: string): Promise<ConfigError> {
  const error = await checkConfigText(yaml, "suite.yaml").then(
    () => undefined,
    (e) => e,
  );
  assert.ok(error instanceof ConfigError, String(error));
  return error;
}

Deno.test("datasets: runs each dataset in order, ids <name>#<id> (the path without a name)", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/a.jsonl`,
      '{"input":"1","output":"x","expected":"x"}\n{"id":"k","input":"2","output":"y","expected":"x"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/b.csv`,
      "input,output,expected\n3,x,x\n",
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `datasets:\n  - { path: a.jsonl, name: easy }\n  - path: b.csv\n${SCORERS}`,
    );
    const r = await cli(
      ["run", `${dir}/suite.yaml`, "--record", `${dir}/r.json`],
      dir,
    );
    assert.equal(r.code, 0, r.stderr);
    const ids = r.stdout.trim().split("\n").map((l) =>
      JSON.parse(l).example_id
    );
    assert.deepEqual(ids, ["easy#1", "easy#k", "b.csv#1"]);
    const record = JSON.parse(await Deno.readTextFile(`${dir}/r.json`));
    assert.match(record.fingerprints.dataset, /^sha256:/);
    // Editing either file changes the datasets' fingerprint.
    await Deno.writeTextFile(`${dir}/b.csv`, "input,output,expected\n3,x,y\n");
    const again = await cli(
      ["run", `${dir}/suite.yaml`, "--record", `${dir}/r2.json`],
      dir,
    );
    assert.equal(again.code, 0, again.stderr);
    const record2 = JSON.parse(await Deno.readTextFile(`${dir}/r2.json`));
    assert.notEqual(record2.fingerprints.dataset, record.fingerprints.dataset);
    // The shards of a suite of several datasets merge into its run.
    const whole = await cli(["run", `${dir}/suite.yaml`], dir);
    for (const k of [1, 2]) {
      const s = await cli(
        [
          "run",
          `${dir}/suite.yaml`,
          "--shard",
          `${k}/2`,
          "--record",
          `${dir}/s${k}.json`,
        ],
        dir,
      );
      assert.equal(s.code, 0, s.stderr);
    }
    const merged = await cli(
      ["merge", `${dir}/s1.json`, `${dir}/s2.json`],
      dir,
    );
    assert.equal(merged.code, 0, merged.stderr);
    assert.equal(merged.stdout, whole.stdout);
  });
});

Deno.test("datasets: a malformed record is named with its own dataset's file and line", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/a.jsonl`, '{"input":"1","output":"x"}\n');
    await Deno.writeTextFile(
      `${dir}/b.jsonl`,
      '{"input":"1","output":"x"}\n{"inputt":1}\n',
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `datasets:\n  - path: a.jsonl\n  - path: b.jsonl\n${SCORERS}`,
    );
    const r = await cli(["run", `${dir}/suite.yaml`], dir);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Invalid case in "b\.jsonl" line 2: /);
  });
});

Deno.test("datasets: a malformed record of a named dataset is named by its file, in run's message as in validate's", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/b.jsonl`,
      '{"input":"1","output":"x"}\n{"inputt":1}\n',
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `datasets:\n  - { path: b.jsonl, name: bees }\n${SCORERS}`,
    );
    const run = await cli(["run", "suite.yaml"], dir);
    assert.equal(run.code, 2, run.stderr);
    // The ids keep the name; the message says which file to open.
    assert.equal(JSON.parse(run.stdout.split("\n")[0]!).example_id, "bees#1");
    const validate = await cli(["validate", "suite.yaml"], dir);
    for (const { stderr } of [run, validate]) {
      assert.match(stderr, /evalpipe: Invalid case in "b\.jsonl" line 2: /);
      assert.doesNotMatch(stderr, /"bees"/);
    }
  });
});

Deno.test("checkConfigText refuses dataset and datasets together, neither, two datasets of one name, one file twice, stdin in a list", async () => {
  const both = await configError(
    `dataset: a.jsonl\ndatasets:\n  - path: b.jsonl\n${SCORERS}`,
  );
  assert.equal(
    both.message,
    'Invalid config "suite.yaml" line 2: give "dataset" (one file) or "datasets" (a list), not both',
  );
  const twice = await configError(
    `datasets:\n  - { path: a.jsonl, name: x }\n  - { path: b.jsonl, name: x }\n${SCORERS}`,
  );
  assert.equal(
    twice.message,
    'Invalid config "suite.yaml" line 3: datasets 1 and 2 would both name their examples "x#…": give one a different "name"',
  );
  // Two names that differ only in Unicode form name their examples alike
  // for every reader of the Scores, which compares ids in NFC.
  const forms = await configError(
    `datasets:\n  - { path: a.jsonl, name: "caf\u00e9" }\n  - { path: b.jsonl, name: "cafe\u0301" }\n${SCORERS}`,
  );
  assert.equal(
    forms.message,
    'Invalid config "suite.yaml" line 3: datasets 1 and 2 would both name their examples "cafe\u0301#…": give one a different "name"',
  );
  // One file by two spellings (or two names): its cases would run twice.
  for (
    const list of [
      "  - path: ./a.jsonl\n  - path: a.jsonl\n",
      "  - { path: data/a.jsonl, name: one }\n  - { path: data//x/../a.jsonl, name: two }\n",
    ]
  ) {
    const same = await configError(`datasets:\n${list}${SCORERS}`);
    assert.match(
      same.message,
      /^Invalid config "suite\.yaml" line 3: datasets 1 and 2 are the same file, "(data\/)?a\.jsonl": each case would run twice; list it once \(epochs: N runs each case N times\)$/,
    );
  }
  const hash = await configError(
    `datasets:\n  - { path: a.jsonl, name: "a#b" }\n${SCORERS}`,
  );
  assert.match(hash.message, /line 2: a dataset's name cannot hold "#"/);
  const stdin = await configError(`datasets:\n  - path: "-"\n${SCORERS}`);
  assert.match(
    stdin.message,
    /line 2: stdin \("-"\) cannot be one of "datasets"/,
  );
  const empty = await configError(`datasets: []\n${SCORERS}`);
  assert.match(empty.message, /line 1: "datasets"/);
  const unknown = await configError(
    `datasets:\n  - { path: a.jsonl, nam: x }\n${SCORERS}`,
  );
  assert.match(
    unknown.message,
    /line 2: unknown key "datasets\[0\]\.nam"|unknown key "nam"/,
  );
});
