/**
 * The units an earlier run's record holds, for a resumed run's record: it
 * keeps them beside the Scores already in the Scores file.
 *
 * @module
 */

import type { Unit } from "../dataset/unit.ts";
import { InputError, isReadError, osErrorText } from "../base/errors.ts";

/**
 * Options of {@linkcode previousUnits}.
 *
 * @example The name `run --resume --record` gives its record
 * ```ts
 * import type { PreviousUnitsOptions } from "./mod.ts";
 * const options: PreviousUnitsOptions = { name: '--record "run.json"' };
 * if (options.name !== '--record "run.json"') throw new Error("unexpected");
 * ```
 */
export interface PreviousUnitsOptions {
  /**
   * What an error calls the record, after "Cannot resume into".
   * @default {`the record "PATH"`, the path as given}
   */
  name?: string | undefined;
}

/**
 * Reads the record at `path`, if there is one, and returns its units by
 * unit id; a file that is missing, or that is not a RunRecord, gives none.
 * A resumed run's record gets its earlier units' inputs and outputs from
 * these: give them to `runSuite` as `previousUnits` beside
 * `resume`, as `run --resume --record` does, before the record is written
 * over.
 *
 * @param path The earlier run's record.
 * @param options What its errors call it.
 * @returns Its units by unit id, or `undefined` when there is no record.
 * @throws {InputError} When the record cannot be read, or is damaged.
 *
 * @example No record yet: nothing to keep
 * ```ts
 * import { previousUnits } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * const units = await previousUnits(`${dir}/run.json`);
 * await Deno.remove(dir, { recursive: true });
 * if (units !== undefined) throw new Error("unexpected");
 * ```
 *
 * @example A damaged record is named as it was given
 * ```ts
 * import { previousUnits } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/run.json`, '{"evalpipe_run_record": 1,\n"units": [\n{"x"\n}\n');
 * const error = await previousUnits(`${dir}/run.json`).catch((e) => e);
 * await Deno.remove(dir, { recursive: true });
 * if (!error.message.startsWith(`Cannot resume into the record "${dir}/run.json"`)) throw error;
 * ```
 */
export async function previousUnits(
  path: string,
  options: PreviousUnitsOptions = {},
): Promise<Map<string, Unit> | undefined> {
  const name = options.name ?? `the record ${JSON.stringify(path)}`;
  const { isRunRecord, readRunRecord, RunRecordError } = await import(
    "../record/run_record.ts"
  );
  let head: string;
  try {
    // Looked at before it is opened: opening a FIFO waits for a writer.
    if (!(await Deno.stat(path)).isFile) return undefined;
    const file = await Deno.open(path);
    try {
      const bytes = new Uint8Array(256);
      const n = await file.read(bytes) ?? 0;
      head = new TextDecoder().decode(bytes.subarray(0, n));
    } finally {
      file.close();
    }
  } catch (error) {
    // No earlier record (or not a file): the resumed record starts afresh.
    if (error instanceof Deno.errors.NotFound) return undefined;
    // One the system will not let us read: named, before anything is
    // written (a bug is thrown on).
    if (!isReadError(error)) throw error;
    throw new InputError(
      `Cannot resume into ${name}: ${osErrorText(error)}`,
      { cause: error },
    );
  }
  if (!isRunRecord(head)) return undefined;
  try {
    const record = await readRunRecord(path);
    return new Map(record.units.map((u) => [u.unit_id, u]));
  } catch (error) {
    // A damaged record is left as it is: replaced, its units' inputs and
    // outputs would be lost (their Scores are in --out). A crash tears only
    // its last line, which the reader takes as the record's end.
    if (!(error instanceof RunRecordError)) throw error;
    // The reader's message names the record too: say it once, where this
    // message does (`"r.json" line 3: ...`, `"r.json": units[1].scores[0]: ...`).
    const named = `Invalid run record ${JSON.stringify(path)}`;
    const what = error.message.startsWith(named)
      ? error.message.slice(named.length)
      : `: ${error.message}`;
    throw new InputError(
      `Cannot resume into ${name}${what}; its earlier units' inputs and outputs would be lost: mend it, or move the file away to resume into a new record without them`,
      { cause: error },
    );
  }
}
