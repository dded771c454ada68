// `run --resume --units F`: the earlier run's units file, made ready for the
// resume to append to. It keeps the units the resume skips (their Scores are
// all in --out), once each; the resume runs the others again and writes them
// anew, so the file ends as an uninterrupted run's would.

import { InputError } from "../base/errors.ts";
import { concat } from "../process/_concat.ts";

const NEWLINE = 10;

/** What {@linkcode keepSkippedUnits} did to the file. */
export interface KeptUnits {
  /** Units kept: those the resume skips. */
  kept: number;
  /** Lines dropped: units run again, a unit's second line, a torn last line. */
  dropped: number;
}

/**
 * Keeps, in the units file at `path`, the line of each unit that `skips`
 * tells, once, and drops every other line, in place: the file is cut where
 * the first dropped line starts and the lines kept after it are written
 * back (a few: the units that finished beside those an interruption
 * dropped). A file that does not exist yet, or is not a regular file (a
 * pipe), is left for the resume to append to as it is.
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
    file = await Deno.open(path, { read: true, write: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { kept: 0, dropped: 0 };
    throw error;
  }
  try {
    if (!(await file.stat()).isFile) return { kept: 0, dropped: 0 };
    const seen = new Set<string>();
    // Where the first dropped line starts, and the lines kept after it.
    let cut: number | undefined;
    const after: Uint8Array[] = [];
    let dropped = 0;
    let line = 0;
    // The line being read: its pieces and where it starts in the file.
    let pieces: Uint8Array[] = [];
    let start = 0;
    let offset = 0;
    const take = (bytes: Uint8Array) => {
      line++;
      const id = unitIdOf(bytes, path, line);
      const keep = id !== undefined && !seen.has(id) && skips(id);
      if (keep) {
        seen.add(id);
        if (cut !== undefined) after.push(bytes);
      } else {
        if (id !== undefined) dropped++;
        cut ??= start;
      }
    };
    const buffer = new Uint8Array(64 * 1024);
    for (
      let n = await file.read(buffer);
      n !== null;
      n = await file.read(buffer)
    ) {
      const chunk = buffer.subarray(0, n);
      let from = 0;
      for (
        let nl = chunk.indexOf(NEWLINE);
        nl !== -1;
        nl = chunk.indexOf(NEWLINE, from)
      ) {
        pieces.push(chunk.slice(from, nl + 1));
        take(concat(pieces, pieces.reduce((sum, p) => sum + p.length, 0)));
        pieces = [];
        start = offset + nl + 1;
        from = nl + 1;
      }
      if (from < n) pieces.push(chunk.slice(from));
      offset += n;
    }
    if (pieces.length > 0) {
      // A torn last line: the unit it began is run again.
      dropped++;
      cut ??= start;
    }
    if (cut !== undefined && change) {
      await file.truncate(cut);
      await file.seek(cut, Deno.SeekMode.Start);
      for (const bytes of after) {
        for (let done = 0; done < bytes.length;) {
          done += await file.write(bytes.subarray(done));
        }
      }
    }
    return { kept: seen.size, dropped };
  } finally {
    file.close();
  }
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
