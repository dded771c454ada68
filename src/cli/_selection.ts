// `run`'s shard and subset flags, read into runSuite's options, and the line
// of the summary that says what they chose.

import { UsageError } from "./flags.ts";
import { parseShard } from "../run/select.ts";
import type { RunSummary } from "../run/run_suite.ts";
import {
  type ShardInfo,
  type Subset,
  subsetFlags,
} from "../record/selection.ts";
import { counted } from "../base/words.ts";

/** What `run` passes on. */
export interface Selected {
  shard?: ShardInfo;
  subset?: Subset;
}

/** Reads `--shard`, `--filter`, `--sample`, `--seed`, `--limit`. */
export function selectionOptions(flags: {
  shard: string | undefined;
  filter: string | undefined;
  sample: number | undefined;
  seed: string | undefined;
  limit: number | undefined;
}): Selected {
  const subset: Subset = {};
  if (flags.filter !== undefined) subset.filter = flags.filter;
  if (flags.sample !== undefined) {
    if (flags.sample < 0) {
      throw new UsageError(`--sample must be 0 or more, not ${flags.sample}`);
    }
    subset.sample = flags.sample;
    subset.seed = flags.seed ?? "0";
  } else if (flags.seed !== undefined) {
    throw new UsageError("--seed goes with --sample");
  }
  if (flags.limit !== undefined) {
    if (flags.limit < 0) {
      throw new UsageError(`--limit must be 0 or more, not ${flags.limit}`);
    }
    subset.limit = flags.limit;
  }
  if (flags.filter !== undefined) {
    try {
      new RegExp(flags.filter, "u");
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      throw new UsageError(
        `--filter ${
          JSON.stringify(flags.filter)
        } is not a regular expression: ${
          error.message.replace(/^Invalid regular expression: /, "")
        }`,
      );
    }
  }
  return {
    ...(flags.shard !== undefined ? { shard: parseShard(flags.shard) } : {}),
    ...(Object.keys(subset).length > 0 ? { subset } : {}),
  };
}

/** The summary's line about the shard and subset, when there is one. */
export function describeSelection(
  selected: Selected,
  tally: RunSummary["selection"],
  complete = true,
): string | undefined {
  if (tally === undefined) return undefined;
  const { shard, subset } = selected;
  // A stopped run took in examples it never ran: they were chosen, no more.
  const ran = complete
    ? `${counted(tally.ran, "example")} ran`
    : `${
      counted(tally.ran, "example")
    } chosen (the run stopped before all ran)`;
  const parts: string[] = [];
  if (shard !== undefined) {
    parts.push(
      `shard ${shard.index}/${shard.count}: ${tally.ran + tally.skipped} of ${
        counted(tally.examples, "example")
      } ${tally.ran + tally.skipped === 1 ? "is" : "are"} this shard's`,
    );
  }
  if (subset !== undefined) {
    parts.push(
      `subset ${
        subsetFlags(subset)
      }: ${ran}, ${tally.skipped} skipped (their Scores say "skipped")`,
    );
  } else {
    parts.push(
      complete ? `${tally.ran} ran` : `${tally.ran} chosen, the run stopped`,
    );
  }
  return parts.join("; ");
}

/**
 * The line that fails a subset that chose no example of a dataset that has
 * some: every Score skipped, nothing evaluated, and a CI job that took a
 * pattern's typo for a pass. `undefined` otherwise, and for a shard, which
 * may hold none of a subset's examples (merge judges the whole).
 */
export function emptySubsetLine(
  subset: Subset | undefined,
  tally: { examples: number; ran: number } | undefined,
): string | undefined {
  if (subset === undefined || tally === undefined) return undefined;
  if (tally.ran > 0 || tally.examples === 0) return undefined;
  return `evalpipe: subset ${subsetFlags(subset)} chose none of the ${
    counted(tally.examples, "example")
  }: nothing was evaluated${
    subset.filter !== undefined
      ? " (--filter matches example ids and metadata values)"
      : ""
  }`;
}
