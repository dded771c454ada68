// A run's id, apart from the record's module: every run makes one, and only
// a run with --record loads the writer.

/**
 * A fresh run id: the start time and a random suffix.
 *
 * @param started The start time.
 * @returns E.g. `20261130T013844Z-3f2a9c`.
 */
export function newRunId(started: Date): string {
  const stamp = started.toISOString().replace(/[-:]/g, "").replace(
    /\.\d+Z$/,
    "Z",
  );
  const random = crypto.getRandomValues(new Uint8Array(3));
  return `${stamp}-${
    [...random].map((b) => b.toString(16).padStart(2, "0")).join("")
  }`;
}
