/**
 * The bottom layer: errors a user can cause, which carry the exit code the
 * command line ends with, and the defaults the stages share.
 *
 * @module
 */

export {
  exitCodeOf,
  INPUT_EXIT_CODE,
  InputError,
  OUTPUT_EXIT_CODE,
  OutputError,
  outputErrorOf,
} from "./errors.ts";
export type { Defaults } from "./defaults.ts";
export { DEFAULTS } from "./defaults.ts";
