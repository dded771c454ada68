/**
 * Checking a suite config without zod: its YAML, its shape (as `_shape.ts`
 * describes it) and its scorer names. Loading zod costs a run 25-30 ms and
 * 8-12 MB at start-up, so a valid config is checked here and zod
 * (`schema.ts`) is asked only when this check is not sure, to name the
 * problem.
 *
 * @module
 */

import { type LocatedYaml, parseYaml, yamlProblem } from "../io/yaml.ts";
import type { SuiteConfig } from "./types.ts";
import { type Field, type Shape, SUITE, SUITE_LISTED } from "./_shape.ts";
import { duplicateScorerName } from "../scorers/scorer_names.ts";
import {
  checkBuiltin,
  isBuiltin,
  ScorerOptionError,
  type TrajectoryChecks,
} from "./_builtin_scorers.ts";
import { rubricTemplateProblem } from "./_templates.ts";
import {
  apiHeadersProblem,
  paramsProblem,
  type SettingsProblem,
  targetTemplateProblem,
} from "../net/_settings_checks.ts";
import { pathText } from "../base/place.ts";

/**
 * A config file that cannot be used, with where the problem is: its message
 * names the file and (when known) the line, and the command line exits 2.
 *
 * @example A misspelt key is named at its line, with the key it is close to
 * ```ts
 * import { checkConfigText, ConfigError } from "./mod.ts";
 * const yaml = "dataset: cases.jsonl\ntarget: { type: replay }\nscorerz: [{ type: exact_match }]\n";
 * const error = await checkConfigText(yaml, "suite.yaml").then(() => undefined, (e) => e);
 * if (!(error instanceof ConfigError) || error.exitCode !== 2 || error.line !== 3) throw new Error("unexpected");
 * if (error.message !== 'Invalid config "suite.yaml" line 3: unknown key "scorerz"; did you mean "scorers"?') {
 *   throw new Error(error.message);
 * }
 * ```
 */
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
  let located: LocatedYaml;
  try {
    located = parseYaml(text, path);
  } catch (error) {
    const { line, reason } = yamlProblem(error);
    // `dataset: -` (stdin) reads as the start of a YAML list: say so.
    const bareDash = /^dataset:[ \t]*-[ \t]*(#.*)?$/m.exec(text);
    if (bareDash !== null) {
      const dashLine = text.slice(0, bareDash.index).split("\n").length;
      throw new ConfigError(
        path,
        dashLine,
        `"dataset": a bare - starts a YAML list; write dataset: "-" for stdin`,
      );
    }
    throw new ConfigError(path, line, reason);
  }
  const proto = protoKeyIn(located.value, []);
  if (proto !== undefined) {
    throw new ConfigError(
      path,
      located.lineOf(proto),
      `${
        JSON.stringify(pathText(proto))
      }: "__proto__" is no key a config may have: JavaScript takes it for the mapping's prototype, and what it holds would be dropped unread (a gate never checked); rename it`,
    );
  }
  return { value: withoutExtensions(located.value), lineOf: located.lineOf };
}

/**
 * Whether a top-level key is an extension field (`x-judge:`), as Docker
 * Compose files have them: a place for anchors that other keys merge
 * (`<<: *judge`), which evalpipe reads no further.
 *
 * @param key A key of the config's top-level mapping.
 * @returns Whether it starts with `x-`.
 */
export function isExtensionKey(key: string): boolean {
  return key.startsWith("x-");
}

/**
 * A config's value without its top-level extension fields: their aliases
 * have been followed by now, and every other key is checked as before (an
 * `x-` key further in is an unknown key like any other).
 */
function withoutExtensions(value: unknown): unknown {
  if (!isMapping(value) || !Object.keys(value).some(isExtensionKey)) {
    return value;
  }
  return Object.fromEntries(
    Object.entries(value).filter(([key]) => !isExtensionKey(key)),
  );
}

/**
 * The path of the first `__proto__` key in a config's value, if any: a
 * mapping of names (`gates`, `headers`) built anew loses it.
 */
function protoKeyIn(
  value: unknown,
  at: PropertyKey[],
): PropertyKey[] | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  if (Object.hasOwn(value, "__proto__")) return [...at, "__proto__"];
  for (const [key, item] of Object.entries(value)) {
    const found = protoKeyIn(item, [
      ...at,
      Array.isArray(value) ? Number(key) : key,
    ]);
    if (found !== undefined) return found;
  }
  return undefined;
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
  const twice = duplicateScorerName(
    config.scorers.map((scorer) =>
      scorer.name ?? (scorer.type === "subprocess" ? undefined : scorer.type)
    ),
  );
  if (twice !== undefined) {
    throw new ConfigError(
      file,
      lineOf(["scorers", twice.second]),
      `two scorers are named ${JSON.stringify(twice.name)}; give one a "name"`,
    );
  }
}

/** What a target's name may be: it ends unit ids (`d#1~fast`). */
const TARGET_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/**
 * Checks that a `budget_usd` can stop a call: only calls priced by a
 * `cost:` (an `openai` target's, a judge's; not a `trace` target's, whose
 * recorded usage is spent already) count against it, so a budget
 * with no price anywhere would never stop anything.
 *
 * @param config A validated config.
 * @param file The config file, for messages.
 * @param lineOf Finds the line of a path.
 * @throws {ConfigError} When `budget_usd` is set and nothing is priced.
 */
export function checkBudget(
  config: SuiteConfig,
  file: string,
  lineOf: (path: readonly PropertyKey[]) => number | undefined,
): void {
  if (config.budget_usd === undefined) return;
  // A trace's prices say what it cost when it was recorded: nothing is
  // spent now, so they stop no call.
  const priced = (value: unknown) =>
    isMapping(value) && value.type !== "trace" && isMapping(value.cost) &&
    value.cost.input_per_1m !== undefined;
  if (
    priced(config.target) ||
    Object.values(config.targets ?? {}).some(priced) ||
    config.scorers.some(priced)
  ) return;
  throw new ConfigError(
    file,
    lineOf(["budget_usd"]),
    '"budget_usd" counts what priced calls cost, and no target or judge here has a "cost" ({ input_per_1m, output_per_1m }, USD): the budget would never stop a call; give the prices, or drop "budget_usd"',
  );
}

/**
 * Checks a validated config's targets beyond their shape: exactly one of
 * `target` and `targets`, target names that can end a unit id, `params`
 * whose answer could be read, templates that can be filled as meant (never
 * naming `expected`, no other template language's syntax, `${NAME}` in an
 * http target's header values only), an openai target's headers that
 * evalpipe sets itself, and a `matrix` that names targets, each once.
 *
 * @param config A validated config.
 * @param file The config file, for messages.
 * @param lineOf Finds the line of a path.
 * @throws {ConfigError} On the first problem, at its line.
 */
export function checkTargets(
  config: SuiteConfig,
  file: string,
  lineOf: (path: readonly PropertyKey[]) => number | undefined,
): void {
  const { target, targets, matrix } = config;
  if (target !== undefined && targets !== undefined) {
    throw new ConfigError(
      file,
      lineOf(["targets"]),
      'give either "target" (one system) or "targets" (several, by name), not both',
    );
  }
  if (target === undefined && targets === undefined) {
    throw new ConfigError(
      file,
      undefined,
      '"target" is missing (or "targets", several by name)',
    );
  }
  if (targets !== undefined) {
    const names = Object.keys(targets);
    if (names.length === 0) {
      throw new ConfigError(
        file,
        lineOf(["targets"]),
        '"targets" must name at least one target',
      );
    }
    for (const name of names) {
      if (!TARGET_NAME.test(name)) {
        throw new ConfigError(
          file,
          lineOf(["targets", name]),
          `target name ${
            JSON.stringify(name)
          } must be letters, digits, "_", "." and "-", starting with a letter or digit`,
        );
      }
    }
  }
  const named: [PropertyKey[], unknown][] = target !== undefined
    ? [[["target"], target]]
    : Object.entries(targets!).map(([name, t]) => [["targets", name], t]);
  for (const [at, t] of named) {
    refuseSetting(paramsProblem(t, at), file, lineOf);
    refuseSetting(targetTemplateProblem(t, at), file, lineOf);
    // An http target's headers are its own to set, content type and all.
    if ((t as { type?: unknown }).type === "openai") {
      refuseSetting(apiHeadersProblem(t, at), file, lineOf);
    }
  }
  if (matrix !== undefined) {
    if (targets === undefined) {
      throw new ConfigError(
        file,
        lineOf(["matrix"]),
        '"matrix" names targets of "targets"; this config has one "target"',
      );
    }
    const seen = new Set<string>();
    for (const [i, name] of matrix.entries()) {
      if (!Object.hasOwn(targets, name)) {
        throw new ConfigError(
          file,
          lineOf(["matrix", i]),
          `"matrix" names ${JSON.stringify(name)}, which is not a target; ${
            targetNames(targets)
          }`,
        );
      }
      if (seen.has(name)) {
        throw new ConfigError(
          file,
          lineOf(["matrix", i]),
          `"matrix" names ${JSON.stringify(name)} twice`,
        );
      }
      seen.add(name);
    }
  }
}

/** A setting's problem as a ConfigError at its line, thrown. */
function refuseSetting(
  problem: SettingsProblem | undefined,
  file: string,
  lineOf: (path: readonly PropertyKey[]) => number | undefined,
): void {
  if (problem === undefined) return;
  throw new ConfigError(
    file,
    lineOf(problem.path),
    `${JSON.stringify(pathText(problem.path))} ${problem.detail}`,
  );
}

/**
 * The sentence that lists a config's target names.
 *
 * @param targets The config's `targets`.
 * @returns E.g. `the targets are "fast", "slow"`.
 */
export function targetNames(targets: Record<string, unknown>): string {
  return `the targets are ${
    Object.keys(targets).map((n) => JSON.stringify(n)).join(", ")
  }`;
}

/**
 * Checks a validated config's scorers beyond their shape: distinct metric
 * names, options that only make sense together (a `regex` pattern that
 * compiles, `word_count` bounds in order), a judge's `params` whose answer
 * could be read, and an `llm_judge` rubric that can be filled as meant.
 *
 * @param config A validated config.
 * @param file The config file, for messages.
 * @param lineOf Finds the line of a path.
 * @param trajectoryChecks The trajectory module, when a scorer is a
 *   `trajectory` or `tool_call_f1` one (`trajectoryChecksFor`).
 * @throws {ConfigError} On the first problem, at its line.
 */
export function checkScorers(
  config: SuiteConfig,
  file: string,
  lineOf: (path: readonly PropertyKey[]) => number | undefined,
  trajectoryChecks: TrajectoryChecks | undefined,
): void {
  checkScorerNames(config, file, lineOf);
  checkClassification(config, file, lineOf);
  for (const [i, scorer] of config.scorers.entries()) {
    refuseSetting(paramsProblem(scorer, ["scorers", i]), file, lineOf);
    refuseSetting(apiHeadersProblem(scorer, ["scorers", i]), file, lineOf);
    refuseSetting(rubricTemplateProblem(scorer, ["scorers", i]), file, lineOf);
    if (!isBuiltin(scorer)) continue;
    try {
      checkBuiltin(scorer, `scorers[${i}]`, trajectoryChecks);
    } catch (error) {
      throw scorerOptionError(error, file, i, lineOf);
    }
  }
}

/** The metric `classification: true` adds. */
export const CLASSIFICATION_METRIC = "classification";

/**
 * Refuses a scorer that takes the classification metric's name while
 * `classification:` is on, and classification gates on any other metric:
 * a bar that no figure could ever be compared with.
 */
function checkClassification(
  config: SuiteConfig,
  file: string,
  lineOf: (path: readonly PropertyKey[]) => number | undefined,
): void {
  const on = config.classification !== undefined &&
    config.classification !== false;
  if (on) {
    const i = config.scorers.findIndex((s) =>
      (s.name ?? (s.type === "subprocess" ? undefined : s.type)) ===
        CLASSIFICATION_METRIC
    );
    if (i >= 0) {
      throw new ConfigError(
        file,
        lineOf(["scorers", i]),
        `a scorer is named ${
          JSON.stringify(CLASSIFICATION_METRIC)
        }, the metric "classification:" adds; give it another "name"`,
      );
    }
  }
  for (const [metric, gate] of Object.entries(config.gates ?? {})) {
    for (const key of ["min_accuracy", "min_macro_f1"] as const) {
      if (gate[key] === undefined) continue;
      if (on && metric === CLASSIFICATION_METRIC) continue;
      throw new ConfigError(
        file,
        lineOf(["gates", metric, key]),
        on
          ? `"gates.${metric}.${key}" applies only to the classification metric, "gates.${CLASSIFICATION_METRIC}.${key}"`
          : `"gates.${metric}.${key}" needs "classification: true" (or "classification: { field: NAME }") in the suite`,
      );
    }
  }
}

/**
 * A scorer's option error as a ConfigError at the line of its key (or of
 * the scorer); any other error as it is.
 *
 * @param error What was thrown.
 * @param file The config file.
 * @param i The scorer's index.
 * @param lineOf Finds the line of a path.
 * @returns The error to throw.
 */
export function scorerOptionError(
  error: unknown,
  file: string,
  i: number,
  lineOf: (path: readonly PropertyKey[]) => number | undefined,
): unknown {
  if (!(error instanceof ScorerOptionError)) return error;
  const line =
    (error.path !== undefined
      ? lineOf(["scorers", i, ...error.path])
      : undefined) ??
      (error.key !== undefined
        ? lineOf(["scorers", i, error.key])
        : undefined) ??
      lineOf(["scorers", i]);
  return new ConfigError(file, line, error.message);
}

// The check below is derived from the shape in `_shape.ts`, as the zod
// schema is (`_suite_schema.ts`), and answers as zod would: zod builds an
// object's output in its shape's order, leaves absent optional keys absent,
// and passes `z.unknown()` values through as they are. A check returns the
// parsed value, or `undefined` for "invalid, or not sure": zod then decides.
// It may decline what zod accepts, never the reverse
// (tests/config/config_check_test.ts compares the two on many configs).

/** The parsed value, or `undefined`: ask zod. */
type Check = (value: unknown) => unknown;

/** A mapping as YAML makes it: no class, no inherited keys. */
function isMapping(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** `z.strictObject(shape)`. */
function mapping(shape: Readonly<Record<string, Field>>): Check {
  const fields = new Map(
    Object.entries(shape).map(([key, field]) => [key, {
      check: compile(field.shape),
      optional: field.optional,
    }]),
  );
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

/**
 * `z.discriminatedUnion("type", ...)`, one mapping per `type`. Each type's
 * check is made when a value of that type first comes: a config names a few
 * of the forty-odd scorer and target types, and start-up pays for those.
 */
function byType(types: Shape & { kind: "byType" }): Check {
  const table = new Map<string, Check>();
  const checkOf = (type: string): Check | undefined => {
    let check = table.get(type);
    if (check !== undefined || !Object.hasOwn(types.types, type)) return check;
    const fields = {
      type: { shape: { kind: "enum", values: [type] }, optional: false },
      ...types.types[type]!.fields,
    } satisfies Record<string, Field>;
    check = mapping(fields);
    table.set(type, check);
    return check;
  };
  return (value) => {
    if (!isMapping(value) || typeof value.type !== "string") return undefined;
    return checkOf(value.type)?.(value);
  };
}

/** `z.number()` and its checks: finite numbers only, integers safe ones. */
function number(shape: Shape & { kind: "number" }): Check {
  const { int, positive, min = -Infinity, max = Infinity } = shape;
  return (value) =>
    typeof value === "number" && Number.isFinite(value) &&
      (!int || Number.isSafeInteger(value)) && (!positive || value > 0) &&
      value >= min && value <= max
      ? value
      : undefined;
}

/** `z.string()`, `.min(1)` (a code point is one or two units), `.regex()`. */
function text(shape: Shape & { kind: "string" }): Check {
  const { min = 0, pattern } = shape;
  return (value) =>
    typeof value === "string" && value.length >= min &&
      (pattern === undefined || pattern.test(value))
      ? value
      : undefined;
}

/** `z.enum(values)`. */
function oneOf(values: readonly string[]): Check {
  return (value) =>
    typeof value === "string" && values.includes(value) ? value : undefined;
}

/** `z.union(checks)`: the first that fits. */
function anyOf(checks: readonly Check[]): Check {
  return (value) => {
    for (const check of checks) {
      const parsed = check(value);
      if (parsed !== undefined) return parsed;
    }
    return undefined;
  };
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

/** The check of a shape. */
function compile(shape: Shape): Check {
  switch (shape.kind) {
    case "string":
      return text(shape);
    case "url":
      return url;
    case "number":
      return number(shape);
    case "boolean":
      return boolean;
    case "unknown":
      return anything;
    case "enum":
      return oneOf(shape.values);
    case "list":
      return listOf(compile(shape.of), shape.min ?? 0);
    case "record":
      return recordOf(compile(shape.of));
    case "mapping":
      return mapping(shape.fields);
    case "union":
      return anyOf(shape.of.map(compile));
    case "byType":
      return byType(shape);
  }
}

/**
 * Whether a value is one a shape takes, as zod would judge it (never taking
 * what zod refuses): a hint offers only what the config would take.
 *
 * @param shape The shape, from `_shape.ts`.
 * @param value The value as parsed.
 * @returns Whether the shape takes it.
 */
export function fitsShape(shape: Shape, value: unknown): boolean {
  return value !== undefined && compile(shape)(value) !== undefined;
}

// Compiled on first use: a config is checked against one of the two.
let suite: Check | undefined;
let suiteListed: Check | undefined;

/**
 * Whether a parsed config lists its datasets (`datasets:`), and so is
 * checked against that shape.
 *
 * @param value The parsed YAML.
 * @returns Whether it is a mapping with a `datasets` key.
 */
export function listsDatasets(value: unknown): boolean {
  return isMapping(value) && Object.hasOwn(value, "datasets");
}

/**
 * Validates a parsed config as `SuiteSchema.safeParse` would, without zod.
 *
 * @param value The parsed YAML.
 * @returns What zod would return (same values, same key order), or
 * `undefined` when the config is invalid or this check is not sure.
 */
export function checkSuite(value: unknown): SuiteConfig | undefined {
  const check = listsDatasets(value)
    ? suiteListed ??= compile(SUITE_LISTED)
    : suite ??= compile(SUITE);
  return check(value) as
    | SuiteConfig
    | undefined;
}
