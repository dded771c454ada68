// A task's result that its maker settles later, without a promise: the pool
// behind the concurrent stages (concurrent_map.ts) keeps it as the task's own
// slot and is told when it settles, so that a task costs one object rather
// than a promise, its resolving functions, a reaction and a slot. For makers
// of this package that settle many small tasks at once (the persistent
// scorer, a verdict per case); not exported from any `mod.ts`.

/** A result to come: settled once, with its value; it never fails. */
export class Later<R> {
  /** Whether `value` is set. */
  done = false;
  value: R | undefined = undefined;
  /** Told once it settles, when someone listens (the pool that keeps it). */
  onSettle: (() => void) | undefined = undefined;

  /** Settles it with `value`; a second call is ignored. */
  settle(value: R): void {
    if (this.done) return;
    this.value = value;
    this.done = true;
    this.onSettle?.();
  }
}
