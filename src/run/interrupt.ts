/**
 * Stopping a run on SIGINT or SIGTERM: the first signal stops the intake and
 * lets what runs finish for a grace period, a second one stops everything.
 *
 * @module
 */

/**
 * The signals {@linkcode onInterrupt} listens to.
 *
 * @example
 * ```ts
 * import { type InterruptSignal, signalExitCode } from "./mod.ts";
 * const signal: InterruptSignal = "SIGTERM";
 * if (signalExitCode(signal) !== 143) throw new Error("unexpected");
 * ```
 */
export type InterruptSignal = "SIGINT" | "SIGTERM";

/**
 * The exit code of a process ended by a signal, as shells report it:
 * 128 plus the signal's number.
 *
 * @param signal The signal.
 * @returns 130 for SIGINT, 143 for SIGTERM.
 *
 * @example
 * ```ts
 * import { signalExitCode } from "./interrupt.ts";
 * if (signalExitCode("SIGINT") !== 130) throw new Error();
 * ```
 */
export function signalExitCode(signal: InterruptSignal): 130 | 143 {
  return signal === "SIGINT" ? 130 : 143;
}

/**
 * Options of {@linkcode onInterrupt}.
 *
 * @example Ten seconds of grace, and a word for people on each signal
 * ```ts
 * import { type InterruptOptions, onInterrupt } from "./mod.ts";
 * const options: InterruptOptions = {
 *   graceMs: 10_000,
 *   onSignal: (signal, again) => console.error(again ? `${signal}: stopping now` : `${signal}: finishing`),
 * };
 * const controller = new AbortController();
 * onInterrupt(controller, controller, options).dispose();
 * ```
 */
export interface InterruptOptions {
  /**
   * How long, in milliseconds, what runs may finish after the first signal
   * before `abort` is aborted.
   * @default {0}
   */
  graceMs?: number | undefined;
  /**
   * Called on each signal: on the first (`again` false) before `stop` is
   * aborted, on a later one after `abort` is (a command line exits there).
   * @default {undefined}
   */
  onSignal?: ((signal: InterruptSignal, again: boolean) => void) | undefined;
}

/**
 * What {@linkcode onInterrupt} returns.
 *
 * @example Nothing received until a signal comes
 * ```ts
 * import { type Interrupt, onInterrupt } from "./mod.ts";
 * const controller = new AbortController();
 * const interrupt: Interrupt = onInterrupt(controller, controller);
 * interrupt.dispose();
 * if (interrupt.signal !== undefined || controller.signal.aborted) throw new Error("unexpected");
 * ```
 */
export interface Interrupt {
  /** The first signal received, if any. */
  readonly signal: InterruptSignal | undefined;
  /** Stops listening and cancels a pending grace timer. */
  dispose(): void;
}

/**
 * Listens for SIGINT and SIGTERM. The first one aborts `stop` (take no new
 * work) and, `graceMs` later, `abort` (kill what still runs: every stage
 * given its signal kills its child process groups). A second signal aborts
 * `abort` at once. Pass the same controller twice to stop at once.
 *
 * @param stop Aborted on the first signal.
 * @param abort Aborted after the grace period, or on a second signal.
 * @param options The grace period and a callback per signal.
 * @returns The signal received, and `dispose` to stop listening.
 *
 * @example
 * ```ts
 * import { onInterrupt } from "./interrupt.ts";
 * const stop = new AbortController();
 * const abort = new AbortController();
 * const interrupt = onInterrupt(stop, abort, { graceMs: 10_000 });
 * try {
 *   // runSuite(config, { stop: stop.signal, signal: abort.signal, ... })
 * } finally {
 *   interrupt.dispose();
 * }
 * if (interrupt.signal !== undefined) throw new Error("interrupted");
 * ```
 */
export function onInterrupt(
  stop: AbortController,
  abort: AbortController,
  options: InterruptOptions = {},
): Interrupt {
  let received: InterruptSignal | undefined;
  let grace: ReturnType<typeof setTimeout> | undefined;
  const handlers = (["SIGINT", "SIGTERM"] as const).map((sig) => {
    const handler = () => {
      if (received !== undefined) {
        if (grace !== undefined) clearTimeout(grace);
        abort.abort(new Error(`Interrupted twice by ${sig}`));
        options.onSignal?.(sig, true);
        return;
      }
      received = sig;
      options.onSignal?.(sig, false);
      stop.abort(new Error(`Interrupted by ${sig}`));
      grace = setTimeout(
        () => abort.abort(new Error(`Interrupted by ${sig}`)),
        options.graceMs ?? 0,
      );
    };
    Deno.addSignalListener(sig, handler);
    return [sig, handler] as const;
  });
  return {
    get signal() {
      return received;
    },
    dispose() {
      if (grace !== undefined) clearTimeout(grace);
      for (const [sig, handler] of handlers) {
        Deno.removeSignalListener(sig, handler);
      }
    },
  };
}
