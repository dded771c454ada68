/**
 * Streams of lines and NDJSON, sinks, and the ordered concurrent map the
 * stages are built on.
 *
 * @module
 */

export * from "./line_stream.ts";
export * from "./ndjson.ts";
export * from "./concurrent_map.ts";
export * from "./stdout.ts";
export * from "./out_file.ts";
