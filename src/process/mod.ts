/**
 * Child processes: one command per case in its own session, with stdin, stdout
 * and stderr on pipes, a timeout, output caps and nothing left running.
 *
 * @module
 */

export * from "./run_command.ts";
