/**
 * Every command, loaded, and the main help made from their declarations:
 * for scripts, tests and the help. `main` itself loads only the command it
 * runs (see `_command_table.ts`).
 *
 * @module
 */

import type { Command } from "./command.ts";
import { loadCommands } from "./_command_table.ts";

/** The commands, in the order the help lists them. */
export const COMMANDS: readonly Command[] = await loadCommands();

/**
 * The main help: what evalpipe is, and the commands from their declarations.
 *
 * @param commands The command table.
 * @returns The text, without a final newline.
 *
 * @example
 * ```ts
 * import { COMMANDS, mainHelp } from "./mod.ts";
 * if (!mainHelp(COMMANDS).includes("  run CONFIG.yaml")) throw new Error();
 * ```
 */
export function mainHelp(commands: readonly Command[] = COMMANDS): string {
  const left = commands.map((c) => [c.name, ...c.positionals].join(" "));
  const column = Math.max(...left.map((l) => l.length)) + 3;
  return [
    "evalpipe: evaluate LLM systems as streams",
    "",
    "Usage: evalpipe <command> [options]",
    "",
    "Commands:",
    ...commands.map((c, i) => `  ${left[i]!.padEnd(column)}${c.summary}`),
    "",
    'Run "evalpipe <command> --help" (or "evalpipe help <command>") for a',
    'command\'s options, "evalpipe --version" for the version.',
    "Exit codes: 0 success, 1 a gate failed, 2 usage, config or input error,",
    "3 an output could not be written (a full or read-only disk).",
  ].join("\n");
}
