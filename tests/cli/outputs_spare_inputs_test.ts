// Issue 18 item 4: outputs never destroy inputs, nor earlier results. Every
// case runs the real command line against files made in a temp folder.

import assert from "node:assert/strict";
import { cli, cliInShell, cliWithStdin } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

const DATASET = '{"input":"q1","output":"a","expected":"a"}\n' +
  '{"input":"q2","output":"b","expected":"a"}\n';
const SUITE =
  "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n";

async function suite(dir: string): Promise<void> {
  await Deno.writeTextFile(`${dir}/d.jsonl`, DATASET);
  await Deno.writeTextFile(`${dir}/s.yaml`, SUITE);
}

/** Every file under `dir` (symlinks as their target) and its bytes. */
async function snapshot(
  dir: string,
  prefix = "",
  files: Record<string, string> = {},
): Promise<Record<string, string>> {
  for await (const entry of Deno.readDir(`${dir}/${prefix}`)) {
    const name = `${prefix}${entry.name}`;
    const path = `${dir}/${name}`;
    if (entry.isSymlink) files[name] = `-> ${await Deno.readLink(path)}`;
    else if (entry.isDirectory) await snapshot(dir, `${name}/`, files);
    else files[name] = await Deno.readTextFile(path);
  }
  return files;
}

/** Runs `args`, which must be refused with exit 2 naming both files, changing nothing. */
async function refused(
  dir: string,
  args: string[],
  names: [string, string],
): Promise<void> {
  const before = await snapshot(dir);
  const { code, stdout, stderr } = await cli(args, dir);
  assert.equal(code, 2, stderr);
  assert.equal(stdout, "");
  const [first] = stderr.split("\n");
  assert.ok(
    first!.includes(` ${JSON.stringify(names[0])} is the same file as `),
    stderr,
  );
  assert.ok(first!.includes(JSON.stringify(names[1])), stderr);
  assert.doesNotMatch(stderr, /\n\s+at /, "no stack trace");
  assert.deepEqual(await snapshot(dir), before, "no file changed");
}

Deno.test("cli run refuses --out or --record that is the dataset or the config, by name", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    await refused(dir, ["run", "s.yaml", "--out", "d.jsonl"], [
      "d.jsonl",
      "d.jsonl",
    ]);
    await refused(dir, ["run", "s.yaml", "--record", "./s.yaml"], [
      "./s.yaml",
      "s.yaml",
    ]);
    await refused(dir, ["run", "s.yaml", "--record", `${dir}/d.jsonl`], [
      `${dir}/d.jsonl`,
      "d.jsonl",
    ]);
  });
});

Deno.test("cli run refuses an output that reaches an input through a symlink or a hard link", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    await Deno.mkdir(`${dir}/out`);
    await Deno.symlink("../d.jsonl", `${dir}/out/link.jsonl`);
    await Deno.link(`${dir}/s.yaml`, `${dir}/hard.yaml`);
    await Deno.symlink(`${dir}/out`, `${dir}/outdir`);
    await refused(dir, ["run", "s.yaml", "--out", "out/link.jsonl"], [
      "out/link.jsonl",
      "d.jsonl",
    ]);
    await refused(dir, ["run", "s.yaml", "--record", "hard.yaml"], [
      "hard.yaml",
      "s.yaml",
    ]);
    await refused(dir, ["run", "s.yaml", "--out", "outdir/link.jsonl"], [
      "outdir/link.jsonl",
      "d.jsonl",
    ]);
    // The dataset named by a config found through a symlinked folder.
    await refused(dir, ["run", "outdir/../s.yaml", "--out", "d.jsonl"], [
      "d.jsonl",
      "outdir/../d.jsonl",
    ]);
  });
});

Deno.test("cli run refuses --out and --record that are one file, even one not there yet", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    // Neither exists yet.
    await refused(
      dir,
      ["run", "s.yaml", "--out", "x.out", "--record", "x.out"],
      [
        "x.out",
        "x.out",
      ],
    );
    // A dangling symlink to the other, not there yet.
    await Deno.symlink("x.out", `${dir}/y.out`);
    await refused(
      dir,
      ["run", "s.yaml", "--out", "x.out", "--record", "y.out"],
      [
        "y.out",
        "x.out",
      ],
    );
    // Both there, one a hard link of the other.
    await Deno.writeTextFile(`${dir}/a.out`, "earlier results\n");
    await Deno.link(`${dir}/a.out`, `${dir}/b.out`);
    await refused(
      dir,
      ["run", "s.yaml", "--out", "a.out", "--record", "b.out"],
      [
        "b.out",
        "a.out",
      ],
    );
  });
});

Deno.test("cli run may send --out and --record both to /dev/null: devices are never refused", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    const { code, stderr } = await cli(
      ["run", "s.yaml", "--out", "/dev/null", "--record", "/dev/null"],
      dir,
    );
    assert.equal(code, 0, stderr);
    // No sidecar for a device: nothing written beside /dev/null.
    await assert.rejects(
      Deno.lstat("/dev/null.meta.json"),
      Deno.errors.NotFound,
    );
  });
});

Deno.test("cli run leaves --out and --record byte for byte as they were when the config is wrong", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    await Deno.writeTextFile(
      `${dir}/bad.yaml`,
      "dataset: d.jsonl\nbogus: 1\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    await Deno.writeTextFile(
      `${dir}/nodata.yaml`,
      "dataset: missing.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    await Deno.writeTextFile(`${dir}/o.ndjson`, "earlier Scores\n");
    await Deno.writeTextFile(`${dir}/r.json`, "earlier record\n");
    const cases: Array<[string, RegExp]> = [
      ["bad.yaml", /unknown key "bogus"/],
      ["missing.yaml", /cannot read it: no such file/],
      ["nodata.yaml", /missing\.jsonl/],
    ];
    for (const [config, why] of cases) {
      const before = await snapshot(dir);
      const { code, stderr } = await cli(
        ["run", config, "--out", "o.ndjson", "--record", "r.json"],
        dir,
      );
      assert.equal(code, 2, stderr);
      assert.match(stderr, why);
      assert.deepEqual(await snapshot(dir), before, config);
    }
  });
});

/** Every output flag of run, to the files of `prefix`. */
function everyOutput(prefix: string): string[] {
  return [
    ["--out", "ndjson"],
    ["--record", "json"],
    ["--units", "units.ndjson"],
    ["--html", "html"],
    ["--junit", "xml"],
    ["--markdown", "md"],
  ].flatMap(([flag, ext]) => [flag!, `${prefix}.${ext}`]).concat(
    "--save-baseline",
    prefix,
  );
}

Deno.test("cli run leaves every earlier output byte for byte as it was when the dataset has no cases, and says so", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    const first = await cli(["run", "s.yaml", ...everyOutput("prev")], dir);
    assert.equal(first.code, 0, first.stderr);
    await Deno.writeTextFile(`${dir}/empty.jsonl`, "");
    // Found as the dataset is read, once the outputs were opened.
    await Deno.writeTextFile(`${dir}/list.jsonl`, '[{"input": "q1"},\n');
    // Torn last lines, which a resume trims only once it begins.
    for (const file of ["prev.ndjson", "prev.units.ndjson"]) {
      await Deno.writeTextFile(`${dir}/${file}`, '{"metric":"exa', {
        append: true,
      });
    }
    const cases: Array<[string, RegExp]> = [
      ["empty.jsonl", /Dataset "empty\.jsonl" has no cases/],
      ["list.jsonl", /"list\.jsonl" line 1: it holds a JSON array/],
    ];
    for (const [dataset, why] of cases) {
      await Deno.writeTextFile(
        `${dir}/e.yaml`,
        SUITE.replace("d.jsonl", dataset),
      );
      for (const resume of [[], ["--resume", "--force"]]) {
        const before = await snapshot(dir);
        const args = ["run", "e.yaml", ...everyOutput("prev"), ...resume];
        const { code, stdout, stderr } = await cli(args, dir);
        assert.deepEqual(await snapshot(dir), before, `${dataset} ${resume}`);
        assert.equal(code, 2, stderr);
        assert.equal(stdout, "");
        assert.match(stderr, why);
        assert.doesNotMatch(stderr, /\n\s+at /, "no stack trace");
        assert.doesNotMatch(stderr, /dropped/);
        const said = stderr.split("\n").filter((l) => /written/.test(l));
        assert.deepEqual(said, [
          'evalpipe: nothing was written: --out "prev.ndjson", --record "prev.json", --units "prev.units.ndjson", --html "prev.html", --junit "prev.xml", --markdown "prev.md" and --save-baseline "prev" are as they were',
        ]);
      }
    }
    // Where there was nothing, nothing is left.
    const before = await snapshot(dir);
    const { code, stderr } = await cli(
      ["run", "e.yaml", ...everyOutput("new")],
      dir,
    );
    assert.equal(code, 2, stderr);
    assert.deepEqual(await snapshot(dir), before);
  });
});

Deno.test("cli run with no cases on stdin leaves --out and --record as they were", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/s.yaml`, SUITE.replace("d.jsonl", '"-"'));
    await Deno.writeTextFile(`${dir}/o.ndjson`, "earlier Scores\n");
    await Deno.writeTextFile(`${dir}/r.json`, "earlier record\n");
    const before = await snapshot(dir);
    const { code, stderr } = await cliWithStdin(
      ["run", "s.yaml", "--out", "o.ndjson", "--record", "r.json"],
      dir,
      "",
    );
    assert.deepEqual(await snapshot(dir), before);
    assert.equal(code, 2, stderr);
    assert.match(stderr, /has no cases/);
    assert.match(
      stderr,
      /nothing was written: --out "o\.ndjson" and --record "r\.json" are as they were\n/,
    );
  });
});

Deno.test("cli run writes --out, --record and --units through a symlink to no file yet, as the shell's > does, and removes only what it made", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    await Deno.mkdir(`${dir}/results`);
    const flags = [["--out", "s.ndjson"], ["--record", "r.json"], [
      "--units",
      "u.ndjson",
    ]];
    for (const [, name] of flags) {
      await Deno.symlink(`results/${name}`, `${dir}/${name}`);
    }
    const { code, stderr } = await cli(["run", "s.yaml", ...flags.flat()], dir);
    assert.equal(code, 0, stderr);
    for (const [, name] of flags) {
      assert.ok((await Deno.lstat(`${dir}/${name}`)).isSymlink, name);
      assert.notEqual(await Deno.readTextFile(`${dir}/results/${name}`), "");
    }
    // Refused before its first unit: the links stay, their files are gone.
    for (const [, name] of flags) await Deno.remove(`${dir}/results/${name}`);
    await Deno.writeTextFile(`${dir}/empty.jsonl`, "");
    await Deno.writeTextFile(
      `${dir}/e.yaml`,
      SUITE.replace("d.jsonl", "empty.jsonl"),
    );
    const before = await snapshot(dir);
    const refused = await cli(["run", "e.yaml", ...flags.flat()], dir);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /nothing was written/);
    assert.deepEqual(await snapshot(dir), before);
  });
});

Deno.test("cli run --resume leaves a torn file as it was when the config is wrong", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    const first = await cli(["run", "s.yaml", "--out", "o.ndjson"], dir);
    assert.equal(first.code, 0, first.stderr);
    await Deno.writeTextFile(`${dir}/o.ndjson`, '{"metric":"exact_ma', {
      append: true,
    });
    await Deno.writeTextFile(`${dir}/bad.yaml`, `${SUITE}bogus: 1\n`);
    const before = await snapshot(dir);
    const { code, stderr } = await cli(
      ["run", "bad.yaml", "--out", "o.ndjson", "--resume"],
      dir,
    );
    assert.equal(code, 2, stderr);
    assert.match(stderr, /unknown key "bogus"/);
    assert.doesNotMatch(stderr, /dropped a torn last line/);
    assert.deepEqual(await snapshot(dir), before);
  });
});

Deno.test("cli run --out DATASET --resume refuses the dataset, naming it, and does not trim it", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    // A last line without a newline, which a resume would take for torn.
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      DATASET + '{"input":"q3","output":"a","expected":"a"}',
    );
    await Deno.writeTextFile(`${dir}/one.jsonl`, '{"input":"q","output":"a"}');
    await Deno.writeTextFile(`${dir}/notes.csv`, "input,expected\nq,a\n");
    const cases: Array<[string, RegExp]> = [
      ["d.jsonl", /^evalpipe: "d\.jsonl" line 1 is not a Score \(/],
      [
        "one.jsonl",
        /^evalpipe: "one\.jsonl" line 1 is not a Score \(it does not start as one\)/,
      ],
      ["notes.csv", /^evalpipe: "notes\.csv" line 1 is not a Score \(/],
    ];
    for (const [file, message] of cases) {
      const before = await snapshot(dir);
      const { code, stdout, stderr } = await cli(
        ["run", "s.yaml", "--out", file, "--resume"],
        dir,
      );
      assert.equal(code, 2, stderr);
      assert.equal(stdout, "");
      assert.match(stderr, message);
      assert.deepEqual(await snapshot(dir), before, file);
    }
  });
});

Deno.test("cli run --resume still drops a torn Score line, after the checks", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    const first = await cli(["run", "s.yaml", "--out", "o.ndjson"], dir);
    assert.equal(first.code, 0, first.stderr);
    const whole = await Deno.readTextFile(`${dir}/o.ndjson`);
    const [line1] = whole.split("\n");
    await Deno.writeTextFile(`${dir}/o.ndjson`, `${line1}\n{"metric":"exa`);
    const { code, stderr } = await cli(
      ["run", "s.yaml", "--out", "o.ndjson", "--resume"],
      dir,
    );
    assert.equal(code, 0, stderr);
    assert.match(
      stderr,
      /dropped a torn last line of "o\.ndjson" \(14 characters\)/,
    );
    assert.equal(await Deno.readTextFile(`${dir}/o.ndjson`), whole);
  });
});

Deno.test("cli run writes the sidecar through a fresh temp file: symlinks planted at either name are not followed", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    await Deno.writeTextFile(`${dir}/victim`, "precious\n");
    // The name the sidecar's temp file had, and the sidecar's own.
    await Deno.symlink(`${dir}/victim`, `${dir}/o.ndjson.meta.json.tmp`);
    await Deno.symlink(`${dir}/victim`, `${dir}/o.ndjson.meta.json`);
    const { code, stderr } = await cli(
      ["run", "s.yaml", "--out", "o.ndjson"],
      dir,
    );
    assert.equal(code, 0, stderr);
    assert.equal(await Deno.readTextFile(`${dir}/victim`), "precious\n");
    const sidecar = await Deno.lstat(`${dir}/o.ndjson.meta.json`);
    assert.ok(sidecar.isFile && !sidecar.isSymlink);
    assert.ok(
      JSON.parse(await Deno.readTextFile(`${dir}/o.ndjson.meta.json`)).run_id,
    );
    // No temp file left behind.
    const names = Object.keys(await snapshot(dir)).sort();
    assert.deepEqual(names, [
      "d.jsonl",
      "o.ndjson",
      "o.ndjson.meta.json",
      "o.ndjson.meta.json.tmp",
      "s.yaml",
      "victim",
    ]);
  });
});

Deno.test("cli run refuses a dataset named like the --out sidecar", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/o.ndjson.meta.json`,
      "[" + DATASET.trim().split("\n").join(",") + "]",
    );
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      "dataset: o.ndjson.meta.json\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    await refused(dir, ["run", "s.yaml", "--out", "o.ndjson"], [
      "o.ndjson.meta.json",
      "o.ndjson.meta.json",
    ]);
  });
});

Deno.test("cli run refuses an output whose path goes through a file as if it were a folder, plainly, changing nothing", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    for (const flag of ["--out", "--record", "--units", "--html"]) {
      const before = await snapshot(dir);
      const { code, stdout, stderr } = await cli(
        ["run", "s.yaml", flag, "d.jsonl/x"],
        dir,
      );
      assert.equal(code, 2, `${flag}: ${stderr}`);
      assert.equal(stdout, "");
      assert.match(stderr, /"d\.jsonl\/x"/, flag);
      assert.doesNotMatch(stderr, /\n\s+at |Uncaught|os error/, flag);
      assert.deepEqual(await snapshot(dir), before, `${flag}: a file changed`);
    }
  });
});

Deno.test("cli run refuses --junit, --markdown and --save-baseline that are an input or another output", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    await refused(dir, ["run", "s.yaml", "--junit", "s.yaml"], [
      "s.yaml",
      "s.yaml",
    ]);
    await refused(dir, ["run", "s.yaml", "--markdown", "d.jsonl"], [
      "d.jsonl",
      "d.jsonl",
    ]);
    await refused(dir, ["run", "s.yaml", "--save-baseline", "./d.jsonl"], [
      "./d.jsonl",
      "./d.jsonl",
    ]);
    await refused(dir, [
      "run",
      "s.yaml",
      "--record",
      "r.json",
      "--markdown",
      "r.json",
    ], ["r.json", "r.json"]);
    await refused(dir, [
      "run",
      "s.yaml",
      "--out",
      "o.jsonl",
      "--junit",
      "./o.jsonl",
    ], ["./o.jsonl", "o.jsonl"]);
    // A baseline saved over the one compared with is the way to move it on.
    const first = await cli(["run", "s.yaml", "--save-baseline", "main"], dir);
    assert.equal(first.code, 0, first.stderr);
    const again = await cli([
      "run",
      "s.yaml",
      "--baseline",
      "main",
      "--save-baseline",
      "main",
    ], dir);
    assert.equal(again.code, 0, again.stderr);
  });
});

Deno.test("cli report and merge refuse to write a report or a baseline over the record they read", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    for (const k of [1, 2]) {
      const shard = await cli([
        "run",
        "s.yaml",
        "--shard",
        `${k}/2`,
        "--record",
        `k${k}.json`,
      ], dir);
      assert.equal(shard.code, 0, shard.stderr);
    }
    for (const flag of ["--html", "--junit", "--markdown"]) {
      await refused(dir, ["report", "k1.json", flag, "./k1.json"], [
        "./k1.json",
        "k1.json",
      ]);
    }
    await refused(dir, [
      "merge",
      "k1.json",
      "k2.json",
      "--save-baseline",
      "./k2.json",
    ], ["./k2.json", "k2.json"]);
    await refused(dir, [
      "merge",
      "k1.json",
      "k2.json",
      "--record",
      "m.json",
      "--save-baseline",
      "./m.json",
    ], ["m.json", "./m.json"]);
  });
});

Deno.test("cli run, report and merge refuse a report or a baseline that names a folder, before any work", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    await Deno.mkdir(`${dir}/out`);
    const record = await cli(["run", "s.yaml", "--record", "r.json"], dir);
    assert.equal(record.code, 0, record.stderr);
    const cases: [string[], string][] = [
      [["run", "s.yaml", "--junit", "out"], 'JUnit report "out"'],
      [["run", "s.yaml", "--markdown", "out"], 'Markdown report "out"'],
      [["run", "s.yaml", "--html", "out/"], 'HTML report "out/"'],
      [["run", "s.yaml", "--save-baseline", "out/"], 'baseline "out/"'],
      [["report", "r.json", "--junit", "out"], 'JUnit report "out"'],
      [["merge", "r.json", "--save-baseline", "out/"], 'baseline "out/"'],
    ];
    for (const [args, name] of cases) {
      const before = await snapshot(dir);
      const { code, stdout, stderr } = await cli(args, dir);
      assert.equal(code, 2, `${args.join(" ")}: ${stderr}`);
      assert.equal(stdout, "", args.join(" "));
      assert.equal(
        stderr,
        `evalpipe: Cannot write ${name}: it is a folder\n`,
        args.join(" "),
      );
      assert.deepEqual(await snapshot(dir), before, "no file changed");
    }
  });
});

Deno.test("cli run refuses an output over the script of its target or of a subprocess scorer", async () => {
  await withTempDir(async (dir) => {
    const app = "import json, sys\nprint(json.load(sys.stdin)['input'])\n";
    const grade = "import sys\nsys.stdin.read()\nprint('{\"score\": 1}')\n";
    await Deno.mkdir(`${dir}/scorers`);
    await Deno.writeTextFile(`${dir}/app.py`, app);
    await Deno.writeTextFile(`${dir}/scorers/grade.py`, grade);
    await Deno.writeTextFile(`${dir}/d.jsonl`, '{"input":"hi"}\n');
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      "dataset: d.jsonl\ntarget: { type: subprocess, cmd: python3 app.py }\nscorers:\n  - { type: subprocess, cmd: python3 scorers/grade.py }\n",
    );
    await refused(dir, ["run", "s.yaml", "--out", "app.py"], [
      "app.py",
      "app.py",
    ]);
    await refused(dir, ["run", "s.yaml", "--html", "scorers/grade.py"], [
      "scorers/grade.py",
      "scorers/grade.py",
    ]);
    const { stderr } = await cli(["run", "s.yaml", "--out", "./app.py"], dir);
    assert.match(
      stderr,
      /is the same file as a script the suite runs "app\.py"/,
    );
  });
});

Deno.test("run and score whose stdout is appended to one of their inputs (>> d.jsonl) are refused before any work, not looping on their own lines", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    await Deno.writeTextFile(
      `${dir}/stdin.yaml`,
      SUITE.replace("d.jsonl", '"-"'),
    );
    await Deno.writeTextFile(`${dir}/u.ndjson`, DATASET);
    const sh = (script: string) => cliInShell(dir, script);
    const before = await snapshot(dir);
    for (
      const [script, named] of <[string, string][]> [
        ['"$0" run -A "$1" run s.yaml >> d.jsonl', 'the dataset "d.jsonl"'],
        [
          '"$0" run -A "$1" run stdin.yaml < d.jsonl >> d.jsonl',
          'the dataset "stdin"',
        ],
        [
          '"$0" run -A "$1" score --scorer "echo {}" --name t u.ndjson >> u.ndjson',
          'the input "u.ndjson"',
        ],
        [
          '"$0" run -A "$1" score --scorer "echo {}" --name t < u.ndjson >> u.ndjson',
          'the input "stdin"',
        ],
      ]
    ) {
      const { code, stderr } = await sh(script);
      assert.equal(code, 2, stderr);
      assert.equal(
        stderr,
        `evalpipe: stdout is the same file as ${named}: the command would read back what it writes, without end; send stdout to another file\n`,
      );
    }
    assert.deepEqual(await snapshot(dir), before);
    // Stdout to another file is no input of theirs.
    const fine = await sh('"$0" run -A "$1" run s.yaml >> scores.ndjson');
    assert.equal(fine.code, 0, fine.stderr);
    assert.equal(
      (await Deno.readTextFile(`${dir}/scores.ndjson`)).trim().split("\n")
        .length,
      2,
    );
  });
});

Deno.test("run whose Scores go to stdout, a file, refuses another output named /dev/stdout (or --out -): the two would be written over each other", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    const sh = (script: string) => cliInShell(dir, script);
    for (const flag of ["--units", "--record", "--markdown", "--junit"]) {
      for (const out of ["", " --out -"]) {
        const { code, stderr } = await sh(
          `"$0" run -A "$1" run s.yaml${out} ${flag} /dev/stdout > scores.ndjson`,
        );
        assert.equal(code, 2, `${flag}${out}: ${stderr}`);
        assert.equal(
          stderr,
          `evalpipe: ${flag} "/dev/stdout" is the same file as the Scores on stdout "/dev/stdout": the two would be written over each other; choose another path\n`,
          `${flag}${out}`,
        );
        assert.equal(await Deno.readTextFile(`${dir}/scores.ndjson`), "");
      }
    }
    await cli(["run", "s.yaml", "--record", "r.json"], dir);
    const merged = await sh(
      '"$0" run -A "$1" merge r.json --record /dev/stdout > merged.ndjson',
    );
    assert.equal(merged.code, 2, merged.stderr);
    assert.equal(
      merged.stderr,
      'evalpipe: --record "/dev/stdout" is the same file as the Scores on stdout "/dev/stdout": the two would be written over each other; choose another path\n',
    );
    // Into a file of its own, an output named /dev/stdout is the Scores'
    // stdout no more: run writes it there, and nothing else.
    const alone = await sh(
      '"$0" run -A "$1" run s.yaml --out scores.ndjson --units /dev/stdout > units.ndjson',
    );
    assert.equal(alone.code, 0, alone.stderr);
    const units = (await Deno.readTextFile(`${dir}/units.ndjson`)).trim()
      .split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(units.map((u) => u.unit_id), ["d.jsonl#1", "d.jsonl#2"]);
  });
});
