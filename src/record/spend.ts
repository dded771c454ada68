/**
 * What a run's model calls cost: the target's (each unit's `target`) and
 * the judges' (each Score's `provenance`) apart, in tokens and US dollars.
 *
 * @module
 */

import type { Unit } from "../dataset/unit.ts";
import type { Score } from "../score/mod.ts";
import { roundUsd, tokensOf, usdText } from "../net/budget.ts";

/**
 * One side of a run's spend: the target's or the judges'.
 *
 * @example
 * ```ts
 * import type { SpendSide } from "./spend.ts";
 * const side: SpendSide = { calls: 2, cached: 1, input_tokens: 300, output_tokens: 40, cost_usd: 0.0012 };
 * if (side.calls + side.cached !== 3) throw new Error();
 * ```
 */
export interface SpendSide {
  /** Calls made whose reply reported tokens or a cost. */
  calls: number;
  /** Answers that came from the cache: they cost nothing. */
  cached: number;
  /** Input (prompt) tokens of the calls made. */
  input_tokens: number;
  /** Output (completion) tokens of the calls made. */
  output_tokens: number;
  /**
   * Of `input_tokens`, those the provider read from its prompt cache
   * (priced at `cached_input_per_1m` when the `cost:` gives it). Absent
   * when no call reported any.
   */
  cached_input_tokens?: number;
  /**
   * Of `input_tokens`, those the provider wrote to its prompt cache
   * (Anthropic's `cache_creation_input_tokens`, priced at
   * `cache_write_per_1m` when the `cost:` gives it). Absent when no call
   * reported any.
   */
  cache_write_tokens?: number;
  /** What the calls made cost, in US dollars (calls without prices add 0). */
  cost_usd: number;
  /**
   * Calls made whose reply reported tokens but no cost, because no `cost:`
   * priced them: `cost_usd` leaves them out, so it is a lower bound. Absent
   * when every call was priced.
   */
  unpriced_calls?: number;
}

/**
 * A run's spend: the system's and the judges' apart, and the total.
 *
 * @example Tally the spend of a unit and its judge's Score
 * ```ts
 * import { type Spend, SpendTally } from "./mod.ts";
 * const tally = new SpendTally();
 * tally.addUnit({ example_id: "d#1", unit_id: "d#1", input: "q", output: "a",
 *   target: { usage: { prompt_tokens: 10, completion_tokens: 2 }, cost_usd: 0.001 } });
 * tally.addScore({ metric: "j", status: "scored", validity: "valid", value: 1, evaluator_version: "j@1",
 *   diagnostics: [], evidence_refs: [], provenance: { usage: { prompt_tokens: 50, completion_tokens: 9 }, cost_usd: 0.002 } });
 * const spend: Spend = tally.result();
 * if (spend.cost_usd !== 0.003 || spend.judge.input_tokens !== 50) throw new Error(JSON.stringify(spend));
 * ```
 */
export interface Spend {
  /** The system under test's calls. */
  target: SpendSide;
  /** The judges' calls (Scores whose `provenance` reports usage or a cost). */
  judge: SpendSide;
  /** Both together, in US dollars. */
  cost_usd: number;
}

function emptySide(): SpendSide {
  return {
    calls: 0,
    cached: 0,
    input_tokens: 0,
    output_tokens: 0,
    cost_usd: 0,
  };
}

/** Adds one call's record (`target` or `provenance`) to a side. */
function addCall(side: SpendSide, info: Record<string, unknown>): boolean {
  const cost = info.cost_usd;
  const tokens = tokensOf(info.usage);
  if (tokens === undefined && typeof cost !== "number") return false;
  if (info.cached === true) {
    side.cached++;
    return true;
  }
  side.calls++;
  if (tokens !== undefined) {
    side.input_tokens += tokens.input;
    side.output_tokens += tokens.output;
    if (tokens.cached !== undefined && tokens.cached > 0) {
      side.cached_input_tokens = (side.cached_input_tokens ?? 0) +
        tokens.cached;
    }
    if (tokens.cacheWrite !== undefined && tokens.cacheWrite > 0) {
      side.cache_write_tokens = (side.cache_write_tokens ?? 0) +
        tokens.cacheWrite;
    }
  }
  if (typeof cost === "number" && Number.isFinite(cost)) {
    side.cost_usd = roundUsd(side.cost_usd + cost);
  } else {
    side.unpriced_calls = (side.unpriced_calls ?? 0) + 1;
  }
  return true;
}

/**
 * The spend of one unit's judges, from its Scores: what a RunRecord's unit
 * line carries as `judge`.
 *
 * @param scores The unit's Scores.
 * @returns The judges' side, or `undefined` when no Score reports a call.
 *
 * @example
 * ```ts
 * import { judgeSpendOf } from "./mod.ts";
 * if (judgeSpendOf([]) !== undefined) throw new Error();
 * ```
 */
export function judgeSpendOf(
  scores: readonly Score[],
): SpendSide | undefined {
  let side: SpendSide | undefined;
  for (const score of scores) {
    if (score.provenance === undefined) continue;
    const next = side ?? emptySide();
    if (addCall(next, score.provenance)) side = next;
  }
  return side;
}

/**
 * Adds up a run's spend as its units and Scores go by.
 *
 * @example The spend of a record's units and Scores
 * ```ts
 * import { SpendTally } from "./mod.ts";
 * const tally = new SpendTally();
 * tally.addUnit({ example_id: "d#1", unit_id: "d#1", input: "q", output: "a", target: { usage: { prompt_tokens: 5, completion_tokens: 1 }, cached: true } });
 * if (tally.result().target.cached !== 1 || tally.result().cost_usd !== 0) throw new Error();
 * ```
 */
export class SpendTally {
  #target = emptySide();
  #judge = emptySide();

  /**
   * Adds a unit's target call; a recorded trace's unit made none.
   *
   * @param unit The unit (or a report's, whose `target` is unchecked).
   */
  addUnit(unit: Unit | { readonly target?: unknown }): void {
    const target = unit.target;
    if (typeof target !== "object" || target === null) return;
    const info = target as Record<string, unknown>;
    // A recorded trace (the `trace` target's) made no call in this run: its
    // tokens, and the cost_usd its prices give them for the cost scorer,
    // were spent when it was recorded.
    if (typeof info.trace_format === "string") return;
    addCall(this.#target, info);
  }

  /**
   * Adds a Score's judge call, when its `provenance` reports one.
   *
   * @param score The Score.
   */
  addScore(score: Score): void {
    if (score.provenance !== undefined) addCall(this.#judge, score.provenance);
  }

  /**
   * The spend so far.
   *
   * @returns A copy.
   */
  result(): Spend {
    return {
      target: { ...this.#target },
      judge: { ...this.#judge },
      cost_usd: roundUsd(this.#target.cost_usd + this.#judge.cost_usd),
    };
  }
}

/**
 * Whether a spend saw any model call at all (made or cached).
 *
 * @param spend The spend.
 * @returns `true` when there is something to show.
 *
 * @example
 * ```ts
 * import { hasSpend, SpendTally } from "./mod.ts";
 * if (hasSpend(new SpendTally().result())) throw new Error();
 * ```
 */
export function hasSpend(spend: Spend): boolean {
  const { target: t, judge: j } = spend;
  return t.calls + t.cached + j.calls + j.cached > 0;
}

/**
 * One line for people: the total, then each side's calls, tokens and cost.
 * Calls that no `cost:` priced are named as such, never shown as free: with
 * none priced the cost is `unknown`, with some the total is `at least` what
 * the priced ones cost.
 *
 * @param spend The spend.
 * @returns E.g. `cost: $0.0042 (target $0.003: 3 calls, 1200+300 tokens, 1 cached; judge $0.0012: ...)`.
 *
 * @example
 * ```ts
 * import { formatSpend, SpendTally } from "./mod.ts";
 * const tally = new SpendTally();
 * tally.addUnit({ example_id: "d#1", unit_id: "d#1", input: "q", output: "a", target: { usage: { prompt_tokens: 5, completion_tokens: 1 }, cost_usd: 0.25 } });
 * if (!formatSpend(tally.result()).startsWith("cost: $0.25 (target $0.25: 1 call, 5+1 tokens")) throw new Error(formatSpend(tally.result()));
 * ```
 *
 * @example A call no `cost:` priced
 * ```ts
 * import { formatSpend, SpendTally } from "./mod.ts";
 * const tally = new SpendTally();
 * tally.addUnit({ example_id: "d#1", unit_id: "d#1", input: "q", output: "a", target: { usage: { prompt_tokens: 5, completion_tokens: 1 } } });
 * if (formatSpend(tally.result()) !== "cost: unknown, no call was priced (target: 1 call, 5+1 tokens, unpriced)") throw new Error(formatSpend(tally.result()));
 * ```
 */
export function formatSpend(spend: Spend): string {
  const side = (name: string, s: SpendSide) => {
    const unpriced = s.unpriced_calls ?? 0;
    const none = s.calls > 0 && unpriced >= s.calls;
    return `${name}${none ? "" : ` $${usdText(s.cost_usd)}`}: ${s.calls} call${
      s.calls === 1 ? "" : "s"
    }, ${s.input_tokens}+${s.output_tokens} tokens${
      s.cached > 0 ? `, ${s.cached} cached` : ""
    }${none ? ", unpriced" : unpriced > 0 ? `, ${unpriced} unpriced` : ""}`;
  };
  const parts: string[] = [];
  const { target: t, judge: j } = spend;
  if (t.calls + t.cached > 0) parts.push(side("target", t));
  if (j.calls + j.cached > 0) parts.push(side("judge", j));
  const unpriced = (t.unpriced_calls ?? 0) + (j.unpriced_calls ?? 0);
  const total = unpriced === 0
    ? `$${usdText(spend.cost_usd)}`
    : unpriced >= t.calls + j.calls
    ? "unknown, no call was priced"
    : `at least $${usdText(spend.cost_usd)}, ${unpriced} call${
      unpriced === 1 ? "" : "s"
    } unpriced`;
  return `cost: ${total} (${parts.join("; ")})`;
}

/**
 * Whether any call of a spend had a price: without one, its `cost_usd` of 0
 * says nothing, and reports leave the dollar figures out.
 *
 * @param spend The spend.
 * @returns `false` when every call made was unpriced.
 *
 * @example
 * ```ts
 * import { isPriced, SpendTally } from "./mod.ts";
 * const tally = new SpendTally();
 * tally.addUnit({ example_id: "d#1", unit_id: "d#1", input: "q", output: "a", target: { usage: { prompt_tokens: 5, completion_tokens: 1 } } });
 * if (isPriced(tally.result())) throw new Error();
 * ```
 */
export function isPriced(spend: Spend): boolean {
  const { target: t, judge: j } = spend;
  const unpriced = (t.unpriced_calls ?? 0) + (j.unpriced_calls ?? 0);
  return unpriced === 0 || unpriced < t.calls + j.calls;
}
