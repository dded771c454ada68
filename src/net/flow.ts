/**
 * Flow control for network calls: a smooth rate limit, retries with
 * exponential backoff and jitter that honour `Retry-After`, a per-call
 * timeout, and a cap on retries across the whole run.
 *
 * @module
 */

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
   * @returns When the call may start.
   */
  async acquire(signal?: AbortSignal): Promise<void> {
    const now = performance.now();
    const at = Math.max(now, this.#next);
    this.#next = at + this.#interval;
    if (at > now) await sleep(at - now, signal);
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
   * The longest `Retry-After` honoured, in ms.
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
    await options.limiter?.acquire(options.signal);
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
      const backoff = Math.min(cap, base * 2 ** (n - 1));
      const jittered = backoff / 2 + random() * (backoff / 2);
      const delayMs = error.retryAfterMs !== undefined
        ? Math.min(error.retryAfterMs, options.maxRetryAfterMs ?? 120_000)
        : jittered;
      options.onRetry?.({ attempt: n, delayMs, error });
      await sleep(delayMs, options.signal);
    }
  }
}
