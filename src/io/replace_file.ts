/**
 * Writing a small file (a sidecar) so that it is either the old one or the
 * new one, and never written through a symlink someone planted.
 *
 * @module
 */

import {
  cannotOpen,
  InputError,
  isOsError,
  outputErrorOf,
  writeErrorText,
} from "../base/errors.ts";
import { TextWriter } from "./text_writer.ts";

/**
 * Options of {@linkcode replaceFile}.
 *
 * @example
 * ```ts
 * import { replaceFile, type ReplaceFileOptions } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * const options: ReplaceFileOptions = { name: "the sidecar" };
 * await replaceFile(`${dir}/a.json`, "{}\n", options);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export interface ReplaceFileOptions {
  /**
   * What messages call the file, before its quoted path.
   * @default {"file"}
   */
  name?: string | undefined;
}

/**
 * Replaces the file at `path` with `text`: written to a fresh file in the
 * same folder, created exclusively (O_EXCL: an existing file or symlink of
 * that name is never opened, so never followed), then renamed over `path`
 * (which replaces a symlink there rather than writing where it points). A run
 * killed meanwhile (or a power cut: the text is synced before the rename)
 * leaves the old file or the new one, never a torn one. The file keeps the
 * mode of the one it replaces (behind a symlink, what of it a new file would
 * have too); a new one gets 0666 less the umask. A device or a FIFO at `path`
 * (`/dev/null`), or a symlink in /dev or /proc (`/dev/stdout`), is written
 * through instead: a rename would replace it.
 *
 * The content can come in pieces: `text` may be a function that hands each
 * piece to the `write` it is given (awaiting what `write` returns), so that a
 * big file is never one string; one that throws leaves the old file as it was.
 *
 * @param path The file.
 * @param text Its new content, or a function that writes it in pieces.
 * @param options How messages name it.
 * @throws {OutputError} When the disk refuses the write (full, read-only).
 * @throws {InputError} When the folder is missing or not writable.
 *
 * @example A symlink planted at the sidecar's name is replaced, not followed
 * ```ts
 * import { replaceFile } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/victim`, "precious\n");
 * await Deno.symlink(`${dir}/victim`, `${dir}/s.ndjson.meta.json`);
 * await replaceFile(`${dir}/s.ndjson.meta.json`, "{}\n");
 * const victim = await Deno.readTextFile(`${dir}/victim`);
 * const link = await Deno.lstat(`${dir}/s.ndjson.meta.json`);
 * await Deno.remove(dir, { recursive: true });
 * if (victim !== "precious\n" || link.isSymlink) throw new Error("unexpected");
 * ```
 */
export async function replaceFile(
  path: string,
  text: string | FileWriting,
  options: ReplaceFileOptions = {},
): Promise<void> {
  const name = `${options.name ?? "file"} ${JSON.stringify(path)}`;
  const slash = path.lastIndexOf("/");
  const folder = slash < 0 ? "." : path.slice(0, slash + 1);
  const base = path.slice(slash + 1);
  let temp = "";
  let file: Deno.FsFile | undefined;
  // A stop that cannot wait (a second Ctrl-C ends in Deno.exit, which
  // dispatches "unload") takes the half-written temporary file with it.
  const dropTemp = () => {
    try {
      Deno.removeSync(temp);
    } catch (error) {
      // Already renamed or removed: nothing is left behind.
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  };
  try {
    const through = await writtenThrough(path);
    if (through !== undefined) {
      // `/dev/null`, a FIFO: written through, as every other output is. A
      // rename would put a regular file in its place (as root, in /dev).
      // `/dev/stdout` may lead to the file stdout was sent to: added to.
      const device = await Deno.open(path, {
        write: true,
        append: through === "link",
      });
      try {
        // A file swapped in since the lstat (through a symlink) is not
        // written: the rename below replaces the name instead.
        if (through === "link" || !(await device.stat()).isFile) {
          return await writeText(device, text);
        }
      } finally {
        device.close();
      }
    }
    for (let attempt = 0; file === undefined; attempt++) {
      const random = crypto.getRandomValues(new Uint8Array(6));
      temp = `${slash < 0 ? "" : folder}.${base}.${
        [...random].map((b) => b.toString(16).padStart(2, "0")).join("")
      }.tmp`;
      // Before the open: the file exists as soon as the open has made it,
      // before this code hears so.
      globalThis.addEventListener("unload", dropTemp);
      try {
        file = await Deno.open(temp, { write: true, createNew: true });
      } catch (error) {
        // Not ours to remove.
        globalThis.removeEventListener("unload", dropTemp);
        // Someone's file or symlink holds that name: take another.
        if (!(error instanceof Deno.errors.AlreadyExists) || attempt >= 8) {
          throw error;
        }
      }
    }
    try {
      // Locked before its first byte and until it is renamed: a temp file
      // with bytes that no process locks is a dead run's (removeStaleTemps).
      await file.lock(true).catch((error) => {
        // A file system without locks (some network mounts): written
        // unlocked, as before locks were taken.
        if (!isOsError(error)) throw error;
      });
      await writeText(file, text);
      // On the disk before the rename: after a power cut the name holds the
      // old text or the new, not an empty file.
      await file.syncData();
      // The file it replaces keeps its mode (a baseline made 0600 stays so).
      const mode = await modeOf(path);
      if (mode !== undefined) await Deno.chmod(temp, mode);
      await Deno.rename(temp, path);
    } finally {
      file.close();
    }
    globalThis.removeEventListener("unload", dropTemp);
  } catch (error) {
    globalThis.removeEventListener("unload", dropTemp);
    if (file !== undefined) {
      await Deno.remove(temp).catch((e) => {
        // Already gone (renamed, or removed by someone): nothing to clean.
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      });
    }
    const failure = outputErrorOf(error, name);
    if (failure !== undefined) throw failure;
    const { notAFileText } = await import("./_not_a_file.ts");
    const notAFile = await notAFileText(path);
    if (notAFile !== undefined) {
      throw new InputError(`Cannot write ${name}: ${notAFile}`, {
        cause: error,
      });
    }
    // Or every temp name tried was taken (AlreadyExists above).
    if (cannotOpen(error) || error instanceof Deno.errors.AlreadyExists) {
      throw new InputError(
        `Cannot write ${name}: ${writeErrorText(error, path)}`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
  // Once per file in a process: a sidecar noted every second reads its
  // folder once.
  if (!swept.has(path)) {
    swept.add(path);
    await removeStaleTemps([path]);
  }
}

/** The files whose stale temp files replaceFile has removed already. */
const swept = new Set<string>();

/**
 * Removes the temp files a {@linkcode replaceFile} of one of `paths` left
 * when its process was killed mid-write (`kill -9`, the OOM killer, a power
 * cut): `.NAME.xxxxxxxxxxxx.tmp` beside the file, as big as what was being
 * written. Only a temp file that no process holds locked and that holds
 * bytes is removed: `replaceFile` locks its temp file before it writes a
 * byte and until it has renamed it, and the kernel drops the lock of a
 * process that dies, so one another run is still writing is left alone.
 * One read of each folder; a temp file that cannot be opened or removed
 * (another user's) is left as it is. `replaceFile` calls it once per file
 * in a process, after its write.
 *
 * @param paths The files (a Scores file, its sidecar, a units file).
 * @returns The temp files removed.
 *
 * @example The temp file of a run killed while it wrote goes
 * ```ts
 * import { removeStaleTemps } from "./replace_file.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/.s.json.0123456789ab.tmp`, "half a sid");
 * const removed = await removeStaleTemps([`${dir}/s.json`]);
 * await Deno.remove(dir, { recursive: true });
 * if (removed.join() !== `${dir}/.s.json.0123456789ab.tmp`) throw new Error(removed.join());
 * ```
 */
export async function removeStaleTemps(
  paths: readonly string[],
): Promise<string[]> {
  const byFolder = new Map<string, Set<string>>();
  for (const path of paths) {
    const slash = path.lastIndexOf("/");
    const folder = slash < 0 ? "." : path.slice(0, slash + 1);
    const bases = byFolder.get(folder) ?? new Set<string>();
    byFolder.set(folder, bases.add(path.slice(slash + 1)));
  }
  const removed: string[] = [];
  for (const [folder, bases] of byFolder) {
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(folder));
    } catch (error) {
      // A folder gone or unreadable holds nothing to clean here.
      if (isOsError(error)) continue;
      throw error;
    }
    for (const entry of entries) {
      const match = TEMP_NAME.exec(entry.name);
      if (!entry.isFile || match === null || !bases.has(match[1]!)) continue;
      const temp = `${folder === "." ? "" : folder}${entry.name}`;
      if (await removeIfDead(temp)) removed.push(temp);
    }
  }
  return removed;
}

/** `.NAME.xxxxxxxxxxxx.tmp`, as {@linkcode replaceFile} names its temp files. */
const TEMP_NAME = /^\.(.+)\.[0-9a-f]{12}\.tmp$/;

/**
 * Removes a temp file no process holds locked that holds bytes. An empty
 * one may be a live run's between its creation and its lock: left.
 */
async function removeIfDead(temp: string): Promise<boolean> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(temp, { read: true });
  } catch (error) {
    // Renamed by its run meanwhile, or not ours to read: left as it is.
    if (isOsError(error)) return false;
    throw error;
  }
  try {
    if (!(await file.tryLock(true))) return false;
    if ((await file.stat()).size === 0) return false;
    await Deno.remove(temp);
    return true;
  } catch (error) {
    // Gone meanwhile, or in a folder this user cannot write: cleaning up
    // is no reason to fail a write that succeeded.
    if (isOsError(error)) return false;
    throw error;
  } finally {
    file.close();
  }
}

/**
 * How `path` is written through rather than replaced: `"device"` when it is
 * neither a file, a folder nor a symlink; `"link"` when it is a symlink in
 * /dev or /proc, the system's way to the process's streams (`/dev/stdout`,
 * `/dev/fd/3`, `/proc/self/fd/1`), which no one else can plant there, and
 * which a rename would replace for every process (as root) or fail to make
 * ("no such folder /proc/self/fd"). Anywhere else a symlink may be planted:
 * replaced, not followed.
 */
async function writtenThrough(
  path: string,
): Promise<"device" | "link" | undefined> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(path);
  } catch (error) {
    // Not there, or never can be (a name too long): the temp file's
    // opening says why.
    if (cannotOpen(error)) return undefined;
    throw error;
  }
  if (info.isFile || info.isDirectory) return undefined;
  if (!info.isSymlink) return "device";
  const slash = path.lastIndexOf("/");
  const folder = await Deno.realPath(
    slash < 0 ? "." : path.slice(0, slash + 1),
  );
  return /^\/(dev|proc)(\/|$)/.test(folder) ? "link" : undefined;
}

/**
 * The permission bits the file replacing `path` gets: those of the regular
 * file there; behind a symlink (which is replaced, not followed), those of
 * the file it leads to that a new file would have too, so that units kept
 * in a 0600 file behind a link stay private, and a link planted to a
 * world-writable file makes nothing more open than a new file.
 */
async function modeOf(path: string): Promise<number | undefined> {
  try {
    const info = await Deno.lstat(path);
    if (info.isSymlink) {
      // A link into a folder this user cannot read: a new file's mode (a
      // link to nothing is NotFound, below).
      const target = await Deno.stat(path).catch((error) => {
        if (error instanceof Deno.errors.PermissionDenied) return undefined;
        throw error;
      });
      return target?.isFile && target.mode !== null
        ? target.mode & 0o666 & ~Deno.umask()
        : undefined;
    }
    return info.isFile && info.mode !== null ? info.mode & 0o7777 : undefined;
  } catch (error) {
    // Nothing there yet: the new file's mode is the umask's.
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

/**
 * A function that writes a file's content in pieces: it hands each to
 * `write`, in order, and awaits what `write` returns (the file's
 * backpressure).
 *
 * @example Write a file a line at a time
 * ```ts
 * import { type FileWriting, replaceFile } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * const lines: FileWriting = async (write) => {
 *   for (let i = 1; i <= 3; i++) await write(`line ${i}\n`);
 * };
 * await replaceFile(`${dir}/a.txt`, lines);
 * const text = await Deno.readTextFile(`${dir}/a.txt`);
 * await Deno.remove(dir, { recursive: true });
 * if (text !== "line 1\nline 2\nline 3\n") throw new Error(text);
 * ```
 */
export type FileWriting = (
  write: (text: string) => Promise<void> | undefined,
) => Promise<void>;

/** Writes `text` (or what `text` writes, piece by piece) to `file`. */
async function writeText(
  file: Deno.FsFile,
  text: string | FileWriting,
): Promise<void> {
  if (typeof text === "string") {
    const bytes = new TextEncoder().encode(text);
    let written = 0;
    while (written < bytes.length) {
      written += await file.write(bytes.subarray(written));
    }
    return;
  }
  const out = new TextWriter(file);
  try {
    await text((piece) => out.write(piece));
    await out.flush();
  } catch (error) {
    // The file is dropped: what is buffered need not reach it, but a write
    // under way must end before the file is closed. Its own failure, if
    // any, is not the one to report.
    out.discard();
    await Promise.allSettled([out.flush()]);
    throw error;
  }
}
