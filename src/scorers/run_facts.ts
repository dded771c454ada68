/**
 * Built-in scorers of what the target reports about its call: `latency`
 * (from `target.latency_ms`) and `cost` (from `target.cost_usd`). A unit
 * whose target record lacks the fact is `non_evaluable` (a replayed unit
 * has no latency), never a pass.
 *
 * @module
 */

import { clip, returnedText } from "../base/terminal.ts";
import { nonEvaluable, type Score, scored } from "../score/mod.ts";
import { type Scorer, UNIT_RANGE } from "./scorer.ts";
import type { Unit } from "../dataset/unit.ts";
import { versionOf } from "./_builtin.ts";

/**
 * Options of {@linkcode latencyLimit}.
 *
 * @example Two seconds at most
 * ```ts
 * import { latencyLimit, type LatencyScorerOptions } from "./mod.ts";
 * const options: LatencyScorerOptions = { max_ms: 2000 };
 * const s = await latencyLimit(options).score({ example_id: "d#1", unit_id: "d#1", input: "q", output: "a", target: { latency_ms: 2500 } }, {});
 * if ("scores" in s || s.value !== 0 || s.reason !== "2500 ms, more than 2000 ms") throw new Error("unexpected");
 * ```
 */
export interface LatencyScorerOptions {
  /**
   * The metric name.
   * @default {"latency"}
   */
  name?: string | undefined;
  /** The most milliseconds a call may take. */
  max_ms: number;
}

/**
 * Options of {@linkcode costLimit}.
 *
 * @example A tenth of a cent per unit
 * ```ts
 * import { costLimit, type CostScorerOptions } from "./mod.ts";
 * const options: CostScorerOptions = { max_usd: 0.001 };
 * const s = await costLimit(options).score({ example_id: "d#1", unit_id: "d#1", input: "q", output: "a", target: { cost_usd: 0.0004 } }, {});
 * if ("scores" in s || s.value !== 1) throw new Error("unexpected");
 * ```
 */
export interface CostScorerOptions {
  /**
   * The metric name.
   * @default {"cost"}
   */
  name?: string | undefined;
  /** The most US dollars one unit's call may cost. */
  max_usd: number;
}

/**
 * A recorded value, cut short, as TypeScript shows it: a function target's
 * `info` may give NaN, which JSON would show as null.
 */
function shown(value: unknown): string {
  return clip(returnedText(value), 40);
}

function limit(
  type: string,
  name: string,
  max: number,
  key: "latency_ms" | "cost_usd",
  unitText: (n: number) => string,
): Scorer {
  if (!(Number.isFinite(max) && max >= 0)) {
    throw new RangeError(
      `The ${type} scorer's limit must be a number of at least 0, not ${max}`,
    );
  }
  const version = versionOf(type, { max });
  return {
    name,
    version,
    range: UNIT_RANGE,
    score(unit: Unit): Score {
      const fact = unit.target?.[key];
      if (typeof fact !== "number" || !Number.isFinite(fact) || fact < 0) {
        return nonEvaluable(name, {
          evaluator_version: version,
          reason: `not applicable: the unit's target record ${
            fact === undefined || fact === null
              ? `has no ${key}`
              // Named when it is there but unusable, not called absent.
              : `gives ${key} as ${shown(fact)}, not a number of at least 0`
          }`,
        });
      }
      const ok = fact <= max;
      return scored(name, ok ? 1 : 0, {
        evaluator_version: version,
        reason: ok
          ? unitText(fact)
          : `${unitText(fact)}, more than ${unitText(max)}`,
      });
    },
  };
}

/**
 * `latency`: 1 when the target's call took at most `max_ms` milliseconds
 * (its record's `latency_ms`), else 0. `non_evaluable` when the unit has no
 * latency (a replayed output, a unit record without it).
 *
 * @param options The name and the limit.
 * @returns The scorer.
 * @throws {RangeError} When the limit is negative.
 *
 * @example A replayed output has no latency to judge
 * ```ts
 * import { latencyLimit } from "./mod.ts";
 * const s = await latencyLimit({ max_ms: 1000 }).score({ example_id: "d#1", unit_id: "d#1", input: "q", output: "a" }, {});
 * if ("scores" in s || s.status !== "non_evaluable") throw new Error("unexpected");
 * ```
 */
export function latencyLimit(options: LatencyScorerOptions): Scorer {
  return limit(
    "latency",
    options.name ?? "latency",
    options.max_ms,
    "latency_ms",
    (n) => `${n} ms`,
  );
}

/**
 * `cost`: 1 when the target's call cost at most `max_usd` US dollars (its
 * record's `cost_usd`), else 0. `non_evaluable` when the unit's target
 * record has no cost.
 *
 * @param options The name and the limit.
 * @returns The scorer.
 * @throws {RangeError} When the limit is negative.
 *
 * @example
 * ```ts
 * import { costLimit } from "./mod.ts";
 * const s = await costLimit({ max_usd: 0.01 }).score({ example_id: "d#1", unit_id: "d#1", input: "q", output: "a", target: { cost_usd: 0.02 } }, {});
 * if ("scores" in s || s.value !== 0 || s.reason !== "$0.02, more than $0.01") throw new Error("unexpected");
 * ```
 */
export function costLimit(options: CostScorerOptions): Scorer {
  return limit(
    "cost",
    options.name ?? "cost",
    options.max_usd,
    "cost_usd",
    (n) => `$${n}`,
  );
}
