// Stderr for the commands: what `say` and the progress line write through.

import { isOsError } from "../base/errors.ts";

const encoder = new TextEncoder();

// Set once a write to stderr fails: its reader went away (`2>&1 | true`),
// its disk is full (`2>/dev/full`). Stderr is for people; losing it must
// cost neither a Score nor the exit code, so later messages are dropped.
let stderrLost = false;

/**
 * Writes `text` on stderr, whole, and never throws for the system's refusal:
 * after a failed write, it and every later one are dropped.
 */
export function writeStderr(text: string): void {
  if (stderrLost) return;
  let bytes = encoder.encode(text);
  try {
    while (bytes.length > 0) {
      const n = Deno.stderr.writeSync(bytes);
      if (n <= 0) {
        stderrLost = true;
        return;
      }
      bytes = bytes.subarray(n);
    }
  } catch (error) {
    // The system refused it (a reader gone, a full disk, a closed stderr):
    // people lose the message, nothing else. Anything else is a bug.
    if (!isOsError(error)) throw error;
    stderrLost = true;
  }
}
