// A loopback HTTP service for bench/matrix_bench.ts, run in a process of its
// own: POST /<name> answers `{"answer": <input upper-cased>}` after the delay
// `--delay name=MS` gives that name (0 for any other). It prints its port on
// stdout, then serves until killed.
//
// Usage: deno run -A bench/_latency_server.ts --delay fast=10 --delay slow=50

const delays = new Map<string, number>();
for (let i = 0; i < Deno.args.length; i++) {
  if (Deno.args[i] !== "--delay") continue;
  const [name, ms] = (Deno.args[++i] ?? "").split("=");
  delays.set(name!, Number(ms));
}

const server = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen() {} },
  async (request) => {
    const name = new URL(request.url).pathname.slice(1);
    const body = await request.json() as { input?: unknown };
    const ms = delays.get(name) ?? 0;
    if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
    return Response.json({ answer: String(body.input).toUpperCase() });
  },
);
console.log(server.addr.port);
await server.finished;
