/**
 * The `trace` target: nothing is called; each case names a recorded agent
 * trace (`trace:`, relative to the dataset file), and the unit is what the
 * agent did then: its tool calls and its final answer.
 *
 * @module
 */

import { osErrorText } from "../base/errors.ts";
import type { Case } from "../dataset/case.ts";
import type { Target, TargetResult } from "./target.ts";
import { parseTrace, trajectoryJson } from "./trace_format.ts";

/**
 * Options of {@linkcode traceTarget}.
 *
 * @example Traces named relative to the dataset's folder
 * ```ts
 * import { traceTarget, type TraceTargetOptions } from "./mod.ts";
 * const options: TraceTargetOptions = { dir: "examples/agent-trace" };
 * if (traceTarget(options).timed !== false) throw new Error("unexpected");
 * ```
 */
export interface TraceTargetOptions {
  /**
   * The folder a case's relative `trace` path resolves against: the
   * dataset file's.
   * @default {"."}
   */
  dir?: string;
}

/**
 * A target that reads each case's recorded trace, in EvalCore's native
 * format or as an OpenTelemetry JSON export (see
 * {@linkcode import("./trace_format.ts").parseTrace}). The unit's output is
 * the trace's final answer (so text scorers grade the answer), or, when it
 * has none, EvalCore's trajectory JSON; its `tool_calls` are the trace's
 * steps. `target` records the trace's path and format, and, from the spans,
 * `usage` (summed tokens) and `latency_ms`. A case without a `trace`, or a
 * trace that cannot be read, is a target error naming the file and field:
 * that unit's Scores are blocked, the run goes on.
 *
 * @param options The folder trace paths resolve against.
 * @returns The target.
 *
 * @example A native trace, then a case whose trace is missing
 * ```ts
 * import { runTarget, traceTarget } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/t.json`, '{"steps": [{"tool": "search_kb", "input": {"query": "refunds"}}], "final_output": "30 days"}');
 * const examples = [
 *   { example_id: "d#1", line: 1, case: { input: "", trace: "t.json" } },
 *   { example_id: "d#2", line: 2, case: { input: "", trace: "gone.json" } },
 * ];
 * const units = await Array.fromAsync(ReadableStream.from(examples).pipeThrough(runTarget(traceTarget({ dir }))));
 * await Deno.remove(dir, { recursive: true });
 * if (units[0]?.output !== "30 days" || units[0].tool_calls?.[0]?.name !== "search_kb") throw new Error("unexpected");
 * if (!units[1]?.target?.error?.startsWith('Cannot read the case\'s "trace" file')) throw new Error(units[1]?.target?.error);
 * ```
 */
export function traceTarget(options: TraceTargetOptions = {}): Target {
  const dir = options.dir ?? ".";
  return {
    // The agent's time is in the spans, not in reading a file.
    timed: false,
    async call(testCase: Case): Promise<TargetResult> {
      const named = testCase.trace;
      if (named === undefined) {
        throw new Error(
          'The case names no trace file: its "trace" field is missing',
        );
      }
      const file = named.startsWith("/") || dir === "."
        ? named
        : `${dir}/${named}`;
      let text: string;
      try {
        text = await Deno.readTextFile(file);
      } catch (error) {
        throw new Error(
          `Cannot read the case's "trace" file ${JSON.stringify(file)}: ${
            osErrorText(error)
          }`,
        );
      }
      const trace = parseTrace(text, file);
      const info: Record<string, unknown> = {
        trace: file,
        trace_format: trace.format,
      };
      if (trace.latency_ms !== undefined) info.latency_ms = trace.latency_ms;
      if (trace.usage !== undefined) {
        info.usage = {
          ...trace.usage,
          total_tokens: trace.usage.prompt_tokens +
            trace.usage.completion_tokens,
        };
      }
      return {
        output: trace.final_output ?? trajectoryJson(trace.tool_calls),
        info,
        tool_calls: trace.tool_calls,
      };
    },
  };
}
