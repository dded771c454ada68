/**
 * Errors a user can cause, and how they read: the bottom layer every other
 * one may use.
 *
 * An error a user can cause (a bad config, dataset, flag or file) carries the
 * exit code the command line should end with, so `main()` maps any error
 * without knowing its class. Such errors keep subclassing the nearest
 * built-in (a `ConfigError` is a `SyntaxError`) and add `exitCode`.
 *
 * @module
 */

/**
 * The exit code of a usage, config or input error.
 *
 * @example Map what was thrown to the command line's exit code
 * ```ts
 * import { exitCodeOf, INPUT_EXIT_CODE, InputError } from "./mod.ts";
 * const code = exitCodeOf(new InputError('Unknown flag "--concurency"')) ?? 1;
 * if (code !== INPUT_EXIT_CODE || code !== 2) throw new Error("unexpected");
 * ```
 */
export const INPUT_EXIT_CODE = 2;

/**
 * An error in what the user gave (a flag, a file, a record): its message is
 * for people, and the command line exits with {@linkcode INPUT_EXIT_CODE}.
 *
 * @example
 * ```ts
 * import { exitCodeOf, InputError } from "./errors.ts";
 * const error = new InputError('Cannot read "suite.yaml": no such file');
 * if (exitCodeOf(error) !== 2) throw new Error("unexpected");
 * ```
 */
export class InputError extends Error {
  /** The exit code the command line ends with. */
  readonly exitCode: number = INPUT_EXIT_CODE;

  /**
   * Makes the error.
   *
   * @param message What is wrong, and where.
   * @param options The cause, if any.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "InputError";
  }
}

/**
 * The exit code an error asks for: its `exitCode` when it is an error a user
 * can cause (any class that sets one), else `undefined` (a bug).
 *
 * @param error What was thrown.
 * @returns The exit code, or `undefined`.
 *
 * @example
 * ```ts
 * import { exitCodeOf } from "./errors.ts";
 * class BadFlag extends TypeError {
 *   readonly exitCode = 2;
 * }
 * if (exitCodeOf(new BadFlag("x")) !== 2) throw new Error("unexpected");
 * if (exitCodeOf(new Error("bug")) !== undefined) throw new Error("unexpected");
 * ```
 */
export function exitCodeOf(error: unknown): number | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { exitCode?: unknown }).exitCode;
  return typeof code === "number" && Number.isInteger(code) ? code : undefined;
}

/**
 * The message of anything thrown.
 *
 * @param error What was thrown.
 * @returns Its message, or its text.
 *
 * @example
 * ```ts
 * import { messageOf } from "./errors.ts";
 * if (messageOf(new Error("x")) !== "x" || messageOf(3) !== "3") throw new Error("unexpected");
 * ```
 */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Whether the operating system threw `error`, not a bug: one of Deno's
 * `Deno.errors` classes, or a plain `Error` carrying an errno (ENOSPC, EROFS,
 * EDQUOT, EIO and EMFILE have no class of their own: their `code` is set and
 * their message ends `(os error N)`).
 *
 * @param error What was thrown.
 * @returns Whether it is the system's.
 *
 * @example
 * ```ts
 * import { isOsError } from "./errors.ts";
 * if (!isOsError(new Deno.errors.NotFound("x")) || isOsError(new TypeError("x"))) throw new Error();
 * ```
 */
export function isOsError(error: unknown): boolean {
  if (Object.values(Deno.errors).some((E) => error instanceof E)) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return (typeof code === "string" && /^E[A-Z0-9]+$/.test(code)) ||
    /\(os error \d+\)/.test(error.message);
}

/**
 * Whether reading a file threw `error`, not a bug: the system's (see
 * {@linkcode isOsError}), or a strict decoder's refusal of bytes that are not
 * UTF-8.
 *
 * @param error What was thrown.
 * @returns Whether {@linkcode osErrorText} can name it for a user.
 *
 * @example
 * ```ts
 * import { isReadError } from "./errors.ts";
 * let thrown: unknown;
 * try {
 *   new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array([0xff]));
 * } catch (error) {
 *   thrown = error;
 * }
 * if (!isReadError(thrown) || isReadError(new RangeError("x"))) throw new Error();
 * ```
 */
export function isReadError(error: unknown): boolean {
  return isOsError(error) || isNotUtf8(error);
}

function isNotUtf8(error: unknown): boolean {
  return error instanceof TypeError &&
    /invalid utf-8|did not contain valid UTF-8|encoded data is not valid/i.test(
      error.message,
    );
}

/**
 * Whether opening a path threw `error` because of the path itself, which
 * {@linkcode osErrorText} names for a user: it is not there, not readable,
 * a folder, goes through a file as if it were a folder (`x.jsonl/y`),
 * through symlinks that loop, or has a name too long for the system.
 * Anything else (a full disk, a bug) is not.
 *
 * @param error What opening, reading or writing the path threw.
 * @returns Whether the path cannot be opened.
 *
 * @example
 * ```ts
 * import { cannotOpen } from "./errors.ts";
 * if (!cannotOpen(new Deno.errors.IsADirectory("x")) || cannotOpen(new Deno.errors.BrokenPipe("x"))) {
 *   throw new Error("unexpected");
 * }
 * ```
 */
export function cannotOpen(error: unknown): boolean {
  return error instanceof Deno.errors.NotFound ||
    error instanceof Deno.errors.PermissionDenied ||
    error instanceof Deno.errors.IsADirectory ||
    error instanceof Deno.errors.NotADirectory ||
    error instanceof Deno.errors.FilesystemLoop ||
    isNameTooLong(error);
}

// ENAMETOOLONG has no class of its own: a plain Error with its code.
function isNameTooLong(error: unknown): boolean {
  return error instanceof Error &&
    (error as { code?: unknown }).code === "ENAMETOOLONG";
}

/**
 * A file-system error in a few plain words, without the OS's decoration.
 *
 * @param error What `Deno.readFile` and friends threw.
 * @returns E.g. `no such file`.
 *
 * @example
 * ```ts
 * import { osErrorText } from "./errors.ts";
 * if (osErrorText(new Deno.errors.NotFound("x")) !== "no such file") throw new Error("unexpected");
 * ```
 */
export function osErrorText(error: unknown): string {
  if (error instanceof Deno.errors.NotFound) return "no such file";
  if (error instanceof Deno.errors.PermissionDenied) return "permission denied";
  if (error instanceof Deno.errors.IsADirectory) return "it is a folder";
  if (error instanceof Deno.errors.NotADirectory) {
    return "a part of its path is a file, not a folder";
  }
  if (error instanceof Deno.errors.FilesystemLoop) {
    return "its symlinks lead back to themselves (a loop)";
  }
  if (isNameTooLong(error)) {
    return "its name, or a folder's in its path, is too long";
  }
  if (isNotUtf8(error)) return "not valid UTF-8";
  return messageOf(error);
}

/**
 * Why a file could not be created for writing, in words: as
 * {@linkcode osErrorText}, except that a missing file there means its folder
 * is missing, which is what the user must fix.
 *
 * @param error What opening it threw.
 * @param path The file.
 * @returns E.g. `no such folder "out"`.
 *
 * @example
 * ```ts
 * import { writeErrorText } from "./errors.ts";
 * const text = writeErrorText(new Deno.errors.NotFound(), "out/s.ndjson");
 * if (text !== 'no such folder "out"') throw new Error(text);
 * ```
 */
export function writeErrorText(error: unknown, path: string): string {
  if (!(error instanceof Deno.errors.NotFound)) return osErrorText(error);
  const slash = path.lastIndexOf("/");
  return `no such folder ${
    JSON.stringify(slash < 0 ? "." : slash === 0 ? "/" : path.slice(0, slash))
  }`;
}

/**
 * The exit code of an output that could not be written: a full or read-only
 * disk, a quota, a file grown past its limit.
 *
 * @example
 * ```ts
 * import { exitCodeOf, OUTPUT_EXIT_CODE, OutputError } from "./mod.ts";
 * if (exitCodeOf(new OutputError("Cannot write stdout: no space left on device")) !== OUTPUT_EXIT_CODE) {
 *   throw new Error("unexpected");
 * }
 * ```
 */
export const OUTPUT_EXIT_CODE = 3;

/**
 * An output (stdout, `--out`, `--record`, a sidecar) that could not be
 * written: its message names it and says why in plain words, and the command
 * line exits with {@linkcode OUTPUT_EXIT_CODE}, so CI tells it from a gate
 * that failed (1).
 *
 * @example
 * ```ts
 * import { exitCodeOf, OutputError } from "./errors.ts";
 * const error = new OutputError('Cannot write --out "/dev/full": no space left on device (ENOSPC)');
 * if (exitCodeOf(error) !== 3) throw new Error("unexpected");
 * ```
 */
export class OutputError extends Error {
  /** The exit code the command line ends with. */
  readonly exitCode: number = OUTPUT_EXIT_CODE;

  /**
   * Makes the error.
   *
   * @param message Which output, and why it cannot be written.
   * @param options The cause, if any.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "OutputError";
  }
}

/** What the errno codes of a failed write mean, in plain words. */
const WRITE_FAILURES: Readonly<Record<string, string>> = {
  ENOSPC: "no space left on device",
  EDQUOT: "disk quota exceeded",
  EROFS: "read-only file system",
  EFBIG: "file too large",
  EIO: "input/output error",
};

/**
 * The {@linkcode OutputError} a failed write means, recognised by its errno
 * code (Deno throws ENOSPC, EROFS, EDQUOT, EFBIG and EIO as plain `Error`s
 * with `code` set); `undefined` for anything else, a closed pipe included
 * (`Deno.errors.BrokenPipe`: the reader went away, which is not a failure).
 *
 * @param error What a write threw.
 * @param output The output as messages name it: `stdout`, `--out "F"`.
 * @returns The error to throw, or `undefined`.
 *
 * @example
 * ```ts
 * import { outputErrorOf } from "./errors.ts";
 * const full = Object.assign(new Error("No space left on device (os error 28)"), { code: "ENOSPC" });
 * const error = outputErrorOf(full, "stdout");
 * if (error?.message !== "Cannot write stdout: no space left on device (ENOSPC)") throw new Error(error?.message);
 * if (outputErrorOf(new Deno.errors.BrokenPipe("x"), "stdout") !== undefined) throw new Error("unexpected");
 * ```
 */
export function outputErrorOf(
  error: unknown,
  output: string,
): OutputError | undefined {
  if (error instanceof OutputError) return error;
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== "string" || !Object.hasOwn(WRITE_FAILURES, code)) {
    return undefined;
  }
  return new OutputError(
    `Cannot write ${output}: ${WRITE_FAILURES[code]} (${code})`,
    { cause: error },
  );
}
