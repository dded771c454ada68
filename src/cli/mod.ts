/**
 * The command line's parts.
 *
 * @module
 */

export * from "./args.ts";
