/** What the process tests share: running through either backend, reading `/proc`. */

import assert from "node:assert/strict";
import { delay, isGone, running } from "../_proc.ts";
import {
  runCommand,
  type RunCommandOptions,
  type RunResult,
  type SpawnBackend,
  spawnBackend,
  useSpawnBackend,
} from "../../src/process/mod.ts";

/** The project root, where the child Deno processes of the tests run. */
export const ROOT = decodeURIComponent(
  new URL("../..", import.meta.url).pathname,
).replace(/\/$/, "");

/** Both backends, the default first. */
export const BACKENDS: readonly SpawnBackend[] = ["posix_spawn", "setsid"];

const decoder = new TextDecoder();

/** Quotes a word for `sh`. */
export function sh(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Runs `fn` with commands started through `backend`. */
export async function on(
  backend: SpawnBackend,
  fn: () => Promise<void>,
): Promise<void> {
  useSpawnBackend(backend);
  try {
    assert.equal(spawnBackend(), backend);
    await fn();
  } finally {
    useSpawnBackend(undefined);
  }
}

/** `runCommand` with roomy defaults. */
export function run(
  cmd: string,
  options: Partial<RunCommandOptions> = {},
): Promise<RunResult> {
  return runCommand(cmd, {
    stdin: new Uint8Array(),
    timeoutMs: 20_000,
    maxStdoutBytes: 1 << 20,
    maxStderrBytes: 1 << 20,
    ...options,
  });
}

/** The result of a run that must have exited, with its output as text. */
export function exited(result: RunResult): {
  code: number;
  signal: Deno.Signal | null;
  stdout: string;
  stderr: string;
} {
  assert.equal(result.kind, "exited", JSON.stringify(result));
  if (result.kind !== "exited") throw new Error("unreachable");
  return {
    code: result.code,
    signal: result.signal,
    stdout: decoder.decode(result.stdout),
    stderr: decoder.decode(result.stderr),
  };
}

/** Fields 4 to 6 of `/proc/PID/stat`: parent, process group, session. */
export function ids(
  stat: string,
): { ppid: number; pgrp: number; session: number } {
  const [, ppid, pgrp, session] = stat.slice(stat.lastIndexOf(")") + 2)
    .split(" ");
  return { ppid: Number(ppid), pgrp: Number(pgrp), session: Number(session) };
}

/**
 * The running processes (zombies excepted) of process group `pgid`. A member
 * sent SIGKILL may still run for a moment: check them with
 * `assertNoneRunning`, which waits (bounded) for them to die.
 */
export function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    let stat: string;
    try {
      stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
    } catch (error) {
      // It exited while the folder was read.
      if (isGone(error)) continue;
      throw error;
    }
    const pid = Number(entry.name);
    if (ids(stat).pgrp === pgid && running(pid)) members.push(pid);
  }
  return members;
}

/** The PIDs a command wrote to `file`, once there are `count` of them. */
export async function readPids(file: string, count: number): Promise<number[]> {
  for (let i = 0; i < 250; i++) {
    let text = "";
    try {
      text = await Deno.readTextFile(file);
    } catch (error) {
      // Not written yet.
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    const pids = text.split(/\s+/).filter((w) => w !== "").map(Number);
    if (pids.length >= count) return pids;
    await delay(20);
  }
  throw new Error(`Fewer than ${count} PIDs in ${file}`);
}

/** This process's open file descriptors, each as `N -> what it is`. */
export function fdTable(): Set<string> {
  const table = new Set<string>();
  for (const { name } of Deno.readDirSync("/proc/self/fd")) {
    try {
      table.add(`${name} -> ${Deno.readLinkSync(`/proc/self/fd/${name}`)}`);
    } catch (error) {
      // The descriptor readDir used to list the folder, closed since.
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
  return table;
}

/**
 * The descriptors open now that were not in `before`, once those closing
 * have closed: the full suite runs every test file in one process, and
 * another file's child or server may close a pipe a moment after its test
 * ended (a count once read 46 for 44 there, never alone). A descriptor
 * leaked stays open through the wait and is named.
 */
export async function fdsLeftOpen(
  before: Set<string>,
  waitMs = 2000,
): Promise<string[]> {
  const until = Date.now() + waitMs;
  for (;;) {
    const left = [...fdTable()].filter((fd) => !before.has(fd));
    if (left.length === 0 || Date.now() > until) return left;
    await delay(20);
  }
}
