/**
 * A disk cache of target outputs, so a suite re-run with changed scorers does
 * not pay for the model calls again.
 *
 * @module
 */

import { isOsError } from "../base/errors.ts";
import { Sha256 } from "../fingerprint/_sha256.ts";
import type { Case } from "../dataset/case.ts";
import type { Target, TargetContext, TargetResult } from "./target.ts";
import type { CacheableTarget } from "./openai_target.ts";

/**
 * How a cache is used. `auto` reads what is stored and stores what is
 * paid for; `replay` only reads: a miss fails the call with a
 * {@linkcode CacheMissError} and nothing goes to the network; `live` calls
 * again and stores the new answer in place of the old; `off` neither reads
 * nor writes.
 *
 * @example
 * ```ts
 * import { CACHE_MODES, type CacheMode } from "./mod.ts";
 * const mode: CacheMode = "replay";
 * if (!CACHE_MODES.includes(mode)) throw new Error();
 * ```
 */
export type CacheMode = "auto" | "replay" | "live" | "off";

/**
 * Every {@linkcode CacheMode}, the default first.
 *
 * @example
 * ```ts
 * import { CACHE_MODES } from "./mod.ts";
 * if (CACHE_MODES.join() !== "auto,replay,live,off") throw new Error();
 * ```
 */
export const CACHE_MODES: readonly CacheMode[] = Object.freeze([
  "auto",
  "replay",
  "live",
  "off",
]);

/**
 * Options of {@linkcode TargetCache}.
 *
 * @example A cache that only replays
 * ```ts
 * import { TargetCache, type TargetCacheOptions } from "./mod.ts";
 * const options: TargetCacheOptions = { mode: "replay" };
 * if (new TargetCache("/nonexistent", options).mode !== "replay") throw new Error();
 * ```
 */
export interface TargetCacheOptions {
  /**
   * How the cache is used.
   * @default {"auto"}
   */
  mode?: CacheMode | undefined;
  /**
   * The most bytes of pack files kept in memory once read, so that a hit
   * reads no file; packs past it are read from disk on each hit.
   * @default {67108864 (64 MiB, some 150,000 answers of a chat model)}
   */
  memoryBytes?: number | undefined;
}

/**
 * What a lookup throws when the cache replays only and has no answer: the
 * call fails without going to the network. Its `code` is the diagnostic
 * code of what it fails.
 *
 * @example A replaying cache that lacks the answer
 * ```ts
 * import { CacheMissError, TargetCache } from "./mod.ts";
 * const cache = new TargetCache(await Deno.makeTempDir(), { mode: "replay" });
 * try {
 *   cache.getSync("0".repeat(64));
 *   throw new Error("unexpected");
 * } catch (error) {
 *   if (!(error instanceof CacheMissError) || error.code !== "cache.miss") throw error;
 * }
 * await Deno.remove(cache.dir, { recursive: true });
 * ```
 */
export class CacheMissError extends Error {
  /** The diagnostic code: `cache.miss`. */
  readonly code = "cache.miss";

  /**
   * Creates the error.
   *
   * @param key The key that missed.
   * @param unusable Whether an answer is stored, but not one that can be
   *   used (a judge's reply that gave no verdict), or what is wrong with it
   *   (the message then says to ask again with `--cache auto`).
   */
  constructor(key: string, unusable: boolean | string = false) {
    const at = `(key ${key.slice(0, 16)})`;
    const replay = 'the cache mode "replay" makes no call';
    // The key beside the request it names, before why the answer is unused.
    super(
      typeof unusable === "string"
        ? `The cached answer for this request ${at} ${unusable}, and ${replay}: run with --cache auto to ask again`
        : `${
          unusable
            ? "The cached answer for this request holds no verdict"
            : "No cached answer for this request"
        } ${at}, and ${replay}`,
    );
    this.name = "CacheMissError";
  }
}

/**
 * Where an entry's line lies in a pack file (bytes from `start` to `end`),
 * or, in a pack held in memory, in its text (characters).
 */
interface Location {
  path: string;
  start: number;
  end: number;
  /** The whole pack as it was read, for a pack held in memory. */
  text?: string;
}

/** The default of {@linkcode TargetCacheOptions.memoryBytes}: 64 MiB. */
const MEMORY_BYTES = 64 * 1024 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const NEWLINE = 10;
/** Every entry line starts so, the key at a fixed place: `{"key":"<64 hex>"`. */
const KEY_START = 8;
const KEY_END = KEY_START + 64;

/**
 * A folder of cached target results. Each run appends the answers it paid
 * for to a pack file of its own (`pack-<time>-<n>-<random>.ndjson`, one JSON
 * line per entry: no file created per answer, and no writer ever shares a
 * file); a reader indexes every pack once, later packs winning. Entries of
 * the earlier layout, a file per key (`<2 hex>/<key>.json`), are still read.
 * The folder (and any parent it needs) is created `0700` and each pack
 * `0600`, whatever the umask allows beyond that: answers echo what was sent.
 *
 * @example A second run with the same cache folder pays for nothing
 * ```ts
 * import { cachedTarget, functionTarget, runTarget, TargetCache } from "./mod.ts";
 * const target = { ...functionTarget((c) => `echo ${c.input}`), identity: "echo@1", request: (c: { input: unknown }) => c.input };
 * const dir = await Deno.makeTempDir();
 * const run = async () => {
 *   const cache = new TargetCache(dir);
 *   const examples = [{ example_id: "d#1", line: 1, case: { input: "hi" } }];
 *   await Array.fromAsync(ReadableStream.from(examples).pipeThrough(runTarget(cachedTarget(target, cache))));
 *   return cache;
 * };
 * const first = await run();
 * const second = await run();
 * await Deno.remove(dir, { recursive: true });
 * if (first.misses !== 1 || second.hits !== 1 || second.misses !== 0) throw new Error("unexpected");
 * ```
 */
export class TargetCache {
  /** The folder. */
  readonly dir: string;
  /** How it is used. */
  readonly mode: CacheMode;
  /** Results read from the cache. */
  hits = 0;
  /** Calls that had to be made. */
  misses = 0;
  /** Lookups a replaying cache could not answer (calls failed, not made). */
  missing = 0;
  /**
   * Stored answers a lookup did not reuse, as `usable` refused them (kept by
   * a version that read replies differently): asked again, not replayed.
   */
  stale = 0;
  /** Results that could not be stored. */
  writeErrors = 0;
  /** Entries by key, once the packs have been read. */
  #index: Map<string, Location> | undefined;
  /** Whether the folder holds entries of the file-per-key layout. */
  #legacy = false;
  /** The most bytes of packs held in memory. */
  #memoryBytes: number;
  /** This run's pack and its size so far, once it has written one. */
  #pack: { path: string; size: number } | undefined;
  /** Entries waiting for the write under way to end. */
  #queue: Array<{
    key: string;
    line: Uint8Array;
    resolve: () => void;
    reject: (error: unknown) => void;
  }> = [];
  #flushing = false;

  /**
   * Creates the cache.
   *
   * @param dir The folder; created on the first write.
   * @param options Its mode.
   */
  constructor(dir: string, options: TargetCacheOptions = {}) {
    this.dir = dir;
    this.mode = options.mode ?? "auto";
    this.#memoryBytes = options.memoryBytes ?? MEMORY_BYTES;
  }

  /**
   * Looks a result up as the cache's mode says: `auto` and `replay` read
   * the entry (one that is missing, torn, corrupt or for another key is a
   * miss, never trusted); `live` and `off` miss always. Only a replay's
   * miss is counted (in `missing`); {@linkcode TargetCache.lookup} counts
   * hits and misses too.
   *
   * @param key The key.
   * @returns The result, or `undefined`: make the call.
   * @throws {CacheMissError} On a miss in `replay` mode: make no call.
   */
  get(key: string): Promise<TargetResult | undefined> {
    try {
      return Promise.resolve(this.getSync(key));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Looks a result up at once (see {@linkcode TargetCache.get}).
   *
   * @param key The key.
   * @param usable Whether a stored result can be used; one it refuses is a
   *   miss (a judge's reply stored before such replies were refused).
   * @returns The result, or `undefined`: make the call.
   * @throws {CacheMissError} On a miss in `replay` mode: make no call.
   */
  getSync(
    key: string,
    usable?: (result: TargetResult) => boolean,
  ): TargetResult | undefined {
    if (this.mode === "live" || this.mode === "off") return undefined;
    const stored = this.peek(key);
    const hit = stored !== undefined && usable?.(stored) === false
      ? undefined
      : stored;
    if (hit !== undefined) return hit;
    if (this.mode !== "replay") {
      // A run says so: it pays for these again.
      if (stored !== undefined) this.stale++;
      return undefined;
    }
    this.missing++;
    throw new CacheMissError(key, stored !== undefined);
  }

  /**
   * Looks a result up as {@linkcode TargetCache.getSync} does, counting a
   * hit in `hits` and a miss (a call to make) in `misses`: what a cached
   * call does before it calls.
   *
   * @param key The key.
   * @param usable Whether a stored result can be used; one it refuses is a
   *   miss.
   * @returns The result, or `undefined`: make the call. Each lookup reads
   *   its own copy, which the caller may change.
   * @throws {CacheMissError} On a miss in `replay` mode: make no call.
   */
  lookup(
    key: string,
    usable?: (result: TargetResult) => boolean,
  ): TargetResult | undefined {
    const hit = this.getSync(key, usable);
    if (hit !== undefined) this.hits++;
    else this.misses++;
    return hit;
  }

  /**
   * Takes back the miss a {@linkcode TargetCache.lookup} counted when its
   * call was then refused (the budget is spent): no call was made, so the
   * cache's line must not count one.
   */
  refused(): void {
    if (this.misses > 0) this.misses--;
  }

  /**
   * Reads what is stored for a key, whatever the mode, counting nothing:
   * what `validate` asks to tell how many requests a replay would lack.
   *
   * @param key The key.
   * @returns The result, or `undefined`.
   */
  peek(key: string): TargetResult | undefined {
    this.#index ??= this.#readIndex();
    const at = this.#index.get(key);
    if (at !== undefined) {
      const result = entryResult(readRange(at), key);
      if (result !== undefined) return result;
      // Torn (a crash, or a writer still at it) or corrupt: a miss, and the
      // answer this run pays for takes its place.
      this.#index.delete(key);
      return undefined;
    }
    return this.#legacy
      ? readEntry(`${this.dir}/${key.slice(0, 2)}/${key}.json`, key)
      : undefined;
  }

  /** Every pack's entries by key, later packs winning; notes a legacy layout. */
  #readIndex(): Map<string, Location> {
    const index = new Map<string, Location>();
    let names: string[];
    try {
      names = [...Deno.readDirSync(this.dir)].map((e) => e.name);
    } catch (error) {
      // No folder yet (a first run: every key misses without a file-system
      // call), or one that cannot be read: the cache must not fail the call.
      if (isOsError(error)) return index;
      throw error;
    }
    this.#legacy = names.some((n) => /^[0-9a-f]{2}$/.test(n));
    const held = { left: this.#memoryBytes };
    for (const name of names.filter(isPack).sort()) {
      indexPack(`${this.dir}/${name}`, index, held);
    }
    return index;
  }

  /**
   * Stores a result, unless the mode writes nothing (`replay`, `off`). It
   * is appended to this run's pack, where it takes the place of an earlier
   * entry for the key (`live`). Answers that arrive while a write is under
   * way go out together in the next one; each line is whole, so readers
   * meet whole entries or a torn last line (a miss), and no other writer
   * shares the file.
   *
   * @param key The key.
   * @param result The result.
   * @returns When the entry is written.
   */
  set(key: string, result: TargetResult): Promise<void> {
    if (this.mode === "replay" || this.mode === "off") return Promise.resolve();
    const line = encoder.encode(JSON.stringify({ key, result }) + "\n");
    return new Promise((resolve, reject) => {
      this.#queue.push({ key, line, resolve, reject });
      if (!this.#flushing) this.#flush();
    });
  }

  /**
   * Stores a result as {@linkcode TargetCache.set} does, but a cache that
   * cannot be written (disk full, no permission) only counts it in
   * `writeErrors`: a paid-for answer must not become an error.
   *
   * @param key The key.
   * @param result The result.
   * @returns When the entry is written, or could not be.
   */
  async keep(key: string, result: TargetResult): Promise<void> {
    try {
      await this.set(key, result);
    } catch (error) {
      if (!isOsError(error)) throw error;
      this.writeErrors++;
    }
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    while (this.#queue.length > 0) {
      const batch = this.#queue;
      this.#queue = [];
      try {
        if (this.#pack === undefined) {
          // Answers may hold what the user sent: private to the user.
          await Deno.mkdir(this.dir, { recursive: true, mode: 0o700 });
          this.#pack = { path: `${this.dir}/${packName()}`, size: 0 };
        }
        const pack = this.#pack;
        const bytes = new Uint8Array(
          batch.reduce((n, e) => n + e.line.length, 0),
        );
        let start = 0;
        for (const e of batch) {
          bytes.set(e.line, start);
          start += e.line.length;
        }
        await Deno.writeFile(pack.path, bytes, { append: true, mode: 0o600 });
        this.#index ??= this.#readIndex();
        // Where each line landed; a write that failed half-way leaves these
        // wrong, which only makes later reads miss (the key is checked).
        start = pack.size;
        for (const e of batch) {
          const end = start + e.line.length - 1;
          this.#index.set(e.key, { path: pack.path, start, end });
          start = end + 1;
        }
        pack.size = start;
        for (const e of batch) e.resolve();
      } catch (error) {
        for (const e of batch) e.reject(error);
      }
    }
    this.#flushing = false;
  }
}

/**
 * Adds a pack's lines to `index` by the key at its fixed place in each line;
 * whether a line holds a whole entry is checked when it is read. A pack that
 * fits what is left of `held.left` is read whole and kept, for hits to read
 * no file; a larger one is read a chunk at a time: a cache of a million
 * answers is not read whole.
 */
function indexPack(
  path: string,
  index: Map<string, Location>,
  held: { left: number },
): void {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path);
  } catch (error) {
    if (isOsError(error)) return;
    throw error;
  }
  const add = (head: Uint8Array, start: number, end: number) => {
    if (end - start > KEY_END) {
      index.set(decoder.decode(head.subarray(KEY_START, KEY_END)), {
        path,
        start,
        end,
      });
    }
  };
  try {
    const size = file.statSync().size;
    if (size <= held.left) {
      const bytes = readWhole(file, size);
      held.left -= bytes.length;
      indexHeld(path, decoder.decode(bytes), index);
      return;
    }
    const buffer = new Uint8Array(1 << 20);
    const head = new Uint8Array(KEY_END); // the current line's first bytes
    let headLength = 0;
    let offset = 0; // of buffer[0] in the file
    let lineStart = 0;
    for (;;) {
      const n = file.readSync(buffer);
      if (n === null || n === 0) break;
      const chunk = buffer.subarray(0, n);
      for (let i = 0; i < n;) {
        const newline = chunk.indexOf(NEWLINE, i);
        const stop = newline < 0 ? n : newline;
        if (headLength < KEY_END) {
          const take = Math.min(KEY_END - headLength, stop - i);
          head.set(chunk.subarray(i, i + take), headLength);
          headLength += take;
        }
        if (newline < 0) break; // the line goes on in the next chunk
        add(head, lineStart, offset + stop);
        lineStart = offset + stop + 1;
        headLength = 0;
        i = stop + 1;
      }
      offset += n;
    }
    add(head, lineStart, offset); // a last line without its newline: torn
  } catch (error) {
    if (!isOsError(error)) throw error;
  } finally {
    file.close();
  }
}

/** Up to `size` bytes of a file from where it stands: fewer if it ends first. */
function readWhole(file: Deno.FsFile, size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  let read = 0;
  while (read < size) {
    const n = file.readSync(bytes.subarray(read));
    if (n === null || n === 0) break;
    read += n;
  }
  return read < size ? bytes.subarray(0, read) : bytes;
}

/**
 * Adds the lines of a pack read whole, as {@linkcode indexPack} does, by
 * where they lie in its text: a hit then slices the text, with no file read
 * and no decoding.
 */
function indexHeld(
  path: string,
  text: string,
  index: Map<string, Location>,
): void {
  for (let start = 0; start < text.length;) {
    const newline = text.indexOf("\n", start);
    // A last line without its newline is torn: indexed, and a miss when read.
    const end = newline < 0 ? text.length : newline;
    // The key's characters are ASCII where the line is an entry: they lie
    // where its bytes do.
    if (end - start > KEY_END) {
      index.set(text.slice(start + KEY_START, start + KEY_END), {
        path,
        start,
        end,
        text,
      });
    }
    start = end + 1;
  }
}

function isPack(name: string): boolean {
  return name.startsWith("pack-") && name.endsWith(".ndjson");
}

let packs = 0;

/**
 * A pack's name: sorting names sorts packs by when they were started (by
 * the millisecond, then in the order this process started them), and the
 * random part keeps two processes apart.
 */
function packName(): string {
  const stamp = new Date().toISOString().replace(/[-:.]/g, "");
  const order = String(packs++).padStart(6, "0");
  const random = Math.floor(Math.random() * 2 ** 32).toString(16);
  return `pack-${stamp}-${order}-${random.padStart(8, "0")}.ndjson`;
}

/** The bytes of one line of a pack, as text; `undefined` if unreadable. */
function readRange(at: Location): string | undefined {
  if (at.text !== undefined) return at.text.slice(at.start, at.end);
  let file: Deno.FsFile | undefined;
  try {
    file = Deno.openSync(at.path);
    file.seekSync(at.start, Deno.SeekMode.Start);
    const bytes = new Uint8Array(at.end - at.start);
    let read = 0;
    while (read < bytes.length) {
      const n = file.readSync(bytes.subarray(read));
      if (n === null || n === 0) return undefined;
      read += n;
    }
    return decoder.decode(bytes);
  } catch (error) {
    if (isOsError(error)) return undefined;
    throw error;
  } finally {
    file?.close();
  }
}

/** The result an entry's JSON text holds for `key`, if it is whole and right. */
function entryResult(
  text: string | undefined,
  key: string,
): TargetResult | undefined {
  if (text === undefined) return undefined;
  try {
    const entry = JSON.parse(text);
    if (entry?.key === key && typeof entry.result?.output === "string") {
      return entry.result as TargetResult;
    }
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
  }
  return undefined;
}

/**
 * The result an entry file of the file-per-key layout holds for `key`. An
 * entry that is missing, torn, corrupt or for another key is a miss.
 */
function readEntry(path: string, key: string): TargetResult | undefined {
  let text: string;
  // A miss throws NotFound, and its stack trace cost more than the read
  // (some 40 µs under a deep async stack): none is kept for it.
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    text = Deno.readTextFileSync(path);
  } catch (error) {
    // An entry that cannot be read (missing, a file where a folder should
    // be, no permission) is a miss: the cache must not fail the call.
    if (isOsError(error)) return undefined;
    throw error;
  } finally {
    Error.stackTraceLimit = limit;
  }
  return entryResult(text, key);
}

/**
 * The cache key of one call: a fingerprint of the target's identity (its
 * settings, secrets only as names), the request the case becomes, and the
 * epoch, so repeats stay independent.
 *
 * @param target The target.
 * @param testCase The case.
 * @param epoch The epoch.
 * @returns A hex key.
 *
 * @example The key does not depend on the API key's value
 * ```ts
 * import { cacheKey, openaiTarget } from "./mod.ts";
 * const settings = { model: "m", base_url: "http://127.0.0.1:9/v1", api_key_env: "KEY" };
 * const a = cacheKey(openaiTarget(settings, () => "one"), { input: "q" }, 1);
 * const b = cacheKey(openaiTarget(settings, () => "two"), { input: "q" }, 1);
 * if (a !== b || a.length !== 64) throw new Error();
 * ```
 */
export function cacheKey(
  target: CacheableTarget,
  testCase: Case,
  epoch: number,
): string {
  let keyed = keyedTargets.get(target);
  if (keyed === undefined) {
    // fingerprint(identity, request, epoch) hashes each part and a NUL: the
    // identity's part is hashed once, and each key goes on from a copy.
    const identity = new Sha256().update(JSON.stringify(target.identity))
      .update("\0");
    keyedTargets.set(target, keyed = { identity, hash: new Sha256() });
  }
  const request = JSON.stringify(target.request(testCase));
  return keyed.hash.copyFrom(keyed.identity).update(request).update("\0")
    .update(String(epoch)).update("\0").hex();
}

// A target's identity does not change: hashed once, not per case. Keys are
// made synchronously, so one hash per target serves every case in turn.
const keyedTargets = new WeakMap<
  CacheableTarget,
  { identity: Sha256; hash: Sha256 }
>();

/**
 * Wraps a target with a cache, used as the cache's mode says: a hit returns
 * the stored output (its `info` marked `cached: true`, and `cost_usd: 0`
 * for a priced target) without calling; a successful call is stored, a
 * failed one is not. A stored result the target's `replays` refuses (one
 * stored before it read answers as it does now) is a miss. In `replay` mode
 * a miss throws
 * {@linkcode CacheMissError} (the unit's error, code `cache.miss`) and
 * nothing is called; in `live` mode every case is called and stored again.
 *
 * @param target The target.
 * @param cache The cache.
 * @returns The cached target.
 *
 * @example A hit says so in its unit's `target`
 * ```ts
 * import { cachedTarget, type CacheableTarget, TargetCache } from "./mod.ts";
 * let calls = 0;
 * const target: CacheableTarget = { identity: "echo@1", request: (c) => c.input, call: (c) => (calls++, { output: `${c.input}` }) };
 * const dir = await Deno.makeTempDir();
 * const cached = cachedTarget(target, new TargetCache(dir));
 * await cached.call({ input: "hi" }, {});
 * const again = await cached.call({ input: "hi" }, {});
 * await Deno.remove(dir, { recursive: true });
 * if (calls !== 1 || again.info?.cached !== true) throw new Error("unexpected");
 * ```
 */
export function cachedTarget(
  target: CacheableTarget,
  cache: TargetCache,
): Target {
  // A call the budget refused was never made: not a miss after all. Told by
  // its code, so that a run without a budget never loads the budget's module.
  const refusal = (error: unknown): unknown => {
    if ((error as { code?: unknown } | null)?.code === "budget.exhausted") {
      cache.refused();
    }
    return error;
  };
  // A target that says how it reads its answers keeps that with each.
  const { reading, replays } = target;
  const store = async (
    key: string,
    result: TargetResult,
  ): Promise<TargetResult> => {
    await cache.keep(
      key,
      reading === undefined ? result : { ...result, reading } as TargetResult,
    );
    return result;
  };
  let stale = false;
  const usable = replays === undefined ? undefined : (stored: TargetResult) => {
    const at = (stored as { reading?: unknown }).reading;
    stale = !replays.call(
      target,
      stored,
      typeof at === "number" ? at : undefined,
    );
    return !stale;
  };
  const lookup = (key: string) => {
    stale = false;
    try {
      return cache.lookup(key, usable);
    } catch (error) {
      if (!(error instanceof CacheMissError) || !stale) throw error;
      throw new CacheMissError(
        key,
        'was stored before evalpipe read replies as it does now (a refusal may have been kept as "")',
      );
    }
  };
  return {
    call(
      testCase: Case,
      context: TargetContext,
    ): Promise<TargetResult> | TargetResult {
      const key = cacheKey(target, testCase, context.epoch ?? 1);
      // Counts the lookup; in replay mode a miss throws: no call is made.
      const hit = lookup(key);
      if (hit !== undefined) {
        // A hit answers at once: a cached run has no promise per case. It
        // cost nothing this time. Its info was parsed for this hit alone:
        // marked in place, not copied.
        const info: Record<string, unknown> = hit.info ?? {};
        info.cached = true;
        if (target.priced === true || info.cost_usd !== undefined) {
          info.cost_usd = 0;
        }
        return hit.tool_calls === undefined
          ? { output: hit.output, info }
          : { output: hit.output, info, tool_calls: hit.tool_calls };
      }
      let answer: Promise<TargetResult> | TargetResult;
      try {
        answer = target.call(testCase, context);
      } catch (error) {
        throw refusal(error);
      }
      return answer instanceof Promise
        ? answer.then((r) => store(key, r), (error) => {
          throw refusal(error);
        })
        : store(key, answer);
    },
  };
}
