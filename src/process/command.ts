// What a shell command runs, read without running it: the script it names
// and the default metric name that follows from it. Kept apart from the
// modules that spawn, so reading a config loads no process machinery.

/** Splits a command into words as a shell would, honouring quotes and backslashes. */
function tokens(cmd: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote = "";
  for (let i = 0; i < cmd.length; i++) {
    const c = cmd[i]!;
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

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch (error) {
    // A token that is not a readable file is simply not the script.
    if (
      error instanceof Deno.errors.NotFound ||
      error instanceof Deno.errors.PermissionDenied
    ) {
      return false;
    }
    throw error;
  }
}

/** `path` as seen from `cwd`. */
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
 */
export function scriptOf(cmd: string, cwd: string): string | undefined {
  const [program, ...args] = tokens(cmd);
  if (program === undefined) return undefined;
  if (program.includes("/") && isFile(resolveIn(cwd, program))) return program;
  return args.find((t) => !t.startsWith("-") && isFile(resolveIn(cwd, t)));
}

/**
 * The default metric name of a command: the file name, without extension, of
 * the script it runs (`faithfulness` for `python3 scorers/faithfulness.py`),
 * else its program's name.
 *
 * @param cmd The command.
 * @param cwd The folder it runs in.
 * @returns The name.
 */
export function defaultScorerName(cmd: string, cwd: string): string {
  const path = scriptOf(cmd, cwd) ?? tokens(cmd)[0] ?? "subprocess";
  const file = path.split("/").pop() ?? path;
  const dot = file.lastIndexOf(".");
  return dot > 0 ? file.slice(0, dot) : file;
}
