/**
 * The command table: `main(args)` finds the command and runs it, and maps
 * whatever it throws to an exit code.
 *
 * @module
 */

import denoJson from "../../deno.json" with { type: "json" };
import { exitCodeOf, outputErrorOf } from "../base/errors.ts";
import type { Command } from "./command.ts";
import { UsageError } from "./flags.ts";
import { nearest } from "../base/words.ts";
import { say } from "./_output.ts";
import { COMMAND_NAMES, loadCommand } from "./_command_table.ts";

/** evalpipe's version, as `deno.json` has it. */
export const VERSION: string = denoJson.version;

/** An unknown command, with the nearest known one when it looks like a typo. */
function unknownCommand(name: string, names: readonly string[]): UsageError {
  const near = nearest(name, names);
  return new UsageError(
    `Unknown command ${JSON.stringify(name)}${
      near !== undefined ? `; did you mean "${near}"?` : ""
    }`,
  );
}

function print(text: string): number {
  try {
    Deno.stdout.writeSync(new TextEncoder().encode(`${text}\n`));
  } catch (error) {
    // A reader that went away (`| head -1`) got what it wanted.
    if (error instanceof Deno.errors.BrokenPipe) return 0;
    throw outputErrorOf(error, "stdout") ?? error;
  }
  return 0;
}

/** Options of {@linkcode main}. */
export interface MainOptions {
  /**
   * The command table.
   * @default {COMMANDS, each command loaded when it runs}
   */
  commands?: readonly Command[];
}

/**
 * Runs the command line. An error that carries an `exitCode` (an error the
 * user can cause) is reported on stderr and ends with its code; any other
 * is a bug and is thrown on.
 *
 * @param args The arguments, without the program name.
 * @param options The command table.
 * @returns The exit code.
 *
 * @example
 * ```ts
 * import { main } from "./main.ts";
 * if (await main(["frobnicate"]) !== 2) throw new Error(); // says why on stderr
 * ```
 */
export async function main(
  args: readonly string[],
  options: MainOptions = {},
): Promise<number> {
  const given = options.commands;
  const [name, ...rest] = args;
  // Only the command that runs is loaded: not the others' declarations.
  let command: Command | undefined;
  try {
    command = name === undefined
      ? undefined
      : given !== undefined
      ? given.find((c) => c.name === name)
      : await loadCommand(name);
    if (command !== undefined) return await command.main(rest);
    const names = given?.map((c) => c.name) ?? COMMAND_NAMES;
    switch (name) {
      case "--version":
      case "-V":
        return print(`evalpipe ${VERSION}`);
      case "help":
      case "--help":
      case "-h": {
        const { COMMANDS, mainHelp } = await import("./commands.ts");
        const commands = given ?? COMMANDS;
        if (rest.length === 0) return print(mainHelp(commands));
        const topic = commands.find((c) => c.name === rest[0]);
        if (topic === undefined) throw unknownCommand(rest[0]!, names);
        return print(topic.help());
      }
      case undefined: {
        const { COMMANDS, mainHelp } = await import("./commands.ts");
        say(mainHelp(given ?? COMMANDS));
        return 2;
      }
      default:
        throw unknownCommand(name, names);
    }
  } catch (thrown) {
    // A write the disk refused that no writer named is still no crash (EIO
    // aside: reads meet it too).
    const error = (thrown as { code?: unknown }).code === "EIO"
      ? thrown
      : outputErrorOf(thrown, "the output") ?? thrown;
    const code = exitCodeOf(error);
    if (code === undefined) throw error;
    say(`evalpipe: ${(error as Error).message}`);
    if (error instanceof UsageError) {
      say(
        `Run "evalpipe ${
          command !== undefined ? `${command.name} ` : ""
        }--help" for usage.`,
      );
    }
    return code;
  }
}
