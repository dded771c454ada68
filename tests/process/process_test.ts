/**
 * The spawner beyond what both backends share (that is
 * `spawner_conformance_test.ts`): which backend a process gets and when it
 * is chosen, `posix_spawn` beside `Deno.Command`, and importing the library
 * without permissions.
 */

import assert from "node:assert/strict";
import { isGone, withTempDir } from "../_proc.ts";
import { type SpawnBackend, spawnBackend } from "../../src/process/mod.ts";
import { exited, ROOT, run } from "./_spawn.ts";

const decoder = new TextDecoder();

// First in this file: its spawn is the first of this process.
Deno.test("runCommand leaves no library open after the first spawn, under the resource sanitizer", async () => {
  // The first spawn looks libc up: that must not count as a leak against
  // whichever test (or doc example) spawns first.
  const result = exited(await run("echo first"));
  assert.deepEqual([result.code, result.stdout], [0, "first\n"]);
  assert.equal(spawnBackend(), "posix_spawn");
});

Deno.test("runCommand starts commands through posix_spawn when FFI is allowed", () => {
  // `deno task test` runs with -A on Linux with glibc: the fast path is
  // the one under test here, not a silent fallback.
  assert.equal(spawnBackend(), "posix_spawn");
});

Deno.test("runCommand (posix_spawn) gets each status while Deno.Command children run beside", async () => {
  // Deno reaps only its own children, by pid: both kinds finish with their
  // own exit codes.
  const ours = Array.from({ length: 8 }, (_, i) => run(`exit ${i + 1}`));
  const deno = Array.from(
    { length: 8 },
    (_, i) =>
      new Deno.Command("sh", { args: ["-c", `exit ${i + 11}`] }).output(),
  );
  assert.deepEqual(
    (await Promise.all(ours)).map((r) => exited(r).code),
    [1, 2, 3, 4, 5, 6, 7, 8],
  );
  assert.deepEqual(
    (await Promise.all(deno)).map((r) => r.code),
    [11, 12, 13, 14, 15, 16, 17, 18],
  );
});

/**
 * Runs `prelude`, then a command through `runCommand`, in a child Deno with
 * the given permission flags; what it saw.
 */
async function inChildDeno(
  flags: string[],
  prelude = "",
): Promise<{ path: string; code: number; stdout: string; pgrp: number }> {
  let seen: unknown;
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/script.ts`,
      `${prelude}
import { runCommand, spawnBackend } from ${
        JSON.stringify(`${ROOT}/src/process/mod.ts`)
      };
const result = await runCommand("cat; echo $$ >&2", {
  stdin: new TextEncoder().encode("payload"),
  timeoutMs: 20000,
  maxStdoutBytes: 1000,
  maxStderrBytes: 1000,
});
if (result.kind !== "exited") throw new Error(JSON.stringify(result));
const text = new TextDecoder();
await Deno.writeTextFile(Deno.args[0]!, JSON.stringify({
  path: spawnBackend(),
  code: result.code,
  stdout: text.decode(result.stdout),
  pgrp: Number(text.decode(result.stderr)),
}));
`,
    );
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--config",
        `${ROOT}/deno.json`,
        ...flags,
        `${dir}/script.ts`,
        `${dir}/seen.json`,
      ],
      cwd: ROOT,
      stdin: "null",
    }).output();
    assert.equal(code, 0, decoder.decode(stderr));
    seen = JSON.parse(await Deno.readTextFile(`${dir}/seen.json`));
  });
  return seen as { path: string; code: number; stdout: string; pgrp: number };
}

Deno.test("runCommand falls back to the setsid program without the ffi permission", async () => {
  const cases: Array<[string[], SpawnBackend]> = [
    [["-A"], "posix_spawn"],
    [["-A", "--deny-ffi"], "setsid"],
    [["--allow-read", "--allow-write", "--allow-run"], "setsid"],
  ];
  for (const [flags, path] of cases) {
    const seen = await inChildDeno(flags);
    assert.deepEqual(
      [seen.path, seen.code, seen.stdout],
      [path, 0, "payload"],
      flags.join(" "),
    );
    assert.ok(seen.pgrp > 0);
  }
});

Deno.test("runCommand (posix_spawn) works in a process that closed its stdin and stdout", async () => {
  // The first pipe then lands on 0 and 1, where the child's stdio must go.
  const prelude = `
Deno.dlopen("libc.so.6", { close: { parameters: ["i32"], result: "i32" } })
  .symbols.close(0);
Deno.dlopen("libc.so.6", { close: { parameters: ["i32"], result: "i32" } })
  .symbols.close(1);
`;
  const seen = await inChildDeno(["-A"], prelude);
  assert.deepEqual(
    [seen.path, seen.code, seen.stdout],
    ["posix_spawn", 0, "payload"],
  );
});

/** Every layer's `mod.ts`, as paths from the project root. */
function layerModules(): string[] {
  return [...Deno.readDirSync(`${ROOT}/src`)]
    .filter((entry) => entry.isDirectory)
    .map((entry) => `src/${entry.name}/mod.ts`)
    .filter((path) => {
      try {
        return Deno.statSync(`${ROOT}/${path}`).isFile;
      } catch (error) {
        // A folder without a mod.ts is not a layer to import.
        if (error instanceof Deno.errors.NotFound) return false;
        throw error;
      }
    })
    .sort();
}

Deno.test("the library and every layer import under deno run with no permissions at all", async () => {
  const modules = ["mod.ts", ...layerModules()];
  assert.ok(modules.includes("src/process/mod.ts"));
  await withTempDir(async (dir) => {
    const script = `${dir}/import_all.ts`;
    await Deno.writeTextFile(
      script,
      modules.map((m) => `import ${JSON.stringify(`${ROOT}/${m}`)};\n`)
        .join("") + 'console.log("imported");\n',
    );
    // No permission flag: only a config with the project's import map, as a
    // project that imports evalpipe has. (Not the project's own, whose
    // lazy-dynamic-imports makes each import() at run time read its module
    // then, which needs read access; a library user's config has its own.)
    const own = JSON.parse(await Deno.readTextFile(`${ROOT}/deno.json`));
    await Deno.writeTextFile(
      `${dir}/deno.json`,
      JSON.stringify({ imports: own.imports, lock: false }),
    );
    const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", "--config", `${dir}/deno.json`, script],
      cwd: dir,
      stdin: "null",
    }).output();
    assert.equal(code, 0, decoder.decode(stderr));
    assert.equal(decoder.decode(stdout), "imported\n");
  });
});

Deno.test("the spawner chooses its backend at the first spawn, not at import", async () => {
  // Imported with every permission, which is then taken back before the
  // first command: a choice made at import would still say posix_spawn.
  const imports = ["mod.ts", ...layerModules()]
    .map((m) => `import ${JSON.stringify(`${ROOT}/${m}`)};`).join("\n");
  const seen = await inChildDeno(
    ["-A"],
    `${imports}\nDeno.permissions.revokeSync({ name: "ffi" });`,
  );
  assert.deepEqual(
    [seen.path, seen.code, seen.stdout],
    ["setsid", 0, "payload"],
  );
});

Deno.test("isGone reads ESRCH in the message forms Deno has used", () => {
  // Reaped between opening /proc/PID/stat and reading it.
  assert.ok(isGone(new Error("No such process (os error 3)")));
  assert.ok(
    isGone(new Error("No such process (os error 3): readfile '/proc/9/stat'")),
  );
  assert.ok(isGone(new Deno.errors.NotFound("gone")));
  assert.ok(!isGone(new Error("Permission denied (os error 13)")));
});

Deno.test("runCommand (posix_spawn) gives the same results before and after a process's hot libc calls become fast calls", async () => {
  // A fresh process: its first 64 spawns call libc through addresses, the
  // later ones through symbols; every run must see the same thing.
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/script.ts`,
      `import { runCommand, spawnBackend } from ${
        JSON.stringify(`${ROOT}/src/process/mod.ts`)
      };
const text = new TextDecoder();
const seen = [];
for (let i = 0; i < 150; i++) {
  const result = await runCommand(\`cat; pwd >&2; exit \${i % 5}\`, {
    stdin: new TextEncoder().encode(\`run \${i}\`),
    timeoutMs: 20000,
    maxStdoutBytes: 1000,
    maxStderrBytes: 1000,
    ...(i % 2 ? { cwd: Deno.args[1] } : {}),
  });
  if (result.kind !== "exited") throw new Error(JSON.stringify(result));
  seen.push([result.code, text.decode(result.stdout), text.decode(result.stderr)]);
}
await Deno.writeTextFile(Deno.args[0], JSON.stringify({ path: spawnBackend(), seen }));
`,
    );
    await Deno.mkdir(`${dir}/other`);
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--config",
        `${ROOT}/deno.json`,
        "-A",
        `${dir}/script.ts`,
        `${dir}/seen.json`,
        `${dir}/other`,
      ],
      cwd: ROOT,
      stdin: "null",
    }).output();
    assert.equal(code, 0, decoder.decode(stderr));
    const { path, seen } = JSON.parse(
      await Deno.readTextFile(`${dir}/seen.json`),
    );
    assert.equal(path, "posix_spawn");
    assert.deepEqual(
      seen,
      Array.from({ length: 150 }, (_, i) => [
        i % 5,
        `run ${i}`,
        `${i % 2 ? `${dir}/other` : ROOT}\n`,
      ]),
    );
  });
});
