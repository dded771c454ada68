/**
 * The replay target: the output is already in the case, as when scoring the
 * logs of a live system.
 *
 * @module
 */

import type { Target } from "./target.ts";

/**
 * A target that returns each case's recorded `output` field. A case without
 * one is a target error.
 *
 * @returns The target.
 *
 * @example
 * ```ts
 * import { replayTarget } from "./replay_target.ts";
 * if ((await replayTarget().call({ input: "q", output: "a" }, {})).output !== "a") throw new Error("unexpected");
 * ```
 */
export function replayTarget(): Target {
  return {
    timed: false,
    call(testCase) {
      if (typeof testCase.output !== "string") {
        throw new Error('The case has no "output" to replay');
      }
      return { output: testCase.output };
    },
  };
}
