/**
 * Which of a suite's targets a run calls: its one `target`, one of its
 * `targets` by name (`run --target NAME`), or several side by side (a
 * matrix: `run --matrix a,b` or `matrix:` in the config); and what its
 * `epochs` say.
 *
 * @module
 */

import { InputError } from "../base/errors.ts";
import type { CaseRequirement } from "../aggregate/types.ts";
import { targetNames } from "./_check.ts";
import type { SuiteConfig, TargetConfig } from "./types.ts";

/**
 * A target a run calls, with its name when it came from `targets:`.
 *
 * @example The one target of a config with `target:` has no name
 * ```ts
 * import { checkConfigText, type NamedTarget, selectTargets } from "./mod.ts";
 * const config = await checkConfigText("dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n", "s.yaml");
 * const [only]: NamedTarget[] = selectTargets(config, "s.yaml");
 * if (only === undefined || only.name !== undefined || only.config.type !== "replay") throw new Error("unexpected");
 * ```
 */
export interface NamedTarget {
  /** Its key in `targets:`; absent for a config's one `target:`. */
  name?: string;
  /** Its configuration. */
  config: TargetConfig;
}

/**
 * What the command line chose among a config's targets.
 *
 * @example Two of three targets, side by side
 * ```ts
 * import type { TargetChoice } from "./mod.ts";
 * const choice: TargetChoice = { matrix: ["fast", "slow"] };
 * if (choice.matrix?.length !== 2) throw new Error("unexpected");
 * ```
 */
export interface TargetChoice {
  /** One target by name (`run --target NAME`). */
  target?: string | undefined;
  /** Several targets by name, compared (`run --matrix a,b`). */
  matrix?: readonly string[] | undefined;
}

/**
 * The targets a run calls, in order: more than one makes the run a matrix,
 * whose first target is the one the others are compared with.
 *
 * @param config A checked config.
 * @param file The config file, for messages.
 * @param choice What the command line chose.
 * @returns The targets, at least one.
 * @throws {InputError} When the choice names a target the config lacks,
 *   gives both `--target` and `--matrix`, or leaves a config of several
 *   targets without a choice.
 *
 * @example `--matrix` picks targets by name, in its order
 * ```ts
 * import { checkConfigText, selectTargets } from "./mod.ts";
 * const yaml = "dataset: d.jsonl\ntargets:\n  a: { type: replay }\n  b: { type: replay }\nscorers: [{ type: exact_match }]\n";
 * const config = await checkConfigText(yaml, "s.yaml");
 * const names = selectTargets(config, "s.yaml", { matrix: ["b", "a"] }).map((t) => t.name);
 * if (names.join() !== "b,a") throw new Error(names.join());
 * const error = (() => { try { selectTargets(config, "s.yaml"); } catch (e) { return e as Error; } })();
 * if (!error?.message.includes("--target NAME or --matrix")) throw new Error("unexpected");
 * ```
 */
export function selectTargets(
  config: SuiteConfig,
  file: string,
  choice: TargetChoice = {},
): NamedTarget[] {
  const where = `in ${JSON.stringify(file)}`;
  if (choice.target !== undefined && choice.matrix !== undefined) {
    throw new InputError("Give --target NAME or --matrix a,b, not both");
  }
  const targets = config.targets;
  if (targets === undefined) {
    if (choice.target !== undefined || choice.matrix !== undefined) {
      throw new InputError(
        `${
          choice.target !== undefined ? "--target" : "--matrix"
        } picks among "targets:" by name; the config ${
          JSON.stringify(file)
        } has one "target"`,
      );
    }
    return [{ config: config.target! }];
  }
  const named = (name: string, flag: string): NamedTarget => {
    if (!Object.hasOwn(targets, name)) {
      throw new InputError(
        `${flag} names ${
          JSON.stringify(name)
        }, which is not a target ${where}; ${targetNames(targets)}`,
      );
    }
    return { name, config: targets[name]! };
  };
  if (choice.target !== undefined) return [named(choice.target, "--target")];
  if (choice.matrix !== undefined) {
    if (choice.matrix.length === 0) {
      throw new InputError("--matrix needs at least one target name");
    }
    const seen = new Set<string>();
    return choice.matrix.map((name) => {
      if (seen.has(name)) {
        throw new InputError(`--matrix names ${JSON.stringify(name)} twice`);
      }
      seen.add(name);
      return named(name, "--matrix");
    });
  }
  if (config.matrix !== undefined) {
    return config.matrix.map((name) => named(name, '"matrix"'));
  }
  const names = Object.keys(targets);
  if (names.length === 1) return [named(names[0]!, '"targets"')];
  throw new InputError(
    `The config ${
      JSON.stringify(file)
    } has several targets: pick one with --target NAME or --matrix a,b, or set "matrix:"; ${
      targetNames(targets)
    }`,
  );
}

/**
 * What a config's `epochs` say, in either form (`epochs: 5` or
 * `epochs: { n: 5, require: majority }`).
 *
 * @param config A checked config.
 * @returns How many epochs (`undefined` when the config does not say) and
 *   when a case passes (`undefined`: the default, `all`).
 *
 * @example
 * ```ts
 * import { checkConfigText, epochsOf } from "./mod.ts";
 * const config = await checkConfigText("dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\nepochs: { n: 3, require: any }\n", "s.yaml");
 * const { n, require } = epochsOf(config);
 * if (n !== 3 || require !== "any") throw new Error("unexpected");
 * ```
 */
export function epochsOf(
  config: SuiteConfig,
): { n: number | undefined; require: CaseRequirement | undefined } {
  const epochs = config.epochs;
  if (epochs === undefined || typeof epochs === "number") {
    return { n: epochs, require: undefined };
  }
  return { n: epochs.n, require: epochs.require };
}

/**
 * Whether a target calls over the network (`openai`, `http`): its answers
 * are cached, its calls may be priced, and a replay run must not make them.
 *
 * @param target A target's config.
 * @returns Whether it is a network target.
 *
 * @example
 * ```ts
 * import { isNetworkTarget } from "./mod.ts";
 * if (!isNetworkTarget({ type: "openai", model: "m" }) || isNetworkTarget({ type: "replay" })) throw new Error();
 * ```
 */
export function isNetworkTarget(target: TargetConfig): boolean {
  return target.type === "openai" || target.type === "http";
}
