/**
 * `evalpipe validate CONFIG.yaml`: checks a suite without calling anything
 * and says what a run would do.
 *
 * @module
 */

import { defineCommand } from "./command.ts";
import { CACHE_FLAG, cacheModeOf } from "./_cache_flag.ts";
import { say } from "./_output.ts";

/** The `validate` command. */
export const validate = defineCommand({
  name: "validate",
  summary: "Check a suite without calling anything; say what a run would do",
  usage: "CONFIG.yaml [options]",
  description:
    `Checks the config, reads every dataset record, looks for every command's
program and script, and asks the cache which requests it holds, without
running, sending or writing anything. Prints what a run would do (cases,
epochs, target, scorers, and with a cache how many requests it lacks) on
stdout. Exits 0 when a run could start, 2 when the config, a command or a
dataset record is wrong (each malformed record is named on stderr), or when
a target's template names a field some cases lack (those cases would be
blocked), or a judge's rubric or system prompt does (those Scores would be
errors).`,
  positionals: {
    names: ["CONFIG.yaml"],
    error: "validate takes one config file",
  },
  flags: {
    ...CACHE_FLAG,
    "cache-dir": {
      type: "string",
      value: "DIR",
      help: "The cache's folder",
      defaultText: ".evalpipe/cache in the config's folder",
    },
    epochs: {
      type: "integer",
      max: 1000,
      help: "Count each example N times",
      defaultText: "the config's, else 1",
    },
    "env-file": {
      type: "string",
      repeatable: true,
      value: "FILE",
      help:
        "Read KEY=VALUE lines into the environment first, as run does, so API keys are found",
    },
    json: {
      type: "boolean",
      help: "Print the plan as one JSON object instead of text",
    },
    target: {
      type: "string",
      value: "NAME",
      help:
        "Check the run of one of the config's targets, as run --target does",
    },
    matrix: {
      type: "string",
      value: "A,B",
      help:
        "Check the run of several of the config's targets, as run --matrix does",
      defaultText: "the config's matrix:",
    },
  },
  async run(flags, [configPath]) {
    const cacheMode = cacheModeOf(flags.cache);
    if (flags["env-file"].length > 0) {
      const { loadEnvFile } = await import("../config/env_file.ts");
      for (const file of flags["env-file"]) await loadEnvFile(file);
    }
    const [{ formatPlan, planSuite }, { stdoutWriter }, { invalidCaseText }] =
      await Promise.all([
        import("../run/plan_suite.ts"),
        import("../io/stdout.ts"),
        import("../base/place.ts"),
      ]);
    const plan = await planSuite(configPath, {
      ...(cacheMode !== undefined ? { cacheMode } : {}),
      ...(flags["cache-dir"] !== undefined
        ? { cacheDir: flags["cache-dir"] }
        : {}),
      ...(flags.epochs !== undefined ? { epochs: flags.epochs } : {}),
      ...(flags.target !== undefined ? { target: flags.target } : {}),
      ...(flags.matrix !== undefined
        ? { matrix: flags.matrix.split(",").map((n) => n.trim()) }
        : {}),
    });
    for (const bad of plan.invalid) {
      say(`evalpipe: Invalid case in ${invalidCaseText(bad)}`);
    }
    for (const u of plan.unsendable) {
      say(
        `evalpipe: ${
          u.target !== undefined
            ? `Target ${JSON.stringify(u.target)}`
            : "The target"
        } cannot be sent ${u.cases === 1 ? "a case" : `${u.cases} cases`} (${
          u.cases === 1 ? "" : "the first: "
        }${JSON.stringify(u.dataset)} ${u.where} ${u.line}): ${u.message}`,
      );
    }
    for (const u of plan.unjudgeable) {
      // Where to mend it: the suite's key, or each case.
      const key = `"scorers[${
        plan.scorers.findIndex((s) => s.name === u.scorer)
      }].${u.field}"`;
      say(
        `evalpipe: Judge ${JSON.stringify(u.scorer)} (${
          JSON.stringify(plan.config)
        }${
          u.config_line !== undefined ? ` line ${u.config_line}` : ""
        }: ${key}) cannot be sent ${
          u.cases === 1 ? "a case" : `${u.cases} cases`
        } (${u.cases === 1 ? "" : "the first: "}${
          JSON.stringify(u.dataset)
        } ${u.where} ${u.line}): ${u.message}`,
      );
    }
    const text = flags.json ? JSON.stringify(plan) + "\n" : formatPlan(plan);
    const out = stdoutWriter();
    await out.write(new TextEncoder().encode(text));
    return plan.invalid.length > 0 || plan.unsendable.length > 0 ||
        plan.unjudgeable.length > 0
      ? 2
      : 0;
  },
});
