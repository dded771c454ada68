/**
 * The shapes of starting a command: what is asked and how it ended, below
 * the spawner and both of its backends so that imports never circle.
 *
 * @module
 */

/**
 * Options of {@linkcode runCommand}.
 *
 * @example Feed stdin, in a given folder, with a timeout and output caps
 * ```ts
 * import { runCommand, type RunCommandOptions } from "./mod.ts";
 * const options: RunCommandOptions = {
 *   cwd: "/",
 *   stdin: new TextEncoder().encode("hi"),
 *   timeoutMs: 10_000,
 *   maxStdoutBytes: 1024,
 *   maxStderrBytes: 1024,
 * };
 * const result = await runCommand("cat; pwd", options);
 * if (result.kind !== "exited" || new TextDecoder().decode(result.stdout) !== "hi/\n") throw new Error();
 * ```
 */
export interface RunCommandOptions {
  /** The folder the command runs in. */
  cwd?: string;
  /** What to write on the command's stdin. */
  stdin: Uint8Array;
  /** How long the command may run, in milliseconds. */
  timeoutMs: number;
  /** The most stdout kept; more is an overflow. */
  maxStdoutBytes: number;
  /** The most stderr kept; more is an overflow. */
  maxStderrBytes: number;
  /** Aborting kills the command. */
  signal?: AbortSignal;
}

/**
 * How a command ended.
 *
 * @example Tell an exit from an overflow
 * ```ts
 * import { runCommand, type RunResult } from "./mod.ts";
 * const limits = { stdin: new Uint8Array(), timeoutMs: 10_000, maxStderrBytes: 1024 };
 * const exited: RunResult = await runCommand("exit 3", { ...limits, maxStdoutBytes: 1024 });
 * if (exited.kind !== "exited" || exited.code !== 3) throw new Error(exited.kind);
 * const overflow: RunResult = await runCommand("yes", { ...limits, maxStdoutBytes: 16 });
 * if (overflow.kind !== "overflow" || overflow.stream !== "stdout") throw new Error(overflow.kind);
 * ```
 */
export type RunResult =
  | {
    kind: "exited";
    /** The exit code (128 + n when killed by signal n). */
    code: number;
    /** The signal that killed it, if one did. */
    signal: Deno.Signal | null;
    stdout: Uint8Array;
    stderr: Uint8Array;
    /** Wall time from spawn to the end of its output. */
    ms: number;
  }
  | { kind: "timeout"; ms: number }
  | { kind: "overflow"; stream: "stdout" | "stderr"; limit: number; ms: number }
  | { kind: "spawn_failed"; message: string }
  | { kind: "aborted" };

/**
 * The ways the spawner starts a command in a new session: glibc's
 * `posix_spawn` over FFI, or `Deno.Command` through the `setsid` program.
 *
 * @example
 * ```ts
 * import { spawnBackend, type SpawnBackend } from "./mod.ts";
 * const backend: SpawnBackend = spawnBackend();
 * if (backend !== "posix_spawn" && backend !== "setsid") throw new Error();
 * ```
 */
export type SpawnBackend = "posix_spawn" | "setsid";

/**
 * Options of {@linkcode startCommand}.
 *
 * @example
 * ```ts
 * import { startCommand, type StartCommandOptions } from "./mod.ts";
 * const options: StartCommandOptions = { cwd: "/" };
 * const child = startCommand("pwd", options);
 * await child.stdin.close();
 * const [out] = await Promise.all([new Response(child.stdout).text(), child.stderr.cancel()]);
 * await child.status;
 * if (out !== "/\n") throw new Error(out);
 * ```
 */
export interface StartCommandOptions {
  /**
   * The folder the command runs in.
   * @default {Deno.cwd()}
   */
  cwd?: string;
}

/**
 * A long-lived child started by {@linkcode startCommand}.
 *
 * @example
 * ```ts
 * import { type SessionChild, startCommand } from "./mod.ts";
 * const child: SessionChild = startCommand("sleep 1000 & sleep 1000");
 * child.kill(); // the shell and both sleeps
 * await Promise.all([child.stdin.close(), child.stdout.cancel(), child.stderr.cancel()]);
 * if ((await child.status).signal !== "SIGKILL") throw new Error();
 * ```
 */
export interface SessionChild {
  /** Its pid, which is also its process group's id. */
  readonly pid: number;
  /** Its stdin. */
  readonly stdin: WritableStream<Uint8Array>;
  /** Its stdout. */
  readonly stdout: ReadableStream<Uint8Array>;
  /** Its stderr. */
  readonly stderr: ReadableStream<Uint8Array>;
  /**
   * How it ended, once it has exited and what it left in its process group
   * has been killed.
   */
  readonly status: Promise<Deno.CommandStatus>;
  /** Kills its whole process group; a group already gone is no error. */
  kill(): void;
}
