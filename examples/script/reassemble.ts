// Reassemble evalpipe's stages in a script: the same pipeline `evalpipe run`
// is made of (src/run/run_suite.ts), at the same speed. Replay logged outputs,
// score them with a built-in and a TypeScript scorer, Scores to stdout,
// aggregates to stderr.
// Run: deno run -A examples/script/reassemble.ts examples/script/logs.jsonl
import {
  aggregateInto,
  Aggregator,
  exactMatch,
  functionScorer,
  loadDatasetBatches,
  ndjsonBatchSink,
  replayTarget,
  runTargetBatches,
  scoreLine,
  scoreUnitBatches,
  stdoutWriter,
  validateScoreBatches,
  valueRangesOf,
} from "../../mod.ts";

const short = functionScorer(
  "short",
  (unit) => (unit.output ?? "").length <= 200,
);
const scorers = [exactMatch(), short];
// Each metric's range, as `run` gives it: bounds and intervals clamped to it.
const aggregator = new Aggregator({ valueRange: valueRangesOf(scorers) });
await (await loadDatasetBatches(Deno.args[0] ?? "logs.jsonl"))
  .pipeThrough(runTargetBatches(replayTarget()))
  .pipeThrough(scoreUnitBatches(scorers))
  .pipeThrough(validateScoreBatches())
  .pipeThrough(aggregateInto(aggregator))
  .pipeTo(ndjsonBatchSink(stdoutWriter(), { stringify: scoreLine }))
  // A reader that went away (`| head -1`) got what it asked for.
  .catch((e) => {
    if (!(e instanceof Deno.errors.BrokenPipe)) throw e;
  });
for (const a of aggregator.results()) console.error(JSON.stringify(a));
