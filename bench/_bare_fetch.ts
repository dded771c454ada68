// Baseline for `bench:network`: the same chat completions requests as the
// openai target sends, from a bare fetch loop with the same concurrency, and
// nothing else (no dataset, cache, scorers or output).
// Usage: deno run -A bench/_bare_fetch.ts BASE_URL CASES CONCURRENCY
const [baseUrl, cases, concurrency] = Deno.args;
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
        messages: [{ role: "user", content: `question ${i}` }],
      }),
    });
    const reply = JSON.parse(await response.text());
    if (typeof reply.choices?.[0]?.message?.content !== "string") {
      throw new Error(`Unexpected reply ${JSON.stringify(reply)}`);
    }
  }
}
await Promise.all(Array.from({ length: Number(concurrency) }, worker));
