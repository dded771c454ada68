/**
 * What model calls cost and a cap on what a run may spend: prices per
 * million tokens turn a reply's `usage` into US dollars, and a budget
 * refuses to start a call once the spend has reached it.
 *
 * @module
 */

/**
 * A model's prices, in US dollars per million tokens (the config's `cost:`).
 *
 * @example A call of 1,200 prompt and 300 completion tokens
 * ```ts
 * import { costOf, type Prices } from "./budget.ts";
 * const prices: Prices = { input_per_1m: 2.5, output_per_1m: 10 };
 * const usd = costOf({ prompt_tokens: 1200, completion_tokens: 300 }, prices);
 * if (usd !== 0.006) throw new Error(String(usd));
 * ```
 */
export interface Prices {
  /** US dollars per million input (prompt) tokens. */
  input_per_1m: number;
  /** US dollars per million output (completion) tokens. */
  output_per_1m: number;
  /**
   * US dollars per million input tokens the provider read from its prompt
   * cache (`usage.prompt_tokens_details.cached_tokens`,
   * `cache_read_input_tokens`), which providers price lower.
   * @default {input_per_1m}
   */
  cached_input_per_1m?: number | undefined;
  /**
   * US dollars per million input tokens the provider wrote to its prompt
   * cache (Anthropic's `cache_creation_input_tokens`), which providers
   * price above the input price.
   * @default {input_per_1m}
   */
  cache_write_per_1m?: number | undefined;
  /**
   * US dollars per million input tokens written to Anthropic's 1-hour
   * cache (`usage.cache_creation.ephemeral_1h_input_tokens`, part of
   * `cache_creation_input_tokens`), which it bills at twice the input price
   * where a 5-minute write is 1.25 times.
   * @default {cache_write_per_1m}
   */
  cache_write_1h_per_1m?: number | undefined;
}

/**
 * What a call cost, from the `usage` its reply reports (the OpenAI names
 * `prompt_tokens` and `completion_tokens`, or `input_tokens` and
 * `output_tokens`), rounded to a billionth of a dollar so that sums stay
 * readable. Input tokens read from the provider's prompt cache are priced
 * at `cached_input_per_1m` when it is given, those written to it at
 * `cache_write_per_1m` when it is given, else as any input token; those
 * written to Anthropic's 1-hour cache at `cache_write_1h_per_1m` when it is
 * given, else as any cache write.
 *
 * @param usage The reply's `usage`.
 * @param prices The prices.
 * @returns The cost in US dollars, or `undefined` when the reply reports no token counts.
 *
 * @example A reply without usage has no known cost
 * ```ts
 * import { costOf } from "./budget.ts";
 * if (costOf(undefined, { input_per_1m: 1, output_per_1m: 1 }) !== undefined) throw new Error();
 * ```
 *
 * @example 1,000 prompt tokens of which 800 were cached, at a tenth of the price
 * ```ts
 * import { costOf } from "./budget.ts";
 * const usage = { prompt_tokens: 1000, completion_tokens: 0, prompt_tokens_details: { cached_tokens: 800 } };
 * const usd = costOf(usage, { input_per_1m: 2, output_per_1m: 8, cached_input_per_1m: 0.2 });
 * if (usd !== 0.00056) throw new Error(String(usd));
 * ```
 *
 * @example Anthropic's usage: 100 input tokens, 900 written to the cache at 1.25 times the price
 * ```ts
 * import { costOf } from "./budget.ts";
 * const usage = { input_tokens: 100, output_tokens: 0, cache_creation_input_tokens: 900 };
 * const usd = costOf(usage, { input_per_1m: 4, output_per_1m: 20, cache_write_per_1m: 5 });
 * if (usd !== 0.0049) throw new Error(String(usd));
 * ```
 *
 * @example 600 of those 900 written to Anthropic's 1-hour cache, at twice the price
 * ```ts
 * import { costOf } from "./budget.ts";
 * const usage = {
 *   input_tokens: 100, output_tokens: 0, cache_creation_input_tokens: 900,
 *   cache_creation: { ephemeral_5m_input_tokens: 300, ephemeral_1h_input_tokens: 600 },
 * };
 * const usd = costOf(usage, { input_per_1m: 4, output_per_1m: 20, cache_write_per_1m: 5, cache_write_1h_per_1m: 8 });
 * if (usd !== 0.0067) throw new Error(String(usd));
 * ```
 */
export function costOf(usage: unknown, prices: Prices): number | undefined {
  const tokens = tokensOf(usage);
  if (tokens === undefined) return undefined;
  const cachedPrice = prices.cached_input_per_1m;
  const writePrice = prices.cache_write_per_1m;
  const hourPrice = prices.cache_write_1h_per_1m;
  const cached = cachedPrice === undefined ? 0 : tokens.cached ?? 0;
  // A 1-hour write without a price of its own is any cache write.
  const hour = hourPrice === undefined ? 0 : tokens.cacheWrite1h ?? 0;
  const written = writePrice === undefined
    ? 0
    : (tokens.cacheWrite ?? 0) - hour;
  // Without a price of their own, cache tokens cost what any input token
  // does: the sum is the one it always was, to the last bit.
  const input = cached === 0 && written === 0 && hour === 0
    ? tokens.input * prices.input_per_1m
    : (tokens.input - cached - written - hour) * prices.input_per_1m +
      cached * (cachedPrice ?? 0) + written * (writePrice ?? 0) +
      hour * (hourPrice ?? 0);
  return roundUsd((input + tokens.output * prices.output_per_1m) / 1e6);
}

/** A token count: a finite number, not negative. */
function countOf(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0
    ? value
    : undefined;
}

/**
 * The input and output token counts a reply's `usage` reports, how many of
 * the input tokens the provider read from its prompt cache, and how many it
 * wrote to it. OpenAI's `prompt_tokens_details.cached_tokens`
 * (`input_tokens_details` in its Responses API, `cache_write_tokens` beside
 * it in Azure's), DeepSeek's `prompt_cache_hit_tokens` and, beside
 * `prompt_tokens`, `cache_read_input_tokens` and
 * `cache_creation_input_tokens` (LiteLLM's) are part of the input count;
 * Anthropic's `cache_read_input_tokens` and `cache_creation_input_tokens`
 * beside `input_tokens` alone are not (its Messages API counts them apart),
 * and are added to it. Of the writes, those to Anthropic's 1-hour cache
 * (`cache_creation.ephemeral_1h_input_tokens`) are counted apart too.
 *
 * @param usage The reply's `usage`.
 * @returns The counts (`cached` and `cacheWrite` only when the reply reports
 *   them, together at most `input`; `cacheWrite1h`, at most `cacheWrite`,
 *   only when it reports the 1-hour writes), or `undefined` when it reports
 *   neither input nor output.
 *
 * @example
 * ```ts
 * import { tokensOf } from "./budget.ts";
 * const t = tokensOf({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 });
 * if (t?.input !== 12 || t.output !== 3 || t.cached !== undefined) throw new Error();
 * const c = tokensOf({ prompt_tokens: 12, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 8 } });
 * if (c?.input !== 12 || c.cached !== 8) throw new Error();
 * const a = tokensOf({ input_tokens: 10, output_tokens: 3, cache_read_input_tokens: 50, cache_creation_input_tokens: 40 });
 * if (a?.input !== 100 || a.cached !== 50 || a.cacheWrite !== 40) throw new Error();
 * ```
 */
export function tokensOf(
  usage: unknown,
):
  | {
    input: number;
    output: number;
    cached?: number;
    cacheWrite?: number;
    cacheWrite1h?: number;
  }
  | undefined {
  if (typeof usage !== "object" || usage === null) return undefined;
  const u = usage as Record<string, unknown>;
  // DeepSeek's hits and misses make up its prompt_tokens.
  const hits = countOf(u.prompt_cache_hit_tokens);
  const misses = countOf(u.prompt_cache_miss_tokens);
  const prompt = countOf(u.prompt_tokens) ??
    (hits !== undefined && misses !== undefined ? hits + misses : undefined);
  const input = prompt ?? countOf(u.input_tokens);
  const output = countOf(u.completion_tokens) ?? countOf(u.output_tokens);
  if (input === undefined && output === undefined) return undefined;
  const details = (field: string) => {
    for (const key of ["prompt_tokens_details", "input_tokens_details"]) {
      const d = u[key];
      const n = typeof d === "object" && d !== null
        ? countOf((d as Record<string, unknown>)[field])
        : undefined;
      if (n !== undefined) return n;
    }
    return undefined;
  };
  const beside = (key: string) =>
    prompt !== undefined ? countOf(u[key]) : undefined;
  const readIn = details("cached_tokens") ??
    beside("cache_read_input_tokens") ??
    (prompt !== undefined ? hits : undefined);
  const writtenIn = details("cache_write_tokens") ??
    beside("cache_creation_input_tokens");
  const readApart = readIn === undefined && prompt === undefined
    ? countOf(u.cache_read_input_tokens)
    : undefined;
  const writtenApart = writtenIn === undefined && prompt === undefined
    ? countOf(u.cache_creation_input_tokens)
    : undefined;
  const total = (input ?? 0) + (readApart ?? 0) + (writtenApart ?? 0);
  const cached = readIn !== undefined ? Math.min(readIn, total) : readApart;
  const cacheWrite = writtenIn !== undefined
    ? Math.min(writtenIn, total - (cached ?? 0))
    : writtenApart;
  const split = u.cache_creation;
  const hour = cacheWrite !== undefined && typeof split === "object" &&
      split !== null
    ? countOf((split as Record<string, unknown>).ephemeral_1h_input_tokens)
    : undefined;
  return {
    input: total,
    output: output ?? 0,
    ...(cached !== undefined ? { cached } : {}),
    ...(cacheWrite !== undefined ? { cacheWrite } : {}),
    ...(hour !== undefined && cacheWrite !== undefined
      ? { cacheWrite1h: Math.min(hour, cacheWrite) }
      : {}),
  };
}

/**
 * A sum of US dollars rounded to a billionth: what floating point adds
 * beyond that is noise.
 *
 * @param usd An amount.
 * @returns It, rounded.
 *
 * @example
 * ```ts
 * import { roundUsd } from "./budget.ts";
 * if (roundUsd(0.1 + 0.2) !== 0.3) throw new Error();
 * ```
 */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e9) / 1e9;
}

/**
 * An amount of US dollars as people read it: up to six decimals, without
 * trailing zeros.
 *
 * @param usd An amount.
 * @returns E.g. `0.0042`.
 *
 * @example
 * ```ts
 * import { usdText } from "./budget.ts";
 * if (usdText(0.00420001) !== "0.0042" || usdText(2) !== "2") throw new Error();
 * ```
 */
export function usdText(usd: number): string {
  const text = usd.toFixed(6).replace(/0+$/, "").replace(/\.$/, "");
  return text === "-0" ? "0" : text;
}

/**
 * Thrown instead of starting a call once the budget is spent. Its `code`
 * is the diagnostic code of the Scores it blocks.
 *
 * @example
 * ```ts
 * import { Budget, BudgetError } from "./budget.ts";
 * const budget = new Budget(0.01);
 * budget.charge(0.01);
 * try {
 *   budget.claim();
 *   throw new Error("unexpected");
 * } catch (error) {
 *   if (!(error instanceof BudgetError) || error.code !== "budget.exhausted") throw error;
 * }
 * ```
 */
export class BudgetError extends Error {
  /** The diagnostic code: `budget.exhausted`. */
  readonly code = "budget.exhausted";

  /**
   * Creates the error.
   *
   * @param message Why no call starts.
   */
  constructor(message: string) {
    super(message);
    this.name = "BudgetError";
  }
}

/**
 * A run's spending cap (the config's `budget_usd`): every priced call adds
 * its cost, and once the spend has reached the cap no new call starts.
 * Calls already in flight finish, so the spend may pass the cap by what
 * they cost.
 *
 * @example Two calls fit, the third is refused
 * ```ts
 * import { Budget, BudgetError } from "./budget.ts";
 * const budget = new Budget(0.02);
 * for (let i = 0; i < 3; i++) {
 *   try {
 *     budget.claim();
 *     budget.charge(0.01);
 *   } catch (error) {
 *     if (!(error instanceof BudgetError)) throw error; // refused, and counted
 *   }
 * }
 * if (budget.spent !== 0.02 || budget.refused !== 1) throw new Error();
 * ```
 */
export class Budget {
  /** The cap, in US dollars. */
  readonly limit: number;
  /** What the priced calls cost so far, in US dollars. */
  spent = 0;
  /** Calls refused because the budget was spent. */
  refused = 0;

  /**
   * Creates the budget.
   *
   * @param limitUsd The cap, in US dollars.
   */
  constructor(limitUsd: number) {
    this.limit = limitUsd;
  }

  /** Whether the spend has reached the cap. */
  get exhausted(): boolean {
    return this.spent >= this.limit;
  }

  /**
   * Asks to start a call.
   *
   * @throws {BudgetError} When the spend has reached the cap (counted in `refused`).
   */
  claim(): void {
    if (!this.exhausted) return;
    this.refused++;
    throw new BudgetError(
      `the budget_usd of $${usdText(this.limit)} is spent ($${
        usdText(this.spent)
      } so far); no new call starts`,
    );
  }

  /**
   * Adds what a call cost.
   *
   * @param usd The cost, in US dollars; `undefined` (not known) adds nothing.
   */
  charge(usd: number | undefined): void {
    if (usd !== undefined && Number.isFinite(usd) && usd > 0) {
      this.spent = roundUsd(this.spent + usd);
    }
  }
}
