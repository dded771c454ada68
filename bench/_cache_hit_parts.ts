// What a cache hit costs, part by part (issue 17, goal 5's cached rerun), in
// CPU of this thread over 10,000 cases of the `openai` target: the request
// built and serialised, the key, indexing the pack (per entry), a lookup, and
// a cached target's whole call. The pack is written here first, through
// `TargetCache.set`, so no server is needed. Medians of 7 rounds, warm.
// Usage: deno run -A bench/_cache_hit_parts.ts [EVALPIPE_ROOT]
// (EVALPIPE_ROOT: another worktree's folder, to compare two trees with the
// same script.)
const root = Deno.args[0] ?? new URL("..", import.meta.url).pathname;
const { openaiTarget } = await import(`${root}/src/targets/openai_target.ts`);
const { cacheKey, cachedTarget, TargetCache } = await import(
  `${root}/src/targets/cache.ts`
);

const libc = Deno.dlopen("libc.so.6", {
  clock_gettime: { parameters: ["i32", "buffer"], result: "i32" },
});
const timespec = new BigInt64Array(2);
/** This thread's CPU time in µs (CLOCK_THREAD_CPUTIME_ID). */
const cpu = () => {
  libc.symbols.clock_gettime(3, timespec);
  return Number(timespec[0]!) * 1e6 + Number(timespec[1]!) / 1e3;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

const N = 10_000;
const target = openaiTarget(
  { base_url: "http://127.0.0.1:9/v1", model: "fake-model" },
  () => undefined,
);
const cases = Array.from({ length: N }, (_, i) => ({
  input: `question ${i}`,
  expected: "answer",
}));
const dir = await Deno.makeTempDir({ prefix: "evalpipe_hits_" });
try {
  const writer = new TargetCache(dir);
  await Promise.all(cases.map((c, i) =>
    writer.set(cacheKey(target, c, 1), {
      output: `answer ${i}`,
      info: {
        model: "fake-model",
        usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
        finish_reason: "stop",
        attempts: 1,
      },
    })
  ));
  const parts: Record<string, number[]> = {
    request: [],
    key: [],
    index: [],
    lookup: [],
    call: [],
  };
  let hits = 0;
  for (let r = 0; r < 7; r++) {
    let t = cpu();
    for (const c of cases) JSON.stringify(target.request(c));
    parts.request!.push((cpu() - t) / N);
    t = cpu();
    const keys = cases.map((c) => cacheKey(target, c, 1));
    parts.key!.push((cpu() - t) / N);
    const cache = new TargetCache(dir, { mode: "replay" });
    t = cpu();
    cache.peek("0".repeat(64)); // the first lookup indexes the pack
    parts.index!.push((cpu() - t) / N);
    t = cpu();
    for (const k of keys) if (cache.lookup(k) !== undefined) hits++;
    parts.lookup!.push((cpu() - t) / N);
    const cached = cachedTarget(target, cache);
    t = cpu();
    for (const c of cases) cached.call(c, { epoch: 1 });
    parts.call!.push((cpu() - t) / N);
  }
  if (hits !== 7 * N) throw new Error(`${hits} hits, not ${7 * N}`);
  console.log(
    `${root}: ${
      Object.entries(parts).map(([k, v]) => `${k} ${median(v).toFixed(2)}`)
        .join(", ")
    } µs per case (index: per entry)`,
  );
} finally {
  await Deno.remove(dir, { recursive: true });
}
