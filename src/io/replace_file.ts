/**
 * Writing a small file (a sidecar) so that it is either the old one or the
 * new one, and never written through a symlink someone planted.
 *
 * @module
 */

import { InputError, outputErrorOf, writeErrorText } from "../base/errors.ts";

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
  name?: string;
}

/**
 * Replaces the file at `path` with `text`: written to a fresh file in the
 * same folder, created exclusively (O_EXCL: an existing file or symlink of
 * that name is never opened, so never followed), then renamed over `path`
 * (which replaces a symlink there rather than writing where it points). A run
 * killed meanwhile leaves the old file or the new one, never a torn one. The
 * file gets mode 0666 less the umask.
 *
 * @param path The file.
 * @param text Its new content.
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
  text: string,
  options: ReplaceFileOptions = {},
): Promise<void> {
  const name = `${options.name ?? "file"} ${JSON.stringify(path)}`;
  const slash = path.lastIndexOf("/");
  const folder = slash < 0 ? "." : path.slice(0, slash + 1);
  const base = path.slice(slash + 1);
  const bytes = new TextEncoder().encode(text);
  let temp = "";
  let file: Deno.FsFile | undefined;
  try {
    for (let attempt = 0; file === undefined; attempt++) {
      const random = crypto.getRandomValues(new Uint8Array(6));
      temp = `${slash < 0 ? "" : folder}.${base}.${
        [...random].map((b) => b.toString(16).padStart(2, "0")).join("")
      }.tmp`;
      try {
        file = await Deno.open(temp, { write: true, createNew: true });
      } catch (error) {
        // Someone's file or symlink holds that name: take another.
        if (!(error instanceof Deno.errors.AlreadyExists) || attempt >= 8) {
          throw error;
        }
      }
    }
    try {
      let written = 0;
      while (written < bytes.length) {
        written += await file.write(bytes.subarray(written));
      }
    } finally {
      file.close();
    }
    await Deno.rename(temp, path);
  } catch (error) {
    if (file !== undefined) {
      await Deno.remove(temp).catch((e) => {
        // Already gone (renamed, or removed by someone): nothing to clean.
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      });
    }
    const failure = outputErrorOf(error, name);
    if (failure !== undefined) throw failure;
    if (
      error instanceof Deno.errors.NotFound ||
      error instanceof Deno.errors.PermissionDenied ||
      error instanceof Deno.errors.IsADirectory ||
      error instanceof Deno.errors.AlreadyExists
    ) {
      throw new InputError(
        `Cannot write ${name}: ${writeErrorText(error, path)}`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
}
