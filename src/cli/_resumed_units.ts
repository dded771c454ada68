// `run --resume --units F`: the earlier run's units file, made ready for the
// resume to append to. It keeps the units the resume skips (their Scores are
// all in --out), once each; the resume runs the others again and writes them
// anew, so the file ends as an uninterrupted run's would.

import {
  exitCodeOf,
  InputError,
  isReadError,
  osErrorText,
  outputErrorOf,
  writeErrorText,
} from "../base/errors.ts";
import { concat } from "../process/_concat.ts";
import { replaceFile } from "../io/replace_file.ts";

const NEWLINE = 10;

/** What {@linkcode keepSkippedUnits} does to the file, as one read found it. */
export interface UnitsToKeep {
  /** The units file. */
  path: string;
  /** Units kept: those the resume skips. */
  kept: number;
  /** Lines dropped: units run again, a unit's second line, a torn last line. */
  dropped: number;
  /** The lines (1-based) the file keeps no longer, blank ones too. */
  left: ReadonlySet<number>;
  /**
   * When every line dropped comes after every line kept: the bytes before
   * the first line dropped, where the file can be cut.
   */
  cut?: number;
  /** The file's size when it was read. */
  size: number;
}

/**
 * Reads the units file at `path` once, for {@linkcode keepSkippedUnits}:
 * the line of each unit that `skips` tells is kept, once, and every other
 * line dropped. Changes nothing.
 *
 * @param path The units file (`--units`).
 * @param skips Whether the resume skips a unit, by unit id.
 * @returns What to keep and drop; `undefined` for a file that does not
 *   exist yet, or is not a regular file (a pipe), which the resume appends
 *   to as it is.
 * @throws {InputError} When a whole line is not a unit record (the file is
 * then not a units file, and is left as it was), or the file cannot be read.
 */
export async function readUnitsToKeep(
  path: string,
  skips: (unitId: string) => boolean,
): Promise<UnitsToKeep | undefined> {
  let file: Deno.FsFile;
  try {
    // Looked at before it is opened: opening a FIFO waits for a writer.
    if (!(await Deno.stat(path)).isFile) return undefined;
    file = await Deno.open(path, { read: true });
  } catch (error) {
    // No units yet: the resume starts the file.
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw unreadable(path, error);
  }
  try {
    const seen = new Set<string>();
    const left = new Set<number>();
    let dropped = 0;
    let size = 0;
    let line = 0;
    // Where the first line dropped starts, while no line kept follows one.
    let cut: number | undefined;
    let suffix = true;
    for await (const { bytes, torn } of linesOf(file, Infinity)) {
      line++;
      const start = size;
      size += bytes.length;
      // A torn last line: the unit it began is run again.
      const id = torn ? undefined : unitIdOf(bytes, path, line);
      if (id !== undefined && !seen.has(id) && skips(id)) {
        seen.add(id);
        if (cut !== undefined) suffix = false;
        continue;
      }
      if (id !== undefined || torn) dropped++;
      left.add(line);
      cut ??= start;
    }
    return {
      path,
      kept: seen.size,
      dropped,
      left,
      size,
      ...(suffix && cut !== undefined ? { cut } : {}),
    };
  } catch (error) {
    throw unreadable(path, error);
  } finally {
    file.close();
  }
}

/**
 * A units file the system would not let the resume read or rewrite, as an
 * input error naming it (a full disk stays an output error, exit 3); a bug,
 * or an error already named, is thrown on as it is.
 */
function unreadable(path: string, error: unknown, write = false): unknown {
  if (exitCodeOf(error) !== undefined || !isReadError(error)) return error;
  return outputErrorOf(error, `--units ${JSON.stringify(path)}`) ??
    new InputError(
      `Cannot resume into --units ${JSON.stringify(path)}: ${
        write ? writeErrorText(error, path) : osErrorText(error)
      }`,
      { cause: error },
    );
}

/**
 * Makes the units file what {@linkcode readUnitsToKeep} found it should be.
 * When every line dropped comes after every line kept (a run stopped with
 * its last units unscored: the usual case), the file is cut there, in
 * place, as a torn `--out` line is. Otherwise the lines kept are written to
 * a new file beside it, renamed over it (`replaceFile`, as `--out` is when a
 * resume drops the Scores a spent budget blocked), so a resume killed or
 * stopped by a full disk meanwhile leaves the file as it was, every unit in
 * it kept. A file with nothing to drop is left as it is.
 *
 * @param units What one read of the file found.
 * @returns Whether the file was replaced by a new one: a handle opened on
 *   it before holds the old file, and is opened again to append.
 * @throws {InputError} When the file changed since it was read, or cannot
 * be opened to rewrite.
 */
export async function keepSkippedUnits(units: UnitsToKeep): Promise<boolean> {
  if (units.left.size === 0) return false;
  // Writable to cut it through this handle: the file whose size is checked,
  // reached through a symlink too (`Deno.truncate` refuses a symlink).
  let file: Deno.FsFile;
  try {
    file = await Deno.open(units.path, {
      read: true,
      write: units.cut !== undefined,
    });
  } catch (error) {
    throw unreadable(units.path, error, true);
  }
  try {
    if ((await file.stat()).size !== units.size) {
      throw new InputError(
        `--units ${
          JSON.stringify(units.path)
        } changed while the resume read it; resume again`,
      );
    }
    if (units.cut !== undefined) {
      // One call: a kill leaves the file whole or cut, each unit kept.
      await file.truncate(units.cut);
      return false;
    }
    // Each line as it was, a byte-order mark too.
    const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
    await replaceFile(units.path, async (write) => {
      let at = 0;
      for await (const { bytes } of linesOf(file, units.size)) {
        if (!units.left.has(++at)) await write(decoder.decode(bytes));
      }
    }, { name: "--units" });
    return true;
  } catch (error) {
    throw unreadable(units.path, error, true);
  } finally {
    file.close();
  }
}

/**
 * The lines in the first `end` bytes of a file, each with its newline; a
 * last line without one comes last, `torn`.
 */
async function* linesOf(
  file: Deno.FsFile,
  end: number,
): AsyncGenerator<{ bytes: Uint8Array; torn: boolean }> {
  await file.seek(0, Deno.SeekMode.Start);
  const buffer = new Uint8Array(64 * 1024);
  let pieces: Uint8Array[] = [];
  const joined = () =>
    concat(pieces, pieces.reduce((sum, p) => sum + p.length, 0));
  for (let offset = 0; offset < end;) {
    const n = await file.read(
      buffer.subarray(0, Math.min(buffer.length, end - offset)),
    );
    if (n === null) break;
    offset += n;
    const chunk = buffer.subarray(0, n);
    let from = 0;
    for (
      let nl = chunk.indexOf(NEWLINE);
      nl !== -1;
      nl = chunk.indexOf(NEWLINE, from)
    ) {
      pieces.push(chunk.slice(from, nl + 1));
      yield { bytes: joined(), torn: false };
      pieces = [];
      from = nl + 1;
    }
    if (from < n) pieces.push(chunk.slice(from));
  }
  if (pieces.length > 0) yield { bytes: joined(), torn: true };
}

const strict = new TextDecoder("utf-8", { fatal: true });

/**
 * The unit id of a whole line of a units file; `undefined` for a blank line.
 * Anything else that is not a unit record is refused.
 */
function unitIdOf(
  bytes: Uint8Array,
  path: string,
  line: number,
): string | undefined {
  let reason: string;
  try {
    const text = strict.decode(bytes).replace(/\r?\n$/, "");
    if (text.trim() === "") return undefined;
    const value: unknown = JSON.parse(text);
    if (
      typeof value === "object" && value !== null && !Array.isArray(value) &&
      typeof (value as { unit_id?: unknown }).unit_id === "string"
    ) return (value as { unit_id: string }).unit_id;
    reason = 'it has no "unit_id"';
  } catch (error) {
    if (!(error instanceof SyntaxError || error instanceof TypeError)) {
      throw error;
    }
    reason = error.message;
  }
  throw new InputError(
    `Cannot resume into --units ${JSON.stringify(path)}: line ${line} ` +
      `is not a unit record (${reason}). Give the units file the run ` +
      "started with, or a new one",
  );
}
