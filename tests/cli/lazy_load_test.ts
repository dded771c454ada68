// The command table loads no command's declaration until that command runs;
// each command loads its heavy modules when it runs, and `score` (and the other filters) never load
// YAML, zod or the config modules. Read from `deno info --json cli.ts`.

import assert from "node:assert/strict";
import { COMMANDS } from "../../src/cli/commands.ts";
import { moduleInfo, staticImports } from "../_static_graph.ts";

const ROOT = new URL("../../", import.meta.url);

const info = await moduleInfo("cli.ts");
const bySpecifier = new Map(info.modules.map((m) => [m.specifier, m]));
const local = (path: string) => new URL(path, ROOT).href;
const staticClosure = (roots: string[]) => staticImports(info, roots).modules;

/**
 * What a command loads when it runs: the table, the command's module, then
 * its own `import()`s.
 */
function loadedBy(command: string): Set<string> {
  const file = local(`src/cli/${command}.ts`);
  const dynamic = (bySpecifier.get(file)?.dependencies ?? [])
    .filter((d) => d.isDynamic && d.code !== undefined)
    .map((d) => d.code!.specifier);
  assert.ok(dynamic.length > 0, `${command} imports nothing when it runs`);
  const lazyHelpers = [
    local("src/cli/_output.ts"),
    local("src/cli/_results.ts"),
  ]
    .flatMap((h) =>
      (bySpecifier.get(h)?.dependencies ?? [])
        .filter((d) => d.isDynamic && d.code !== undefined)
        .map((d) => d.code!.specifier)
    );
  return staticClosure([local("cli.ts"), file, ...dynamic, ...lazyHelpers]);
}

const HEAVY = [
  /^npm:\/?zod@/,
  /^npm:\/?js-yaml@/,
  /\/src\/config\//,
  /\/src\/io\/yaml\.ts$/,
  /\/src\/dataset\/dataset\.ts$/,
  /\/src\/run\/run_suite\.ts$/,
];

Deno.test("cli.ts loads no command's declaration until that command runs", () => {
  const loaded = [...staticClosure([local("cli.ts")])];
  const allowed = [
    local("cli.ts"),
    local("deno.json"),
  ];
  for (const s of loaded) {
    assert.ok(
      allowed.includes(s) || s.startsWith(local("src/cli/")) ||
        s.startsWith(local("src/base/")),
      `cli.ts loads ${s} at start-up`,
    );
  }
  // The table names each command by an import(): none is evaluated at start.
  const table = bySpecifier.get(local("src/cli/_command_table.ts"));
  // Every command the help lists, so that a new one is checked here too.
  assert.ok(COMMANDS.length > 0);
  for (const { name: command } of COMMANDS) {
    const file = local(`src/cli/${command}.ts`);
    assert.ok(!loaded.includes(file), `cli.ts loads ${file} at start-up`);
    assert.ok(
      table?.dependencies?.some((d) =>
        d.isDynamic && d.code?.specifier === file
      ),
      `${command} is not in the command table`,
    );
  }
  assert.ok(!loaded.includes(local("src/cli/commands.ts")));
});

for (const command of ["score", "aggregate", "view", "diff"]) {
  Deno.test(`the ${command} command loads no YAML, zod or config module`, () => {
    const loaded = [...loadedBy(command)];
    for (const pattern of HEAVY) {
      assert.deepEqual(loaded.filter((s) => pattern.test(s)), [], command);
    }
  });
}

Deno.test("score --config loads the config modules, through its own helper", () => {
  const helper = bySpecifier.get(local("src/cli/_suite_scorers.ts"));
  assert.ok(
    helper?.dependencies?.some((d) =>
      d.isDynamic && d.code?.specifier === local("src/config/config.ts")
    ),
  );
});

Deno.test("the run command loads the suite runner when it runs", () => {
  const loaded = loadedBy("run");
  assert.ok(loaded.has(local("src/run/run_suite.ts")));
  assert.ok(loaded.has(local("src/config/config.ts")));
});

Deno.test("only view loads the display-width table, when it runs", () => {
  const table = /^npm:\/?get-east-asian-width@/;
  const start = [...staticClosure([local("cli.ts")])];
  assert.deepEqual(start.filter((s) => table.test(s)), [], "at start-up");
  assert.ok(!start.includes(local("src/report/view.ts")));
  for (const command of ["score", "run", "aggregate"]) {
    const loaded = [...loadedBy(command)];
    assert.deepEqual(loaded.filter((s) => table.test(s)), [], command);
  }
  assert.ok([...loadedBy("view")].some((s) => table.test(s)));
});

Deno.test("a run of exact_match loads the text scorers only: each built-in family loads when a config names it", () => {
  // The suite runner and the config modules, as a one-case run evaluates them.
  const loaded = staticClosure([
    local("src/run/run_suite.ts"),
    local("src/config/config.ts"),
  ]);
  for (
    const family of [
      "text_checks",
      "json_scorers",
      "numeric",
      "similarity",
      "set_overlap",
      "run_facts",
      "trajectory",
    ]
  ) {
    const file = local(`src/scorers/${family}.ts`);
    assert.ok(!loaded.has(file), `${family} loads with the runner`);
    // ...and the built-in table can still reach it when a config names it.
    assert.ok(
      bySpecifier.get(local("src/config/_builtin_scorers.ts"))?.dependencies
        ?.some((d) => d.isDynamic && d.code?.specifier === file),
      `${family} is not in the built-in table`,
    );
  }
  assert.ok(!loaded.has(local("src/scorers/builtin.ts")));
});

Deno.test("the suite runner loads resuming, the record, subsets, progress and the cache only for a run that uses them", () => {
  const loaded = staticClosure([
    local("src/run/run_suite.ts"),
    local("src/config/config.ts"),
  ]);
  for (
    const file of [
      "src/run/resume.ts",
      "src/record/run_record.ts",
      "src/run/select.ts",
      "src/run/progress.ts",
      "src/run/unit_scores.ts",
      "src/targets/cache.ts",
      "src/net/template.ts",
      // The aggregator, not every aggregate module: agreement, calibration,
      // lines and the wire format are other commands'.
      "src/aggregate/mod.ts",
      "src/aggregate/agreement.ts",
      "src/aggregate/calibration.ts",
    ]
  ) assert.ok(!loaded.has(local(file)), `${file} loads with the runner`);
  // The run command itself: resuming and the same-file check come with --out.
  const command = bySpecifier.get(local("src/cli/run.ts"));
  const statics = (command?.dependencies ?? []).filter((d) => !d.isDynamic)
    .map((d) => d.code?.specifier);
  for (const file of ["src/run/resume.ts", "src/io/same_file.ts"]) {
    assert.ok(!statics.includes(local(file)), file);
  }
});

Deno.test("the openai target and its cache load the HTTP exchange only at the first call: a rerun whose every request hits makes none", () => {
  const loaded = staticClosure([
    local("src/targets/openai_target.ts"),
    local("src/targets/cache.ts"),
  ]);
  for (
    const file of [
      "src/net/_http.ts",
      "src/net/_slots.ts",
      "src/net/tool_calls.ts",
      "src/process/_deadlines.ts",
    ]
  ) assert.ok(!loaded.has(local(file)), `${file} loads with the target`);
  const client = bySpecifier.get(local("src/net/chat_client.ts"));
  for (const file of ["src/net/_http.ts", "src/net/tool_calls.ts"]) {
    assert.ok(
      client?.dependencies?.some((d) =>
        d.isDynamic && d.code?.specifier === local(file)
      ),
      `chat_client.ts does not import ${file} when it calls`,
    );
  }
});

Deno.test("the gate line, which run and merge load once a gate fails, loads no dataset reader, YAML or config module", () => {
  const loaded = [...staticClosure([local("src/report/gate_lines.ts")])];
  for (const pattern of HEAVY) {
    assert.deepEqual(loaded.filter((s) => pattern.test(s)), [], "gate line");
  }
  assert.deepEqual(
    loaded.filter((s) => /\/src\/(fingerprint|process)\//.test(s)),
    [],
  );
});
