/**
 * Scorers of an agent's path, its tool calls in order (a unit's
 * `tool_calls`): `trajectory`, whose rules read as EvalCore's trajectory
 * rules do (`must_call`, `must_not_call`, `max_steps`, and `order`), and
 * `tool_call_f1`, the F1 of the calls made against the calls expected. A
 * unit that records no tool calls is `non_evaluable`.
 *
 * @module
 */

import { nonEvaluable, type Score, scored } from "../score/mod.ts";
import { type Scorer, UNIT_RANGE } from "./scorer.ts";
import type { ToolCall, Unit } from "../dataset/unit.ts";
import { canonicalJson, checkThreshold, versionOf } from "./_builtin.ts";
import { clip } from "../base/terminal.ts";

/**
 * A test of one argument of a call: `contains` (a substring of the argument
 * as text; an argument that is not a string is read as its compact JSON),
 * `equals` (JSON equality, key order aside), or both. An argument the call
 * lacks never matches.
 *
 * @example Both tests on one argument
 * ```ts
 * import { type ArgumentMatcher, trajectory } from "./mod.ts";
 * const query: ArgumentMatcher = { contains: "refund" };
 * const scorer = trajectory({ rules: [{ must_call: "search_kb", with: { query } }] });
 * const s = await scorer.score({ example_id: "d#1", unit_id: "d#1", input: "", output: "", tool_calls: [{ name: "search_kb", arguments: { query: "refund policy" } }] }, {});
 * if ("scores" in s || s.value !== 1) throw new Error("unexpected");
 * ```
 */
export interface ArgumentMatcher {
  /** A text the argument must contain. */
  contains?: string;
  /** The JSON value the argument must equal. */
  equals?: unknown;
}

/**
 * One rule of a {@linkcode trajectory} scorer, as EvalCore writes them:
 *
 * - `must_call: T` holds when a call of `T` matches every `with` test;
 *   with `after: U`, only calls after the first call of `U` count, and
 *   the rule fails when `U` is never called.
 * - `must_not_call: T` holds when no call of `T` (matching `with`, when
 *   given) is made; with `before: U`, only calls before the first call of
 *   `U` count, and when `U` is never called, every call of `T` breaks it.
 * - `max_steps: N` holds when there are at most N tool calls.
 * - `order: [A, B, ...]` holds when `A` is called, then later `B`, and so
 *   on (other calls may come between).
 *
 * @example A refund policy
 * ```ts
 * import { trajectory, type TrajectoryRule } from "./mod.ts";
 * const rules: TrajectoryRule[] = [
 *   { must_call: "issue_refund", after: "verify_identity" },
 *   { must_not_call: "issue_refund", before: "verify_identity" },
 *   { max_steps: 8 },
 *   { order: ["verify_identity", "search_kb"] },
 * ];
 * const calls = ["verify_identity", "search_kb", "issue_refund"].map((name) => ({ name, arguments: {} }));
 * const s = await trajectory({ rules }).score({ example_id: "d#1", unit_id: "d#1", input: "", output: "", tool_calls: calls }, {});
 * if ("scores" in s || s.value !== 1 || s.reason !== "all 4 rules hold (3 steps)") throw new Error("unexpected");
 * ```
 */
export type TrajectoryRule =
  | {
    must_call: string;
    with?: Readonly<Record<string, ArgumentMatcher>>;
    after?: string;
  }
  | {
    must_not_call: string;
    with?: Readonly<Record<string, ArgumentMatcher>>;
    before?: string;
  }
  | { max_steps: number }
  | { order: readonly string[] };

/**
 * Options of {@linkcode trajectory}.
 *
 * @example At most five steps, under a name of its own
 * ```ts
 * import { trajectory, type TrajectoryOptions } from "./mod.ts";
 * const options: TrajectoryOptions = { name: "short_path", rules: [{ max_steps: 5 }] };
 * if (trajectory(options).name !== "short_path") throw new Error("unexpected");
 * ```
 */
export interface TrajectoryOptions {
  /**
   * The metric name.
   * @default {"trajectory"}
   */
  name?: string | undefined;
  /** The rules, at least one; all must hold for the unit to pass. */
  rules: readonly TrajectoryRule[];
}

/**
 * A call {@linkcode toolCallF1} expects: a name, and the arguments when
 * they are to be compared too.
 *
 * @example
 * ```ts
 * import { type ExpectedToolCall, toolCallF1 } from "./mod.ts";
 * const call: ExpectedToolCall = { name: "get_weather", arguments: { city: "Paris" } };
 * const s = await toolCallF1({ calls: [call], arguments: true }).score(
 *   { example_id: "d#1", unit_id: "d#1", input: "", output: "", tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }] }, {});
 * if ("scores" in s || s.value !== 1) throw new Error("unexpected");
 * ```
 */
export interface ExpectedToolCall {
  /** The tool's name. */
  name: string;
  /** The arguments, compared (JSON equality) when `arguments` is on; absent: any. */
  arguments?: unknown;
}

/**
 * Options of {@linkcode toolCallF1}.
 *
 * @example Names and arguments, a stricter pass
 * ```ts
 * import { toolCallF1, type ToolCallF1Options } from "./mod.ts";
 * const options: ToolCallF1Options = { arguments: true, threshold: 0.8 };
 * if (!toolCallF1(options).version.startsWith("tool_call_f1@1+")) throw new Error("unexpected");
 * ```
 */
export interface ToolCallF1Options {
  /**
   * The metric name.
   * @default {"tool_call_f1"}
   */
  name?: string | undefined;
  /**
   * Compare arguments as well as names: a call matches an expected call of
   * its name whose arguments equal its own (an expected call without
   * `arguments` matches any).
   * @default {false}
   */
  arguments?: boolean | undefined;
  /**
   * The expected calls (names, or names with arguments), instead of the
   * case's `expected`.
   * @default {undefined}
   */
  calls?: readonly (string | ExpectedToolCall)[] | undefined;
  /**
   * The F1 at which a unit passes.
   * @default {0.5}
   */
  threshold?: number | undefined;
}

/**
 * A rule (or another option of these scorers) that cannot be read, with its
 * path under the scorer's options, e.g. `["rules", 1, "with"]`.
 *
 * @example A rule that names two rules at once
 * ```ts
 * import { trajectory, TrajectoryOptionError } from "./mod.ts";
 * const error = (() => { try { trajectory({ rules: [{ max_steps: 3, order: ["a"] } as never] }); } catch (e) { return e; } })();
 * if (!(error instanceof TrajectoryOptionError) || error.path.join() !== "rules,0") throw new Error("unexpected");
 * if (error.message !== '"rules[0]" names two rules, "max_steps" and "order": write each as a rule of its own') throw new Error(error.message);
 * ```
 */
export class TrajectoryOptionError extends SyntaxError {
  /** The path under the scorer's options of the value at fault. */
  readonly path: readonly (string | number)[];

  /**
   * Creates the error.
   *
   * @param path The path of the value at fault.
   * @param message What is wrong.
   */
  constructor(path: readonly (string | number)[], message: string) {
    super(message);
    this.name = "TrajectoryOptionError";
    this.path = path;
  }
}

const RULES = ["must_call", "must_not_call", "max_steps", "order"] as const;
const EXTRA: Record<(typeof RULES)[number], readonly string[]> = {
  must_call: ["with", "after"],
  must_not_call: ["with", "before"],
  max_steps: [],
  order: [],
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function kind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object"
    ? "a mapping"
    : `${typeof value} ${JSON.stringify(value)}`;
}

/**
 * Checks a `trajectory` scorer's rules.
 *
 * @param rules The `rules` option.
 * @param where How messages name the scorer, e.g. `scorers[2]`; `""` for none.
 * @returns The rules.
 * @throws {TrajectoryOptionError} Naming the rule and key at fault.
 */
export function readRules(rules: unknown, where = ""): TrajectoryRule[] {
  const named = (path: readonly (string | number)[]) =>
    JSON.stringify(
      path.reduce<string>(
        (out, key) =>
          typeof key === "number"
            ? `${out}[${key}]`
            : out === ""
            ? key
            : `${out}.${key}`,
        where,
      ),
    );
  const fail = (path: (string | number)[], detail: string): never => {
    throw new TrajectoryOptionError(path, detail);
  };
  if (!Array.isArray(rules) || rules.length === 0) {
    return fail(["rules"], `${named(["rules"])} must list at least one rule`);
  }
  const toolName = (value: unknown, path: (string | number)[]): string =>
    typeof value === "string" && value !== ""
      ? value
      : fail(path, `${named(path)} must be a tool's name, not ${kind(value)}`);
  return rules.map((rule, i): TrajectoryRule => {
    const at = ["rules", i];
    if (!isObject(rule)) {
      return fail(at, `${named(at)} must be a mapping, not ${kind(rule)}`);
    }
    const given = RULES.filter((r) => Object.hasOwn(rule, r));
    if (given.length === 0) {
      return fail(
        at,
        `${named(at)} names no rule: expected one of ${RULES.join(", ")}`,
      );
    }
    if (given.length > 1) {
      return fail(
        at,
        `${named(at)} names two rules, "${given[0]}" and "${
          given[1]
        }": write each as a rule of its own`,
      );
    }
    const type = given[0]!;
    for (const key of Object.keys(rule)) {
      if (key !== type && !EXTRA[type].includes(key)) {
        const allowed = EXTRA[type].length > 0
          ? ` (${type} takes ${EXTRA[type].map((k) => `"${k}"`).join(", ")})`
          : ` (${type} takes no other key)`;
        return fail(
          [...at, key],
          `unknown key ${named([...at, key])}${allowed}`,
        );
      }
    }
    switch (type) {
      case "max_steps": {
        const n = rule.max_steps;
        if (!(typeof n === "number" && Number.isSafeInteger(n) && n >= 0)) {
          return fail(
            [...at, type],
            `${
              named([...at, type])
            } must be a whole number of at least 0, not ${kind(n)}`,
          );
        }
        return { max_steps: n };
      }
      case "order": {
        const list = rule.order;
        if (!Array.isArray(list) || list.length === 0) {
          return fail(
            [...at, type],
            `${named([...at, type])} must list tools' names, not ${kind(list)}`,
          );
        }
        return {
          order: list.map((t, k) => toolName(t, [...at, type, k])),
        };
      }
      case "must_call":
      case "must_not_call": {
        const tool = toolName(rule[type], [...at, type]);
        const guard = type === "must_call" ? "after" : "before";
        const out: Record<string, unknown> = { [type]: tool };
        if (rule.with !== undefined) {
          out.with = readWith(rule.with, [...at, "with"], named, fail);
        }
        if (rule[guard] !== undefined) {
          out[guard] = toolName(rule[guard], [...at, guard]);
        }
        return out as TrajectoryRule;
      }
    }
  });
}

function readWith(
  value: unknown,
  at: (string | number)[],
  named: (path: readonly (string | number)[]) => string,
  fail: (path: (string | number)[], detail: string) => never,
): Record<string, ArgumentMatcher> {
  if (!isObject(value)) {
    return fail(
      at,
      `${named(at)} must map arguments to tests, not ${kind(value)}`,
    );
  }
  const out: Record<string, ArgumentMatcher> = {};
  for (const [arg, test] of Object.entries(value)) {
    const path = [...at, arg];
    if (!isObject(test)) {
      return fail(
        path,
        `${
          named(path)
        } must be a test, { contains: TEXT } or { equals: VALUE }, not ${
          kind(test)
        }`,
      );
    }
    const matcher: ArgumentMatcher = {};
    for (const key of Object.keys(test)) {
      if (key !== "contains" && key !== "equals") {
        return fail(
          [...path, key],
          `unknown key ${
            named([...path, key])
          } (a test takes "contains", "equals")`,
        );
      }
    }
    if (Object.hasOwn(test, "contains")) {
      if (typeof test.contains !== "string") {
        return fail(
          [...path, "contains"],
          `${named([...path, "contains"])} must be a text, not ${
            kind(test.contains)
          }`,
        );
      }
      matcher.contains = test.contains;
    }
    if (Object.hasOwn(test, "equals")) matcher.equals = test.equals;
    if (Object.keys(matcher).length === 0) {
      return fail(path, `${named(path)} needs "contains", "equals" or both`);
    }
    out[arg] = matcher;
  }
  return out;
}

/** The value of a call's argument, `undefined` when it has none by that name. */
function argumentOf(call: ToolCall, field: string): unknown {
  const args = call.arguments;
  if (!isObject(args)) return undefined;
  if (Object.hasOwn(args, field)) return args[field];
  // A dotted path reaches into nested arguments (`filter.status`, `ids.0`).
  let v: unknown = args;
  for (const key of field.split(".")) {
    if (typeof v !== "object" || v === null || !Object.hasOwn(v, key)) {
      return undefined;
    }
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** Why a call fails a `with`, or `undefined` when it matches every test. */
function mismatch(
  call: ToolCall,
  tests: Readonly<Record<string, ArgumentMatcher>>,
): string | undefined {
  for (const [field, test] of Object.entries(tests)) {
    const value = argumentOf(call, field);
    if (value === undefined) return `has no argument "${field}"`;
    if (test.contains !== undefined) {
      const text = typeof value === "string" ? value : JSON.stringify(value);
      if (!text.includes(test.contains)) {
        return `has "${field}" ${clip(JSON.stringify(value), 80)}, without ${
          JSON.stringify(test.contains)
        }`;
      }
    }
    if (
      Object.hasOwn(test, "equals") &&
      canonicalJson(value) !== canonicalJson(test.equals)
    ) {
      return `has "${field}" ${clip(JSON.stringify(value), 80)}, not ${
        clip(JSON.stringify(test.equals), 80)
      }`;
    }
  }
  return undefined;
}

/** Steps are counted from 1, as a person reads a trace. */
function steps(indexes: readonly number[]): string {
  const shown = indexes.slice(0, 5).map((i) => i + 1).join(", ");
  const more = indexes.length > 5 ? ` and ${indexes.length - 5} more` : "";
  return `${indexes.length === 1 ? "step" : "steps"} ${shown}${more}`;
}

/** How a reason names a rule: `must_call search_kb after verify_identity`. */
function ruleText(rule: TrajectoryRule): string {
  if ("max_steps" in rule) return `max_steps ${rule.max_steps}`;
  if ("order" in rule) return `order ${rule.order.join(" → ")}`;
  const [type, tool] = "must_call" in rule
    ? ["must_call", rule.must_call]
    : ["must_not_call", rule.must_not_call];
  let text = `${type} ${tool}`;
  if (rule.with !== undefined) text += ` with ${JSON.stringify(rule.with)}`;
  if ("after" in rule && rule.after !== undefined) {
    text += ` after ${rule.after}`;
  }
  if ("before" in rule && rule.before !== undefined) {
    text += ` before ${rule.before}`;
  }
  return text;
}

/** Why a rule does not hold of the calls, or `undefined` when it holds. */
function broken(
  rule: TrajectoryRule,
  calls: readonly ToolCall[],
): string | undefined {
  const first = (tool: string, from = 0) =>
    calls.findIndex((c, i) => i >= from && c.name === tool);
  if ("max_steps" in rule) {
    return calls.length > rule.max_steps
      ? `${calls.length} steps, more than ${rule.max_steps}`
      : undefined;
  }
  if ("order" in rule) {
    let from = 0;
    for (const [k, tool] of rule.order.entries()) {
      const at = first(tool, from);
      if (at < 0) {
        return k === 0
          ? `${JSON.stringify(tool)} is never called`
          : `no call of ${JSON.stringify(tool)} after ${
            JSON.stringify(rule.order[k - 1])
          } (step ${from})`;
      }
      from = at + 1;
    }
    return undefined;
  }
  if ("must_call" in rule) {
    const tool = rule.must_call;
    let from = 0;
    if (rule.after !== undefined) {
      const guard = first(rule.after);
      if (guard < 0) {
        return `${JSON.stringify(rule.after)} is never called, so no call of ${
          JSON.stringify(tool)
        } comes after it`;
      }
      from = guard + 1;
    }
    const found = calls.flatMap((c, i) =>
      i >= from && c.name === tool ? [i] : []
    );
    if (found.length === 0) {
      return rule.after !== undefined
        ? `no call of ${JSON.stringify(tool)} after the first ${
          JSON.stringify(rule.after)
        } (step ${from})`
        : `no step calls ${JSON.stringify(tool)}`;
    }
    const tests = rule.with;
    if (tests === undefined) return undefined;
    if (found.some((i) => mismatch(calls[i]!, tests) === undefined)) {
      return undefined;
    }
    return `no call of ${JSON.stringify(tool)} matches: step ${found[0]! + 1} ${
      mismatch(calls[found[0]!]!, tests)
    }${found.length > 1 ? ` (${found.length} calls, none matching)` : ""}`;
  }
  const tool = rule.must_not_call;
  const guard = rule.before === undefined ? -1 : first(rule.before);
  const end = guard < 0 ? calls.length : guard;
  const tests = rule.with;
  const found = calls.flatMap((c, i) =>
    i < end && c.name === tool &&
      (tests === undefined || mismatch(c, tests) === undefined)
      ? [i]
      : []
  );
  if (found.length === 0) return undefined;
  const which = `${steps(found)} ${found.length === 1 ? "calls" : "call"} ${
    JSON.stringify(tool)
  }${tests !== undefined ? " with matching arguments" : ""}`;
  if (rule.before === undefined) return which;
  return guard < 0
    ? `${which}, and ${JSON.stringify(rule.before)} is never called`
    : `${which} before the first ${JSON.stringify(rule.before)} (step ${
      guard + 1
    })`;
}

function noCalls(name: string, version: string): Score {
  return nonEvaluable(name, {
    evaluator_version: version,
    reason: "not applicable: the unit records no tool calls",
  });
}

/**
 * A scorer of an agent's path: each rule is checked against the unit's tool
 * calls, the value is the fraction of the rules that hold, and the unit
 * passes when all do. The reason names each rule that failed (by its number
 * and its text) and the steps at fault. A unit without `tool_calls` is
 * `non_evaluable`.
 *
 * @param options The rules and the metric name.
 * @returns The scorer.
 * @throws {TrajectoryOptionError} When a rule cannot be read.
 *
 * @example A refund before identity was verified
 * ```ts
 * import { trajectory } from "./mod.ts";
 * const scorer = trajectory({ rules: [{ must_not_call: "issue_refund", before: "verify_identity" }, { max_steps: 5 }] });
 * const tool_calls = ["issue_refund", "verify_identity"].map((name) => ({ name, arguments: {} }));
 * const s = await scorer.score({ example_id: "d#1", unit_id: "d#1", input: "", output: "", tool_calls }, {});
 * if ("scores" in s || s.value !== 0.5 || s.passed !== false) throw new Error("unexpected");
 * if (s.reason !== '1 of 2 rules failed: rule 1 (must_not_call issue_refund before verify_identity): step 1 calls "issue_refund" before the first "verify_identity" (step 2)') throw new Error(s.reason);
 * ```
 */
export function trajectory(options: TrajectoryOptions): Scorer {
  const name = options.name ?? "trajectory";
  const rules = readRules(options.rules);
  const version = versionOf("trajectory", { rules });
  return {
    name,
    version,
    range: UNIT_RANGE,
    score(unit: Unit): Score {
      const calls = unit.tool_calls;
      if (calls === undefined) return noCalls(name, version);
      const failed: string[] = [];
      for (const [i, rule] of rules.entries()) {
        const why = broken(rule, calls);
        if (why !== undefined) {
          failed.push(`rule ${i + 1} (${ruleText(rule)}): ${why}`);
        }
      }
      const n = rules.length;
      const reason = failed.length === 0
        ? `${n === 1 ? "the rule holds" : `all ${n} rules hold`} (${
          calls.length === 1 ? "1 step" : `${calls.length} steps`
        })`
        : `${failed.length} of ${n} ${n === 1 ? "rule" : "rules"} failed: ${
          failed.join("; ")
        }`;
      return scored(name, (n - failed.length) / n, {
        evaluator_version: version,
        passed: failed.length === 0,
        reason,
      });
    },
  };
}

/** The expected calls of a value: names, or objects with a name. */
function expectedCalls(value: unknown): ExpectedToolCall[] | undefined {
  const list = isObject(value) ? value.tool_calls : value;
  if (!Array.isArray(list)) return undefined;
  const calls: ExpectedToolCall[] = [];
  for (const item of list) {
    if (typeof item === "string") calls.push({ name: item });
    else if (isObject(item) && typeof item.name === "string") {
      calls.push(
        Object.hasOwn(item, "arguments")
          ? { name: item.name, arguments: item.arguments }
          : { name: item.name },
      );
    } else return undefined;
  }
  return calls;
}

function callText(call: ExpectedToolCall | ToolCall, withArgs: boolean) {
  return withArgs && Object.hasOwn(call, "arguments")
    ? `${call.name} ${clip(JSON.stringify(call.arguments), 60)}`
    : call.name;
}

/**
 * A scorer of the tool calls made against the calls expected: the F1 of
 * precision (matched / made) and recall (matched / expected), each call
 * matched once at most. By names only, or, with `arguments: true`, by names
 * and arguments. The expected calls are the scorer's own `calls`, else the
 * case's `expected`: a list of names or of `{name, arguments?}` objects, or
 * an object with such a list as `tool_calls`. No call made and none expected
 * is 1. The reason gives precision and recall and names the calls missing
 * and those not expected. `non_evaluable` when the unit records no tool
 * calls, or there are no expected calls.
 *
 * @param options Names or names and arguments, expected calls, threshold.
 * @returns The scorer.
 * @throws {RangeError} When `threshold` is outside 0..1.
 * @throws {TrajectoryOptionError} When `calls` is not a list of calls.
 *
 * @example Two of three calls expected, one call not expected
 * ```ts
 * import { toolCallF1 } from "./mod.ts";
 * const tool_calls = ["search_kb", "search_kb", "send_email"].map((name) => ({ name, arguments: {} }));
 * const unit = { example_id: "d#1", unit_id: "d#1", input: "", output: "", tool_calls, expected: ["search_kb", "verify_identity", "search_kb"] };
 * const s = await toolCallF1().score(unit, {});
 * // precision 2/3, recall 2/3
 * if ("scores" in s || Math.abs(s.value! - 2 / 3) > 1e-12) throw new Error("unexpected");
 * ```
 */
export function toolCallF1(options: ToolCallF1Options = {}): Scorer {
  const name = options.name ?? "tool_call_f1";
  checkThreshold("tool_call_f1", options.threshold);
  const threshold = options.threshold ?? 0.5;
  const withArgs = options.arguments === true;
  let own: ExpectedToolCall[] | undefined;
  if (options.calls !== undefined) {
    own = expectedCalls(options.calls);
    if (own === undefined) {
      throw new TrajectoryOptionError(
        ["calls"],
        "The tool_call_f1 scorer's \"calls\" must list tools' names or {name, arguments} mappings",
      );
    }
  }
  const version = versionOf("tool_call_f1", {
    arguments: options.arguments,
    calls: own,
    threshold: options.threshold,
  });
  return {
    name,
    version,
    range: UNIT_RANGE,
    score(unit: Unit): Score {
      const made = unit.tool_calls;
      if (made === undefined) return noCalls(name, version);
      const expected = own ?? expectedCalls(unit.expected);
      if (expected === undefined) {
        return nonEvaluable(name, {
          evaluator_version: version,
          reason: unit.expected === undefined
            ? "not applicable: the case has no expected"
            : "not applicable: the case's expected lists no tool calls (names, or {name, arguments} objects)",
        });
      }
      const { matched, missing, extra } = match(made, expected, withArgs);
      if (made.length === 0 && expected.length === 0) {
        return scored(name, 1, {
          evaluator_version: version,
          passed: 1 >= threshold,
          reason: "no tool call expected and none made",
        });
      }
      const precision = made.length > 0 ? matched / made.length : 0;
      const recall = expected.length > 0 ? matched / expected.length : 0;
      const f1 = precision + recall > 0
        ? 2 * precision * recall / (precision + recall)
        : 0;
      let reason =
        `precision ${matched}/${made.length}, recall ${matched}/${expected.length}`;
      if (missing.length > 0) {
        reason += `; missing: ${
          missing.slice(0, 5).map((c) => callText(c, withArgs)).join(", ")
        }${missing.length > 5 ? ` and ${missing.length - 5} more` : ""}`;
      }
      if (extra.length > 0) {
        reason += `; not expected: ${
          extra.slice(0, 5).map((c) => callText(c, withArgs)).join(", ")
        }${extra.length > 5 ? ` and ${extra.length - 5} more` : ""}`;
      }
      return scored(name, f1, {
        evaluator_version: version,
        passed: f1 >= threshold,
        reason,
      });
    },
  };
}

/**
 * Pairs made calls with expected ones, each used once. Expected calls that
 * name their arguments are paired first: any call of the name fits the
 * others, so this order pairs as many as can be paired.
 */
function match(
  made: readonly ToolCall[],
  expected: readonly ExpectedToolCall[],
  withArgs: boolean,
): { matched: number; missing: ExpectedToolCall[]; extra: ToolCall[] } {
  const free = made.map(() => true);
  const specific = (e: ExpectedToolCall) =>
    withArgs && Object.hasOwn(e, "arguments");
  const order = [
    ...expected.keys().filter((i) => specific(expected[i]!)),
    ...expected.keys().filter((i) => !specific(expected[i]!)),
  ];
  const unmatched = new Set<number>();
  let matched = 0;
  for (const j of order) {
    const e = expected[j]!;
    const key = specific(e) ? canonicalJson(e.arguments) : undefined;
    const i = made.findIndex((c, k) =>
      free[k] && c.name === e.name &&
      (key === undefined || canonicalJson(c.arguments) === key)
    );
    if (i < 0) unmatched.add(j);
    else {
      free[i] = false;
      matched++;
    }
  }
  return {
    matched,
    missing: expected.filter((_, j) => unmatched.has(j)),
    extra: made.filter((_, k) => free[k]),
  };
}
