// What an evalpipe command allocates, and where: V8's sampling heap profiler,
// driven over the inspector, counts every object made while the command runs
// (those the collector has freed since included), by the function that made
// it. Bytes allocated decide how often the young generation is collected, a
// sixth of a 200,000-case `run`'s CPU; unlike a time, the total barely moves
// with the machine's load, so two versions can be compared on a busy machine.
// Usage: deno run -A bench/_alloc_profile.ts [--top N] [--cwd DIR] -- CLI_ARGS...
// e.g.   deno run -A bench/_alloc_profile.ts --cwd /tmp/big -- run suite.yaml
// Prints the total and the functions that allocate most (bytes, share).

const DONE = "EVALPIPE_ALLOC_DONE";

if (Deno.args[0] === "--child") {
  // Run in the profiled process: the command, then a marker, then a wait
  // for the profile to be taken (an exit would end the inspector session).
  const { main } = await import("../cli.ts");
  const code = await main(Deno.args.slice(1));
  console.error(DONE);
  await new Promise((resolve) => setTimeout(resolve, 60_000));
  Deno.exit(code);
}

const split = Deno.args.indexOf("--");
if (split < 0) {
  throw new Error(
    "Usage: bench/_alloc_profile.ts [--top N] [--cwd DIR] -- CLI_ARGS...",
  );
}
const own = Deno.args.slice(0, split);
const option = (name: string) => {
  const i = own.indexOf(name);
  return i < 0 ? undefined : own[i + 1];
};
const top = Number(option("--top") ?? 15);
const port = 9229 + Math.floor(Math.random() * 500) + 200;
const child = new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    "-A",
    `--inspect-brk=127.0.0.1:${port}`,
    "--v8-flags=--max-semi-space-size=16",
    new URL(import.meta.url).pathname,
    "--child",
    ...Deno.args.slice(split + 1),
  ],
  cwd: option("--cwd") ?? Deno.cwd(),
  stdout: "null",
  stderr: "piped",
}).spawn();
const stderr = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
let seen = "";
async function waitFor(text: string): Promise<void> {
  while (!seen.includes(text)) {
    const { value, done } = await stderr.read();
    if (done) throw new Error(`the command ended first: ${seen.slice(-2000)}`);
    seen += value;
  }
}

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

await waitFor("Debugger listening");
const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`))
  .json() as { webSocketDebuggerUrl: string }[];
const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl);
await new Promise((resolve) => socket.onopen = resolve);
let nextId = 0;
const replies = new Map<number, (result: unknown) => void>();
socket.onmessage = (event) => {
  const message = JSON.parse(event.data);
  replies.get(message.id)?.(message.result);
  replies.delete(message.id);
};
function send(method: string, params: object = {}): Promise<unknown> {
  const id = ++nextId;
  return new Promise((resolve) => {
    replies.set(id, resolve);
    socket.send(JSON.stringify({ id, method, params }));
  });
}

await send("HeapProfiler.enable");
await send("HeapProfiler.startSampling", {
  samplingInterval: 1024,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
});
await send("Runtime.runIfWaitingForDebugger");
await waitFor(DONE);
const { profile } = await send("HeapProfiler.stopSampling") as {
  profile: { head: ProfileNode };
};
socket.close();
child.kill();
await child.status;

const bySite = new Map<string, number>();
let total = 0;
const stack = [profile.head];
for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
  const { functionName, url, lineNumber } = node.callFrame;
  const site = `${functionName || "(anonymous)"} ${url.split("/").at(-1)}:${
    lineNumber + 1
  }`;
  bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
  total += node.selfSize;
  stack.push(...node.children);
}
const mb = (bytes: number) => (bytes / 1e6).toFixed(1).padStart(7);
console.log(`allocated ${mb(total)} MB in all`);
for (
  const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, top)
) {
  console.log(
    `${mb(bytes)} MB ${(100 * bytes / total).toFixed(1).padStart(5)}%  ${site}`,
  );
}
