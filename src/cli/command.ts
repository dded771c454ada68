/**
 * A command declared once: its name, what it does, its arguments and flags,
 * and the function that runs it with the flags parsed and typed. Its help is
 * made from the declaration.
 *
 * @module
 */

import {
  type Flags,
  type FlagSpecs,
  formatFlags,
  parseFlags,
  UsageError,
} from "./flags.ts";
import { outputErrorOf } from "../base/errors.ts";

/** The flag every command has. */
const HELP_FLAG = {
  help: { type: "boolean", short: "h", help: "Show this help" },
} as const;

/**
 * The positional arguments a command takes: a fixed number, the last few
 * of them optional when `min` says so, or any number of input files.
 */
export interface PositionalSpec<P extends readonly string[]> {
  /** Their names in the help, in order (`["CONFIG.yaml"]`, `["A", "[B]"]`). */
  readonly names: P;
  /** The usage error when their number is wrong (`run takes one config file`). */
  readonly error: string;
  /**
   * How many must be given; the rest are optional.
   * @default {names.length}
   */
  readonly min?: number;
  /**
   * Input files, any number of them (`-` is stdin, none is stdin too):
   * `names` then holds the one name the help shows (`["SCORES..."]`).
   * @default {false}
   */
  readonly files?: boolean;
}

/** The declaration of a command, as {@linkcode defineCommand} takes it. */
export interface CommandSpec<
  S extends FlagSpecs,
  P extends readonly string[],
> {
  /** The command's name (`run`). */
  readonly name: string;
  /** One line for the list of commands. */
  readonly summary: string;
  /** What follows `Usage: evalpipe <name>` (`CONFIG.yaml [options]`). */
  readonly usage: string;
  /** The paragraphs between the usage line and the options. */
  readonly description: string;
  /**
   * The positional arguments.
   * @default {none: any argument is a usage error}
   */
  readonly positionals?: PositionalSpec<P>;
  /** The flags (`--help` is added). */
  readonly flags: S;
  /**
   * Runs the command; loads what it needs when it runs, so that the command
   * table stays quick to load.
   *
   * @param flags The parsed flags, typed by their declarations.
   * @param positionals The positional arguments.
   * @returns The exit code.
   */
  run(
    flags: Flags<S>,
    positionals: { -readonly [I in keyof P]: string },
  ): Promise<number>;
}

/** A declared command, ready for the command table. */
export interface Command {
  /** The command's name. */
  readonly name: string;
  /** One line for the list of commands. */
  readonly summary: string;
  /** The names of its positional arguments, for the list of commands. */
  readonly positionals: readonly string[];
  /** Its flags, `--help` included. */
  readonly flags: FlagSpecs;
  /**
   * Its help text, made from the declaration.
   *
   * @returns The text, without a final newline.
   */
  help(): string;
  /**
   * Parses the arguments and runs the command, or prints its help on stdout.
   *
   * @param args The arguments after the command's name.
   * @returns The exit code.
   * @throws {UsageError} When the arguments do not fit the declaration.
   */
  main(args: readonly string[]): Promise<number>;
}

/**
 * Makes a command from its declaration: the parser, the `--help` flag and
 * the help text come from the one spec, and `run` gets typed flags.
 *
 * @param spec The declaration.
 * @returns The command.
 *
 * @example
 * ```ts
 * import { defineCommand } from "./command.ts";
 * const greet = defineCommand({
 *   name: "greet",
 *   summary: "Say hello",
 *   usage: "NAME [options]",
 *   description: "Says hello to NAME.",
 *   positionals: { names: ["NAME"], error: "greet takes one name" },
 *   flags: { times: { type: "integer", default: 1, help: "How often" } },
 *   run(flags, [name]) {
 *     const times: number = flags.times;
 *     return Promise.resolve(name.length > 0 && times === 2 ? 0 : 1);
 *   },
 * });
 * if (await greet.main(["Ada", "--times", "2"]) !== 0) throw new Error();
 * if (!greet.help().includes("--times N")) throw new Error();
 * ```
 */
export function defineCommand<
  const S extends FlagSpecs,
  const P extends readonly string[] = readonly string[],
>(spec: CommandSpec<S, P>): Command {
  const flags: FlagSpecs = { ...spec.flags, ...HELP_FLAG };
  const help = () =>
    [
      `Usage: evalpipe ${spec.name} ${spec.usage}`,
      "",
      spec.description,
      "",
      "Options:",
      ...formatFlags(flags),
    ].join("\n");
  return {
    name: spec.name,
    summary: spec.summary,
    positionals: spec.positionals?.names ?? [],
    flags,
    help,
    async main(args) {
      const parsed = parseFlags(args, { ...spec.flags, ...HELP_FLAG });
      if (parsed.flags.help) {
        try {
          Deno.stdout.writeSync(new TextEncoder().encode(`${help()}\n`));
        } catch (error) {
          // A reader that went away (`| head -1`) got what it wanted.
          if (error instanceof Deno.errors.BrokenPipe) return 0;
          throw outputErrorOf(error, "stdout") ?? error;
        }
        return 0;
      }
      const want = spec.positionals;
      const given = parsed.positionals.length;
      if (want === undefined) {
        if (given > 0) {
          throw new UsageError(
            `"${spec.name}" takes no arguments, not ${
              JSON.stringify(parsed.positionals[0])
            }`,
          );
        }
      } else if (
        !want.files &&
        (given > want.names.length || given < (want.min ?? want.names.length))
      ) {
        throw new UsageError(want.error);
      }
      return await spec.run(
        parsed.flags as unknown as Flags<S>,
        parsed.positionals as { -readonly [I in keyof P]: string },
      );
    },
  };
}
