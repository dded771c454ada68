// Writes a JSONL dataset of RAG-like replay cases (passages of prose with
// colons, a tool call's JSON inside a string), about 1.6 KB a line, for the
// long-line rows of bench/RESULTS.md (session 23): a 20,000-case `run` of it
// beside a suite `{dataset: data.jsonl, target: {type: replay}, scorers:
// [{type: exact_match}]}`, measured with bench/_ab_cpu.ts.
// Usage: deno run -A bench/_rag_dataset.ts OUT.jsonl [CASES (default 20000)]
const [out, casesArg] = Deno.args;
if (out === undefined) {
  throw new Error("Usage: bench/_rag_dataset.ts OUT.jsonl [CASES]");
}
const words = ("the refund policy states that items: can be returned within " +
  "30 days. Note: shipping takes 3-5 days; time 10:30").split(" ");
// A fixed sequence (a linear congruential generator), so that every run
// writes the same file.
let seed = 1;
const pick = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return words[seed % words.length]!;
};
const lines: string[] = [];
for (let i = 0; i < Number(casesArg ?? 20_000); i++) {
  const passage = () => Array.from({ length: 60 }, pick).join(" ");
  lines.push(JSON.stringify({
    id: i,
    input: `Question ${i}: how long do refunds take?`,
    context: [passage(), passage(), passage(), passage()],
    expected: "30 days",
    output: i % 2 ? "30 days" : "nope",
    metadata: {
      tool: JSON.stringify({
        name: "lookup",
        arguments: { q: "refund", n: i },
      }),
    },
  }));
}
await Deno.writeTextFile(out, lines.join("\n") + "\n");
