// evalpipe's own program in other forms, for the start-up form rows of
// bench:limits (issue 17, goal 4): the same code, the same `score --scorer`,
// given to Deno in another shape, to measure how much of evalpipe's start-up
// is the shape (TypeScript, one module per file) rather than the code.
//
// - `js`: cli.ts and every module of src/, each transpiled on its own to
//   JavaScript, without source maps; the same modules, files and imports.
//   Deno then loads JavaScript as it is: no transpile cache to consult, no
//   inline source map (its emitted TypeScript carries one).
// - `merged`: the modules `score --scorer` loads (bench/_score_path.ts and
//   what they import) bundled into one module, written as a TypeScript file,
//   which Deno transpiles and caches as it does evalpipe's own: what one
//   module in place of many would give. Every other module (the other
//   commands, --persistent, --config) stays the clone's own file.
// - `mergedJs`: the same bundle as JavaScript.
//
// Built with esbuild (npm, loaded only here): a bundler and transpiler made
// for the job, where a hand-written one would be a second thing to measure.
// Each form is a folder with cli.js or cli.ts at its top and copies of
// deno.json and deno.lock beside it (its npm imports resolve as the clone's).

import { SCORE_PATH } from "./_score_path.ts";

/** Where each form's program is. */
export interface Forms {
  /** cli.js of the per-file JavaScript form. */
  js: string;
  /** cli.ts of the merged TypeScript form. */
  merged: string;
  /** cli.js of the merged JavaScript form. */
  mergedJs: string;
}

/** Relative `.ts` specifiers in emitted code, to point at the `.js` files. */
const TS_SPECIFIER = /((?:from|import)\s*\(?\s*)"(\.{1,2}\/[^"]*)\.ts"/g;

async function copyConfig(root: string, to: string): Promise<void> {
  for (const name of ["deno.json", "deno.lock"]) {
    await Deno.copyFile(`${root}${name}`, `${to}/${name}`);
  }
}

async function tsFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) found.push(...await tsFiles(path));
    else if (entry.name.endsWith(".ts")) found.push(path);
  }
  return found;
}

/**
 * Builds the three forms of the program at `root` (the clone, ending in
 * `/`) under `out`, replacing what was there.
 */
export async function buildForms(root: string, out: string): Promise<Forms> {
  const esbuild = await import("esbuild");
  try {
    await Deno.remove(out, { recursive: true }).catch((error) => {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    });
    const js = `${out}/js`;
    const sources = [`${root}cli.ts`, ...await tsFiles(`${root}src`)];
    for (const source of sources) {
      const { code } = await esbuild.transform(
        await Deno.readTextFile(source),
        { loader: "ts", format: "esm", target: "esnext" },
      );
      const target = `${js}/${source.slice(root.length, -3)}.js`;
      await Deno.mkdir(target.slice(0, target.lastIndexOf("/")), {
        recursive: true,
      });
      await Deno.writeTextFile(target, code.replace(TS_SPECIFIER, '$1"$2.js"'));
    }
    await copyConfig(root, js);

    // The entry imports the score path statically and runs as cli.ts does;
    // an `import()` of any other module (another command, --persistent,
    // --config) stays an import of the clone's own file, outside the bundle.
    const imports: Record<string, string> =
      JSON.parse(await Deno.readTextFile(`${root}deno.json`)).imports;
    const external = [
      "npm:*",
      "node:*",
      ...Object.keys(imports).map((k) => k.endsWith("/") ? `${k}*` : k),
    ];
    const onPath = new Set(SCORE_PATH.map((p) => `${root}${p}`));
    const elsewhere = {
      name: "score-path-only",
      setup(build: import("esbuild").PluginBuild) {
        build.onResolve({ filter: /^\./ }, (args) => {
          if (args.kind !== "dynamic-import") return undefined;
          const url = new URL(args.path, `file://${args.resolveDir}/`);
          return onPath.has(url.pathname)
            ? undefined
            : { path: url.href, external: true };
        });
      },
    };
    const entry = `${out}/entry.ts`;
    await Deno.mkdir(out, { recursive: true });
    await Deno.writeTextFile(
      entry,
      SCORE_PATH.map((p) => `import "${root}${p}";\n`).join("") +
        `import { main } from "${root}src/cli/main.ts";\n` +
        "if (import.meta.main) Deno.exit(await main(Deno.args));\n",
    );
    for (const [name, file] of [["merged", "cli.ts"], ["mergedJs", "cli.js"]]) {
      await esbuild.build({
        entryPoints: [entry],
        bundle: true,
        format: "esm",
        platform: "neutral",
        target: "esnext",
        outfile: `${out}/${name}/${file}`,
        external,
        plugins: [elsewhere],
        logLevel: "error",
      });
      await copyConfig(root, `${out}/${name}`);
    }
    await Deno.remove(entry);
    return {
      js: `${js}/cli.js`,
      merged: `${out}/merged/cli.ts`,
      mergedJs: `${out}/mergedJs/cli.js`,
    };
  } finally {
    await esbuild.stop();
  }
}
