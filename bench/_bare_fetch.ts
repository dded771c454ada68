// Baseline for `bench:network`: the same chat completions requests as the
// openai target sends, from a bare fetch loop with the same concurrency, and
// nothing else (no dataset, cache, scorers or output).
// With `judge`, each request carries a system and a user message the sizes of
// `llm_judge`'s default prompt for the bench's cases (bench:limits).
// Usage: deno run -A bench/_bare_fetch.ts BASE_URL CASES CONCURRENCY [judge]
const [baseUrl, cases, concurrency, shape] = Deno.args;
const SYSTEM = "s".repeat(143);
const RUBRIC = "r".repeat(250);
const total = Number(cases);
let next = 0;
async function worker(): Promise<void> {
  while (next < total) {
    const i = next++;
    const response = await fetch(`${baseUrl}/chat/completions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${Deno.env.get("FAKE_API_KEY")}`,
      },
      body: JSON.stringify({
        model: "fake-model",
        messages: shape === "judge"
          ? [
            { role: "system", content: SYSTEM },
            { role: "user", content: `${RUBRIC} question ${i} answer ${i}` },
          ]
          : [{ role: "user", content: `question ${i}` }],
      }),
    });
    const reply = JSON.parse(await response.text());
    if (typeof reply.choices?.[0]?.message?.content !== "string") {
      throw new Error(`Unexpected reply ${JSON.stringify(reply)}`);
    }
  }
}
await Promise.all(Array.from({ length: Number(concurrency) }, worker));
