/**
 * Merging target caches (`evalpipe cache merge DIR... --into DIR`): each
 * shard of a run pays for its own answers into its own cache folder; merged,
 * one folder holds every answer, so that a replayed run of the whole suite
 * calls nothing.
 *
 * @module
 */

import { InputError, osErrorText } from "../base/errors.ts";

/**
 * What {@linkcode mergeCaches} did.
 *
 * @example
 * ```ts
 * import type { CacheMergeResult } from "./mod.ts";
 * const result: CacheMergeResult = { entries: 3, sources: 2, unreadable: 0, pack: "pack-x.ndjson" };
 * if (result.entries !== 3) throw new Error("unexpected");
 * ```
 */
export interface CacheMergeResult {
  /** Distinct answers written into the target folder. */
  entries: number;
  /** Source folders read. */
  sources: number;
  /** Lines or files that were torn or corrupt, left out. */
  unreadable: number;
  /** The pack file written (`undefined` when there was nothing to write). */
  pack: string | undefined;
}

/** A valid entry's line, or `undefined`: as the cache itself reads entries. */
function entryLine(text: string): [string, string] | undefined {
  let entry: { key?: unknown; result?: { output?: unknown } };
  try {
    entry = JSON.parse(text);
  } catch (error) {
    // A torn line (a crash mid-write) is a miss in the cache too.
    if (!(error instanceof SyntaxError)) throw error;
    return undefined;
  }
  if (
    typeof entry?.key !== "string" || !/^[0-9a-f]{64}$/.test(entry.key) ||
    typeof entry.result?.output !== "string"
  ) return undefined;
  // Written anew, so that the key stands where the cache looks for it.
  return [entry.key, JSON.stringify({ key: entry.key, result: entry.result })];
}

/** Each entry of one cache folder, later packs winning, as the cache reads it. */
async function readFolder(
  dir: string,
  into: Map<string, string>,
): Promise<number> {
  let names: string[];
  try {
    names = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
  } catch (error) {
    if (!(error instanceof Error)) throw error;
    throw new InputError(
      `Cannot read cache ${JSON.stringify(dir)}: ${osErrorText(error)}`,
    );
  }
  let unreadable = 0;
  // The file-per-key layout of older caches: `<2 hex>/<key>.json`.
  for (const sub of names.filter((n) => /^[0-9a-f]{2}$/.test(n)).sort()) {
    for await (const e of Deno.readDir(`${dir}/${sub}`)) {
      if (!e.isFile || !e.name.endsWith(".json")) continue;
      const line = entryLine(
        await Deno.readTextFile(`${dir}/${sub}/${e.name}`),
      );
      if (line === undefined) unreadable++;
      else into.set(line[0], line[1]);
    }
  }
  const packs = names.filter((n) =>
    n.startsWith("pack-") && n.endsWith(".ndjson")
  )
    .sort();
  for (const name of packs) {
    const text = await Deno.readTextFile(`${dir}/${name}`);
    for (const raw of text.split("\n")) {
      if (raw === "") continue;
      const line = entryLine(raw);
      if (line === undefined) unreadable++;
      else into.set(line[0], line[1]);
    }
  }
  return unreadable;
}

/**
 * Merges cache folders into one: every answer of every folder (a key that
 * several hold keeps the one of the folder named last) goes into one new
 * pack in `into`, written to a temporary file and renamed into place, so
 * that a reader never sees half of it. Torn or corrupt entries are left out.
 *
 * @param sources The cache folders, e.g. each shard's `--cache-dir`.
 * @param into The folder to merge into (created if need be; it may be one of the sources).
 * @returns What was merged.
 * @throws {InputError} When a source cannot be read.
 *
 * @example Two shards' caches into one
 * ```ts
 * import { mergeCaches, TargetCache } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * const key = (c: string) => c.repeat(64);
 * await new TargetCache(`${dir}/a`).set(key("a"), { output: "A" });
 * await new TargetCache(`${dir}/b`).set(key("b"), { output: "B" });
 * const result = await mergeCaches([`${dir}/a`, `${dir}/b`], `${dir}/all`);
 * const all = new TargetCache(`${dir}/all`);
 * const answers = [all.getSync(key("a"))?.output, all.getSync(key("b"))?.output];
 * await Deno.remove(dir, { recursive: true });
 * if (result.entries !== 2 || answers.join() !== "A,B") throw new Error(answers.join());
 * ```
 */
export async function mergeCaches(
  sources: readonly string[],
  into: string,
): Promise<CacheMergeResult> {
  const entries = new Map<string, string>();
  let unreadable = 0;
  for (const dir of sources) unreadable += await readFolder(dir, entries);
  if (entries.size === 0) {
    return { entries: 0, sources: sources.length, unreadable, pack: undefined };
  }
  // Answers may hold what the user sent: private to the user, as the cache is.
  await Deno.mkdir(into, { recursive: true, mode: 0o700 });
  const stamp = new Date().toISOString().replace(/[-:.]/g, "");
  const random = [...crypto.getRandomValues(new Uint8Array(4))]
    .map((b) => b.toString(16).padStart(2, "0")).join("");
  // Sorts after the packs already there: its answers win, as a newer run's.
  const pack = `pack-${stamp}-merged-${random}.ndjson`;
  const temp = `${into}/.${pack}.tmp`;
  let text = "";
  for (const line of entries.values()) text += line + "\n";
  await Deno.writeTextFile(temp, text, { mode: 0o600, createNew: true });
  await Deno.rename(temp, `${into}/${pack}`);
  return { entries: entries.size, sources: sources.length, unreadable, pack };
}
