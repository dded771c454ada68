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
import { costOf, type Prices } from "../net/budget.ts";

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
  dir?: string | undefined;
  /**
   * The largest trace file read, in bytes: a bigger one is that unit's
   * target error, so a case naming a huge file costs no memory.
   * @default {67108864}
   */
  maxBytes?: number | undefined;
  /**
   * The prices (USD per million tokens) the trace's token usage is priced
   * at, as EvalCore's trace target prices it (the tokens its spans read
   * from or wrote to a prompt cache at `cached_input_per_1m` and
   * `cache_write_per_1m`, when given): the unit's `target` then records
   * `cost_usd`, which the `cost` scorer reads. What a recorded trace cost
   * was spent then, so no budget is charged.
   * @default {undefined: no cost_usd}
   */
  cost?: Prices | undefined;
}

/** 64 MiB: far beyond any recorded trace, far below a machine's memory. */
const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

/**
 * A target that reads each case's recorded trace, in EvalCore's native
 * format or as an OpenTelemetry JSON export (see
 * {@linkcode import("./trace_format.ts").parseTrace}). The unit's output is
 * the trace's final answer (so text scorers grade the answer), or, when it
 * has none, EvalCore's trajectory JSON; its `tool_calls` are the trace's
 * steps. `target` records the trace's path and format, and, from the spans,
 * `usage` (summed tokens) and `latency_ms`. A case without a `trace`, or a
 * trace that cannot be read, is a target error naming the file and field:
 * that unit's Scores are blocked, the run goes on. The dataset is data, not
 * a config: a `trace` is read only when it is a regular file inside the
 * dataset's folder once symlinks are resolved (never `/etc/passwd`,
 * `../../.env`, `/proc/self/environ`, `/dev/zero` or a FIFO), and no bigger
 * than `maxBytes`.
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
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  // Resolved once, on the first case: the folder every trace must be in.
  let root: Promise<string> | undefined;
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
      const file = dir === "." ? named : `${dir}/${named}`;
      root ??= Deno.realPath(dir);
      const text = await readTrace(file, named, await root, maxBytes);
      const trace = parseTrace(text, file);
      const info: Record<string, unknown> = {
        trace: file,
        trace_format: trace.format,
      };
      if (trace.latency_ms !== undefined) info.latency_ms = trace.latency_ms;
      if (trace.usage !== undefined) {
        const { prompt_tokens, completion_tokens, prompt_tokens_details } =
          trace.usage;
        info.usage = {
          prompt_tokens,
          completion_tokens,
          total_tokens: prompt_tokens + completion_tokens,
          ...(prompt_tokens_details !== undefined
            ? { prompt_tokens_details }
            : {}),
        };
        const usd = options.cost === undefined
          ? undefined
          : costOf(info.usage, options.cost);
        if (usd !== undefined) info.cost_usd = usd;
      }
      return {
        output: trace.final_output ?? trajectoryJson(trace.tool_calls),
        info,
        tool_calls: trace.tool_calls,
      };
    },
  };
}

/**
 * The text of the trace file `file` (the case's `named`, resolved against
 * the dataset's folder `root`), refused unless it is a regular file under
 * `root` of at most `maxBytes`: a dataset must not read the machine's files
 * into Scores, nor hang on a FIFO or fill memory from `/dev/zero`.
 */
async function readTrace(
  file: string,
  named: string,
  root: string,
  maxBytes: number,
): Promise<string> {
  const outside = () =>
    new Error(
      `The case's "trace" ${
        JSON.stringify(named)
      } is outside the dataset's folder ${
        JSON.stringify(root)
      }: a trace is read from that folder or below it`,
    );
  // Lexically first, so that a path outside is refused without touching it.
  if (named.startsWith("/") || named.includes("\0")) throw outside();
  let depth = 0;
  for (const part of named.split("/")) {
    if (part === "..") depth--;
    else if (part !== "" && part !== ".") depth++;
    if (depth < 0) throw outside();
  }
  const cannot = (why: string) =>
    new Error(
      `Cannot read the case's "trace" file ${JSON.stringify(file)}: ${why}`,
    );
  let real: string;
  let info: Deno.FileInfo;
  try {
    real = await Deno.realPath(file);
    info = await Deno.stat(real);
  } catch (error) {
    throw cannot(osErrorText(error));
  }
  // A symlink in the folder may still point out of it.
  if (!real.startsWith(root.endsWith("/") ? root : `${root}/`)) {
    throw outside();
  }
  if (info.isDirectory) throw cannot("it is a folder");
  if (!info.isFile) throw cannot("it is not a regular file");
  if (info.size > maxBytes) {
    throw cannot(`it is ${info.size} bytes, over the cap of ${maxBytes}`);
  }
  // One byte past the size stat gave: a file that grew since is refused,
  // never read whole.
  const bytes = new Uint8Array(info.size + 1);
  let length = 0;
  try {
    using handle = await Deno.open(real);
    while (length < bytes.length) {
      const n = await handle.read(bytes.subarray(length));
      if (n === null) break;
      length += n;
    }
  } catch (error) {
    throw cannot(osErrorText(error));
  }
  if (length > info.size) throw cannot("it grew while it was read");
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(
      bytes.subarray(0, length),
    );
  } catch (error) {
    throw cannot(osErrorText(error));
  }
}
