/**
 * The spawner: every child evalpipe starts (a subprocess target's call, a
 * subprocess scorer's run, a persistent scorer's process) is `sh -c CMD` as
 * the leader of a new session, so of a new process group, with its stdin,
 * stdout and stderr on pipes, and with nothing of its group left running once
 * it is done.
 *
 * Two backends start it: `posix_spawn`, glibc's, over FFI, straight into the
 * new session (Linux with glibc, the `ffi` and `run` permissions); and
 * `setsid`, the portable one: `Deno.Command` starting the `setsid` program,
 * one exec more per command, with the `run` permission alone. The backend is
 * chosen at the first spawn, not at import, so that importing the library
 * needs no permission: `posix_spawn` where this process can use it, else
 * `setsid`.
 *
 * A one-shot run (`runCommand`) is served by either backend; a long-lived
 * child with streaming pipes ({@linkcode startCommand}) by `setsid` (through
 * `Deno.Command`'s streams), whichever serves the one-shot runs.
 *
 * @module
 */

import { loadPosixSpawn } from "./_posix_spawn.ts";
import { runThroughSetsid, startThroughSetsid } from "./_setsid.ts";
import type {
  RunCommandOptions,
  RunResult,
  SessionChild,
  SpawnBackend,
  StartCommandOptions,
} from "./types.ts";

/** The backend asked for, if any; else the best this process can use. */
let requested: SpawnBackend | undefined;
/** The backend's one-shot run, once chosen. */
let chosen:
  | {
    name: SpawnBackend;
    run: (cmd: string, options: RunCommandOptions) => Promise<RunResult>;
  }
  | undefined;

function choose(): NonNullable<typeof chosen> {
  if (chosen !== undefined) return chosen;
  const posix = requested === "setsid" ? undefined : loadPosixSpawn();
  if (posix !== undefined) {
    chosen = { name: "posix_spawn", run: posix.run };
  } else if (requested === "posix_spawn") {
    throw new Error(
      "Cannot start commands through posix_spawn in this process: it needs Linux ≥ 5.3, glibc ≥ 2.29 and the ffi permission",
    );
  } else chosen = { name: "setsid", run: runThroughSetsid };
  return chosen;
}

/**
 * The backend that starts commands in this process: chosen at the first
 * spawn (or the first call of this function), `posix_spawn` where this
 * process can use it, else `setsid`.
 *
 * @returns `"posix_spawn"` or `"setsid"`.
 *
 * @example
 * ```ts
 * import { spawnBackend } from "./spawner.ts";
 * if (!["posix_spawn", "setsid"].includes(spawnBackend())) throw new Error();
 * ```
 */
export function spawnBackend(): SpawnBackend {
  return choose().name;
}

/**
 * The backend chosen so far, without choosing one: for tests of when the
 * choice happens. Not exported from `mod.ts`.
 */
export function chosenBackend(): SpawnBackend | undefined {
  return chosen?.name;
}

/**
 * Makes the spawner start commands through `backend` from now on, or
 * (`undefined`) through the one it would choose itself. For tests and
 * benchmarks that compare the two.
 *
 * @param backend The backend, or `undefined` for the default choice.
 * @throws {Error} At the next spawn, when `posix_spawn` is asked for and
 *   this process cannot use it.
 *
 * @example
 * ```ts
 * import { spawnBackend, useSpawnBackend } from "./spawner.ts";
 * useSpawnBackend("setsid");
 * if (spawnBackend() !== "setsid") throw new Error();
 * useSpawnBackend(undefined);
 * ```
 */
export function useSpawnBackend(backend: SpawnBackend | undefined): void {
  requested = backend;
  chosen = undefined;
}

/**
 * Runs `sh -c cmd` once through the chosen backend; `runCommand` adds the
 * cap on processes running at once.
 *
 * @param cmd The shell command.
 * @param options Input, limits, folder and abort signal.
 * @returns How it ended.
 */
export function runOnce(
  cmd: string,
  options: RunCommandOptions,
): Promise<RunResult> {
  if (options.signal?.aborted) return Promise.resolve({ kind: "aborted" });
  return choose().run(cmd, options);
}

/**
 * Starts `sh -c cmd` as the leader of a new session and process group, its
 * stdin, stdout and stderr on pipes, for as long as it runs: for a child
 * that is written to and read from as it goes, such as a persistent scorer.
 * When it exits, what is left of its group is killed; `kill()` kills the
 * whole group at any time. Its `status` settles once both have happened.
 *
 * @param cmd The shell command.
 * @param options Its folder.
 * @returns The child.
 * @throws {Error} When it cannot be started (no such folder, no `setsid`).
 *
 * @example
 * ```ts
 * import { startCommand } from "./spawner.ts";
 * const child = startCommand("read -r line; echo \"got $line\"");
 * const writer = child.stdin.getWriter();
 * await writer.write(new TextEncoder().encode("hello\n"));
 * await writer.close();
 * const text = await new Response(child.stdout).text();
 * await child.stderr.cancel();
 * if ((await child.status).code !== 0 || text !== "got hello\n") throw new Error(text);
 * ```
 */
export function startCommand(
  cmd: string,
  options: StartCommandOptions = {},
): SessionChild {
  // A long-lived child always goes through `setsid`: the one-shot backend
  // is chosen at the first one-shot run, so that the process (a persistent
  // scorer) starts without waiting for libc's set-up. Only a backend asked
  // for is checked now, so that asking for one this process cannot use
  // fails at the first spawn of any kind, as documented.
  if (requested === "posix_spawn") choose();
  return startThroughSetsid(cmd, options);
}
