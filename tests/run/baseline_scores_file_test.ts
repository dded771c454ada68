import assert from "node:assert/strict";
import { cli, cliWithStdin, writeAnswersSuite } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

const CASES = { a: "A", b: "B", c: "C" };

/** The suite, answering every case right, run once into scores.ndjson. */
async function scoresFile(dir: string): Promise<void> {
  await writeAnswersSuite(dir, CASES, CASES);
  const first = await cli(
    ["run", "evalpipe.yaml", "--out", "scores.ndjson"],
    dir,
  );
  assert.equal(first.code, 0, first.stderr);
}

Deno.test("run --baseline reads a Scores file as diff does, by its path or by a name that is a file in the current folder", async () => {
  await withTempDir(async (dir) => {
    await scoresFile(dir);
    await Deno.writeTextFile(
      `${dir}/answers.json`,
      JSON.stringify({ a: "A", b: "x", c: "C" }),
    );
    for (const given of ["./scores.ndjson", "scores.ndjson"]) {
      const run = await cli(
        ["run", "evalpipe.yaml", "--baseline", given],
        dir,
      );
      assert.equal(run.code, 1, run.stderr);
      assert.match(
        run.stderr,
        /newly failing \(1\):\n {2}d\.jsonl#b {2}exact_match {2}1\/1 → 0\/1/,
      );
      assert.match(
        run.stderr,
        /regressed against baseline "[^"]*scores\.ndjson"/,
      );
      assert.doesNotMatch(run.stderr, /non-whitespace|\.ndjson\.json/);
    }
    // Stdout of `run` kept without --out: no sidecar, read all the same.
    const plain = await cli(["run", "evalpipe.yaml"], dir);
    await Deno.writeTextFile(`${dir}/plain.ndjson`, plain.stdout);
    const same = await cli(
      ["run", "evalpipe.yaml", "--baseline", "./plain.ndjson"],
      dir,
    );
    assert.equal(same.code, 0, same.stderr);
    assert.match(same.stderr, /Compared with baseline "\.\/plain\.ndjson"/);
  });
});

Deno.test("run --baseline refuses a Scores file it cannot trust, naming the file and the line, before any call", async () => {
  await withTempDir(async (dir) => {
    await scoresFile(dir);
    const lines = (await Deno.readTextFile(`${dir}/scores.ndjson`)).split(
      "\n",
    );
    const cases = [
      {
        name: "torn.ndjson",
        text: [lines[0], '{"metric":', lines[2]].join("\n") + "\n",
        why: /Invalid baseline "\.\/torn\.ndjson" line 2: /,
      },
      {
        name: "anonymous.ndjson",
        text: lines.filter((l) => l !== "").map((l) => {
          const { example_id: _e, unit_id: _u, ...rest } = JSON.parse(l);
          return JSON.stringify(rest);
        }).join("\n") + "\n",
        why:
          /Invalid baseline "\.\/anonymous\.ndjson": 3 Scores carry no "example_id"/,
      },
      {
        name: "empty.ndjson",
        text: "",
        why: /Invalid baseline "\.\/empty\.ndjson": it holds no Score/,
      },
    ];
    // The app would fail loudly if called: nothing is called.
    await Deno.writeTextFile(`${dir}/app.py`, "raise SystemExit(9)\n");
    for (const { name, text, why } of cases) {
      await Deno.writeTextFile(`${dir}/${name}`, text);
      const run = await cli(
        ["run", "evalpipe.yaml", "--baseline", `./${name}`],
        dir,
      );
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, why);
      assert.doesNotMatch(run.stderr, /^ {4}at /m);
      assert.equal(run.stdout, "");
    }
    // A Scores file of a run that stopped partway would make the cases it
    // never ran look removed.
    const meta = JSON.parse(
      await Deno.readTextFile(`${dir}/scores.ndjson.meta.json`),
    );
    await Deno.writeTextFile(
      `${dir}/scores.ndjson.meta.json`,
      JSON.stringify({ ...meta, complete: false }),
    );
    const cut = await cli(
      ["run", "evalpipe.yaml", "--baseline", "./scores.ndjson"],
      dir,
    );
    assert.equal(cut.code, 2, cut.stderr);
    assert.match(
      cut.stderr,
      /Invalid baseline "\.\/scores\.ndjson": the run that wrote it did not finish/,
    );
  });
});
Deno.test("run --baseline NAME that names no saved baseline but a file beside the config says so", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/suite`);
    await writeAnswersSuite(`${dir}/suite`, CASES, CASES);
    const first = await cli(
      ["run", "evalpipe.yaml", "--out", "1.ndjson"],
      `${dir}/suite`,
    );
    assert.equal(first.code, 0, first.stderr);
    const run = await cli(
      ["run", "suite/evalpipe.yaml", "--baseline", "1.ndjson"],
      dir,
    );
    assert.equal(run.code, 2, run.stderr);
    assert.match(
      run.stderr,
      /Cannot read baseline "[^"]*\.evalpipe\/baselines\/1\.ndjson\.json": no such file \(save one with run --save-baseline NAME; "suite\/1\.ndjson" is a file beside the config: give its path, --baseline suite\/1\.ndjson\)/,
    );
  });
});

/** A JSON value with its objects' keys sorted, as `jq -S` writes it. */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.keys(value).sort().map((k) => [
      k,
      sortedKeys((value as Record<string, unknown>)[k]),
    ]),
  );
}

Deno.test("run --baseline reads a baseline or a RunRecord whose keys were reordered (jq -S) as what it is, and names a file that is neither", async () => {
  await withTempDir(async (dir) => {
    await writeAnswersSuite(dir, CASES, CASES);
    const first = await cli(
      ["run", "evalpipe.yaml", "--save-baseline", "main", "--record", "r.json"],
      dir,
    );
    assert.equal(first.code, 0, first.stderr);
    await Deno.writeTextFile(
      `${dir}/answers.json`,
      JSON.stringify({ a: "A", b: "x", c: "C" }),
    );
    const saved = `${dir}/.evalpipe/baselines/main.json`;
    // Before, both were read as Scores files: `Invalid baseline
    // "./sorted.json" line 1: "metric" is missing; …` (exit 2).
    const reordered: Array<[string, string]> = [
      [saved, "sorted.json"],
      [`${dir}/r.json`, "rsorted.json"],
    ];
    for (const [from, to] of reordered) {
      const value = JSON.parse(await Deno.readTextFile(from));
      const texts: Array<[string, string]> = [
        [to, JSON.stringify(sortedKeys(value), null, 2) + "\n"],
        [`compact-${to}`, JSON.stringify(sortedKeys(value)) + "\n"],
      ];
      for (const [name, text] of texts) {
        await Deno.writeTextFile(`${dir}/${name}`, text);
        const run = await cli(
          ["run", "evalpipe.yaml", "--baseline", `./${name}`],
          dir,
        );
        assert.equal(run.code, 1, `${name}: ${run.stderr}`);
        assert.match(
          run.stderr,
          /newly failing \(1\):\n {2}d\.jsonl#b {2}exact_match {2}1\/1 → 0\/1/,
          name,
        );
      }
    }
    // The saved baseline's lines sorted (`sort`): no kind of file at all.
    const lines = (await Deno.readTextFile(saved)).split("\n").sort();
    await Deno.writeTextFile(`${dir}/lines.json`, lines.join("\n") + "\n");
    const neither = await cli(
      ["run", "evalpipe.yaml", "--baseline", "./lines.json"],
      dir,
    );
    assert.equal(neither.code, 2, neither.stderr);
    assert.match(
      neither.stderr,
      /^evalpipe: Invalid baseline "\.\/lines\.json": it is neither a baseline \(run --save-baseline\), a RunRecord \(run --record\) nor Scores \(run --out\): not one JSON document \(.*\), nor one JSON object a line$/m,
    );
    assert.doesNotMatch(neither.stderr, /"metric" is missing|\n\s+at /);
  });
});

Deno.test("run --baseline reads a saved baseline given on a pipe (/dev/stdin), small or past the start it is told by", async () => {
  await withTempDir(async (dir) => {
    // Long inputs make the larger baseline pass the 64 KiB its kind is told
    // by: a pipe gives each byte once, so the rest is read on from there.
    for (const size of [3, 400]) {
      const ids = Array.from({ length: size }, (_, i) => `c${i}`);
      // Every case answers "yes" but the one at `failing`.
      const writeCases = (failing: number) =>
        Deno.writeTextFile(
          `${dir}/d.jsonl`,
          ids.map((id, i) =>
            JSON.stringify({
              id,
              input: `${id} ${"x".repeat(300)}`,
              output: i === failing ? "no" : "yes",
              expected: "yes",
            })
          ).join("\n") + "\n",
        );
      await writeCases(1);
      await Deno.writeTextFile(
        `${dir}/evalpipe.yaml`,
        "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
      );
      const saved = await cli(
        ["run", "evalpipe.yaml", "--save-baseline", "b.json"],
        dir,
      );
      assert.equal(saved.code, 0, saved.stderr);
      const text = await Deno.readTextFile(`${dir}/b.json`);
      assert.ok(size === 3 || text.length > 64 * 1024, `${text.length}`);
      // Case c1 now passes, c2 fails: one newly failing, one fixed.
      await writeCases(2);
      const run = await cliWithStdin(
        ["run", "evalpipe.yaml", "--baseline", "/dev/stdin"],
        dir,
        text,
      );
      assert.equal(run.code, 1, `${size} cases: ${run.stderr}`);
      assert.match(
        run.stderr,
        /newly failing \(1\):\n {2}d\.jsonl#c2 {2}exact_match {2}1\/1 → 0\/1/,
        `${size} cases`,
      );
      assert.doesNotMatch(run.stderr, /Invalid baseline|end of JSON/);
    }
  });
});
