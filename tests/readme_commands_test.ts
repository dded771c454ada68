// Every command block of the README and of each examples/*/README.md runs, in
// order, in a fresh copy of the repository, as a new user would type it: a
// README that drifts from the program fails `deno task test`.
//
// A block is `sh`; a comment right above its fence can say how to run it:
//   <!-- readme-test: skip: REASON -->            not run (installs software, runs the tests...)
//   <!-- readme-test: skip-lines "PREFIX": REASON --> its lines starting with PREFIX are not run
//   <!-- readme-test: exit N -->                  the block must exit N (default 0)
//   <!-- readme-test: scorer -->                  the block is a protocol v0 scorer: run by `score`
// and above an unlabelled block:
//   <!-- readme-test: output -->                  each of its lines is in the output of the block before
// Every `yaml` block parses, and one that is a suite, or a part of one, passes
// the config checks.

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as yaml from "js-yaml";
import { loadYaml } from "../src/io/yaml.ts";
import { checkConfigText } from "../src/config/mod.ts";
import { withTempDir } from "./_proc.ts";

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
/** What a fresh clone holds that the commands use. */
const PROGRAM = [
  "cli.ts",
  "mod.ts",
  "deno.json",
  "deno.lock",
  "src",
  "examples",
  "scripts",
  "schemas",
];

interface Block {
  file: string;
  /** The 1-based line of its opening fence. */
  line: number;
  lang: string;
  text: string;
  /** What the comment above its fence says, `readme-test:` removed. */
  marks: string[];
}

function blocksOf(file: string, markdown: string): Block[] {
  const lines = markdown.split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)/.exec(lines[i]!);
    if (open === null) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i]!.startsWith("```"); i++) {
      body.push(lines[i]!);
    }
    let above = start - 1;
    while (above >= 0 && lines[above]!.trim() === "") above--;
    const comment = /^<!-- readme-test: (.*) -->$/.exec(
      lines[above]?.trim() ?? "",
    );
    blocks.push({
      file,
      line: start + 1,
      lang: open[1]!.split(" ")[0]!,
      text: body.join("\n"),
      marks: comment === null
        ? []
        : comment[1]!.split(";").map((m) => m.trim()),
    });
  }
  return blocks;
}

async function readmes(): Promise<Block[]> {
  const files = ["README.md"];
  for await (const entry of Deno.readDir(join(ROOT, "examples"))) {
    if (!entry.isDirectory) continue;
    const readme = join("examples", entry.name, "README.md");
    try {
      await Deno.stat(join(ROOT, readme));
      files.push(readme);
    } catch (error) {
      // An example without a README has no commands to run.
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
  // The repository's README first: the examples' READMEs come after its tour.
  files.sort((a, b) =>
    Number(a !== "README.md") - Number(b !== "README.md") || a.localeCompare(b)
  );
  const blocks: Block[] = [];
  for (const file of files) {
    blocks.push(
      ...blocksOf(file, await Deno.readTextFile(join(ROOT, file))),
    );
  }
  return blocks;
}

const where = (b: Block) => `${b.file}:${b.line}`;
const mark = (b: Block, name: string) =>
  b.marks.find((m) =>
    m === name || m.startsWith(`${name}:`) ||
    m.startsWith(`${name} `)
  );

async function copyTree(from: string, to: string): Promise<void> {
  const info = await Deno.stat(from);
  if (!info.isDirectory) return await Deno.copyFile(from, to);
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    // A cache of local runs, except the one committed with the CI example.
    if (entry.name === ".evalpipe" && !from.endsWith("examples/ci/suite")) {
      continue;
    }
    await copyTree(join(from, entry.name), join(to, entry.name));
  }
}

Deno.test("every sh block of the READMEs is run by this test or says why not", async () => {
  for (const block of await readmes()) {
    if (block.lang !== "sh") continue;
    const skip = mark(block, "skip");
    if (skip !== undefined) {
      assert.match(skip, /^skip: \S/, `${where(block)}: skip needs a reason`);
    }
    const known = ["skip", "skip-lines", "exit", "scorer"];
    for (const m of block.marks) {
      assert.ok(
        known.some((k) => m.startsWith(k)),
        `${where(block)}: unknown mark "${m}"`,
      );
    }
  }
});

Deno.test("every yaml block of the READMEs parses, and a suite or a part of one passes the config checks", async () => {
  const base = {
    dataset: "cases.jsonl",
    target: { type: "replay" },
    scorers: [{ type: "exact_match" }],
  };
  for (const block of await readmes()) {
    if (block.lang !== "yaml") continue;
    let value: unknown;
    try {
      // As evalpipe reads YAML: merge keys included.
      value = loadYaml(block.text, where(block));
    } catch (error) {
      assert.fail(`${where(block)}: ${(error as Error).message}`);
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      continue;
    }
    const keys = Object.keys(value);
    const suiteKeys = ["dataset", "target", "scorers", "gates"];
    if (!keys.some((k) => suiteKeys.includes(k))) continue;
    // A suite of several targets (`targets:`) takes no `target:` of base.
    const { target: _, ...untargeted } = base;
    const suite = yaml.dump({
      ...("targets" in value ? untargeted : base),
      ...value,
    });
    try {
      await checkConfigText(suite, `${where(block)}.yaml`);
    } catch (error) {
      assert.fail(`${where(block)}: ${(error as Error).message}`);
    }
  }
});

Deno.test({
  name:
    "the READMEs' commands run as written, in order, in a fresh copy of the repository",
  // Each block starts real processes; they all end before the test does.
  fn: () =>
    withTempDir(async (dir) => {
      const clone = join(dir, "clone");
      await Deno.mkdir(clone);
      for (const name of PROGRAM) {
        await copyTree(join(ROOT, name), join(clone, name));
      }
      // `evalpipe` before `deno task install` has run: the same program.
      const shims = join(dir, "shims");
      await Deno.mkdir(shims);
      await Deno.writeTextFile(
        join(shims, "evalpipe"),
        `#!/bin/sh\nexec "${Deno.execPath()}" run -A --config "${clone}/deno.json" "${clone}/cli.ts" "$@"\n`,
        { mode: 0o755 },
      );
      const installRoot = join(dir, "deno-root");
      const env: Record<string, string> = { ...Deno.env.toObject() };
      for (const name of ["GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"]) {
        delete env[name];
      }
      Object.assign(env, {
        NO_COLOR: "1",
        DENO_INSTALL_ROOT: installRoot,
        PATH: [
          join(installRoot, "bin"),
          shims,
          dirname(Deno.execPath()),
          env.PATH ?? "/usr/bin:/bin",
        ].join(":"),
      });

      let previous = "";
      for (const block of await readmes()) {
        if (block.lang === "" && mark(block, "output") === undefined) continue;
        if (block.lang === "") {
          for (const line of block.text.split("\n")) {
            if (line.trim() === "") continue;
            assert.ok(
              previous.includes(line.trimEnd()),
              `${
                where(block)
              }: the shown output has a line the command did not print:\n${line}\n--- it printed:\n${previous}`,
            );
          }
          continue;
        }
        if (block.lang !== "sh" || mark(block, "skip") !== undefined) continue;
        let script = block.text;
        if (mark(block, "scorer") !== undefined) {
          const file = join(dir, `scorer-${block.line}.sh`);
          await Deno.writeTextFile(file, block.text);
          script =
            `evalpipe run examples/quickstart/evalpipe.yaml --units units-${block.line}.ndjson > /dev/null\n` +
            `evalpipe score --scorer 'sh ${file}' < units-${block.line}.ndjson\n`;
        }
        for (const m of block.marks.filter((m) => m.startsWith("skip-lines"))) {
          const prefix = /^skip-lines "([^"]+)": \S/.exec(m);
          assert.ok(prefix !== null, `${where(block)}: bad mark "${m}"`);
          script = script.split("\n")
            .filter((l) => !l.trimStart().startsWith(prefix[1]!))
            .join("\n");
        }
        const exit = Number(
          /^exit (\d+)$/.exec(mark(block, "exit") ?? "")?.[1] ?? 0,
        );
        const out = await new Deno.Command("sh", {
          args: ["-e", "-c", script],
          cwd: clone,
          env,
          clearEnv: true,
          stdin: "null",
          stdout: "piped",
          stderr: "piped",
        }).output();
        const decoder = new TextDecoder();
        previous = decoder.decode(out.stdout) + decoder.decode(out.stderr);
        assert.equal(
          out.code,
          exit,
          `${
            where(block)
          } exited ${out.code}:\n${script}\n--- output:\n${previous}`,
        );
        if (mark(block, "scorer") !== undefined) {
          const scores = decoder.decode(out.stdout).trim().split("\n")
            .map((l) => JSON.parse(l));
          assert.ok(scores.length > 0, `${where(block)}: no Scores`);
          assert.ok(
            scores.some((s) => s.status === "scored"),
            `${where(block)}: the scorer scored nothing:\n${previous}`,
          );
        }
      }

      // The README's `deno task install` ran: the command it installed does
      // not need the clone it came from.
      await Deno.remove(clone, { recursive: true });
      const installed = await new Deno.Command(
        join(installRoot, "bin", "evalpipe"),
        {
          args: ["--version"],
          env,
          clearEnv: true,
          cwd: dir,
          stdout: "piped",
          stderr: "piped",
        },
      ).output();
      const decoder = new TextDecoder();
      assert.equal(installed.code, 0, decoder.decode(installed.stderr));
      assert.match(decoder.decode(installed.stdout), /^evalpipe \d/);
    }),
});
