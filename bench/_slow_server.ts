// The loopback model of `bench:limits` (issue 17), in a process of its own:
// answers every POST with a chat completion after DELAY ms, whose content is
// also a judge's verdict (`{"score": 1, ...}`), so that the `openai` target,
// `llm_judge` and the bare fetch loop can all call it. GET /count answers how
// many POSTs it got. Prints its base URL (`http://127.0.0.1:PORT/v1`) on stdout
// once it listens; runs until killed.
// Usage: deno run -A bench/_slow_server.ts DELAY_MS
const delay = Number(Deno.args[0] ?? 50);
const content = '{"score": 1, "reason": "supported by the context"}';
let count = 0;
let id = 0;
Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen({ port }) {
    console.log(`http://127.0.0.1:${port}/v1`);
  },
}, async (request) => {
  if (request.method === "GET") return new Response(String(count));
  const body = await request.text();
  count++;
  await new Promise((resolve) => setTimeout(resolve, delay));
  return Response.json({
    id: `chatcmpl-bench-${id++}`,
    object: "chat.completion",
    created: 1_700_000_000,
    model: "fake-model",
    choices: [{
      index: 0,
      message: { role: "assistant", content },
      finish_reason: "stop",
    }],
    usage: {
      prompt_tokens: Math.ceil(body.length / 4),
      completion_tokens: 13,
      total_tokens: Math.ceil(body.length / 4) + 13,
    },
  });
});
