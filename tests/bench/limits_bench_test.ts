// The benches of issue 17 run in their tiny mode (`--quick`) and print every
// row; the C driver they measure against, the bare Deno programs of the
// spawn ladder's limit rows and those of the persistent, network and cache
// limit rows do what they say.

import assert from "node:assert/strict";
import { withTempDir } from "../_proc.ts";
import { cliWithStdin } from "../_cli.ts";
import { SCORE_PATH } from "../../bench/_score_path.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

async function deno(args: string[]): Promise<{ code: number; out: string }> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code, out: dec.decode(stdout) + dec.decode(stderr) };
}

const hasCc = await new Deno.Command("cc", {
  args: ["--version"],
  stdout: "null",
  stderr: "null",
})
  .output().then(() => true, (error) => {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  });

Deno.test("bench:limits --quick prints a row per goal of issue 17, its limit rows and the run row's ceiling", async () => {
  const { code, out } = await deno([
    "run",
    "-A",
    "bench/limits_bench.ts",
    "--quick",
  ]);
  assert.equal(code, 0, out);
  const rows = [
    "score --persistent, trivial Python scorer",
    "run, replay + exact_match, 500 cases, vs the same bytes",
    "start-up: run, 1 case",
    "start-up: score --config",
    "start-up: score --scorer",
    "openai target, 40 cases, c=32",
    "openai target, 300 cases, c=256",
    "llm_judge, 40 cases, c=32",
    "llm_judge, 300 cases, c=256",
    "cached rerun, 100 cases, vs replay target",
    ...(hasCc ? [1, 4, 16].map((c) => `c=${c}, vs C posix_spawn driver`) : []),
  ];
  const limits = [
    "start-up limit: bare program with js-yaml config + Web Streams dataset",
    "start-up limit: bare program with Web Streams dataset + one sh -c",
    "start-up limit: empty Deno script, vs bare script with one sh -c",
    ...(hasCc
      ? [
        "limit, rung A: Deno, the driver's libc calls, synchronous, 8 units, c=1,",
        ...[1, 4, 16].map((c) =>
          `limit, rung B: Deno, the driver's libc calls, one nonblocking poll per wake, 8 units, c=${c},`
        ),
      ]
      : []),
    "limit: bare loop + verdicts parsed + Score lines, 8 units",
    "limit: bare loop + verdicts parsed + Score lines, payloads streamed, 8 units",
    ...[[40, 32], [300, 256]].flatMap(([n, c]) => [
      `limit: bare fetch loop + deadline + reply parsed + Score lines, ${n} cases, c=${c}`,
      `limit: bare fetch loop + deadline + reply parsed + Score lines (judge), ${n} cases, c=${c}`,
    ]),
    "limit: cases + SHA-256 key + Map lookup + Score lines, 100 cases, vs replay target",
    "limit: the same, 100 cases, vs the same program without key and lookup",
  ];
  const row = (text: string, met: string, ceiling = "[^|\\n]*") =>
    new RegExp(
      `^\\| [^\\n]*${
        text.replace(/[+()]/g, "\\$&")
      }[^\\n]*\\| ${met} \\| [^|\\n]* \\| ${ceiling} \\|$`,
      "m",
    );
  for (const text of rows) assert.match(out, row(text, "(met|not met)"), text);
  for (const text of limits) assert.match(out, row(text, "limit row"), text);
  assert.match(
    out,
    row(
      "start-up part: the same + score --scorer's modules loaded",
      "part row",
    ),
  );
  for (
    const what of [
      "its modules as JavaScript, one file each, no source maps",
      "its modules merged into one TypeScript module",
      "that one module as JavaScript",
    ]
  ) {
    assert.match(
      out,
      row(`start-up form: score --scorer, ${what}`, "form row"),
    );
  }
  // The run row's ceiling is filled, from the start-up of both sides.
  assert.match(
    out,
    row(
      "run, replay + exact_match, 500 cases",
      "(met|not met)",
      "\\d+\\.\\d\\d×",
    ),
  );
  assert.match(out, /cached rerun: a hit's own work .* at most [\d.]+×/);
  assert.doesNotMatch(out, /differs/);
  if (!hasCc) assert.match(out, /spawn rows skipped: no `cc`/);
});

Deno.test("bench:where --quick prints syscalls, CPU and modules", async () => {
  const { code, out } = await deno([
    "run",
    "-A",
    "bench/where_time_goes.ts",
    "--quick",
  ]);
  assert.equal(code, 0, out);
  for (
    const heading of [
      "syscalls per case",
      "CPU per case",
      "start-up CPU",
      "modules of a one-case process",
    ]
  ) {
    if (out.includes("skipped")) continue;
    assert.ok(out.includes(heading), `${heading} in:\n${out}`);
  }
});

Deno.test({
  name:
    "the C driver starts each case as a session leader, feeds it the payload and counts only good verdicts",
  ignore: !hasCc,
  fn: () =>
    withTempDir(async (dir) => {
      const driver = `${dir}/spawn_driver`;
      const built = await new Deno.Command("cc", {
        args: ["-O2", "-o", driver, `${ROOT}bench/_spawn_driver.c`],
      }).output();
      assert.equal(built.code, 0, new TextDecoder().decode(built.stderr));
      const run = (cmd: string, c: number, lines: string[]) =>
        feed(driver, [cmd, String(c)], lines);
      await startsSessionLeaders(run, [1, 4, 16]);
    }),
});

/** `program args…` with `lines` on stdin: its exit code and trimmed stdout. */
async function feed(
  program: string,
  args: string[],
  lines: string[],
): Promise<{ code: number; out: string }> {
  const child = new Deno.Command(program, {
    args,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(lines.join("\n") + "\n"));
  await w.close();
  const { code, stdout } = await child.output();
  return { code, out: new TextDecoder().decode(stdout).trim() };
}

/**
 * What the C driver and each rung of the spawn ladder must do, at each of
 * `widths`: every case's `sh` leads its own session and reads its payload
 * line; a verdict counts only with exit 0; any case without one fails the run.
 */
async function startsSessionLeaders(
  run: (cmd: string, c: number, lines: string[]) => Promise<
    { code: number; out: string }
  >,
  widths: number[],
): Promise<void> {
  const lines = Array.from({ length: 9 }, (_, i) => `{"input":"q${i}"}`);
  // Its own session: the session id (field 6 of /proc/PID/stat) is its pid.
  const leader =
    `test "$(cut -d' ' -f6 /proc/$$/stat)" = "$$" && echo '{"score": 1}'`;
  const payload =
    `grep -q '^{"input":"q[0-9]"}$' && echo '{"score": 1}' && echo noise >&2`;
  for (const c of widths) {
    assert.deepEqual(
      await run(leader, c, lines),
      { code: 0, out: "9" },
      `c=${c}`,
    );
    assert.deepEqual(
      await run(payload, c, lines),
      { code: 0, out: "9" },
      `c=${c}`,
    );
    assert.deepEqual(await run(`echo '{"score": 1}'; exit 3`, c, lines), {
      code: 1,
      out: "0",
    }, `c=${c}`);
    // One bad case of nine.
    const one = `read l; test "$l" != '{"input":"q4"}' && echo '{"score": 1}'`;
    assert.deepEqual(await run(one, c, lines), { code: 1, out: "8" }, `c=${c}`);
  }
}

Deno.test("the spawn ladder's rung A makes the driver's calls, one case at a time", () =>
  startsSessionLeaders(
    (cmd, _c, lines) =>
      feed(Deno.execPath(), [
        "run",
        "-A",
        `${ROOT}bench/_ffi_spawn_sync.ts`,
        cmd,
      ], lines),
    [1],
  ));

for (const how of ["each", "all", "sigchld"]) {
  Deno.test(`the spawn ladder's rung B (${how}) makes the driver's calls, c at once`, () =>
    startsSessionLeaders(
      (cmd, c, lines) =>
        feed(Deno.execPath(), [
          "run",
          "-A",
          `${ROOT}bench/_ffi_spawn_async.ts`,
          how,
          cmd,
          String(c),
        ], lines),
      [1, 4, 16],
    ));
}

/** Runs a bench/ program with `stdin`, returning its stdout's lines. */
async function floor(
  script: string,
  args: string[],
  stdin = "",
): Promise<string[]> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}bench/${script}`, ...args],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { FAKE_API_KEY: "sk-test" },
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(stdin));
  await writer.close();
  const { code, stdout, stderr } = await child.output();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  return new TextDecoder().decode(stdout).split("\n").filter((l) => l !== "");
}

Deno.test("the persistent limit program writes one Score line per unit, with its ids, in both modes", async () => {
  const units = Array.from(
    { length: 300 },
    (_, i) =>
      JSON.stringify(
        i === 4 ? { id: "named", input: `q${i}` } : { input: `q${i}` },
      ),
  ).join("\n") + "\n";
  const scorer = `while read -r line; do echo '{"score": 0.25}'; done`;
  for (const mode of [[], ["stream"]]) {
    const lines = await floor("_limit_persistent.ts", [scorer, ...mode], units);
    assert.equal(lines.length, 300, mode.join());
    const scores = lines.map((l) => JSON.parse(l));
    assert.deepEqual(scores.map((s) => s.unit_id).slice(0, 6), [
      "stdin#1",
      "stdin#2",
      "stdin#3",
      "stdin#4",
      "named",
      "stdin#6",
    ]);
    assert.ok(scores.every((s) => s.value === 0.25 && s.passed === false));
  }
});

Deno.test("the network limit program makes one call and writes one Score line per case", async () => {
  const server = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}bench/_slow_server.ts`, "1"],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = server.stdout.pipeThrough(new TextDecoderStream())
    .getReader();
  try {
    const baseUrl = (await reader.read()).value!.trim();
    const count = async () =>
      Number(await (await fetch(baseUrl.replace(/\/v1$/, "/count"))).text());
    await withTempDir(async (dir) => {
      await Deno.writeTextFile(
        `${dir}/net.jsonl`,
        Array.from(
          { length: 37 },
          (_, i) => JSON.stringify({ input: `question ${i}`, expected: "x" }),
        ).join("\n") + "\n",
      );
      for (const mode of [[], ["judge"]]) {
        const before = await count();
        const lines = await floor("_limit_fetch.ts", [
          baseUrl,
          `${dir}/net.jsonl`,
          "5",
          ...mode,
        ]);
        assert.equal(await count() - before, 37, mode.join());
        assert.equal(lines.length, 37, mode.join());
        const ids = new Set(lines.map((l) => JSON.parse(l).unit_id));
        assert.equal(ids.size, 37);
        assert.ok(ids.has("net.jsonl#37"));
        const value = mode.length ? 1 : 0; // the server's text is a verdict
        assert.ok(lines.every((l) => JSON.parse(l).value === value));
      }
    });
  } finally {
    server.kill();
    await reader.cancel();
    await server.status;
  }
});

Deno.test("the cached limit program finds every case in the pack and writes the replay's lines", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      Array.from({ length: 250 }, (_, i) =>
        JSON.stringify({
          input: `question ${i} é ${"x".repeat(i)}`,
          expected: "answer 3",
          output: `answer ${i}`,
        })).join("\n") + "\n",
    );
    const run = (mode: string) =>
      floor("_limit_cached.ts", [mode, `${dir}/cases.jsonl`, `${dir}/pack`]);
    assert.deepEqual(await run("fill"), []);
    const pack = (await Deno.readTextFile(`${dir}/pack`)).trim().split("\n");
    assert.equal(pack.length, 250);
    // Keys are SHA-256 hex, each at the place the index reads it from.
    assert.ok(pack.every((l) => /^\{"key":"[0-9a-f]{64}","result":/.test(l)));
    assert.equal(new Set(pack.map((l) => JSON.parse(l).key)).size, 250);
    const hit = await run("hit");
    assert.equal(hit.length, 250);
    assert.deepEqual(hit, await run("replay"));
    assert.deepEqual(
      hit.map((l) => JSON.parse(l).value).filter((v) => v === 1).length,
      1,
    );
  });
});

Deno.test("the start-up limit program reads its case through Web Streams and takes the Score's value from one sh -c", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/one.jsonl`,
      JSON.stringify({ input: "q", output: "a", expected: "a" }) + "\n",
    );
    // The verdict contradicts the exact match, so the value shows who gave it.
    const cmd = `cat > '${dir}/payload'; echo '{"score": 0}'`;
    for (const more of [[], ["--score-modules"]]) {
      await Deno.remove(`${dir}/payload`).catch(() => {});
      const { code, out } = await deno([
        "run",
        "-A",
        "bench/_startup_limits.ts",
        `${dir}/one.jsonl`,
        "--streams",
        "--spawn",
        cmd,
        ...more,
      ]);
      assert.equal(code, 0, out);
      const score = JSON.parse(out);
      assert.equal(score.value, 0, out);
      assert.equal(score.unit_id, "one.jsonl#1");
      assert.deepEqual(JSON.parse(await Deno.readTextFile(`${dir}/payload`)), {
        expected: "a",
        input: "q",
        output: "a",
      });
    }
  });
});

Deno.test("bench/_score_path.ts names the modules score --scorer imports: the command table, the command and each import() it takes", async () => {
  const score = await Deno.readTextFile(`${ROOT}src/cli/score.ts`);
  const imported = [...score.matchAll(/import\("(\.{1,2}\/[^"]+)"\)/g)]
    .map(([, path]) => new URL(path!, `file://${ROOT}src/cli/`).pathname)
    .map((path) => path.slice(ROOT.length))
    // The branches --scorer on stdin without --persistent does not take
    // (nor the same-file check of a stdout that is a file).
    .filter((path) =>
      ![
        "src/scorers/persistent_scorer.ts",
        "src/cli/_suite_scorers.ts",
        "src/cli/_inputs.ts",
        "src/io/same_file.ts",
      ].includes(path)
    );
  assert.deepEqual(SCORE_PATH.slice(0, 2), [
    "src/cli/main.ts",
    "src/cli/score.ts",
  ]);
  assert.deepEqual([...SCORE_PATH.slice(2)].sort(), [...imported].sort());
});

Deno.test("bench/_module_forms.ts builds forms that score as cli.ts does; the merged one is one module that reaches the clone for anything else", async () => {
  await withTempDir(async (dir) => {
    const { buildForms } = await import("../../bench/_module_forms.ts");
    const forms = await buildForms(ROOT, `${dir}/forms`);
    // The verdict contradicts the exact match and names the payload it read.
    const cmd =
      `read -r p; printf '{"score": 0.25, "reason": "read %s bytes"}' "$(printf %s "$p" | wc -c)"`;
    const input = JSON.stringify({ input: "q", output: "a", expected: "a" }) +
      "\n";
    const scores = async (cli: string, ...more: string[]) => {
      const { code, stdout, stderr } = await cliWithStdin(
        ["score", "--scorer", cmd, "--name", "t", ...more],
        dir,
        input,
        undefined,
        cli,
      );
      assert.equal(code, 0, stderr);
      return stdout;
    };
    const ours = await scores(`${ROOT}cli.ts`);
    assert.equal(JSON.parse(ours).value, 0.25);
    for (const cli of [forms.js, forms.merged, forms.mergedJs]) {
      assert.equal(await scores(cli), ours, cli);
    }
    // One module: no import of a file beside it; what is not on the score
    // path (here --persistent) is an import() of the clone's own file.
    for (const cli of [forms.merged, forms.mergedJs]) {
      const code = await Deno.readTextFile(cli);
      assert.doesNotMatch(code, /(from|import\() *"\.\.?\//, cli);
      assert.match(
        code,
        new RegExp(
          `import\\("file://${ROOT}src/scorers/persistent_scorer\\.ts"\\)`,
        ),
      );
    }
    assert.equal(
      await scores(forms.merged, "--persistent"),
      await scores(`${ROOT}cli.ts`, "--persistent"),
    );
  });
});
