// The modules `score --scorer` imports, in the order it imports them: the
// command table (src/cli/main.ts), the command (src/cli/score.ts), then
// what src/cli/score.ts's `import()`s load for `--scorer` without
// `--persistent`. Paths from the clone's root. bench/_startup_limits.ts
// loads them for the part row; bench/_module_forms.ts bundles them.
// Keep it beside src/cli/score.ts: tests/bench/limits_bench_test.ts checks
// that it names every module that command loads.

/** The modules, from the clone's root. */
export const SCORE_PATH: readonly string[] = [
  "src/cli/main.ts",
  "src/cli/score.ts",
  "src/scorers/subprocess_scorer.ts",
  "src/scorers/scorer_names.ts",
  "src/process/command.ts",
  "src/dataset/unit.ts",
  "src/scorers/score_units.ts",
  "src/io/ndjson.ts",
  "src/io/stdout.ts",
  "src/score/line.ts",
  "src/run/interrupt.ts",
  "src/cli/_written_units.ts",
  "src/scorers/_unit_path.ts",
  "src/io/named_reads.ts",
];
