/**
 * Fingerprints: short, stable hashes of what a run depended on, so two runs
 * can tell whether they measured the same thing.
 *
 * @module
 */

import { Sha256 } from "./_sha256.ts";
import { scriptOf } from "../process/command.ts";

/**
 * Hashes of what a run depended on.
 *
 * @example Two runs of one suite, the second with its config edited
 * ```ts
 * import { fingerprint, type Fingerprints } from "./mod.ts";
 * const yaml = "dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n";
 * const prints = (config: string): Fingerprints => ({
 *   config: fingerprint(config), dataset: null, target: fingerprint('{"type":"replay"}'), scorers: { exact_match: "exact_match@1" },
 * });
 * const before = prints(yaml), after = prints(yaml + "epochs: 3\n");
 * if (!before.config.startsWith("sha256:") || before.config === after.config || before.target !== after.target) throw new Error("unexpected");
 * ```
 */
export interface Fingerprints {
  /** The config file's text. */
  config: string;
  /** The dataset file's bytes; `null` when it was read from stdin. */
  dataset: string | null;
  /** The target's config (names of secrets, never their values) and the script it runs. */
  target: string;
  /** Each scorer's metric name and `evaluator_version`. */
  scorers: Record<string, string>;
}

/**
 * The SHA-256 of some text or bytes, as `sha256:<hex>`.
 *
 * @param parts Texts or bytes, hashed in order with a separator.
 * @returns The fingerprint.
 */
export function fingerprint(...parts: Array<string | Uint8Array>): string {
  // Plain TypeScript (`deno run -A bench/hash_bench.ts`, medians): 3.6 µs
  // per cache key and 0.8 ms to the first digest. `crypto.subtle` is
  // asynchronous (25 µs per key), and scorer versions are made in synchronous
  // factories; `node:crypto` loads the Node layer, 17 ms and 6 MiB, which
  // made a 1-case run with a subprocess scorer 58 -> 78 ms.
  const hash = new Sha256();
  for (const part of parts) hash.update(part).update("\0");
  return `sha256:${hash.hex()}`;
}

/**
 * The fingerprint of a file's content, read as a stream.
 *
 * @param path The file.
 * @returns The fingerprint.
 */
export async function fileFingerprint(path: string): Promise<string> {
  // Datasets can be large: the native hash, loaded only when one is needed
  // (the Node layer costs start-up time every other command would pay).
  const { createHash } = await import("node:crypto");
  const hash = createHash("sha256");
  const file = await Deno.open(path); // its readable closes it at the end
  for await (const chunk of file.readable) hash.update(chunk);
  return `sha256:${hash.update("\0").digest("hex")}`;
}

/**
 * The fingerprint of a command and of the script file it runs, so editing
 * the script changes it.
 *
 * @param cmd The command.
 * @param cwd The folder it runs in.
 * @returns The fingerprint.
 */
export function commandFingerprint(cmd: string, cwd: string): string {
  const script = scriptOf(cmd, cwd);
  if (script === undefined) return fingerprint(cmd);
  return fingerprint(
    cmd,
    Deno.readFileSync(script.startsWith("/") ? script : `${cwd}/${script}`),
  );
}
