// How the benches start evalpipe: as `deno task install` installs it, with
// the same runtime flags, read from scripts/install.ts (which the install task
// runs) so the two cannot drift.

const install = await Deno.readTextFile(
  new URL("../scripts/install.ts", import.meta.url),
);

/** The `--v8-flags=...` the install script gives `deno install`, if any. */
export const V8_FLAGS: string[] = [
  ...install.matchAll(/"(--v8-flags=[^"]+)"/g),
].map((m) => m[1]!);
if (/--v8-flags/.test(install) && V8_FLAGS.length === 0) {
  throw new Error(
    "scripts/install.ts names --v8-flags in a form not read here",
  );
}

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
