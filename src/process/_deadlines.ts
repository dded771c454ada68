/**
 * One timer for the deadlines of every run under way, rather than one timer
 * per run. It is armed for the earliest deadline only: a run that starts
 * while others are under way (whose deadlines come first, when the timeouts
 * are alike) arms nothing, and one that ends first leaves it armed for the
 * others. Once no deadline is left it lets go of the process, yet stays
 * armed, so that the next run (at one command at a time, most often due
 * later) arms nothing either.
 *
 * The timer is `AbortSignal.timeout`'s, which holds the process open only
 * while the signal has a listener, and which is Deno's own: `setTimeout`
 * loads Deno's Node compatibility layer the first time it is called, tens of
 * milliseconds of start-up that a short `evalpipe score` would pay.
 *
 * @module
 */

/** A deadline: when, on `performance.now()`'s clock, and what to do then. */
export interface Deadline {
  readonly at: number;
  readonly expire: () => void;
}

/** The longest delay a timer takes (ms): a longer one would fire at once. */
const MAX_TIMER_MS = 0x7fffffff;

const pending = new Set<Deadline>();
/** The armed timer's signal, aborted when it fires, and when that is. */
let timer: AbortSignal | undefined;
let firesAt = Infinity;
/** Whether the timer's listener is on, so that it holds the process open. */
let listening = false;

/**
 * Calls `expire` at `at` (on `performance.now()`'s clock) unless the deadline
 * is taken back first with {@linkcode clearDeadline}.
 *
 * @param at When.
 * @param expire What to do then.
 * @returns The deadline, to clear.
 */
export function setDeadline(at: number, expire: () => void): Deadline {
  const deadline = { at, expire };
  pending.add(deadline);
  if (timer === undefined || timer.aborted || at < firesAt) arm(at);
  else listen(true);
  return deadline;
}

/**
 * Takes a deadline back; one that has expired is no longer pending.
 *
 * @param deadline What {@linkcode setDeadline} returned.
 */
export function clearDeadline(deadline: Deadline): void {
  pending.delete(deadline);
  if (pending.size === 0) listen(false);
}

/** Arms a new timer for `at`; the one it replaces no longer does anything. */
function arm(at: number): void {
  listen(false);
  const delay = Math.min(MAX_TIMER_MS, Math.max(0, at - performance.now()));
  timer = AbortSignal.timeout(Math.ceil(delay));
  firesAt = at;
  listen(true);
}

function listen(on: boolean): void {
  if (on === listening || timer === undefined) return;
  if (on) timer.addEventListener("abort", expireDue);
  else timer.removeEventListener("abort", expireDue);
  listening = on;
}

/** Expires what is due and arms the timer for the earliest deadline left. */
function expireDue(): void {
  listen(false);
  timer = undefined;
  firesAt = Infinity;
  const now = performance.now();
  let next = Infinity;
  // An expiry that throws (a bug) must not leave the others due unfired, nor
  // the timer unarmed: every later deadline of the process would then be
  // lost. Its error is thrown once the rest is done.
  let failed: { error: unknown } | undefined;
  for (const deadline of pending) {
    if (deadline.at <= now) {
      pending.delete(deadline);
      try {
        deadline.expire();
      } catch (error) {
        failed ??= { error };
      }
    } else if (deadline.at < next) next = deadline.at;
  }
  // An expiry may have set a deadline, and so armed the timer, itself.
  if (pending.size > 0 && next < firesAt) arm(next);
  if (failed !== undefined) throw failed.error;
}

/**
 * How long a command's pipes are read once it has exited and its group is
 * killed: by then they hold at most a pipe's buffer of what it wrote. Only a
 * process it left in another session (`setsid`) can keep one open longer, and
 * the run does not wait for that one.
 */
export const EXIT_DRAIN_MS = 1000;
