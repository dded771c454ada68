/** What a module loads before it runs, read from `deno info --json`. */

import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);

/** A module's static graph: every module it loads, and who imports whom. */
export interface StaticGraph {
  /** The modules loaded (resolved specifiers), the entry among them. */
  modules: Set<string>;
  /** The modules among them that import a module whose specifier starts with `prefix`. */
  importersOf(prefix: string): Set<string>;
}

/** `deno info --json` of a module: every module it may load, and their imports. */
export interface ModuleInfo {
  /** The entry, resolved. */
  roots: string[];
  /** Specifiers and what they resolve to. */
  redirects: Record<string, string>;
  /** Each module and its imports. */
  modules: Array<{
    specifier: string;
    dependencies?: Array<{
      isDynamic?: boolean;
      code?: { specifier: string };
    }>;
  }>;
}

/**
 * Runs `deno info --json` on a module of the repository.
 *
 * @param entry The module, relative to the repository's root.
 * @returns What it says.
 */
export async function moduleInfo(entry: string): Promise<ModuleInfo> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd: ROOT.pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  return JSON.parse(new TextDecoder().decode(stdout));
}

/**
 * What loading `roots` loads before anything runs: static imports only, not
 * types or `import()`.
 *
 * @param info The graph, from {@linkcode moduleInfo}.
 * @param roots The modules loaded first (specifiers of `info`).
 * @returns The modules loaded, and each static import as `[from, to]`.
 */
export function staticImports(
  info: ModuleInfo,
  roots: string[],
): { modules: Set<string>; edges: Array<[string, string]> } {
  const resolve = (s: string) => info.redirects[s] ?? s;
  const bySpecifier = new Map(info.modules.map((m) => [m.specifier, m]));
  const modules = new Set<string>();
  const edges: Array<[string, string]> = [];
  const todo = roots.map(resolve);
  while (todo.length > 0) {
    const specifier = todo.pop()!;
    if (modules.has(specifier)) continue;
    modules.add(specifier);
    for (const dep of bySpecifier.get(specifier)?.dependencies ?? []) {
      if (dep.isDynamic || dep.code === undefined) continue;
      const target = resolve(dep.code.specifier);
      edges.push([specifier, target]);
      todo.push(target);
    }
  }
  return { modules, edges };
}

/**
 * The modules a module loads before it runs: static imports, not types or
 * `import()`.
 *
 * @param entry The module, relative to the repository's root.
 * @returns Its graph.
 */
export async function staticGraph(entry: string): Promise<StaticGraph> {
  const info = await moduleInfo(entry);
  const { modules, edges } = staticImports(info, info.roots);
  return {
    modules,
    importersOf: (prefix) =>
      new Set(edges.filter(([, to]) => to.startsWith(prefix)).map(([f]) => f)),
  };
}

/**
 * The URL of a module under `src/`, as the graph names it.
 *
 * @param name The path under `src/`.
 * @returns Its `file:` URL.
 */
export const src = (name: string): string => new URL(`src/${name}`, ROOT).href;
