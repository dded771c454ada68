/**
 * TypeScript function targets, for library users.
 *
 * @module
 */

import { returnedText } from "../base/terminal.ts";
import type { Case } from "../dataset/case.ts";
import type { Target, TargetContext, TargetResult } from "./target.ts";

/**
 * Wraps a function as a target. It returns the output text, or an object
 * with `output` and `info` to record; throwing is a target error.
 *
 * @param fn The system under test.
 * @returns The target.
 *
 * @example
 * ```ts
 * import { functionTarget } from "./function_target.ts";
 * const t = functionTarget((c) => `echo: ${c.input}`);
 * if ((await t.call({ input: "x" }, {})).output !== "echo: x") throw new Error("unexpected");
 * ```
 */
export function functionTarget(
  fn: (
    testCase: Case,
    context: TargetContext,
  ) => string | TargetResult | Promise<string | TargetResult>,
): Target {
  return {
    call(testCase, context) {
      // A synchronous function stays synchronous: no promise per case.
      const result = fn(testCase, context);
      return result instanceof Promise
        ? result.then(asResult)
        : asResult(result);
    },
  };
}

function asResult(result: string | TargetResult): TargetResult {
  if (typeof result === "string") return { output: result };
  if (typeof result?.output !== "string") {
    throw new TypeError(
      `The target function returned ${
        returnedText(result)
      }: expected the output text, or { output: "…", info? }`,
    );
  }
  return result;
}
