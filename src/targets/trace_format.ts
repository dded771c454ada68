/**
 * Recorded agent traces, read into tool calls and a final answer: EvalCore's
 * native trajectory format (`{"steps": [...], "final_output"?}`) and
 * OpenTelemetry JSON exports (`{"resourceSpans": [...]}`) whose spans follow
 * the OTel GenAI or the OpenInference conventions, as EvalCore's
 * trajectory format (v0) maps them.
 *
 * @module
 */

import type { ToolCall } from "../dataset/unit.ts";
import { jsonSyntaxPlace } from "../io/_json_syntax.ts";

/**
 * What a trace says: the tool calls in order, the final answer, and what the
 * spans tell of tokens and time.
 *
 * @example The native format's steps become tool calls
 * ```ts
 * import { parseTrace, type Trace } from "./mod.ts";
 * const trace: Trace = parseTrace('{"steps": [{"tool": "search_kb", "input": {"query": "refunds"}}], "final_output": "30 days"}', "t.json");
 * if (trace.tool_calls[0]?.name !== "search_kb" || trace.final_output !== "30 days") throw new Error("unexpected");
 * ```
 */
export interface Trace {
  /** Which format the file is in. */
  format: "native" | "otel";
  /** The tool calls, in chronological order: the trajectory. */
  tool_calls: ToolCall[];
  /** The agent's final answer, when the trace carries one. */
  final_output?: string;
  /**
   * Tokens summed over the spans (OTel only), when any span counts them,
   * each count of a chain of nested spans taken from the innermost span
   * that has it (the outer ones are the same call again, or a roll-up);
   * of the prompt tokens, those read from and written to the provider's
   * prompt cache, when a span counts them.
   */
  usage?: {
    prompt_tokens: number;
    completion_tokens: number;
    prompt_tokens_details?: {
      cached_tokens?: number;
      cache_write_tokens?: number;
    };
  };
  /** The latest span end less the earliest span start (OTel only), when both exist. */
  latency_ms?: number;
}

/**
 * A trace file that cannot be read as a trace. Its message names the file
 * and the field at fault.
 *
 * @example A step without a tool name
 * ```ts
 * import { parseTrace, TraceError } from "./mod.ts";
 * const error = (() => { try { parseTrace('{"steps": [{"input": {}}]}', "t.json"); } catch (e) { return e; } })();
 * if (!(error instanceof TraceError) || error.field !== "steps[0].tool") throw new Error("unexpected");
 * if (error.message !== 'Invalid trace "t.json": "steps[0].tool" is missing') throw new Error(error.message);
 * ```
 */
export class TraceError extends SyntaxError {
  /** The trace file. */
  readonly file: string;
  /** The field at fault, when one is. */
  readonly field: string | undefined;

  /**
   * Creates the error.
   *
   * @param file The trace file.
   * @param field The field at fault.
   * @param detail What is wrong.
   */
  constructor(file: string, field: string | undefined, detail: string) {
    super(`Invalid trace ${JSON.stringify(file)}: ${detail}`);
    this.name = "TraceError";
    this.file = file;
    this.field = field;
  }
}

/**
 * Reads a trace file's text in either format, told apart by its top-level
 * key: `steps` (native) or `resourceSpans` (OTel). In an OTel export a span
 * is a tool call when it has `gen_ai.tool.name`, or `openinference.span.kind`
 * `TOOL` (then `tool.name`, else the span's name); its arguments are
 * `gen_ai.tool.call.arguments`, else `input.value`, and its result
 * `gen_ai.tool.call.result`, else `output.value`, each unwrapped when it is a
 * string holding JSON. Spans are ordered by start time, those without one
 * after, in file order. The final answer is the `output.value` (else
 * `gen_ai.completion`) text of the latest-starting root span that has one, a
 * root being a span without a parent in the file.
 *
 * @param text The file's text.
 * @param file The file, for messages.
 * @returns The trace.
 * @throws {TraceError} Naming the field at fault.
 *
 * @example An OTel export: an LLM span's tokens, one tool span
 * ```ts
 * import { parseTrace } from "./mod.ts";
 * const span = (name: string, start: number, attributes: Record<string, string | number>) => ({
 *   name, startTimeUnixNano: String(start * 1e9), endTimeUnixNano: String(start * 1e9 + 5e8),
 *   attributes: Object.entries(attributes).map(([key, v]) => ({ key, value: typeof v === "number" ? { intValue: String(v) } : { stringValue: v } })),
 * });
 * const text = JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [
 *   span("chat", 1, { "gen_ai.usage.input_tokens": 220, "gen_ai.usage.output_tokens": 48, "gen_ai.completion": "30 days" }),
 *   span("execute_tool", 3, { "gen_ai.tool.name": "search_kb", "gen_ai.tool.call.arguments": '{"query": "refunds"}' }),
 * ] }] }] });
 * const trace = parseTrace(text, "t.json");
 * if (trace.final_output !== "30 days" || trace.usage?.prompt_tokens !== 220 || trace.latency_ms !== 2500) throw new Error("unexpected");
 * if ((trace.tool_calls[0]?.arguments as { query: string }).query !== "refunds") throw new Error("unexpected");
 * ```
 */
export function parseTrace(text: string, file: string): Trace {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    // Where it breaks, and nothing of what it holds: V8's message quotes the
    // text, and a case may name a file that is no trace (a `.env`).
    const place = jsonSyntaxPlace(text);
    throw new TraceError(
      file,
      undefined,
      place === undefined
        ? "not JSON"
        : `not JSON (it breaks at line ${place.line}, column ${place.column})`,
    );
  }
  const fail = (field: string | undefined, detail: string): never => {
    throw new TraceError(file, field, detail);
  };
  if (!isObject(value)) {
    return fail(undefined, `a trace must be a JSON object, not ${kind(value)}`);
  }
  if (Object.hasOwn(value, "steps")) return nativeTrace(value, fail);
  if (Object.hasOwn(value, "resourceSpans")) return otelTrace(value, fail);
  return fail(
    undefined,
    'expected EvalCore\'s trajectory format ({"steps": [...]}) or an OpenTelemetry JSON export ({"resourceSpans": [...]})',
  );
}

/**
 * The text a trace unit's output is when its trace has no final answer:
 * EvalCore's canonical trajectory JSON, `{"steps":[{"tool","input","output"?}]}`,
 * so that text scorers still have the path to grade.
 *
 * @param calls The trace's tool calls.
 * @returns Compact JSON.
 *
 * @example
 * ```ts
 * import { trajectoryJson } from "./mod.ts";
 * const text = trajectoryJson([{ name: "search_kb", arguments: { query: "refunds" }, output: "30 days" }]);
 * if (text !== '{"steps":[{"tool":"search_kb","input":{"query":"refunds"},"output":"30 days"}]}') throw new Error(text);
 * ```
 */
export function trajectoryJson(calls: readonly ToolCall[]): string {
  return JSON.stringify({
    steps: calls.map((c) =>
      c.output === undefined
        ? { tool: c.name, input: c.arguments }
        : { tool: c.name, input: c.arguments, output: c.output }
    ),
  });
}

type Fail = (field: string | undefined, detail: string) => never;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function kind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function nativeTrace(value: Record<string, unknown>, fail: Fail): Trace {
  const steps = value.steps;
  if (!Array.isArray(steps)) {
    return fail("steps", `"steps" must be a list, not ${kind(steps)}`);
  }
  const trace: Trace = { format: "native", tool_calls: [] };
  for (const [i, step] of steps.entries()) {
    const at = `steps[${i}]`;
    if (!isObject(step)) {
      return fail(at, `"${at}" must be an object, not ${kind(step)}`);
    }
    if (step.tool === undefined) {
      return fail(`${at}.tool`, `"${at}.tool" is missing`);
    }
    if (typeof step.tool !== "string") {
      return fail(
        `${at}.tool`,
        `"${at}.tool" must be a string, not ${kind(step.tool)}`,
      );
    }
    const call: ToolCall = { name: step.tool, arguments: step.input ?? null };
    // As the format's reader takes it: a `null` result is no result.
    if (step.output !== undefined && step.output !== null) {
      call.output = step.output;
    }
    trace.tool_calls.push(call);
  }
  const answer = value.final_output;
  if (typeof answer === "string") trace.final_output = answer;
  else if (answer !== undefined && answer !== null) {
    return fail(
      "final_output",
      `"final_output" must be a string, not ${kind(answer)}`,
    );
  }
  return trace;
}

/** One span of an export, its attributes unwrapped. */
interface Span {
  name: string;
  id: string;
  parent: string;
  start: bigint | undefined;
  end: bigint | undefined;
  attributes: Map<string, unknown>;
}

function otelTrace(value: Record<string, unknown>, fail: Fail): Trace {
  const spans = otelSpans(value, fail);
  // Stable: spans without a start keep their file order, after the others.
  const order = spans
    .map((span, i) => ({ span, i }))
    .sort((a, b) =>
      a.span.start === b.span.start
        ? a.i - b.i
        : a.span.start === undefined
        ? 1
        : b.span.start === undefined
        ? -1
        : a.span.start < b.span.start
        ? -1
        : 1
    )
    .map(({ span }) => span);
  const trace: Trace = { format: "otel", tool_calls: [] };
  const rolledUp = rollUps(spans);
  let prompt = 0;
  let completion = 0;
  let counted = false;
  let cacheRead: number | undefined;
  let cacheWrite: number | undefined;
  let first: bigint | undefined;
  let last: bigint | undefined;
  for (const span of order) {
    if (span.start !== undefined && span.end !== undefined) {
      if (first === undefined || span.start < first) first = span.start;
      if (last === undefined || span.end > last) last = span.end;
    }
    // Every span's tokens count: an LLM span is no step, but it was paid for.
    // Its cache reads and writes are part of its input tokens, as both
    // conventions say. A count that a span below this one also has is not
    // this span's call: it is a second instrumentation's span of the same
    // call, or an agent's roll-up of its calls (see `rollUps`).
    const skip = rolledUp.get(span);
    const count = (field: TokenField) =>
      skip?.has(field) ? undefined : tokensOf(span, TOKEN_ATTRIBUTES[field]);
    const a = count("input");
    const b = count("output");
    const r = count("cacheRead");
    const w = count("cacheWrite");
    if (a !== undefined || b !== undefined) {
      counted = true;
      prompt += a ?? 0;
      completion += b ?? 0;
    }
    if (r !== undefined) cacheRead = (cacheRead ?? 0) + r;
    if (w !== undefined) cacheWrite = (cacheWrite ?? 0) + w;
    const name = toolName(span);
    if (name === undefined) continue;
    const call: ToolCall = {
      name,
      arguments: payload(span, ["gen_ai.tool.call.arguments", "input.value"]) ??
        null,
    };
    const output = payload(span, ["gen_ai.tool.call.result", "output.value"]);
    if (output !== undefined) call.output = output;
    const id = span.attributes.get("gen_ai.tool.call.id");
    if (typeof id === "string" && id !== "") call.id = id;
    trace.tool_calls.push(call);
  }
  const answer = finalAnswer(order);
  if (answer !== undefined) trace.final_output = answer;
  if (counted) {
    trace.usage = { prompt_tokens: prompt, completion_tokens: completion };
    if (cacheRead !== undefined || cacheWrite !== undefined) {
      trace.usage.prompt_tokens_details = {
        ...(cacheRead !== undefined ? { cached_tokens: cacheRead } : {}),
        ...(cacheWrite !== undefined ? { cache_write_tokens: cacheWrite } : {}),
      };
    }
  }
  if (first !== undefined && last !== undefined && first < last) {
    trace.latency_ms = Number((last - first) / 1_000_000n);
  }
  return trace;
}

/** The spans of every resource and scope, in file order. */
function otelSpans(value: Record<string, unknown>, fail: Fail): Span[] {
  const spans: Span[] = [];
  const list = (v: unknown, at: string): unknown[] => {
    if (v === undefined) return [];
    if (!Array.isArray(v)) {
      return fail(at, `"${at}" must be a list, not ${kind(v)}`);
    }
    return v;
  };
  const object = (v: unknown, at: string): Record<string, unknown> => {
    if (!isObject(v)) {
      return fail(at, `"${at}" must be an object, not ${kind(v)}`);
    }
    return v;
  };
  if (!Array.isArray(value.resourceSpans)) {
    return fail(
      "resourceSpans",
      `"resourceSpans" must be a list, not ${kind(value.resourceSpans)}`,
    );
  }
  for (const [r, resource] of value.resourceSpans.entries()) {
    const rAt = `resourceSpans[${r}]`;
    const res = object(resource, rAt);
    // `instrumentationLibrarySpans` is what exporters before OTLP 0.15 wrote.
    const scopesKey = res.scopeSpans === undefined &&
        res.instrumentationLibrarySpans !== undefined
      ? "instrumentationLibrarySpans"
      : "scopeSpans";
    for (
      const [s, scope] of list(res[scopesKey], `${rAt}.${scopesKey}`).entries()
    ) {
      const sAt = `${rAt}.${scopesKey}[${s}]`;
      for (
        const [k, item] of list(object(scope, sAt).spans, `${sAt}.spans`)
          .entries()
      ) {
        const at = `${sAt}.spans[${k}]`;
        const span = object(item, at);
        const attributes = new Map<string, unknown>();
        for (
          const [a, attr] of list(span.attributes, `${at}.attributes`).entries()
        ) {
          const aAt = `${at}.attributes[${a}]`;
          const { key, value: v } = object(attr, aAt);
          if (typeof key !== "string") {
            return fail(
              `${aAt}.key`,
              `"${aAt}.key" must be a string, not ${kind(key)}`,
            );
          }
          attributes.set(key, anyValue(v));
        }
        spans.push({
          name: typeof span.name === "string" ? span.name : "",
          id: typeof span.spanId === "string" ? span.spanId : "",
          parent: typeof span.parentSpanId === "string"
            ? span.parentSpanId
            : "",
          start: nanos(span.startTimeUnixNano),
          end: nanos(span.endTimeUnixNano),
          attributes,
        });
      }
    }
  }
  return spans;
}

/** An OTLP `AnyValue` as plain JSON: `{"stringValue": "x"}` is `"x"`. */
function anyValue(value: unknown): unknown {
  if (!isObject(value)) return value;
  if ("stringValue" in value) return value.stringValue;
  if ("intValue" in value) {
    // OTLP JSON writes 64-bit integers as strings.
    const n = value.intValue;
    return typeof n === "string" && /^-?\d+$/.test(n) &&
        Number.isSafeInteger(Number(n))
      ? Number(n)
      : n;
  }
  if ("doubleValue" in value) return value.doubleValue;
  if ("boolValue" in value) return value.boolValue;
  if ("bytesValue" in value) return value.bytesValue;
  if ("arrayValue" in value) {
    const values = (value.arrayValue as { values?: unknown } | null)?.values;
    return Array.isArray(values) ? values.map(anyValue) : [];
  }
  if ("kvlistValue" in value) {
    const values = (value.kvlistValue as { values?: unknown } | null)?.values;
    const out: Record<string, unknown> = {};
    if (Array.isArray(values)) {
      for (const kv of values) {
        if (isObject(kv) && typeof kv.key === "string") {
          out[kv.key] = anyValue(kv.value);
        }
      }
    }
    return out;
  }
  return value;
}

/** A timestamp in nanoseconds: OTLP JSON writes them as strings. */
function nanos(value: unknown): bigint | undefined {
  if (typeof value === "string" && /^\d+$/.test(value)) return BigInt(value);
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) {
    return BigInt(value);
  }
  return undefined;
}

/**
 * The attributes a span counts its tokens in, each count read from the
 * first of its names the span has: OTel GenAI's current name, the older one
 * that exporters still write (OpenLLMetry's `gen_ai.usage.prompt_tokens`,
 * `gen_ai.usage.cache_read_input_tokens`), then OpenInference's. A span that
 * has both conventions (one call, two instrumentations) so counts each
 * token once, and a count only one of them wrote is still read.
 */
const TOKEN_ATTRIBUTES = {
  input: [
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.prompt_tokens",
    "llm.token_count.prompt",
  ],
  output: [
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.token_count.completion",
  ],
  cacheRead: [
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_read_input_tokens",
    "llm.token_count.prompt_details.cache_read",
  ],
  cacheWrite: [
    "gen_ai.usage.cache_creation.input_tokens",
    "gen_ai.usage.cache_creation_input_tokens",
    "llm.token_count.prompt_details.cache_write",
  ],
} as const;

type TokenField = keyof typeof TOKEN_ATTRIBUTES;

/**
 * For each span, the token counts that a span below it (a descendant, by
 * `parentSpanId`, in the file) also has, which that span therefore does not
 * count. Both conventions make a model call a leaf (a GenAI inference span,
 * an OpenInference LLM span): a count above one is either the same call
 * written again by a second instrumentation (a GenAI span around
 * OpenInference's, 220/48 each) or a roll-up of the calls below (an
 * `invoke_agent` or AGENT span carrying its run's totals), so only the
 * innermost span of a chain counts each field.
 */
function rollUps(spans: readonly Span[]): Map<Span, Set<TokenField>> {
  const byId = new Map<string, Span[]>();
  for (const span of spans) {
    if (span.id === "") continue;
    const same = byId.get(span.id);
    if (same === undefined) byId.set(span.id, [span]);
    else same.push(span);
  }
  const skip = new Map<Span, Set<TokenField>>();
  for (const span of spans) {
    const fields = (Object.keys(TOKEN_ATTRIBUTES) as TokenField[]).filter((f) =>
      tokensOf(span, TOKEN_ATTRIBUTES[f]) !== undefined
    );
    if (fields.length === 0) continue;
    // Up the parent chain; `seen` ends a chain that loops (a malformed file).
    const seen = new Set<Span>([span]);
    let parents = byId.get(span.parent) ?? [];
    while (parents.length > 0) {
      const next: Span[] = [];
      for (const parent of parents) {
        if (seen.has(parent)) continue;
        seen.add(parent);
        let set = skip.get(parent);
        if (set === undefined) skip.set(parent, set = new Set());
        for (const f of fields) set.add(f);
        next.push(...(byId.get(parent.parent) ?? []));
      }
      parents = next;
    }
  }
  return skip;
}

/** A span's token count under the first of `names` it has. */
function tokensOf(
  span: { attributes: ReadonlyMap<string, unknown> },
  names: readonly string[],
): number | undefined {
  for (const name of names) {
    const n = tokens(span.attributes.get(name));
    if (n !== undefined) return n;
  }
  return undefined;
}

/** A token count: a whole number, or its text. */
function tokens(value: unknown): number | undefined {
  const n = typeof value === "string" && /^\d+$/.test(value)
    ? Number(value)
    : value;
  return typeof n === "number" && Number.isSafeInteger(n) && n >= 0
    ? n
    : undefined;
}

/** The tool a span calls, or `undefined` when the span is no tool call. */
function toolName(span: Span): string | undefined {
  const named = span.attributes.get("gen_ai.tool.name");
  if (typeof named === "string") return named;
  const spanKind = span.attributes.get("openinference.span.kind");
  if (typeof spanKind !== "string" || spanKind.toUpperCase() !== "TOOL") {
    return undefined;
  }
  const name = span.attributes.get("tool.name");
  return typeof name === "string" ? name : span.name;
}

/** The first of `keys` the span has, a string holding JSON unwrapped. */
function payload(span: Span, keys: readonly string[]): unknown {
  for (const key of keys) {
    if (!span.attributes.has(key)) continue;
    const value = span.attributes.get(key);
    if (typeof value !== "string") return value;
    try {
      return JSON.parse(value);
    } catch (error) {
      // Plain text is a fine argument or result: it stays a string.
      if (!(error instanceof SyntaxError)) throw error;
      return value;
    }
  }
  return undefined;
}

/**
 * The final answer: among the root spans (no parent, or a parent not in the
 * file) that carry `output.value` or `gen_ai.completion` as text, the one
 * that starts last (one without a start counts as earliest; of equals, the
 * later in order). The text is kept as it is, JSON or not.
 */
function finalAnswer(spans: readonly Span[]): string | undefined {
  const ids = new Set(spans.map((s) => s.id).filter((id) => id !== ""));
  let best: { start: bigint; text: string } | undefined;
  for (const span of spans) {
    if (span.parent !== "" && ids.has(span.parent)) continue;
    const text = [
      span.attributes.get("output.value"),
      span.attributes.get("gen_ai.completion"),
    ].find((v): v is string => typeof v === "string");
    if (text === undefined) continue;
    const start = span.start ?? 0n;
    if (best === undefined || start >= best.start) best = { start, text };
  }
  return best?.text;
}
