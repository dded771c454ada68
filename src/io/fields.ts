// Hand checks for the small JSON documents evalpipe reads back (RunRecord
// headers, resume metadata, partial aggregates): plain code, so reading them
// loads no schema library at start-up. Each returns a copy of known keys.

import { clip } from "../base/terminal.ts";

/** A field of untrusted JSON that is not what it must be. */
export class FieldError extends SyntaxError {
  /**
   * Creates the instance.
   *
   * @param path Where, as `a.b.c`.
   * @param rule What it must be.
   * @param actual What it is.
   */
  constructor(path: string, rule: string, actual: unknown) {
    super(`"${path}": must be ${rule}, not ${shown(actual)}`);
    this.name = "FieldError";
  }
}

function shown(value: unknown): string {
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object" && value !== null) return "a mapping";
  const text = JSON.stringify(value) ?? String(value);
  return clip(text, 40);
}

/** `value` as a mapping (not a list, not null). */
export function mappingAt(
  value: unknown,
  path: string,
): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new FieldError(path, "a mapping", value);
  }
  return value as Record<string, unknown>;
}

/** `value` as a count: a whole number of at least 0. */
export function countAt(value: unknown, path: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new FieldError(path, "a whole number of at least 0", value);
  }
  return value;
}

/** `o[key]` as a string. */
export function stringAt(
  o: Record<string, unknown>,
  key: string,
  prefix = "",
): string {
  const v = o[key];
  if (typeof v !== "string") throw new FieldError(prefix + key, "a string", v);
  return v;
}

/** `o[key]` as a mapping of strings, copied. */
export function stringMapAt(
  o: Record<string, unknown>,
  key: string,
  prefix = "",
): Record<string, string> {
  const map = mappingAt(o[key], prefix + key);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(map)) {
    if (typeof v !== "string") {
      throw new FieldError(`${prefix}${key}.${k}`, "a string", v);
    }
    out[k] = v;
  }
  return out;
}
