// `deno bench -A bench/`: the per-Score and per-case hot functions.
import {
  Aggregator,
  LineStream,
  loadDataset,
  NdjsonParseStream,
  parseScore,
  scored,
  scoreLine,
  scorerPayload,
  validateScore,
} from "../mod.ts";
import { keepVerbatimExpected } from "../src/dataset/case.ts";
import { exampleFromLine } from "../src/dataset/dataset.ts";
import { JudgeReplyError, parseJudgeReply } from "../src/scorers/llm_judge.ts";

const score = scored("exact_match", 1, {
  example_id: "d.jsonl#1",
  unit_id: "d.jsonl#1",
});
const scoreJson = JSON.stringify(score);
const unit = {
  example_id: "d.jsonl#1",
  unit_id: "d.jsonl#1",
  input: "How long do refunds take?",
  output: "Refunds are processed within 30 days.",
  expected: "30 days",
  context: [
    "Refunds are processed within 30 days.",
    "Shipping takes 3-5 business days.",
  ],
};
const line =
  '{"id":7,"input":"How long?","expected":{"b":1,"10":2,"big":12345678901234567890},"output":"30 days"}';

Deno.bench(
  "Score: build with scored()",
  { group: "score", baseline: true },
  () => {
    scored("exact_match", 0.5, { example_id: "d#1", unit_id: "d#1" });
  },
);
Deno.bench(
  "Score: validateScore() of a parsed line",
  { group: "score" },
  () => {
    validateScore(JSON.parse(scoreJson));
  },
);
Deno.bench("Score: parseScore()", { group: "score" }, () => {
  parseScore(score);
});
Deno.bench(
  "JSON.stringify(Score) (floor)",
  { group: "ndjson", baseline: true },
  () => {
    JSON.stringify(score);
  },
);
// A Score as a run makes it: a new id, concatenated, for every case.
let n = 0;
const freshScore = () => {
  const id = `data.jsonl#${n++}`;
  return { ...score, example_id: id, unit_id: id };
};
Deno.bench(
  "JSON.stringify(Score) with a fresh id",
  { group: "score line", baseline: true },
  () => {
    JSON.stringify(freshScore());
  },
);
Deno.bench(
  "scoreLine(Score) with a fresh id",
  { group: "score line" },
  () => {
    scoreLine(freshScore());
  },
);
Deno.bench(
  "JSON.parse + verbatim expected of a case line",
  { group: "ndjson" },
  () => {
    keepVerbatimExpected(JSON.parse(line), line);
  },
);
// A dataset's line as a run reads it, against `JSON.parse` of the same line:
// the checks `JSON.parse` cannot make (depth, a key given twice, verbatim
// `expected` and ids) are what the ratio shows. The long line is a RAG case:
// passages of prose with colons, and a tool call's JSON inside a string.
const longLine = JSON.stringify({
  id: 7,
  input: "Question: how long do refunds take?",
  context: Array.from(
    { length: 4 },
    (_, i) =>
      `Passage ${i}: ` + "Note: refunds take 30 days; 10:30. ".repeat(12),
  ),
  expected: "30 days",
  metadata: { tool: JSON.stringify({ name: "lookup", arguments: { q: "x" } }) },
});
for (const [name, text] of [["short", line], ["long", longLine]] as const) {
  Deno.bench(
    `JSON.parse of a ${name} dataset line`,
    { group: `dataset line, ${name}`, baseline: true },
    () => {
      JSON.parse(text);
    },
  );
  Deno.bench(
    `exampleFromLine() of a ${name} dataset line`,
    { group: `dataset line, ${name}` },
    () => {
      exampleFromLine("d.jsonl", { line: 1, text });
    },
  );
}
Deno.bench("scorerPayload()", { group: "payload" }, () => {
  scorerPayload(unit);
});
Deno.bench("Aggregator.add() x1000", { group: "aggregate" }, () => {
  const agg = new Aggregator();
  for (let i = 0; i < 1000; i++) agg.add(score);
  agg.results();
});

const ndjson = new TextEncoder().encode((scoreJson + "\n").repeat(10_000));
Deno.bench(
  "LineStream + NdjsonParseStream, 10,000 lines",
  { group: "streams" },
  async () => {
    const stream = ReadableStream.from([ndjson]).pipeThrough(new LineStream())
      .pipeThrough(new NdjsonParseStream());
    for await (const _ of stream) { /* drain */ }
  },
);

// A JSON-array dataset, read whole: the time per case must not grow with the
// file (a search for an escape that ran to the end of the file for every
// case once made 100,000 cases take 18 s instead of 0.3). The 100,000-case
// row reads about 4× the 25,000-case baseline when linear, 16× when not.
async function jsonArrayFile(n: number): Promise<string> {
  const path = await Deno.makeTempFile({
    prefix: "evalpipe_bench_",
    suffix: ".json",
  });
  const cases = Array.from(
    { length: n },
    (_, i) => ({ input: `q${i}`, expected: String(i % 7) }),
  );
  await Deno.writeTextFile(path, JSON.stringify(cases, null, 2));
  return path;
}
const arrays = [await jsonArrayFile(25_000), await jsonArrayFile(100_000)];
globalThis.addEventListener("unload", () => {
  for (const path of arrays) Deno.removeSync(path);
});
for (const [i, path] of arrays.entries()) {
  Deno.bench(
    `loadDataset, JSON array of ${i === 0 ? "25,000" : "100,000"} cases`,
    { group: "json-array", baseline: i === 0, n: 5, warmup: 1 },
    async () => {
      for await (const _ of await loadDataset(path)) { /* drain */ }
    },
  );
}

// A judge's reply of unclosed braces is no verdict, read in linear time: the
// 200,000-brace row reads about 4× the 50,000-brace baseline when linear, 16×
// when each brace rescans the rest (llm_judge_test checks only the verdict).
for (const [i, braces] of [50_000, 200_000].entries()) {
  const reply = "{".repeat(braces);
  Deno.bench(
    `parseJudgeReply, ${braces.toLocaleString("en")} unclosed braces`,
    { group: "judge reply", baseline: i === 0, n: 20, warmup: 2 },
    () => {
      try {
        parseJudgeReply(reply);
      } catch (e) {
        if (!(e instanceof JudgeReplyError)) throw e;
      }
    },
  );
}
