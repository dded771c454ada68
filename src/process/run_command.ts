/**
 * Running one shell command per case, safely: in its own process group, its
 * stdin written while stdout and stderr are read, with a timeout and output
 * caps, and nothing of it left running afterwards.
 *
 * @module
 */

import { concat, runSession, sessionSpawnAvailable } from "./_spawn_ffi.ts";
import type { RunCommandOptions, RunResult } from "./types.ts";

export type { RunCommandOptions, RunResult };

/**
 * Kills a process group and, while it has not been reaped, its leader: the
 * leader is killed by pid too, in case it has not yet made itself a group
 * leader. Once reaped, its pid may belong to another process, so only the
 * group (whose id stays reserved while it has members) is killed.
 *
 * @param pid The leader's pid, which is also the group's id.
 * @param leaderReaped Whether the leader has exited and been reaped.
 */
export function killGroup(pid: number, leaderReaped = false): void {
  for (const target of leaderReaped ? [-pid] : [-pid, pid]) {
    try {
      Deno.kill(target, "SIGKILL");
    } catch (error) {
      // ESRCH: the group or the process is already gone, which is the goal.
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
}

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
 */
export function setMaxProcesses(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new RangeError(
      `The process limit must be a whole number of at least 1, not ${limit}`,
    );
  }
  slots.limit = limit;
}

const STOPPED = Symbol("stopped");

/** Reads a stream to its end, or until `limit` bytes are exceeded, or until stopped. */
async function readCapped(
  stream: ReadableStream<Uint8Array>,
  limit: number,
  stop: AbortSignal,
): Promise<Uint8Array | "overflow" | typeof STOPPED> {
  const reader = stream.getReader();
  const onStop = () => {
    reader.cancel().catch(
      () => {/* cancelling a finished reader has nothing to undo */},
    );
  };
  stop.addEventListener("abort", onStop, { once: true });
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > limit) {
        await reader.cancel();
        return "overflow";
      }
      chunks.push(value);
    }
  } finally {
    stop.removeEventListener("abort", onStop);
  }
  if (stop.aborted) return STOPPED;
  return concat(chunks, total);
}

/** Writes all of `bytes` to the child's stdin and closes it; a closed pipe is not an error. */
async function writeStdin(
  stdin: WritableStream<Uint8Array>,
  bytes: Uint8Array,
): Promise<void> {
  const writer = stdin.getWriter();
  try {
    if (bytes.length > 0) await writer.write(bytes);
    await writer.close();
  } catch (error) {
    // The child exited, or was killed, without reading all of its stdin. The
    // protocol judges it by its exit status and output, so the pipe is done.
    if (!(error instanceof Deno.errors.BrokenPipe)) throw error;
    await writer.abort().catch(
      () => {/* already closed by the failed write */},
    );
  }
}

let forceSetsid = false;

/**
 * How {@linkcode runCommand} starts commands in this process: `posix_spawn`
 * (glibc's, over FFI, straight into a new session) where it can, else the
 * `setsid` program, one exec more per command.
 *
 * @returns The way in use.
 */
export function spawnPath(): "posix_spawn" | "setsid" {
  return !forceSetsid && sessionSpawnAvailable() ? "posix_spawn" : "setsid";
}

/**
 * For tests: starts commands through the `setsid` program even where
 * `posix_spawn` could (`true`), or goes back to the choice of
 * {@linkcode spawnPath} (`false`).
 *
 * @param force Whether to use the `setsid` program.
 */
export function forceSetsidPath(force: boolean): void {
  forceSetsid = force;
}

/**
 * Runs `sh -c cmd` in a new session and process group (see
 * {@linkcode spawnPath}), writing stdin while reading stdout and stderr. On
 * exit, timeout, overflow or abort, the whole group is killed, so no
 * descendant outlives the call.
 *
 * @param cmd The shell command.
 * @param options Input, limits and folder.
 * @returns How it ended, with its output.
 */
export async function runCommand(
  cmd: string,
  options: RunCommandOptions,
): Promise<RunResult> {
  if (!(await slots.acquire(options.signal))) return { kind: "aborted" };
  try {
    return await runCommandNow(cmd, options);
  } finally {
    slots.release();
  }
}

function runCommandNow(
  cmd: string,
  options: RunCommandOptions,
): Promise<RunResult> {
  if (options.signal?.aborted) return Promise.resolve({ kind: "aborted" });
  if (spawnPath() === "posix_spawn") return runSession(cmd, options);
  return runThroughSetsid(cmd, options);
}

/** The longest delay a timer takes (ms). */
const MAX_TIMER_MS = 0x7fffffff;

/** {@linkcode runCommand} through the `setsid` program and `Deno.Command`. */
async function runThroughSetsid(
  cmd: string,
  options: RunCommandOptions,
): Promise<RunResult> {
  const started = performance.now();
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command("setsid", {
      args: ["sh", "-c", cmd],
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (error) {
    return {
      kind: "spawn_failed",
      message: error instanceof Error ? error.message : String(error),
    };
  }
  const pid = child.pid;
  const stop = new AbortController();
  let ending: "timeout" | "aborted" | "stdout" | "stderr" | undefined;
  let reaped = false;
  const end = (why: NonNullable<typeof ending>) => {
    ending ??= why;
    killGroup(pid, reaped);
    stop.abort();
  };
  const stopped = new Promise<void>((resolve) =>
    stop.signal.addEventListener("abort", () => resolve(), { once: true })
  );
  // A timer's delay is a 32-bit int (a longer one fires at once): a longer
  // timeout is made of several timers.
  const deadline = started + options.timeoutMs;
  let timer: ReturnType<typeof setTimeout>;
  const arm = () => {
    const left = deadline - performance.now();
    timer = left > MAX_TIMER_MS
      ? setTimeout(arm, MAX_TIMER_MS)
      : setTimeout(() => end("timeout"), left);
  };
  arm();
  const onAbort = () => end("aborted");
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const [status, stdout, stderr] = await Promise.all([
      child.status.then((status) => {
        reaped = true;
        // Whatever the command left behind in its group dies with it; this
        // also closes pipes that a background descendant still holds.
        killGroup(pid, true);
        return status;
      }),
      readCapped(child.stdout, options.maxStdoutBytes, stop.signal).then(
        (r) => {
          if (r === "overflow") end("stdout");
          return r;
        },
      ),
      readCapped(child.stderr, options.maxStderrBytes, stop.signal).then(
        (r) => {
          if (r === "overflow") end("stderr");
          return r;
        },
      ),
      // A process that left the group may hold stdin open without reading
      // it; once the run is stopped, that pending write must not hold the call.
      Promise.race([writeStdin(child.stdin, options.stdin), stopped]),
    ]);
    const ms = performance.now() - started;
    if (ending === "aborted") return { kind: "aborted" };
    if (ending === "timeout") return { kind: "timeout", ms };
    if (ending === "stdout" || ending === "stderr") {
      const limit = ending === "stdout"
        ? options.maxStdoutBytes
        : options.maxStderrBytes;
      return { kind: "overflow", stream: ending, limit, ms };
    }
    return {
      kind: "exited",
      code: status.code,
      signal: status.signal,
      stdout: stdout as Uint8Array,
      stderr: stderr as Uint8Array,
      ms,
    };
  } finally {
    clearTimeout(timer!);
    options.signal?.removeEventListener("abort", onAbort);
  }
}

const decoder = new TextDecoder();

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * The message for a run that did not end in exit status 0, in the words of
 * the subprocess scorer protocol v0 (`role` is `scorer` or `target`).
 *
 * @param role What the command is.
 * @param cmd The command.
 * @param result How it ended.
 * @param timeoutS The timeout it had, in seconds.
 * @returns The message, or `undefined` when it exited 0.
 */
export function failureMessage(
  role: "scorer" | "target",
  cmd: string,
  result: RunResult,
  timeoutS: number,
): string | undefined {
  const label = `${role} ${JSON.stringify(cmd)}`;
  switch (result.kind) {
    case "spawn_failed":
      return `failed to spawn subprocess ${role}: ${cmd}`;
    case "timeout":
      return `${label} timed out after ${timeoutS} s (its process group was killed)`;
    case "overflow":
      return `${label} printed more than ${result.limit} bytes on ${result.stream}`;
    case "aborted":
      return `${label} was interrupted`;
  }
  if (result.code === 0 && result.signal === null) return undefined;
  const how = result.signal !== null
    ? `was killed by ${result.signal}`
    : `exited with status ${result.code}`;
  const stderr = decoder.decode(result.stderr).trim();
  return `${label} ${how}${stderr === "" ? "" : `: ${clip(stderr, 2000)}`}`;
}
