/**
 * The `setsid` backend of the spawner, the portable one: `Deno.Command`
 * starts the `setsid` program, which makes itself the leader of a new
 * session (so of a new process group) and execs `sh -c CMD`. It needs only
 * the `run` permission, at the cost of one exec more per command.
 *
 * A one-shot run keeps to what it cannot do without: the child's own pipes
 * and status. No AbortController, no timer of its own (one timer serves the
 * deadlines of every run, `_deadlines.ts`), no stream beyond the three the
 * child comes with, read and written through their readers and writer.
 *
 * @module
 */

import { type EarlyEnding, earlyResult } from "./_ending.ts";
import { concat } from "./_concat.ts";
import {
  clearDeadline,
  type Deadline,
  EXIT_DRAIN_MS,
  setDeadline,
} from "./_deadlines.ts";
import type {
  RunCommandOptions,
  RunResult,
  SessionChild,
  StartCommandOptions,
} from "./types.ts";

/**
 * Kills a process group and, while it has not been reaped, its leader: the
 * leader is killed by pid too, in case it has not yet made itself a group
 * leader. Once reaped, its pid may belong to another process, so only the
 * group (whose id stays reserved while it has members) is killed.
 *
 * @param pid The leader's pid, which is also the group's id.
 * @param leaderReaped Whether the leader has exited and been reaped.
 */
export function killGroup(pid: number, leaderReaped: boolean): void {
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
 * Starts `setsid sh -c cmd` with its stdio on pipes.
 *
 * @throws {Error} When it cannot start (no such folder, no `setsid`).
 */
function spawnSetsid(cmd: string, cwd: string | undefined): Deno.ChildProcess {
  return new Deno.Command("setsid", {
    args: ["sh", "-c", cmd],
    ...(cwd !== undefined ? { cwd } : {}),
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/**
 * Starts `sh -c cmd` in a new session through the `setsid` program, for as
 * long as it runs (see `startCommand` in `spawner.ts`).
 *
 * @param cmd The shell command.
 * @param options Its folder.
 * @returns The child.
 * @throws {Error} When it cannot start.
 */
export function startThroughSetsid(
  cmd: string,
  options: StartCommandOptions,
): SessionChild {
  const child = spawnSetsid(cmd, options.cwd);
  const pid = child.pid;
  let reaped = false;
  const status = child.status.then((status) => {
    reaped = true;
    // What the command left behind in its group dies with it; this also
    // closes pipes that a background descendant still holds.
    killGroup(pid, true);
    return status;
  });
  return {
    pid,
    stdin: child.stdin,
    stdout: child.stdout,
    stderr: child.stderr,
    status,
    kill: () => killGroup(pid, reaped),
  };
}

/**
 * Runs `sh -c cmd` once through the `setsid` program, as `runCommand` says.
 *
 * @param cmd The shell command.
 * @param options Input, limits, folder and abort signal.
 * @returns How it ended.
 */
export function runThroughSetsid(
  cmd: string,
  options: RunCommandOptions,
): Promise<RunResult> {
  const started = performance.now();
  let child: Deno.ChildProcess;
  try {
    child = spawnSetsid(cmd, options.cwd);
  } catch (error) {
    return Promise.resolve({
      kind: "spawn_failed",
      message: error instanceof Error ? error.message : String(error),
    });
  }
  return new SetsidRun(child, options, started).run();
}

/** Why a run ended before its command did: early, or a failed write. */
type Ending = EarlyEnding | "failed";

/** One run of a child started through `setsid`, from its first write to its reaping. */
class SetsidRun {
  readonly #child: Deno.ChildProcess;
  readonly #options: RunCommandOptions;
  readonly #started: number;
  readonly #stdout: ReadableStreamDefaultReader<Uint8Array>;
  readonly #stderr: ReadableStreamDefaultReader<Uint8Array>;
  #ending: Ending | undefined;
  #reaped = false;
  /** Whether its deadline has passed and its group was killed for it. */
  #expired = false;
  /** An error of this process's side of the pipes, thrown once the child is gone. */
  #error: unknown;
  /** Lets the run end without its stdin write, once it has ended early. */
  #releaseWrite: (() => void) | undefined;

  constructor(
    child: Deno.ChildProcess,
    options: RunCommandOptions,
    started: number,
  ) {
    this.#child = child;
    this.#options = options;
    this.#started = started;
    this.#stdout = child.stdout.getReader();
    this.#stderr = child.stderr.getReader();
  }

  async run(): Promise<RunResult> {
    const options = this.#options;
    const signal = options.signal;
    const deadline: Deadline = setDeadline(
      this.#started + options.timeoutMs,
      () => this.#expire(),
    );
    const onAbort = () => this.#end("aborted");
    signal?.addEventListener("abort", onAbort);
    let drain: Deadline | undefined;
    try {
      if (signal?.aborted) this.#end("aborted");
      const [status, stdout, stderr] = await Promise.all([
        this.#child.status.then((status) => {
          this.#reaped = true;
          // Killed for its deadline: a timeout. Exited of itself, even
          // when the timer fired first, it ended in time.
          if (this.#expired && status.signal === "SIGKILL") {
            this.#end("timeout");
          }
          // Whatever the command left behind in its group dies with it; this
          // also closes pipes that a background descendant still holds.
          killGroup(this.#child.pid, true);
          // One it left in another session may hold them still, or hold
          // stdin unread, so that the write never ends: what the command
          // wrote is read by then, and the run ends with it.
          drain = setDeadline(performance.now() + EXIT_DRAIN_MS, () => {
            for (const reader of [this.#stdout, this.#stderr]) {
              reader.cancel().catch(() => {});
            }
            this.#releaseWrite?.();
          });
          return status;
        }),
        this.#read(this.#stdout, options.maxStdoutBytes, "stdout"),
        this.#read(this.#stderr, options.maxStderrBytes, "stderr"),
        this.#write(options.stdin),
      ]);
      if (this.#error !== undefined) throw this.#error;
      return this.#result(status, stdout, stderr);
    } finally {
      if (drain !== undefined) clearDeadline(drain);
      clearDeadline(deadline);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  #result(
    status: Deno.CommandStatus,
    stdout: Uint8Array | undefined,
    stderr: Uint8Array | undefined,
  ): RunResult {
    const ms = performance.now() - this.#started;
    // A failed write is thrown by the run before a result is asked for.
    const ending = this.#ending === "failed" ? undefined : this.#ending;
    const early = earlyResult(ending, this.#options, ms);
    if (early !== undefined) return early;
    return {
      kind: "exited",
      code: status.code,
      signal: status.signal,
      stdout: stdout!,
      stderr: stderr!,
      ms,
    };
  }

  /**
   * Its deadline has passed by the clock, yet the command may have exited
   * in time, its output in the pipes, unread: this process was busy (a
   * loaded machine) and the timer came first. The group is killed now, and
   * the command's status tells which came first: killed, it timed out.
   */
  #expire(): void {
    // Exited and reaped: what it wrote is being read (see the drain).
    if (this.#reaped || this.#ending !== undefined) return;
    this.#expired = true;
    killGroup(this.#child.pid, false);
  }

  /** Ends the run early: the whole group is killed, its pipes let go. */
  #end(why: Ending): void {
    this.#ending ??= why;
    killGroup(this.#child.pid, this.#reaped);
    // A process that left the group may hold the pipes open: the run does
    // not wait for their end, nor for a write it does not read.
    for (const reader of [this.#stdout, this.#stderr]) {
      reader.cancel().catch(
        () => {/* a reader that has finished has nothing to cancel */},
      );
    }
    this.#releaseWrite?.();
  }

  /** Reads a pipe to its end; `undefined` past its cap or once ended. */
  async #read(
    reader: ReadableStreamDefaultReader<Uint8Array>,
    limit: number,
    stream: "stdout" | "stderr",
  ): Promise<Uint8Array | undefined> {
    const chunks: Uint8Array[] = [];
    let total = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > limit) {
        this.#end(stream);
        return undefined;
      }
      chunks.push(value);
    }
    return this.#ending === undefined ? concat(chunks, total) : undefined;
  }

  /**
   * Writes all of `bytes` to stdin and closes it; a child that stopped
   * reading is no error. Resolves early once the run has ended early.
   */
  #write(bytes: Uint8Array): Promise<void> {
    const writer = this.#child.stdin.getWriter();
    return new Promise<void>((resolve) => {
      this.#releaseWrite = resolve;
      if (this.#ending !== undefined) resolve();
      (async () => {
        if (bytes.length > 0) await writer.write(bytes);
        await writer.close();
      })().then(resolve, (error) => {
        // The child exited, or was killed, without reading all of its
        // stdin. The protocol judges it by its exit status and output.
        if (!(error instanceof Deno.errors.BrokenPipe)) {
          this.#error ??= error;
          this.#end("failed");
        }
        writer.abort().catch(
          () => {/* already closed by the failed write */},
        ).then(resolve);
      });
    });
  }
}
