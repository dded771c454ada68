/**
 * Where a command's output goes: a file named by the user, or stdout.
 *
 * @module
 */

import {
  InputError,
  type OutputError,
  outputErrorOf,
  writeErrorText,
} from "../base/errors.ts";
import { stdoutWriter } from "./stdout.ts";
import {
  type ByteWriter,
  releasesBytes,
  releasing,
  writeSome,
} from "./text_writer.ts";

/**
 * An output opened by {@linkcode openOut}: bytes written to it reach the file
 * (or stdout) in order; close it when done.
 *
 * @example Write Score lines through it
 * ```ts
 * import { openOut, type OutFile } from "./mod.ts";
 * const path = await Deno.makeTempFile();
 * const out: OutFile = await openOut(path);
 * await out.write(new TextEncoder().encode('{"metric":"m"}\n'));
 * out.close();
 * if (!(await Deno.readTextFile(path)).endsWith("}\n")) throw new Error("unexpected");
 * await Deno.remove(path);
 * ```
 */
export interface OutFile extends ByteWriter {
  /**
   * Starts the file: empties one opened with `keep` (its first write does
   * too); nothing otherwise. It fails as a write does.
   */
  begin(): Promise<void>;
  /** Closes the file; nothing for stdout. */
  close(): void;
}

/**
 * Options of {@linkcode openOut}.
 *
 * @example Continue a file, as `run --resume` does
 * ```ts
 * import { openOut, type OpenOutOptions } from "./mod.ts";
 * const path = await Deno.makeTempFile();
 * await Deno.writeTextFile(path, "a\n");
 * const options: OpenOutOptions = { append: true };
 * const out = await openOut(path, options);
 * await out.write(new TextEncoder().encode("b\n"));
 * out.close();
 * if (await Deno.readTextFile(path) !== "a\nb\n") throw new Error("unexpected");
 * await Deno.remove(path);
 * ```
 */
export interface OpenOutOptions {
  /**
   * Append to the file instead of starting it afresh.
   * @default {false}
   */
  append?: boolean | undefined;
  /**
   * The output as messages name it, e.g. `--out "scores.ndjson"`.
   * @default {the path, quoted; `stdout` without one}
   */
  name?: string | undefined;
  /**
   * Keep going when a write fails (a full or read-only disk): called once
   * with the error, after which writes are dropped, so that a run can still
   * give its other outputs every Score. Without it, the write throws.
   * @default {undefined}
   */
  onFailure?: ((error: OutputError) => void) | undefined;
  /**
   * Leave the file's bytes as they are until `begin()` or the first write
   * empties it: a run that fails before it writes anything destroys no
   * earlier output. A file created for it and never begun is removed on
   * `close()`. Without `append` only.
   * @default {false}
   */
  keep?: boolean | undefined;
}

/**
 * A writer whose failed writes are `OutputError`s naming the output; with
 * `onFailure`, the first is reported and the rest of the writes dropped.
 */
function guarded(
  write: (p: Uint8Array) => Promise<number>,
  name: string,
  onFailure: ((error: OutputError) => void) | undefined,
): (p: Uint8Array) => Promise<number> {
  let failed = false;
  return async (p) => {
    if (failed) return p.length;
    try {
      return await write(p);
    } catch (error) {
      const failure = outputErrorOf(error, name);
      if (failure === undefined) throw error;
      if (onFailure === undefined) throw failure;
      failed = true;
      onFailure(failure);
      return p.length;
    }
  };
}

/**
 * Opens the destination of a command's output: the file at `path` (created,
 * and truncated unless `append`; with `keep`, once it begins), written
 * synchronously since a file never waits for a reader (a FIFO, which does,
 * asynchronously, so that the event loop runs on meanwhile); or, with no path,
 * stdout by {@linkcode stdoutWriter}'s policy. The file is created with mode 0666 less the umask, as the shell's
 * `>` creates it. A write the disk refuses (ENOSPC, EROFS, EDQUOT, EFBIG,
 * EIO) is an `OutputError` (exit code 3) naming the output.
 *
 * @param path The file, or `undefined` for stdout.
 * @param options Whether to append, how to name it, what to do on failure.
 * @returns The writer, to close when done.
 * @throws {InputError} When the file cannot be opened, naming it.
 * @throws {OutputError} When the disk refuses to create it (read-only, full).
 *
 * @example
 * ```ts
 * import { openOut } from "./out_file.ts";
 * const path = await Deno.makeTempFile();
 * const out = await openOut(path);
 * await out.write(new TextEncoder().encode("{}\n"));
 * out.close();
 * if (await Deno.readTextFile(path) !== "{}\n") throw new Error();
 * await Deno.remove(path);
 * ```
 */
export async function openOut(
  path: string | undefined,
  options: OpenOutOptions = {},
): Promise<OutFile> {
  if (path === undefined) {
    const stdout = stdoutWriter();
    return releasing({
      write: guarded(
        (p) => writeSome(stdout, p),
        options.name ?? "stdout",
        options.onFailure,
      ),
      begin: () => Promise.resolve(),
      close: () => {},
    }, releasesBytes(stdout));
  }
  const name = options.name ?? JSON.stringify(path);
  const keep = options.keep === true && options.append !== true;
  let file: Deno.FsFile;
  // The file this open made, so that a kept file never begun goes.
  let created: string | undefined;
  try {
    if (keep) {
      [file, created] = await openKept(path);
    } else {
      file = await Deno.open(
        path,
        options.append
          ? { append: true, create: true }
          : { write: true, create: true, truncate: true },
      );
    }
  } catch (error) {
    if (!(error instanceof Error)) throw error;
    const failure = outputErrorOf(error, name);
    if (failure !== undefined) throw failure;
    const { notAFileText } = await import("./_not_a_file.ts");
    throw new InputError(
      `Cannot write ${JSON.stringify(path)}: ${
        await notAFileText(path) ?? writeErrorText(error, path)
      }`,
      { cause: error },
    );
  }
  const info = await file.stat();
  // A pipe or a device (/dev/null) has no bytes to keep, nor to cut.
  let begun = !keep || !info.isFile;
  const write = guarded(
    info.isFifo === true
      // A FIFO waits for its reader: a synchronous write would stop the
      // whole run (its signals, timers, targets) behind a slow one.
      ? (p) => file.write(p)
      : (p) => {
        if (!begun) {
          file.truncateSync(0);
          begun = true;
        }
        return Promise.resolve(file.writeSync(p));
      },
    name,
    options.onFailure,
  );
  return releasing({
    write,
    begin: async () => {
      if (!begun) await write(new Uint8Array(0));
    },
    close: () => {
      file.close();
      if (begun || created === undefined) return;
      try {
        Deno.removeSync(created);
      } catch (error) {
        // Removed by someone else meanwhile: nothing is left of it.
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
    },
  });
}

/**
 * Opens `path` to write without emptying it: the file, and the path of the
 * file this open created, if it made one.
 */
async function openKept(
  path: string,
): Promise<[Deno.FsFile, string | undefined]> {
  try {
    return [await Deno.open(path, { write: true, createNew: true }), path];
  } catch (error) {
    // There already: kept as it is until the output begins.
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
  }
  try {
    return [await Deno.open(path, { write: true }), undefined];
  } catch (error) {
    // A symlink to no file yet, which the shell's > creates: made where it
    // points, and that file, not the link, is what goes unbegun.
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    const file = await Deno.open(path, { write: true, create: true });
    return [file, await Deno.realPath(path)];
  }
}
