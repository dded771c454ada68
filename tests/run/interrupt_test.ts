import assert from "node:assert/strict";
import { signalExitCode } from "../../src/run/mod.ts";

const INTERRUPT = new URL("../../src/run/interrupt.ts", import.meta.url).href;

// A child that listens with onInterrupt and logs, with times since the
// first signal, when each controller is aborted and each signal is seen.
const PROBE = `
import { onInterrupt } from ${JSON.stringify(INTERRUPT)};
const graceMs = Number(Deno.args[0]);
const stop = new AbortController();
const abort = new AbortController();
let first = 0;
const since = () => Math.round(performance.now() - first);
const log = (line) => console.log(line);
const interrupt = onInterrupt(stop, abort, {
  graceMs,
  onSignal(sig, again) {
    if (!again) first = performance.now();
    log(\`signal \${sig} \${again ? "again" : "first"} aborted=\${abort.signal.aborted}\`);
  },
});
stop.signal.addEventListener("abort", () => log(\`stop \${since()}\`));
await new Promise((resolve) => {
  abort.signal.addEventListener("abort", () => { log(\`abort \${since()}\`); resolve(); });
  log("ready");
});
log(\`received \${interrupt.signal}\`);
interrupt.dispose();
log("disposed");
await new Promise((r) => setTimeout(r, 5000));
log("not killed");
`;

interface Probe {
  child: Deno.ChildProcess;
  lines: string[];
  /** Resolves when a line matching `pattern` has come. */
  until(pattern: RegExp): Promise<string>;
}

async function probe(graceMs: number, dir: string): Promise<Probe> {
  await Deno.writeTextFile(`${dir}/probe.ts`, PROBE);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${dir}/probe.ts`, String(graceMs)],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines: string[] = [];
  const waiting: Array<[RegExp, (line: string) => void]> = [];
  (async () => {
    for await (
      const chunk of child.stdout.pipeThrough(new TextDecoderStream())
    ) {
      for (const line of chunk.split("\n").filter((l) => l !== "")) {
        lines.push(line);
        for (const w of waiting.filter(([p]) => p.test(line))) {
          waiting.splice(waiting.indexOf(w), 1);
          w[1](line);
        }
      }
    }
  })();
  return {
    child,
    lines,
    until(pattern) {
      const seen = lines.find((l) => pattern.test(l));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve) => waiting.push([pattern, resolve]));
    },
  };
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("onInterrupt stops the intake on the first signal and aborts after the grace period", async () => {
  await withDir(async (dir) => {
    const p = await probe(1000, dir);
    await p.until(/^ready$/);
    p.child.kill("SIGTERM");
    const abort = await p.until(/^abort /);
    assert.deepEqual(p.lines.slice(0, 2), [
      "ready",
      "signal SIGTERM first aborted=false",
    ]);
    const stopped = Number(/^stop (\d+)$/.exec(p.lines[2]!)?.[1]);
    assert.ok(stopped < 500, `stopped after ${stopped} ms, not at once`);
    const ms = Number(abort.split(" ")[1]);
    assert.ok(ms >= 990 && ms < 5000, `aborted after ${ms} ms`);
    await p.until(/^disposed$/);
    // Disposed: the next signal is the default action again.
    p.child.kill("SIGTERM");
    const status = await p.child.status;
    assert.equal(status.signal, "SIGTERM");
    assert.ok(p.lines.includes("received SIGTERM"));
    assert.ok(!p.lines.includes("not killed"));
  });
});

Deno.test("onInterrupt aborts at once on a second signal", async () => {
  await withDir(async (dir) => {
    const p = await probe(60_000, dir);
    await p.until(/^ready$/);
    p.child.kill("SIGINT");
    await p.until(/^stop /);
    p.child.kill("SIGINT");
    const abort = await p.until(/^abort /);
    assert.ok(Number(abort.split(" ")[1]) < 5000);
    assert.equal(
      await p.until(/ again /),
      "signal SIGINT again aborted=true",
    );
    await p.until(/^disposed$/);
    p.child.kill("SIGINT");
    assert.equal((await p.child.status).signal, "SIGINT");
  });
});

Deno.test("signalExitCode is 128 plus the signal's number", () => {
  assert.equal(signalExitCode("SIGINT"), 130);
  assert.equal(signalExitCode("SIGTERM"), 143);
});
