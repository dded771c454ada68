/**
 * Refusing an output that is one of the command's inputs, or another of its
 * outputs, by what the path leads to (device and inode), not by how it is
 * spelled: through symlinks, hard links, `./` and `..`.
 *
 * @module
 */

import { cannotOpen, InputError, isOsError } from "../base/errors.ts";

/**
 * A file a command reads or writes, and how messages name it.
 *
 * @example
 * ```ts
 * import type { NamedPath } from "./mod.ts";
 * const out: NamedPath = { name: "--out", path: "scores.ndjson" };
 * if (out.name !== "--out") throw new Error("unexpected");
 * ```
 */
export interface NamedPath {
  /** What the file is to the command: `--out`, `the config`, `the dataset`. */
  name: string;
  /** The path as given, or as resolved against the config's folder. */
  path: string;
}

function dirnameOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "." : slash === 0 ? "/" : path.slice(0, slash);
}

/**
 * What a path leads to: `dev:ino` of an existing regular file; the real
 * folder and name of a file not created yet (through dangling symlinks);
 * `undefined` for anything else (a device such as `/dev/null`, a pipe, a
 * folder that does not exist), which no write of ours can destroy.
 */
async function identityOf(path: string): Promise<string | undefined> {
  if (path === "-") return await streamIdentity("/dev/stdin");
  try {
    const info = await Deno.stat(path);
    if (!info.isFile) return undefined;
    if (info.dev !== null && info.ino !== null) {
      return `${info.dev}:${info.ino}`;
    }
    return `path:${await Deno.realPath(path)}`;
  } catch (error) {
    // Through a file as if it were a folder (`data.jsonl/x`), through
    // symlinks that lead back to themselves (`a -> b -> a`), a name too
    // long: it can never be created, so it is no file of ours; opening it
    // says why.
    if (!(error instanceof Deno.errors.NotFound)) {
      if (cannotOpen(error)) return undefined;
      throw error;
    }
  }
  // Not there yet, or a symlink to a file not there yet: where it will be.
  let p = path;
  for (let hops = 0; hops < 40; hops++) {
    let link: string;
    try {
      if (!(await Deno.lstat(p)).isSymlink) break;
      link = await Deno.readLink(p);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      break;
    }
    p = link.startsWith("/") ? link : `${dirnameOf(p)}/${link}`;
  }
  try {
    const folder = await Deno.realPath(dirnameOf(p));
    return `new:${folder}/${p.slice(p.lastIndexOf("/") + 1)}`;
  } catch (error) {
    // No such folder: opening the output fails, with its own message.
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    return undefined;
  }
}

/**
 * Refuses outputs that would overwrite an input or each other: each output
 * is compared with every input and every other output by device and inode,
 * so a symlink or a hard link to the dataset is caught as surely as its own
 * name. Devices and pipes (`/dev/null`, `/dev/stdout`) are never refused.
 *
 * @param outputs The files the command will write.
 * @param inputs The files it reads.
 * @throws {InputError} Naming both files (exit code 2), before anything is
 * written.
 *
 * @example `--out` given the dataset's hard link
 * ```ts
 * import { refuseSameFile } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/d.jsonl`, '{"input":"q"}\n');
 * await Deno.link(`${dir}/d.jsonl`, `${dir}/scores.ndjson`);
 * const error = await refuseSameFile(
 *   [{ name: "--out", path: `${dir}/scores.ndjson` }],
 *   [{ name: "the dataset", path: `${dir}/d.jsonl` }],
 * ).then(() => undefined, (e: Error) => e);
 * await Deno.remove(dir, { recursive: true });
 * if (!error?.message.startsWith(`--out "${dir}/scores.ndjson" is the same file as the dataset "${dir}/d.jsonl"`)) {
 *   throw new Error(error?.message);
 * }
 * ```
 */
export async function refuseSameFile(
  outputs: readonly NamedPath[],
  inputs: readonly NamedPath[],
): Promise<void> {
  // An output named `-` is the file `./-` it is written to; only among the
  // inputs is `-` stdin.
  const ids = await Promise.all(
    outputs.map((o) => identityOf(o.path === "-" ? "./-" : o.path)),
  );
  const inputIds = await Promise.all(inputs.map((i) => identityOf(i.path)));
  const refuse = (out: NamedPath, other: NamedPath, verb: string) => {
    throw new InputError(
      `${out.name} ${
        JSON.stringify(out.path)
      } is the same file as ${other.name} ${
        JSON.stringify(other.path)
      }: ${verb}; choose another path`,
    );
  };
  outputs.forEach((out, i) => {
    const id = ids[i];
    if (id === undefined) return;
    inputs.forEach((input, j) => {
      if (inputIds[j] === id) refuse(out, input, "writing it would destroy it");
    });
    outputs.slice(0, i).forEach((other, j) => {
      if (ids[j] === id) {
        refuse(out, other, "the two would be written over each other");
      }
    });
  });
}

/**
 * The identity of the file behind stdin or stdout, when it is a regular
 * file; `undefined` otherwise, and when this process may not look (Deno
 * asks for every permission to stat a path under /dev).
 */
async function streamIdentity(
  path: "/dev/stdin" | "/dev/stdout",
): Promise<string | undefined> {
  try {
    const info = await Deno.stat(path);
    return info.isFile && info.dev !== null && info.ino !== null
      ? `${info.dev}:${info.ino}`
      : undefined;
  } catch (error) {
    // No /dev, or no permission to look: as the doc says, no identity.
    // Anything else is a bug.
    if (!isOsError(error)) throw error;
    return undefined;
  }
}

/**
 * Refuses a stdout that is a file the command reads (`>> data.jsonl`,
 * `< units.ndjson >> units.ndjson`): the command would read back the lines
 * it writes, without end. A stdout that is not a regular file (a terminal,
 * a pipe) is never refused.
 *
 * @param inputs The files the command reads (`-` is stdin).
 * @throws {InputError} When stdout is one of them (exit code 2).
 *
 * @example A stdout that is a pipe is nobody's input
 * ```ts
 * import { refuseStdoutOnInput } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/d.jsonl`, "{}\n");
 * await refuseStdoutOnInput([{ name: "the dataset", path: `${dir}/d.jsonl` }]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function refuseStdoutOnInput(
  inputs: readonly NamedPath[],
): Promise<void> {
  const out = await streamIdentity("/dev/stdout");
  if (out === undefined) return;
  for (const input of inputs) {
    if (await identityOf(input.path) !== out) continue;
    throw new InputError(
      `stdout is the same file as ${input.name} ${
        JSON.stringify(input.path === "-" ? "stdin" : input.path)
      }: the command would read back what it writes, without end; send stdout to another file`,
    );
  }
}
