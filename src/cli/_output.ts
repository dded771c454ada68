// What the commands write for people (stderr) and the small helpers they
// share; stdout carries data only.

import { escapeControl } from "../base/terminal.ts";

const encoder = new TextEncoder();

/** Writes a message for people on stderr; text from cases cannot drive the terminal. */
export function say(message: string): void {
  const safe = message.split("\n").map(escapeControl).join("\n");
  Deno.stderr.writeSync(encoder.encode(`${safe}\n`));
}

/** Whether `error` is a reader that went away (`| head`): the end, not a failure. */
export function isBrokenPipe(error: unknown): boolean {
  return error instanceof Deno.errors.BrokenPipe;
}

/** Writes `text` on stdout; a reader that went away ends it quietly. */
export async function writeStdout(text: string): Promise<void> {
  const [{ TextWriter }, { stdoutWriter }] = await Promise.all([
    import("../io/text_writer.ts"),
    import("../io/stdout.ts"),
  ]);
  try {
    const w = new TextWriter(stdoutWriter());
    w.write(text);
    await w.flush();
  } catch (error) {
    if (!isBrokenPipe(error)) throw error;
  }
}

/** A count of Scores on stderr, redrawn at most every 100 ms, on a terminal only. */
export function progress(): { tick(): void; done(): void } {
  if (!Deno.stderr.isTerminal()) return { tick() {}, done() {} };
  let count = 0;
  let last = 0;
  return {
    tick() {
      count++;
      const now = performance.now();
      if (now - last < 100) return;
      last = now;
      Deno.stderr.writeSync(encoder.encode(`\r\x1b[K${count} scores…`));
    },
    done() {
      Deno.stderr.writeSync(encoder.encode("\r\x1b[K"));
    },
  };
}
