// The bench's `run` as a script assembles it from mod.ts, the way the README's
// "Reassemble the stages in a script" shows (examples/script/reassemble.ts),
// with the bench suite's one scorer. Run from the dataset's folder, so that
// its example ids are those `evalpipe run` gives.
// Usage: deno run -A --config deno.json bench/_script_run.ts data.jsonl > /dev/null
import {
  aggregate,
  exactMatch,
  loadDataset,
  ndjsonSink,
  replayTarget,
  runTarget,
  scoreUnits,
} from "../mod.ts";

const [scores, forSummary] = (await loadDataset(Deno.args[0]!))
  .pipeThrough(runTarget(replayTarget(), { concurrency: 8 }))
  .pipeThrough(scoreUnits([exactMatch()], { concurrency: 8 }))
  .tee();
await Promise.all([
  scores.pipeTo(ndjsonSink(Deno.stdout)),
  forSummary.pipeThrough(aggregate()).pipeTo(ndjsonSink(Deno.stderr)),
]);
