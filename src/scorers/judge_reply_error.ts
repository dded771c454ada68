/**
 * The error of a judge's reply that cannot be read.
 *
 * @module
 */

/**
 * A judge's reply that cannot be read: no JSON object, or not the shape the
 * judge was asked for. Its Score is an `error` with the error's `code` as
 * its diagnostic, never a 0.
 *
 * @example
 * ```ts
 * import { JudgeReplyError } from "./judge_reply_error.ts";
 * const e = new JudgeReplyError('the reply has no "claims" list');
 * if (e.code !== "judge.unparsable" || !(e instanceof SyntaxError)) throw new Error("unexpected");
 * ```
 */
export class JudgeReplyError extends SyntaxError {
  /** The diagnostic code of the error Score. */
  readonly code: string;

  /**
   * Creates the error.
   *
   * @param message What is wrong with the reply, for the Score's reason.
   * @param code The diagnostic code.
   */
  constructor(message: string, code = "judge.unparsable") {
    super(message);
    this.name = "JudgeReplyError";
    this.code = code;
  }
}
