/**
 * What a run of a suite would do, found without calling anything: the
 * config checked, every dataset record read, every command's program and
 * script looked for, and the cache asked which requests it holds. What
 * `evalpipe validate` prints.
 *
 * @module
 */

import { TemplateError, withoutCredentials } from "../net/template.ts";
import {
  AUTH_SCHEME,
  credentialHeader,
  ENV_VARIABLES,
} from "../net/_url_secrets.ts";
import {
  buildScorers,
  buildTargetConfig,
  checkCommands,
  checkConfigText,
  folderOf,
  missingVariableError,
  readConfigText,
  traceDirOf,
} from "../config/config.ts";
import { locateConfig } from "../config/_check.ts";
import { loadDatasetBatches } from "../dataset/dataset.ts";
import { resolveIn } from "../process/command.ts";
import { DEFAULTS } from "../base/defaults.ts";
import type { Scorer } from "../scorers/scorer.ts";
import type { CacheMode } from "../targets/cache.ts";
import type { CacheableTarget } from "../targets/openai_target.ts";
import type { Case } from "../dataset/case.ts";
import type { Unit } from "../dataset/unit.ts";
import { unitIdOf } from "../targets/target.ts";
import {
  epochsOf,
  isNetworkTarget,
  type NamedTarget,
  selectTargets,
} from "../config/targets.ts";
import type { TargetConfig } from "../config/types.ts";
import { datasetSources, whereOf } from "./datasets.ts";
import type { InvalidCase } from "../base/place.ts";
import { JUDGE_TEMPLATES } from "../scorers/_judge_vars.ts";

/**
 * Options of {@linkcode planSuite}.
 *
 * @example Ask what a replay would lack
 * ```ts
 * import { planSuite, type PlanSuiteOptions } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/d.jsonl`, '{"input":"q","output":"a"}\n');
 * await Deno.writeTextFile(`${dir}/s.yaml`, "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n");
 * const options: PlanSuiteOptions = { cacheMode: "replay" };
 * const plan = await planSuite(`${dir}/s.yaml`, options);
 * await Deno.remove(dir, { recursive: true });
 * if (plan.cases !== 1 || plan.cache !== undefined) throw new Error(); // a replay target calls nothing
 * ```
 */
export interface PlanSuiteOptions {
  /**
   * The cache's mode; overrides the config's `cache`.
   * @default {the config's, else "auto"}
   */
  cacheMode?: CacheMode | undefined;
  /**
   * The cache's folder. A relative path is the caller's.
   * @default {".evalpipe/cache" in the config file's folder}
   */
  cacheDir?: string | undefined;
  /**
   * How many times each example would run; overrides the config's `epochs`.
   * @default {the config's, else 1}
   */
  epochs?: number | undefined;
  /**
   * One of the config's `targets` by name, as `run --target NAME` picks it.
   * @default {undefined}
   */
  target?: string | undefined;
  /**
   * Several of the config's `targets`, as `run --matrix a,b` runs them;
   * overrides `matrix:`.
   * @default {the config's `matrix`}
   */
  matrix?: readonly string[] | undefined;
}

/**
 * What the cache holds of one kind of request.
 *
 * @example
 * ```ts
 * import type { CacheCoverage } from "./mod.ts";
 * const target: CacheCoverage = { requests: 3, stored: 2, missing: 1 };
 * if (target.stored + target.missing !== target.requests) throw new Error();
 * ```
 */
export interface CacheCoverage {
  /** Requests a run would make (of those that can be known now). */
  requests: number;
  /** Of them, answered by the cache. */
  stored: number;
  /** Of them, not in the cache: calls in `auto`, blocked units in `replay`. */
  missing: number;
}

/**
 * What a run of a suite would do.
 *
 * @example
 * ```ts
 * import { planSuite, type SuitePlan } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/d.jsonl`, '{"input":"q","output":"a","expected":"a"}\n{"input":"r","output":"b"}\n');
 * await Deno.writeTextFile(`${dir}/s.yaml`, "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\nepochs: 2\n");
 * const plan: SuitePlan = await planSuite(`${dir}/s.yaml`);
 * await Deno.remove(dir, { recursive: true });
 * if (plan.cases !== 2 || plan.units !== 4 || plan.scorers[0]?.name !== "exact_match") throw new Error();
 * ```
 */
export interface SuitePlan {
  /** The config file, as given. */
  config: string;
  /**
   * The dataset, as the config names it (`-` for stdin, not read); several
   * (`datasets:`) joined by ", ".
   */
  dataset: string;
  /** Dataset records read (malformed ones included). */
  cases: number;
  /** The malformed records, with their dataset, line (or position) and why. */
  invalid: InvalidCase[];
  /**
   * Cases a network target's templates cannot fill (a placeholder names a
   * field the case lacks): each would be blocked in a run, without a call.
   * One entry per target and message, with the count and the first case.
   */
  unsendable: Array<
    {
      /** The target's name, when the config names several. */
      target?: string;
      message: string;
      cases: number;
      dataset: string;
      line: number;
      where: "line" | "record";
    }
  >;
  /**
   * Cases a judge's rubric or system prompt cannot fill (it names
   * `{{metadata.topic}}`, which the case lacks): each would be that judge's
   * error Score in a run, without a call. One entry per scorer and message,
   * with the count and the first case.
   */
  unjudgeable: Array<
    {
      /** The scorer's metric name. */
      scorer: string;
      /** The config key of the template that cannot be filled. */
      field: "rubric" | "system";
      /** The config's line of that key, when the config has one. */
      config_line?: number;
      message: string;
      cases: number;
      dataset: string;
      line: number;
      where: "line" | "record";
    }
  >;
  /** How many times each example would run. */
  epochs: number;
  /** Target calls a run would make: cases times epochs (times targets). */
  units: number;
  /**
   * The target (a matrix's first): its type, what it calls, and the
   * `headers` it sends, as the config writes them (a `${NAME}` as written,
   * never its value).
   */
  target: {
    type: string;
    model?: string;
    url?: string;
    cmd?: string;
    headers?: Record<string, string>;
  };
  /**
   * The targets the run calls, by name, when the config has `targets:`: the
   * one `target` picks, `matrix`'s, or the config's `matrix:`.
   */
  targets?: Array<
    {
      name: string;
      type: string;
      model?: string;
      url?: string;
      cmd?: string;
      headers?: Record<string, string>;
    }
  >;
  /**
   * The scorers, in output order: metric name, version, type, and, for a
   * judge or `semantic_similarity` that sends some, its `headers` as the
   * config writes them.
   */
  scorers: Array<
    {
      name: string;
      version: string;
      type: string;
      headers?: Record<string, string>;
    }
  >;
  /** Units in flight at once. */
  concurrency: number;
  /** The config's `budget_usd`, when it sets one. */
  budget_usd?: number;
  /**
   * What the cache holds, when the run would make cacheable calls and the
   * cache is read (`auto`, `replay`). A judge's request is known only when
   * the target's answer is (cached, or replayed from the dataset).
   */
  cache?: {
    mode: CacheMode;
    dir: string;
    target?: CacheCoverage;
    judge?: CacheCoverage & {
      /** Judge requests not known yet: their unit's answer is not cached. */
      unknown: number;
    };
  };
}

/**
 * The headers a target or a scorer sends, as the config writes them: each
 * `${NAME}` as written, never read, so that no secret is shown, and the text
 * a credential's header writes out (`authorization: Bearer sk-…`) as `***`.
 */
function headersOf(
  headers: Readonly<Record<string, string>> | undefined,
): { headers?: Record<string, string> } {
  if (headers === undefined || Object.keys(headers).length === 0) return {};
  const shown: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    shown[name] = credentialHeader(name) ? hiddenText(value) : value;
  }
  return { headers: shown };
}

/**
 * A credential header's value with the text it writes out as `***`: its
 * `${NAME}` references (unread) and a leading scheme (`Bearer`) stay, so the
 * plan still tells where the secret comes from.
 */
function hiddenText(value: string): string {
  // The references fillEnv reads: `${sk-…}`, no variable's name, is sent
  // as written, a pasted key to hide like any other text.
  let shown = "";
  let from = 0;
  for (const reference of value.matchAll(ENV_VARIABLES)) {
    shown += hiddenPart(value.slice(from, reference.index)) + reference[0];
    from = reference.index + reference[0].length;
  }
  return shown + hiddenPart(value.slice(from));
}

/** Text between references as `***`, a leading scheme kept. */
function hiddenPart(part: string): string {
  if (part.trim() === "") return part;
  const scheme = AUTH_SCHEME.exec(part)?.[0] ?? "";
  return part.length === scheme.length ? part : `${scheme}***`;
}

function targetSummary(t: TargetConfig): SuitePlan["target"] {
  switch (t.type) {
    case "subprocess":
      return { type: t.type, cmd: t.cmd };
    case "openai":
      return {
        type: t.type,
        model: t.model,
        // Shown and written as `run`'s messages show URLs: no password.
        url: withoutCredentials(t.base_url ?? "https://api.openai.com/v1"),
        ...headersOf(t.headers),
      };
    case "http":
      return {
        type: t.type,
        url: withoutCredentials(t.url),
        ...headersOf(t.headers),
      };
    case "replay":
    case "trace":
      return { type: t.type };
  }
}

/**
 * Finds out what a run of a suite would do without calling anything: the
 * config is checked as `run` checks it, every dataset record is read (the
 * malformed ones are listed), every command's script and program are looked
 * for, and, where the run would make cacheable calls, the cache is asked
 * for each request (the judges' too, where the target's answer is known).
 * Nothing is run, nothing is sent, nothing is written.
 *
 * @param configPath The YAML config file.
 * @param options The cache's mode and folder, epochs.
 * @returns The plan.
 * @throws {ConfigError} For a config that cannot be used, a command whose
 *   script or program is missing, an API key that is not set (unless the
 *   cache replays).
 * @throws {import("../dataset/dataset.ts").DatasetError} For a dataset that cannot be read at all.
 *
 * @example A subprocess scorer whose script is missing
 * ```ts
 * import { planSuite } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/d.jsonl`, '{"input":"q","output":"a"}\n');
 * await Deno.writeTextFile(`${dir}/s.yaml`, "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: subprocess, cmd: python3 nope.py }]\n");
 * const error = await planSuite(`${dir}/s.yaml`).then(() => undefined, (e) => e);
 * await Deno.remove(dir, { recursive: true });
 * if (error?.exitCode !== 2 || !error.message.includes('"nope.py", which does not exist')) throw new Error(String(error));
 * ```
 */
export async function planSuite(
  configPath: string,
  options: PlanSuiteOptions = {},
): Promise<SuitePlan> {
  const text = await readConfigText(configPath);
  const config = await checkConfigText(text, configPath);
  const lineOf = locateConfig(text, configPath).lineOf;
  const cwd = folderOf(configPath);
  const mode = options.cacheMode ?? config.cache ?? "auto";
  const optionalKey = mode === "replay";
  // The targets a run with the same choice calls; one it would refuse
  // (several targets, none picked) is refused alike.
  const chosen: NamedTarget[] = selectTargets(config, configPath, {
    ...(options.target !== undefined ? { target: options.target } : {}),
    ...(options.matrix !== undefined ? { matrix: options.matrix } : {}),
  });
  let scorers: Scorer[] = [];
  const built: unknown[] = [];
  try {
    scorers = await buildScorers(config, configPath, { cwd, optionalKey });
    // Before a target is built, as run checks them: a subprocess target's
    // builder refuses a missing script too, but cannot name the line.
    checkCommands(config, chosen, configPath, cwd, lineOf);
    for (const t of chosen) {
      built.push(
        await buildTargetConfig(t.config, cwd, undefined, {
          optionalKey,
          traceDir: traceDirOf(config, cwd),
        }),
      );
    }
  } catch (error) {
    if (!(error instanceof TemplateError)) throw error;
    throw await missingVariableError(error.message, configPath);
  } finally {
    await Promise.all(scorers.map((s) => s.close?.()));
  }
  const epochs = options.epochs ?? epochsOf(config).n ?? DEFAULTS.epochs;
  const network = chosen.some((t) => isNetworkTarget(t.config));
  const judges = scorers.filter((s) => s.cacheKey !== undefined);
  const readsCache = (mode === "auto" || mode === "replay") &&
    (network || judges.length > 0);
  const dir = options.cacheDir ?? resolveIn(cwd, ".evalpipe/cache");
  const cache = readsCache
    ? new (await import("../targets/cache.ts")).TargetCache(dir, { mode })
    : undefined;
  const cacheKeyOf = network
    ? (await import("../targets/cache.ts")).cacheKey
    : undefined;
  const targetCoverage: CacheCoverage = { requests: 0, stored: 0, missing: 0 };
  const judgeCoverage = { requests: 0, stored: 0, missing: 0, unknown: 0 };

  const invalid: SuitePlan["invalid"] = [];
  const unsendable = new Map<string, SuitePlan["unsendable"][number]>();
  const unjudgeable = new Map<string, SuitePlan["unjudgeable"][number]>();
  let cases = 0;
  const sources = datasetSources(config, cwd);
  for (const source of sources) {
    if (source.path === "-") continue;
    const batches = await loadDatasetBatches(source.path, {
      name: source.name,
    });
    for await (const batch of batches) {
      for (const example of batch) {
        cases++;
        if (example.case === null) {
          invalid.push({
            dataset: source.written,
            line: example.line,
            message: example.invalid ?? "",
            where: whereOf([source], example).where,
            ...(example.at !== undefined ? { at: example.at } : {}),
          });
          continue;
        }
        for (const [k, t] of chosen.entries()) {
          if (!isNetworkTarget(t.config)) continue;
          try {
            (built[k] as CacheableTarget).request(example.case);
          } catch (error) {
            if (!(error instanceof TemplateError)) throw error;
            const key = `${k}\n${error.message}`;
            const seen = unsendable.get(key);
            if (seen !== undefined) seen.cases++;
            else {
              unsendable.set(key, {
                ...(t.name !== undefined ? { target: t.name } : {}),
                message: error.message,
                cases: 1,
                dataset: source.written,
                line: example.line,
                where: whereOf([source], example).where,
              });
            }
          }
        }
        for (const judge of judges) {
          // A rubric fills the same fields whatever the output.
          try {
            judge.cacheKey!(judgedUnit(example.example_id, example.case, ""));
          } catch (error) {
            if (!(error instanceof TemplateError)) throw error;
            const key = `${judge.name}\n${error.message}`;
            const seen = unjudgeable.get(key);
            if (seen !== undefined) seen.cases++;
            else {
              // A judge is built from the config's scorer at its index.
              const field = error.template === JUDGE_TEMPLATES.system
                ? "system"
                : "rubric";
              const line = lineOf(["scorers", scorers.indexOf(judge), field]);
              unjudgeable.set(key, {
                scorer: judge.name,
                field,
                ...(line !== undefined ? { config_line: line } : {}),
                message: error.message,
                cases: 1,
                dataset: source.written,
                line: example.line,
                where: whereOf([source], example).where,
              });
            }
          }
        }
        if (cache === undefined) continue;
        for (let epoch = 1; epoch <= epochs; epoch++) {
          for (const [k, t] of chosen.entries()) {
            const output = outputOf(
              example.case,
              epoch,
              t.config.type === "replay",
              isNetworkTarget(t.config) ? cacheKeyOf : undefined,
              built[k] as CacheableTarget,
              cache,
              targetCoverage,
            );
            if (judges.length === 0) continue;
            if (output === undefined) {
              judgeCoverage.unknown += judges.length;
              continue;
            }
            const unit = judgedUnit(
              example.example_id,
              example.case,
              output,
              unitIdOf(example.example_id, epoch, epochs),
            );
            for (const judge of judges) {
              let key: string;
              try {
                key = judge.cacheKey!(unit);
              } catch (error) {
                // Its rubric cannot fill the case (counted above): no call.
                if (!(error instanceof TemplateError)) throw error;
                continue;
              }
              // Not applicable to the case: the run makes no call either.
              if (judge.skipsCall?.(unit) === true) continue;
              judgeCoverage.requests++;
              // A stored reply the judge cannot use is a replay's miss.
              const stored = cache.peek(key);
              if (
                stored !== undefined &&
                judge.usableReply?.(unit, stored) !== false
              ) judgeCoverage.stored++;
              else judgeCoverage.missing++;
            }
          }
        }
      }
    }
  }
  return {
    config: configPath,
    dataset: sources.map((s) => s.written).join(", "),
    cases,
    invalid,
    unsendable: [...unsendable.values()],
    unjudgeable: [...unjudgeable.values()],
    epochs,
    units: (cases - invalid.length) * epochs * chosen.length,
    target: targetSummary(chosen[0]!.config),
    ...(config.targets !== undefined
      ? {
        targets: chosen.map((t) => ({
          name: t.name!,
          ...targetSummary(t.config),
        })),
      }
      : {}),
    scorers: scorers.map((s, i) => ({
      name: s.name,
      version: s.version,
      // `classification:` adds its scorer after the config's.
      type: config.scorers[i]?.type ?? "classification",
      ...headersOf(
        (config.scorers[i] as { headers?: Record<string, string> } | undefined)
          ?.headers,
      ),
    })),
    concurrency: config.concurrency ?? DEFAULTS.concurrency,
    ...(config.budget_usd !== undefined
      ? { budget_usd: config.budget_usd }
      : {}),
    ...(network || judges.length > 0
      ? {
        cache: {
          mode,
          dir,
          ...(cache !== undefined && network ? { target: targetCoverage } : {}),
          ...(cache !== undefined && judges.length > 0
            ? { judge: judgeCoverage }
            : {}),
        },
      }
      : {}),
  };
}

/** The unit a judge would get for a case's output, as a run makes it. */
function judgedUnit(
  exampleId: string,
  testCase: Case,
  output: string,
  unitId = exampleId,
): Unit {
  return {
    example_id: exampleId,
    unit_id: unitId,
    input: testCase.input,
    output,
    ...(testCase.expected !== undefined ? { expected: testCase.expected } : {}),
    ...(testCase.context !== undefined ? { context: testCase.context } : {}),
    ...(testCase.metadata !== undefined ? { metadata: testCase.metadata } : {}),
  };
}

/**
 * The output a run would have for a case's epoch when it is known now: the
 * cached answer of a network target (counted), or a replay's `output`.
 */
function outputOf(
  testCase: Case,
  epoch: number,
  replay: boolean,
  cacheKeyOf: typeof import("../targets/cache.ts").cacheKey | undefined,
  target: CacheableTarget,
  cache: import("../targets/cache.ts").TargetCache,
  coverage: CacheCoverage,
): string | undefined {
  if (cacheKeyOf === undefined) {
    return replay && typeof testCase.output === "string"
      ? testCase.output
      : undefined;
  }
  coverage.requests++;
  let key: string;
  try {
    key = cacheKeyOf(target, testCase, epoch);
  } catch (error) {
    // A case its template cannot fill fails in the run without a call.
    if (!(error instanceof TemplateError)) throw error;
    coverage.requests--;
    return undefined;
  }
  const hit = cache.peek(key);
  // One the target would not replay (stored before it read answers as it
  // does now) is a miss in the run: missing here too.
  const reading = (hit as { reading?: unknown } | undefined)?.reading;
  if (
    hit === undefined ||
    target.replays?.(hit, typeof reading === "number" ? reading : undefined) ===
      false
  ) {
    coverage.missing++;
    return undefined;
  }
  coverage.stored++;
  return hit.output;
}

/**
 * The line that shows what headers a target or a scorer sends, names and
 * values as the config writes them (`${NAME}` unread), or none.
 */
function headersLine(
  what: string,
  sends: { headers?: Record<string, string> },
): string[] {
  if (sends.headers === undefined) return [];
  return [
    `${what} headers: ${
      Object.entries(sends.headers).map(([name, value]) =>
        `${name}: ${JSON.stringify(value)}`
      ).join(", ")
    }`,
  ];
}

/**
 * A plan as people read it: one line per part of the run.
 *
 * @param plan The plan.
 * @returns The text, ending with a newline.
 *
 * @example
 * ```ts
 * import { formatPlan, planSuite } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/d.jsonl`, '{"input":"q","output":"a"}\n');
 * await Deno.writeTextFile(`${dir}/s.yaml`, "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n");
 * const text = formatPlan(await planSuite(`${dir}/s.yaml`));
 * await Deno.remove(dir, { recursive: true });
 * if (!text.includes("dataset: d.jsonl: 1 case") || !text.includes("exact_match (exact_match@1)")) throw new Error(text);
 * ```
 */
export function formatPlan(plan: SuitePlan): string {
  const plural = (n: number, one: string, many = `${one}s`) =>
    `${n} ${n === 1 ? one : many}`;
  const t = plan.target;
  const lines = [
    `config: ${plan.config}: valid`,
    plan.dataset === "-"
      ? "dataset: stdin (read when the run starts)"
      : `dataset: ${plan.dataset}: ${plural(plan.cases, "case")}${
        plan.invalid.length > 0
          ? `, ${plural(plan.invalid.length, "malformed record")}`
          : ""
      }`,
    `epochs: ${plan.epochs}: ${
      plural(plan.units, "unit")
    }, ${plan.concurrency} at once`,
    ...(plan.targets ?? [{ name: undefined, ...t }]).flatMap((t) => [
      `target${t.name !== undefined ? ` ${t.name}` : ""}: ${t.type}${
        t.model !== undefined ? ` ${t.model}` : ""
      }${t.url !== undefined ? ` at ${t.url}` : ""}${
        t.cmd !== undefined ? `: ${t.cmd}` : ""
      }`,
      ...headersLine(`target${t.name !== undefined ? ` ${t.name}` : ""}`, t),
    ]),
    ...plan.unsendable.map((u) =>
      `target${u.target !== undefined ? ` ${u.target}` : ""}: ${
        plural(u.cases, "case")
      } its templates cannot fill, blocked in a run`
    ),
    `scorers: ${
      plan.scorers.map((s) => `${s.name} (${s.version})`).join(", ")
    }`,
    ...plan.scorers.flatMap((s) => headersLine(`scorer ${s.name}`, s)),
    ...plan.unjudgeable.map((u) =>
      `judge ${u.scorer}: ${plural(u.cases, "case")} its ${
        JUDGE_TEMPLATES[u.field]
      } cannot fill, an error in a run`
    ),
  ];
  if (plan.budget_usd !== undefined) {
    lines.push(`budget: $${plan.budget_usd} (budget_usd)`);
  }
  const c = plan.cache;
  if (c !== undefined) {
    const parts: string[] = [];
    const calls = c.mode === "replay"
      ? "missing (blocked in replay)"
      : "to call";
    if (c.target !== undefined) {
      parts.push(
        `target ${c.target.stored} of ${
          plural(c.target.requests, "request")
        } stored, ${c.target.missing} ${calls}`,
      );
    }
    if (c.judge !== undefined) {
      parts.push(
        `judge ${c.judge.stored} of ${
          plural(c.judge.requests, "request")
        } stored, ${c.judge.missing} ${calls}${
          c.judge.unknown > 0
            ? `, ${c.judge.unknown} known once the target answers`
            : ""
        }`,
      );
    }
    lines.push(
      `cache: ${c.mode}, ${c.dir}${
        parts.length > 0
          ? `: ${parts.join("; ")}`
          : c.mode === "off"
          ? ": not used"
          : ": every request is made again"
      }`,
    );
  }
  return lines.join("\n") + "\n";
}
