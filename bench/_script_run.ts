// The bench's `run` as a script assembles it from mod.ts, the way the README's
// "Reassemble the stages in a script" shows (examples/script/reassemble.ts),
// with the bench suite's one scorer. Run from the dataset's folder, so that
// its example ids are those `evalpipe run` gives.
// Usage: deno run -A --config deno.json bench/_script_run.ts data.jsonl > /dev/null
import {
  aggregateInto,
  Aggregator,
  exactMatch,
  loadDatasetBatches,
  ndjsonBatchSink,
  replayTarget,
  runTargetBatches,
  scoreLine,
  scoreUnitBatches,
  stdoutWriter,
  validateScoreBatches,
} from "../mod.ts";

const aggregator = new Aggregator();
await (await loadDatasetBatches(Deno.args[0]!))
  .pipeThrough(runTargetBatches(replayTarget()))
  .pipeThrough(scoreUnitBatches([exactMatch()]))
  .pipeThrough(validateScoreBatches())
  .pipeThrough(aggregateInto(aggregator))
  .pipeTo(ndjsonBatchSink(stdoutWriter(), { stringify: scoreLine }));
for (const a of aggregator.results()) console.error(JSON.stringify(a));
