/**
 * Network calls in flight at once, bounded by the process's open-file limit
 * (`ulimit -n`): each call holds a socket, and a run past the limit fails
 * its calls with EMFILE instead of waiting for a free one.
 *
 * @module
 */

import { isOsError } from "../base/errors.ts";

/**
 * The soft limit on open files (RLIMIT_NOFILE), read from
 * `/proc/self/limits` or else `sh -c "ulimit -n"`; `undefined` when neither
 * can be read or the limit is unlimited.
 *
 * @returns The limit.
 */
export function openFileLimit(): number | undefined {
  try {
    const text = Deno.readTextFileSync("/proc/self/limits");
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(text);
    if (line !== null) {
      return line[1] === "unlimited" ? undefined : Number(line[1]);
    }
  } catch (error) {
    // No /proc (macOS), no permission, or no descriptor left: ask the shell.
    if (!isOsError(error)) throw error;
  }
  try {
    const out = new Deno.Command("sh", {
      args: ["-c", "ulimit -n"],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    const n = Number(new TextDecoder().decode(out.stdout).trim());
    return out.success && Number.isInteger(n) && n > 0 ? n : undefined;
  } catch (error) {
    // No shell, no permission to run one, or no descriptor left for its
    // pipes: no bound is known.
    if (!isOsError(error)) throw error;
    return undefined;
  }
}

/**
 * How many calls may be in flight under an open-file limit: half of it, less
 * a margin for the files, pipes and child processes of the rest of the run.
 *
 * @param limit The open-file limit.
 * @returns The bound, at least 8.
 */
export function callsUnder(limit: number | undefined): number {
  return limit === undefined
    ? Infinity
    : Math.max(8, Math.floor(limit / 2) - 16);
}

/** A counting semaphore of call slots, cheap when a slot is free. */
export class CallSlots {
  /** The most calls in flight. */
  readonly max: number;
  #active = 0;
  #waiting: Array<() => void> = [];
  #onFirstWait: (() => void) | undefined;

  /**
   * Creates the slots.
   *
   * @param max The most calls in flight.
   * @param onFirstWait Told once, when a call first has to wait.
   */
  constructor(max: number, onFirstWait?: () => void) {
    this.max = max;
    this.#onFirstWait = onFirstWait;
  }

  /**
   * Takes a slot, waiting for one if all are taken.
   *
   * @param signal Aborting stops the wait (it then throws the reason).
   * @returns When the slot is taken: `undefined` at once if one was free.
   */
  acquire(signal?: AbortSignal): Promise<void> | undefined {
    if (this.#active < this.max) {
      this.#active++;
      return undefined;
    }
    const warn = this.#onFirstWait;
    this.#onFirstWait = undefined;
    warn?.();
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const take = () => {
        signal?.removeEventListener("abort", onAbort);
        this.#active++;
        resolve();
      };
      const onAbort = () => {
        this.#waiting.splice(this.#waiting.indexOf(take), 1);
        reject(signal!.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiting.push(take);
    });
  }

  /** Gives a slot back, to the longest waiting call if any. */
  release(): void {
    this.#active--;
    this.#waiting.shift()?.();
  }
}

let shared: CallSlots | undefined;
let sharedLimit: number | undefined;

/**
 * The open-file limit as read when the shared slots were made (read again
 * only before then): a process out of descriptors cannot read it.
 *
 * @returns The limit, when known.
 */
export function knownFileLimit(): number | undefined {
  return shared !== undefined ? sharedLimit : openFileLimit();
}

/**
 * The slots every network call of this process shares, sized by the
 * open-file limit when first asked for; a warning goes to stderr the first
 * time a call waits for one.
 *
 * @returns The slots.
 */
export function networkSlots(): CallSlots {
  if (shared === undefined) {
    const limit = sharedLimit = openFileLimit();
    const max = callsUnder(limit);
    shared = new CallSlots(max, () =>
      console.error(
        `evalpipe: warning: at most ${max} network calls at once under the open-file limit (ulimit -n ${limit}); the others wait`,
      ));
  }
  return shared;
}
