/**
 * Checking a suite config without zod: its YAML, its shape and its scorer
 * names. Loading zod costs a run 25-30 ms and 8-12 MB at start-up, so a
 * valid config is checked here and zod (`config_schema.ts`) is asked only
 * when this check is not sure, to name the problem.
 *
 * @module
 */

import { type LocatedYaml, parseYaml } from "../io/yaml.ts";
import type { SuiteConfig } from "./types.ts";

/** A config file that cannot be used, with where the problem is. */
export class ConfigError extends SyntaxError {
  /** The exit code the command line ends with: an input error. */
  readonly exitCode: number = 2;
  /** The config file. */
  readonly file: string;
  /** The 1-based line of the problem, when known. */
  readonly line: number | undefined;

  /**
   * Creates the instance.
   *
   * @param file The config file.
   * @param line The line.
   * @param detail What is wrong.
   */
  constructor(file: string, line: number | undefined, detail: string) {
    super(
      `Invalid config ${JSON.stringify(file)}${
        line !== undefined ? ` line ${line}` : ""
      }: ${detail}`,
    );
    this.name = "ConfigError";
    this.file = file;
    this.line = line;
  }
}

/**
 * Parses a config's YAML, keeping where each node stands.
 *
 * @param text The YAML.
 * @param path The file it came from, for messages.
 * @returns The value and a line finder.
 * @throws {ConfigError} When the YAML cannot be parsed.
 */
export function locateConfig(text: string, path: string): LocatedYaml {
  try {
    return parseYaml(text, path);
  } catch (error) {
    const mark = (error as { mark?: { line: number } }).mark;
    const reason = (error as { reason?: string }).reason ?? String(error);
    throw new ConfigError(
      path,
      mark !== undefined ? mark.line + 1 : undefined,
      reason,
    );
  }
}

/**
 * Refuses two scorers with the same metric name, where the config says the
 * names (subprocess names are checked once resolved).
 *
 * @param config A validated config.
 * @param file The config file, for messages.
 * @param lineOf Finds the line of a path.
 * @throws {ConfigError} When two scorers share a name.
 */
export function checkScorerNames(
  config: SuiteConfig,
  file: string,
  lineOf: (path: readonly PropertyKey[]) => number | undefined,
): void {
  const seen = new Map<string, number>();
  config.scorers.forEach((scorer, i) => {
    const name = scorer.name ??
      (scorer.type === "subprocess" ? undefined : scorer.type);
    if (name === undefined) return; // subprocess names are checked once resolved
    if (seen.has(name)) {
      throw new ConfigError(
        file,
        lineOf(["scorers", i]),
        `two scorers are named ${JSON.stringify(name)}; give one a "name"`,
      );
    }
    seen.set(name, i);
  });
}

// The validator below mirrors `SuiteSchema` in `_suite_schema.ts` key by key
// and in the same order: zod builds an object's output in its shape's order,
// leaves absent optional keys absent, and passes `z.unknown()` values through
// as they are. A check returns the parsed value, or `undefined` for "invalid,
// or not sure": zod then decides. It may decline what zod accepts, never the
// reverse (tests/config_check_test.ts compares the two on many configs).

/** The parsed value, or `undefined`: ask zod. */
type Check = (value: unknown) => unknown;

/** A key of a mapping: its check, and whether it may be absent. */
interface Field {
  check: Check;
  optional: boolean;
}

const required = (check: Check): Field => ({ check, optional: false });
const optional = (check: Check): Field => ({ check, optional: true });

/** A mapping as YAML makes it: no class, no inherited keys. */
function isMapping(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** `z.strictObject(shape)`. */
function mapping(shape: Record<string, Field>): Check {
  const fields = new Map(Object.entries(shape));
  return (value) => {
    if (!isMapping(value)) return undefined;
    for (const key of Object.keys(value)) {
      if (!fields.has(key)) return undefined;
    }
    const out: Record<string, unknown> = {};
    for (const [key, field] of fields) {
      if (!Object.hasOwn(value, key)) {
        if (field.optional) continue;
        return undefined;
      }
      const parsed = field.check(value[key]);
      if (parsed === undefined) return undefined;
      out[key] = parsed;
    }
    return out;
  };
}

/** `z.record(z.string(), check)`. */
function recordOf(check: Check): Check {
  return (value) => {
    if (!isMapping(value)) return undefined;
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      // zod drops a record's `__proto__` key silently: leave that to zod.
      if (key === "__proto__") return undefined;
      const parsed = check(value[key]);
      if (parsed === undefined) return undefined;
      out[key] = parsed;
    }
    return out;
  };
}

/** `z.array(check).min(min)`. */
function listOf(check: Check, min: number): Check {
  return (value) => {
    if (
      !Array.isArray(value) || Object.getPrototypeOf(value) !== Array.prototype
    ) return undefined;
    if (value.length < min) return undefined;
    const out: unknown[] = [];
    for (let i = 0; i < value.length; i++) {
      const parsed = check(value[i]);
      if (parsed === undefined) return undefined;
      out.push(parsed);
    }
    return out;
  };
}

/** `z.discriminatedUnion("type", ...)`, one check per `type`. */
function byType(checks: Record<string, Check>): Check {
  const table = new Map(Object.entries(checks));
  return (value) => {
    if (!isMapping(value)) return undefined;
    return table.get(value.type as string)?.(value);
  };
}

/** `z.number()` and a range: finite numbers only. */
function number(holds: (n: number) => boolean = () => true): Check {
  return (value) =>
    typeof value === "number" && Number.isFinite(value) && holds(value)
      ? value
      : undefined;
}

/** `z.number().int()` (a safe integer) between `min` and `max`. */
function integer(
  min: number = Number.MIN_SAFE_INTEGER,
  max: number = Number.MAX_SAFE_INTEGER,
): Check {
  return (value) =>
    Number.isSafeInteger(value) && (value as number) >= min &&
      (value as number) <= max
      ? value
      : undefined;
}

/** `z.string()`, `.min(1)` when `min` is 1 (a code point is one or two units). */
function text(min: 0 | 1 = 0): Check {
  return (value) =>
    typeof value === "string" && value.length >= min ? value : undefined;
}

/** `z.string().regex(pattern)`. */
function matching(pattern: RegExp): Check {
  return (value) =>
    typeof value === "string" && pattern.test(value) ? value : undefined;
}

/** `z.enum(values)` and `z.literal(value)`. */
function oneOf(...values: string[]): Check {
  return (value) =>
    typeof value === "string" && values.includes(value) ? value : undefined;
}

const boolean: Check = (value) =>
  typeof value === "boolean" ? value : undefined;

/** `z.unknown()`: any value, as it is. */
const anything: Check = (value) => value;

/**
 * `z.url()`: zod trims the text, asks `URL.canParse` and returns it without
 * tabs and line breaks. Only text that needs neither is accepted here.
 */
const url: Check = (value) =>
  typeof value === "string" && value.trim() === value &&
    !/[\t\n\r]/.test(value) && URL.canParse(value)
    ? value
    : undefined;

/** `z.union([z.string(), z.array(z.string())])`. */
const stop: Check = (value) =>
  typeof value === "string" ? value : listOf(text(), 0)(value);

const seconds = number((n) => n > 0 && n <= 86_400);

const network = {
  timeout: optional(seconds),
  retries: optional(integer(0, 100)),
  rate_limit: optional(number((n) => n > 0)),
  max_total_retries: optional(integer(0)),
  retry_delay: optional(number((n) => n >= 0 && n <= 600)),
};

const generation = {
  params: optional(recordOf(anything)),
  temperature: optional(number()),
  max_tokens: optional(integer(1)),
  seed: optional(integer()),
  top_p: optional(number()),
  stop: optional(stop),
};

const chat = {
  base_url: optional(url),
  model: required(text(1)),
  api_key_env: optional(matching(/^[A-Za-z_][A-Za-z0-9_]*$/)),
  ...generation,
  ...network,
};

const target = byType({
  openai: mapping({
    type: required(oneOf("openai")),
    ...chat,
    system: optional(text()),
    prompt: optional(text()),
  }),
  http: mapping({
    type: required(oneOf("http")),
    url: required(text(1)),
    method: optional(
      oneOf("GET", "POST", "PUT", "PATCH", "get", "post", "put", "patch"),
    ),
    headers: optional(recordOf(text())),
    body: optional(anything),
    output: optional(text()),
    ...network,
  }),
  subprocess: mapping({
    type: required(oneOf("subprocess")),
    cmd: required(text(1)),
    timeout: optional(seconds),
  }),
  replay: mapping({ type: required(oneOf("replay")) }),
});

const builtin = mapping({
  type: required(oneOf("exact_match", "contains")),
  name: optional(text(1)),
  ignore_case: optional(boolean),
});

const scorer = byType({
  subprocess: mapping({
    type: required(oneOf("subprocess")),
    cmd: required(text(1)),
    name: optional(text(1)),
    timeout: optional(seconds),
    max_output_bytes: optional(integer(1)),
    persistent: optional(boolean),
  }),
  exact_match: builtin,
  contains: builtin,
  llm_judge: mapping({
    type: required(oneOf("llm_judge")),
    name: optional(text(1)),
    rubric: optional(text(1)),
    system: optional(text(1)),
    pass_threshold: optional(number()),
    ...chat,
  }),
});

const share = number((n) => n >= 0 && n <= 1);

const suite = mapping({
  dataset: required(text(1)),
  target: required(target),
  scorers: required(listOf(scorer, 1)),
  concurrency: optional(integer(1, 1024)),
  epochs: optional(integer(1, 1000)),
  max_processes: optional(integer(1, 4096)),
  timeout: optional(seconds),
  gates: optional(recordOf(mapping({
    min_mean: optional(number()),
    min_mean_lower_bound: optional(number()),
    min_pass_rate: optional(share),
    min_coverage: optional(share),
    max_errors: optional(integer(0)),
  }))),
});

/**
 * Validates a parsed config as `SuiteSchema.safeParse` would, without zod.
 *
 * @param value The parsed YAML.
 * @returns What zod would return (same values, same key order), or
 * `undefined` when the config is invalid or this check is not sure.
 */
export function checkSuite(value: unknown): SuiteConfig | undefined {
  return suite(value) as SuiteConfig | undefined;
}
