// How the benches start evalpipe: as `deno task install` installs it, with
// the same runtime flags, read from deno.json so the two cannot drift.

const config = JSON.parse(
  await Deno.readTextFile(new URL("../deno.json", import.meta.url)),
) as { tasks: Record<string, string> };

/** The `--v8-flags=...` of the install task, if it has them. */
export const V8_FLAGS: string[] = config.tasks.install!.split(/\s+/)
  .filter((word) => word.startsWith("--v8-flags="));

/**
 * `deno` arguments that run evalpipe's command line, before its own;
 * `permissions` follow `-A` (`--deny-ffi` for the setsid backend).
 */
export function evalpipeArgs(
  cli = "cli.ts",
  permissions: string[] = [],
): string[] {
  return ["run", "-A", ...permissions, ...V8_FLAGS, cli];
}
