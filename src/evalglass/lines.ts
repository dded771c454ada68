/**
 * evalglass records in a stream of NDJSON lines, as `aggregate` reads stdin:
 * an evalglass `runrecord.json` piped in whole (indented, as evalglass
 * writes it) or as one compact line becomes its Scores.
 *
 * @module
 */

import type { ParsedLine } from "../io/ndjson.ts";
import { jsonSyntaxPlace } from "../io/_json_syntax.ts";
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
  onRecord?: (read: EvalglassImport, line: number) => void;
  /**
   * Given a JSON document over many lines that is not an evalglass record
   * (a baseline file, say): the values to pass on in its place (an `Error`
   * among them is passed on as a malformed line), or `undefined` when the
   * document is not known, which is then a malformed line.
   * @default {undefined}
   */
  onDocument?: (
    value: unknown,
    line: number,
  ) => Promise<unknown[] | undefined> | unknown[] | undefined;
  /**
   * Names the input in error messages.
   * @default {"stdin"}
   */
  source?: string;
}

/**
 * Replaces each evalglass RunRecord in a stream of parsed NDJSON lines by
 * its Scores, one parsed line each, every other line passing unchanged. An
 * input whose first line is `{` alone is one indented JSON document: it is
 * gathered and read whole at the end (NDJSON cannot start so).
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
  const source = options.source ?? "stdin";
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
      read = fromEvalglass(value, `${source} line ${line}`, (i) => {
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
  return new TransformStream({
    transform(parsed, controller) {
      if (document !== undefined) return void document.push(parsed.text);
      const isFirst = first;
      first = false;
      if (isFirst && parsed.error !== undefined && parsed.text.trim() === "{") {
        document = [parsed.text];
        documentLine = parsed.line;
        return;
      }
      if (isEvalglassRunRecord(parsed.value)) {
        return expand(parsed.value, parsed.line, controller);
      }
      controller.enqueue(parsed);
    },
    async flush(controller) {
      if (document === undefined) return;
      const text = document.join("\n");
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        if (!(error instanceof SyntaxError)) throw error;
        // Named by the line it breaks on, as an editor shows it.
        const place = jsonSyntaxPlace(text);
        controller.enqueue({
          line: place === undefined
            ? documentLine
            : place.line + documentLine - 1,
          text: document[0]!,
          error: place === undefined
            ? `Cannot parse the JSON document that starts on line ${documentLine}`
            : `Cannot parse the JSON document that starts on line ${documentLine}, at column ${place.column}: ${place.problem}`,
        });
        return;
      }
      if (isEvalglassRunRecord(value)) {
        return expand(value, documentLine, controller, text);
      }
      const other = await options.onDocument?.(value, documentLine);
      if (other !== undefined) {
        for (const v of other) {
          controller.enqueue(
            v instanceof Error
              ? { line: documentLine, text: "", error: v.message }
              : { line: documentLine, text: "", value: v },
          );
        }
        return;
      }
      controller.enqueue({
        line: documentLine,
        text: document[0]!,
        error:
          "A JSON document that is not an evalglass RunRecord (expected NDJSON: one JSON object per line)",
      });
    },
  });
}
