/**
 * Where a command's output goes: a file named by the user, or stdout.
 *
 * @module
 */

import { InputError, osErrorText } from "../base/errors.ts";
import { stdoutWriter } from "./stdout.ts";
import type { ByteWriter } from "./text_writer.ts";

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
  append?: boolean;
}

/**
 * Opens the destination of a command's output: the file at `path` (created,
 * and truncated unless `append`), written synchronously since a file never
 * waits for a reader; or, with no path, stdout by {@linkcode stdoutWriter}'s
 * policy.
 *
 * @param path The file, or `undefined` for stdout.
 * @param options Whether to append.
 * @returns The writer, to close when done.
 * @throws {InputError} When the file cannot be opened, naming it.
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
    return { write: (p) => stdout.write(p), close: () => {} };
  }
  let file: Deno.FsFile;
  try {
    file = await Deno.open(
      path,
      options.append
        ? { append: true, create: true }
        : { write: true, create: true, truncate: true },
    );
  } catch (error) {
    if (!(error instanceof Error)) throw error;
    throw new InputError(
      `Cannot write ${JSON.stringify(path)}: ${osErrorText(error)}`,
      { cause: error },
    );
  }
  return {
    write: (p) => Promise.resolve(file.writeSync(p)),
    close: () => file.close(),
  };
}
