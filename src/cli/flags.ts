/**
 * Flags declared once: a spec names each flag's type, default, value
 * placeholder and help text; the parser and the help are made from it, and
 * the parsed flags' TypeScript type is derived from it.
 *
 * @module
 */

import { InputError } from "../base/errors.ts";
import { nearest } from "../base/words.ts";

/** What a flag's value is; `number` and `integer` values must be positive (or 0, where a flag says `zero`). */
export type FlagType = "string" | "number" | "integer" | "boolean";

/** What every flag declares, whatever its type. */
export interface FlagBase {
  /** One or more sentences for the help; wrapped when shown. */
  readonly help: string;
  /**
   * The value's name in the help (`--out FILE`).
   * @default {"N" for numbers, "VALUE" for strings}
   */
  readonly value?: string;
  /**
   * The default the help names when the parser applies none, because the
   * library owns it (`"the config's, else 8"`).
   * @default {undefined}
   */
  readonly defaultText?: string;
  /**
   * A one-letter alias (`o` for `-o FILE`).
   * @default {undefined}
   */
  readonly short?: string;
}

/** A flag that takes a string: `--out FILE`. */
export interface StringFlag extends FlagBase {
  /** The type. */
  readonly type: "string";
  /**
   * Whether the flag may be given more than once; its values collect in order.
   * @default {false}
   */
  readonly repeatable?: boolean;
  /**
   * The value when the flag is absent.
   * @default {undefined}
   */
  readonly default?: string;
  /**
   * For a flag naming a file the command writes, what `-` means: never a
   * file named `-`, since every reader of the line takes `-` for stdin.
   * `"stdout"`: stdout, where the output goes without the flag (the value
   * is then absent, as if the flag were not given); `{ refused }`: a usage
   * error naming the flag and saying why (`refused`, e.g. that stdout
   * carries the Scores). `./-` still names a file called `-`.
   * @default {undefined: `-` is a value like any other}
   */
  readonly dash?: "stdout" | { readonly refused: string };
}

/**
 * A flag that takes a positive number, or a positive whole number (or 0 too,
 * with `zero`).
 */
export interface NumberFlag extends FlagBase {
  /** The type. */
  readonly type: "number" | "integer";
  /**
   * Whether the flag may be given more than once; its values collect in order.
   * @default {false}
   */
  readonly repeatable?: boolean;
  /**
   * The value when the flag is absent.
   * @default {undefined}
   */
  readonly default?: number;
  /**
   * The largest value taken, as the config key of the same name bounds it.
   * @default {no bound}
   */
  readonly max?: number;
  /**
   * Whether 0 is taken too: a size that may choose nothing (`--limit 0`).
   * @default {false}
   */
  readonly zero?: boolean;
}

/** A flag that takes no value: present is `true`, absent `false`. */
export interface BooleanFlag extends FlagBase {
  /** The type. */
  readonly type: "boolean";
}

/** One flag's declaration. */
export type FlagSpec = StringFlag | NumberFlag | BooleanFlag;

/** The flags a command knows, by name without the dashes. */
export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

/** The TypeScript type of one value of a flag type. */
export type FlagTypeValue<T extends FlagType> = T extends "string" ? string
  : T extends "boolean" ? boolean
  : number;

/** The parsed value of a flag declared as `S`. */
export type FlagValue<S extends FlagSpec> = S extends { repeatable: true }
  ? FlagTypeValue<S["type"]>[]
  : S extends { type: "boolean" } ? boolean
  : S extends { default: string | number } ? FlagTypeValue<S["type"]>
  : FlagTypeValue<S["type"]> | undefined;

/** The parsed flags of a spec: each flag's value, typed by its declaration. */
export type Flags<S extends FlagSpecs> = {
  -readonly [K in keyof S]: FlagValue<S[K]>;
};

/** What {@linkcode parseFlags} returns. */
export interface ParsedFlags<S extends FlagSpecs> {
  /** The flags by name, defaults applied. */
  flags: Flags<S>;
  /** The arguments that are not flags, in order. */
  positionals: string[];
}

/**
 * A command line that cannot be understood: an unknown flag, a missing or
 * bad value, a wrong number of arguments. Exit code 2.
 *
 * @example
 * ```ts
 * import { exitCodeOf } from "../base/mod.ts";
 * import { UsageError } from "./flags.ts";
 * if (exitCodeOf(new UsageError('Unknown option "--x"')) !== 2) throw new Error();
 * ```
 */
export class UsageError extends InputError {
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
 * Refuses stdin (`-`) named twice among a command's inputs: it can be read
 * once, and a second read would find it empty.
 *
 * @param command The command, for the message (`score`).
 * @param paths The inputs named.
 * @param hint Said after the rule (`: give it as A or B`).
 * @throws {UsageError} When `-` comes more than once.
 */
export function stdinOnce(
  command: string,
  paths: readonly string[],
  hint = "",
): void {
  if (paths.indexOf("-") !== paths.lastIndexOf("-")) {
    throw new UsageError(`${command} reads stdin (-) once${hint}`);
  }
}

/** `; did you mean "--x"?` when a known word is close, else nothing. */
function suggestion(typo: string, known: Iterable<string>, prefix: string) {
  const near = nearest(typo, known);
  return near === undefined ? "" : `; did you mean "${prefix}${near}"?`;
}

function parseNumber(name: string, flag: NumberFlag, raw: string): number {
  const value = Number(raw);
  const least = flag.zero === true ? value < 0 : value <= 0;
  if (raw.trim() === "" || !Number.isFinite(value) || least) {
    throw new UsageError(
      `Option "--${name}" needs ${
        flag.zero === true ? "a number of 0 or more" : "a positive number"
      }, not ${JSON.stringify(raw)}`,
    );
  }
  if (flag.type === "integer" && !Number.isInteger(value)) {
    throw new UsageError(
      `Option "--${name}" needs a whole number, not ${JSON.stringify(raw)}`,
    );
  }
  if (flag.max !== undefined && value > flag.max) {
    throw new UsageError(
      `Option "--${name}" must be at most ${flag.max}, not ${
        JSON.stringify(raw)
      }`,
    );
  }
  return value;
}

/**
 * Parses `--name value`, `--name=value`, boolean `--name`, and a flag's
 * one-letter alias (`-o value`, `-ovalue`, `-o=value`, boolean `-h`) by a
 * spec; `--` ends the flags, and a lone `-` is a positional (stdin). A value
 * that is itself one of the command's flags (`--out --resume`) is refused:
 * write `--out=--resume` for a file of that name. A flag that writes a
 * file and declares `dash` takes `-` as stdout, or refuses it.
 *
 * @param args The arguments.
 * @param spec The flags the command knows.
 * @returns The typed flags, defaults applied, and the positionals.
 * @throws {UsageError} For an unknown flag (naming the nearest known one), a
 * missing value, a bad number, or a flag given twice that is not repeatable.
 *
 * @example
 * ```ts
 * import { parseFlags } from "./flags.ts";
 * const { flags, positionals } = parseFlags(
 *   ["suite.yaml", "--concurrency=4", "--tag", "a", "-t", "b"],
 *   {
 *     concurrency: { type: "integer", default: 8, help: "Units at once" },
 *     tag: { type: "string", repeatable: true, short: "t", help: "A tag" },
 *     force: { type: "boolean", help: "Go on anyway" },
 *   },
 * );
 * const n: number = flags.concurrency; // typed: no cast
 * if (n !== 4 || flags.tag.join() !== "a,b" || flags.force) throw new Error();
 * if (positionals[0] !== "suite.yaml") throw new Error();
 * ```
 */
export function parseFlags<const S extends FlagSpecs>(
  args: readonly string[],
  spec: S,
): ParsedFlags<S> {
  const flags: Record<string, unknown> = {};
  const positionals: string[] = [];
  const shorts = new Map<string, string>();
  for (const [name, flag] of Object.entries(spec)) {
    if (flag.short !== undefined) shorts.set(flag.short, name);
  }
  /** Whether `arg` is one of this command's flags, as written. */
  const isFlag = (arg: string) => {
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      return Object.hasOwn(spec, arg.slice(2, eq < 0 ? undefined : eq));
    }
    return arg.length >= 2 && arg[0] === "-" && shorts.has(arg[1]!);
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    let name: string;
    let written: string;
    let inline: string | undefined;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      name = arg.slice(2, eq < 0 ? undefined : eq);
      written = `--${name}`;
      if (eq >= 0) inline = arg.slice(eq + 1);
      if (!Object.hasOwn(spec, name)) {
        throw new UsageError(
          `Unknown option "${written}"${
            suggestion(name, Object.keys(spec), "--")
          }`,
        );
      }
    } else if (arg.length >= 2 && arg[0] === "-") {
      const letter = arg[1]!;
      written = `-${letter}`;
      const long = shorts.get(letter);
      if (long === undefined) {
        // A long flag written with one dash is the likely slip.
        const asLong = Object.hasOwn(spec, arg.slice(1))
          ? `; did you mean "--${arg.slice(1)}"?`
          : "";
        throw new UsageError(`Unknown option "${written}"${asLong}`);
      }
      name = long;
      if (arg.length > 2) inline = arg.slice(arg[2] === "=" ? 3 : 2);
    } else {
      positionals.push(arg);
      continue;
    }
    const flag = spec[name]!;
    let value: string | number | boolean;
    if (flag.type === "boolean") {
      if (inline !== undefined) {
        throw new UsageError(`Option "${written}" takes no value`);
      }
      value = true;
    } else {
      let raw = inline;
      if (raw === undefined) {
        raw = args[i + 1];
        if (raw === undefined) {
          throw new UsageError(`Option "${written}" needs a value`);
        }
        if (isFlag(raw)) {
          throw new UsageError(
            `Option "${written}" needs a value, not the option "${raw}" ` +
              `(write ${written}=${raw} if you mean that value)`,
          );
        }
        i++;
      }
      value = flag.type === "string" ? raw : parseNumber(name, flag, raw);
      if (flag.type === "string" && raw === "-" && flag.dash !== undefined) {
        if (flag.dash !== "stdout") {
          throw new UsageError(
            `Option "--${name}" takes a file, not stdout ("-"): ${flag.dash.refused}; write ./- for a file named "-"`,
          );
        }
        if (name in flags) {
          throw new UsageError(`Option "--${name}" is given twice`);
        }
        // Stdout is where the output goes without the flag.
        flags[name] = undefined;
        continue;
      }
    }
    if (flag.type !== "boolean" && flag.repeatable) {
      ((flags[name] ??= []) as unknown[]).push(value);
    } else {
      if (name in flags) {
        throw new UsageError(`Option "--${name}" is given twice`);
      }
      flags[name] = value;
    }
  }
  for (const [name, flag] of Object.entries(spec)) {
    if (name in flags) {
      if (flags[name] === undefined) delete flags[name];
      continue;
    }
    if (flag.type === "boolean") flags[name] = false;
    else if (flag.repeatable) flags[name] = [];
    else if (flag.default !== undefined) flags[name] = flag.default;
  }
  return { flags: flags as Flags<S>, positionals };
}

/** Splits `text` into lines of at most `width` characters, at spaces. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  if (line !== "") lines.push(line);
  return lines;
}

/**
 * The help text of one flag's value and default: `(default: 8)`, from the
 * declared default or its `defaultText`.
 *
 * @param flag The declaration.
 * @returns The text, or `undefined` when there is no default to show.
 *
 * @example
 * ```ts
 * import { defaultOf } from "./flags.ts";
 * if (defaultOf({ type: "integer", default: 8, help: "" }) !== "8") throw new Error();
 * ```
 */
export function defaultOf(flag: FlagSpec): string | undefined {
  if (flag.defaultText !== undefined) return flag.defaultText;
  if (flag.type === "boolean") return undefined;
  return flag.default === undefined ? undefined : String(flag.default);
}

/**
 * The "Options:" lines of a help text, made from the declarations: each
 * flag, its value placeholder, its help wrapped to the width, whether it
 * repeats, and its default.
 *
 * @param spec The flags.
 * @param width The columns to fit.
 * @returns The lines, without the heading.
 *
 * @example
 * ```ts
 * import { formatFlags } from "./flags.ts";
 * const lines = formatFlags({
 *   out: { type: "string", value: "FILE", short: "o", help: "Write Scores to FILE" },
 *   grace: { type: "number", value: "SECONDS", default: 10, help: "Grace" },
 * });
 * if (lines[0] !== "  -o, --out FILE       Write Scores to FILE") throw new Error(lines[0]);
 * if (!lines[1]?.endsWith("Grace (default: 10)")) throw new Error(lines[1]);
 * ```
 */
export function formatFlags(spec: FlagSpecs, width = 78): string[] {
  // Long names line up under each other when some flags have a short one.
  const pad = Object.values(spec).some((f) => f.short !== undefined)
    ? "    "
    : "";
  const left = Object.entries(spec).map(([name, flag]) => {
    const names = flag.short !== undefined
      ? `-${flag.short}, --${name}`
      : `${pad}--${name}`;
    return flag.type === "boolean"
      ? names
      : `${names} ${flag.value ?? (flag.type === "string" ? "VALUE" : "N")}`;
  });
  const column = 2 + Math.max(18, ...left.map((l) => l.length)) + 2;
  return Object.values(spec).flatMap((flag, i) => {
    const shown = defaultOf(flag);
    const notes = [
      ...(flag.type !== "boolean" && flag.repeatable ? ["repeatable"] : []),
      ...(shown !== undefined ? [`default: ${shown}`] : []),
    ];
    const text = notes.length === 0
      ? flag.help
      : `${flag.help} (${notes.join("; ")})`;
    const body = wrap(text, Math.max(20, width - column));
    return body.map((line, j) =>
      (j === 0 ? `  ${left[i]}`.padEnd(column) : " ".repeat(column)) + line
    );
  });
}
