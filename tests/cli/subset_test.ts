// `run --limit`, `--sample --seed`, `--filter`: part of a suite runs, the rest
// is counted as skipped, never silently absent.

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

async function writeSuite(dir: string, n = 20): Promise<string> {
  const lines: string[] = [];
  for (let i = 1; i <= n; i++) {
    lines.push(JSON.stringify({
      input: `q${i}`,
      output: i % 4 === 0 ? "no" : "yes",
      expected: "yes",
      metadata: { topic: i % 2 === 0 ? "math" : "geo" },
    }));
  }
  await Deno.writeTextFile(`${dir}/cases.jsonl`, lines.join("\n") + "\n");
  await Deno.writeTextFile(
    `${dir}/suite.yaml`,
    "dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }, { type: contains, value: y }]\n",
  );
  return `${dir}/suite.yaml`;
}

const parse = (stdout: string) =>
  stdout.trim().split("\n").map((l) => JSON.parse(l));

Deno.test("run --limit runs the first N; the rest are skipped Scores, counted in the summary, aggregates and record", async () => {
  await withTempDir(async (dir) => {
    const config = await writeSuite(dir);
    const r = await cli(
      ["run", config, "--limit", "5", "--record", `${dir}/r.json`],
      dir,
    );
    assert.equal(r.code, 0, r.stderr);
    const scores = parse(r.stdout);
    // One Score per unit and metric, as a whole run: none silently absent.
    assert.equal(scores.length, 40);
    const ran = scores.filter((s) => s.status !== "skipped");
    assert.deepEqual(
      [...new Set(ran.map((s) => s.example_id))],
      [1, 2, 3, 4, 5].map((i) => `cases.jsonl#${i}`),
    );
    // The skipped come after, in dataset order, saying why.
    assert.equal(scores[10].example_id, "cases.jsonl#6");
    assert.equal(scores[10].status, "skipped");
    assert.equal(scores[10].validity, "not_measured");
    assert.equal(scores[10].value, null);
    assert.equal(scores[10].reason, "skipped: not in the subset --limit 5");
    assert.match(r.stderr, /subset --limit 5: 5 examples ran, 15 skipped/);
    const record = JSON.parse(await Deno.readTextFile(`${dir}/r.json`));
    assert.deepEqual(record.subset, { limit: 5 });
    assert.deepEqual(record.selection, { examples: 20, ran: 5, skipped: 15 });
    const agg = record.aggregates.find((a: { metric: string }) =>
      a.metric === "exact_match"
    );
    assert.equal(agg.skipped, 15);
    assert.equal(agg.n, 20);
    assert.equal(agg.mean, 0.8);
    // One record line per skipped unit, its Scores together.
    const skippedLines = record.units.filter((
      u: { scores: { status: string }[] },
    ) => u.scores[0]!.status === "skipped");
    assert.equal(skippedLines.length, 15);
    assert.equal(skippedLines[0].scores.length, 2);
  });
});

Deno.test("run --sample N --seed S draws the same N examples each time; another seed, others", async () => {
  await withTempDir(async (dir) => {
    const config = await writeSuite(dir, 40);
    const ranIds = async (seed: string) => {
      const r = await cli(
        ["run", config, "--sample", "6", "--seed", seed],
        dir,
      );
      assert.equal(r.code, 0, r.stderr);
      return [
        ...new Set(
          parse(r.stdout).filter((s) => s.status !== "skipped").map((s) =>
            s.example_id
          ),
        ),
      ];
    };
    const a = await ranIds("7");
    assert.equal(a.length, 6);
    assert.deepEqual(await ranIds("7"), a);
    assert.notDeepEqual(await ranIds("8"), a);
  });
});

Deno.test("run --filter matches example ids and metadata values", async () => {
  await withTempDir(async (dir) => {
    const config = await writeSuite(dir);
    const r = await cli(["run", config, "--filter", "^math$|#1$"], dir);
    assert.equal(r.code, 0, r.stderr);
    const ran = [
      ...new Set(
        parse(r.stdout).filter((s) => s.status !== "skipped").map((s) =>
          s.example_id
        ),
      ),
    ];
    assert.deepEqual(ran, [
      "cases.jsonl#1",
      ...[2, 4, 6, 8, 10, 12, 14, 16, 18, 20].map((i) => `cases.jsonl#${i}`),
    ]);
  });
});

Deno.test("the shards of a subset merge into the unsharded run of that subset", async () => {
  await withTempDir(async (dir) => {
    const config = await writeSuite(dir, 30);
    const subset = ["--filter", "geo", "--limit", "9"];
    const whole = await cli(
      ["run", config, ...subset, "--record", `${dir}/w.json`],
      dir,
    );
    assert.equal(whole.code, 0, whole.stderr);
    for (const k of [1, 2, 3]) {
      const r = await cli(
        [
          "run",
          config,
          ...subset,
          "--shard",
          `${k}/3`,
          "--record",
          `${dir}/s${k}.json`,
        ],
        dir,
      );
      assert.equal(r.code, 0, r.stderr);
    }
    const merged = await cli(
      [
        "merge",
        ...[1, 2, 3].map((k) => `${dir}/s${k}.json`),
        "--record",
        `${dir}/m.json`,
      ],
      dir,
    );
    assert.equal(merged.code, 0, merged.stderr);
    assert.equal(merged.stdout, whole.stdout);
    const mask = (t: string) =>
      t.replace(/"(run_id|started_at|finished_at)":"[^"]*"/g, "");
    assert.equal(
      mask(await Deno.readTextFile(`${dir}/m.json`)),
      mask(await Deno.readTextFile(`${dir}/w.json`)),
    );
    // Shards of another subset are not of this run.
    const other = await cli(
      [
        "run",
        config,
        "--limit",
        "9",
        "--shard",
        "3/3",
        "--record",
        `${dir}/o3.json`,
      ],
      dir,
    );
    assert.equal(other.code, 0, other.stderr);
    const refused = await cli(
      ["merge", `${dir}/s1.json`, `${dir}/s2.json`, `${dir}/o3.json`],
      dir,
    );
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /different subsets/);
  });
});

Deno.test("run refuses --seed without --sample, a --filter that is no regex, --sample of stdin", async () => {
  await withTempDir(async (dir) => {
    const config = await writeSuite(dir);
    const seed = await cli(["run", config, "--seed", "1"], dir);
    assert.equal(seed.code, 2);
    assert.match(seed.stderr, /--seed goes with --sample/);
    const filter = await cli(["run", config, "--filter", "("], dir);
    assert.equal(filter.code, 2);
    assert.match(filter.stderr, /--filter "\(" is not a regular expression/);
    await Deno.writeTextFile(
      `${dir}/stdin.yaml`,
      "dataset: '-'\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    const stdin = await cli(["run", `${dir}/stdin.yaml`, "--sample", "2"], dir);
    assert.equal(stdin.code, 2);
    assert.match(stdin.stderr, /--sample reads the dataset twice/);
  });
});

Deno.test("run --filter matches an id or a metadata value whatever way its accents are written, and the Scores keep the ids as written", async () => {
  await withTempDir(async (dir) => {
    const nfd = (text: string) => text.normalize("NFD");
    // Ids and a value written in NFD (macOS file names, some exports).
    const cases = [
      { id: nfd("crème-1"), input: "q", output: "a", expected: "a" },
      {
        id: "plain-2",
        input: "q",
        output: "a",
        expected: "a",
        metadata: { city: nfd("Zürich") },
      },
      { id: "plain-3", input: "q", output: "a", expected: "a" },
    ];
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      cases.map((c) => JSON.stringify(c)).join("\n") + "\n",
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    // The pattern as typed (NFC), and as pasted from a file name (NFD).
    for (const pattern of ["crème|Zürich", nfd("crème|Zürich")]) {
      const r = await cli(["run", "suite.yaml", "--filter", pattern], dir);
      assert.equal(r.code, 0, r.stderr);
      const ran = parse(r.stdout).filter((s) => s.status !== "skipped")
        .map((s) => s.example_id);
      assert.deepEqual(ran, [
        `cases.jsonl#${nfd("crème-1")}`,
        "cases.jsonl#plain-2",
      ]);
    }
  });
});

Deno.test("run and merge exit 2 when --filter or --sample chose no example: a CI job that evaluated nothing does not pass", async () => {
  await withTempDir(async (dir) => {
    // No gate: before, a pattern that matched nothing (a typo in a pull
    // request job) exited 0 with every Score skipped.
    const config = await writeSuite(dir);
    const none = await cli(
      ["run", config, "--filter", "no-such-topic", "--record", `${dir}/r.json`],
      dir,
    );
    assert.equal(none.code, 2, none.stderr);
    assert.match(
      none.stderr,
      /evalpipe: subset --filter "no-such-topic" chose none of the 20 examples: nothing was evaluated/,
    );
    // Nothing computed is lost: every unit's skipped Scores, and the record.
    const scores = parse(none.stdout);
    assert.equal(scores.length, 40);
    assert.ok(scores.every((s) => s.status === "skipped"));
    const record = JSON.parse(await Deno.readTextFile(`${dir}/r.json`));
    assert.deepEqual(record.selection, { examples: 20, ran: 0, skipped: 20 });
    // Under GitHub Actions the job's failure is annotated with its reason.
    const annotated = await cli(
      ["run", config, "--filter", "no-such-topic", "--annotations"],
      dir,
    );
    assert.equal(annotated.code, 2, annotated.stderr);
    assert.match(
      annotated.stderr,
      /^::error title=evalpipe nothing evaluated::subset --filter "no-such-topic" chose none of the 20 examples: nothing was evaluated/m,
    );
    // A shard may hold none of a subset's examples: merge judges the whole.
    for (const k of [1, 2]) {
      const shard = await cli(
        [
          "run",
          config,
          "--filter",
          "no-such-topic",
          "--shard",
          `${k}/2`,
          "--record",
          `${dir}/s${k}.json`,
        ],
        dir,
      );
      assert.equal(shard.code, 0, shard.stderr);
    }
    const merged = await cli(
      ["merge", `${dir}/s1.json`, `${dir}/s2.json`],
      dir,
    );
    assert.equal(merged.code, 2, merged.stderr);
    assert.match(
      merged.stderr,
      /evalpipe: subset --filter "no-such-topic" chose none of the 20 examples: nothing was evaluated/,
    );
    assert.equal(parse(merged.stdout).length, 40);
    // A subset that chose some still passes, in a run and a merge.
    const some = await cli(["run", config, "--filter", "^math$"], dir);
    assert.equal(some.code, 0, some.stderr);
  });
});

Deno.test("run --sample 0 and --limit 0 choose no example and exit 2 as nothing evaluated, as the message says; --concurrency 0 is still refused", async () => {
  await withTempDir(async (dir) => {
    // Before, the flag parser refused 0 ("needs a positive number") while
    // the messages said --sample could choose nothing.
    const config = await writeSuite(dir);
    for (
      const [args, flags] of [
        [["--sample", "0"], "--sample 0 --seed 0"],
        [["--limit", "0"], "--limit 0"],
      ] as const
    ) {
      const r = await cli(["run", config, ...args], dir);
      assert.equal(r.code, 2, r.stderr);
      assert.ok(
        r.stderr.includes(
          `evalpipe: subset ${flags} chose none of the 20 examples: nothing was evaluated`,
        ),
        r.stderr,
      );
      const scores = parse(r.stdout);
      assert.equal(scores.length, 40);
      assert.ok(scores.every((s) => s.status === "skipped"));
    }
    const zero = await cli(["run", config, "--concurrency", "0"], dir);
    assert.equal(zero.code, 2);
    assert.match(zero.stderr, /"--concurrency" needs a positive number/);
  });
});

Deno.test("run and view count one example and one unit in the singular", async () => {
  await withTempDir(async (dir) => {
    // Before: "chose none of the 1 examples", "1 examples ran", "1 units".
    const config = await writeSuite(dir, 1);
    const none = await cli(["run", config, "--filter", "no-such-topic"], dir);
    assert.equal(none.code, 2, none.stderr);
    assert.ok(
      none.stderr.includes(
        'subset --filter "no-such-topic" chose none of the 1 example: nothing was evaluated',
      ),
      none.stderr,
    );
    const one = await cli(
      ["run", config, "--limit", "1", "--out", `${dir}/s.ndjson`],
      dir,
    );
    assert.equal(one.code, 0, one.stderr);
    assert.ok(
      one.stderr.includes("subset --limit 1: 1 example ran"),
      one.stderr,
    );
    const shard = await cli(["run", config, "--shard", "1/1"], dir);
    assert.equal(shard.code, 0, shard.stderr);
    assert.ok(
      shard.stderr.includes("shard 1/1: 1 of 1 example is this shard's"),
      shard.stderr,
    );
    const view = await cli(["view", `${dir}/s.ndjson`, "--by-call"], dir);
    assert.equal(view.code, 0, view.stderr);
    assert.match(view.stdout, /\n1 unit, 0 with a failure\n$/);
  });
});

Deno.test("run --limit of a matrix run skips each left-out example once per target: no Score without a target, no gate failed for it", async () => {
  await withTempDir(async (dir) => {
    await writeSuite(dir);
    await Deno.writeTextFile(
      `${dir}/matrix.yaml`,
      "dataset: cases.jsonl\ntargets: { v1: { type: replay }, v2: { type: replay } }\nmatrix: [v1, v2]\nepochs: 2\nscorers: [{ type: exact_match }]\ngates: { exact_match: { min_pass_rate: 0.5 } }\n",
    );
    const r = await cli(
      ["run", "matrix.yaml", "--limit", "3", "--junit", "j.xml"],
      dir,
    );
    // Before, the left-out examples' Scores named no target: a metric of
    // their own in the summary, all skipped, whose gate failed ("pass rate
    // undefined"), so every matrix run of a subset exited 1.
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /gate failed/);
    const scores = parse(r.stdout);
    // 20 examples × 2 targets × 2 epochs, as a whole run.
    assert.equal(scores.length, 80);
    assert.ok(scores.every((s) => s.target_name !== undefined));
    const late = scores.filter((s) => s.example_id === "cases.jsonl#4");
    assert.deepEqual(late.map((s) => [s.unit_id, s.target_name, s.status]), [
      ["cases.jsonl#4@1~v1", "v1", "skipped"],
      ["cases.jsonl#4@2~v1", "v1", "skipped"],
      ["cases.jsonl#4@1~v2", "v2", "skipped"],
      ["cases.jsonl#4@2~v2", "v2", "skipped"],
    ]);
    // Each target's JUnit suite lists them.
    const xml = await Deno.readTextFile(`${dir}/j.xml`);
    assert.equal(xml.match(/<testsuite /g)?.length, 2);
    assert.equal(xml.match(/<skipped>/g)?.length, 68);
  });
});

Deno.test("run and merge of a subset that chose nothing, under a gate, say only that nothing was evaluated: no gate line, one ::error", async () => {
  await withTempDir(async (dir) => {
    await writeSuite(dir);
    await Deno.writeTextFile(
      `${dir}/gated.yaml`,
      "dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\ngates: { exact_match: { min_pass_rate: 0.5 } }\n",
    );
    const saved = await cli(
      ["run", "gated.yaml", "--save-baseline", "main"],
      dir,
    );
    assert.equal(saved.code, 0, saved.stderr);
    const github = { GITHUB_ACTIONS: "true" };
    const nothing = /chose none of the 20 examples: nothing was evaluated/;
    // Before, each printed "gate failed: exact_match: pass rate undefined
    // fails min_pass_rate 0.5" first, and its ::error beside the one that
    // says why: two errors on the pull request for one typo (three with
    // --baseline, which "cannot compare" with nothing).
    const only = (stderr: string) => {
      assert.doesNotMatch(
        stderr,
        /gate failed|nothing measured|cannot compare|regressed/,
      );
      const commands = stderr.split("\n").filter((l) => l.startsWith("::"));
      assert.equal(commands.length, 1, stderr);
      assert.match(commands[0]!, /^::error title=evalpipe nothing evaluated::/);
      assert.match(commands[0]!, nothing);
    };
    for (
      const args of [
        ["--sample", "0"],
        ["--filter", "no-such-topic"],
        ["--filter", "no-such-topic", "--baseline", "main"],
      ]
    ) {
      const r = await cli(["run", "gated.yaml", ...args], dir, github);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, nothing);
      only(r.stderr);
    }
    for (const k of [1, 2]) {
      const shard = await cli(
        [
          "run",
          "gated.yaml",
          "--filter",
          "no-such-topic",
          "--shard",
          `${k}/2`,
          "--record",
          `s${k}.json`,
        ],
        dir,
      );
      assert.equal(shard.code, 0, shard.stderr);
    }
    for (const args of [[], ["--baseline", "main"]]) {
      const merged = await cli(
        ["merge", "s1.json", "s2.json", ...args],
        dir,
        github,
      );
      assert.equal(merged.code, 2, merged.stderr);
      assert.match(merged.stderr, nothing);
      only(merged.stderr);
    }
  });
});

Deno.test("run --markdown and the step summary of a subset that chose nothing, under a gate, say nothing was evaluated, as stderr does: no failed gate, no 'undefined'", async () => {
  await withTempDir(async (dir) => {
    await writeSuite(dir);
    await Deno.writeTextFile(
      `${dir}/gated.yaml`,
      "dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\ngates: { exact_match: { min_pass_rate: 0.9 } }\n",
    );
    for (const args of [["--sample", "0"], ["--filter", "no-such-topic"]]) {
      await Deno.writeTextFile(`${dir}/summary.md`, "");
      const r = await cli(
        ["run", "gated.yaml", ...args, "--markdown", "m.md"],
        dir,
        { GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: `${dir}/summary.md` },
      );
      assert.equal(r.code, 2, r.stderr);
      assert.match(
        r.stderr,
        /chose none of the 20 examples: nothing was evaluated/,
      );
      for (const file of ["m.md", "summary.md"]) {
        const text = await Deno.readTextFile(`${dir}/${file}`);
        const headline = text.split("\n")[2]!;
        assert.match(
          headline,
          /^❌ nothing evaluated: the subset chose none of the 20 examples · /,
          file,
        );
        assert.doesNotMatch(headline, /gate/, file);
        assert.doesNotMatch(text, /undefined/, file);
      }
    }
  });
});

Deno.test("run and merge of a subset that chose nothing, with --baseline, say only that nothing was evaluated: no comparison on stderr, no gate row or baseline section in the Markdown", async () => {
  await withTempDir(async (dir) => {
    await writeSuite(dir);
    await Deno.writeTextFile(
      `${dir}/gated.yaml`,
      "dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\ngates: { exact_match: { min_pass_rate: 0.9 } }\n",
    );
    const saved = await cli(
      ["run", "gated.yaml", "--save-baseline", "main"],
      dir,
    );
    assert.equal(saved.code, 1, saved.stderr);
    // Before, stderr said `Compared with baseline "…": no case changed` of a
    // run that compared nothing, and the Markdown kept the gate's failed row
    // and an "Against the baseline" section under "nothing evaluated".
    const only = (stderr: string, markdown: string, what: string) => {
      assert.match(stderr, /chose none of the 20 examples: nothing was/);
      assert.doesNotMatch(stderr, /Compared with|no case changed|Δ/, what);
      assert.match(
        markdown.split("\n")[2]!,
        /^❌ nothing evaluated: the subset chose none of the 20 examples · /,
        what,
      );
      assert.match(
        markdown,
        /### Gates\n\nNot checked: nothing was evaluated\.\n\n### Worst/,
        what,
      );
      assert.doesNotMatch(
        markdown,
        /❌ failed|✅ held|Against the baseline|Compared with|No case changed/,
        what,
      );
    };
    for (const args of [["--sample", "0"], ["--filter", "no-such-topic"]]) {
      await Deno.writeTextFile(`${dir}/step.md`, "");
      const r = await cli(
        [
          "run",
          "gated.yaml",
          ...args,
          "--baseline",
          "main",
          "--markdown",
          "m.md",
        ],
        dir,
        { GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: `${dir}/step.md` },
      );
      assert.equal(r.code, 2, r.stderr);
      for (const file of ["m.md", "step.md"]) {
        only(
          r.stderr,
          await Deno.readTextFile(`${dir}/${file}`),
          `${args.join(" ")}: ${file}`,
        );
      }
    }
    for (const k of [1, 2]) {
      const shard = await cli(
        [
          "run",
          "gated.yaml",
          "--sample",
          "0",
          "--shard",
          `${k}/2`,
          "--record",
          `s${k}.json`,
        ],
        dir,
      );
      assert.equal(shard.code, 0, shard.stderr);
    }
    await Deno.writeTextFile(`${dir}/step.md`, "");
    const merged = await cli(
      ["merge", "s1.json", "s2.json", "--baseline", "main"],
      dir,
      { GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: `${dir}/step.md` },
    );
    assert.equal(merged.code, 2, merged.stderr);
    only(merged.stderr, await Deno.readTextFile(`${dir}/step.md`), "merge");
  });
});
