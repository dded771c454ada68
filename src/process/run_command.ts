/**
 * Running one shell command per case, safely: in its own process group, its
 * stdin written while stdout and stderr are read, with a timeout and output
 * caps, and nothing of it left running afterwards.
 *
 * @module
 */

import { runOnce } from "./spawner.ts";
import type { RunCommandOptions, RunResult } from "./types.ts";
import { clipMiddle } from "../base/terminal.ts";
import type { Diagnostic } from "../score/types.ts";

export type { RunCommandOptions, RunResult };

/**
 * The cap on child processes running at once, across every target and
 * scorer of this process: children are a process-wide resource.
 */
class ProcessSlots {
  #limit: number;
  #running = 0;
  #waiting: Array<() => void> = [];

  constructor(limit: number) {
    this.#limit = limit;
  }

  set limit(limit: number) {
    this.#limit = limit;
    this.#wake();
  }

  get limit(): number {
    return this.#limit;
  }

  /** Takes a slot if one is free now, without a promise. */
  tryAcquire(signal?: AbortSignal): boolean {
    if (this.#running >= this.#limit || signal?.aborted) return false;
    this.#running++;
    return true;
  }

  async acquire(signal?: AbortSignal): Promise<boolean> {
    while (this.#running >= this.#limit) {
      if (signal?.aborted) return false;
      await new Promise<void>((resolve) => {
        const done = () => {
          signal?.removeEventListener("abort", done);
          resolve();
        };
        this.#waiting.push(done);
        signal?.addEventListener("abort", done, { once: true });
      });
    }
    if (signal?.aborted) return false;
    this.#running++;
    return true;
  }

  release(): void {
    this.#running--;
    this.#wake();
  }

  /** Wakes every waiter; each checks again whether a slot is free. */
  #wake(): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const wake of waiting) wake();
  }
}

const slots = new ProcessSlots(64);

/**
 * Sets the most child processes that may run at once (default 64).
 *
 * @param limit At least 1.
 * @throws {RangeError} When `limit` is not a whole number of at least 1.
 *
 * @example
 * ```ts
 * import { setMaxProcesses } from "./run_command.ts";
 * setMaxProcesses(8);
 * setMaxProcesses(64);
 * ```
 */
export function setMaxProcesses(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new RangeError(
      `The process limit must be a whole number of at least 1, not ${limit}`,
    );
  }
  slots.limit = limit;
}

/**
 * Runs `sh -c cmd` in a new session and process group (through the backend
 * `spawnBackend` names), writing stdin while reading stdout and stderr. On
 * exit, timeout, overflow or abort, the whole group is killed, so no
 * descendant outlives the call. At most {@linkcode setMaxProcesses} commands
 * run at once; the others wait for their turn.
 *
 * @param cmd The shell command.
 * @param options Input, limits and folder.
 * @returns How it ended, with its output.
 *
 * @example
 * ```ts
 * import { runCommand } from "./run_command.ts";
 * const result = await runCommand("tr a-z A-Z", {
 *   stdin: new TextEncoder().encode("hello"),
 *   timeoutMs: 10_000,
 *   maxStdoutBytes: 1024,
 *   maxStderrBytes: 1024,
 * });
 * if (result.kind !== "exited" || new TextDecoder().decode(result.stdout) !== "HELLO") {
 *   throw new Error(JSON.stringify(result));
 * }
 * ```
 */
export function runCommand(
  cmd: string,
  options: RunCommandOptions,
): Promise<RunResult> {
  // A free slot is taken at once: no promise before the spawn.
  if (slots.tryAcquire(options.signal)) return runInSlot(cmd, options);
  return slots.acquire(options.signal).then((acquired) =>
    acquired ? runInSlot(cmd, options) : { kind: "aborted" }
  );
}

/** Runs in the slot taken for it, and gives the slot back once it is done. */
function runInSlot(
  cmd: string,
  options: RunCommandOptions,
): Promise<RunResult> {
  let running: Promise<RunResult>;
  try {
    running = runOnce(cmd, options);
  } catch (error) {
    // Rejected, not thrown, as from the async function this was.
    slots.release();
    return Promise.reject(error);
  }
  return running.then(released, releasedThrowing);
}

function released(result: RunResult): RunResult {
  slots.release();
  return result;
}

function releasedThrowing(error: unknown): never {
  slots.release();
  throw error;
}

const decoder = new TextDecoder();
const strict = new TextDecoder("utf-8", { fatal: true });

/**
 * Whether `text`, what a command printed read as UTF-8 (`TextDecoder`'s
 * way: each byte that is not UTF-8 becomes U+FFFD), stands for bytes that
 * are not UTF-8, as a program writing Latin-1 prints: only a text holding
 * U+FFFD is checked, since a program may print U+FFFD itself.
 *
 * @param text The text read.
 * @param bytes The bytes it was read from.
 * @returns `true` when some bytes were not UTF-8.
 *
 * @example
 * ```ts
 * import { notUtf8 } from "./run_command.ts";
 * const latin1 = new Uint8Array([0x63, 0x61, 0x66, 0xe9]); // "café"
 * if (!notUtf8(new TextDecoder().decode(latin1), latin1)) throw new Error();
 * const utf8 = new TextEncoder().encode("caf\uFFFD");
 * if (notUtf8(new TextDecoder().decode(utf8), utf8)) throw new Error();
 * ```
 */
export function notUtf8(text: string, bytes: Uint8Array): boolean {
  if (!text.includes("\uFFFD")) return false;
  try {
    strict.decode(bytes);
    return false;
  } catch (error) {
    // The fatal decoder's one way to say the bytes are not UTF-8.
    if (!(error instanceof TypeError)) throw error;
    return true;
  }
}

/**
 * The warning for a scorer whose stdout was not UTF-8, each bad byte read as
 * U+FFFD: its verdict stands, and the Score says so
 * (`scorer.invalid_encoding`). A target's output is refused instead.
 *
 * @param cmd The command.
 * @returns The diagnostic.
 *
 * @example
 * ```ts
 * import { notUtf8Warning } from "./run_command.ts";
 * if (notUtf8Warning("./score.py").code !== "scorer.invalid_encoding") throw new Error();
 * ```
 */
export function notUtf8Warning(cmd: string): Diagnostic {
  return {
    code: "scorer.invalid_encoding",
    severity: "warning",
    message: `scorer ${
      JSON.stringify(cmd)
    } printed bytes that are not UTF-8 on stdout, each read as U+FFFD (it should write UTF-8)`,
  };
}

/**
 * What raises an output cap, said after its message.
 *
 * @param setting The option or key that raises it: the one its user set
 *   (`maxStdoutBytes` in a script, `max_output_bytes` in a suite).
 * @returns The note, with its leading space.
 *
 * @example
 * ```ts
 * import { capNote } from "./run_command.ts";
 * if (capNote("maxLineBytes") !== " (maxLineBytes raises the cap)") throw new Error();
 * ```
 */
export function capNote(setting: string): string {
  return ` (${setting} raises the cap)`;
}

/**
 * Options of {@linkcode failureMessage}.
 *
 * @example Name the key a suite sets
 * ```ts
 * import { failureMessage, type FailureMessageOptions } from "./run_command.ts";
 * const options: FailureMessageOptions = { capSetting: "max_output_bytes" };
 * const over = { kind: "overflow", stream: "stderr", limit: 10, ms: 5 } as const;
 * const message = failureMessage("scorer", "./s.sh", over, 60, options);
 * if (!message?.endsWith("(max_output_bytes raises the cap)")) throw new Error(message);
 * ```
 */
export interface FailureMessageOptions {
  /**
   * What raises the cap a run went over, as its message names it: the
   * option or config key its user set (`max_output_bytes` in a suite).
   * @default {the option of `subprocessScorer` or `subprocessTarget` for that stream: "maxStdoutBytes" or "maxOutputBytes", "maxStderrBytes"}
   */
  capSetting?: string | undefined;
}

/**
 * The message for a run that did not end in exit status 0, in the words of
 * the subprocess scorer protocol v0 (`role` is `scorer` or `target`).
 *
 * @param role What the command is.
 * @param cmd The command.
 * @param result How it ended.
 * @param timeoutS The timeout it had, in seconds.
 * @param options What raises an output cap (see {@linkcode FailureMessageOptions}).
 * @returns The message, or `undefined` when it exited 0.
 *
 * @example
 * ```ts
 * import { failureMessage } from "./run_command.ts";
 * const message = failureMessage("scorer", "./s.sh", { kind: "timeout", ms: 5000 }, 5);
 * if (message !== 'scorer "./s.sh" timed out after 5 s (its process group was killed)') {
 *   throw new Error(message);
 * }
 * ```
 *
 * @example A cap a suite's key raises
 * ```ts
 * import { failureMessage } from "./run_command.ts";
 * const over = { kind: "overflow", stream: "stdout", limit: 10, ms: 5 } as const;
 * const message = failureMessage("target", "./t.sh", over, 5, { capSetting: "max_output_bytes" });
 * if (!message?.endsWith("bytes on stdout (max_output_bytes raises the cap)")) throw new Error(message);
 * ```
 */
export function failureMessage(
  role: "scorer" | "target",
  cmd: string,
  result: RunResult,
  timeoutS: number,
  options: FailureMessageOptions = {},
): string | undefined {
  const capSetting = options.capSetting;
  const label = `${role} ${JSON.stringify(cmd)}`;
  switch (result.kind) {
    case "spawn_failed":
      return `failed to spawn subprocess ${role}: ${cmd}`;
    case "timeout":
      return `${label} timed out after ${timeoutS} s (its process group was killed)`;
    case "overflow":
      return `${label} printed more than ${result.limit} bytes on ${result.stream}${
        capNote(
          capSetting ??
            (result.stream === "stderr"
              ? "maxStderrBytes"
              : role === "scorer"
              ? "maxStdoutBytes"
              : "maxOutputBytes"),
        )
      }`;
    case "aborted":
      return `${label} was interrupted`;
  }
  if (result.code === 0 && result.signal === null) return undefined;
  const how = result.signal !== null
    ? `was killed by ${result.signal}`
    : `exited with status ${result.code}`;
  const stderr = decoder.decode(result.stderr).trim();
  // Its start and its end: a Python scorer's exception comes last, after
  // its traceback and whatever warnings it printed first.
  return `${label} ${how}${
    stderr === "" ? "" : `: ${clipMiddle(stderr, 500, 1500)}`
  }`;
}
