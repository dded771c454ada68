/**
 * `evalpipe init`: writes a small suite that runs as it is, offline, to
 * start from.
 *
 * @module
 */

import { defineCommand } from "./command.ts";
import { commandLine, say } from "./_output.ts";
import { UsageError } from "./flags.ts";

/** The files of the starter suite, by path relative to its folder. */
const FILES: Readonly<Record<string, string>> = {
  "evalpipe.yaml": `# A starter suite written by \`evalpipe init\`. Run it with
#   evalpipe run evalpipe.yaml
# Paths and commands resolve against this file's folder.
dataset: cases.jsonl

# The system under test: gets {"context"?, "input", "metadata"?} as JSON on
# stdin and prints its answer. Put your own program here.
target:
  type: subprocess
  cmd: deno run system.ts
  timeout: 30

scorers:
  # Built-ins: the answer equals the expected text; the expected text is in it.
  - type: exact_match
    ignore_case: true
  - type: contains
    ignore_case: true
  # A scorer in any language speaks protocol v0: the case as JSON on stdin, a
  # verdict {"score": 0..1, "passed"?, "reason"?} as JSON on stdout.
  - type: subprocess
    cmd: deno run scorers/brevity.ts

gates:
  contains:
    min_pass_rate: 0.5
`,
  "cases.jsonl":
    `{"id": "capital", "input": "What is the capital of France?", "expected": "Paris"}
{"id": "sum", "input": "What is 2 + 2?", "expected": "4"}
{"id": "colour", "input": "What colour is a clear daytime sky?", "expected": "blue", "context": ["Sunlight scatters off air molecules; blue light scatters most."]}
{"id": "unknown", "input": "Who will win the next election?", "expected": "I don't know"}
`,
  "system.ts":
    `// The system under test: a stand-in that answers from a table. Replace it
// with a call to your own model, service or program.
const ANSWERS: Record<string, string> = {
  "What is the capital of France?": "Paris.",
  "What is 2 + 2?": "2 + 2 is 4.",
  "What colour is a clear daytime sky?": "Blue, because of Rayleigh scattering.",
};

const text = new TextDecoder().decode(
  await new Response(Deno.stdin.readable).arrayBuffer(),
);
const { input } = JSON.parse(text);
console.log(ANSWERS[input] ?? "I cannot say; I have no way to know that.");
`,
  "scorers/brevity.ts":
    `// A scorer in protocol v0: is the answer short? 1 up to 10 words, less after.
const text = new TextDecoder().decode(
  await new Response(Deno.stdin.readable).arrayBuffer(),
);
const { output } = JSON.parse(text);
const words = String(output).split(/\\s+/).filter((w) => w !== "").length;
const score = words <= 10 ? 1 : Math.max(0, 1 - (words - 10) / 20);
console.log(JSON.stringify({ score, reason: \`\${words} words\` }));
`,
};

/** The `init` command. */
export const init = defineCommand({
  name: "init",
  summary: "Write a small suite that runs as it is, to start from",
  usage: "[DIR] [--force]",
  description:
    `Writes a starter suite into DIR (the current folder by default): a config
(evalpipe.yaml), a dataset of four cases, a stand-in system under test and a
scorer in protocol v0, all run by Deno, so that "evalpipe run evalpipe.yaml"
works at once, offline. Existing files are left alone unless --force is given.`,
  positionals: {
    names: ["[DIR]"],
    error: "init takes at most one folder",
    min: 0,
  },
  flags: {
    force: {
      type: "boolean",
      help: "Overwrite files of the starter suite that exist",
    },
  },
  async run(flags, [dir]) {
    if (dir === "-") {
      // Among the outputs `-` is never a name (README, Commands and flags).
      throw new UsageError(
        'init writes a folder, not stdout ("-"); write ./- for a folder named "-"',
      );
    }
    const [{ InputError, OutputError, osErrorText }, { join }] = await Promise
      .all([import("../base/errors.ts"), import("node:path")]);
    const root = dir ?? ".";
    await checkFolder(root, InputError);
    const paths = Object.keys(FILES).map((name) => join(root, name));
    if (!flags.force) {
      const there = paths.filter((path) => {
        try {
          Deno.lstatSync(path);
          return true;
        } catch (error) {
          if (error instanceof Deno.errors.NotFound) return false;
          throw error;
        }
      });
      if (there.length > 0) {
        throw new InputError(
          `${there.map((p) => JSON.stringify(p)).join(", ")} already exist${
            there.length === 1 ? "s" : ""
          }: nothing was written (--force overwrites them)`,
        );
      }
    }
    for (const [name, text] of Object.entries(FILES)) {
      const path = join(root, name);
      try {
        await Deno.mkdir(join(path, ".."), { recursive: true });
        await Deno.writeTextFile(path, text);
      } catch (error) {
        if (!(error instanceof Error)) throw error;
        throw new OutputError(
          `Cannot write ${JSON.stringify(path)}: ${osErrorText(error)}`,
        );
      }
      say(`wrote ${path}`);
    }
    const config = join(root, "evalpipe.yaml");
    say(`Run it with:  ${commandLine(["run", config])}`);
    return 0;
  },
});

/**
 * Refuses a DIR that cannot hold the starter suite: a file, a path through
 * one, a symlink to nothing. A folder not there yet is made.
 */
async function checkFolder(
  root: string,
  InputError: typeof import("../base/errors.ts").InputError,
): Promise<void> {
  const quoted = JSON.stringify(root);
  try {
    if ((await Deno.stat(root)).isDirectory) return;
    throw new InputError(`${quoted} is not a folder: nothing was written`);
  } catch (error) {
    if (error instanceof Deno.errors.NotADirectory) {
      throw new InputError(
        `${quoted} goes through a file as if it were a folder: nothing was written`,
      );
    }
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const link = await Deno.lstat(root).then((i) => i.isSymlink, () => false);
  if (link) {
    throw new InputError(
      `${quoted} is a symlink to nothing (${
        JSON.stringify(await Deno.readLink(root))
      }): nothing was written`,
    );
  }
}
