/**
 * What every network target and judge shares: its flow control settings and
 * the call loop around one HTTP exchange.
 *
 * @module
 */

import {
  type FlowWatch,
  RateLimiter,
  RetryBudget,
  withRetries,
} from "./flow.ts";

/**
 * Flow control settings of a network target or judge (config keys).
 *
 * @example An HTTP target that waits at most 10 s per attempt, retries twice
 * and makes at most 120 calls a minute
 * ```ts
 * import { httpTarget, type NetworkSettings } from "../targets/mod.ts";
 * const flow: NetworkSettings = { timeout: 10, retries: 2, rate_limit: 120 };
 * const target = httpTarget({ url: "http://127.0.0.1:9/answer", output: "answer", ...flow });
 * if (typeof target.call !== "function") throw new Error("unexpected");
 * ```
 */
export interface NetworkSettings {
  /** Seconds one call may take (per attempt). Default 60. */
  timeout?: number | undefined;
  /** Retries of one call after its first attempt. Default 4. */
  retries?: number | undefined;
  /** Requests per minute, spaced evenly. Default: no limit. */
  rate_limit?: number | undefined;
  /** Retries the whole run may make, across all calls. Default 1000. */
  max_total_retries?: number | undefined;
  /** Seconds of the first backoff; each retry doubles it, with jitter. Default 0.5. */
  retry_delay?: number | undefined;
  /**
   * Redirects within the same origin (scheme, host, port) followed per call;
   * one to another origin is never followed. Default 3.
   */
  max_redirects?: number | undefined;
  /**
   * The most bytes of one answer read; a longer answer is a target error,
   * not retried, and the read stops there. Default 33554432 (32 MiB).
   */
  max_response_bytes?: number | undefined;
}

/**
 * Settings without their flow control: what identifies a target for its
 * cache. Timeouts, retries, rate limits and limits on redirects and sizes change how a
 * call is made, never its answer, so changing them keeps the cache.
 *
 * @param settings A target's settings.
 * @returns The same, without the flow control keys.
 */
export function withoutFlow<T extends NetworkSettings>(
  settings: T,
): Omit<T, keyof NetworkSettings> {
  const {
    timeout: _t,
    retries: _r,
    rate_limit: _l,
    max_total_retries: _m,
    retry_delay: _d,
    max_redirects: _h,
    max_response_bytes: _b,
    ...rest
  } = settings;
  return rest;
}

/** Runs calls with the settings' timeout, rate limit and retries. */
export class NetworkFlow {
  /** How long one attempt may take, in ms. */
  readonly timeoutMs: number;
  /** Same-origin redirects followed per attempt. */
  readonly maxRedirects: number;
  /** The most bytes of one answer read. */
  readonly maxResponseBytes: number | undefined;
  #retries: number;
  #limiter: RateLimiter | undefined;
  #budget: RetryBudget;
  #baseDelayMs: number;

  /**
   * Creates the flow.
   *
   * @param settings The settings.
   */
  constructor(settings: NetworkSettings = {}) {
    this.timeoutMs = (settings.timeout ?? 60) * 1000;
    this.maxRedirects = settings.max_redirects ?? 3;
    this.maxResponseBytes = settings.max_response_bytes;
    this.#retries = settings.retries ?? 4;
    this.#limiter = settings.rate_limit !== undefined
      ? new RateLimiter({ perMinute: settings.rate_limit })
      : undefined;
    this.#budget = new RetryBudget(settings.max_total_retries ?? 1000);
    this.#baseDelayMs = (settings.retry_delay ?? 0.5) * 1000;
  }

  /**
   * Runs one call: paced by the rate limit, retried on retryable failures.
   *
   * @param attempt One try.
   * @param signal Aborting stops it.
   * @param watch Told of every wait (rate limit, `Retry-After`, backoff).
   * @returns The result and how many attempts it took.
   */
  async run<T>(
    attempt: () => Promise<T>,
    signal?: AbortSignal,
    watch?: FlowWatch,
  ): Promise<{ result: T; attempts: number }> {
    let attempts = 0;
    const result = await withRetries(() => {
      attempts++;
      return attempt();
    }, {
      retries: this.#retries,
      baseDelayMs: this.#baseDelayMs,
      budget: this.#budget,
      ...(this.#limiter !== undefined ? { limiter: this.#limiter } : {}),
      ...(signal !== undefined ? { signal } : {}),
      ...(watch !== undefined ? { watch } : {}),
    });
    return { result, attempts };
  }
}
