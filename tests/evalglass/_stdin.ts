/** Running the CLI with something on its stdin. */

import { CLI, type Outcome } from "../_cli.ts";

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
