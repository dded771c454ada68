/**
 * CSV read as a stream through `csv-parse` (RFC 4180: quoted fields with
 * commas, doubled quotes and line breaks; a BOM; CRLF, LF or CR line ends).
 * Only `dataset.ts` loads this module, and only for a CSV dataset, so that no
 * other run pays for the library (or the Node layer it brings).
 *
 * @module
 */

import { CsvError, parse } from "csv-parse/stream";

/** One CSV record: its fields and the 1-based line it starts on. */
export interface CsvRecord {
  /** The fields, unquoted. */
  fields: string[];
  /** The physical line of the file the record starts on. */
  line: number;
}

/**
 * Makes the error for a CSV that cannot be read: `line` is where the record
 * that fails starts, or `undefined` for the file as a whole. `before` holds
 * the records read before it that were not handed on yet (the header, when
 * the failure comes in the first read), which may say more than the failure
 * (a header that is one column of fields separated by `;`).
 */
export type CsvFailure = (
  line: number | undefined,
  detail: string,
  before: readonly CsvRecord[],
) => Error;

/** The longest record read, as for a JSONL line: beyond it, most likely an unclosed quote. */
export const MAX_RECORD_BYTES = 32 * 1024 * 1024;

/** What a `csv-parse` error code means, in words that say how to fix it. */
function explain(error: CsvError, max: number): string {
  switch (error.code) {
    case "CSV_MAX_RECORD_SIZE":
      return `the record is longer than ${max} bytes (an unclosed quote?)`;
    case "CSV_QUOTE_NOT_CLOSED":
      return "a quoted field has an unclosed quote";
    case "CSV_INVALID_CLOSING_QUOTE":
      return "a quoted field's closing quote is followed by more text; " +
        'write a quote inside a quoted field as ""';
    case "INVALID_OPENING_QUOTE":
      return "a field that is not quoted holds a quote; " +
        'quote the field and write the quote as ""';
    default:
      return error.message;
  }
}

/** The line breaks inside a record's fields: quoted CRLF, LF or CR. */
function breaksIn(fields: readonly string[]): number {
  let n = 0;
  for (const field of fields) {
    if (field.indexOf("\n") < 0 && field.indexOf("\r") < 0) continue;
    for (let i = 0; i < field.length; i++) {
      const c = field.charCodeAt(i);
      if (c === 10) n++;
      else if (c === 13) {
        n++;
        if (field.charCodeAt(i + 1) === 10) i++;
      }
    }
  }
  return n;
}

/** The line ends in `bytes` as the reader takes them: CRLF, LF or CR. */
function lineEnds(bytes: Uint8Array): number {
  let n = 0;
  // Most files end lines with LF alone: the native search, not a loop.
  if (bytes.indexOf(0x0d) < 0) {
    for (let i = bytes.indexOf(0x0a); i >= 0; i = bytes.indexOf(0x0a, i + 1)) {
      n++;
    }
    return n;
  }
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b === 0x0a || (b === 0x0d && bytes[i + 1] !== 0x0a)) n++;
  }
  return n;
}

/** Where the last line end (LF or CR) of `bytes` is, or -1. */
function lastLineEnd(bytes: Uint8Array): number {
  return Math.max(bytes.lastIndexOf(0x0a), bytes.lastIndexOf(0x0d));
}

/**
 * Where the first byte that is not UTF-8 is, in bytes known to hold one:
 * the shortest start that a decoder refuses, found by halves.
 */
function firstBadByte(bytes: Uint8Array): number {
  let lo = 0;
  let hi = bytes.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    try {
      // A start cut within a character is not refused: it may go on.
      new TextDecoder("utf-8", { fatal: true }).decode(
        bytes.subarray(0, mid + 1),
        { stream: true },
      );
      lo = mid + 1;
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
      hi = mid;
    }
  }
  return lo;
}

/**
 * Reads CSV bytes as batches of records (the records each read completes),
 * the header row included as the first record. Empty lines are skipped. The
 * file is read as the batches are pulled: memory holds one read's worth of
 * records, however large the file.
 *
 * @param bytes The file's bytes.
 * @param fail Makes the error for a record that cannot be parsed, or for a
 * file that is not UTF-8.
 * @param maxRecordBytes The longest record: memory stays bounded even when a
 * quote is never closed.
 * @returns The records, in order.
 */
export function csvRecords(
  bytes: ReadableStream<Uint8Array>,
  fail: CsvFailure,
  maxRecordBytes: number = MAX_RECORD_BYTES,
): ReadableStream<CsvRecord[]> {
  // csv-parse counts a quoted CRLF as two lines, so lines are counted here:
  // a record starts after the previous one's line breaks and the empty lines
  // it skipped since.
  let next = 1;
  let empty = 0;
  let batch: CsvRecord[] = [];
  const startOf = (emptyLines: number) => next + emptyLines - empty;
  // The records are taken as csv-parse makes them, synchronously within each
  // write, and filtered out of its own stream: one batch per read, not one
  // stream step per record.
  const parser = parse({
    bom: true,
    relax_column_count: true, // the caller names the record and both counts
    skip_empty_lines: true,
    record_delimiter: ["\r\n", "\n", "\r"],
    max_record_size: maxRecordBytes,
    on_record(fields: string[], info) {
      const line = startOf(info.empty_lines);
      empty = info.empty_lines;
      next = line + 1 + breaksIn(fields);
      batch.push({ fields, line });
      return null;
    },
  });
  const writer = parser.writable.getWriter();
  const reader = bytes.getReader();
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  // Line ends before the last chunk, and that chunk: a bad byte is named
  // by its line, counted from the line the last chunk left unfinished. A CR
  // alone ends a line too (Excel's "CSV (Macintosh)"), and a CRLF split
  // across two reads is one.
  let breaks = 0;
  let last: Uint8Array = new Uint8Array(0);
  let endsInCr = false;
  const check = (chunk?: Uint8Array) => {
    try {
      utf8.decode(chunk, { stream: chunk !== undefined });
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
      const tail = last.subarray(lastLineEnd(last) + 1);
      const bytes = new Uint8Array(tail.length + (chunk?.length ?? 0));
      bytes.set(tail);
      if (chunk !== undefined) bytes.set(chunk, tail.length);
      // A tail that ends in CR: an LF starting the chunk ends no new line.
      const skip = endsInCr && tail.length === 0 && bytes[0] === 0x0a ? 1 : 0;
      throw fail(
        breaks + 1 + lineEnds(bytes.subarray(skip, firstBadByte(bytes))),
        "not valid UTF-8; save it as UTF-8",
        batch,
      );
    }
    if (chunk === undefined) return;
    breaks += lineEnds(chunk) - (endsInCr && chunk[0] === 0x0a ? 1 : 0);
    endsInCr = chunk[chunk.length - 1] === 0x0d;
    last = chunk;
  };
  const write = async (chunk?: Uint8Array) => {
    // A parse error errors the parser's stream from within the write, which
    // itself succeeds: an errored writer has no desired size.
    try {
      if (chunk === undefined) await writer.close();
      else await writer.write(chunk);
    } catch (error) {
      if (writer.desiredSize !== null) throw error;
    }
    if (writer.desiredSize !== null) return;
    const error = await writer.closed.then(() => undefined, (e: unknown) => e);
    if (!(error instanceof CsvError)) throw error;
    throw fail(
      startOf(Number(error.empty_lines ?? empty)),
      explain(error, maxRecordBytes),
      batch,
    );
  };
  return new ReadableStream<CsvRecord[]>({
    async pull(controller) {
      try {
        while (batch.length === 0) {
          const { value, done } = await reader.read();
          if (done) {
            check();
            await write();
            if (batch.length > 0) controller.enqueue(batch);
            controller.close();
            return;
          }
          check(value);
          await write(value);
        }
      } catch (error) {
        await reader.cancel(error);
        throw error;
      }
      controller.enqueue(batch);
      batch = [];
    },
    async cancel(reason) {
      await reader.cancel(reason);
      await writer.abort(reason);
    },
  });
}
