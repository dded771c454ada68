// JSON as evalglass's result store writes it: Python's
// `json.dumps(value, indent=2, sort_keys=True)` plus a newline. Keys sort by
// code point (as Python compares strings), every character outside ASCII is
// escaped (`ensure_ascii`), and integer-like keys keep their sorted place
// (a JavaScript object would move them first).

/** Compares two strings by code point, as Python does (not by UTF-16 unit). */
export function compareCodePoints(a: string, b: string): number {
  const x = [...a], y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

function ascii(text: string): string {
  // JSON.stringify has already escaped what JSON requires; what is left
  // outside ASCII (and DEL) becomes \uXXXX, surrogate pairs as two escapes.
  return text.replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

function dump(
  value: unknown,
  indent: string | undefined,
  out: string[],
): void {
  if (value === null || typeof value !== "object") {
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError(`Cannot write ${typeof value}`);
    out.push(ascii(text));
    return;
  }
  // `indent` undefined: compact, `separators=(",", ":")`.
  const inner = indent === undefined ? undefined : `${indent}  `;
  const open = inner === undefined ? "" : `\n${inner}`;
  const close = indent === undefined ? "" : `\n${indent}`;
  if (Array.isArray(value)) {
    if (value.length === 0) return void out.push("[]");
    out.push("[");
    value.forEach((item, i) => {
      out.push(`${i > 0 ? "," : ""}${open}`);
      dump(item, inner, out);
    });
    out.push(`${close}]`);
    return;
  }
  const keys = Object.keys(value).filter((k) =>
    (value as Record<string, unknown>)[k] !== undefined
  ).sort(compareCodePoints);
  if (keys.length === 0) return void out.push("{}");
  out.push("{");
  keys.forEach((key, i) => {
    out.push(
      `${i > 0 ? "," : ""}${open}${ascii(JSON.stringify(key))}:${
        inner === undefined ? "" : " "
      }`,
    );
    dump((value as Record<string, unknown>)[key], inner, out);
  });
  out.push(`${close}}`);
}

/** The text Python's `json.dumps(value, indent=2, sort_keys=True) + "\n"` gives. */
export function pythonJson(value: unknown): string {
  const out: string[] = [];
  dump(value, "", out);
  return `${out.join("")}\n`;
}

/**
 * The text `pythonJson` gives `value` where it sits at `indent` (two spaces
 * a level) inside a larger document, without the final newline.
 */
export function pythonJsonAt(value: unknown, indent: string): string {
  const out: string[] = [];
  dump(value, indent, out);
  return out.join("");
}

/** The text of `json.dumps(value, sort_keys=True, separators=(",", ":"))`. */
export function pythonCompactJson(value: unknown): string {
  const out: string[] = [];
  dump(value, undefined, out);
  return out.join("");
}
