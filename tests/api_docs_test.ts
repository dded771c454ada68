/**
 * The public API is documented: every declaration that `mod.ts` or a subpath
 * entry point of `deno.json` "exports" makes public has a JSDoc description
 * and at least one `@example` with a code block, which `deno test --doc` runs.
 * Read from `deno doc --json`, following re-exports to the declaration.
 */

import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);

/**
 * Exports excused from the `@example` rule while their files are rewritten
 * elsewhere, as `"file:symbol"`. The test fails when an entry is no longer
 * exported or already has an example, so this list can only shrink.
 */
const PENDING = new Set<string>([
  // Empty: every public export has an example.
]);

interface Location {
  filename: string;
  line: number;
  col: number;
}

interface JsDoc {
  doc?: string;
  tags?: { kind: string; doc?: string }[];
}

interface Declaration {
  location: Location;
  kind: string;
  jsDoc?: JsDoc;
  def?: { target?: Location };
}

interface DocSymbol {
  name: string;
  declarations: Declaration[];
}

interface DocJson {
  nodes: Record<string, { symbols?: DocSymbol[] }>;
}

/** A public symbol, keyed `"file:symbol"` by the file that declares it. */
interface Exported {
  key: string;
  declaration: Declaration;
}

/** `mod.ts` and each `src/<layer>/mod.ts` that deno.json "exports" names. */
async function entryPoints(): Promise<string[]> {
  const config = JSON.parse(
    await Deno.readTextFile(new URL("deno.json", ROOT)),
  ) as { exports: Record<string, string> };
  const paths = Object.values(config.exports)
    .filter((p) => p === "./mod.ts" || /^\.\/src\/[^/]+\/mod\.ts$/.test(p));
  assert.ok(paths.includes("./mod.ts"), 'deno.json exports "." as mod.ts');
  return paths.map((p) => new URL(p, ROOT).href);
}

async function denoDoc(files: string[]): Promise<DocJson> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", ...files],
    cwd: ROOT.pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout)) as DocJson;
}

function at(location: Location): string {
  return `${location.filename}:${location.line}:${location.col}`;
}

function relative(url: string): string {
  return url.startsWith(ROOT.href) ? url.slice(ROOT.href.length) : url;
}

/**
 * Every symbol the entry points export, with its first declaration that is
 * not a re-export. A re-export whose declaration `deno doc` did not show is
 * resolved by documenting the file it points to.
 */
async function publicApi(): Promise<Exported[]> {
  const entries = await entryPoints();
  const declarations = new Map<string, Declaration>();
  const exported = new Map<string, { name: string; decl: Declaration }>();
  let files = entries;
  const documented = new Set<string>();
  for (let round = 0; files.length > 0; round++) {
    assert.ok(round < 5, "re-exports resolve within five rounds");
    for (const file of files) documented.add(file);
    const doc = await denoDoc(files);
    for (const [module, node] of Object.entries(doc.nodes)) {
      for (const symbol of node.symbols ?? []) {
        for (const decl of symbol.declarations) {
          if (decl.kind !== "reference") {
            declarations.set(`${at(decl.location)}:${symbol.name}`, decl);
          }
        }
        if (round === 0 && entries.includes(module)) {
          exported.set(`${module}#${symbol.name}`, {
            name: symbol.name,
            decl: symbol.declarations[0]!,
          });
        }
      }
    }
    const missing = new Set<string>();
    for (const { name, decl } of exported.values()) {
      if (!declarations.has(resolveKey(name, decl))) {
        const target = decl.def?.target?.filename;
        if (target !== undefined && !documented.has(target)) {
          missing.add(target);
        }
      }
    }
    files = [...missing];
  }
  const api = new Map<string, Exported>();
  for (const { name, decl } of exported.values()) {
    const found = declarations.get(resolveKey(name, decl));
    assert.ok(
      found,
      `Cannot find the declaration of "${name}" (${at(decl.location)})`,
    );
    const key = `${relative(found.location.filename)}:${name}`;
    api.set(key, { key, declaration: found });
  }
  return [...api.values()].sort((a, b) => a.key.localeCompare(b.key));
}

/** Where a symbol is declared: itself, or the target of its re-export. */
function resolveKey(name: string, decl: Declaration): string {
  const location = decl.kind === "reference" ? decl.def?.target : decl.location;
  assert.ok(location, `"${name}" is a re-export without a target`);
  return `${at(location)}:${name}`;
}

function hasExample(decl: Declaration): boolean {
  return (decl.jsDoc?.tags ?? []).some((tag) =>
    tag.kind === "example" && /```/.test(tag.doc ?? "")
  );
}

const api = await publicApi();

Deno.test("public API: at least the stages and the Score model are exported", () => {
  const keys = new Set(api.map((e) => e.key));
  for (
    const key of [
      "src/score/types.ts:Score",
      "src/targets/target.ts:runTarget",
      "src/scorers/score_units.ts:scoreUnits",
      "src/aggregate/stage.ts:aggregate",
    ]
  ) assert.ok(keys.has(key), `${key} is public`);
});

Deno.test("public API: every export has a JSDoc description", () => {
  const undocumented = api
    .filter((e) => (e.declaration.jsDoc?.doc ?? "").trim() === "")
    .map((e) => e.key);
  assert.deepEqual(undocumented, []);
});

Deno.test("public API: every export has an @example with a code block", () => {
  const without = api
    .filter((e) => !hasExample(e.declaration) && !PENDING.has(e.key))
    .map((e) => e.key);
  assert.deepEqual(without, []);
});

Deno.test("public API: PENDING holds only exports still without an example", () => {
  const byKey = new Map(api.map((e) => [e.key, e.declaration]));
  const stale = [...PENDING].filter((key) => {
    const decl = byKey.get(key);
    return decl === undefined || hasExample(decl);
  });
  assert.deepEqual(stale, [], "remove these entries from PENDING");
});
