/**
 * Child processes: commands started in their own session, with stdin, stdout
 * and stderr on pipes, a timeout, output caps and nothing left running.
 *
 * @example Run a command once
 * ```ts
 * import { runCommand } from "./mod.ts";
 * const result = await runCommand("cat", {
 *   stdin: new TextEncoder().encode("hi"),
 *   timeoutMs: 10_000,
 *   maxStdoutBytes: 1024,
 *   maxStderrBytes: 1024,
 * });
 * if (result.kind !== "exited" || result.code !== 0) throw new Error(result.kind);
 * ```
 *
 * @module
 */

export { failureMessage, runCommand, setMaxProcesses } from "./run_command.ts";
export type { FailureMessageOptions } from "./run_command.ts";
export { spawnBackend, startCommand, useSpawnBackend } from "./spawner.ts";
export type {
  RunCommandOptions,
  RunResult,
  SessionChild,
  SpawnBackend,
  StartCommandOptions,
} from "./types.ts";
