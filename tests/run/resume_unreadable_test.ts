// A resume whose --out or --units the system will not let it read (as root
// too: a folder, a path through a file, a socket) says which file and why,
// exits 2 and leaves every file as it was: no stack trace.

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

const SUITE = `dataset: data.jsonl
target: { type: subprocess, cmd: "cat" }
scorers: [{ type: exact_match }]
`;

/** A finished run's files in `dir`: Scores in s.ndjson, units in u.jsonl. */
async function setUp(dir: string): Promise<void> {
  await Deno.writeTextFile(`${dir}/suite.yaml`, SUITE);
  await Deno.writeTextFile(
    `${dir}/data.jsonl`,
    ["a", "b"].map((id) =>
      JSON.stringify({ id, input: id, expected: id }) + "\n"
    ).join(""),
  );
  const first = await cli(
    ["run", "suite.yaml", "--out", "s.ndjson", "--units", "u.jsonl"],
    dir,
  );
  assert.equal(first.code, 0, first.stderr);
}

/** Every file's text in `dir` (not folders), by name. */
async function files(dir: string): Promise<Record<string, string>> {
  const texts: Record<string, string> = {};
  for await (const e of Deno.readDir(dir)) {
    if (e.isFile) texts[e.name] = await Deno.readTextFile(`${dir}/${e.name}`);
  }
  return texts;
}

Deno.test("run --resume with --units or --record through a file, or --units a socket, names the flag, the file and why, exit 2, every file as it was", async () => {
  await withTempDir(async (dir) => {
    await setUp(dir);
    const before = await files(dir);
    const through = await cli(
      [
        "run",
        "suite.yaml",
        "--out",
        "s.ndjson",
        "--units",
        "data.jsonl/u.jsonl",
        "--resume",
      ],
      dir,
    );
    assert.equal(through.code, 2, through.stderr);
    assert.equal(
      through.stderr,
      'evalpipe: Cannot resume into --units "data.jsonl/u.jsonl": a part of its path is a file, not a folder\n',
    );
    const record = await cli(
      [
        "run",
        "suite.yaml",
        "--out",
        "s.ndjson",
        "--record",
        "data.jsonl/r.json",
        "--resume",
      ],
      dir,
    );
    assert.equal(record.code, 2, record.stderr);
    assert.equal(
      record.stderr,
      'evalpipe: Cannot resume into --record "data.jsonl/r.json": a part of its path is a file, not a folder\n',
    );
    const listener = Deno.listen({ transport: "unix", path: `${dir}/sock` });
    let socket;
    try {
      socket = await cli(
        [
          "run",
          "suite.yaml",
          "--out",
          "s.ndjson",
          "--units",
          "sock",
          "--resume",
        ],
        dir,
      );
    } finally {
      listener.close();
    }
    assert.equal(socket.code, 2, socket.stderr);
    assert.match(socket.stderr, /^evalpipe: Cannot write "sock": /);
    assert.doesNotMatch(socket.stderr, /\n\s+at /);
    assert.deepEqual(await files(dir), before);
  });
});

Deno.test("run --resume of an --out that is a folder names it and why, exit 2", async () => {
  await withTempDir(async (dir) => {
    await setUp(dir);
    await Deno.mkdir(`${dir}/out`);
    await Deno.writeTextFile(`${dir}/out/keep.txt`, "mine\n");
    const before = await files(dir);
    const folder = await cli(
      ["run", "suite.yaml", "--out", "out", "--resume"],
      dir,
    );
    assert.equal(folder.code, 2, folder.stderr);
    assert.equal(
      folder.stderr,
      'evalpipe: Cannot resume "out": it is a folder\n',
    );
    assert.deepEqual(await files(dir), before);
    assert.equal(await Deno.readTextFile(`${dir}/out/keep.txt`), "mine\n");
  });
});

Deno.test("run with --out whose sidecar's name is a folder refuses, naming it, with or without --resume and --force: exit 2, the folder and every file as they were", async () => {
  await withTempDir(async (dir) => {
    await setUp(dir);
    await Deno.remove(`${dir}/s.ndjson.meta.json`);
    await Deno.mkdir(`${dir}/s.ndjson.meta.json`);
    await Deno.writeTextFile(`${dir}/s.ndjson.meta.json/keep.txt`, "mine\n");
    const before = await files(dir);
    const refusal = 'evalpipe: Cannot resume "s.ndjson": its sidecar ' +
      '"s.ndjson.meta.json" is a folder, which evalpipe never replaces ' +
      "(--force neither); move it away, or give another --out\n";
    for (const flags of [["--resume"], ["--resume", "--force"]]) {
      const resumed = await cli(
        ["run", "suite.yaml", "--out", "s.ndjson", ...flags],
        dir,
      );
      assert.equal(resumed.code, 2, resumed.stderr);
      assert.equal(resumed.stderr, refusal);
    }
    const fresh = await cli(
      ["run", "suite.yaml", "--out", "s.ndjson", "--record", "r.json"],
      dir,
    );
    assert.equal(fresh.code, 2, fresh.stderr);
    assert.match(
      fresh.stderr,
      /^evalpipe: Cannot write the --out sidecar "s\.ndjson\.meta\.json": it is a folder\n/,
    );
    assert.deepEqual(await files(dir), before);
    assert.equal(
      await Deno.readTextFile(`${dir}/s.ndjson.meta.json/keep.txt`),
      "mine\n",
    );
  });
});

Deno.test("run --resume --record over a record damaged before its last line refuses, naming the line and how to go on, exit 2, every file as it was", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/suite.yaml`, SUITE);
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      ["a", "b", "c"].map((id) =>
        JSON.stringify({ id, input: id, expected: id }) + "\n"
      ).join(""),
    );
    const first = await cli(
      ["run", "suite.yaml", "--out", "s.ndjson", "--record", "r.json"],
      dir,
    );
    assert.equal(first.code, 0, first.stderr);
    // The last unit's Score lost, as an interruption leaves it; the second
    // unit's line in the record damaged by hand.
    const scores = (await Deno.readTextFile(`${dir}/s.ndjson`)).split("\n");
    await Deno.writeTextFile(
      `${dir}/s.ndjson`,
      scores.slice(0, 2).join("\n") + "\n",
    );
    const lines = (await Deno.readTextFile(`${dir}/r.json`)).split("\n");
    lines[2] = lines[2]!.replace(/"value":[^,]+/, '"value":NaN');
    await Deno.writeTextFile(`${dir}/r.json`, lines.join("\n"));
    const before = await files(dir);
    const resumed = await cli(
      [
        "run",
        "suite.yaml",
        "--out",
        "s.ndjson",
        "--record",
        "r.json",
        "--resume",
      ],
      dir,
    );
    assert.equal(resumed.code, 2, resumed.stderr);
    assert.match(
      resumed.stderr,
      /^evalpipe: Cannot resume into --record "r\.json" line 3: it is not JSON \(.+\), and lines follow it: only a record's last line can be cut short by a crash; its earlier units' inputs and outputs would be lost: mend it, or move the file away to resume into a new record without them\n$/,
    );
    // The record is named once (STYLE.md's error form).
    assert.equal(resumed.stderr.split('"r.json"').length, 2, resumed.stderr);
    assert.deepEqual(await files(dir), before);
  });
});
