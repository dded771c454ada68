// `deno task install`: installs the `evalpipe` command from this clone.
//
// `deno install -g` alone writes a launcher that runs the clone's own
// `cli.ts`, so moving or deleting the clone breaks the command. This copies the
// program (cli.ts, mod.ts, src/, deno.json, deno.lock) into the install root
// first and installs the copy. The install root is Deno's: `$DENO_INSTALL_ROOT`, else `~/.deno`.

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const clone = dirname(dirname(fileURLToPath(import.meta.url)));
const home = Deno.env.get("HOME") ?? Deno.env.get("USERPROFILE") ?? ".";
const root = Deno.env.get("DENO_INSTALL_ROOT") ?? join(home, ".deno");
const lib = join(root, "lib", "evalpipe");
const PROGRAM = ["cli.ts", "mod.ts", "deno.json", "deno.lock", "src"];

async function copyTree(from: string, to: string): Promise<void> {
  const info = await Deno.stat(from);
  if (!info.isDirectory) {
    await Deno.copyFile(from, to);
    return;
  }
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    await copyTree(join(from, entry.name), join(to, entry.name));
  }
}

// A fresh copy beside the old one, then a rename: an evalpipe run from the old
// copy while this installs keeps its files until the swap.
const staging = `${lib}.new-${Deno.pid}`;
await Deno.mkdir(staging, { recursive: true });
for (const name of PROGRAM) {
  await copyTree(join(clone, name), join(staging, name));
}
const old = `${lib}.old-${Deno.pid}`;
let hadOld = true;
try {
  await Deno.rename(lib, old);
} catch (error) {
  // No earlier install: nothing to set aside.
  if (!(error instanceof Deno.errors.NotFound)) throw error;
  hadOld = false;
}
await Deno.rename(staging, lib);
if (hadOld) await Deno.remove(old, { recursive: true });

const install = await new Deno.Command(Deno.execPath(), {
  args: [
    "install",
    "-g",
    "-A",
    "-f",
    "-n",
    "evalpipe",
    "--root",
    root,
    "--config",
    join(lib, "deno.json"),
    "--v8-flags=--max-semi-space-size=16",
    join(lib, "cli.ts"),
  ],
  stdout: "inherit",
  stderr: "inherit",
}).output();
if (!install.success) Deno.exit(install.code || 1);

// Deno itself says when the launcher's folder is not on PATH.
console.error(`evalpipe's program is in ${lib}; this clone can move.`);
