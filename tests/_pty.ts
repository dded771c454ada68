/**
 * Running evalpipe's command line under a real pseudo-terminal, through
 * util-linux's `script`, and reading what the terminal received.
 */

import { CLI } from "./_cli.ts";

/** What the terminal received, and how the command ended. */
export interface PtyOutcome {
  /** The command's exit code (`script -e` passes it on). */
  code: number;
  /** Every byte the terminal got (stdout and stderr both), as text. */
  screen: string;
}

/** Options of {@linkcode inPty}. */
export interface PtyOptions {
  /** The folder to run in. */
  cwd: string;
  /** The terminal's columns (`stty cols`); 0 is a terminal that reports none. */
  columns?: number;
  /** Environment variables; `NO_COLOR` is unset unless given here. */
  env?: Record<string, string>;
  /** A file the command's stdin reads, instead of the terminal. */
  stdinFile?: string;
  /** A file the command's stdout goes to, instead of the terminal. */
  stdoutFile?: string;
  /** Called with the child, for a test that signals it or reads as it goes. */
  onSpawn?: (child: Deno.ChildProcess, screen: () => string) => void;
}

/** Quotes `word` for `sh`: the test's own file names and flags only. */
function shellWord(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * Runs `deno run -q -A cli.ts ...args` (quiet: no download notes of Deno's
 * own) with a pseudo-terminal as its stdout and
 * stderr, and returns what the terminal received (with the terminal's
 * `\r\n` line ends).
 *
 * @param args The command and its options.
 * @param options The folder, the terminal's size, the environment.
 * @returns The exit code and the screen's bytes as text.
 */
export async function inPty(
  args: string[],
  options: PtyOptions,
): Promise<PtyOutcome> {
  const command = [Deno.execPath(), "run", "-q", "-A", CLI, ...args]
    .map(shellWord).join(" ");
  const redirects = [
    options.stdinFile !== undefined ? `< ${shellWord(options.stdinFile)}` : "",
    options.stdoutFile !== undefined
      ? `> ${shellWord(options.stdoutFile)}`
      : "",
  ].join(" ");
  const size = `stty cols ${options.columns ?? 100} rows 40`;
  const env = Deno.env.toObject();
  delete env.NO_COLOR;
  // A pseudo-terminal redraws lines, whatever the one running the tests is,
  // also when the tests run in CI (CI=true turns the progress line off).
  if (env.TERM === "dumb") env.TERM = "xterm";
  delete env.CI;
  const child = new Deno.Command("script", {
    args: ["-qfec", `${size}; exec ${command} ${redirects}`, "/dev/null"],
    cwd: options.cwd,
    clearEnv: true,
    env: { ...env, ...options.env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let screen = "";
  const reading = (async () => {
    for await (
      const chunk of child.stdout.pipeThrough(new TextDecoderStream())
    ) screen += chunk;
  })();
  options.onSpawn?.(child, () => screen);
  const [status, , stderr] = await Promise.all([
    child.status,
    reading,
    new Response(child.stderr).text(),
  ]);
  if (stderr !== "") screen += `\n[script's stderr] ${stderr}`;
  return { code: status.code, screen };
}
