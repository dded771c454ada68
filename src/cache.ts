/**
 * A disk cache of target outputs, so a suite re-run with changed scorers does
 * not pay for the model calls again.
 *
 * @module
 */

import { fingerprint } from "./_fingerprint.ts";
import type { Case } from "./case.ts";
import type { Target, TargetContext, TargetResult } from "./target.ts";
import type { CacheableTarget } from "./targets/openai_target.ts";

/** A folder of cached target results, one file per key. */
export class TargetCache {
  /** The folder. */
  readonly dir: string;
  /** Results read from the cache. */
  hits = 0;
  /** Calls that had to be made. */
  misses = 0;
  #folders = new Set<string>();
  /**
   * Keys written by this run while the folder is new (it did not exist at
   * the first read): only these can be found, so other keys miss without a
   * file-system call. `undefined` before the first read; `null` when the
   * folder existed, or once this run wrote too many keys to list.
   */
  #new: Set<string> | null | undefined;
  /** Results that could not be stored. */
  writeErrors = 0;

  /**
   * Creates the cache.
   *
   * @param dir The folder; created on the first write.
   */
  constructor(dir: string) {
    this.dir = dir;
  }

  #path(key: string): string {
    return `${this.dir}/${key.slice(0, 2)}/${key}.json`;
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
    if (this.#new === undefined) {
      this.#new = isFolder(this.dir) ? null : new Set();
    }
    if (this.#new !== null && !this.#new.has(key)) return undefined;
    return readEntry(this.#path(key), key);
  }

  /**
   * Writes a result without ever tearing an entry: a new entry is created
   * only if none exists (`O_EXCL`), so concurrent writers never mix their
   * bytes in one, and a reader that meets one still being written finds it
   * torn, a miss; an existing torn or corrupt entry is replaced through a
   * temporary file and a rename. The common case is one file creation, no
   * rename (a rename cost ext4 here 0.3-0.8 ms of kernel time per entry).
   *
   * @param key The key.
   * @param result The result.
   */
  async set(key: string, result: TargetResult): Promise<void> {
    const path = this.#path(key);
    const folder = path.slice(0, path.lastIndexOf("/"));
    // One mkdir per folder and run, not per entry.
    if (!this.#folders.has(folder)) {
      await Deno.mkdir(folder, { recursive: true });
      this.#folders.add(folder);
    }
    const text = JSON.stringify({ key, result });
    try {
      await Deno.writeTextFile(path, text, { createNew: true });
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      // An entry is there: a whole one is as good as this; a torn or corrupt
      // one (or one still being written) is replaced in one step.
      if (readEntry(path, key) === undefined) {
        const tmp = `${path}.${crypto.randomUUID()}.tmp`;
        await Deno.writeTextFile(tmp, text);
        await Deno.rename(tmp, path);
      }
    }
    if (this.#new) {
      this.#new.add(key);
      if (this.#new.size > 100_000) this.#new = null; // look on disk from now on
    }
  }
}

/**
 * The result an entry file holds for `key`. An entry that is missing, torn,
 * corrupt or for another key is a miss, never trusted.
 */
function readEntry(path: string, key: string): TargetResult | undefined {
  let text: string;
  // A miss throws NotFound, and its stack trace cost more than the read
  // (some 40 µs under a deep async stack): none is kept for it.
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    // A small local file: the synchronous read costs a fraction of an async
    // op's round trip, and a cached run is nothing but these reads.
    text = Deno.readTextFileSync(path);
  } catch (error) {
    // An entry that cannot be read (missing, a file where a folder should
    // be, no permission) is a miss: the cache must not fail the call.
    if (isFsError(error)) return undefined;
    throw error;
  } finally {
    Error.stackTraceLimit = limit;
  }
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

function isFolder(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch (error) {
    if (isFsError(error)) return false;
    throw error;
  }
}

function isFsError(error: unknown): boolean {
  return Object.values(Deno.errors).some((E) => error instanceof E);
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
        return { output: hit.output, info: { ...hit.info, cached: true } };
      }
      cache.misses++;
      const answer = target.call(testCase, context);
      return answer instanceof Promise
        ? answer.then((r) => store(key, r))
        : store(key, answer);
    },
  };
}
