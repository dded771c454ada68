/**
 * Streams of lines and NDJSON, sinks that write them, and the ordered
 * concurrent map the stages are built on.
 *
 * @example Parse NDJSON lines from bytes
 * ```ts
 * import { LineStream, NdjsonParseStream } from "./mod.ts";
 * const parsed = await Array.fromAsync(
 *   ReadableStream.from([new TextEncoder().encode('{"a":1}\n{"a":2}\n')])
 *     .pipeThrough(new LineStream())
 *     .pipeThrough(new NdjsonParseStream()),
 * );
 * if (parsed.length !== 2 || parsed[1]?.line !== 2) throw new Error("unexpected");
 * ```
 *
 * @module
 */

export type { Line, LineStreamOptions } from "./line_stream.ts";
export { LineBatchStream, LineStream } from "./line_stream.ts";
export type { ByteWriter, NdjsonSinkOptions, ParsedLine } from "./ndjson.ts";
export { ndjsonBatchSink, NdjsonParseStream, ndjsonSink } from "./ndjson.ts";
export type { ConcurrentMapOptions } from "./concurrent_map.ts";
export {
  concurrentBatches,
  concurrentFlatMap,
  concurrentMap,
  concurrentMapBatches,
  concurrentMapTasks,
} from "./concurrent_map.ts";
export { stdoutWriter } from "./stdout.ts";
export {
  decodeUtf8,
  readUtf8File,
  TextTooLongError,
  Utf8Error,
} from "./utf8.ts";
export { inertJson } from "./inert_json.ts";
export { namedReads } from "./named_reads.ts";
export type { OpenOutOptions, OutFile } from "./out_file.ts";
export { openOut } from "./out_file.ts";
export type { NamedPath } from "./same_file.ts";
export { refuseSameFile, refuseStdoutOnInput } from "./same_file.ts";
export type { FileWriting, ReplaceFileOptions } from "./replace_file.ts";
export { removeStaleTemps, replaceFile } from "./replace_file.ts";
