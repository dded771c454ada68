// Building the built-in scorers a config names, and the checks of their
// options that the shape cannot say (a pattern that compiles, bounds in
// order), each a ConfigError at the line of the key.

import type { Scorer } from "../scorers/scorer.ts";
import { osErrorText } from "../base/errors.ts";
import { readUtf8File } from "../io/utf8.ts";
import type { BuiltinScorerConfig, BuiltinScorerOptions } from "./types.ts";

/** What `scorers/trajectory.ts` gives the checks of its two scorers. */
export type TrajectoryChecks = Pick<
  typeof import("../scorers/trajectory.ts"),
  "readRules" | "toolCallF1" | "TrajectoryOptionError"
>;

type Maker = (options: never) => Scorer;

/**
 * Where the function that makes each built-in scorer from its options is:
 * each family's module is imported when a config names one of its types, so
 * that a run of `exact_match` evaluates none of the others.
 */
const MAKERS: {
  [T in keyof BuiltinScorerOptions]: () => Promise<Maker>;
} = {
  exact_match: () => import("../scorers/builtin.ts").then((m) => m.exactMatch),
  contains: () => import("../scorers/builtin.ts").then((m) => m.contains),
  not_contains: () =>
    import("../scorers/builtin.ts").then((m) => m.notContains),
  starts_with: () => import("../scorers/builtin.ts").then((m) => m.startsWith),
  regex: () => import("../scorers/text_checks.ts").then((m) => m.regexMatch),
  word_count: () =>
    import("../scorers/text_checks.ts").then((m) => m.wordCount),
  one_of: () => import("../scorers/text_checks.ts").then((m) => m.oneOf),
  json: () => import("../scorers/json_scorers.ts").then((m) => m.jsonValid),
  fields: () => import("../scorers/json_scorers.ts").then((m) => m.jsonFields),
  json_match: () =>
    import("../scorers/json_scorers.ts").then((m) => m.jsonMatch),
  numeric: () => import("../scorers/numeric.ts").then((m) => m.numericMatch),
  levenshtein: () =>
    import("../scorers/similarity.ts").then((m) => m.levenshtein),
  token_f1: () => import("../scorers/similarity.ts").then((m) => m.tokenF1),
  rouge_l: () => import("../scorers/similarity.ts").then((m) => m.rougeL),
  bleu: () => import("../scorers/similarity.ts").then((m) => m.bleu),
  set_overlap: () =>
    import("../scorers/set_overlap.ts").then((m) => m.setOverlap),
  latency: () => import("../scorers/run_facts.ts").then((m) => m.latencyLimit),
  cost: () => import("../scorers/run_facts.ts").then((m) => m.costLimit),
  trajectory: () =>
    import("../scorers/trajectory.ts").then((m) => m.trajectory),
  tool_call_f1: () =>
    import("../scorers/trajectory.ts").then((m) => m.toolCallF1),
};

/**
 * Whether a scorer config needs {@linkcode TrajectoryChecks} to be checked.
 *
 * @param config A scorer's config.
 * @returns Whether it is a `trajectory` or `tool_call_f1` scorer.
 */
export function needsTrajectory(config: { type: string }): boolean {
  return config.type === "trajectory" || config.type === "tool_call_f1";
}

/**
 * The trajectory module, loaded when one of the scorers needs it to be
 * checked.
 *
 * @param scorers The config's scorers.
 * @returns The checks, or `undefined` when no scorer needs them.
 */
export async function trajectoryChecksFor(
  scorers: readonly { type: string }[],
): Promise<TrajectoryChecks | undefined> {
  return scorers.some(needsTrajectory)
    ? await import("../scorers/trajectory.ts")
    : undefined;
}

/**
 * Whether a scorer config is a built-in's.
 *
 * @param config A scorer's config.
 * @returns Whether its type is a built-in's.
 */
export function isBuiltin(
  config: { type: string },
): config is BuiltinScorerConfig {
  return Object.hasOwn(MAKERS, config.type);
}

/** A problem with one scorer's options: the key it is about, and what. */
export class ScorerOptionError extends SyntaxError {
  /** The key of the scorer's mapping the problem is about, if one. */
  readonly key: string | undefined;
  /** The path under the scorer's mapping, when deeper than its key. */
  readonly path: readonly (string | number)[] | undefined;

  /**
   * Creates the instance.
   *
   * @param key The key.
   * @param detail What is wrong.
   * @param path The path under the scorer's mapping, e.g. `["rules", 1]`.
   */
  constructor(
    key: string | undefined,
    detail: string,
    path?: readonly (string | number)[],
  ) {
    super(detail);
    this.name = "ScorerOptionError";
    this.key = key;
    this.path = path;
  }
}

/**
 * Checks what the shape cannot: a `regex` pattern that compiles, a
 * `word_count` with a bound, and bounds in order.
 *
 * @param config A built-in scorer's config, its shape checked.
 * @param where How the config names the scorer, e.g. `scorers[2]`.
 * @param trajectoryChecks The trajectory module, for a `trajectory` or
 *   `tool_call_f1` scorer ({@linkcode trajectoryChecksFor}).
 * @throws {ScorerOptionError} On the first problem.
 */
export function checkBuiltin(
  config: BuiltinScorerConfig,
  where: string,
  trajectoryChecks: TrajectoryChecks | undefined,
): void {
  if (config.type === "trajectory" || config.type === "tool_call_f1") {
    if (trajectoryChecks === undefined) {
      throw new TypeError(
        `checkBuiltin needs the trajectory checks for ${where} (${config.type})`,
      );
    }
    const { readRules, toolCallF1, TrajectoryOptionError } = trajectoryChecks;
    try {
      if (config.type === "trajectory") readRules(config.rules, where);
      else toolCallF1(config);
    } catch (error) {
      if (!(error instanceof TrajectoryOptionError)) throw error;
      throw new ScorerOptionError(
        String(error.path[0]),
        config.type === "trajectory"
          ? error.message
          : `"${where}.calls" must list tools' names or {name, arguments} mappings`,
        error.path,
      );
    }
  } else if (
    config.type === "contains" || config.type === "not_contains" ||
    config.type === "starts_with"
  ) {
    // "" is in every output: a slip that would pass (or, for not_contains,
    // fail) every case, measuring nothing. starts_with sets leading white
    // space aside, so white space alone is "" there.
    const blank = config.type === "starts_with"
      ? (text: string) => text.trimStart() === ""
      : (text: string) => text === "";
    const item = config.values?.findIndex(blank) ?? -1;
    const at = config.value !== undefined && blank(config.value)
      ? ["value"]
      : item >= 0
      ? ["values", item]
      : undefined;
    if (at !== undefined) {
      const text = at[0] === "value" ? config.value : config.values?.[item];
      throw new ScorerOptionError(
        String(at[0]),
        `"${where}.${at.join(".").replace(/\.(\d+)$/, "[$1]")}" is ${
          text === ""
            ? `empty: ${
              config.type === "starts_with"
                ? "every output starts with"
                : "every output contains"
            } ""`
            : "white space alone: every output starts with it, its leading white space aside"
        }, so it would ${
          config.type === "not_contains" ? "fail" : "pass"
        } every case; give a text`,
        at,
      );
    }
  } else if (config.type === "regex") {
    if (config.pattern === "") {
      throw new ScorerOptionError(
        "pattern",
        `"${where}.pattern" is empty: it matches every output, so it would ${
          config.match === false ? "fail" : "pass"
        } every case; give a pattern`,
      );
    }
    try {
      new RegExp(config.pattern, config.flags ?? "");
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      throw new ScorerOptionError(
        "pattern",
        `"${where}.pattern" is not a valid regular expression: ${error.message}`,
      );
    }
  } else if (config.type === "word_count") {
    if (config.min === undefined && config.max === undefined) {
      throw new ScorerOptionError(
        undefined,
        `"${where}" (word_count) needs "min", "max" or both`,
      );
    }
    if (
      config.min !== undefined && config.max !== undefined &&
      config.min > config.max
    ) {
      throw new ScorerOptionError(
        "max",
        `"${where}.max" (${config.max}) is below its "min" (${config.min})`,
      );
    }
  }
}

/**
 * Builds a built-in scorer. A `json` scorer's schema file is read (relative
 * to `cwd`) and its schema compiled now, so that a bad one is a config
 * error; Ajv is loaded only then.
 *
 * @param config The scorer's config.
 * @param where How the config names the scorer, e.g. `scorers[2]`.
 * @param cwd The config file's folder.
 * @returns The scorer.
 * @throws {ScorerOptionError} When an option is wrong.
 */
export async function buildBuiltin(
  config: BuiltinScorerConfig,
  where: string,
  cwd: string,
): Promise<Scorer> {
  checkBuiltin(config, where, await trajectoryChecksFor([config]));
  if (config.type === "json" && config.schema !== undefined) {
    const { type: _type, schema: given, ...rest } = config;
    const schema = typeof given === "string"
      ? await readSchema(given, where, cwd)
      : given;
    const [{ compileSchema }, { jsonScorer }] = await Promise.all([
      import("../scorers/_json_schema.ts"),
      import("../scorers/json_scorers.ts"),
    ]);
    try {
      return jsonScorer({ ...rest, schema }, {
        check: await compileSchema(schema),
      });
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      throw new ScorerOptionError(
        "schema",
        `"${where}.schema": ${error.message}`,
      );
    }
  }
  const { type, ...options } = config;
  const make = await MAKERS[type]() as (options: unknown) => Scorer;
  try {
    return make(options);
  } catch (error) {
    // The checks above catch these first in a config file; a config built
    // in code meets them here.
    if (!(error instanceof RangeError || error instanceof SyntaxError)) {
      throw error;
    }
    // A regex's is its pattern's (a \p{…} without the u flag).
    const key = type === "regex" ? "pattern" : undefined;
    throw new ScorerOptionError(
      key,
      `"${where}${key === undefined ? "" : `.${key}`}": ${error.message}`,
    );
  }
}

/** A schema file's JSON, relative to the config file's folder. */
async function readSchema(
  path: string,
  where: string,
  cwd: string,
): Promise<Record<string, unknown> | boolean> {
  const file = path.startsWith("/") ? path : `${cwd}/${path}`;
  let text: string;
  try {
    text = await readUtf8File(file);
  } catch (error) {
    // JSON in a string (`schema: '{"type": "object"}'`) is read as a path.
    const inline = /^\s*\{/.test(path)
      ? "; an inline schema is a YAML mapping (schema: { type: object }), not a string of JSON"
      : "";
    throw new ScorerOptionError(
      "schema",
      `"${where}.schema": cannot read ${JSON.stringify(path)}: ${
        osErrorText(error)
      }${inline}`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    throw new ScorerOptionError(
      "schema",
      `"${where}.schema": ${
        JSON.stringify(path)
      } is not JSON: ${error.message}`,
    );
  }
  if (
    typeof value !== "boolean" &&
    (typeof value !== "object" || value === null || Array.isArray(value))
  ) {
    throw new ScorerOptionError(
      "schema",
      `"${where}.schema": ${
        JSON.stringify(path)
      } must hold a JSON object (a schema), not ${
        Array.isArray(value) ? "a list" : JSON.stringify(value)
      }`,
    );
  }
  return value as Record<string, unknown> | boolean;
}
