/**
 * The command table: `main(args)` finds the command and runs it, and maps
 * whatever it throws to an exit code.
 *
 * @module
 */

import denoJson from "../../deno.json" with { type: "json" };
import { exitCodeOf, outputErrorOf } from "../base/errors.ts";
import type { Command } from "./command.ts";
import { nearest, UsageError } from "./flags.ts";
import { say } from "./_output.ts";
import { aggregate } from "./aggregate.ts";
import { calibrate } from "./calibrate.ts";
import { diff } from "./diff.ts";
import { exportRun } from "./export.ts";
import { init } from "./init.ts";
import { merge } from "./merge.ts";
import { cache } from "./cache.ts";
import { report } from "./report.ts";
import { run } from "./run.ts";
import { score } from "./score.ts";
import { validate } from "./validate.ts";
import { view } from "./view.ts";

/** evalpipe's version, as `deno.json` has it. */
export const VERSION: string = denoJson.version;

/** The commands, in the order the help lists them. */
export const COMMANDS: readonly Command[] = [
  run,
  score,
  aggregate,
  view,
  diff,
  report,
  merge,
  cache,
  validate,
  exportRun,
  init,
  calibrate,
];

/**
 * The main help: what evalpipe is, and the commands from their declarations.
 *
 * @param commands The command table.
 * @returns The text, without a final newline.
 *
 * @example
 * ```ts
 * import { COMMANDS, mainHelp } from "./main.ts";
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

/** An unknown command, with the nearest known one when it looks like a typo. */
function unknownCommand(
  name: string,
  commands: readonly Command[],
): UsageError {
  const near = nearest(name, commands.map((c) => c.name));
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
   * @default {COMMANDS}
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
  const commands = options.commands ?? COMMANDS;
  const [name, ...rest] = args;
  const command = commands.find((c) => c.name === name);
  try {
    if (command !== undefined) return await command.main(rest);
    switch (name) {
      case "--version":
      case "-V":
        return print(`evalpipe ${VERSION}`);
      case "help":
      case "--help":
      case "-h": {
        if (rest.length === 0) return print(mainHelp(commands));
        const topic = commands.find((c) => c.name === rest[0]);
        if (topic === undefined) throw unknownCommand(rest[0]!, commands);
        return print(topic.help());
      }
      case undefined:
        say(mainHelp(commands));
        return 2;
      default:
        throw unknownCommand(name, commands);
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
