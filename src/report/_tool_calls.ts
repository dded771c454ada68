// A unit's tool calls as text, one line each, for every report: `view`, the
// HTML page, JUnit and Markdown show the same words.

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function json(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value) ?? "";
}

/**
 * Each call of a unit's `tool_calls` as one line: `name(arguments)`, the
 * arguments as JSON (their text as it came when it is not JSON, with why),
 * and `→ output` when a trace recorded what the tool returned. Read
 * defensively: anything but a list gives none.
 */
export function toolCallLines(calls: unknown): string[] {
  if (!Array.isArray(calls)) return [];
  return calls.map((call, i) => {
    if (!isObject(call)) return `${i + 1}. ${json(call)}`;
    const name = typeof call.name === "string" ? call.name : json(call.name);
    const args = call.arguments === undefined || call.arguments === null
      ? ""
      : json(call.arguments);
    const bad = typeof call.arguments_error === "string"
      ? ` [arguments not JSON: ${call.arguments_error}]`
      : "";
    const out = call.output !== undefined ? ` → ${json(call.output)}` : "";
    return `${i + 1}. ${name}(${args})${bad}${out}`;
  });
}

/** The names of a unit's tool calls, in order. */
export function toolCallNames(calls: unknown): string[] {
  if (!Array.isArray(calls)) return [];
  return calls.map((c) =>
    isObject(c) && typeof c.name === "string" ? c.name : "?"
  );
}
