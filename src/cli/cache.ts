/**
 * `evalpipe cache merge DIR... --into DIR`: the target caches of a run's
 * shards into one, so that a replayed run sees every answer.
 *
 * @module
 */

import { defineCommand } from "./command.ts";
import { UsageError } from "./flags.ts";
import { say } from "./_output.ts";

/** The `cache` command. */
export const cache = defineCommand({
  name: "cache",
  summary: "Merge target caches: cache merge DIR... --into DIR",
  usage: "merge DIR... --into DIR",
  description:
    `Merges target cache folders (each shard's --cache-dir, or .evalpipe/cache)
into the folder --into names: every answer of every folder goes into one new
pack there, so a run of the whole suite from that cache (--cache-dir DIR)
calls the model only for what no shard asked. A key that several folders hold
keeps the answer of the folder named last; torn or corrupt entries are left
out and counted.`,
  positionals: {
    names: ["merge DIR..."],
    error: "cache takes a subcommand: cache merge DIR... --into DIR",
    files: true,
  },
  flags: {
    into: {
      type: "string",
      value: "DIR",
      help: "The cache folder to merge into (created if need be)",
    },
  },
  async run(flags, given) {
    const args: readonly string[] = given;
    const [sub, ...dirs] = args;
    if (sub !== "merge") {
      throw new UsageError(
        sub === undefined
          ? "cache takes a subcommand: cache merge DIR... --into DIR"
          : `Unknown cache subcommand ${
            JSON.stringify(sub)
          }; the one there is is "merge"`,
      );
    }
    if (dirs.length === 0) {
      throw new UsageError("cache merge takes the cache folders to merge");
    }
    if (flags.into === undefined) {
      throw new UsageError(
        "cache merge needs --into DIR, the folder to merge into",
      );
    }
    const { mergeCaches } = await import("../targets/cache_merge.ts");
    const result = await mergeCaches(dirs, flags.into);
    say(
      `cache merge: ${result.entries} answers from ${result.sources} ${
        result.sources === 1 ? "folder" : "folders"
      } into ${flags.into}${
        result.pack !== undefined ? ` (${result.pack})` : ""
      }${
        result.unreadable > 0
          ? `; ${result.unreadable} torn or corrupt entries left out`
          : ""
      }`,
    );
    return 0;
  },
});
