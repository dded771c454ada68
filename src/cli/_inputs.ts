/**
 * The inputs of a command that reads NDJSON: files named on the command
 * line, in order, `-` for stdin, and stdin when none is named. Lines keep
 * their numbers within their own file, so a message can say where.
 *
 * @module
 */

import { placeOf as placeAt } from "../base/place.ts";
import { InputError, osErrorText } from "../base/errors.ts";
import { LineStream } from "../io/line_stream.ts";
import { namedReads } from "../io/named_reads.ts";
import { NdjsonParseStream, type ParsedLine } from "../io/ndjson.ts";

/** Where a line came from, for messages. */
export interface LineSource {
  /** The input as given: `-` for stdin, or the path. */
  name: string;
  /** The line's number in that input, from 1. */
  line: number;
}

/** The parsed lines of every input, one stream, and where each came from. */
export interface InputLines {
  /** The lines of each input in turn, numbered across all of them. */
  lines: ReadableStream<ParsedLine>;
  /**
   * Where the line of that number came from.
   *
   * @param line A line number as `lines` gives it.
   * @returns Its input and its number there.
   */
  where(line: number): LineSource;
}

/**
 * Opens a named input: `-` is stdin.
 *
 * @param path The path as given.
 * @returns Its bytes; a read that fails is an {@linkcode InputError} naming it.
 * @throws {InputError} When it cannot be opened, naming it and why.
 */
export async function openInput(
  path: string,
): Promise<ReadableStream<Uint8Array>> {
  if (path === "-") return namedReads(Deno.stdin.readable, "-");
  try {
    const file = await Deno.open(path);
    const info = await file.stat();
    if (info.isDirectory) {
      file.close();
      throw new Deno.errors.IsADirectory(path);
    }
    return namedReads(file.readable, path);
  } catch (error) {
    if (error instanceof Error && !(error instanceof InputError)) {
      throw new InputError(
        `Cannot open ${JSON.stringify(path)}: ${osErrorText(error)}`,
      );
    }
    throw error;
  }
}

/**
 * Checks, before any work, that every named input can be read: a command
 * that scores its inputs must not stop at a missing third file after the
 * first two were read but before their Scores were written.
 *
 * @param paths The inputs as given (`-` is stdin).
 * @throws {InputError} For the first that cannot be opened, naming it and why.
 */
export async function checkInputs(paths: readonly string[]): Promise<void> {
  for (const path of paths) {
    if (path !== "-") await (await openInput(path)).cancel();
  }
}

/**
 * The parsed NDJSON lines of the inputs, in order: stdin when `paths` is
 * empty. Each file is opened when the one before it has been read, so an
 * unreadable file stops the command only after the files before it.
 *
 * @param paths The inputs as given (`-` is stdin).
 * @param perInput A stage each input's lines go through on their own, with
 *   its numbers (given the input's name, `stdin` or the path, and the input
 *   as given, `-` for stdin).
 * @returns The lines and a way to say where each came from.
 */
export function inputLines(
  paths: readonly string[],
  perInput?: (
    name: string,
    path: string,
  ) => ReadableWritablePair<ParsedLine, ParsedLine>,
): InputLines {
  const names = paths.length === 0 ? ["-"] : [...paths];
  const label = (path: string) => path === "-" ? "stdin" : path;
  const parsed = (readable: ReadableStream<Uint8Array>, path: string) => {
    const lines = readable.pipeThrough(new LineStream()).pipeThrough(
      new NdjsonParseStream(),
    );
    return perInput !== undefined
      ? lines.pipeThrough(perInput(label(path), path))
      : lines;
  };
  if (names.length === 1) {
    // One input: its own numbers, no renumbering.
    const [only] = names as [string];
    return {
      lines: ReadableStream.from((async function* () {
        yield* parsed(await openInput(only), only);
      })()),
      where: (line) => ({ name: only, line }),
    };
  }
  // Each input's first line number across all of them, once it is open.
  const starts: { offset: number; name: string }[] = [];
  async function* all(): AsyncGenerator<ParsedLine> {
    let offset = 0;
    for (const path of names) {
      const readable = await openInput(path);
      starts.push({ offset, name: path });
      let last = 0;
      for await (const entry of parsed(readable, path)) {
        last = entry.line;
        yield { ...entry, line: offset + entry.line };
      }
      // Blank lines at the end are not seen; the next input starts after.
      offset += last;
    }
  }
  return {
    lines: ReadableStream.from(all()),
    where(line) {
      let i = starts.length - 1;
      while (i > 0 && starts[i]!.offset >= line) i--;
      const start = starts[i] ?? { offset: 0, name: "-" };
      return { name: start.name, line: line - start.offset };
    },
  };
}

/**
 * `stdin line 3` or `"scores.jsonl" line 3`, for a message.
 *
 * @param source Where the line came from.
 * @returns The words.
 */
export function placeOf(source: LineSource): string {
  return placeAt(source.name, source.line);
}
