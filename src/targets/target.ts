/**
 * The target stage: one call of the system under test per example, with
 * bounded concurrency, results in input order, failures recorded on the unit.
 *
 * @module
 */

import { countOption } from "../base/_count.ts";
import { messageOf } from "../base/errors.ts";
import { returnedText } from "../base/terminal.ts";
import type { Case, Example } from "../dataset/case.ts";
import { copyExpected } from "../io/_expected_text.ts";
import { DEFAULTS } from "../base/defaults.ts";
import {
  cancellable,
  concurrentMapBatches,
  type ConcurrentMapOptions,
  concurrentMapTasks,
} from "../io/concurrent_map.ts";
import type { ToolCall, Unit } from "../dataset/unit.ts";
import type { FlowWatch } from "../net/flow.ts";

/**
 * What a target returns for one case.
 *
 * @example The output and what to record beside it
 * ```ts
 * import { runTarget, type Target, type TargetResult } from "./mod.ts";
 * const target: Target = { call: (): TargetResult => ({ output: "4", info: { model: "m1" } }) };
 * const [unit] = await Array.fromAsync(
 *   ReadableStream.from([{ example_id: "d#1", line: 1, case: { input: "2+2" } }]).pipeThrough(runTarget(target)),
 * );
 * if (unit?.output !== "4" || unit.target?.model !== "m1") throw new Error("unexpected");
 * ```
 */
export interface TargetResult {
  /** The output text. */
  output: string;
  /** What to record under the unit's `target` (model, usage, ...). */
  info?: Record<string, unknown> | undefined;
  /** The tool calls the system made or asked for: the unit's trajectory. */
  tool_calls?: ToolCall[] | undefined;
}

/**
 * What a target is given besides the case.
 *
 * @example Answer with the epoch
 * ```ts
 * import { runTarget, type Target, type TargetContext } from "./mod.ts";
 * const target: Target = { call: (_c, context: TargetContext) => ({ output: `epoch ${context.epoch}` }) };
 * const units = await Array.fromAsync(
 *   ReadableStream.from([{ example_id: "d#1", line: 1, case: { input: "q" } }]).pipeThrough(runTarget(target, { epochs: 2 })),
 * );
 * if (units.map((u) => u.output).join() !== "epoch 1,epoch 2") throw new Error("unexpected");
 * ```
 */
export interface TargetContext {
  /** Aborted when the run stops. */
  signal?: AbortSignal | undefined;
  /** Which repetition of the example this call is, from 1 (see `epochs`). */
  epoch?: number | undefined;
  /** Told of every wait of the call's network requests (rate limit, `Retry-After`, ...). */
  flow?: FlowWatch | undefined;
}

/**
 * The system under test.
 *
 * @example A target of its own; a throw is recorded on the unit
 * ```ts
 * import { runTarget, type Target } from "./mod.ts";
 * const target: Target = {
 *   async call(c) {
 *     if (c.input === "") throw new Error("empty input");
 *     return { output: String(c.input).length.toString() };
 *   },
 * };
 * const examples = [{ example_id: "d#1", line: 1, case: { input: "abc" } }, { example_id: "d#2", line: 2, case: { input: "" } }];
 * const units = await Array.fromAsync(ReadableStream.from(examples).pipeThrough(runTarget(target)));
 * if (units[0]?.output !== "3" || units[1]?.target?.error !== "empty input") throw new Error("unexpected");
 * ```
 */
export interface Target {
  /**
   * Calls the system for one case. Throwing is a target error, recorded on
   * the unit as `target.error`; it never stops the run, and neither does a
   * result without output text, which is one too. An error with an
   * `info` object (a reply paid for that gave no answer) has it recorded
   * beside the error, as a result's `info` is.
   */
  call(
    testCase: Case,
    context: TargetContext,
  ): Promise<TargetResult> | TargetResult;
  /**
   * `false` when the call takes no time worth measuring (a replay): its
   * units carry `latency_ms: 0` without a clock being read.
   */
  readonly timed?: boolean;
}

/**
 * Options of {@linkcode runTarget} and {@linkcode runTargetBatches}.
 *
 * @example Two epochs, one unit skipped, as when resuming
 * ```ts
 * import { replayTarget, runTarget, type RunTargetOptions } from "./mod.ts";
 * const options: RunTargetOptions = { concurrency: 2, epochs: 2, skip: (id) => id === "d#1@1" };
 * const units = await Array.fromAsync(
 *   ReadableStream.from([{ example_id: "d#1", line: 1, case: { input: "q", output: "a" } }])
 *     .pipeThrough(runTarget(replayTarget(), options)),
 * );
 * if (units.map((u) => u.unit_id).join() !== "d#1@2") throw new Error("unexpected");
 * ```
 */
export interface RunTargetOptions {
  /**
   * How many calls may be in flight: a whole number of at least 1.
   * @default {DEFAULTS.concurrency (8)}
   */
  concurrency?: number | undefined;
  /**
   * How many times each example is run: a whole number of at least 1. With
   * more than one, unit ids are `<example_id>@<epoch>`, epochs counted
   * from 1.
   * @default {DEFAULTS.epochs (1)}
   */
  epochs?: number | undefined;
  /**
   * Aborting stops the calls that are running (they become target errors).
   * It does not stop the intake: each example still to come is called with
   * the signal aborted (a subprocess or `http` target fails it at once).
   * Give the same signal as `stop` or `abandon` too to take no more.
   * @default {undefined}
   */
  signal?: AbortSignal | undefined;
  /**
   * Aborting stops the intake: no new call starts, the calls in flight
   * finish and their units are emitted as each finishes (no longer in input
   * order, so a hung call holds back no other), and the examples still to
   * come are read and dropped.
   * @default {undefined}
   */
  stop?: AbortSignal | undefined;
  /**
   * Aborting ends the stage: the units ready are emitted, the calls still
   * running are dropped (give the same signal as `signal` to kill them too),
   * and the examples still to come are cancelled. `run` passes its abort
   * signal, so that an interrupted run writes only what finished.
   * @default {undefined}
   */
  abandon?: AbortSignal | undefined;
  /**
   * Units (by unit id) not to run at all, as when resuming; the second
   * argument is the unit's id under its example's
   * {@linkcode Example.formerly} name, when it has one.
   * @default {undefined}
   */
  skip?: ((unitId: string, formerly?: string) => boolean) | undefined;
  /**
   * Called once for each malformed record (an example with `invalid` set) as
   * the stage takes it, before its units, even when `skip` skips them all.
   * @default {undefined}
   */
  onInvalidRecord?: ((example: Example) => void) | undefined;
  /**
   * Given to each call as `context.flow`: told when its network requests wait.
   * @default {undefined}
   */
  flow?: FlowWatch | undefined;
}

/** One call: an example's epoch. */
interface Task {
  example: Example;
  epoch: number;
}

/** How a stage runs its examples: their tasks, the call, the pool's options. */
interface Plan {
  tasks(examples: Iterable<Example>): Iterable<unknown>;
  call(task: unknown): Unit | Promise<Unit>;
  pool: ConcurrentMapOptions;
}

/** The example a task runs: what groups its units. */
export function exampleOf(task: { example: Example }): Example {
  return task.example;
}

/**
 * A stage's pool options for its `stop` and `abandon` signals: once stopped,
 * results leave as they finish; once abandoned, the pool ends.
 *
 * @param options The stage's options.
 * @returns The pool's `unordered` and `abandon`, those given.
 */
export function endingOf(
  options: {
    stop?: AbortSignal | undefined;
    abandon?: AbortSignal | undefined;
  },
): ConcurrentMapOptions {
  return {
    ...(options.stop !== undefined ? { unordered: options.stop } : {}),
    ...(options.abandon !== undefined ? { abandon: options.abandon } : {}),
  };
}

/**
 * What both forms of the stage share: how examples become tasks, taken
 * lazily (so that `stop` ends the intake between two examples), and the call.
 */
function targetPlan(target: Target, options: RunTargetOptions): Plan {
  // Cancelled (its reader cancels, a `break`), the stage aborts its calls
  // in flight: nobody will read their units.
  const { signal, onCancel } = cancellable(options.signal);
  const flow = options.flow;
  const stop = options.stop;
  const epochs = countOption("epochs", options.epochs ?? DEFAULTS.epochs);
  const { skip, onInvalidRecord } = options;
  const pool: ConcurrentMapOptions = {
    concurrency: options.concurrency ?? DEFAULTS.concurrency,
    onCancel,
    ...endingOf(options),
  };
  if (epochs === 1 && skip === undefined) {
    // One task per example, the example itself: the pool stops the intake,
    // and a task starts when the stage takes its example.
    return {
      pool: stop !== undefined ? { ...pool, stop } : pool,
      tasks: (examples: Iterable<Example>): Iterable<Example> => examples,
      call: (example: Example) => {
        if (example.invalid !== undefined) onInvalidRecord?.(example);
        return callUnit(target, example, 1, 1, signal, flow);
      },
    };
  }
  // Once an example is taken, all its epochs run, as `run` always did.
  function* tasks(examples: Iterable<Example>): Generator<Task> {
    for (const example of examples) {
      if (stop?.aborted) return;
      if (example.invalid !== undefined) onInvalidRecord?.(example);
      for (let epoch = 1; epoch <= epochs; epoch++) {
        if (
          skip === undefined ||
          !skip(
            unitIdOf(example.example_id, epoch, epochs),
            example.formerly === undefined
              ? undefined
              : unitIdOf(example.formerly, epoch, epochs),
          )
        ) yield { example, epoch };
      }
    }
  }
  return {
    // An example's epochs belong together: an interrupted run writes them
    // one after the other (what still runs at the end is dropped).
    pool: epochs > 1 ? { ...pool, groupOf: exampleOf } : pool,
    tasks,
    call: ({ example, epoch }: Task) =>
      callUnit(target, example, epoch, epochs, signal, flow),
  };
}

/**
 * Calls the target once per example and epoch and emits a unit per call, in
 * input order (an example's epochs together, in order). The target sees the
 * case's `input`, `context` and `metadata`; the unit carries `expected` on to
 * the scorers (verbatim). A failed call gives a unit with `target.error` and
 * `output: null`; a malformed record gives units marked `invalid`, without a
 * call. Cancelling the stage (its reader cancels, a `break` out of
 * `for await`) aborts the calls in flight, as `signal` would: a subprocess
 * target's process group is killed. {@linkcode runTargetBatches} is the
 * same stage over batches.
 *
 * @param target The system under test.
 * @param options Concurrency, epochs, abort and stop signals, units to skip.
 * @returns The stage.
 * @throws {RangeError} When `concurrency` or `epochs` is not a whole number
 *   of at least 1.
 *
 * @example
 * ```ts
 * import { runTarget } from "./target.ts";
 * import { functionTarget } from "./function_target.ts";
 * const echo = functionTarget((c) => String(c.input).toUpperCase());
 * const units = await Array.fromAsync(
 *   ReadableStream.from([{ example_id: "d#1", line: 1, case: { input: "hi" } }]).pipeThrough(runTarget(echo)),
 * );
 * if (units[0]?.output !== "HI") throw new Error("unexpected");
 * ```
 */
export function runTarget(
  target: Target,
  options: RunTargetOptions = {},
): TransformStream<Example, Unit> {
  const plan = targetPlan(target, options);
  return concurrentMapTasks(
    (example: Example) => plan.tasks([example]),
    plan.call,
    plan.pool,
  );
}

/**
 * {@linkcode runTarget} over batches of examples, as
 * {@linkcode import("../dataset/mod.ts").loadDatasetBatches} emits them: the
 * same calls, units and order, with the units that are ready together
 * leaving as one array. A synchronous target (a replay) then costs no
 * promise and no stream step per unit: this is the stage `run` uses.
 *
 * @param target The system under test.
 * @param options Concurrency, epochs, abort and stop signals, units to skip.
 * @returns The stage.
 * @throws {RangeError} When `concurrency` or `epochs` is not a whole number
 *   of at least 1.
 *
 * @example
 * ```ts
 * import { runTargetBatches } from "./target.ts";
 * import { replayTarget } from "./replay_target.ts";
 * const batch = [
 *   { example_id: "d#1", line: 1, case: { input: "q", output: "a" } },
 *   { example_id: "d#2", line: 2, case: { input: "q", output: "b" } },
 * ];
 * const units = (await Array.fromAsync(
 *   ReadableStream.from([batch]).pipeThrough(runTargetBatches(replayTarget(), { epochs: 2 })),
 * )).flat();
 * if (units.map((u) => u.unit_id).join() !== "d#1@1,d#1@2,d#2@1,d#2@2") throw new Error();
 * ```
 */
export function runTargetBatches(
  target: Target,
  options: RunTargetOptions = {},
): TransformStream<readonly Example[], Unit[]> {
  const plan = targetPlan(target, options);
  return concurrentMapBatches(plan.tasks, plan.call, plan.pool);
}

/**
 * The id of one epoch's unit: the example id with one epoch,
 * `<example_id>@<epoch>` with several.
 *
 * @param exampleId The example.
 * @param epoch The epoch, from 1.
 * @param epochs How many epochs the run has.
 * @returns The unit id.
 */
export function unitIdOf(
  exampleId: string,
  epoch: number,
  epochs: number,
): string {
  return epochs > 1 ? `${exampleId}@${epoch}` : exampleId;
}

/**
 * Calls the target for one epoch of one example and builds the unit: the
 * output, or the failure as `target.error`; a malformed record gives an
 * `invalid` unit without a call.
 *
 * @param target The system under test.
 * @param example The example.
 * @param epoch Which epoch, from 1.
 * @param epochs How many epochs the run has.
 * @param signal Aborting stops the call.
 * @param flow Told when the call's network requests wait.
 * @returns The unit; never throws for the target's failures.
 */
export function callUnit(
  target: Target,
  example: Example,
  epoch: number,
  epochs: number,
  signal?: AbortSignal,
  flow?: FlowWatch,
): Unit | Promise<Unit> {
  const testCase = example.case;
  const id = example.example_id;
  const unitId = unitIdOf(id, epoch, epochs);
  if (testCase === null) {
    return {
      example_id: id,
      unit_id: unitId,
      epoch,
      input: "",
      output: null,
      invalid: example.invalid ?? "",
    };
  }
  const unit: Unit = {
    example_id: id,
    unit_id: unitId,
    epoch,
    input: testCase.input,
    output: null,
  };
  copyExpected(unit, testCase);
  if (testCase.context !== undefined) unit.context = testCase.context;
  if (testCase.metadata !== undefined) unit.metadata = testCase.metadata;
  const timed = target.timed !== false;
  const started = timed ? performance.now() : 0;
  let result: Promise<TargetResult> | TargetResult;
  try {
    const context: TargetContext = signal !== undefined
      ? { signal, epoch }
      : { epoch };
    if (flow !== undefined) context.flow = flow;
    result = target.call(testCase, context);
  } catch (error) {
    return failedUnit(unit, timed, started, error);
  }
  // A synchronous target (a replay) stays synchronous: no promise per unit.
  return result instanceof Promise
    ? result.then(
      (r) => doneUnit(unit, timed, started, r),
      (error) => failedUnit(unit, timed, started, error),
    )
    : doneUnit(unit, timed, started, result);
}

function doneUnit(
  unit: Unit,
  timed: boolean,
  started: number,
  result: TargetResult,
): Unit {
  // A script's own Target may answer without text (its API's `null`): a
  // failed call, as the built-in targets say, not an output for scorers to
  // read as "".
  if (typeof result?.output !== "string") {
    return failedUnit(
      unit,
      timed,
      started,
      new TypeError(
        `The target returned ${
          returnedText(result)
        }: expected { output: "…", info? }`,
      ),
    );
  }
  unit.output = result.output;
  if (result.tool_calls !== undefined) unit.tool_calls = result.tool_calls;
  const latency_ms = latencyMs(timed, started);
  // Without info (a replay), no spread: it costs more than the unit's fields.
  unit.target = result.info === undefined
    ? { latency_ms }
    : { latency_ms, ...result.info };
  return unit;
}

/** The names of the chat client's errors for a reply paid for, unanswered. */
const REPLY_ERRORS = new Set(["ReplyError", "ContentFilterError"]);

function failedUnit(
  unit: Unit,
  timed: boolean,
  started: number,
  error: unknown,
): Unit {
  // A reply that was paid for but gave no answer (an `openai` target's
  // reply without text) keeps what the call reported: its usage and cost
  // count in the run's totals, as the budget counted them. Only evalpipe's
  // own reply errors (told by name: their module loads with the `openai`
  // target only): another error's `info`, a script's, is no call's report.
  const info = error instanceof Error && REPLY_ERRORS.has(error.name)
    ? (error as { info?: unknown }).info
    : undefined;
  unit.target = typeof info === "object" && info !== null
    ? {
      latency_ms: latencyMs(timed, started),
      ...info as Record<string, unknown>,
      error: messageOf(error),
    }
    : { latency_ms: latencyMs(timed, started), error: messageOf(error) };
  // A failure with a cause of its own (`budget.exhausted`, `cache.miss`)
  // says so, and its unit's Scores carry that code.
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && /^[a-z_]+(\.[a-z_]+)+$/.test(code)) {
    unit.target.error_code = code;
  }
  return unit;
}

/** Whole milliseconds since `started`; 0 for a target that is not timed. */
function latencyMs(timed: boolean, started: number): number {
  return timed ? Math.round(performance.now() - started) : 0;
}
