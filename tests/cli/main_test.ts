import assert from "node:assert/strict";
import {
  COMMANDS,
  defaultOf,
  defineCommand,
  main,
  mainHelp,
  VERSION,
} from "../../src/cli/mod.ts";
import { cli } from "../_cli.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

Deno.test("evalpipe --version and -V print the version deno.json has", async () => {
  const { version } = JSON.parse(
    await Deno.readTextFile(`${ROOT}deno.json`),
  ) as { version: string };
  assert.equal(VERSION, version);
  for (const flag of ["--version", "-V"]) {
    const out = await cli([flag], ROOT);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout, `evalpipe ${version}\n`);
    assert.equal(out.stderr, "");
  }
});

Deno.test("evalpipe --version needs no permission at all", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", `${ROOT}cli.ts`, "--version"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  assert.equal(new TextDecoder().decode(out.stdout), `evalpipe ${VERSION}\n`);
});

Deno.test("the main help lists every command from its declaration", async () => {
  const out = await cli(["--help"], ROOT);
  assert.equal(out.code, 0);
  assert.equal(out.stdout, `${mainHelp()}\n`);
  assert.deepEqual(COMMANDS.map((c) => c.name), [
    "run",
    "score",
    "aggregate",
    "view",
    "diff",
    "report",
    "merge",
    "cache",
    "validate",
    "export",
    "init",
    "calibrate",
  ]);
  for (const c of COMMANDS) {
    assert.match(
      out.stdout,
      new RegExp(
        `^ {2}${
          [c.name, ...c.positionals].join(" ").replace(/[[\].]/g, "\\$&")
        } +${c.summary.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`,
        "m",
      ),
    );
  }
  const bare = await cli([], ROOT);
  assert.equal(bare.code, 2);
  assert.equal(bare.stdout, "");
  assert.equal(bare.stderr, `${mainHelp()}\n`);
});

for (const command of COMMANDS) {
  Deno.test(`evalpipe ${command.name} --help lists every declared flag with its default`, async () => {
    const out = await cli([command.name, "--help"], ROOT);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout, `${command.help()}\n`);
    assert.match(out.stdout, new RegExp(`^Usage: evalpipe ${command.name} `));
    // Help text is wrapped: compare with runs of spaces made one.
    const flat = out.stdout.replace(/\s+/g, " ");
    for (const [name, flag] of Object.entries(command.flags)) {
      const long = flag.type === "boolean"
        ? `--${name}`
        : `--${name} ${flag.value ?? (flag.type === "string" ? "VALUE" : "N")}`;
      // A flag with a one-letter alias shows it first; the others line up.
      const left = flag.short !== undefined
        ? `-${flag.short}, ${long}`
        : `    ${long}`;
      assert.match(out.stdout, new RegExp(`^ {2}${left} `, "m"), name);
      assert.ok(flat.includes(flag.help.replace(/\s+/g, " ")), name);
      const shown = defaultOf(flag);
      if (shown !== undefined) {
        assert.ok(flat.includes(`default: ${shown})`), `${name}: ${shown}`);
      }
    }
    const viaHelp = await cli(["help", command.name], ROOT);
    assert.equal(viaHelp.code, 0);
    assert.equal(viaHelp.stdout, out.stdout);
    // -h anywhere, after arguments too, is the same help (and reads no stdin).
    const short = await cli([command.name, "x.yaml", "-h"], ROOT);
    assert.equal(short.code, 0, short.stderr);
    assert.equal(short.stdout, out.stdout);
  });
}

Deno.test("evalpipe help of an unknown command is a usage error", async () => {
  const out = await cli(["help", "frobnicate"], ROOT);
  assert.equal(out.code, 2);
  assert.equal(
    out.stderr,
    'evalpipe: Unknown command "frobnicate"\nRun "evalpipe --help" for usage.\n',
  );
});

Deno.test("main maps an error to its exitCode without knowing its class, and throws a bug on", async () => {
  class NotOurs extends RangeError {
    readonly exitCode = 3;
  }
  const failing = (error: Error) =>
    defineCommand({
      name: "fail",
      summary: "Fails",
      usage: "",
      description: "Throws.",
      flags: {},
      run: () => Promise.reject(error),
    });
  assert.equal(
    await main(["fail"], { commands: [failing(new NotOurs("Bad input"))] }),
    3,
  );
  const bug = new TypeError("x is undefined");
  await assert.rejects(
    main(["fail"], { commands: [failing(bug)] }),
    (e) => e === bug,
  );
});

Deno.test("a command's positionals are checked against its declaration", async () => {
  const seen: string[][] = [];
  const two = defineCommand({
    name: "two",
    summary: "Two files",
    usage: "A B",
    description: "Takes two.",
    positionals: { names: ["A", "B"], error: "two takes two files" },
    flags: {},
    run(_flags, [a, b]) {
      seen.push([a, b]);
      return Promise.resolve(0);
    },
  });
  assert.equal(await main(["two", "a", "b"], { commands: [two] }), 0);
  assert.deepEqual(seen, [["a", "b"]]);
  assert.equal(await main(["two", "a"], { commands: [two] }), 2);
  assert.equal(seen.length, 1);
});

Deno.test("evalpipe run names an --out file it cannot write, exit 2", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    await Deno.writeTextFile(`${dir}/d.jsonl`, '{"input":"a","output":"a"}\n');
    const out = await cli(
      ["run", "suite.yaml", "--out", "no/such/folder.ndjson"],
      dir,
    );
    assert.equal(out.code, 2);
    assert.equal(out.stdout, "");
    assert.equal(
      out.stderr,
      'evalpipe: Cannot write "no/such/folder.ndjson": no such folder "no/such"\n',
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("evalpipe rejects a whole-number flag given 1.5 with exit 2, naming it", async () => {
  for (
    const args of [
      ["run", "suite.yaml", "--concurrency", "1.5"],
      ["score", "--scorer", "true", "--concurrency=1.5"],
      ["view", "x.ndjson", "--width", "1.5"],
    ]
  ) {
    const out = await cli(args, ROOT);
    assert.equal(out.code, 2);
    assert.match(
      out.stderr,
      new RegExp(
        `^evalpipe: Option "--(concurrency|width)" needs a whole number, not "1\\.5"\\nRun "evalpipe ${
          args[0]
        } --help" for usage\\.\\n$`,
      ),
    );
  }
});
