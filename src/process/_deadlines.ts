/**
 * One timer for the deadlines of every run under way, rather than one timer
 * per run: it is armed for the earliest deadline only, so a run that starts
 * while others are under way (whose deadlines come first, when the timeouts
 * are alike) arms nothing, and a run that ends first leaves it armed for the
 * others. It is cleared once no deadline is left, so it never holds the
 * process (or a test) open.
 *
 * @module
 */

/** A deadline: when, on `performance.now()`'s clock, and what to do then. */
export interface Deadline {
  readonly at: number;
  readonly expire: () => void;
}

/** The longest delay a timer takes (ms): a longer one fires at once. */
const MAX_TIMER_MS = 0x7fffffff;

const pending = new Set<Deadline>();
let timer: ReturnType<typeof setTimeout> | undefined;
/** When the timer fires; `Infinity` while it is not armed. */
let armedFor = Infinity;

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
  if (at < armedFor) arm(at);
  return deadline;
}

/**
 * Takes a deadline back; one that has expired is no longer pending.
 *
 * @param deadline What {@linkcode setDeadline} returned.
 */
export function clearDeadline(deadline: Deadline): void {
  pending.delete(deadline);
  if (pending.size === 0 && timer !== undefined) {
    clearTimeout(timer);
    timer = undefined;
    armedFor = Infinity;
  }
}

function arm(at: number): void {
  if (timer !== undefined) clearTimeout(timer);
  armedFor = at;
  // A delay beyond a timer's reach is served by several timers.
  const delay = Math.min(MAX_TIMER_MS, Math.max(0, at - performance.now()));
  timer = setTimeout(expireDue, delay);
}

/** Expires what is due and arms the timer for the earliest deadline left. */
function expireDue(): void {
  timer = undefined;
  armedFor = Infinity;
  const now = performance.now();
  let next = Infinity;
  for (const deadline of pending) {
    if (deadline.at <= now) {
      pending.delete(deadline);
      deadline.expire();
    } else if (deadline.at < next) next = deadline.at;
  }
  if (next < armedFor && pending.size > 0) arm(next);
}
