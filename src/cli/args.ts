/**
 * A small, strict command-line parser: known flags only, clear messages.
 *
 * @module
 */

/** How a flag takes its value. */
export interface FlagSpec {
  /** `string` and `number` flags take a value; `boolean` flags take none. */
  type: "string" | "number" | "boolean";
  /** Whether the flag may repeat (values collect in order). */
  multiple?: boolean;
}

/** Parsed arguments. */
export interface ParsedArgs {
  /** Flag values by name (without dashes); repeated flags give lists. */
  flags: Record<string, string | number | boolean | Array<string | number>>;
  /** Arguments that are not flags, in order. */
  positionals: string[];
}

/** A command line that cannot be understood: exit code 2. */
export class UsageError extends Error {
  /**
   * Creates the instance.
   *
   * @param message What is wrong.
   */
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * Parses `--name value`, `--name=value` and boolean `--name`; `--` ends flags.
 *
 * @param args The arguments.
 * @param spec The flags the command knows.
 * @returns Flags and positionals.
 * @throws {UsageError} For an unknown flag, a missing value or a bad number.
 */
export function parseArgs(
  args: readonly string[],
  spec: Record<string, FlagSpec>,
): ParsedArgs {
  const flags: ParsedArgs["flags"] = {};
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith("--") || arg === "-") {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const flag = spec[name];
    if (flag === undefined) throw new UsageError(`Unknown option "--${name}"`);
    let value: string | number | boolean;
    if (flag.type === "boolean") {
      if (eq >= 0) throw new UsageError(`Option "--${name}" takes no value`);
      value = true;
    } else {
      const raw = eq >= 0 ? arg.slice(eq + 1) : args[++i];
      if (raw === undefined) {
        throw new UsageError(`Option "--${name}" needs a value`);
      }
      value = raw;
      if (flag.type === "number") {
        value = Number(raw);
        if (raw.trim() === "" || !Number.isFinite(value) || value <= 0) {
          throw new UsageError(
            `Option "--${name}" needs a positive number, not ${
              JSON.stringify(raw)
            }`,
          );
        }
      }
    }
    if (flag.multiple) {
      const list = (flags[name] ??= []) as Array<string | number>;
      list.push(value as string | number);
    } else {
      if (name in flags) {
        throw new UsageError(`Option "--${name}" is given twice`);
      }
      flags[name] = value;
    }
  }
  return { flags, positionals };
}
