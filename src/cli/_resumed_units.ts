// `run --resume --units F`: the earlier run's units file, made ready for the
// resume to append to. It keeps the units the resume skips (their Scores are
// all in --out), once each; the resume runs the others again and writes them
// anew, so the file ends as an uninterrupted run's would.

import { InputError } from "../base/errors.ts";
import { concat } from "../process/_concat.ts";
import { replaceFile } from "../io/replace_file.ts";

const NEWLINE = 10;

/** What {@linkcode keepSkippedUnits} did to the file. */
export interface KeptUnits {
  /** Units kept: those the resume skips. */
  kept: number;
  /** Lines dropped: units run again, a unit's second line, a torn last line. */
  dropped: number;
  /**
   * Whether the file was replaced by a new one: a handle opened on it
   * before holds the old file, and is opened again to append.
   */
  replaced: boolean;
}

/**
 * Keeps, in the units file at `path`, the line of each unit that `skips`
 * tells, once, and drops every other line: the lines kept are written to a
 * new file beside it, renamed over it (`replaceFile`, as `--out` is when a
 * resume drops the Scores a spent budget blocked), so a resume killed or
 * stopped by a full disk meanwhile leaves the file as it was, every unit
 * in it kept. A file with nothing to drop is left as it is; so is one that
 * does not exist yet, or is not a regular file (a pipe), for the resume to
 * append to.
 *
 * @param path The units file (`--units`).
 * @param skips Whether the resume skips a unit, by unit id.
 * @param change `false` to check the file and count only, changing nothing.
 * @returns What was kept and dropped.
 * @throws {InputError} When a whole line is not a unit record: the file is
 * then not a units file, and is left as it was.
 */
export async function keepSkippedUnits(
  path: string,
  skips: (unitId: string) => boolean,
  change = true,
): Promise<KeptUnits> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      return { kept: 0, dropped: 0, replaced: false };
    }
    throw error;
  }
  try {
    if (!(await file.stat()).isFile) {
      return { kept: 0, dropped: 0, replaced: false };
    }
    const seen = new Set<string>();
    // The lines (1-based) the new file leaves out, and the bytes read: the
    // rewrite reads no further, should anything append meanwhile.
    const left = new Set<number>();
    let dropped = 0;
    let size = 0;
    let line = 0;
    for await (const { bytes, torn } of linesOf(file, Infinity)) {
      line++;
      size += bytes.length;
      if (torn) {
        // A torn last line: the unit it began is run again.
        dropped++;
        left.add(line);
        continue;
      }
      const id = unitIdOf(bytes, path, line);
      if (id !== undefined && !seen.has(id) && skips(id)) {
        seen.add(id);
        continue;
      }
      if (id !== undefined) dropped++;
      left.add(line);
    }
    if (left.size === 0 || !change) {
      return { kept: seen.size, dropped, replaced: false };
    }
    // Each line as it was, a byte-order mark too.
    const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
    await replaceFile(path, async (write) => {
      let at = 0;
      for await (const { bytes } of linesOf(file, size)) {
        if (!left.has(++at)) await write(decoder.decode(bytes));
      }
    }, { name: "--units" });
    return { kept: seen.size, dropped, replaced: true };
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
