/** Running evalpipe's command line in tests, as a user would. */

import { within, writeAndClose } from "./_proc.ts";

/** The command line's entry point. */
export const CLI: string = new URL("../cli.ts", import.meta.url).pathname;

/** How a run of the command line ended. */
export interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `deno run -A cli.ts ...args` in `cwd`, stdin closed, without colours.
 *
 * @param args The command and its options.
 * @param cwd The folder to run in.
 * @param env More environment variables.
 * @returns Its exit code and output.
 */
export async function cli(
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<Outcome> {
  return await outcome(Deno.execPath(), ["run", "-A", CLI, ...args], cwd, env);
}

/** Runs `program ...args` in `cwd`, stdin closed, without colours. */
async function outcome(
  program: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<Outcome> {
  const { code, stdout, stderr } = await new Deno.Command(program, {
    args,
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...env },
  }).output();
  const dec = new TextDecoder();
  return { code, stdout: dec.decode(stdout), stderr: dec.decode(stderr) };
}

/**
 * Runs `deno run -A cli.ts ...args` in `cwd` with `input` on stdin; a CLI
 * that stops reading stdin early is fine (it is judged by its output).
 *
 * @param args The command and its options.
 * @param cwd The folder to run in.
 * @param input What stdin carries.
 * @param timeoutMs When given, the child is killed and the call rejects
 *   after this long: a bound on the test, not a timing claim.
 * @param program The entry point run in place of cli.ts (a built form of it).
 * @returns Its exit code and output.
 */
export async function cliWithStdin(
  args: string[],
  cwd: string,
  input: string,
  timeoutMs?: number,
  program: string = CLI,
): Promise<Outcome> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", program, ...args],
    cwd,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const both = Promise.all([
    writeAndClose(child.stdin, new TextEncoder().encode(input)),
    child.output(),
  ]);
  let out: Deno.CommandOutput;
  try {
    [, out] = timeoutMs === undefined
      ? await both
      : await within(both, timeoutMs, `evalpipe ${args[0]}`);
  } catch (error) {
    try {
      child.kill("SIGKILL");
    } catch (killError) {
      // It exited meanwhile: nothing left to stop.
      if (!(killError instanceof TypeError)) throw killError;
    }
    throw error;
  }
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
  };
}

/**
 * Starts `deno run -A cli.ts ...args` in `cwd`, stdin and stdout closed
 * (`null`), stderr piped, without colours: for a run that is watched or
 * signalled while it goes.
 *
 * @param args The command and its options.
 * @param cwd The folder to run in.
 * @param env More environment variables.
 * @param stdin `"piped"` for a stdin the test holds open (or writes to).
 * @returns The child.
 */
export function spawnCli(
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
  stdin: "null" | "piped" = "null",
): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, ...args],
    cwd,
    stdin,
    stdout: "null",
    stderr: "piped",
    env: { NO_COLOR: "1", ...env },
  }).spawn();
}

/** What {@linkcode cliWithShellPrefix} runs, and with what. */
export interface ShellOptions {
  /**
   * Variables for the shell and the CLI: the values a prefix reads
   * (`"$LIMIT"`), which never go into the script's text.
   * @default {}
   */
  env?: Record<string, string>;
  /** Deno's flags before the program (`--no-code-cache`). @default [] */
  flags?: string[];
  /** The program deno runs: cli.ts, or a test's own script. @default CLI */
  program?: string;
}

/**
 * Runs `deno run -A [flags] cli.ts ...args` in `cwd` through `sh -c`, after
 * `prefix`, what a shell user writes before a command (`ulimit -n "$LIMIT";`,
 * `umask 077;`, `< "$INPUT"`); stdin closed, without colours. The words
 * reach the shell as its arguments and the prefix's values through `env`:
 * no path or value is ever part of the script's text.
 *
 * @param prefix Shell words before the command: settings ending in `;`, or
 *   redirections.
 * @param args The command and its options.
 * @param cwd The folder to run in.
 * @param options The prefix's variables, deno's flags, another program.
 * @returns Its exit code and output.
 */
export async function cliWithShellPrefix(
  prefix: string,
  args: string[],
  cwd: string,
  options: ShellOptions = {},
): Promise<Outcome> {
  const { env = {}, flags = [], program = CLI } = options;
  return await outcome(
    "sh",
    [
      "-c",
      `${prefix} exec "$0" run -A "$@"`,
      Deno.execPath(),
      ...flags,
      program,
      ...args,
    ],
    cwd,
    env,
  );
}

/**
 * Runs `sh -c script` in `dir`, stdin closed, without colours, with `$0` the
 * deno executable and `$1` cli.ts: for redirections a test must write as a
 * shell user does (`"$0" run -A "$1" run s.yaml >> d.jsonl`). A command
 * after a prefix alone is {@linkcode cliWithShellPrefix}'s.
 *
 * @param dir The folder to run in.
 * @param script The shell script.
 * @returns Its exit code and output.
 */
export async function cliInShell(
  dir: string,
  script: string,
): Promise<Outcome> {
  return await outcome("sh", ["-c", script, Deno.execPath(), CLI], dir, {});
}

/**
 * Runs `deno run -A --no-code-cache cli.ts ...args` in `cwd`, stdin closed,
 * without colours, under a file size limit (`ulimit -f blocks`, blocks of
 * 1024 bytes): a write past it stops the run (SIGXFSZ, or EFBIG), as a full
 * disk or a kill would. Run the same command unlimited first (on a copy):
 * the modules it loads are then in Deno's caches, whose files (far above
 * the limit) the limited run must not write.
 *
 * @param args The command and its options.
 * @param cwd The folder to run in.
 * @param blocks The limit, in blocks of 1024 bytes.
 * @returns Its exit code and output.
 */
export async function cliWithFileLimit(
  args: string[],
  cwd: string,
  blocks: number,
): Promise<Outcome> {
  return await cliWithShellPrefix(
    'ulimit -f "$EVALPIPE_TEST_BLOCKS";',
    args,
    cwd,
    {
      env: { EVALPIPE_TEST_BLOCKS: String(blocks) },
      flags: ["--no-code-cache"],
    },
  );
}

/**
 * Runs `report RECORD --markdown report.md --html report.html` in `dir`, and
 * checks that its Markdown is the one `run --markdown` wrote to
 * `runMarkdown`: the record keeps what the run said.
 *
 * @param dir The folder to run in.
 * @param record The RunRecord, from `dir`.
 * @param runMarkdown The Markdown `run` wrote, from `dir`.
 * @returns The report's Markdown and HTML.
 */
export async function reportAgain(
  dir: string,
  record: string,
  runMarkdown: string,
): Promise<{ markdown: string; html: string }> {
  const report = await cli(
    ["report", record, "--markdown", "report.md", "--html", "report.html"],
    dir,
  );
  if (report.code !== 0) throw new Error(report.stderr);
  const markdown = await Deno.readTextFile(`${dir}/report.md`);
  const ran = await Deno.readTextFile(`${dir}/${runMarkdown}`);
  if (markdown !== ran) {
    throw new Error(
      `report's Markdown differs from run's:\n${markdown}\n${ran}`,
    );
  }
  return { markdown, html: await Deno.readTextFile(`${dir}/report.html`) };
}

/**
 * Runs `run SUITE --shard k/2 --record sk.json` in `dir` for both halves:
 * the records s1.json and s2.json, each shard's exit 0 checked.
 *
 * @param dir The folder to run in.
 * @param suite The suite file, from `dir`.
 */
export async function recordShards(dir: string, suite: string): Promise<void> {
  for (const k of [1, 2]) {
    const shard = await cli(
      ["run", suite, "--shard", `${k}/2`, "--record", `s${k}.json`],
      dir,
    );
    if (shard.code !== 0) {
      throw new Error(`shard ${k}/2 exited ${shard.code}: ${shard.stderr}`);
    }
  }
}

/**
 * Runs the suite in two shards ({@linkcode recordShards}), then `merge
 * s1.json s2.json ...flags`, as a sharded CI job does.
 *
 * @param dir The folder to run in.
 * @param suite The suite file, from `dir`.
 * @param flags merge's options.
 * @param env More environment variables for merge.
 * @returns merge's exit code and output.
 */
export async function mergeShards(
  dir: string,
  suite: string,
  flags: string[],
  env: Record<string, string> = {},
): Promise<Outcome> {
  await recordShards(dir, suite);
  return await cli(["merge", "s1.json", "s2.json", ...flags], dir, env);
}

// The system under test of writeAnswersSuite answers from answers.json:
// what a pull request changes. Case data reaches it on stdin only.
const ANSWERS_SYSTEM = `import json, sys
case = json.load(sys.stdin)
print(json.load(open("answers.json")).get(case["input"], "?"))
`;

/**
 * Writes a suite in `dir`: `evalpipe.yaml` scores with exact_match a
 * subprocess target (`python3 app.py`) that answers each input from
 * `answers.json`, over `d.jsonl`, one case a key of `cases` (its id and
 * input) with its value as the expected answer.
 *
 * @param dir The folder.
 * @param cases Each case's id and expected answer.
 * @param answers What the target answers to each input; `?` to others.
 */
export async function writeAnswersSuite(
  dir: string,
  cases: Record<string, string>,
  answers: Record<string, string>,
): Promise<void> {
  await Deno.writeTextFile(`${dir}/app.py`, ANSWERS_SYSTEM);
  await Deno.writeTextFile(
    `${dir}/d.jsonl`,
    Object.entries(cases).map(([id, expected]) =>
      JSON.stringify({ id, input: id, expected })
    ).join("\n") + "\n",
  );
  await Deno.writeTextFile(`${dir}/answers.json`, JSON.stringify(answers));
  await Deno.writeTextFile(
    `${dir}/evalpipe.yaml`,
    "dataset: d.jsonl\ntarget: { type: subprocess, cmd: python3 app.py }\n" +
      "scorers: [{ type: exact_match }]\n",
  );
}
