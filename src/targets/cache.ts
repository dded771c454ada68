/**
 * A disk cache of target outputs, so a suite re-run with changed scorers does
 * not pay for the model calls again.
 *
 * @module
 */

import { fingerprint } from "../fingerprint/fingerprint.ts";
import type { Case } from "../dataset/case.ts";
import type { Target, TargetContext, TargetResult } from "./target.ts";
import type { CacheableTarget } from "./openai_target.ts";

/** Where an entry's line lies in a pack file. */
interface Location {
  path: string;
  start: number;
  end: number;
}

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
  /** Results read from the cache. */
  hits = 0;
  /** Calls that had to be made. */
  misses = 0;
  /** Results that could not be stored. */
  writeErrors = 0;
  /** Entries by key, once the packs have been read. */
  #index: Map<string, Location> | undefined;
  /** Whether the folder holds entries of the file-per-key layout. */
  #legacy = false;
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
   */
  constructor(dir: string) {
    this.dir = dir;
  }

  /**
   * Reads a result. An entry that is missing, torn, corrupt or for another
   * key is a miss, never trusted.
   *
   * @param key The key.
   * @returns The result, or `undefined`.
   */
  get(key: string): Promise<TargetResult | undefined> {
    return Promise.resolve(this.getSync(key));
  }

  /**
   * Reads a result at once (see {@linkcode TargetCache.get}).
   *
   * @param key The key.
   * @returns The result, or `undefined`.
   */
  getSync(key: string): TargetResult | undefined {
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
      if (isFsError(error)) return index;
      throw error;
    }
    this.#legacy = names.some((n) => /^[0-9a-f]{2}$/.test(n));
    for (const name of names.filter(isPack).sort()) {
      indexPack(`${this.dir}/${name}`, index);
    }
    return index;
  }

  /**
   * Appends a result to this run's pack. Answers that arrive while a write
   * is under way go out together in the next one; each line is whole, so
   * readers meet whole entries or a torn last line (a miss), and no other
   * writer shares the file.
   *
   * @param key The key.
   * @param result The result.
   * @returns When the entry is written.
   */
  set(key: string, result: TargetResult): Promise<void> {
    const line = encoder.encode(JSON.stringify({ key, result }) + "\n");
    return new Promise((resolve, reject) => {
      this.#queue.push({ key, line, resolve, reject });
      if (!this.#flushing) this.#flush();
    });
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
 * whether a line holds a whole entry is checked when it is read. The pack is
 * read a chunk at a time: a cache of a million answers is not read whole.
 */
function indexPack(path: string, index: Map<string, Location>): void {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path);
  } catch (error) {
    if (isFsError(error)) return;
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
    if (!isFsError(error)) throw error;
  } finally {
    file.close();
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
    if (isFsError(error)) return undefined;
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
    if (isFsError(error)) return undefined;
    throw error;
  } finally {
    Error.stackTraceLimit = limit;
  }
  return entryResult(text, key);
}

/**
 * Whether an error is the file system's: one of `Deno.errors`, or a plain
 * `Error` carrying an errno (ENOSPC, EROFS, EDQUOT and EIO have no class of
 * their own: their `code` is set and their message ends `(os error N)`).
 */
function isFsError(error: unknown): boolean {
  if (Object.values(Deno.errors).some((E) => error instanceof E)) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return (typeof code === "string" && /^E[A-Z0-9]+$/.test(code)) ||
    /\(os error \d+\)/.test(error.message);
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
 */
export function cacheKey(
  target: CacheableTarget,
  testCase: Case,
  epoch: number,
): string {
  let identity = identities.get(target);
  if (identity === undefined) {
    identities.set(target, identity = JSON.stringify(target.identity));
  }
  return fingerprint(
    identity,
    JSON.stringify(target.request(testCase)),
    String(epoch),
  )
    .slice("sha256:".length);
}

// A target's identity does not change: serialise it once, not per case.
const identities = new WeakMap<CacheableTarget, string>();

/**
 * Wraps a target with a cache: a hit returns the stored output (its `info`
 * marked `cached: true`) without calling; a successful call is stored; a
 * failed one is not.
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
  const store = async (
    key: string,
    result: TargetResult,
  ): Promise<TargetResult> => {
    try {
      await cache.set(key, result);
    } catch (error) {
      // A cache that cannot be written (disk full, no permission) must not
      // turn a paid-for answer into an error: keep the answer, count it.
      if (!isFsError(error)) throw error;
      cache.writeErrors++;
    }
    return result;
  };
  return {
    call(
      testCase: Case,
      context: TargetContext,
    ): Promise<TargetResult> | TargetResult {
      const key = cacheKey(target, testCase, context.epoch ?? 1);
      const hit = cache.getSync(key);
      if (hit !== undefined) {
        cache.hits++;
        // A hit answers at once: a cached run has no promise per case.
        const info = { ...hit.info, cached: true };
        return hit.tool_calls === undefined
          ? { output: hit.output, info }
          : { output: hit.output, info, tool_calls: hit.tool_calls };
      }
      cache.misses++;
      const answer = target.call(testCase, context);
      return answer instanceof Promise
        ? answer.then((r) => store(key, r))
        : store(key, answer);
    },
  };
}
