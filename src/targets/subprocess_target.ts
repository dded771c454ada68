/**
 * The subprocess target: the system under test as a command, the case on
 * stdin, the output text on stdout.
 *
 * @module
 */

import type { Case } from "../dataset/case.ts";
import { refuseMissingScript } from "../process/command.ts";
import { failureMessage, runCommand } from "../process/run_command.ts";
import type { Target } from "./target.ts";
import { decodeUtf8, Utf8Error } from "../io/utf8.ts";

/**
 * Options of {@linkcode subprocessTarget}.
 *
 * @example Run in a folder, with a timeout and an output cap
 * ```ts
 * import { subprocessTarget, type SubprocessTargetOptions } from "./mod.ts";
 * const options: SubprocessTargetOptions = { cwd: "/", timeout: 10, maxOutputBytes: 8 };
 * const target = subprocessTarget("cat >/dev/null; pwd", options);
 * if ((await target.call({ input: "where?" }, {})).output !== "/") throw new Error();
 * const chatty = subprocessTarget("cat >/dev/null; echo 'far too long'", options);
 * if (await Promise.resolve(chatty.call({ input: "q" }, {})).then(() => true, () => false)) throw new Error();
 * ```
 */
export interface SubprocessTargetOptions {
  /**
   * The folder the command runs in.
   * @default {Deno.cwd()}
   */
  cwd?: string | undefined;
  /**
   * Seconds a call may take before its process group is killed.
   * @default {120}
   */
  timeout?: number | undefined;
  /**
   * The most output read from one call; more is a target error.
   * @default {16777216}
   */
  maxOutputBytes?: number | undefined;
  /**
   * The most stderr read from one call; more is a target error.
   * @default {1048576}
   */
  maxStderrBytes?: number | undefined;
  /**
   * What a cap's error names as raising it, when the caps come from a
   * setting of the caller's own (a suite's `max_output_bytes`, a tool's
   * flag) rather than these options.
   * @default {the option of the stream's cap: "maxOutputBytes" or "maxStderrBytes"}
   */
  capSetting?: string | undefined;
  /**
   * What the command reads on stdin: `"json"`, the case as JSON (see
   * {@linkcode targetPayload}), or `"text"`, the case's input alone, with no
   * newline added (a list of chat messages as its JSON text), as EvalCore's
   * `shell` target sends it, so that its scripts run unchanged.
   * @default {"json"}
   */
  stdin?: "json" | "text" | undefined;
}

/**
 * The target's stdin: compact JSON with `context` (when the case has one),
 * `input` and `metadata` (when it has one), in that order. Never `expected`:
 * the system under test must not see the answer.
 *
 * @param testCase The case.
 * @returns The JSON text.
 *
 * @example
 * ```ts
 * import { targetPayload } from "./subprocess_target.ts";
 * if (targetPayload({ input: "q", expected: "secret" }) !== '{"input":"q"}') throw new Error();
 * ```
 */
export function targetPayload(testCase: Case): string {
  return JSON.stringify({
    ...(testCase.context !== undefined ? { context: testCase.context } : {}),
    input: testCase.input,
    ...(testCase.metadata !== undefined ? { metadata: testCase.metadata } : {}),
  });
}

/** The case's input alone: its text, or a list of messages as its JSON text. */
function inputText(testCase: Case): string {
  const input = testCase.input;
  return typeof input === "string" ? input : JSON.stringify(input);
}

const encoder = new TextEncoder();

/**
 * A target that runs `cmd` via `sh -c` once per case, in its own process
 * group, with the case on stdin (see {@linkcode targetPayload}; with
 * `stdin: "text"`, its input alone). Its stdout, without trailing newlines,
 * is the output. A non-zero exit, a timeout, too much output or output that
 * is not UTF-8 is a target error.
 *
 * @param cmd The command.
 * @param options Folder, timeout, output caps and what stdin carries.
 * @returns The target.
 * @throws {InputError} When the script the command names does not exist
 *   (`python3 app.py` without `app.py` in its folder), as a config naming it
 *   is refused.
 *
 * @example
 * ```ts
 * import { subprocessTarget } from "./subprocess_target.ts";
 * const t = subprocessTarget("cat >/dev/null; echo 42");
 * if ((await t.call({ input: "6*7?" }, {})).output !== "42") throw new Error();
 * ```
 *
 * @example An EvalCore shell target's script: the input text on stdin
 * ```ts
 * import { subprocessTarget } from "./subprocess_target.ts";
 * const upper = subprocessTarget("tr a-z A-Z", { stdin: "text" });
 * if ((await upper.call({ input: "hello" }, {})).output !== "HELLO") throw new Error();
 * ```
 */
export function subprocessTarget(
  cmd: string,
  options: SubprocessTargetOptions = {},
): Target {
  const timeout = options.timeout ?? 120;
  const maxOutputBytes = options.maxOutputBytes ?? 16 * 1024 * 1024;
  const maxStderrBytes = options.maxStderrBytes ?? 1024 * 1024;
  const payload = options.stdin === "text" ? inputText : targetPayload;
  refuseMissingScript("subprocessTarget", cmd, options.cwd ?? Deno.cwd());
  return {
    async call(testCase, context) {
      const result = await runCommand(cmd, {
        ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
        stdin: encoder.encode(payload(testCase)),
        timeoutMs: timeout * 1000,
        maxStdoutBytes: maxOutputBytes,
        maxStderrBytes,
        ...(context.signal !== undefined ? { signal: context.signal } : {}),
      });
      const failure = failureMessage(
        "target",
        cmd,
        result,
        timeout,
        { capSetting: options.capSetting },
      );
      if (failure !== undefined || result.kind !== "exited") {
        throw new Error(failure);
      }
      return { output: outputText(cmd, result.stdout) };
    },
  };
}

/**
 * The output: stdout as UTF-8, without trailing newlines. Bytes that are not
 * UTF-8 (a program writing Latin-1 or cp1252) are a target error: read with
 * replacement characters, "café" became "caf\u{fffd}" and was scored as a
 * wrong answer.
 */
function outputText(cmd: string, stdout: Uint8Array): string {
  let text: string;
  try {
    text = decodeUtf8(stdout);
  } catch (error) {
    if (!(error instanceof Utf8Error)) throw error;
    throw new Error(
      `target ${
        JSON.stringify(cmd)
      } printed text that is not UTF-8 on stdout (line ${error.line}): write the output as UTF-8 (a program writing Latin-1 or cp1252?)`,
    );
  }
  return text.replace(/(\r?\n)+$/, "");
}
