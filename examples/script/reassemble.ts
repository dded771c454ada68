// Reassemble evalpipe's stages in a script: replay logged outputs, score them
// with a built-in and a TypeScript scorer, Scores to stdout, aggregates to stderr.
// Run: deno run -A examples/script/reassemble.ts examples/script/logs.jsonl
import {
  aggregate,
  exactMatch,
  functionScorer,
  loadDataset,
  ndjsonSink,
  replayTarget,
  runTarget,
  scoreUnits,
} from "../../mod.ts";

const short = functionScorer(
  "short",
  (unit) => (unit.output ?? "").length <= 200,
);
const [scores, forSummary] = (await loadDataset(Deno.args[0] ?? "logs.jsonl"))
  .pipeThrough(runTarget(replayTarget(), { concurrency: 8 }))
  .pipeThrough(scoreUnits([exactMatch(), short], { concurrency: 8 }))
  .tee();
await Promise.all([
  scores.pipeTo(ndjsonSink(Deno.stdout)),
  forSummary.pipeThrough(aggregate()).pipeTo(ndjsonSink(Deno.stderr)),
]);
