// `deno run -A bench/hash_bench.ts [--rounds N]`: what each way of hashing
// SHA-256 costs evalpipe, to decide which one `fingerprint` uses. Each round
// starts a fresh process per way (alternating), which hashes one short text
// (start-up: the time to the first digest and the process's RSS after it),
// then 20,000 cache keys shaped as `cacheKey` hashes them (per key). Medians.
//
// - ts: src/fingerprint/_sha256.ts, synchronous, plain TypeScript.
// - subtle: `crypto.subtle.digest`, asynchronous, built into the runtime.
// - node: `node:crypto` imported lazily (Deno's Node layer), synchronous after.

import { parseFlags } from "../src/cli/flags.ts";

const { flags } = parseFlags(Deno.args, {
  rounds: { type: "integer", default: 7, help: "Fresh processes per way" },
  child: { type: "string", help: "Internal: time one way in this process" },
});
const ROUNDS = flags.rounds;
const KEYS = 20_000;
const WAYS = ["ts", "subtle", "node"] as const;
type Way = typeof WAYS[number];

/** Hashes `parts`, each followed by a NUL, as `fingerprint` does. */
type Hash = (parts: string[]) => string | Promise<string>;

async function load(way: Way): Promise<Hash> {
  if (way === "ts") {
    const { Sha256 } = await import("../src/fingerprint/_sha256.ts");
    return (parts) => {
      const hash = new Sha256();
      for (const part of parts) hash.update(part).update("\0");
      return hash.hex();
    };
  }
  if (way === "subtle") {
    const encoder = new TextEncoder();
    return async (parts) => {
      const digest = await crypto.subtle.digest(
        "SHA-256",
        encoder.encode(parts.join("\0") + "\0"),
      );
      return Array.from(
        new Uint8Array(digest),
        (b) => b.toString(16).padStart(2, "0"),
      ).join("");
    };
  }
  const { createHash } = await import("node:crypto");
  return (parts) => {
    const hash = createHash("sha256");
    for (const part of parts) hash.update(part).update("\0");
    return hash.digest("hex");
  };
}

/** One fresh process's figures for `way`. */
async function child(way: Way): Promise<void> {
  const start = performance.now();
  const hash = await load(way);
  const first = await hash(["dataset: cases.jsonl\n"]);
  const startup = performance.now() - start;
  const rss = Deno.memoryUsage().rss / 2 ** 20;
  const identity = JSON.stringify({
    type: "openai",
    base_url: "http://127.0.0.1:9/v1",
    model: "fake-target",
    params: { temperature: 0 },
  });
  const requests = Array.from({ length: KEYS }, (_, i) =>
    JSON.stringify({
      model: "fake-target",
      messages: [{ role: "user", content: `Q: question ${i} about refunds` }],
      temperature: 0,
    }));
  const t = performance.now();
  let last = "";
  for (const request of requests) last = await hash([identity, request, "1"]);
  const perKey = (performance.now() - t) * 1000 / KEYS;
  console.log(JSON.stringify({ startup, rss, perKey, first, last }));
}

if (flags.child !== undefined) {
  await child(flags.child as Way);
} else {
  const runs = new Map<Way, Array<Record<string, number | string>>>(
    WAYS.map((w) => [w, []]),
  );
  for (let round = 0; round < ROUNDS; round++) {
    for (const way of WAYS) {
      const { code, stdout } = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", import.meta.filename!, "--child", way],
        stdout: "piped",
        stderr: "inherit",
      }).output();
      if (code !== 0) throw new Error(`${way} exited ${code}`);
      runs.get(way)!.push(JSON.parse(new TextDecoder().decode(stdout)));
    }
  }
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const m = s.length >> 1;
    return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
  };
  const digests = new Set([...runs.values()].flat().map((r) => r.last));
  if (digests.size !== 1) throw new Error("the ways disagree");
  console.log(
    `SHA-256 in evalpipe: fresh processes, medians of ${ROUNDS} alternating rounds; ` +
      `Deno ${Deno.version.deno}\n`,
  );
  console.log(
    "| way | first digest (start-up) | RSS after it | per cache key |",
  );
  console.log("| --- | ---: | ---: | ---: |");
  for (const [way, rows] of runs) {
    const of = (k: string) => median(rows.map((r) => r[k] as number));
    console.log(
      `| ${way} | ${of("startup").toFixed(1)} ms | ${
        of("rss").toFixed(1)
      } MiB | ${of("perKey").toFixed(2)} µs |`,
    );
  }
}
