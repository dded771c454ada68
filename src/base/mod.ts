/**
 * The bottom layer: errors a user can cause, which carry the exit code the
 * command line ends with.
 *
 * @module
 */

export { exitCodeOf, INPUT_EXIT_CODE, InputError } from "./errors.ts";
