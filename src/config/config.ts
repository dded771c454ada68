/**
 * Suite configuration: the YAML file that names a dataset, a target and
 * scorers. Unknown keys and wrong types are errors that name the key, the
 * file and the line.
 *
 * The shape is written once (`_shape.ts`). A valid config is checked by a
 * check derived from it without zod (`_check.ts`); the zod schema derived
 * from it, with the messages that name a problem, is loaded only for a config
 * that check declines (`schema.ts`).
 *
 * @module
 */

import {
  checkBudget,
  checkScorers,
  checkSuite,
  checkTargets,
  ConfigError,
  locateConfig,
  scorerOptionError,
} from "./_check.ts";
import { buildBuiltin, trajectoryChecksFor } from "./_builtin_scorers.ts";
import { buildJudge, isJudge } from "./_judge_scorers.ts";
import { metricsOf, type Scorer } from "../scorers/scorer.ts";
import { nearest } from "../base/words.ts";
import {
  fromHere,
  homeScript,
  homeScriptText,
  missingProgram,
  missingScript,
  scriptName,
} from "../process/command.ts";
import type { Target } from "../targets/target.ts";
// Commands, network targets, the judge, the cache and persistent scorers are
// loaded when a config names them: a run pays start-up only for what it uses.
import type { TargetCache } from "../targets/cache.ts";
import type { Budget } from "../net/budget.ts";
import { replayTarget } from "../targets/replay_target.ts";
import { osErrorText } from "../base/errors.ts";
import { duplicateScorerName } from "../scorers/scorer_names.ts";
import { checkDatasets, datasetsOf } from "./_datasets.ts";

export { ConfigError };
export type * from "./types.ts";
import type { GenerationKeys, SuiteConfig, TargetConfig } from "./types.ts";
import { type NamedTarget, selectTargets } from "./targets.ts";
import { readUtf8File, Utf8Error } from "../io/utf8.ts";
import { clip } from "../base/terminal.ts";
import { CREDENTIAL_NAMES } from "../net/_url_secrets.ts";

/**
 * Parses and validates a suite's YAML config text, loading zod only when the
 * config is invalid (or unusual) to name its first problem.
 *
 * @example
 * ```ts
 * import { checkConfigText } from "./config.ts";
 * const config = await checkConfigText(
 *   "dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
 *   "suite.yaml",
 * );
 * if (config.target?.type !== "replay") throw new Error();
 * ```
 *
 * @param text The YAML.
 * @param path The file it came from, for messages.
 * @returns The config, as `parseConfigText` returns it.
 * @throws {ConfigError} When it cannot be parsed or validated, with
 * `parseConfigText`'s message.
 */
export async function checkConfigText(
  text: string,
  path: string,
): Promise<SuiteConfig> {
  const located = locateConfig(text, path);
  const config = checkSuite(located.value);
  if (config === undefined) {
    const { parseConfig } = await import("./schema.ts");
    return parseConfig(located.value, path, located.lineOf);
  }
  checkScorers(
    config,
    path,
    located.lineOf,
    await trajectoryChecksFor(config.scorers),
  );
  checkDatasets(config, path, located.lineOf);
  checkTargets(config, path, located.lineOf);
  checkBudget(config, path, located.lineOf);
  return config;
}

/**
 * Reads a suite's YAML config file.
 *
 * @param path The file.
 * @returns Its text.
 * @throws {ConfigError} When it cannot be read.
 */
export async function readConfigText(path: string): Promise<string> {
  try {
    return await readUtf8File(path);
  } catch (error) {
    if (error instanceof Utf8Error) {
      throw new ConfigError(
        path,
        error.line,
        "not valid UTF-8; save it as UTF-8",
      );
    }
    throw new ConfigError(
      path,
      undefined,
      `cannot read it: ${osErrorText(error)}`,
    );
  }
}

/**
 * Reads and validates a suite's YAML config file.
 *
 * @param path The file.
 * @returns The config.
 * @throws {ConfigError} When the file cannot be read, parsed or validated.
 *
 * @example Load a suite file, and a file that is not there
 * ```ts
 * import { ConfigError, loadConfig } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/evalpipe.yaml`, "dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n");
 * const config = await loadConfig(`${dir}/evalpipe.yaml`);
 * const missing = await loadConfig(`${dir}/nope.yaml`).then(() => undefined, (e) => e);
 * await Deno.remove(dir, { recursive: true });
 * if (config.dataset !== "cases.jsonl" || !(missing instanceof ConfigError)) throw new Error("unexpected");
 * if (!missing.message.endsWith('nope.yaml": cannot read it: no such file') || missing.exitCode !== 2) throw new Error(missing.message);
 * ```
 */
export async function loadConfig(path: string): Promise<SuiteConfig> {
  return await checkConfigText(await readConfigText(path), path);
}

/**
 * The folder of a file path, for resolving what the config names.
 *
 * @param path A file path.
 * @returns Its folder (`.` for a bare name).
 */
export function folderOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "." : slash === 0 ? "/" : path.slice(0, slash);
}

/**
 * Options of {@linkcode buildScorers}.
 *
 * @example `cwd` is where a scorer's script is found, which names its metric
 * ```ts
 * import { buildScorers, checkConfigText } from "./mod.ts";
 * import { subprocessScorer } from "../scorers/mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/scorers`);
 * await Deno.writeTextFile(`${dir}/scorers/grade.py`, "");
 * const config = await checkConfigText("dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: subprocess, cmd: python3 scorers/grade.py }]\n", "suite.yaml");
 * const [scorer] = await buildScorers(config, "suite.yaml", { cwd: dir, timeout: 5 });
 * const same = subprocessScorer("python3 scorers/grade.py", { cwd: dir, name: "grade", timeout: 5 });
 * await Deno.remove(dir, { recursive: true });
 * if (scorer?.name !== "grade" || scorer.version !== same.version) throw new Error("unexpected");
 * ```
 */
export interface BuildOptions extends CallOptions {
  /** The folder commands run in: the config file's. */
  cwd: string;
  /** Overrides every scorer's timeout (the CLI's `--timeout`). */
  timeout?: number | undefined;
  /**
   * Where scorers that call a model (`llm_judge`, the RAG judges,
   * `semantic_similarity`) keep their answers, the cache's mode applied.
   * @default {undefined: no cache}
   */
  cache?: TargetCache | undefined;
}

/**
 * How the targets and scorers a config names make their model calls: the
 * run's budget, and whether an API key may be missing.
 *
 * @example A replayed run needs no key
 * ```ts
 * import { buildTarget, type CallOptions, checkConfigText } from "./mod.ts";
 * const config = await checkConfigText("dataset: d.jsonl\ntarget: { type: openai, model: m, api_key_env: NOT_SET_ANYWHERE }\nscorers: [{ type: exact_match }]\n", "s.yaml");
 * const options: CallOptions = { optionalKey: true };
 * const target = await buildTarget(config, ".", undefined, options);
 * if (typeof target.call !== "function") throw new Error();
 * ```
 */
export interface CallOptions {
  /**
   * What the run may spend: no priced call starts once it is spent.
   * @default {undefined: no cap}
   */
  budget?: Budget | undefined;
  /**
   * Accept API key variables that are not set, failing at the first call
   * instead: a run that replays its cache calls nothing.
   * @default {false}
   */
  optionalKey?: boolean | undefined;
  /**
   * The folder a `trace` target reads a case's `trace:` file from: the
   * dataset's ({@linkcode traceDirOf}).
   * @default {the config's folder}
   */
  traceDir?: string | undefined;
}

/**
 * The folder a suite's `trace` target reads traces from: a case names its
 * trace file relative to the dataset file, as EvalCore's do (with several
 * datasets, the first one's; with stdin, the config's folder).
 *
 * @param config A checked config.
 * @param cwd The config file's folder.
 * @returns The folder.
 *
 * @example
 * ```ts
 * import { checkConfigText, traceDirOf } from "./mod.ts";
 * const config = await checkConfigText("dataset: runs/cases.jsonl\ntarget: { type: trace }\nscorers: [{ type: exact_match }]\n", "s.yaml");
 * if (traceDirOf(config, "/suite") !== "/suite/runs") throw new Error(traceDirOf(config, "/suite"));
 * ```
 */
export function traceDirOf(config: SuiteConfig, cwd: string): string {
  const dataset = datasetsOf(config)[0]?.path ?? "-";
  return dataset === "-" ? cwd : folderOf(
    dataset.startsWith("/") || cwd === "." ? dataset : `${cwd}/${dataset}`,
  );
}

/**
 * Builds the scorers a config names, checking that their metric names are
 * distinct once subprocess names are resolved.
 *
 * @param config The config.
 * @param file The config file, for messages.
 * @param options The folder and timeout override.
 * @returns The scorers, in config order.
 * @throws {ConfigError} When two scorers share a name, a subprocess
 *   scorer has no `name` and its command names no script file to take one
 *   from, or a gate names a metric none of the scorers gives.
 *
 * @example Build a suite's scorers and score one unit
 * ```ts
 * import { buildScorers, checkConfigText } from "./mod.ts";
 * const config = await checkConfigText(
 *   "dataset: cases.jsonl\ntarget: { type: replay }\nscorers:\n  - { type: exact_match }\n  - { type: contains, ignore_case: true }\n",
 *   "suite.yaml",
 * );
 * const scorers = await buildScorers(config, "suite.yaml", { cwd: "." });
 * const unit = { example_id: "d#1", unit_id: "d#1", input: "capital?", output: "PARIS", expected: "paris" };
 * const values = await Promise.all(scorers.map(async (s) => { const r = await s.score(unit, {}); return "scores" in r ? -1 : r.value; }));
 * if (scorers.map((s) => s.name).join() !== "exact_match,contains" || values.join() !== "0,1") throw new Error("unexpected");
 * ```
 */
export async function buildScorers(
  config: SuiteConfig,
  file: string,
  options: BuildOptions,
): Promise<Scorer[]> {
  const scorers: Scorer[] = [];
  // How judges call their model: the run's cache, budget and key rule.
  const calls = {
    cache: options.cache,
    budget: options.budget,
    optionalKey: options.optionalKey,
  };
  // Each kind's module is imported when a scorer of that kind comes (again:
  // at the cost of a resolved promise).
  for (const [i, sc] of config.scorers.entries()) {
    let scorer: Scorer;
    if (sc.type === "subprocess") {
      // A typo in the script's path would fail every case the same way:
      // say it once, before any work.
      const home = homeScript(sc.cmd);
      if (home !== undefined) {
        throw new ConfigError(
          file,
          await scorerLine(file, i),
          `scorer ${JSON.stringify(clip(sc.cmd, 60))} ${homeScriptText(home)}`,
        );
      }
      const missing = missingScript(sc.cmd, options.cwd);
      if (missing !== undefined) {
        throw new ConfigError(
          file,
          await scorerLine(file, i),
          `scorer ${JSON.stringify(clip(sc.cmd, 60))} runs ${
            JSON.stringify(missing)
          }, which does not exist (paths resolve against the config's folder, ${
            JSON.stringify(options.cwd)
          })${fromHere(missing, options.cwd)}`,
        );
      }
      const timeout = options.timeout ?? sc.timeout ?? config.timeout;
      const name = sc.name ?? scriptName(sc.cmd, options.cwd);
      if (name === undefined) {
        throw new ConfigError(
          file,
          await scorerLine(file, i),
          `scorer ${
            JSON.stringify(clip(sc.cmd, 60))
          } names no script file to take a metric name from; give it a "name"`,
        );
      }
      const common = {
        cwd: options.cwd,
        name,
        ...(timeout !== undefined ? { timeout } : {}),
      };
      const cap = sc.max_output_bytes;
      scorer = sc.persistent === true
        ? (await import("../scorers/persistent_scorer.ts")).persistentScorer(
          sc.cmd,
          {
            ...common,
            capSetting: "max_output_bytes",
            ...(cap !== undefined
              ? { maxLineBytes: cap, maxStderrBytes: cap }
              : {}),
          },
        )
        : (await import("../scorers/subprocess_scorer.ts")).subprocessScorer(
          sc.cmd,
          {
            ...common,
            // Each stream's cap: one the error names must be one that can
            // be raised, and a scorer's logs on stderr may well be larger.
            capSetting: "max_output_bytes",
            ...(cap !== undefined
              ? { maxStdoutBytes: cap, maxStderrBytes: cap }
              : {}),
          },
        );
    } else if (sc.type === "semantic_similarity") {
      const { type: _type, ...settings } = sc;
      const [{ semanticSimilarity }, cache] = await Promise.all([
        import("../scorers/semantic_similarity.ts"),
        options.cache === undefined
          ? undefined
          : import("./_embedding_cache.ts").then((m) =>
            m.targetEmbeddingCache(options.cache!)
          ),
      ]);
      scorer = semanticSimilarity(settings, {
        ...(cache ? { cache } : {}),
        optionalKey: options.optionalKey,
      });
    } else if (sc.type === "llm_judge") {
      const { llmJudge } = await import("../scorers/llm_judge.ts");
      scorer = llmJudge(withParams(sc), undefined, undefined, calls);
    } else if (isJudge(sc)) {
      try {
        // Narrowed first, so that the prepared config keeps its type.
        scorer = await buildJudge(
          sc.type === "rubric" ? withParams(sc) : withParams(sc),
          `scorers[${i}]`,
          options.cwd,
          calls,
        );
      } catch (error) {
        throw scorerOptionError(error, file, i, await lineFinder(file));
      }
    } else {
      try {
        scorer = await buildBuiltin(sc, `scorers[${i}]`, options.cwd);
      } catch (error) {
        throw scorerOptionError(error, file, i, await lineFinder(file));
      }
    }
    scorers.push(scorer);
    const twice = duplicateScorerName(scorers.map((s) => s.name));
    if (twice !== undefined) {
      // At the second scorer's line, as the config check says it when the
      // config gives both names.
      throw new ConfigError(
        file,
        await scorerLine(file, twice.second),
        `two scorers are named ${
          JSON.stringify(twice.name)
        }; give one a "name"`,
      );
    }
  }
  // `classification:` adds its metric after the config's scorers (the
  // config check has refused a scorer of that name).
  const labels = config.classification;
  if (labels !== undefined && labels !== false) {
    const { classification } = await import("../scorers/classification.ts");
    scorers.push(classification(labels === true ? {} : { ...labels }));
  }
  await checkGateMetrics(config, file, scorers);
  return scorers;
}

/**
 * Refuses a gate on a metric none of the suite's scorers gives: a misspelt
 * metric would otherwise be found only when the whole run has been paid for
 * (and a gate with only `allow_unmeasured` never at all).
 */
async function checkGateMetrics(
  config: SuiteConfig,
  file: string,
  scorers: readonly Scorer[],
): Promise<void> {
  const gated = Object.keys(config.gates ?? {});
  if (gated.length === 0) return;
  const metrics = new Set(scorers.flatMap(metricsOf));
  const unknown = gated.find((metric) => !metrics.has(metric));
  if (unknown === undefined) return;
  const near = nearest(unknown, metrics);
  throw new ConfigError(
    file,
    (await lineFinder(file))(["gates", unknown]),
    `gate ${JSON.stringify(unknown)} names no metric of this suite (${
      [...metrics].map((m) => JSON.stringify(m)).join(", ")
    })${near !== undefined ? `; did you mean ${JSON.stringify(near)}?` : ""}`,
  );
}

/**
 * Refuses a command of the suite that cannot run as written: a target's or a
 * scorer's script that does not exist, or a program found nowhere. `run` and
 * `validate` check the same, before any work: every case would fail alike.
 *
 * @param config A checked config.
 * @param targets The targets the run calls (`selectTargets`).
 * @param file The config file, for messages.
 * @param cwd The config's folder, where commands run.
 * @param lineOf Finds a path's line in the config file.
 * @throws {ConfigError} Naming the command, what is missing, and its line.
 *
 * @example
 * ```ts
 * import { checkCommands, checkConfigText, ConfigError, selectTargets } from "./mod.ts";
 * const config = await checkConfigText("dataset: d.jsonl\ntarget: { type: subprocess, cmd: python3 nope.py }\nscorers: [{ type: exact_match }]\n", "s.yaml");
 * const error = (() => { try { checkCommands(config, selectTargets(config, "s.yaml"), "s.yaml", "/", () => 2); } catch (e) { return e; } })();
 * if (!(error instanceof ConfigError) || !error.message.includes('runs "nope.py", which does not exist')) throw new Error(String(error));
 * ```
 */
export function checkCommands(
  config: SuiteConfig,
  targets: readonly NamedTarget[],
  file: string,
  cwd: string,
  lineOf: (path: readonly PropertyKey[]) => number | undefined,
): void {
  for (const t of targets) {
    if (t.config.type !== "subprocess") continue;
    checkCommand(
      t.name === undefined ? "the target" : `target ${JSON.stringify(t.name)}`,
      t.config.cmd,
      cwd,
      file,
      lineOf(
        t.name === undefined ? ["target", "cmd"] : ["targets", t.name, "cmd"],
      ),
    );
  }
  for (const [i, sc] of config.scorers.entries()) {
    if (sc.type !== "subprocess") continue;
    checkCommand("scorer", sc.cmd, cwd, file, lineOf(["scorers", i, "cmd"]));
  }
}

/** A command that cannot run as written, as a config error at its line. */
function checkCommand(
  what: string,
  cmd: string,
  cwd: string,
  file: string,
  line: number | undefined,
): void {
  const home = homeScript(cmd);
  if (home !== undefined) {
    throw new ConfigError(
      file,
      line,
      `${what} ${JSON.stringify(cmd)} ${homeScriptText(home)}`,
    );
  }
  const script = missingScript(cmd, cwd);
  if (script !== undefined) {
    throw new ConfigError(
      file,
      line,
      `${what} ${JSON.stringify(cmd)} runs ${
        JSON.stringify(script)
      }, which does not exist (paths resolve against the config's folder, ${
        JSON.stringify(cwd)
      })${fromHere(script, cwd)}`,
    );
  }
  const program = missingProgram(cmd, cwd);
  if (program !== undefined) {
    throw new ConfigError(
      file,
      line,
      `${what} ${JSON.stringify(cmd)} runs ${
        JSON.stringify(program)
      }, which is ${program.includes("/") ? "not a file" : "not on PATH"}`,
    );
  }
}

/**
 * The config error for an environment variable a target or judge needs and
 * the environment lacks (`api_key_env`, `${TOKEN}` in a header), at the line
 * of the config that names it.
 *
 * @param message The error's message (`The environment variable X is not set`).
 * @param file The config file.
 * @returns The error to throw.
 *
 * @example
 * ```ts
 * import { missingVariableError } from "./config.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/s.yaml`, "dataset: d.jsonl\ntarget: { type: openai, model: m, api_key_env: NOPE_KEY }\n");
 * const error = await missingVariableError("The environment variable NOPE_KEY is not set", `${dir}/s.yaml`);
 * await Deno.remove(dir, { recursive: true });
 * if (error.line !== 2) throw new Error(error.message);
 * ```
 */
export async function missingVariableError(
  message: string,
  file: string,
): Promise<ConfigError> {
  const name = /environment variable (\S+) is not set/.exec(message)?.[1];
  let line: number | undefined;
  if (name !== undefined) {
    const text = await Deno.readTextFile(file).catch(() => "");
    // A name that looks like a key is shown by its start: "gsk_…".
    const word = name.endsWith("…")
      ? new RegExp(`(^|[^\\w])${name.slice(0, -1)}\\w*(?![\\w])`)
      : new RegExp(`(^|[^\\w])${name}(?![\\w])`);
    const at = text.split("\n").findIndex((l) =>
      word.test(l.replace(/(^|\s)#.*$/, ""))
    );
    if (at >= 0) line = at + 1;
  }
  return new ConfigError(file, line, message);
}

/** A query parameter that names a credential (`?key=`), as urlSecrets reads it. */
const QUERY_CREDENTIAL = new RegExp(`[?&](?:${CREDENTIAL_NAMES})=`, "i");

/**
 * Whether a config may send a secret: it names an `api_key_env`, headers
 * (whose `${NAME}`s are secrets), a URL with userinfo, or one with a
 * credential in its query (`?key=AIza…`). A cheap look at its text, so
 * that a run whose config names none loads nothing to hide them.
 *
 * @param config A checked config.
 * @returns `false` when no secret can be sent.
 *
 * @example
 * ```ts
 * import { checkConfigText, namesSecrets } from "./config.ts";
 * const config = await checkConfigText("dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n", "s.yaml");
 * if (namesSecrets(config)) throw new Error("a replay suite sends no secret");
 * ```
 */
export function namesSecrets(config: SuiteConfig): boolean {
  const text = JSON.stringify(config);
  return /"api_key_env"|"headers"|@/.test(text) || QUERY_CREDENTIAL.test(text);
}

/**
 * Whether any of a config's scorers calls a model, and so keeps its answers
 * in the cache {@linkcode BuildOptions.cache} names: a run whose scorers do
 * not need not open one.
 *
 * @param config A checked config.
 * @returns Whether a scorer is `llm_judge`, `semantic_similarity` or a RAG or
 *   quality judge.
 *
 * @example
 * ```ts
 * import { checkConfigText, scorersCallModels } from "./config.ts";
 * const config = await checkConfigText("dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n", "s.yaml");
 * if (scorersCallModels(config)) throw new Error("exact_match calls no model");
 * ```
 */
export function scorersCallModels(config: SuiteConfig): boolean {
  return config.scorers.some((sc) =>
    sc.type === "llm_judge" || sc.type === "semantic_similarity" || isJudge(sc)
  );
}

/** The line of scorer `i` in the config file, read again for a message. */
async function scorerLine(
  file: string,
  i: number,
): Promise<number | undefined> {
  return (await lineFinder(file))(["scorers", i]);
}

/** Finds lines in the config file, read again for a message. */
async function lineFinder(
  file: string,
): Promise<(path: readonly PropertyKey[]) => number | undefined> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (error) {
    // A config built elsewhere, or moved since: the message goes without.
    if (error instanceof Deno.errors.NotFound) return () => undefined;
    throw error;
  }
  return locateConfig(text, file).lineOf;
}

/**
 * Builds the target a config names.
 *
 * @param config The config.
 * @param cwd The folder commands run in.
 * @param cache Where network targets keep their responses, if anywhere.
 * @param options The run's budget; whether an API key may be missing.
 * @returns The target.
 *
 * @example A replay target returns each case's recorded `output`
 * ```ts
 * import { buildTarget, checkConfigText } from "./mod.ts";
 * const config = await checkConfigText("dataset: logs.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n", "suite.yaml");
 * const target = await buildTarget(config, ".");
 * const result = await target.call({ input: "2+2?", output: "4" }, {});
 * if (result.output !== "4") throw new Error("unexpected");
 * ```
 */
export async function buildTarget(
  config: SuiteConfig,
  cwd: string,
  cache?: TargetCache,
  options: CallOptions = {},
): Promise<Target> {
  const [only] = selectTargets(config, "the config");
  return await buildTargetConfig(only!.config, cwd, cache, {
    traceDir: traceDirOf(config, cwd),
    ...options,
  });
}

/**
 * Builds one target from its configuration (one of a config's `targets`).
 *
 * @param t The target's configuration.
 * @param cwd The folder commands run in.
 * @param cache Where network targets keep their responses, if anywhere.
 * @param options The run's budget, and whether a missing API key may pass
 *   (replay).
 * @returns The target.
 *
 * @example A subprocess target from a matrix's targets
 * ```ts
 * import { buildTargetConfig } from "./mod.ts";
 * const target = await buildTargetConfig({ type: "subprocess", cmd: "echo hi" }, ".");
 * const result = await target.call({ input: "q" }, {});
 * if (result.output !== "hi") throw new Error(result.output);
 * ```
 */
export async function buildTargetConfig(
  t: TargetConfig,
  cwd: string,
  cache?: TargetCache,
  options: CallOptions = {},
): Promise<Target> {
  switch (t.type) {
    case "replay":
      return replayTarget();
    case "subprocess": {
      const { subprocessTarget } = await import(
        "../targets/subprocess_target.ts"
      );
      return subprocessTarget(t.cmd, {
        cwd,
        capSetting: "max_output_bytes",
        ...(t.timeout !== undefined ? { timeout: t.timeout } : {}),
        ...(t.max_output_bytes !== undefined
          ? {
            maxOutputBytes: t.max_output_bytes,
            maxStderrBytes: t.max_output_bytes,
          }
          : {}),
        ...(t.stdin !== undefined ? { stdin: t.stdin } : {}),
      });
    }
    case "openai": {
      const { type: _type, ...settings } = withParams(t);
      const { openaiTarget } = await import("../targets/openai_target.ts");
      return await withCache(
        openaiTarget(settings, undefined, {
          budget: options.budget,
          optionalKey: options.optionalKey,
        }),
        cache,
      );
    }
    case "http": {
      const { type: _type, ...settings } = t;
      const { httpTarget } = await import("../targets/http_target.ts");
      return await withCache(
        httpTarget(settings, undefined, {
          budget: options.budget,
          optionalKey: options.optionalKey,
        }),
        cache,
      );
    }
    case "trace": {
      const { traceTarget } = await import("../targets/trace_target.ts");
      return traceTarget({
        dir: options.traceDir ?? cwd,
        ...(t.cost !== undefined ? { cost: t.cost } : {}),
      });
    }
  }
}

async function withCache(
  target: Parameters<typeof import("../targets/cache.ts").cachedTarget>[0],
  cache: TargetCache | undefined,
): Promise<Target> {
  if (cache === undefined) return target;
  const { cachedTarget } = await import("../targets/cache.ts");
  return cachedTarget(target, cache);
}

/** Moves the generation keys written beside `params` into it. */
function withParams<
  T extends GenerationKeys & {
    params?: Record<string, unknown> | undefined;
  },
>(config: T): WithParams<T> {
  const { temperature, max_tokens, seed, top_p, stop, params, ...rest } =
    config;
  const merged = {
    ...(temperature !== undefined ? { temperature } : {}),
    ...(max_tokens !== undefined ? { max_tokens } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(top_p !== undefined ? { top_p } : {}),
    ...(stop !== undefined ? { stop } : {}),
    ...params,
  };
  return (Object.keys(merged).length > 0
    ? { ...rest, params: merged }
    : rest) as WithParams<T>;
}

type WithParams<T> = Omit<T, keyof GenerationKeys | "params"> & {
  params?: Record<string, unknown> | undefined;
};
