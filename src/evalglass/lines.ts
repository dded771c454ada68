/**
 * evalglass records in a stream of NDJSON lines, as `aggregate` reads stdin:
 * an evalglass `runrecord.json` piped in whole (indented, as evalglass
 * writes it) or as one compact line becomes its Scores.
 *
 * @module
 */

import type { ParsedLine } from "../io/ndjson.ts";
import { INVALID_UTF8, TOO_LONG } from "../io/line_stream.ts";
import { readJsonValues } from "../io/_json_syntax.ts";
import {
  type EvalglassImport,
  fromEvalglass,
  isEvalglassRunRecord,
  scoreLineIn,
} from "./import.ts";

/**
 * Options of {@linkcode evalglassLines}.
 *
 * @example
 * ```ts
 * import type { EvalglassLinesOptions } from "./mod.ts";
 * const seen: string[] = [];
 * const options: EvalglassLinesOptions = { onRecord: (read) => seen.push(read.run_id) };
 * if (typeof options.onRecord !== "function") throw new Error("unexpected");
 * ```
 */
export interface EvalglassLinesOptions {
  /**
   * Called for each evalglass record read, with what it left out.
   * @default {undefined}
   */
  onRecord?: ((read: EvalglassImport, line: number) => void) | undefined;
  /**
   * Given a JSON document over many lines that is not an evalglass record
   * (a baseline file, say): the values to pass on in its place (an `Error`
   * among them is passed on as a malformed line), or `undefined` when the
   * document is not known, which is then a malformed line.
   * @default {undefined}
   */
  onDocument?:
    | ((
      value: unknown,
      line: number,
    ) => Promise<unknown[] | undefined> | unknown[] | undefined)
    | undefined;
  /**
   * The input's name. Ignored: an error line's message names no input, since
   * whoever reads the lines names the input and the line (`"a.json" line 3:
   * ...`), and an `onRecord` callback knows which input it was made for.
   * @default {undefined}
   * @deprecated Ignored; it will be removed in the next major version. Leave
   *   it out: the messages are the same without it.
   */
  source?: string | undefined;
}

/**
 * Replaces each evalglass RunRecord in a stream of parsed NDJSON lines by
 * its Scores, one parsed line each, every other line passing unchanged. An
 * input whose first line is `{` or `[` alone is indented JSON (NDJSON cannot
 * start so): one document, or values one after another as `jq .` prints
 * them, each read when the line that closes it comes.
 *
 * @param options Where to report each record read.
 * @returns The stage.
 *
 * @example An evalglass record piped into the aggregation stage
 * ```ts
 * import { evalglassLines } from "./mod.ts";
 * import { aggregateLines } from "../aggregate/mod.ts";
 * import { LineStream, NdjsonParseStream } from "../io/mod.ts";
 * const record = { run_id: "r1", scorecard: { verdict: { verdict: "informational" }, metrics: [], authority: {} },
 *   scores: [0.2, 0.6].map((value, i) => ({ metric: "m", status: "scored", validity: "valid", value,
 *     evaluator_version: "m@1", example_id: `d#${i + 1}` })), provenance: { dimensions: {} } };
 * const [aggregate] = await Array.fromAsync(
 *   ReadableStream.from([new TextEncoder().encode(JSON.stringify(record, null, 2) + "\n")])
 *     .pipeThrough(new LineStream()).pipeThrough(new NdjsonParseStream())
 *     .pipeThrough(evalglassLines()).pipeThrough(aggregateLines()),
 * );
 * if (aggregate?.n !== 2 || Math.abs(aggregate.mean! - 0.4) > 1e-12) throw new Error("unexpected");
 * ```
 */
export function evalglassLines(
  options: EvalglassLinesOptions = {},
): TransformStream<ParsedLine, ParsedLine> {
  let first = true;
  let document: string[] | undefined;
  let documentLine = 0;
  const expand = (
    value: unknown,
    line: number,
    controller: TransformStreamDefaultController<ParsedLine>,
    text?: string,
  ) => {
    let read: EvalglassImport;
    // A record over many lines: a bad Score is named by its own line.
    let at = line;
    try {
      // The error line names the place; the message need not again.
      read = fromEvalglass(value, "", (i) => {
        if (text !== undefined) at = scoreLineIn(text, i, line);
        return "";
      });
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      controller.enqueue({ line: at, text: "", error: error.message });
      return;
    }
    options.onRecord?.(read, line);
    for (const score of read.scores) {
      controller.enqueue({ line, text: "", value: score });
    }
  };
  const readDocument = async (
    value: unknown,
    line: number,
    text: string,
    controller: TransformStreamDefaultController<ParsedLine>,
  ) => {
    if (isEvalglassRunRecord(value)) {
      return expand(value, line, controller, text);
    }
    const other = await options.onDocument?.(value, line);
    if (other !== undefined) {
      for (const v of other) {
        controller.enqueue(
          v instanceof Error
            ? { line, text: "", error: v.message }
            : { line, text: "", value: v },
        );
      }
      return;
    }
    // Scores indented (`jq .`), or in a list (`jq -s .`): each passed on.
    if (Array.isArray(value) || isScoreLike(value)) {
      for (const v of Array.isArray(value) ? value : [value]) {
        controller.enqueue({ line, text: "", value: v });
      }
      return;
    }
    controller.enqueue({
      line,
      text: text.trimStart().split("\n", 1)[0]!,
      error:
        "A JSON document that is not an evalglass RunRecord (expected NDJSON: one JSON object per line)",
    });
  };
  // An indented input is read a value at a time as jq lays it out: a value
  // opens with `{` or `[` alone on a line and closes with `}` or `]` alone
  // at the line's start. Each is parsed when it closes, so the input is
  // never held whole. A value that does not parse so (a layout that puts
  // nested brackets at the start of a line, a broken value) sends the rest
  // of the input to the whole-text reader, which names where it breaks.
  let indented = false;
  let open: { lines: string[]; line: number; closer: string } | undefined;
  // Lines of the indented input that could not be read (not UTF-8, too
  // long): their text is the lenient decoding, so the value they stand in
  // is not taken as read; each is a malformed line, as in NDJSON.
  let unread: ParsedLine[] = [];
  const unreadable = (parsed: ParsedLine) =>
    parsed.error !== undefined &&
    (parsed.error === INVALID_UTF8 || parsed.error.startsWith(TOO_LONG));
  const opener = (text: string) => {
    const t = text.trim();
    return t === "{" ? "}" : t === "[" ? "]" : undefined;
  };
  const readRest = (lines: string[], line: number) => {
    document = lines;
    documentLine = line;
    open = undefined;
  };
  return new TransformStream({
    transform(parsed, controller) {
      if (document !== undefined) {
        if (unreadable(parsed)) unread.push(parsed);
        return void document.push(parsed.text);
      }
      if (open !== undefined) {
        if (unreadable(parsed)) unread.push(parsed);
        open.lines.push(parsed.text);
        if (parsed.text !== open.closer) return;
        if (unread.length > 0) {
          // The value is not read: its unreadable lines say why.
          for (const bad of unread) controller.enqueue(bad);
          unread = [];
          open = undefined;
          return;
        }
        const text = open.lines.join("\n");
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch (error) {
          // Read again by the whole-text reader, which says where.
          if (!(error instanceof SyntaxError)) throw error;
          return readRest(open.lines, open.line);
        }
        const line = open.line;
        open = undefined;
        return readDocument(value, line, text, controller);
      }
      const isFirst = first;
      first = false;
      if (isFirst || indented) {
        const closer = parsed.error !== undefined
          ? opener(parsed.text)
          : undefined;
        if (closer !== undefined) {
          indented = true;
          open = { lines: [parsed.text], line: parsed.line, closer };
          return;
        }
        // A list whose first item opens on its line (`[ {`, as Jackson and
        // Gson lay one out, then `}, {` between items): no NDJSON line of
        // Scores starts with `[` and fails to parse, so it is read whole.
        if (
          isFirst && parsed.error !== undefined && !unreadable(parsed) &&
          parsed.text.trimStart().startsWith("[")
        ) {
          indented = true;
          return readRest([parsed.text], parsed.line);
        }
        if (indented) {
          // A value on one line between indented ones (`jq .` of a number).
          if (parsed.error === undefined) {
            return readDocument(
              parsed.value,
              parsed.line,
              parsed.text,
              controller,
            );
          }
          return readRest([parsed.text], parsed.line);
        }
      }
      if (isEvalglassRunRecord(parsed.value)) {
        return expand(parsed.value, parsed.line, controller);
      }
      // A list on one line (`jq -sc .`, or `jq -s` selecting nothing: `[]`)
      // holds Scores as `jq -s .`'s indented one does: no Score is a list.
      if (Array.isArray(parsed.value)) {
        for (const value of parsed.value) {
          controller.enqueue({ line: parsed.line, text: "", value });
        }
        return;
      }
      controller.enqueue(parsed);
    },
    async flush(controller) {
      // A value left open: read whole, to say where it breaks.
      if (open !== undefined) readRest(open.lines, open.line);
      // Named first, the values read whole after them: the exit says the
      // input was not read whole.
      for (const bad of unread) controller.enqueue(bad);
      if (document === undefined) return;
      const text = document.join("\n");
      // One document (an evalglass record, a baseline, `jq -s .` output) or
      // several one after another (`jq .` output): each read whole.
      for (const read of readJsonValues(text)) {
        const line = documentLine + read.line - 1;
        if (read.broken === undefined) {
          await readDocument(read.value, line, read.text, controller);
          continue;
        }
        // Named by the line it breaks on, as an editor shows it.
        const { column, problem } = read.broken;
        controller.enqueue({
          line: documentLine + read.broken.line - 1,
          text: read.text.split("\n", 1)[0]!,
          error: `Cannot parse the JSON document that starts on line ${line}${
            column === undefined ? "" : `, at column ${column}`
          }: ${problem}`,
        });
      }
    },
  });
}

/** An object with a `metric`: a Score, or one the Score check names the faults of. */
function isScoreLike(value: unknown): boolean {
  return typeof value === "object" && value !== null &&
    Object.hasOwn(value, "metric");
}
