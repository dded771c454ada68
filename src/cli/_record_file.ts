// Whether a path names a RunRecord file that can be read twice, a line at a
// time: what `export` and `report` stream instead of reading it whole.

import { cannotOpen } from "../base/errors.ts";
import { isRunRecord } from "../record/_sniff.ts";

/**
 * Whether `path` is a regular file that opens as a RunRecord; `false` for a
 * pipe, stdin (`-`), or a file that cannot be read (the whole-file readers
 * then say why).
 */
export async function isRunRecordFile(path: string): Promise<boolean> {
  if (path === "-") return false;
  try {
    if (!(await Deno.stat(path)).isFile) return false;
    using file = await Deno.open(path);
    const bytes = new Uint8Array(256);
    let n = 0;
    while (n < bytes.length) {
      const read = await file.read(bytes.subarray(n));
      if (read === null) break;
      n += read;
    }
    return isRunRecord(new TextDecoder().decode(bytes.subarray(0, n)));
  } catch (error) {
    // Not there, not readable: the whole-file readers name the problem.
    if (cannotOpen(error)) return false;
    throw error;
  }
}
