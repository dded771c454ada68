import assert from "node:assert/strict";
import { exitCodeOf } from "../../src/base/mod.ts";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import {
  defaultOf,
  editDistance,
  formatFlags,
  nearest,
  parseFlags,
  UsageError,
} from "../../src/cli/mod.ts";

const SPEC = {
  out: { type: "string", value: "FILE", help: "Where" },
  concurrency: { type: "integer", default: 8, help: "Units at once" },
  timeout: { type: "number", help: "Seconds" },
  scorer: { type: "string", repeatable: true, value: "CMD", help: "A scorer" },
  seed: { type: "integer", repeatable: true, help: "A seed" },
  force: { type: "boolean", help: "Go on" },
} as const;

/** True only when A and B are the same type. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends
  (<T>() => T extends B ? 1 : 2) ? true : false;

function usageError(args: string[], message: RegExp): void {
  assert.throws(() => parseFlags(args, SPEC), (error) => {
    assert.ok(error instanceof UsageError);
    assert.equal(exitCodeOf(error), 2);
    assert.match(error.message, message);
    return true;
  });
}

Deno.test("parseFlags types each flag from its declaration", () => {
  const { flags } = parseFlags([], SPEC);
  const typed: Equal<typeof flags, {
    out: string | undefined;
    concurrency: number;
    timeout: number | undefined;
    scorer: string[];
    seed: number[];
    force: boolean;
  }> = true;
  assert.ok(typed);
  assert.deepEqual(flags, {
    concurrency: 8,
    scorer: [],
    seed: [],
    force: false,
  });
});

Deno.test("parseFlags reads --flag value and --flag=value alike", () => {
  for (
    const args of [
      ["--out", "a.ndjson", "--concurrency", "4", "--timeout", "1.5"],
      ["--out=a.ndjson", "--concurrency=4", "--timeout=1.5"],
    ]
  ) {
    const { flags } = parseFlags(["suite.yaml", ...args, "--force"], SPEC);
    assert.equal(flags.out, "a.ndjson");
    assert.equal(flags.concurrency, 4);
    assert.equal(flags.timeout, 1.5);
    assert.equal(flags.force, true);
  }
  assert.equal(parseFlags(["--out=a=b"], SPEC).flags.out, "a=b");
  // A value that is one of the command's flags is a slip, not a file name.
  assert.throws(
    () => parseFlags(["--out", "--force"], SPEC),
    (e: Error) =>
      e instanceof UsageError &&
      e.message ===
        'Option "--out" needs a value, not the option "--force" (write --out=--force if you mean that value)',
  );
  assert.equal(parseFlags(["--out=--force"], SPEC).flags.out, "--force");
  // Anything else that starts with a dash is a value: a regex, stdin.
  assert.equal(parseFlags(["--out", "-"], SPEC).flags.out, "-");
  assert.equal(parseFlags(["--out", "--nope"], SPEC).flags.out, "--nope");
});

Deno.test("parseFlags collects a repeatable flag's values in order", () => {
  const { flags } = parseFlags(
    ["--scorer", "a.py", "--seed=3", "--scorer=b.py", "--seed", "1"],
    SPEC,
  );
  assert.deepEqual(flags.scorer, ["a.py", "b.py"]);
  assert.deepEqual(flags.seed, [3, 1]);
});

Deno.test("parseFlags keeps positionals in order; -- ends the flags; - is a positional", () => {
  const { flags, positionals } = parseFlags(
    ["a", "-", "--force", "b", "--", "--out", "c"],
    SPEC,
  );
  assert.deepEqual(positionals, ["a", "-", "b", "--out", "c"]);
  assert.equal(flags.out, undefined);
});

Deno.test("parseFlags rejects an integer flag given 1.5, naming the flag", () => {
  usageError(
    ["--concurrency", "1.5"],
    /^Option "--concurrency" needs a whole number, not "1\.5"$/,
  );
  usageError(["--seed=2.5"], /"--seed" needs a whole number, not "2\.5"/);
});

Deno.test("parseFlags rejects a number that is not positive and finite", () => {
  for (const raw of ["0", "-1", "many", "", " ", "Infinity", "NaN"]) {
    usageError(
      ["--timeout", raw],
      new RegExp(
        `^Option "--timeout" needs a positive number, not ${
          JSON.stringify(JSON.stringify(raw)).slice(1, -1)
        }$`,
      ),
    );
  }
});

Deno.test("parseFlags rejects an unknown flag with a message naming it", () => {
  usageError(["--bogus"], /^Unknown option "--bogus"$/);
  usageError(["--bogus=1"], /^Unknown option "--bogus"$/);
  // Names of Object.prototype are not flags either.
  usageError(["--constructor"], /^Unknown option "--constructor"$/);
});

Deno.test("parseFlags rejects a missing value, a value for a boolean, a flag given twice", () => {
  usageError(["--out"], /^Option "--out" needs a value$/);
  usageError(["--force=yes"], /^Option "--force" takes no value$/);
  usageError(["--out", "a", "--out", "b"], /^Option "--out" is given twice$/);
  usageError(["--force", "--force"], /^Option "--force" is given twice$/);
});

Deno.test("formatFlags lists each flag with its placeholder, default and repeatability", () => {
  const text = formatFlags(SPEC).join("\n");
  // No flag has a one-letter alias here: no room is kept for one.
  assert.match(text, /^ {2}--out FILE {10}Where$/m);
  assert.match(text, /^ {2}--concurrency N {5}Units at once \(default: 8\)$/m);
  assert.match(text, /^ {2}--scorer CMD {8}A scorer \(repeatable\)$/m);
  assert.match(text, /^ {2}--force {13}Go on$/m);
  assert.equal(defaultOf(SPEC.timeout), undefined);
  assert.equal(
    defaultOf({ type: "integer", help: "", defaultText: "the config's" }),
    "the config's",
  );
});

Deno.test("formatFlags wraps long help under its column, within the width", () => {
  const lines = formatFlags({
    grace: {
      type: "number",
      value: "SECONDS",
      default: 10,
      help: "After SIGINT/SIGTERM, how long running units may finish " +
        "before they are killed",
    },
  }, 60);
  assert.ok(lines.length > 1);
  for (const line of lines) assert.ok(line.length <= 60, line);
  for (const line of lines.slice(1)) assert.match(line, /^ {22}\S/);
  assert.match(lines.join(" "), /\(default: 10\)$/);
});

Deno.test("parseFlags names the nearest flag when one is misspelt, and none when nothing is near", () => {
  usageError(
    ["--concurency", "4"],
    /^Unknown option "--concurency"; did you mean "--concurrency"\?$/,
  );
  usageError(
    ["--froce"],
    /^Unknown option "--froce"; did you mean "--force"\?$/,
  );
  usageError(["--xyzzy"], /^Unknown option "--xyzzy"$/);
  // A long flag with one dash is the likely slip.
  usageError(["-force"], /^Unknown option "-f"; did you mean "--force"\?$/);
});

Deno.test("parseFlags reads one-letter aliases as -o FILE, -oFILE and -o=FILE", () => {
  const spec = {
    out: { type: "string", short: "o", help: "Where" },
    concurrency: { type: "integer", short: "c", help: "How many" },
    help: { type: "boolean", short: "h", help: "Help" },
  } as const;
  for (const args of [["-o", "a.jsonl"], ["-oa.jsonl"], ["-o=a.jsonl"]]) {
    assert.equal(parseFlags(args, spec).flags.out, "a.jsonl");
  }
  const { flags, positionals } = parseFlags(
    ["suite.yaml", "-c", "3", "-h"],
    spec,
  );
  assert.deepEqual([flags.concurrency, flags.help, positionals], [
    3,
    true,
    ["suite.yaml"],
  ]);
  assert.throws(
    () => parseFlags(["-z"], spec),
    /^UsageError: Unknown option "-z"$/,
  );
  assert.throws(
    () => parseFlags(["-o", "-c"], spec),
    /needs a value, not the option "-c"/,
  );
  assert.throws(() => parseFlags(["-h=1"], spec), /"-h" takes no value/);
  // A lone dash is stdin, a positional; after --, nothing is a flag.
  assert.deepEqual(parseFlags(["-", "--", "-o"], spec).positionals, [
    "-",
    "-o",
  ]);
});

Deno.test("editDistance counts a swap of neighbours as one edit", () => {
  assert.equal(editDistance("rnu", "run"), 1);
  assert.equal(editDistance("", "abc"), 3);
  assert.equal(editDistance("kitten", "sitting"), 3);
  assert.equal(nearest("veiw", ["run", "view", "diff"]), "view");
  assert.equal(nearest("a", ["b"]), "b", "one edit is always near enough");
});

Deno.test("a number flag with a max refuses more, as the config key of the same name does", async () => {
  const spec = { epochs: { type: "integer", max: 1000, help: "N" } } as const;
  assert.equal(parseFlags(["--epochs", "1000"], spec).flags.epochs, 1000);
  assert.throws(
    () => parseFlags(["--epochs=1001"], spec),
    (e: unknown) =>
      e instanceof UsageError &&
      e.message === 'Option "--epochs" must be at most 1000, not "1001"',
  );
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/d.jsonl`, '{"input":"q","output":"a"}\n');
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    for (
      const [args, message] of [
        [
          ["validate", "s.yaml", "--epochs", "5000"],
          '"--epochs" must be at most 1000',
        ],
        [
          ["run", "s.yaml", "--epochs", "1001"],
          '"--epochs" must be at most 1000',
        ],
        [
          ["run", "s.yaml", "-c", "1025"],
          '"--concurrency" must be at most 1024',
        ],
        [
          ["run", "s.yaml", "--max-processes", "5000"],
          '"--max-processes" must be at most 4096',
        ],
      ] as const
    ) {
      const out = await cli([...args], dir);
      assert.equal(out.code, 2, out.stderr);
      assert.ok(out.stderr.includes(message), out.stderr);
    }
  });
});

Deno.test("run refuses --annotations with --no-annotations, as --cache with --no-cache", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/d.jsonl`, '{"input":"q","output":"a"}\n');
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    const out = await cli(
      ["run", "s.yaml", "--no-annotations", "--annotations"],
      dir,
    );
    assert.equal(out.code, 2, out.stderr);
    assert.equal(out.stdout, "");
    assert.match(
      out.stderr,
      /^evalpipe: --annotations and --no-annotations disagree\n/,
    );
  });
});

Deno.test("every command that reads several inputs refuses stdin (-) named twice, before reading", async () => {
  await withTempDir(async (dir) => {
    for (
      const [args, message] of [
        [["aggregate", "-", "-"], "aggregate reads stdin (-) once"],
        [["score", "--scorer", "true", "-", "-"], "score reads stdin (-) once"],
        [["merge", "-", "-"], "merge reads stdin (-) once"],
        [
          ["report", "-", "-", "--html", "r.html"],
          "report reads stdin (-) once",
        ],
        [["diff", "-", "-"], "diff reads stdin (-) once: give it as A or B"],
      ]
    ) {
      const out = await cli(args as string[], dir);
      assert.equal(out.code, 2, `${args}: ${out.stderr}`);
      assert.equal(out.stdout, "");
      assert.ok(
        out.stderr.startsWith(`evalpipe: ${message}
`),
        `${args}: ${out.stderr}`,
      );
    }
  });
});

Deno.test("parseFlags takes - for a flag that writes a file as stdout, or refuses it, naming the flag", () => {
  const spec = {
    out: { type: "string", dash: "stdout", help: "Scores" },
    record: { type: "string", dash: { refused: "stdout is taken" }, help: "" },
  } as const;
  assert.deepEqual(parseFlags(["--out", "-"], spec).flags, {});
  assert.deepEqual(parseFlags(["--out=./-"], spec).flags, { out: "./-" });
  assert.throws(
    () => parseFlags(["--out", "-", "--out", "a"], spec),
    /Option "--out" is given twice/,
  );
  assert.throws(() => parseFlags(["--record", "-"], spec), (error) => {
    assert.ok(error instanceof UsageError);
    assert.equal(
      error.message,
      'Option "--record" takes a file, not stdout ("-"): stdout is taken; write ./- for a file named "-"',
    );
    return true;
  });
});

Deno.test("no command writes a file named -: run --out - is stdout, every other output flag refuses -", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/d.jsonl`, '{"input":"q","output":"a"}\n');
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    const out = await cli(["run", "s.yaml", "--out", "-"], dir);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(JSON.parse(out.stdout).example_id, "d.jsonl#1");
    assert.match(out.stderr, /1 score\n/);
    assert.ok(!(await exists(`${dir}/-`)));
    const record = await cli(["run", "s.yaml", "--record", "r.json"], dir);
    assert.equal(record.code, 0, record.stderr);
    for (
      const [args, flag, why] of [
        [["run", "s.yaml", "--record", "-"], "--record", "run's stdout"],
        [["run", "s.yaml", "-o", "o.ndjson", "--html=-"], "--html", "run's"],
        [["run", "s.yaml", "--units", "-"], "--units", "run's stdout"],
        [["run", "s.yaml", "--junit", "-"], "--junit", "run's stdout"],
        [["run", "s.yaml", "--markdown", "-"], "--markdown", "run's stdout"],
        [["merge", "r.json", "--record", "-"], "--record", "merge's stdout"],
        [["report", "r.json", "--html", "-"], "--html", "report writes"],
        [["report", "r.json", "--junit", "-"], "--junit", "report writes"],
        [["report", "r.json", "--markdown", "-"], "--markdown", "report"],
      ] as const
    ) {
      const refused = await cli([...args], dir);
      assert.equal(refused.code, 2, `${args}: ${refused.stderr}`);
      assert.equal(refused.stdout, "", `${args}`);
      assert.ok(
        refused.stderr.startsWith(
          `evalpipe: Option "${flag}" takes a file, not stdout ("-"): ${why}`,
        ),
        `${args}: ${refused.stderr}`,
      );
      assert.ok(!(await exists(`${dir}/-`)), `${args} wrote a file named -`);
    }
  });
});

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

Deno.test("export and init refuse - as the folder they write, as output flags refuse it: no folder named - is made", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/d.jsonl`, '{"input":"q","output":"a"}\n');
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    const record = await cli(["run", "s.yaml", "--record", "r.json"], dir);
    assert.equal(record.code, 0, record.stderr);
    for (
      const [args, command] of [
        [["export", "--to", "evalglass", "r.json", "-"], "export"],
        [["init", "-"], "init"],
      ] as const
    ) {
      const refused = await cli([...args], dir);
      assert.equal(refused.code, 2, `${args}: ${refused.stderr}`);
      assert.equal(refused.stdout, "", `${args}`);
      assert.ok(
        refused.stderr.startsWith(
          `evalpipe: ${command} writes a folder, not stdout ("-"); write ./- for a folder named "-"\n`,
        ),
        `${args}: ${refused.stderr}`,
      );
      assert.ok(!(await exists(`${dir}/-`)), `${args} made a folder named -`);
    }
    // ./- is a folder of that name, as for the flags.
    const named = await cli(["init", "./-"], dir);
    assert.equal(named.code, 0, named.stderr);
    assert.ok(await exists(`${dir}/-/evalpipe.yaml`));
  });
});
