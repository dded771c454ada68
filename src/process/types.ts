/**
 * The shapes of running a command: what is asked and how it ended, below the
 * code of both ways of starting a child so that imports never circle.
 *
 * @module
 */

/** Options of {@linkcode runCommand}. */
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

/** How a command ended. */
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
