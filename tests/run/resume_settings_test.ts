/**
 * Resume resumes the same run (issue 18, item 9): the file's metadata holds
 * the settings that shape its Scores, a resume with others is refused naming
 * them, and a config that changed only its concurrency is the same suite.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

async function suite(dir: string, extra = ""): Promise<void> {
  await Deno.writeTextFile(
    join(dir, "suite.yaml"),
    `dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n${extra}`,
  );
  const cases = Array.from(
    { length: 4 },
    (_, i) => JSON.stringify({ input: `q${i}`, output: "a", expected: "a" }),
  );
  await Deno.writeTextFile(join(dir, "cases.jsonl"), cases.join("\n") + "\n");
}

/** Drops the last line of a Scores file, as an interrupted run leaves it. */
async function cutLast(path: string): Promise<void> {
  const lines = (await Deno.readTextFile(path)).split("\n").filter((l) => l);
  await Deno.writeTextFile(path, lines.slice(0, -1).join("\n") + "\n");
}

Deno.test("run --resume refuses a file started with other epochs, naming them, even with --force", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    const first = await cli(
      ["run", "suite.yaml", "--epochs", "5", "--out", "s.ndjson"],
      dir,
    );
    assert.equal(first.code, 0, first.stderr);
    const meta = JSON.parse(
      await Deno.readTextFile(join(dir, "s.ndjson.meta.json")),
    );
    assert.deepEqual(meta.settings, { epochs: 5, require: "all" });
    await cutLast(join(dir, "s.ndjson"));
    const before = await Deno.readTextFile(join(dir, "s.ndjson"));
    for (const force of [[], ["--force"]]) {
      const again = await cli(
        ["run", "suite.yaml", "--out", "s.ndjson", "--resume", ...force],
        dir,
      );
      assert.equal(again.code, 2, again.stderr);
      assert.match(
        again.stderr,
        /"s\.ndjson" was started with epochs 5, this run has epochs 1: resume with --epochs 5/,
      );
      // Nothing was appended: the file still holds one run's Scores.
      assert.equal(await Deno.readTextFile(join(dir, "s.ndjson")), before);
    }
    const right = await cli(
      ["run", "suite.yaml", "--epochs", "5", "--out", "s.ndjson", "--resume"],
      dir,
    );
    assert.equal(right.code, 0, right.stderr);
    const units = (await Deno.readTextFile(join(dir, "s.ndjson")))
      .split("\n").filter((l) => l).map((l) => JSON.parse(l).unit_id);
    assert.equal(units.length, 20);
    assert.ok(units.every((u: string) => /@[1-5]$/.test(u)), units.join());
  });
});

Deno.test("run --resume takes a config that changed only its concurrency (or a comment) as the same suite", async () => {
  await withTempDir(async (dir) => {
    await suite(dir, "concurrency: 2\n");
    const first = await cli(["run", "suite.yaml", "--out", "s.ndjson"], dir);
    assert.equal(first.code, 0, first.stderr);
    await cutLast(join(dir, "s.ndjson"));
    await suite(dir, "# faster now\nconcurrency: 16\nmax_processes: 8\n");
    const again = await cli(
      ["run", "suite.yaml", "--out", "s.ndjson", "--resume"],
      dir,
    );
    assert.equal(again.code, 0, again.stderr);
    // A change that shapes the Scores still counts.
    await cutLast(join(dir, "s.ndjson"));
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      "dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match, ignore_case: true }]\n",
    );
    const changed = await cli(
      ["run", "suite.yaml", "--out", "s.ndjson", "--resume"],
      dir,
    );
    assert.equal(changed.code, 2);
    assert.match(
      changed.stderr,
      /the config changed since "s\.ndjson" was started/,
    );
  });
});

Deno.test("run --resume --force over a missing or damaged sidecar writes it again from the unit ids, so the next resume is plain", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    const out = join(dir, "s.ndjson");
    for (const sidecar of ["missing", "damaged"]) {
      await Deno.remove(out).catch(() => {});
      const first = await cli(
        ["run", "suite.yaml", "--epochs", "2", "--out", "s.ndjson"],
        dir,
      );
      assert.equal(first.code, 0, first.stderr);
      await cutLast(out);
      await cutLast(out);
      if (sidecar === "missing") await Deno.remove(`${out}.meta.json`);
      else await Deno.writeTextFile(`${out}.meta.json`, "{not json");
      const plain = ["run", "suite.yaml", "--out", "s.ndjson", "--resume"];
      const refused = await cli([...plain, "--epochs", "2"], dir);
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, new RegExp(`is ${sidecar}`));
      // The ids show two epochs: one is refused, --force or not, the file
      // as it was.
      const before = await Deno.readTextFile(out);
      const one = await cli([...plain, "--force"], dir);
      assert.equal(one.code, 2, one.stderr);
      assert.match(
        one.stderr,
        /"s\.ndjson" holds the Scores of at least 2 epochs \(its unit ids show it\), this run has epochs 1: resume with --epochs 2, or start a new --out\n$/,
      );
      assert.equal(await Deno.readTextFile(out), before);
      const forced = await cli([...plain, "--epochs", "2", "--force"], dir);
      assert.equal(forced.code, 0, forced.stderr);
      const meta = JSON.parse(await Deno.readTextFile(`${out}.meta.json`));
      assert.deepEqual(meta.settings, { epochs: 2, require: "all" });
      await cutLast(out);
      const next = await cli([...plain, "--epochs", "2"], dir);
      assert.equal(next.code, 0, next.stderr);
      const units = (await Deno.readTextFile(out)).split("\n")
        .filter((l) => l).map((l) => JSON.parse(l).unit_id);
      assert.equal(units.length, 8);
      assert.equal(new Set(units).size, 8);
    }
  });
});

Deno.test("run --resume --force over a missing sidecar of a one-epoch file refuses other epochs, and writes none under a subset", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    const out = join(dir, "s.ndjson");
    const first = await cli(["run", "suite.yaml", "--out", "s.ndjson"], dir);
    assert.equal(first.code, 0, first.stderr);
    await cutLast(out);
    await Deno.remove(`${out}.meta.json`);
    const plain = ["run", "suite.yaml", "--out", "s.ndjson", "--resume"];
    const three = await cli([...plain, "--force", "--epochs", "3"], dir);
    assert.equal(three.code, 2, three.stderr);
    assert.match(
      three.stderr,
      /"s\.ndjson" holds the Scores of one epoch \(its unit ids show it\), this run has epochs 3: resume with --epochs 1/,
    );
    // A subset cannot be told from the ids: no sidecar is made up.
    const limited = await cli([...plain, "--force", "--limit", "4"], dir);
    assert.equal(limited.code, 0, limited.stderr);
    await assert.rejects(
      Deno.stat(`${out}.meta.json`),
      Deno.errors.NotFound,
    );
    // Said, so that the user knows the next resume needs --force again.
    assert.match(
      limited.stderr,
      /evalpipe: "s\.ndjson\.meta\.json" was not written again: the Scores' unit ids cannot show that --out "s\.ndjson" is this run's \(a part of the suite, more epochs than they show, or ids not of its examples\); the next resume needs --force too\n/,
    );
  });
});
