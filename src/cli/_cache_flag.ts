/**
 * The `--cache MODE` flag `run` and `validate` share, and its check.
 *
 * @module
 */

import { UsageError } from "./flags.ts";
import type { CacheMode } from "../targets/cache.ts";

const MODES: readonly CacheMode[] = ["auto", "replay", "live", "off"];

/** The flag's declaration. */
export const CACHE_FLAG = {
  cache: {
    type: "string",
    value: "MODE",
    help:
      "How the cache of model calls (openai and http targets, llm_judge) is used: auto (read it, store what is paid for), replay (read only: a miss blocks the unit, nothing goes to the network, no API key needed), live (call again and replace what is stored), off",
    defaultText: "the config's cache, else auto",
  },
} as const;

/**
 * The mode a `--cache` value names.
 *
 * @param value The flag's value.
 * @returns The mode, or `undefined` when the flag is absent.
 * @throws {UsageError} For a value that names no mode.
 */
export function cacheModeOf(value: string | undefined): CacheMode | undefined {
  if (value === undefined) return undefined;
  if ((MODES as readonly string[]).includes(value)) return value as CacheMode;
  throw new UsageError(
    `--cache takes one of ${MODES.join(", ")}, not ${JSON.stringify(value)}`,
  );
}
