// What a function scorer's context costs per unit: 200,000 units through
// `scoreUnits` with one `functionScorer`, synchronous and async, whose
// function ignores its context, reads `context.signal`, copies the
// context (`{ ...context }`) and reads the copy's, or adds an abort
// listener to its signal (never removed); and the same calls of
// `scorer.score` alone, in a loop. Rounds alternate between kinds (and
// between the trees given); each kind's median is printed, in milliseconds
// of CPU (user and system: steadier than the wall clock on a shared
// machine) and of the wall clock.
// Usage: deno run -A bench/_function_scorer_context.ts [ROUNDS] [TREE...]
// e.g.   deno run -A bench/_function_scorer_context.ts 7 /tmp/before /tmp/after
// A TREE is a clone's root (default: this one's).

import { cpuUsage } from "node:process";
import type * as Scorers from "../src/scorers/mod.ts";

const UNITS = 200_000;
const rounds = Number(Deno.args[0] ?? 7);
const trees = Deno.args.length > 1
  ? Deno.args.slice(1)
  : [new URL("..", import.meta.url).pathname];

type Fn = Parameters<typeof Scorers.functionScorer>[1];
const kinds: [string, Fn][] = [
  ["sync", () => 1],
  ["sync, reads signal", (_unit, context) => context.signal?.aborted ? 0 : 1],
  ["sync, spreads", (_unit, context) => ({ ...context }).signal ? 1 : 0.5],
  [
    "sync, adds listener",
    (_unit, context) => {
      context.signal?.addEventListener("abort", () => {});
      return 1;
    },
  ],
  ["async", () => Promise.resolve(1)],
  [
    "async, spreads",
    (_unit, context) => Promise.resolve(({ ...context }).signal ? 1 : 0.5),
  ],
];

const units = Array.from({ length: UNITS }, (_, i) => ({
  example_id: `d#${i}`,
  unit_id: `d#${i}`,
  input: "q",
  output: "a",
}));
const modules = await Promise.all(
  trees.map((tree) =>
    import(`${tree.replace(/\/$/, "")}/src/scorers/mod.ts`) as Promise<
      typeof Scorers
    >
  ),
);
const times = new Map<string, { cpu: number[]; wall: number[] }>();
const values = new Map<string, number>();

/** Times `run`, CPU and wall clock, under `key` after the warm-up round. */
async function measure(key: string, round: number, run: () => Promise<void>) {
  const cpu = cpuUsage();
  const start = performance.now();
  await run();
  const wall = performance.now() - start;
  const used = cpuUsage(cpu);
  if (round === 0) return;
  const t = times.get(key) ?? { cpu: [], wall: [] };
  t.cpu.push((used.user + used.system) / 1000);
  t.wall.push(wall);
  times.set(key, t);
}

for (let round = 0; round < rounds + 1; round++) {
  for (const [t, tree] of trees.entries()) {
    const { functionScorer, scoreUnits } = modules[t]!;
    for (const [kind, fn] of kinds) {
      const scorer = functionScorer("m", fn);
      let sum = 0;
      await measure(`${tree}\t${kind}\tstage`, round, async () => {
        await ReadableStream.from(units).pipeThrough(scoreUnits([scorer]))
          .pipeTo(
            new WritableStream({ write: (s) => void (sum += s.value ?? 0) }),
          );
      });
      values.set(`${tree}\t${kind}`, sum / UNITS);
      // The scorer alone, called as the stage calls it.
      const context = Object.freeze({ signal: new AbortController().signal });
      await measure(`${tree}\t${kind}\tscore()`, round, async () => {
        for (const unit of units) {
          const s = scorer.score(unit, context);
          if (s instanceof Promise) await s;
        }
      });
    }
  }
}
const median = (list: number[]) =>
  [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;
console.log(
  "tree\tkind\tthrough\tCPU ms\tmin\tmax\twall ms\tmean value",
);
for (
  const [key, { cpu, wall }] of [...times].sort(([a], [b]) => a < b ? -1 : 1)
) {
  console.log(
    `${key}\t${median(cpu).toFixed(0)}\t${Math.min(...cpu).toFixed(0)}\t${
      Math.max(...cpu).toFixed(0)
    }\t${median(wall).toFixed(0)}\t${
      values.get(key.slice(0, key.lastIndexOf("\t")))
    }`,
  );
}
