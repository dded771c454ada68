/** Running evalpipe's command line in tests, as a user would. */

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
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, ...args],
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
 * Runs `deno run -A cli.ts ...args` in `cwd` with `input` on stdin.
 *
 * @param args The command and its options.
 * @param cwd The folder to run in.
 * @param input What stdin carries.
 * @returns Its exit code and output.
 */
export async function cliWithStdin(
  args: string[],
  cwd: string,
  input: string,
): Promise<Outcome> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, ...args],
    cwd,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const writer = child.stdin.getWriter();
  const [, out] = await Promise.all([
    writer.write(new TextEncoder().encode(input)).then(() => writer.close()),
    child.output(),
  ]);
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
  };
}
