/**
 * Fingerprints: short, stable hashes of what a run depended on.
 *
 * @module
 */

export * from "./fingerprint.ts";
