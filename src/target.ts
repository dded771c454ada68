/**
 * The target stage: one call of the system under test per example, with
 * bounded concurrency, results in input order, failures recorded on the unit.
 *
 * @module
 */

import { type Case, copyExpected, type Example } from "./case.ts";
import { concurrentMapTasks } from "./concurrent_map.ts";
import type { TargetInfo, Unit } from "./unit.ts";

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
  call(testCase: Case, context: TargetContext): Promise<TargetResult>;
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

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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
 * import { functionTarget } from "./targets/function_target.ts";
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
  const unitIdOf = (id: string, epoch: number) =>
    epochs > 1 ? `${id}@${epoch}` : id;
  const skip = options.skip;
  const tasks = (example: Example) => {
    const all = Array.from(
      { length: epochs },
      (_, i) => ({ example, epoch: i + 1 }),
    );
    return skip === undefined
      ? all
      : all.filter((t) => !skip(unitIdOf(example.example_id, t.epoch)));
  };
  return concurrentMapTasks(
    tasks,
    async ({ example, epoch }): Promise<Unit> => {
      const testCase = example.case;
      const id = example.example_id;
      const unitId = unitIdOf(id, epoch);
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
      const started = performance.now();
      let info: TargetInfo;
      try {
        const result = await target.call(
          testCase,
          signal !== undefined ? { signal, epoch } : { epoch },
        );
        unit.output = result.output;
        info = {
          latency_ms: Math.round(performance.now() - started),
          ...result.info,
        };
      } catch (error) {
        info = {
          latency_ms: Math.round(performance.now() - started),
          error: messageOf(error),
        };
      }
      unit.target = info;
      return unit;
    },
    { concurrency: options.concurrency ?? 4 },
  );
}
