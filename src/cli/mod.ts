/**
 * The command line: the command table and `main`, and the declarative flag
 * parser and command builder it is made with, for scripts of your own.
 *
 * @example A script's flags, declared once and typed
 * ```ts
 * import { parseFlags } from "./mod.ts";
 * const { flags } = parseFlags(["--rounds", "5"], {
 *   rounds: { type: "integer", default: 3, help: "Rounds to run" },
 * });
 * if (flags.rounds !== 5) throw new Error("unexpected");
 * ```
 *
 * @module
 */

export type {
  BooleanFlag,
  FlagBase,
  Flags,
  FlagSpec,
  FlagSpecs,
  FlagType,
  FlagTypeValue,
  FlagValue,
  NumberFlag,
  ParsedFlags,
  StringFlag,
} from "./flags.ts";
export { defaultOf, formatFlags, parseFlags, UsageError } from "./flags.ts";
export { editDistance, nearest } from "../base/words.ts";
export type { Command, CommandSpec, PositionalSpec } from "./command.ts";
export { defineCommand } from "./command.ts";
export type { MainOptions } from "./main.ts";
export { main, VERSION } from "./main.ts";
export { COMMANDS, mainHelp } from "./commands.ts";
