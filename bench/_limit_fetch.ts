// The limit row of the network goal (issue 17, goal 5): bench/_bare_fetch.ts
// plus only what any client of a model must do per call, and nothing of
// evalpipe's: the dataset read and parsed, a call that can be stopped (its own
// `AbortController`, with a deadline that one timer enforces), the reply
// parsed and checked, a record built (the reply's text and info: the target's
// output, scored by exact match, or the judge's verdict parsed from it), and
// one Score-shaped NDJSON line per case on stdout. No retries, rate limits,
// redaction, caps or Score checks.
// With `judge`, each request carries the judge-sized messages of
// bench/_bare_fetch.ts.
// Usage: deno run -A bench/_limit_fetch.ts BASE_URL DATASET CONCURRENCY [judge]
import { exactMatchLine } from "./_bare_parts.ts";

const [baseUrl, dataset, concurrency, shape] = Deno.args;
const judge = shape === "judge";
const SYSTEM = "s".repeat(143);
const RUBRIC = "r".repeat(250);
const TIMEOUT_MS = 60_000;
const url = `${baseUrl}/chat/completions`;
const headers = {
  "content-type": "application/json",
  authorization: `Bearer ${Deno.env.get("FAKE_API_KEY")}`,
};
/** Unit ids are the dataset's file name and line, as `run` makes them. */
const name = dataset!.slice(dataset!.lastIndexOf("/") + 1);
const cases: Array<{ input: string; expected?: string; output?: string }> =
  (await Deno.readTextFile(dataset!)).split("\n").filter((l) => l !== "")
    .map((l) => JSON.parse(l));

// Calls in flight and when each must stop; one timer checks them all.
const live = new Map<AbortController, number>();
const timer = setInterval(() => {
  const now = performance.now();
  for (const [controller, deadline] of live) {
    if (deadline <= now) controller.abort(new Error("Timed out"));
  }
}, 1000);

const enc = new TextEncoder();
const stdout = Deno.stdout.writable.getWriter();
let out = "";
let writing = Promise.resolve();
function emit(line: string): void {
  out += line + "\n";
  if (out.length > 1 << 16) flush();
}
function flush(): void {
  const bytes = enc.encode(out);
  out = "";
  writing = writing.then(() => stdout.write(bytes));
}

let next = 0;
async function worker(): Promise<void> {
  while (next < cases.length) {
    const i = next++;
    const c = cases[i]!;
    const id = `${name}#${i + 1}`;
    const controller = new AbortController();
    live.set(controller, performance.now() + TIMEOUT_MS);
    let reply;
    try {
      const response = await fetch(url, {
        method: "POST",
        headers,
        signal: controller.signal,
        body: JSON.stringify({
          model: "fake-model",
          messages: judge
            ? [
              { role: "system", content: SYSTEM },
              { role: "user", content: `${RUBRIC} ${c.input} ${c.output}` },
            ]
            : [{ role: "user", content: c.input }],
        }),
      });
      reply = JSON.parse(await response.text());
    } finally {
      live.delete(controller);
    }
    const choice = reply.choices?.[0];
    const text = choice?.message?.content;
    if (typeof text !== "string") {
      throw new Error(`Unexpected reply ${JSON.stringify(reply)}`);
    }
    const info = {
      model: reply.model ?? "fake-model",
      usage: reply.usage,
      finish_reason: choice.finish_reason,
      attempts: 1,
    };
    const record = { output: text, info };
    if (judge) {
      const verdict = JSON.parse(record.output);
      if (typeof verdict.score !== "number") throw new Error(`Verdict ${text}`);
      emit(JSON.stringify({
        metric: "llm_judge",
        status: "scored",
        validity: "valid",
        value: verdict.score,
        passed: verdict.score >= 0.5,
        reason: verdict.reason,
        evaluator_version: "llm_judge@1",
        example_id: id,
        unit_id: id,
        diagnostics: [],
        evidence_refs: [],
        provenance: { judge_model: "fake-model", judge_url: url, ...info },
      }));
    } else {
      const value = record.output === c.expected ? 1 : 0;
      emit(exactMatchLine(id, value, c.expected));
    }
  }
}
await Promise.all(
  Array.from({ length: Number(concurrency) }, worker),
);
clearInterval(timer);
flush();
await writing;
await stdout.close();
