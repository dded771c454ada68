/** Processes and temporary folders in tests: waiting, checking, cleaning up; scoring units through scorers that run commands. */

import assert from "node:assert/strict";
import type { Score } from "../src/score/mod.ts";
import type { Scorer } from "../src/scorers/scorer.ts";
import { scoreUnits } from "../src/scorers/score_units.ts";
import type { Unit } from "../src/dataset/unit.ts";

/** Resolves after `ms` milliseconds. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Holds this thread, without a turn of its event loop, until `ready()`: as
 * a process busy with other work is held. No timer, stream or child of this
 * process is served meanwhile, so a timeout of a command already spawned
 * cannot be acted on before `ready()`. Bounded, so that a test that waits
 * for what never comes fails rather than hangs.
 */
export function holdUntil(ready: () => boolean, what: string): void {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  for (let i = 0; !ready(); i++) {
    if (i > 24_000) throw new Error(`Held for two minutes waiting for ${what}`);
    Atomics.wait(cell, 0, 0, 5);
  }
}

/** Runs `fn` in a fresh temporary folder, removed afterwards. */
export async function withTempDir(
  fn: (dir: string) => Promise<void>,
  prefix = "evalpipe_test_",
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * Whether reading `/proc/PID/...` failed because the process is gone: no
 * entry (reaped), or ESRCH, a plain Error in Deno whose message reads
 * `No such process (os error 3)` with the path after it in newer releases
 * (reaped between opening the file and reading it).
 */
export function isGone(error: unknown): boolean {
  return error instanceof Deno.errors.NotFound ||
    (error instanceof Error && error.message.includes("(os error 3)"));
}

/** Whether a process still runs: a zombie has died, only its parent can reap it. */
export function running(pid: number): boolean {
  let stat: string;
  try {
    stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  } catch (error) {
    if (isGone(error)) return false;
    throw error;
  }
  const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  return state !== "Z" && state !== "X";
}

/** Asserts that none of `pids` runs, after a bounded wait for SIGKILL to land. */
export async function assertNoneRunning(pids: number[]): Promise<void> {
  for (let i = 0; i < 250 && pids.some(running); i++) await delay(20);
  const left = pids.filter(running);
  for (const pid of left) {
    // Clean up after a failure: these are the test's own processes.
    Deno.kill(pid, "SIGKILL");
  }
  assert.deepEqual(left, [], "processes of the scorer left running");
}

/** Rejects when `promise` takes longer than `ms`: a bound on the test, not a timing claim. */
export async function within<T>(
  promise: Promise<T>,
  ms: number,
  what: string,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${what} still running after ${ms} ms`)),
          ms,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Writes all of `bytes` to a child's stdin and closes it; a child that stopped reading is fine. */
export async function writeAndClose(
  stdin: WritableStream<Uint8Array>,
  bytes: Uint8Array,
): Promise<void> {
  const writer = stdin.getWriter();
  try {
    await writer.write(bytes);
    await writer.close();
  } catch (error) {
    // The CLI may stop reading stdin early; the test judges it by its exit
    // status and output.
    if (!(error instanceof Deno.errors.BrokenPipe)) throw error;
  }
}

/**
 * Kills, bounded, every process `find` reports until it reports none (what a
 * SIGKILLed evalpipe orphaned); returns how many it killed.
 */
export async function reapAll(
  find: () => Promise<number[]>,
  what: string,
): Promise<number> {
  let killed = 0;
  for (let round = 0; round < 500; round++) {
    const pids = await find();
    if (pids.length === 0) return killed;
    for (const pid of pids) {
      try {
        Deno.kill(pid, "SIGKILL");
        killed++;
      } catch (error) {
        // Already gone.
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
    }
    await delay(10);
  }
  throw new Error(`Processes of ${what} survive: ${await find()}`);
}

/** Scores units through the scoring stage, as a run does. */
export async function scoreAll(
  scorers: readonly Scorer[],
  units: readonly Unit[],
  concurrency = 4,
): Promise<Score[]> {
  return await Array.fromAsync(
    ReadableStream.from(units).pipeThrough(
      scoreUnits(scorers, { concurrency }),
    ),
  );
}
