/**
 * Tool calls: what a unit records of the tools its system called or asked
 * to call, and reading them from a chat completions reply
 * (`message.tool_calls`, and the deprecated `message.function_call`), each
 * call's arguments parsed from their JSON text, a text that does not parse
 * kept as it is, with why.
 *
 * @module
 */

/**
 * One tool (function) call the system under test made or asked for: a call
 * in an `openai` reply's `tool_calls`, or a step of a recorded agent trace.
 * A unit's `tool_calls`, in order, are its trajectory.
 *
 * @example A call whose arguments did not parse: kept, with the raw text
 * ```ts
 * import { parseUnit, type ToolCall } from "../dataset/mod.ts";
 * const call: ToolCall = { name: "refund", arguments: "{order: 7", arguments_error: "Expected property name" };
 * const unit = parseUnit({ input: "q", output: "", tool_calls: [call] }, "stdin#1");
 * if (unit.tool_calls?.[0]?.arguments !== "{order: 7") throw new Error("unexpected");
 * ```
 */
export interface ToolCall {
  /** The tool's (function's) name. */
  name: string;
  /**
   * Its arguments, parsed from their JSON text; the text itself when it
   * does not parse (then `arguments_error` says why); `null` when none.
   */
  arguments: unknown;
  /** Why the arguments' text is not JSON; `arguments` then holds the text. */
  arguments_error?: string;
  /** What the tool returned, when a trace records it. */
  output?: unknown;
  /** The call's id, as the API or the trace names it. */
  id?: string;
}

/**
 * The tool calls of a reply's message, or `undefined` when it has none.
 *
 * @param message `choices[0].message`.
 * @param where The call, as messages show it (`POST <url>`).
 * @returns The calls, in the reply's order.
 * @throws {Error} When a call is not an object with a function name.
 */
export function readToolCalls(
  message: Record<string, unknown>,
  where: string,
): ToolCall[] | undefined {
  const calls = message.tool_calls;
  if (Array.isArray(calls)) {
    return calls.map((call, i) => {
      const at = `choices[0].message.tool_calls[${i}]`;
      const fn = (call as { function?: unknown } | null)?.function;
      if (typeof fn !== "object" || fn === null) {
        throw new Error(
          `${where} answered a tool call without "function" in ${at}`,
        );
      }
      const id = (call as { id?: unknown }).id;
      return toolCall(
        fn as Record<string, unknown>,
        `${at}.function`,
        where,
        typeof id === "string" ? id : undefined,
      );
    });
  }
  const legacy = message.function_call;
  if (typeof legacy === "object" && legacy !== null) {
    return [
      toolCall(
        legacy as Record<string, unknown>,
        "choices[0].message.function_call",
        where,
        undefined,
      ),
    ];
  }
  return undefined;
}

function toolCall(
  fn: Record<string, unknown>,
  at: string,
  where: string,
  id: string | undefined,
): ToolCall {
  if (typeof fn.name !== "string") {
    throw new Error(
      `${where} answered a tool call without a name in ${at}.name`,
    );
  }
  const call: ToolCall = { name: fn.name, arguments: null };
  const given = fn.arguments;
  if (typeof given === "string") {
    // Not redacted: the caller has refused a reply that holds a secret, and
    // what is left is the model's own words, scored as it said them.
    const text = given;
    try {
      call.arguments = JSON.parse(text);
    } catch (error) {
      // Models do write broken JSON: the call stays, with its text and why.
      if (!(error instanceof SyntaxError)) throw error;
      call.arguments = text;
      call.arguments_error = error.message;
    }
  } else if (given !== undefined) {
    // Some servers send the arguments as an object already.
    call.arguments = given;
  }
  if (id !== undefined) call.id = id;
  return call;
}
