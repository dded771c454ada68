/**
 * Flow control for network calls: a smooth rate limit, retries with
 * exponential backoff and jitter that honour `Retry-After`, a per-call
 * timeout, and a cap on retries across the whole run.
 *
 * @module
 */

/**
 * Why a network call is waiting rather than running: for its rate limit
 * (`rate_limit`), for the `Retry-After` a server answered with, for a backoff
 * before a retry the server gave no time for, or for a free call slot under
 * the open-file limit.
 *
 * @example
 * ```ts
 * import { type FlowWait, FlowWatch } from "./mod.ts";
 * const kind: FlowWait = "retry_after";
 * const end = new FlowWatch().wait(kind, 1000);
 * end();
 * ```
 */
export type FlowWait = "rate_limit" | "retry_after" | "backoff" | "slots";

/**
 * What holds a run's network calls back at one moment: how many calls wait
 * for each reason, and when the longest `Retry-After` wait ends.
 *
 * @example Read it for a progress line
 * ```ts
 * import { type FlowState, FlowWatch } from "./mod.ts";
 * const state: FlowState = new FlowWatch().state();
 * if (state.waiting.rate_limit !== 0 || state.retryAfterMs !== 0) throw new Error("unexpected");
 * ```
 */
export interface FlowState {
  /** Calls waiting now, by reason. */
  waiting: Record<FlowWait, number>;
  /** Milliseconds until the last `Retry-After` wait under way ends; 0 when none is. */
  retryAfterMs: number;
}

/**
 * The waits of one run's network calls, as they happen: each call that has
 * to wait (its rate limit, a `Retry-After`, a backoff, a call slot) says so
 * here and says when it stops. A run makes its own and hands it to its
 * stages (`TargetContext.flow`, `ScorerContext.flow`); nothing is shared
 * between runs.
 *
 * @example Two calls held by the rate limit, one released
 * ```ts
 * import { FlowWatch } from "./mod.ts";
 * const watch = new FlowWatch();
 * const first = watch.wait("rate_limit");
 * watch.wait("rate_limit");
 * first();
 * first(); // a second call changes nothing
 * if (watch.state().waiting.rate_limit !== 1) throw new Error("unexpected");
 * ```
 */
export class FlowWatch {
  #waiting: Record<FlowWait, number> = {
    rate_limit: 0,
    retry_after: 0,
    backoff: 0,
    slots: 0,
  };
  #retryAfterEnds = new Map<number, number>();
  #next = 0;

  /**
   * Records that a call starts to wait.
   *
   * @param kind Why.
   * @param ms How long, when known (a `Retry-After`).
   * @returns Call it when the wait ends, however it ends.
   */
  wait(kind: FlowWait, ms?: number): () => void {
    this.#waiting[kind]++;
    const id = this.#next++;
    if (kind === "retry_after" && ms !== undefined) {
      this.#retryAfterEnds.set(id, performance.now() + ms);
    }
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#waiting[kind]--;
      this.#retryAfterEnds.delete(id);
    };
  }

  /**
   * What holds the calls back now.
   *
   * @returns Calls waiting by reason, and the longest `Retry-After` left.
   */
  state(): FlowState {
    let last = 0;
    for (const end of this.#retryAfterEnds.values()) last = Math.max(last, end);
    return {
      waiting: { ...this.#waiting },
      retryAfterMs: last === 0 ? 0 : Math.max(0, last - performance.now()),
    };
  }
}

/** Options of {@linkcode RateLimiter}. */
export interface RateLimiterOptions {
  /** Requests per minute; spaced evenly, never in bursts. */
  perMinute: number;
}

/**
 * Spaces calls evenly: at `perMinute` requests per minute, one call may start
 * every `60000 / perMinute` ms. A burst of waiting callers is released one
 * slot at a time.
 *
 * @example
 * ```ts
 * import { RateLimiter } from "./flow.ts";
 * const limiter = new RateLimiter({ perMinute: 6000 }); // one every 10 ms
 * const start = performance.now();
 * await Promise.all([1, 2, 3].map(() => limiter.acquire()));
 * if (performance.now() - start < 15) throw new Error("not spaced");
 * ```
 */
export class RateLimiter {
  #interval: number;
  #next = 0;

  /**
   * Creates the limiter.
   *
   * @param options The rate.
   */
  constructor(options: RateLimiterOptions) {
    if (!(options.perMinute > 0)) {
      throw new RangeError("perMinute must be positive");
    }
    this.#interval = 60_000 / options.perMinute;
  }

  /**
   * Waits for the next free slot.
   *
   * @param signal Aborting stops the wait.
   * @param watch Told of the wait, when there is one.
   * @returns When the call may start.
   */
  async acquire(signal?: AbortSignal, watch?: FlowWatch): Promise<void> {
    const now = performance.now();
    const at = Math.max(now, this.#next);
    this.#next = at + this.#interval;
    if (at <= now) return;
    const end = watch?.wait("rate_limit", at - now);
    try {
      await sleep(at - now, signal);
    } finally {
      end?.();
    }
  }
}

/**
 * Waits `ms` milliseconds, or less if `signal` aborts (then it throws the
 * signal's reason).
 *
 * @param ms How long.
 * @param signal Aborting ends the wait early.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** A failure that may go away if the call is made again. */
export class RetryableError extends Error {
  /** How long the server asked us to wait, in ms (from `Retry-After`). */
  readonly retryAfterMs: number | undefined;

  /**
   * Creates the error.
   *
   * @param message What happened.
   * @param retryAfterMs The server's requested wait.
   */
  constructor(message: string, retryAfterMs?: number) {
    super(message);
    this.name = "RetryableError";
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * Reads a `Retry-After` header: seconds, or an HTTP date.
 *
 * @param value The header's value.
 * @param now The current time in ms since the epoch.
 * @returns The wait in ms, or `undefined` when absent or unreadable.
 */
export function parseRetryAfter(
  value: string | null,
  now: number = Date.now(),
): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const seconds = Number(value.trim());
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** A budget of retries shared by every call of a run. */
export class RetryBudget {
  #left: number;

  /**
   * Creates the budget.
   *
   * @param total How many retries the whole run may make.
   */
  constructor(total: number) {
    this.#left = total;
  }

  /**
   * Takes one retry from the budget.
   *
   * @returns Whether one was left.
   */
  take(): boolean {
    if (this.#left <= 0) return false;
    this.#left--;
    return true;
  }

  /** Retries left. */
  get left(): number {
    return this.#left;
  }
}

/** Options of {@linkcode withRetries}. */
export interface RetryOptions {
  /**
   * Retries of one call after its first attempt.
   * @default {4}
   */
  retries?: number;
  /**
   * The first backoff, in ms; each retry doubles it (before jitter).
   * @default {500}
   */
  baseDelayMs?: number;
  /**
   * The longest backoff, in ms (a `Retry-After` may ask for more, up to `maxRetryAfterMs`).
   * @default {30000}
   */
  maxDelayMs?: number;
  /**
   * The longest `Retry-After` waited for, in ms: a server asking for more
   * fails the call at once (the wait would hold the run, and the server
   * would likely answer the same).
   * @default {120000}
   */
  maxRetryAfterMs?: number;
  /**
   * Retries left for the whole run.
   * @default {unlimited}
   */
  budget?: RetryBudget;
  /**
   * Paces every attempt, retries included.
   * @default {undefined}
   */
  limiter?: RateLimiter;
  /**
   * Aborting stops waiting and retrying.
   * @default {undefined}
   */
  signal?: AbortSignal;
  /**
   * The source of randomness for jitter, in [0, 1).
   * @default {Math.random}
   */
  random?: () => number;
  /**
   * Told of every wait: for the limiter, for a `Retry-After`, for a backoff.
   * @default {undefined}
   */
  watch?: FlowWatch;
  /**
   * Told of each retry before its wait (for progress and logs).
   * @default {undefined}
   */
  onRetry?: (
    info: { attempt: number; delayMs: number; error: RetryableError },
  ) => void;
}

/**
 * Calls `attempt` until it succeeds, throws a non-retryable error, or the
 * retries run out. A {@linkcode RetryableError} is retried after its
 * `Retry-After`, else after an exponential backoff with full jitter
 * (a uniform wait between half and all of `base · 2^n`, capped).
 *
 * @param attempt One try; its argument is the attempt number from 1.
 * @param options Retries, delays, budget, limiter and signal.
 * @returns What the successful attempt returned.
 * @throws The last error, with the number of attempts in its message.
 */
export async function withRetries<T>(
  attempt: (n: number) => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  const retries = options.retries ?? 4;
  const base = options.baseDelayMs ?? 500;
  const cap = options.maxDelayMs ?? 30_000;
  const random = options.random ?? Math.random;
  for (let n = 1;; n++) {
    if (options.limiter !== undefined) {
      await options.limiter.acquire(options.signal, options.watch);
    }
    try {
      return await attempt(n);
    } catch (error) {
      if (!(error instanceof RetryableError) || options.signal?.aborted) {
        throw error;
      }
      if (
        n > retries || (options.budget !== undefined && !options.budget.take())
      ) {
        const why = n > retries ? "" : ", the run's retry budget is spent";
        throw new Error(
          `${error.message} (after ${n} attempt${n === 1 ? "" : "s"}${why})`,
        );
      }
      const longest = options.maxRetryAfterMs ?? 120_000;
      if (error.retryAfterMs !== undefined && error.retryAfterMs > longest) {
        // A server that asks for an hour (a spent daily quota) answers the
        // same after any shorter wait: the call fails now, and says why.
        throw new Error(
          `${error.message} (the server asked to wait ${
            secondsText(error.retryAfterMs)
          } (Retry-After), longer than the ${
            secondsText(longest)
          } evalpipe waits; not retried)`,
        );
      }
      const backoff = Math.min(cap, base * 2 ** (n - 1));
      const jittered = backoff / 2 + random() * (backoff / 2);
      const delayMs = error.retryAfterMs ?? jittered;
      options.onRetry?.({ attempt: n, delayMs, error });
      const end = options.watch?.wait(
        error.retryAfterMs !== undefined ? "retry_after" : "backoff",
        delayMs,
      );
      try {
        await sleep(delayMs, options.signal);
      } finally {
        end?.();
      }
    }
  }
}

/** `250ms`, `1.5s`, `3600s`: a wait as the messages say it. */
function secondsText(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  return ms < 60_000
    ? `${Math.round(ms / 100) / 10}s`
    : `${Math.round(ms / 1000)}s`;
}
