/**
 * A bounded, order-preserving concurrent map over a stream.
 *
 * @module
 */

import { countOption } from "../base/_count.ts";
import { Later } from "./_later.ts";

/**
 * Options of {@linkcode concurrentMap}.
 *
 * @example Run two calls at once, stop taking chunks once aborted
 * ```ts
 * import { concurrentMap, type ConcurrentMapOptions } from "./mod.ts";
 * const stop = new AbortController();
 * const options: ConcurrentMapOptions = { concurrency: 2, window: 8, stop: stop.signal };
 * const out = await Array.fromAsync(
 *   ReadableStream.from([1, 2, 3, 4]).pipeThrough(concurrentMap((n: number) => {
 *     if (n === 2) stop.abort();
 *     return n * 10;
 *   }, options)),
 * );
 * if (out.join() !== "10,20") throw new Error(out.join());
 * ```
 */
export interface ConcurrentMapOptions {
  /**
   * How many calls may run at once: a whole number of at least 1, as
   * `window` is (another is a `RangeError` when the stage is built).
   * @default {1}
   */
  concurrency?: number | undefined;
  /**
   * How many results may wait behind a slow earlier one before intake pauses.
   * @default {concurrency * 4; for the batch forms, at least 4096}
   */
  window?: number | undefined;
  /**
   * Aborting stops the intake: no new task starts, the tasks running finish
   * and their results are emitted, and the chunks still to come are read and
   * dropped.
   * @default {undefined}
   */
  stop?: AbortSignal | undefined;
  /**
   * Aborting lets results leave as they finish, no longer in input order:
   * a slow task no longer holds back the results after it. An interrupted
   * run passes its stop signal, so that what finishes in the grace period
   * is written.
   * @default {undefined}
   */
  unordered?: AbortSignal | undefined;
  /**
   * Aborting ends the stream: the results ready are emitted, the tasks still
   * running are dropped (their results are ignored when they come), no task
   * starts, the readable side closes and what feeds the stream is cancelled.
   * @default {undefined}
   */
  abandon?: AbortSignal | undefined;
  /**
   * The group of a task, for `unordered`: the tasks of one group come one
   * after the other (an example's epochs), and once unordered, a group's
   * results still leave together, in order, when every one has finished and
   * the group's last task has started, so that no other result lands
   * between them. A group some of whose results left before (in order)
   * keeps every other result waiting until it is whole, or abandoned.
   * @default {undefined: each task its own group}
   */
  groupOf?: ((task: never) => unknown) | undefined;
  /**
   * Told once the stream is cancelled (its reader cancels, a `break` leaves
   * a `for await` over it, or what writes to it aborts), with the reason:
   * the place to stop the tasks still running, whose results nobody will
   * read.
   * @default {undefined}
   */
  onCancel?: ((reason: unknown) => void) | undefined;
}

/**
 * The signal a stage gives its calls: aborted once `signal` aborts, or once
 * the stage is cancelled, which `onCancel` (its pool's option) tells it.
 *
 * @param signal The stage's own abort signal, if it was given one.
 * @returns The calls' signal, and the pool's `onCancel`.
 */
export function cancellable(
  signal: AbortSignal | undefined,
): { signal: AbortSignal; onCancel: (reason: unknown) => void } {
  const cancelled = new AbortController();
  return {
    signal: signal === undefined
      ? cancelled.signal
      : AbortSignal.any([signal, cancelled.signal]),
    onCancel: (reason) => cancelled.abort(reason),
  };
}

/**
 * The least window of the batch forms: a batch's synchronous results (the
 * records of one read, about a thousand) pass in one go rather than in
 * slices of `concurrency * 4`.
 */
const BATCH_WINDOW = 4096;

function batchWindow(options: ConcurrentMapOptions): ConcurrentMapOptions {
  if (options.window !== undefined) return options;
  const concurrency = countOption("concurrency", options.concurrency ?? 1);
  return { ...options, window: Math.max(concurrency * 4, BATCH_WINDOW) };
}

/** The group of no result: before the first one is emitted. */
const NO_GROUP = Symbol("no group");

interface Slot<O> {
  done: boolean;
  value?: O;
}

/**
 * Maps each chunk through an async function with at most `concurrency` calls
 * in flight, emitting results in input order as soon as they are ready.
 * Intake pauses while `concurrency` calls run or `window` results wait, so
 * memory stays bounded however long the stream. A call that throws errors the
 * stream: map failures to data inside `fn`.
 *
 * @param fn The function.
 * @param options Concurrency and window.
 * @returns The stage.
 *
 * @example
 * ```ts
 * import { concurrentMap } from "./concurrent_map.ts";
 * const out = await Array.fromAsync(
 *   ReadableStream.from([30, 10, 20]).pipeThrough(
 *     concurrentMap(async (ms: number) => {
 *       await new Promise((r) => setTimeout(r, ms));
 *       return ms;
 *     }, { concurrency: 3 }),
 *   ),
 * );
 * if (out.join() !== "30,10,20") throw new Error("order lost");
 * ```
 */
export function concurrentMap<I, O>(
  fn: (chunk: I) => Promise<O> | O,
  options: ConcurrentMapOptions = {},
): TransformStream<I, O> {
  return orderedPool<I, I, O, O>(fn, options, (values, enqueue) => {
    for (const v of values) enqueue(v);
  });
}

/**
 * Like {@linkcode concurrentMap}, but `fn` returns a list whose items are
 * emitted one by one, in order.
 *
 * @param fn The function.
 * @param options Concurrency and window.
 * @returns The stage.
 *
 * @example
 * ```ts
 * import { concurrentFlatMap } from "./concurrent_map.ts";
 * const out = await Array.fromAsync(
 *   ReadableStream.from([1, 2]).pipeThrough(concurrentFlatMap((n: number) => [n, n * 10])),
 * );
 * if (out.join() !== "1,10,2,20") throw new Error();
 * ```
 */
export function concurrentFlatMap<I, O>(
  fn: (chunk: I) => Promise<readonly O[]> | readonly O[],
  options: ConcurrentMapOptions = {},
): TransformStream<I, O> {
  return orderedPool<I, I, readonly O[], O>(fn, options, (results, enqueue) => {
    for (const values of results) for (const v of values) enqueue(v);
  });
}

/**
 * Like {@linkcode concurrentMap}, but each chunk is split into several tasks
 * (say, one per epoch) that run concurrently like separate chunks; results
 * come out in input order, a chunk's tasks in the order split gave them.
 *
 * @param split Turns a chunk into its tasks.
 * @param fn The function, per task.
 * @param options Concurrency (counted in tasks) and window.
 * @returns The stage.
 *
 * @example
 * ```ts
 * import { concurrentMapTasks } from "./concurrent_map.ts";
 * const out = await Array.fromAsync(
 *   ReadableStream.from(["a", "b"]).pipeThrough(
 *     concurrentMapTasks((s: string) => [1, 2].map((k) => `${s}@${k}`), (t) => t.toUpperCase(), { concurrency: 4 }),
 *   ),
 * );
 * if (out.join() !== "A@1,A@2,B@1,B@2") throw new Error(out.join());
 * ```
 */
export function concurrentMapTasks<I, T, O>(
  split: (chunk: I) => Iterable<T>,
  fn: (task: T) => Promise<O> | O,
  options: ConcurrentMapOptions = {},
): TransformStream<I, O> {
  return orderedPool<I, T, O, O>(fn, options, (values, enqueue) => {
    for (const v of values) enqueue(v);
  }, split);
}

/**
 * Runs the tasks of each input batch concurrently (at most `concurrency` at
 * once) and emits their results in order as batches: the results that are
 * ready together leave as one array. For pipelines that move many small
 * items, where a stream step per item would cost more than the work.
 *
 * @param split Turns an input batch into its tasks.
 * @param fn The function, per task; it returns a list of outputs.
 * @param options Concurrency (counted in tasks) and window.
 * @returns The stage.
 *
 * @example
 * ```ts
 * import { concurrentBatches } from "./concurrent_map.ts";
 * const out = await Array.fromAsync(
 *   ReadableStream.from([[1, 2], [3]]).pipeThrough(
 *     concurrentBatches((b: number[]) => b, (n) => [n, -n], { concurrency: 2 }),
 *   ),
 * );
 * if (out.flat().join() !== "1,-1,2,-2,3,-3") throw new Error(out.flat().join());
 * ```
 */
export function concurrentBatches<I, T, O>(
  split: (batch: I) => Iterable<T>,
  fn: (task: T) => Promise<readonly O[]> | readonly O[],
  options: ConcurrentMapOptions = {},
): TransformStream<I, O[]> {
  return orderedPool<I, T, readonly O[], O[]>(
    fn,
    batchWindow(options),
    (results, enqueue) => {
      const out: O[] = [];
      for (const r of results) {
        for (let i = 0; i < r.length; i++) out.push(r[i]!);
      }
      enqueue(out);
    },
    split,
  );
}

/**
 * Like {@linkcode concurrentBatches}, but `fn` returns one output per task:
 * the outputs that are ready together leave as one array, in order.
 *
 * @param split Turns an input batch into its tasks.
 * @param fn The function, per task.
 * @param options Concurrency (counted in tasks) and window.
 * @returns The stage.
 *
 * @example
 * ```ts
 * import { concurrentMapBatches } from "./concurrent_map.ts";
 * const out = await Array.fromAsync(
 *   ReadableStream.from([[1, 2], [3]]).pipeThrough(
 *     concurrentMapBatches((b: number[]) => b, async (n) => n * 10, { concurrency: 2 }),
 *   ),
 * );
 * if (out.flat().join() !== "10,20,30") throw new Error(out.flat().join());
 * ```
 */
export function concurrentMapBatches<I, T, O>(
  split: (batch: I) => Iterable<T>,
  fn: (task: T) => Promise<O> | O,
  options: ConcurrentMapOptions = {},
): TransformStream<I, O[]> {
  return orderedPool<I, T, O, O[]>(
    fn,
    batchWindow(options),
    (results, enqueue) => enqueue(results),
    split,
  );
}

function single<I>(chunk: I): Iterable<I> {
  return [chunk];
}

/**
 * The pool behind every concurrent stage: tasks (split from chunks) run with
 * at most `concurrency` in flight and `window` waiting to be emitted; the
 * results that are ready, in order, are handed to `emit` together, once per
 * turn of the microtask queue, so results that complete together leave
 * together.
 */
function orderedPool<I, T, R, O>(
  // A `Later` (this package's own tasks) is a result settled without a
  // promise: it becomes the task's slot.
  fn: (task: T) => Promise<R> | Later<R> | R,
  options: ConcurrentMapOptions,
  emit: (results: R[], enqueue: (value: O) => void) => void,
  split: (chunk: I) => Iterable<T> = single as unknown as (
    chunk: I,
  ) => Iterable<T>,
): TransformStream<I, O> {
  const concurrency = countOption("concurrency", options.concurrency ?? 1);
  const window = Math.max(
    concurrency,
    countOption("window", options.window ?? concurrency * 4),
  );
  let queue: Slot<R>[] = [];
  let head = 0; // queue[head] is the oldest slot not yet emitted
  // With groups: each slot's group, beside it; the group of the last result
  // emitted, which the slots at the head may continue.
  const groupOf = options.groupOf as ((task: T) => unknown) | undefined;
  let groups: unknown[] = [];
  let lastGroup: unknown = NO_GROUP;
  // No task will start any more: the last group is whole.
  let intakeEnded = false;
  // Synchronous results with nothing pending before them: ready in order,
  // ahead of every slot, without a slot each.
  let settled: R[] = [];
  let running = 0;
  let failed = false;
  let draining = false;
  let wake: (() => void) | undefined;
  let controller!: TransformStreamDefaultController<O>;
  const enqueue = (value: O) => controller.enqueue(value);
  /** A `Later` slot has settled: one function for every such task. */
  const laterSettled = () => {
    running--;
    scheduleDrain();
    signal();
  };
  const waiting = () => queue.length - head + settled.length;

  const drain = () => {
    draining = false;
    if (failed) return;
    const ready = settled;
    settled = [];
    while (head < queue.length && queue[head]!.done) {
      if (groupOf !== undefined) lastGroup = groups[head];
      ready.push(queue[head++]!.value as R);
    }
    if (unordered && head < queue.length && groupOf !== undefined) {
      releaseGroups(ready);
    } else if (unordered && head < queue.length) {
      // Out of order: every finished slot leaves, the others keep waiting.
      const pending: Slot<R>[] = [];
      for (let i = head; i < queue.length; i++) {
        const slot = queue[i]!;
        if (slot.done) ready.push(slot.value as R);
        else pending.push(slot);
      }
      queue = pending;
      head = 0;
    }
    if (head > 1024 && head * 2 > queue.length) {
      queue.splice(0, head);
      if (groupOf !== undefined) groups.splice(0, head);
      head = 0;
    }
    if (ready.length === 0) return;
    try {
      emit(ready, enqueue);
    } catch (error) {
      // Enqueue throws TypeError once the reader has cancelled: nobody wants
      // the results any more, so stop taking input.
      if (!(error instanceof TypeError)) throw error;
      failed = true;
    }
    signal();
  };
  /**
   * Out of order, by group: each run of slots of one group leaves whole once
   * every slot in it is done and it is closed (a later group has started,
   * the intake ended, or the pool is abandoned). A run continuing the group
   * last emitted leaves as soon as it is done, and until then holds back
   * every other (abandoned, it gives what it has).
   */
  const releaseGroups = (ready: R[]) => {
    const pending: Slot<R>[] = [];
    const pendingGroups: unknown[] = [];
    let held = false;
    for (let i = head; i < queue.length;) {
      const group = groups[i];
      let j = i;
      let whole = true;
      while (j < queue.length && groups[j] === group) {
        if (!queue[j]!.done) whole = false;
        j++;
      }
      const continues = group === lastGroup;
      const closed = j < queue.length || intakeEnded || abandoning;
      if (abandoning || (!held && whole && (closed || continues))) {
        // Abandoned: what is done leaves, each run's slots together.
        for (let k = i; k < j; k++) {
          if (queue[k]!.done) ready.push(queue[k]!.value as R);
        }
        lastGroup = group;
      } else {
        for (let k = i; k < j; k++) {
          pending.push(queue[k]!);
          pendingGroups.push(group);
        }
        if (continues) held = true;
      }
      i = j;
    }
    queue = pending;
    groups = pendingGroups;
    head = 0;
  };
  const scheduleDrain = () => {
    if (!draining) {
      draining = true;
      queueMicrotask(drain);
    }
  };
  const signal = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const waitForChange = () => new Promise<void>((resolve) => (wake = resolve));
  /** Waits until a task may start; `false` once the stream has failed. */
  const room = async () => {
    while (running >= concurrency || waiting() >= window) {
      await waitForChange();
      if (failed) return false;
    }
    return true;
  };
  // Read once per task: a flag costs less than the signal's getter.
  let stopped = options.stop?.aborted ?? false;
  options.stop?.addEventListener("abort", () => (stopped = true), {
    once: true,
  });
  let unordered = false;
  const release = () => {
    unordered = true;
    scheduleDrain();
  };
  if (options.unordered?.aborted) unordered = true;
  else options.unordered?.addEventListener("abort", release, { once: true });
  let closed = false;
  let abandoning = false;
  const abandon = () => {
    if (failed || closed) return;
    unordered = true;
    abandoning = true;
    drain();
    // What still runs is dropped: its slots are gone, its failure ignored.
    failed = true;
    queue = [];
    groups = [];
    head = 0;
    try {
      controller.terminate();
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
    }
    signal();
  };

  return new TransformStream<I, O>({
    start(c) {
      controller = c;
      if (options.abandon?.aborted) abandon();
      else options.abandon?.addEventListener("abort", abandon, { once: true });
    },
    async transform(chunk) {
      const tasks = split(chunk);
      // A batch's tasks by index: no iterator per batch, no call per step.
      if (Array.isArray(tasks)) {
        for (let i = 0; i < tasks.length; i++) {
          if (running >= concurrency || waiting() >= window) {
            if (!await room()) return;
          }
          // A synchronous failure (or a cancelled reader) ends the intake at once.
          if (failed || stopped) return;
          start(tasks[i]);
        }
        return;
      }
      for (const task of tasks) {
        if (running >= concurrency || waiting() >= window) {
          if (!await room()) return;
        }
        if (failed || stopped) return;
        start(task);
      }
    },
    async flush() {
      intakeEnded = true;
      if (unordered && groupOf !== undefined) scheduleDrain();
      while (waiting() > 0 && !failed) await waitForChange();
      closed = true;
    },
    cancel(reason) {
      failed = true;
      signal();
      options.onCancel?.(reason);
    },
  });

  function start(task: T): void {
    let result: Promise<R> | Later<R> | R;
    try {
      result = fn(task);
    } catch (error) {
      failed = true;
      controller.error(error);
      signal();
      return;
    }
    if (groupOf !== undefined) groups.push(groupOf(task));
    if (result instanceof Later) {
      if (!result.done) {
        // Its own slot, in order; it tells the pool when it settles.
        queue.push(result as Slot<R>);
        running++;
        result.onSettle = laterSettled;
        return;
      }
      result = result.value as R;
    }
    // With groups, every result has its slot (and its group beside it).
    if (
      !(result instanceof Promise) && head === queue.length &&
      groupOf === undefined
    ) {
      // Nothing pending before it: a synchronous result is ready, in order,
      // without a slot.
      settled.push(result);
      scheduleDrain();
    } else track(result);
  }

  /** Gives a result its slot, in order, and settles it when it comes. */
  function track(result: Promise<R> | R): void {
    const slot: Slot<R> = { done: false };
    queue.push(slot);
    running++;
    const settle = (value: R) => {
      slot.value = value;
      slot.done = true;
      running--;
      scheduleDrain();
      signal();
    };
    const fail = (error: unknown) => {
      running--;
      // A task dropped by `abandon` fails unheard.
      if (!failed) controller.error(error);
      failed = true;
      signal();
    };
    // A synchronous result settles at once: no promise per task.
    if (result instanceof Promise) result.then(settle, fail);
    else settle(result);
  }
}
