// What a shell command runs, read without running it: the script it names
// and the default metric name that follows from it. Kept apart from the
// modules that spawn, so reading a config loads no process machinery.

import { InputError } from "../base/errors.ts";
import { clip } from "../base/terminal.ts";

/**
 * Splits a command into words as a shell would, honouring quotes and
 * backslashes, and a word's leading unquoted `~` (alone or before `/`) read
 * as the home folder: `python3 ~/evals/grade.py` runs a script that exists.
 */
function tokens(cmd: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote = "";
  for (let i = 0; i < cmd.length; i++) {
    const c = cmd[i]!;
    if (
      !inWord && c === "~" &&
      (i + 1 === cmd.length || /[\s/]/.test(cmd[i + 1]!))
    ) {
      const home = homeFolder();
      if (home !== undefined) {
        word = home;
        inWord = true;
        continue;
      }
    }
    if (quote !== "") {
      if (c === quote) quote = "";
      else if (c === "\\" && quote === '"' && i + 1 < cmd.length) {
        word += cmd[++i]!;
      } else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === "\\" && i + 1 < cmd.length) {
      word += cmd[++i]!;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/**
 * `$HOME`, as `sh` expands `~`; `undefined` when unset or empty, or when
 * this process may not read it. A library never asks a shell instead: that
 * would read the environment around Deno's permissions, as Deno itself
 * refuses `/proc/self/environ` without `--allow-all`.
 */
function homeFolder(): string | undefined {
  if (!mayReadHome()) return undefined;
  const home = Deno.env.get("HOME");
  return home === undefined || home === "" ? undefined : home;
}

/** Whether this process may read `HOME`: asked without a prompt. */
function mayReadHome(): boolean {
  const env = { name: "env", variable: "HOME" } as const;
  return Deno.permissions.querySync(env).state === "granted";
}

/**
 * The word of a command that would be its script, when it starts with `~/`
 * and this process may not read `HOME` to find it (a library script run
 * without `--allow-env`): its name and version could not come from the
 * script, as they do under the CLI.
 *
 * @param cmd The command.
 * @returns The word as written, or `undefined`.
 *
 * @example
 * ```ts
 * import { homeScript } from "./command.ts";
 * // Run with --allow-env: HOME is read, so nothing is unknown.
 * if (homeScript("python3 ~/evals/grade.py") !== undefined) throw new Error();
 * ```
 */
export function homeScript(cmd: string): string | undefined {
  if (!/(^|\s)~\//.test(cmd) || mayReadHome()) return undefined;
  const [program, ...args] = tokens(cmd);
  if (program === undefined) return undefined;
  if (program.startsWith("~/")) return program;
  if (!INTERPRETERS.has(baseName(program))) return undefined;
  const rest = baseName(program) === "deno" && args[0] === "run"
    ? args.slice(1)
    : args;
  const first = rest.find((a) => !a.startsWith("-"));
  return first?.startsWith("~/") ? first : undefined;
}

/**
 * What to say of a command whose script is behind a `~` this process may
 * not read ({@linkcode homeScript}), after what names the command.
 *
 * @param script The word.
 * @returns The rest of the message.
 */
export function homeScriptText(script: string): string {
  return `runs ${
    JSON.stringify(script)
  }, but this process may not read HOME to find it: allow it (--allow-env=HOME) or write the path without ~`;
}

/** Whether `path` names a file; any word of a command may be asked. */
function isFile(path: string): boolean {
  // No path has a NUL in it (stat would throw a TypeError).
  if (path.includes("\0")) return false;
  try {
    return Deno.statSync(path).isFile;
  } catch (error) {
    // A word that is not a readable file is simply not the script: it does
    // not exist, is not readable (by the system, or by Deno's permissions:
    // a script run with --allow-run alone), goes through a file as if it
    // were a folder (`x.py/y`), loops through symlinks, or is too long to be
    // a file name (an inline `python3 -c "..."` program).
    if (
      error instanceof Deno.errors.NotFound ||
      error instanceof Deno.errors.PermissionDenied ||
      error instanceof Deno.errors.NotCapable ||
      error instanceof Deno.errors.NotADirectory ||
      error instanceof Deno.errors.FilesystemLoop ||
      (error instanceof Error && "code" in error &&
        error.code === "ENAMETOOLONG")
    ) {
      return false;
    }
    throw error;
  }
}

/**
 * `path` as seen from `cwd`.
 *
 * @param cwd The folder.
 * @param path A path, absolute or relative to `cwd`.
 * @returns The path from `cwd`.
 *
 * @example
 * ```ts
 * import { resolveIn } from "./command.ts";
 * if (resolveIn("/suite", "s.py") !== "/suite/s.py") throw new Error();
 * ```
 */
export function resolveIn(cwd: string, path: string): string {
  return path.startsWith("/") ? path : `${cwd}/${path}`;
}

/**
 * The script a command runs: its program when that is a path to a file
 * (`./score.sh`), else the first later argument naming a file
 * (`python3 scorers/faithfulness.py`).
 *
 * @param cmd The command.
 * @param cwd The folder it runs in.
 * @returns The script's path as written, or `undefined`.
 *
 * @example
 * ```ts
 * import { scriptOf } from "./command.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/grade.py`, "print(1)\n");
 * if (scriptOf("python3 -B grade.py", dir) !== "grade.py") throw new Error();
 * if (scriptOf(`python3 -c "print(1)"`, dir) !== undefined) throw new Error();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function scriptOf(cmd: string, cwd: string): string | undefined {
  const [program, ...args] = tokens(cmd);
  if (program === undefined) return undefined;
  if (program.includes("/") && isFile(resolveIn(cwd, program))) return program;
  return args.find((t) => !t.startsWith("-") && isFile(resolveIn(cwd, t)));
}

/**
 * The metric name the script of a command gives it: the script's file name
 * without extension (`faithfulness` for `python3 scorers/faithfulness.py`).
 *
 * @param cmd The command.
 * @param cwd The folder it runs in.
 * @returns The name, or `undefined` when the command names no script file
 *   (`python3 -c "..."`): then a config or the command line must name it.
 *
 * @example
 * ```ts
 * import { scriptName } from "./command.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/faithfulness.py`, "print(1)\n");
 * if (scriptName("python3 faithfulness.py", dir) !== "faithfulness") throw new Error();
 * if (scriptName(`python3 -c "print(1)"`, dir) !== undefined) throw new Error();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function scriptName(cmd: string, cwd: string): string | undefined {
  const script = scriptOf(cmd, cwd);
  return script === undefined ? undefined : baseName(script);
}

/**
 * The default metric name of a command: the file name, without extension, of
 * the script it runs (`faithfulness` for `python3 scorers/faithfulness.py`),
 * else its program's name: the default of a scorer built in code. A config
 * or the command line asks for a name instead (see {@linkcode scriptName}).
 *
 * @param cmd The command.
 * @param cwd The folder it runs in.
 * @returns The name.
 *
 * @example
 * ```ts
 * import { defaultScorerName } from "./command.ts";
 * if (defaultScorerName(`python3 -c "print(1)"`, ".") !== "python3") throw new Error();
 * ```
 */
export function defaultScorerName(cmd: string, cwd: string): string {
  return scriptName(cmd, cwd) ?? baseName(tokens(cmd)[0] ?? "subprocess");
}

/** A path's file name without its extension. */
function baseName(path: string): string {
  const file = path.split("/").pop() ?? path;
  const dot = file.lastIndexOf(".");
  return dot > 0 ? file.slice(0, dot) : file;
}

/** Programs that run the script their first argument names. */
const INTERPRETERS = new Set([
  "python",
  "python3",
  "node",
  "deno",
  "bun",
  "ruby",
  "perl",
  "sh",
  "bash",
  "zsh",
  "Rscript",
  "php",
]);

/**
 * The script a command names that does not exist, when it plainly names
 * one: a program given by a path (`./grade.sh`), or an interpreter's first
 * argument that looks like a file (`python3 scorers/grade.py`). Inline
 * programs (`python3 -c ...`), options and anything else are left to the
 * shell.
 *
 * @param cmd The command.
 * @param cwd The folder it runs in.
 * @returns The missing script as written, or `undefined`.
 *
 * @example
 * ```ts
 * import { missingScript } from "./command.ts";
 * if (missingScript("python3 scorers/no-such-file.py", "/") !== "scorers/no-such-file.py") throw new Error();
 * if (missingScript("python3 -c 'print(1)'", "/") !== undefined) throw new Error();
 * if (missingScript("sh -c 'exit 0' /etc/hostname", "/") !== undefined) throw new Error();
 * if (missingScript("deno run -A jsr:@org/grader/grade.ts", "/") !== undefined) throw new Error();
 * ```
 */
export function missingScript(cmd: string, cwd: string): string | undefined {
  const [program, ...args] = tokens(cmd);
  if (program === undefined) return undefined;
  // Shell syntax (pipes, redirects, variables) is the shell's to read; so is
  // a leading `~` left as written (`~user/`, or no permission to read HOME).
  if (/[|&;<>$`(]/.test(cmd)) return undefined;
  if (
    /(^|\s)~/.test(cmd) && [program, ...args].some((w) => w.startsWith("~"))
  ) {
    return undefined;
  }
  // Some word names a file that exists: that is the script (an option's
  // value, `node --loader ts-node/esm x.js`, may look like one too).
  if (scriptOf(cmd, cwd) !== undefined) return undefined;
  if (program.includes("/")) {
    return exists(resolveIn(cwd, program)) ? undefined : program;
  }
  if (!INTERPRETERS.has(baseName(program))) return undefined;
  let rest = args;
  if (baseName(program) === "deno" && rest[0] === "run") rest = rest.slice(1);
  const at = rest.findIndex((a) => !a.startsWith("-"));
  if (at < 0) return undefined;
  // An inline program or a module, not a file: `-c`, `-e`, `-m`, `--eval`.
  const inline = ["-c", "-e", "-m", "-p", "--eval", "--print", "-"];
  if (rest.slice(0, at).some((a) => inline.includes(a))) return undefined;
  const first = rest[at]!;
  if (!/\.[A-Za-z0-9]+$/.test(first) && !first.includes("/")) return undefined;
  // A URL or a module specifier, not a path (`deno run -A jsr:@org/grade`,
  // `file:///srv/grade.ts`, `https://...`): the interpreter's to fetch.
  if (/^[A-Za-z][A-Za-z0-9+.-]+:/.test(first)) return undefined;
  return exists(resolveIn(cwd, first)) ? undefined : first;
}

/**
 * What to add to the message on a script missing from the config's folder
 * that is there from the current folder: EvalCore runs a suite's commands
 * where it starts (`sh examples/bot/bot.sh`), evalpipe in the config's
 * folder. `""` when it is not there either.
 *
 * @param script The missing script, as the command names it.
 * @param cwd The config's folder.
 * @returns `; it is there from the current folder…`, or `""`.
 *
 * @example
 * ```ts
 * import { fromHere } from "./command.ts";
 * if (fromHere("no/such/script.sh", "no") !== "") throw new Error("unexpected");
 * ```
 */
export function fromHere(script: string, cwd: string): string {
  if (script.startsWith("/") || !exists(script) || !exists(cwd)) return "";
  const from = relativePath(cwd, script);
  // Said only when it leads there from the config's folder.
  const leads = from !== undefined && exists(resolveIn(cwd, from));
  return `; it is there from the current folder, where EvalCore runs a suite's commands: write its path from the config's folder${
    leads ? `, ${JSON.stringify(from)}` : ""
  }`;
}

/**
 * The path that leads from the folder `from` to `to`, both read from the
 * current folder (`..` where it climbs), without touching the file system:
 * `undefined` when there is none to write (the same folder).
 */
function relativePath(from: string, to: string): string | undefined {
  let here: string;
  try {
    here = Deno.cwd();
  } catch (error) {
    // Reading the current folder not allowed: the path is left unsaid.
    if (
      error instanceof Deno.errors.NotCapable ||
      error instanceof Deno.errors.PermissionDenied
    ) return undefined;
    throw error;
  }
  const parts = (path: string) => {
    const out: string[] = [];
    for (const part of resolveIn(here, path).split("/")) {
      if (part === "" || part === ".") continue;
      if (part === "..") out.pop();
      else out.push(part);
    }
    return out;
  };
  const a = parts(from);
  const b = parts(to);
  let same = 0;
  while (same < a.length && same < b.length && a[same] === b[same]) same++;
  const up = a.slice(same).map(() => "..");
  const path = [...up, ...b.slice(same)].join("/");
  return path === "" ? undefined : path;
}

/**
 * Refuses, as the scorer or target that would run it is built, a command
 * whose script does not exist ({@linkcode missingScript}): every call would
 * fail the same way, and a scorer would take its interpreter's name
 * (`python3`) for its metric. A config or `score --scorer` naming such a
 * command is refused the same way. A `cwd` that does not exist is left to
 * the spawn, whose failure the protocol names.
 *
 * @param built What is being built (`subprocessScorer`), for the message.
 * @param cmd The command.
 * @param cwd The folder it runs in.
 * @throws {InputError} When the script the command names does not exist.
 *
 * @example
 * ```ts
 * import { refuseMissingScript } from "./command.ts";
 * refuseMissingScript("subprocessScorer", "python3 -c 'print(1)'", "/");
 * const dir = Deno.makeTempDirSync();
 * let message = "";
 * try {
 *   refuseMissingScript("subprocessScorer", "python3 grade.py", dir);
 * } catch (error) {
 *   message = (error as Error).message;
 * }
 * Deno.removeSync(dir);
 * if (!message.startsWith('subprocessScorer\'s command "python3 grade.py" runs "grade.py", which does not exist')) throw new Error(message);
 * ```
 */
export function refuseMissingScript(
  built: string,
  cmd: string,
  cwd: string,
): void {
  const home = homeScript(cmd);
  if (home !== undefined) {
    throw new InputError(
      `${built}'s command ${JSON.stringify(clip(cmd, 60))} ${
        homeScriptText(home)
      }`,
    );
  }
  const script = missingScript(cmd, cwd);
  // Without the folder itself, the spawn fails: the protocol's own error.
  if (script === undefined || !exists(cwd)) return;
  throw new InputError(
    `${built}'s command ${JSON.stringify(clip(cmd, 60))} runs ${
      JSON.stringify(script)
    }, which does not exist (paths resolve against its cwd, ${
      JSON.stringify(cwd)
    })`,
  );
}

function exists(path: string): boolean {
  if (path.includes("\0")) return true;
  try {
    Deno.statSync(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    // Unreadable, a loop, too long: not ours to call missing.
    if (error instanceof Error) return true;
    throw error;
  }
}

/** Shell builtins and keywords: the shell runs these, no program on PATH. */
const BUILTINS = new Set([
  ".",
  ":",
  "[",
  "alias",
  "cd",
  "command",
  "eval",
  "exec",
  "exit",
  "export",
  "false",
  "printf",
  "echo",
  "read",
  "set",
  "test",
  "true",
  "ulimit",
  "umask",
  "unset",
  "wait",
  "if",
  "for",
  "while",
  "case",
  "until",
  "{",
  "(",
  "!",
]);

/**
 * The program a shell command starts that is found nowhere, when it plainly
 * names one: its first word after any `NAME=value`, looked for on `PATH`
 * (a builtin or keyword is the shell's), or as a path from `cwd`.
 *
 * @param cmd The shell command.
 * @param cwd The folder it runs in.
 * @returns The missing program as written, or `undefined`.
 *
 * @example
 * ```ts
 * import { missingProgram } from "./command.ts";
 * if (missingProgram("no-such-program-here --flag", "/") !== "no-such-program-here") throw new Error();
 * if (missingProgram("sh -c 'exit 0'", "/") !== undefined || missingProgram("cd x && y", "/") !== undefined) throw new Error();
 * ```
 */
export function missingProgram(
  cmd: string,
  cwd: string,
): string | undefined {
  const words = cmd.trim().split(/\s+/);
  let i = 0;
  while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!)) i++;
  const program = words[i];
  if (program === undefined || !/^[A-Za-z0-9_.\/+-]+$/.test(program)) {
    return undefined; // quoting, expansions: the shell's to read
  }
  if (BUILTINS.has(program)) return undefined;
  if (program.includes("/")) {
    return isFile(resolveIn(cwd, program)) ? undefined : program;
  }
  const path = Deno.env.get("PATH") ?? "";
  return path.split(":").some((dir) =>
      dir !== "" && isFile(`${dir}/${program}`)
    )
    ? undefined
    : program;
}
