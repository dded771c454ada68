/**
 * The target stage: one call of the system under test per example, with
 * bounded concurrency, results in input order, failures recorded on the unit.
 *
 * @module
 */

import { messageOf } from "../base/errors.ts";
import { type Case, copyExpected, type Example } from "../dataset/case.ts";
import { concurrentMapTasks } from "../io/concurrent_map.ts";
import type { Unit } from "../dataset/unit.ts";

/** What a target returns for one case. */
export interface TargetResult {
  /** The output text. */
  output: string;
  /** What to record under the unit's `target` (model, usage, ...). */
  info?: Record<string, unknown>;
}

/** What a target is given besides the case. */
export interface TargetContext {
  /** Aborted when the run stops. */
  signal?: AbortSignal;
  /** Which repetition of the example this call is, from 1 (see `epochs`). */
  epoch?: number;
}

/** The system under test. */
export interface Target {
  /**
   * Calls the system for one case. Throwing is a target error, recorded on
   * the unit as `target.error`; it never stops the run.
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

/** Options of {@linkcode runTarget}. */
export interface RunTargetOptions {
  /**
   * How many calls may be in flight.
   * @default {4}
   */
  concurrency?: number;
  /**
   * How many times each example is run. With more than one, unit ids are
   * `<example_id>@<epoch>`, epochs counted from 1.
   * @default {1}
   */
  epochs?: number;
  /**
   * Aborting stops the calls that are running (they become target errors).
   * @default {undefined}
   */
  signal?: AbortSignal;
  /**
   * Units (by unit id) not to run at all, as when resuming.
   * @default {undefined}
   */
  skip?: (unitId: string) => boolean;
}

/**
 * Calls the target once per example and epoch and emits a unit per call, in
 * input order (an example's epochs together, in order). The target sees the
 * case's `input`, `context` and `metadata`; the unit carries `expected` on to
 * the scorers (verbatim). A failed call gives a unit with `target.error` and
 * `output: null`; a malformed record gives units marked `invalid`, without a
 * call.
 *
 * @param target The system under test.
 * @param options Concurrency, epochs and abort signal.
 * @returns The stage.
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
  const signal = options.signal;
  const epochs = Math.max(1, Math.floor(options.epochs ?? 1));
  const skip = options.skip;
  const tasks = (example: Example) => {
    const all = Array.from({ length: epochs }, (_, i) => i + 1);
    return skip === undefined
      ? all.map((epoch) => ({ example, epoch }))
      : all.filter((epoch) =>
        !skip(unitIdOf(example.example_id, epoch, epochs))
      )
        .map((epoch) => ({ example, epoch }));
  };
  return concurrentMapTasks(
    tasks,
    ({ example, epoch }) => callUnit(target, example, epoch, epochs, signal),
    { concurrency: options.concurrency ?? 4 },
  );
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
 * @returns The unit; never throws for the target's failures.
 */
export function callUnit(
  target: Target,
  example: Example,
  epoch: number,
  epochs: number,
  signal?: AbortSignal,
): Unit | Promise<Unit> {
  const testCase = example.case;
  const id = example.example_id;
  const unitId = unitIdOf(id, epoch, epochs);
  if (testCase === null) {
    return {
      example_id: id,
      unit_id: unitId,
      input: "",
      output: null,
      invalid: example.invalid ?? "",
    };
  }
  const unit: Unit = {
    example_id: id,
    unit_id: unitId,
    input: testCase.input,
    output: null,
  };
  copyExpected(unit, testCase);
  if (testCase.context !== undefined) unit.context = testCase.context;
  const timed = target.timed !== false;
  const started = timed ? performance.now() : 0;
  let result: Promise<TargetResult> | TargetResult;
  try {
    result = target.call(
      testCase,
      signal !== undefined ? { signal, epoch } : { epoch },
    );
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
  unit.output = result.output;
  unit.target = { latency_ms: latencyMs(timed, started), ...result.info };
  return unit;
}

function failedUnit(
  unit: Unit,
  timed: boolean,
  started: number,
  error: unknown,
): Unit {
  unit.target = {
    latency_ms: latencyMs(timed, started),
    error: messageOf(error),
  };
  return unit;
}

/** Whole milliseconds since `started`; 0 for a target that is not timed. */
function latencyMs(timed: boolean, started: number): number {
  return timed ? Math.round(performance.now() - started) : 0;
}
