/**
 * The command table as `main` reads it: each command's name, and how to
 * load its declaration. A command's module is evaluated only when it runs
 * (or when a help lists every command), so that starting one command does
 * not evaluate the other eleven's declarations.
 *
 * @module
 */

import type { Command } from "./command.ts";

/** How to load each command, by name, in the order the help lists them. */
const LOADERS = new Map<string, () => Promise<Command>>([
  ["run", async () => (await import("./run.ts")).run],
  ["score", async () => (await import("./score.ts")).score],
  ["aggregate", async () => (await import("./aggregate.ts")).aggregate],
  ["view", async () => (await import("./view.ts")).view],
  ["diff", async () => (await import("./diff.ts")).diff],
  ["report", async () => (await import("./report.ts")).report],
  ["merge", async () => (await import("./merge.ts")).merge],
  ["cache", async () => (await import("./cache.ts")).cache],
  ["validate", async () => (await import("./validate.ts")).validate],
  ["export", async () => (await import("./export.ts")).exportRun],
  ["init", async () => (await import("./init.ts")).init],
  ["calibrate", async () => (await import("./calibrate.ts")).calibrate],
]);

/** The commands' names, in the order the help lists them. */
export const COMMAND_NAMES: readonly string[] = [...LOADERS.keys()];

/**
 * Loads the command of that name.
 *
 * @param name A command's name.
 * @returns The command, or `undefined` when there is none of that name.
 */
export function loadCommand(name: string): Promise<Command | undefined> {
  return LOADERS.get(name)?.() ?? Promise.resolve(undefined);
}

/**
 * Loads every command.
 *
 * @returns The commands, in the order the help lists them.
 */
export function loadCommands(): Promise<Command[]> {
  return Promise.all([...LOADERS.values()].map((load) => load()));
}
