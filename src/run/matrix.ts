/**
 * A matrix run: the same examples through several targets side by side.
 * Each target has the run's concurrency of its own, so that a matrix takes
 * about as long as its slowest target alone; units and Scores carry the
 * target's name (`target_name`, and `~<name>` ending the unit id).
 *
 * @module
 */

import { countOption } from "../base/_count.ts";
import { DEFAULTS } from "../base/defaults.ts";
import type { Example } from "../dataset/case.ts";
import type { Unit } from "../dataset/unit.ts";
import { cancellable, concurrentMapBatches } from "../io/concurrent_map.ts";
import {
  callUnit,
  endingOf,
  exampleOf,
  type RunTargetOptions,
  type Target,
  unitIdOf,
} from "../targets/target.ts";

/**
 * One target of a matrix, by name.
 *
 * @example
 * ```ts
 * import { type MatrixTarget } from "./mod.ts";
 * import { functionTarget } from "../targets/mod.ts";
 * const fast: MatrixTarget = { name: "fast", target: functionTarget((c) => String(c.input)) };
 * if (fast.name !== "fast") throw new Error("unexpected");
 * ```
 */
export interface MatrixTarget {
  /** Its name, as in the config's `targets:`. */
  name: string;
  /** The target. */
  target: Target;
}

/**
 * The id of a matrix run's unit: the unit id a run of one target gives,
 * then `~` and the target's name.
 *
 * @param unitId The unit id without the target (`d#1`, `d#1@2`).
 * @param target The target's name.
 * @returns E.g. `d#1@2~fast`.
 *
 * @example
 * ```ts
 * import { matrixUnitId } from "./mod.ts";
 * if (matrixUnitId("d#1@2", "fast") !== "d#1@2~fast") throw new Error();
 * ```
 */
export function matrixUnitId(unitId: string, target: string): string {
  return `${unitId}~${target}`;
}

/** At most `size` calls at once, the rest waiting in order. */
class Slots {
  #free: number;
  #waiting: (() => void)[] = [];

  constructor(size: number) {
    this.#free = size;
  }

  async run<T>(call: () => T | Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await call();
    } finally {
      const next = this.#waiting.shift();
      if (next !== undefined) next();
      else this.#free++;
    }
  }
}

interface MatrixTask {
  example: Example;
  epoch: number;
  t: number;
}

/**
 * The target stage of a matrix run, over batches as
 * {@linkcode import("../targets/mod.ts").runTargetBatches} is: each example
 * goes through every target (its epochs each), and the units leave in input
 * order, an example's targets together in the matrix's order. Each target
 * has `concurrency` calls in flight at most, so the targets run side by side.
 *
 * @param targets The targets, in the matrix's order.
 * @param options Concurrency (per target), epochs, signals, units to skip
 *   (by their matrix unit id).
 * @returns The stage.
 * @throws {RangeError} When `concurrency` or `epochs` is not a whole number
 *   of at least 1.
 *
 * @example Two targets, one example
 * ```ts
 * import { runMatrixBatches } from "./mod.ts";
 * import { functionTarget } from "../targets/mod.ts";
 * const targets = [
 *   { name: "upper", target: functionTarget((c) => String(c.input).toUpperCase()) },
 *   { name: "lower", target: functionTarget((c) => String(c.input).toLowerCase()) },
 * ];
 * const units = (await Array.fromAsync(
 *   ReadableStream.from([[{ example_id: "d#1", line: 1, case: { input: "Hi" } }]]).pipeThrough(runMatrixBatches(targets)),
 * )).flat();
 * if (units.map((u) => `${u.unit_id}=${u.output}`).join() !== "d#1~upper=HI,d#1~lower=hi") throw new Error();
 * ```
 */
export function runMatrixBatches(
  targets: readonly MatrixTarget[],
  options: RunTargetOptions = {},
): TransformStream<readonly Example[], Unit[]> {
  const concurrency = countOption(
    "concurrency",
    options.concurrency ?? DEFAULTS.concurrency,
  );
  const epochs = countOption("epochs", options.epochs ?? DEFAULTS.epochs);
  const { skip, stop, onInvalidRecord } = options;
  // Cancelled, the stage aborts its calls in flight, as runTarget's does.
  const { signal, onCancel } = cancellable(options.signal);
  const slots = targets.map(() => new Slots(concurrency));
  function* tasks(examples: Iterable<Example>): Generator<MatrixTask> {
    for (const example of examples) {
      if (stop?.aborted) return;
      if (example.invalid !== undefined) onInvalidRecord?.(example);
      for (let t = 0; t < targets.length; t++) {
        for (let epoch = 1; epoch <= epochs; epoch++) {
          if (
            skip === undefined ||
            !skip(
              matrixUnitId(
                unitIdOf(example.example_id, epoch, epochs),
                targets[t]!.name,
              ),
              example.formerly === undefined ? undefined : matrixUnitId(
                unitIdOf(example.formerly, epoch, epochs),
                targets[t]!.name,
              ),
            )
          ) yield { example, epoch, t };
        }
      }
    }
  }
  const call = async ({ example, epoch, t }: MatrixTask): Promise<Unit> => {
    const { name, target } = targets[t]!;
    const unit = await slots[t]!.run(() =>
      callUnit(target, example, epoch, epochs, signal)
    );
    unit.unit_id = matrixUnitId(unit.unit_id, name);
    unit.target_name = name;
    return unit;
  };
  // Room for every target's calls at once: each is bounded by its slots.
  return concurrentMapBatches(tasks, call, {
    concurrency: concurrency * targets.length,
    onCancel,
    ...endingOf(options),
    groupOf: exampleOf,
  });
}
