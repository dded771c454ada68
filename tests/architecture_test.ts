/**
 * The shape of the tree: no module imports itself back, type imports and
 * dynamic imports included, and the layers (the folders of `src/`) form a
 * graph without cycles, read from `deno info --json` over every module.
 */

import assert from "node:assert/strict";
import { staticGraph } from "./_static_graph.ts";

const ROOT = new URL("../", import.meta.url);
const SRC = new URL("src/", ROOT).href;

interface InfoModule {
  specifier: string;
  dependencies?: {
    code?: { specifier: string };
    type?: { specifier: string };
  }[];
}

async function sourceFiles(dir: URL): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
    if (entry.isDirectory) found.push(...await sourceFiles(url));
    else if (entry.name.endsWith(".ts")) found.push(url.href);
  }
  return found;
}

/** Every local module's local dependencies, static, dynamic and type-only. */
async function moduleGraph(): Promise<Map<string, Set<string>>> {
  const roots = [
    new URL("mod.ts", ROOT).href,
    new URL("cli.ts", ROOT).href,
    ...await sourceFiles(new URL(SRC)),
  ];
  const dir = await Deno.makeTempDir();
  try {
    const entry = `${dir}/all.ts`;
    await Deno.writeTextFile(
      entry,
      roots.map((r) => `import ${JSON.stringify(r)};\n`).join(""),
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "info",
        "--json",
        "--config",
        new URL("deno.json", ROOT).pathname,
        entry,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
      modules: InfoModule[];
    };
    const graph = new Map<string, Set<string>>();
    for (const m of info.modules) {
      if (!m.specifier.startsWith(ROOT.href)) continue;
      const deps = new Set<string>();
      for (const d of m.dependencies ?? []) {
        for (const s of [d.code?.specifier, d.type?.specifier]) {
          if (s?.startsWith(ROOT.href)) deps.add(s);
        }
      }
      graph.set(m.specifier, deps);
    }
    return graph;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The strongly connected components of more than one node (or a self-loop). */
function cycles(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || graph.get(v)?.has(v)) found.push(component);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

const relative = (s: string) => s.slice(ROOT.href.length);
const layerOf = (s: string) =>
  s.startsWith(SRC) ? s.slice(SRC.length).split("/")[0]! : undefined;

const graph = await moduleGraph();

Deno.test("no module imports itself back, type imports included", () => {
  assert.ok(graph.size > 40, `only ${graph.size} modules seen`);
  assert.deepEqual(cycles(graph).map((c) => c.map(relative).sort()), []);
});

Deno.test("the layers of src/ form a graph without cycles", () => {
  const layers = new Map<string, Set<string>>();
  for (const [from, deps] of graph) {
    const a = layerOf(from);
    if (a === undefined) continue;
    const set = layers.get(a) ?? new Set<string>();
    layers.set(a, set);
    for (const to of deps) {
      const b = layerOf(to);
      if (b !== undefined && b !== a) set.add(b);
    }
  }
  assert.deepEqual(cycles(layers), []);
});

Deno.test("evalglass/ sits above record/ and below cli/: only cli/ uses it, it uses no command", () => {
  const below = new Set(["record", "score", "aggregate", "io", "base"]);
  let edges = 0;
  for (const [from, deps] of graph) {
    const a = layerOf(from);
    for (const to of deps) {
      const b = layerOf(to);
      if (a === undefined || b === undefined || a === b) continue;
      if (b === "evalglass") {
        edges++;
        assert.equal(a, "cli", `${relative(from)} imports ${relative(to)}`);
      }
      if (a === "evalglass") {
        assert.ok(below.has(b), `${relative(from)} imports ${relative(to)}`);
      }
    }
  }
  assert.ok(edges > 0, "cli/ does not use evalglass/");
});

Deno.test("src/ holds folders only, each with a mod.ts", async () => {
  for await (const entry of Deno.readDir(new URL(SRC))) {
    assert.ok(entry.isDirectory, `src/${entry.name} is not a layer folder`);
    const mod = await Deno.stat(new URL(`${entry.name}/mod.ts`, SRC)).catch(
      (error) => {
        if (error instanceof Deno.errors.NotFound) return undefined;
        throw error;
      },
    );
    assert.ok(mod?.isFile, `src/${entry.name}/ has no mod.ts`);
  }
});

// The Score model, aggregation, statistics and diffs are pure: no file, process
// or network access, so that they run anywhere a script runs them. They may
// name a type from elsewhere (`import type` brings no code along).
const PURE = ["score", "aggregate", "diff"];
/**
 * Pure helpers the core may use: field readers, inert JSON, the NFC key of
 * ids, `expected`'s text as the dataset wrote it, JSON read with its numbers'
 * text kept.
 */
const PURE_HELPERS = [
  "src/io/fields.ts",
  "src/io/inert_json.ts",
  "src/base/nfc.ts",
  "src/io/_expected_text.ts",
  "src/io/_number_text.ts",
];

/** The specifiers a module imports code from (not `import type`). */
function codeImports(code: string): string[] {
  const found: string[] = [];
  for (
    const m of code.matchAll(
      /^(?:import|export)\s+(type\s+)?[^"';]*?from\s+"([^"]+)"/gm,
    )
  ) {
    if (m[1] === undefined) found.push(m[2]!);
  }
  for (const m of code.matchAll(/^import\s+"([^"]+)"/gm)) found.push(m[1]!);
  for (const m of code.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g)) {
    found.push(m[1]!);
  }
  return found;
}

Deno.test("score/, aggregate/ and diff/ do no I/O and import only pure code", async () => {
  let checked = 0;
  let helpers = 0;
  for (const from of graph.keys()) {
    const layer = layerOf(from);
    // A helper they use does no I/O either: moved out of diff/, its code
    // would otherwise go unchecked.
    const helper = PURE_HELPERS.includes(relative(from));
    if (!helper && (layer === undefined || !PURE.includes(layer))) continue;
    if (helper) helpers++;
    else checked++;
    const code = (await Deno.readTextFile(new URL(from)))
      .replace(/\/\*[\s\S]*?\*\//g, "")
      .replace(/\/\/.*$/gm, "");
    for (const spec of helper ? [] : codeImports(code)) {
      const to = new URL(spec, from).href;
      const dep = layerOf(to);
      assert.ok(
        dep !== undefined &&
          (PURE.includes(dep) || PURE_HELPERS.includes(relative(to))),
        `${relative(from)} imports code from ${spec}`,
      );
    }
    assert.doesNotMatch(code, /\bDeno\.|\bfetch\(/, relative(from));
  }
  assert.ok(checked >= 10, `only ${checked} pure modules seen`);
  assert.equal(
    helpers,
    PURE_HELPERS.length,
    "PURE_HELPERS names a file src/ does not hold",
  );
});

Deno.test("deno publish --dry-run is clean: no slow types, no warnings", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["publish", "--dry-run", "--allow-dirty"],
    cwd: ROOT.pathname,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const text = new TextDecoder().decode(out.stdout) +
    new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, text);
  assert.doesNotMatch(text, /warning/i);
  assert.match(text, /Dry run complete/);
  // The package is the library and its docs, not the tests and benches.
  assert.match(text, /src\/score\/mod\.ts/);
  assert.match(text, /LICENSE/);
  // Paths from the root: the checkout's own path may hold "bench/" (a
  // worktree named perfbench).
  assert.doesNotMatch(text.replaceAll(ROOT.href, ""), /^\s*(tests|bench)\//m);
});

Deno.test("importing mod.ts loads no zod: a script pays only for what it runs", async () => {
  const { modules } = await staticGraph("mod.ts");
  assert.ok(modules.size > 40, `only ${modules.size} modules`);
  for (const m of modules) assert.doesNotMatch(m, /^npm:\/?zod@/, m);
});
