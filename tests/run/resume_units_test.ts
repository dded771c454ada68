// A resume leaves every output as an uninterrupted run would: `--units`
// keeps the earlier units and appends the rest, the record holds each unit
// once, and a dataset it cannot check (stdin) is not taken on trust.

import assert from "node:assert/strict";
import { cli, cliWithFileLimit, cliWithStdin } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { parseRunRecord } from "../../src/record/run_record.ts";

const IDS = ["a", "b", "c", "d"];

function jsonl(records: unknown[]): string {
  return records.map((r) => JSON.stringify(r) + "\n").join("");
}

function lines(text: string): Record<string, unknown>[] {
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

// A target that says how often it was called; its answer is the input.
const SUITE = `dataset: data.jsonl
target: { type: subprocess, cmd: "echo called >> calls.txt; cat" }
scorers: [{ type: exact_match }]
concurrency: 1
`;

async function setUp(dir: string, suite = SUITE): Promise<void> {
  await Deno.writeTextFile(`${dir}/suite.yaml`, suite);
  await Deno.writeTextFile(
    `${dir}/data.jsonl`,
    jsonl(IDS.map((id) => ({ id, input: id, expected: id }))),
  );
}

async function calls(dir: string): Promise<number> {
  return (await Deno.readTextFile(`${dir}/calls.txt`)).trimEnd().split("\n")
    .length;
}

/** Keeps the Scores of the units named, as an interruption would have. */
async function keepScores(dir: string, ids: string[]): Promise<void> {
  const text = await Deno.readTextFile(`${dir}/s.ndjson`);
  const kept = text.split("\n").filter((l) =>
    l !== "" && ids.includes(JSON.parse(l).unit_id.split("#").at(-1))
  );
  await Deno.writeTextFile(`${dir}/s.ndjson`, kept.join("\n") + "\n");
}

const ARGS = ["run", "suite.yaml", "--out", "s.ndjson", "--units", "u.jsonl"];

Deno.test("run --resume --units keeps the earlier units and appends the rest, each unit once", async () => {
  await withTempDir(async (dir) => {
    await setUp(dir);
    const first = await cli(ARGS, dir);
    assert.equal(first.code, 0, first.stderr);
    const before = lines(await Deno.readTextFile(`${dir}/u.jsonl`));
    assert.equal(before.length, 4);
    // Stopped with the Scores of a and c written: b and d were answered
    // (they are in --units) but dropped at the grace period, and d's line
    // was torn by a kill.
    await keepScores(dir, ["a", "c"]);
    const units = await Deno.readTextFile(`${dir}/u.jsonl`);
    await Deno.writeTextFile(`${dir}/u.jsonl`, units.slice(0, -20));
    const again = await cli([...ARGS, "--resume"], dir);
    assert.equal(again.code, 0, again.stderr);
    assert.match(
      again.stderr,
      /--units "u\.jsonl": dropped 2 lines of units the resume runs again/,
    );
    assert.equal(await calls(dir), 6, "b and d called again, not a and c");
    const after = lines(await Deno.readTextFile(`${dir}/u.jsonl`));
    // a and c from the first run, verbatim; b and d from the resume.
    assert.deepEqual(after.slice(0, 2), [before[0], before[2]]);
    assert.deepEqual(
      after.map((u) => [u.unit_id, u.output]),
      [0, 2, 1, 3].map((i) => [before[i]!.unit_id, before[i]!.output]),
    );
    const scores = lines(await Deno.readTextFile(`${dir}/s.ndjson`));
    assert.deepEqual(
      scores.map((s) => s.unit_id).sort(),
      after.map((u) => u.unit_id).sort(),
    );
    // A second resume of the finished run changes neither file.
    const done = await Deno.readTextFile(`${dir}/u.jsonl`);
    const third = await cli([...ARGS, "--resume"], dir);
    assert.equal(third.code, 0, third.stderr);
    assert.equal(await Deno.readTextFile(`${dir}/u.jsonl`), done);
    assert.equal(await calls(dir), 6);
  });
});

Deno.test("run --resume --units cuts the units it runs again off the end of the file in place when they are its last lines", async () => {
  await withTempDir(async (dir) => {
    await setUp(dir);
    assert.equal((await cli(ARGS, dir)).code, 0);
    // Stopped with a and b scored: c and d, the last lines, run again.
    await keepScores(dir, ["a", "b"]);
    const before = (await Deno.readTextFile(`${dir}/u.jsonl`)).split("\n");
    const { ino } = await Deno.stat(`${dir}/u.jsonl`);
    const again = await cli([...ARGS, "--resume"], dir);
    assert.equal(again.code, 0, again.stderr);
    assert.match(
      again.stderr,
      /--units "u\.jsonl": dropped 2 lines of units the resume runs again/,
    );
    assert.equal(await calls(dir), 6, "c and d called again");
    // The same file, not a copy: a and b as they were, c and d anew.
    assert.equal((await Deno.stat(`${dir}/u.jsonl`)).ino, ino);
    const after = (await Deno.readTextFile(`${dir}/u.jsonl`)).split("\n");
    assert.deepEqual(after.slice(0, 2), before.slice(0, 2));
    assert.deepEqual(
      lines(after.join("\n")).map((u) => u.unit_id),
      IDS.map((id) => `data.jsonl#${id}`),
    );
  });
});

Deno.test("run --resume --units cuts a units file given as a symlink in place, through the link", async () => {
  await withTempDir(async (dir) => {
    await setUp(dir);
    await Deno.mkdir(`${dir}/keep`);
    await Deno.symlink(`${dir}/keep/u.jsonl`, `${dir}/u.jsonl`);
    assert.equal((await cli(ARGS, dir)).code, 0);
    // Stopped with a and b scored: c and d, the last lines, run again.
    await keepScores(dir, ["a", "b"]);
    const again = await cli([...ARGS, "--resume"], dir);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await calls(dir), 6, "c and d called again");
    // The link stays a link, and the file it leads to holds each unit once.
    assert.ok((await Deno.lstat(`${dir}/u.jsonl`)).isSymlink);
    assert.deepEqual(
      lines(await Deno.readTextFile(`${dir}/keep/u.jsonl`)).map((u) =>
        u.unit_id
      ),
      IDS.map((id) => `data.jsonl#${id}`),
    );
  });
});

Deno.test("run --resume --units: a resume that dies while it drops the units it runs again loses none of the units kept", async () => {
  await withTempDir(async (dir) => {
    const ids = Array.from({ length: 40 }, (_, i) => `case${i + 1}`);
    await Deno.writeTextFile(`${dir}/suite.yaml`, SUITE);
    await writeData(dir, ids);
    assert.equal((await cli(ARGS, dir)).code, 0);
    // The first unit's Scores were lost: its line is dropped, and every
    // line after it is one the resume keeps.
    await keepScores(dir, ids.slice(1));
    const units = await Deno.readTextFile(`${dir}/u.jsonl`);
    const kept = units.split("\n").slice(1).filter((l) => l !== "");
    assert.equal(kept.length, 39);
    // A file size limit below what the kept units take: the resume is
    // stopped (SIGXFSZ, or EFBIG) partway through writing them, as a full
    // disk or a kill would stop it.
    // The same resume, unlimited, on a copy first: the modules it loads are
    // then in Deno's caches, whose files (far above the limit) the limited
    // run must not write.
    await Deno.mkdir(`${dir}/warm`);
    for (
      const name of [
        "suite.yaml",
        "data.jsonl",
        "s.ndjson",
        "s.ndjson.meta.json",
        "u.jsonl",
      ]
    ) {
      await Deno.copyFile(`${dir}/${name}`, `${dir}/warm/${name}`);
    }
    const warm = await cli([...ARGS, "--resume"], `${dir}/warm`);
    assert.equal(warm.code, 0, warm.stderr);
    const keptBytes = new TextEncoder().encode(kept.join("\n")).length;
    const blocks = Math.ceil(keptBytes / 1024) - 1;
    assert.ok(blocks >= 1, `${keptBytes} bytes`);
    const limited = await cliWithFileLimit([...ARGS, "--resume"], dir, blocks);
    assert.notEqual(limited.code, 0);
    const left = new Set(
      (await Deno.readTextFile(`${dir}/u.jsonl`)).split("\n"),
    );
    const lost = kept.filter((l) => !left.has(l));
    assert.deepEqual(lost, [], `${lost.length} units lost`);
  });
});

Deno.test("run --resume --units refuses a file that is not units, and leaves every file as it was", async () => {
  await withTempDir(async (dir) => {
    await setUp(dir);
    assert.equal((await cli(ARGS, dir)).code, 0);
    await keepScores(dir, ["a"]);
    // A torn Scores line, which a resume would cut: it must stay.
    await Deno.writeTextFile(`${dir}/s.ndjson`, '{"metric":"exa', {
      append: true,
    });
    const scores = await Deno.readTextFile(`${dir}/s.ndjson`);
    const notUnits = "a,b\n1,2\n";
    await Deno.writeTextFile(`${dir}/u.jsonl`, notUnits);
    const again = await cli([...ARGS, "--resume"], dir);
    assert.equal(again.code, 2, again.stderr);
    assert.match(
      again.stderr,
      /Cannot resume into --units "u\.jsonl": line 1 is not a unit record \(.+\)\. Give the units file the run started with, or a new one/,
    );
    assert.doesNotMatch(again.stderr, /\n\s+at /);
    assert.equal(await Deno.readTextFile(`${dir}/u.jsonl`), notUnits);
    assert.equal(await Deno.readTextFile(`${dir}/s.ndjson`), scores);
    assert.equal(await calls(dir), 4, "nothing called");
  });
});

Deno.test("run --resume --force after a scorer was added writes each unit once in the record, with every Score", async () => {
  await withTempDir(async (dir) => {
    await setUp(dir);
    const args = [...ARGS, "--record", "rec.json"];
    assert.equal((await cli(args, dir)).code, 0);
    // Stopped after two units; then a scorer is added to the suite.
    await keepScores(dir, ["a", "b"]);
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      SUITE.replace(
        "scorers: [{ type: exact_match }]",
        "scorers: [{ type: exact_match }, { type: contains }]",
      ),
    );
    const refused = await cli([...args, "--resume"], dir);
    assert.equal(refused.code, 2, refused.stderr);
    const again = await cli([...args, "--resume", "--force"], dir);
    assert.equal(again.code, 0, again.stderr);
    const record = parseRunRecord(
      await Deno.readTextFile(`${dir}/rec.json`),
      "rec.json",
    );
    assert.equal(record.complete, true);
    const ids = record.units.map((u) => u.unit_id);
    assert.equal(new Set(ids).size, ids.length, `a unit twice: ${ids}`);
    assert.equal(ids.length, 4);
    const byUnit = new Map<string, string[]>();
    for (const s of record.scores) {
      byUnit.set(s.unit_id!, [...byUnit.get(s.unit_id!) ?? [], s.metric]);
    }
    for (const id of ids) {
      assert.deepEqual(byUnit.get(id)?.sort(), ["contains", "exact_match"]);
    }
    // --out holds each Score once; --units each unit once.
    const scores = lines(await Deno.readTextFile(`${dir}/s.ndjson`));
    assert.equal(scores.length, 8);
    const units = lines(await Deno.readTextFile(`${dir}/u.jsonl`));
    assert.deepEqual(units.map((u) => u.unit_id).sort(), [...ids].sort());
  });
});

Deno.test("run --resume refuses a dataset read from stdin unless --force", async () => {
  await withTempDir(async (dir) => {
    await setUp(dir, SUITE.replace("data.jsonl", '"-"'));
    const data = await Deno.readTextFile(`${dir}/data.jsonl`);
    const args = ["run", "suite.yaml", "--out", "s.ndjson"];
    const first = await cliWithStdin(args, dir, data);
    assert.equal(first.code, 0, first.stderr);
    await keepScores(dir, ["a"]);
    const other = jsonl([{ id: "z", input: "z", expected: "z" }]);
    const refused = await cliWithStdin([...args, "--resume"], dir, other);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(
      refused.stderr,
      /the dataset is read from stdin, which cannot be checked against the one that started "s\.ndjson"; resume with --force if stdin holds the same cases/,
    );
    assert.equal(lines(await Deno.readTextFile(`${dir}/s.ndjson`)).length, 1);
    const forced = await cliWithStdin(
      [...args, "--resume", "--force"],
      dir,
      data,
    );
    assert.equal(forced.code, 0, forced.stderr);
    const ids = lines(await Deno.readTextFile(`${dir}/s.ndjson`)).map((s) =>
      s.unit_id
    );
    assert.equal(ids.length, 4);
    assert.equal(new Set(ids).size, 4);
  });
});

// "café" as most keyboards write it (NFC, one code point for "é") and as
// macOS file names and some exports do (NFD, "e" and a combining accent).
const CAFE_NFC = "caf\u00e9";
const CAFE_NFD = "cafe\u0301";

/** The dataset with these ids, each case answering its id. */
async function writeData(dir: string, ids: string[]): Promise<void> {
  await Deno.writeTextFile(
    `${dir}/data.jsonl`,
    jsonl(ids.map((id) => ({ id, input: "x", expected: "x" }))),
  );
}

Deno.test("run --resume pairs the file's unit ids with the dataset's in NFC: a unit whose id the dataset now writes in NFD is not run again", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/suite.yaml`, SUITE);
    await writeData(dir, [CAFE_NFC, "b", "c", "d"]);
    assert.equal((await cli(ARGS, dir)).code, 0);
    // Stopped with café and b scored; the dataset is then saved again by a
    // tool that writes NFD: the same cases, other bytes (hence --force).
    await keepScores(dir, [CAFE_NFC, "b"]);
    await writeData(dir, [CAFE_NFD, "b", "c", "d"]);
    const again = await cli([...ARGS, "--resume", "--force"], dir);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await calls(dir), 6, "c and d called again, not café");
    // Each unit's Score once, café's as the file wrote it.
    const ids = lines(await Deno.readTextFile(`${dir}/s.ndjson`)).map((s) =>
      s.unit_id
    );
    assert.deepEqual(ids, [
      `data.jsonl#${CAFE_NFC}`,
      "data.jsonl#b",
      "data.jsonl#c",
      "data.jsonl#d",
    ]);
    const units = lines(await Deno.readTextFile(`${dir}/u.jsonl`));
    assert.deepEqual(units.map((u) => u.unit_id), ids);
  });
});

Deno.test("run --resume --force after a scorer was added joins a unit's earlier Scores to its new ones in the record when the dataset now writes its id in NFD", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/suite.yaml`, SUITE);
    await writeData(dir, [CAFE_NFC, "b"]);
    const args = [...ARGS, "--record", "rec.json"];
    assert.equal((await cli(args, dir)).code, 0);
    await keepScores(dir, [CAFE_NFC]);
    await writeData(dir, [CAFE_NFD, "b"]);
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      SUITE.replace(
        "scorers: [{ type: exact_match }]",
        "scorers: [{ type: exact_match }, { type: contains }]",
      ),
    );
    const again = await cli([...args, "--resume", "--force"], dir);
    assert.equal(again.code, 0, again.stderr);
    const record = parseRunRecord(
      await Deno.readTextFile(`${dir}/rec.json`),
      "rec.json",
    );
    const ids = record.units.map((u) => u.unit_id.normalize("NFC"));
    assert.deepEqual(ids, [`data.jsonl#${CAFE_NFC}`, "data.jsonl#b"]);
    // café's exact_match Score from the first run, its contains from the
    // resume: one line of the record, and no Score twice in --out.
    assert.deepEqual(
      record.scores.map((s) => [s.unit_id!.normalize("NFC"), s.metric]),
      [
        [`data.jsonl#${CAFE_NFC}`, "exact_match"],
        [`data.jsonl#${CAFE_NFC}`, "contains"],
        ["data.jsonl#b", "exact_match"],
        ["data.jsonl#b", "contains"],
      ],
    );
    assert.equal(lines(await Deno.readTextFile(`${dir}/s.ndjson`)).length, 4);
  });
});

/**
 * Runs a replay suite of `d.jsonl` (line 3 malformed, its number taken by
 * the case at line 1 as its id, `line2` between) in two epochs, renames
 * line 3's Scores in --out to `older`'s name as an evalpipe before e2ae25f
 * named them, and resumes: those Scores count as line 3's and nothing runs
 * again.
 */
async function resumesOlderName(line2: string, older: string): Promise<void> {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      `{"id":3,"input":"q","output":"a","expected":"a"}\n${line2}\n{bad json\n`,
    );
    const args = ["run", "suite.yaml", "--out", "s.ndjson", "--epochs", "2"];
    const first = await cli(args, dir);
    const written = await Deno.readTextFile(`${dir}/s.ndjson`);
    assert.match(written, /"unit_id":"d\.jsonl#line-3@2"/, first.stderr);
    const renamed = written.replaceAll("#line-3", `#${older}`);
    await Deno.writeTextFile(`${dir}/s.ndjson`, renamed);
    const resumed = await cli([...args, "--resume"], dir);
    assert.equal(resumed.code, first.code, resumed.stderr);
    assert.match(resumed.stderr, /0 scores written to s\.ndjson/);
    assert.equal(await Deno.readTextFile(`${dir}/s.ndjson`), renamed);
  });
}

Deno.test("run --resume takes an older evalpipe's #N-invalid Score of a malformed line as that line's (#line-N), not running it again beside it", async () => {
  await resumesOlderName(
    '{"input":"r","output":"a","expected":"a"}',
    "3-invalid",
  );
});

Deno.test("run --resume runs a malformed line whose #N-invalid name a case's own id holds, where it took that case's Score for the line's", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    // The case at line 1 took 3 as its id, so the malformed line 3 is
    // d.jsonl#line-3; line 2 is an invalid case whose own id is 3-invalid.
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"id":3,"input":"q","output":"a","expected":"a"}\n' +
        '{"id":"3-invalid","output":"a","expected":"a"}\n{bad json\n',
    );
    const args = ["run", "suite.yaml", "--out", "s.ndjson"];
    const first = await cli(args, dir);
    const whole = await Deno.readTextFile(`${dir}/s.ndjson`);
    assert.deepEqual(
      lines(whole).map((s) => s.unit_id),
      ["d.jsonl#3", "d.jsonl#3-invalid", "d.jsonl#line-3"],
      first.stderr,
    );
    // Killed before line 3's Score was written.
    const cut = whole.split("\n").slice(0, 2).join("\n") + "\n";
    await Deno.writeTextFile(`${dir}/s.ndjson`, cut);
    const resumed = await cli([...args, "--resume"], dir);
    assert.equal(resumed.code, first.code, resumed.stderr);
    assert.match(resumed.stderr, /1 score written to s\.ndjson/);
    assert.equal(await Deno.readTextFile(`${dir}/s.ndjson`), whole);
  });
});

Deno.test("run --resume takes an older evalpipe's #N-invalid-invalid Score of a malformed line as that line's, not running it again", async () => {
  // A case took 3-invalid as its id too.
  await resumesOlderName(
    '{"id":"3-invalid","input":"r","output":"a","expected":"a"}',
    "3-invalid-invalid",
  );
});
