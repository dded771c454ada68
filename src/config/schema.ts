/**
 * Validating a suite config with its zod schema, synchronously, naming the
 * file, line and key of the first problem. `checkConfigText` in `config.ts`
 * is the faster way in: it loads this module (and zod) only for a config it
 * cannot accept itself.
 *
 * @module
 */

import type { z } from "zod";
import { checkScorerNames, ConfigError, locateConfig } from "./_check.ts";
import { SuiteSchema } from "./_suite_schema.ts";
import type { SuiteConfig } from "./types.ts";

function pathText(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (out, key) =>
      typeof key === "number"
        ? `${out}[${key}]`
        : out === ""
        ? String(key)
        : `${out}.${String(key)}`,
    "",
  );
}

function typeName(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object"
    ? "a mapping"
    : `${typeof value} ${JSON.stringify(value)}`;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = root;
  for (const key of path) {
    v = (v as Record<PropertyKey, unknown> | null | undefined)?.[key];
  }
  return v;
}

/** Turns the first zod issue into a sentence and the path it is about. */
function describe(
  issue: z.core.$ZodIssue,
  root: unknown,
): [readonly PropertyKey[], string] {
  const path = issue.path;
  const where = pathText(path);
  const actual = valueAt(root, path);
  switch (issue.code) {
    case "unrecognized_keys": {
      const key = issue.keys[0]!;
      return [
        [...path, key],
        `unknown key ${JSON.stringify(pathText([...path, key]))}`,
      ];
    }
    case "invalid_union": {
      const choices = (issue as { options?: unknown[] }).options;
      if (Array.isArray(choices)) {
        const is = actual === undefined
          ? "is missing"
          : `is ${typeName(actual)}`;
        return [
          path,
          `${JSON.stringify(where)} ${is}; expected one of ${
            choices.join(", ")
          }`,
        ];
      }
      return [path, `${JSON.stringify(where)} is not valid`];
    }
    case "invalid_type":
      if (actual === undefined) {
        return [path.slice(0, -1), `${JSON.stringify(where)} is missing`];
      }
      return [
        path,
        `${JSON.stringify(where)} must be ${
          issue.expected === "object"
            ? "a mapping"
            : issue.expected === "array"
            ? "a list"
            : `a ${issue.expected}`
        }, not ${typeName(actual)}`,
      ];
    default:
      return [path, `${JSON.stringify(where)}: ${issue.message}`];
  }
}

/**
 * Validates a parsed config, naming the file and line of the first problem.
 *
 * @param value The parsed YAML.
 * @param file The file's path, for messages.
 * @param lineOf Finds the line of a path.
 * @returns The config.
 * @throws {ConfigError} On the first problem.
 */
export function parseConfig(
  value: unknown,
  file: string,
  lineOf: (path: readonly PropertyKey[]) => number | undefined = () =>
    undefined,
): SuiteConfig {
  const result = SuiteSchema.safeParse(value);
  if (!result.success) {
    const [path, detail] = describe(result.error.issues[0]!, value);
    throw new ConfigError(file, lineOf(path), detail);
  }
  const config = result.data;
  checkScorerNames(config, file, lineOf);
  return config;
}

/**
 * Parses and validates a suite's YAML config text.
 *
 * @param text The YAML.
 * @param path The file it came from, for messages.
 * @returns The config.
 * @throws {ConfigError} When it cannot be parsed or validated.
 */
export function parseConfigText(text: string, path: string): SuiteConfig {
  const located = locateConfig(text, path);
  return parseConfig(located.value, path, located.lineOf);
}
