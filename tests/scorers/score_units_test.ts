import assert from "node:assert/strict";
import {
  aggregatable,
  exactMatch,
  functionScorer,
  type FunctionScorerResult,
  nonEvaluable,
  type Score,
  scored,
  type Scorer,
  type ScorerContext,
  scoreUnitBatches,
  scoreUnits,
  type Unit,
} from "../../mod.ts";
import { delay, within } from "../_proc.ts";
import { checkScores } from "../../src/scorers/score_units.ts";

const UNIT: Unit = {
  example_id: "d#1",
  unit_id: "d#1",
  input: "q",
  output: "a",
};

function batchScorer(
  scores: unknown[],
  metrics: string[] = ["precision", "recall"],
): Scorer {
  return {
    name: "pr",
    version: "pr@1",
    metrics,
    score: () => Promise.resolve({ scores } as never),
  };
}

async function run(scorer: Scorer) {
  return await Array.fromAsync(
    ReadableStream.from([UNIT]).pipeThrough(scoreUnits([scorer])),
  );
}

Deno.test("scoreUnits gives one Score per declared metric, in declared order, whatever the batch order", async () => {
  const scores = await run(
    batchScorer([scored("recall", 1), scored("precision", 0.5)]),
  );
  assert.deepEqual(scores.map((s) => [s.metric, s.value]), [
    ["precision", 0.5],
    ["recall", 1],
  ]);
});

Deno.test("scoreUnits keeps each Score of a batch its own status, validity and value: one pass, meanings not merged", async () => {
  const scores = await run(
    batchScorer(
      [
        scored("precision", 0.25, { validity: "invalid" }),
        nonEvaluable("recall", { reason: "not applicable: no expected" }),
        scored("f1", 0.75),
      ],
      ["precision", "recall", "f1"],
    ),
  );
  assert.deepEqual(
    scores.map((s) => [s.metric, s.status, s.validity, s.value, s.passed]),
    [
      ["precision", "scored", "invalid", 0.25, false],
      ["recall", "non_evaluable", "not_applicable", null, undefined],
      ["f1", "scored", "valid", 0.75, true],
    ],
  );
  // Only the one scored and valid enters the math.
  assert.deepEqual(scores.filter(aggregatable).map((s) => s.metric), ["f1"]);
  for (const s of scores) assert.equal(s.unit_id, "d#1");
});

Deno.test("scoreUnits turns a declared metric left out of a batch into an error, not a missing Score", async () => {
  const scores = await run(batchScorer([scored("precision", 0.5)]));
  assert.deepEqual(scores.map((s) => [s.metric, s.status]), [[
    "precision",
    "scored",
  ], ["recall", "error"]]);
  assert.equal(scores[1]!.reason, 'scorer error: no Score for metric "recall"');
  const empty = await run(batchScorer([]));
  assert.deepEqual(empty.map((s) => [s.metric, s.status, s.value]), [
    ["precision", "error", null],
    ["recall", "error", null],
  ]);
});

Deno.test("scoreUnits files an invalid batch item under the metric it claims", async () => {
  const bad = { ...scored("recall", 1), value: "high" };
  const scores = await run(batchScorer([scored("precision", 0.5), bad]));
  assert.equal(scores[0]!.status, "scored");
  assert.equal(scores[1]!.metric, "recall");
  assert.equal(scores[1]!.status, "error");
  assert.match(scores[1]!.reason!, /^scorer error: invalid Score: "value"/);
});

Deno.test("scoreUnits refuses two Scores for one metric", async () => {
  const scores = await run(
    batchScorer([
      scored("precision", 0.5),
      scored("precision", 0.9),
      scored("recall", 1),
    ]),
  );
  assert.equal(scores.length, 2);
  assert.equal(scores[0]!.status, "error");
  assert.equal(
    scores[0]!.reason,
    'scorer error: two Scores for metric "precision"',
  );
  assert.equal(scores[1]!.value, 1);
});

Deno.test("scoreUnits treats an empty metrics list as the scorer's name", async () => {
  const scores = await run(batchScorer([], []));
  assert.deepEqual(scores.map((s) => [s.metric, s.status]), [["pr", "error"]]);
});

Deno.test("scoreUnitBatches tells onStart of each unit as its scoring starts, before its Score", async () => {
  const events: string[] = [];
  const slow: Scorer = {
    name: "m",
    version: "m@1",
    score: async (unit) => {
      events.push(`score ${unit.unit_id}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
      return scored("m", 1);
    },
  };
  const units = ["d#1", "d#2", "d#3"].map((id) => ({ ...UNIT, unit_id: id }));
  const batches = await Array.fromAsync(
    ReadableStream.from([units]).pipeThrough(
      scoreUnitBatches([slow], {
        concurrency: 1,
        onStart: (unit) => events.push(`start ${unit.unit_id}`),
      }),
    ),
  );
  assert.deepEqual(batches.flat().map((s) => s.unit_id), ["d#1", "d#2", "d#3"]);
  // One at a time: each start comes as the unit is taken, not as it is read.
  assert.deepEqual(events, [
    "start d#1",
    "score d#1",
    "start d#2",
    "score d#2",
    "start d#3",
    "score d#3",
  ]);
});

Deno.test("scoreUnits stamps a canonical Score's ids on a copy equal to parseScoreFor's, for each shape", async () => {
  const { parseScoreFor } = await import("../../src/score/mod.ts");
  const returned: Score[] = [
    scored("m", 1, { evaluator_version: "m@2" }),
    scored("m", 0, { reason: 'expected "a"', validity: "invalid" }),
    // Stale ids of another unit are replaced, not kept.
    scored("m", 0.5, { example_id: "old#9", unit_id: "old#9@2" }),
    {
      metric: "m",
      status: "skipped",
      validity: "not_measured",
      value: null,
      reason: "filtered",
      evaluator_version: "m@1",
      diagnostics: [],
      evidence_refs: [],
    },
    {
      metric: "m",
      status: "non_evaluable",
      validity: "not_applicable",
      value: null,
      evaluator_version: "m@1",
      diagnostics: [],
      evidence_refs: [],
    },
  ];
  for (const score of returned) {
    const scorer: Scorer = { name: "m", version: "m@1", score: () => score };
    const [out] = await Array.fromAsync(
      ReadableStream.from([UNIT]).pipeThrough(scoreUnits([scorer])),
    );
    const expected = parseScoreFor(score, UNIT);
    assert.deepEqual(out, expected);
    assert.deepEqual(Object.keys(out!), Object.keys(expected));
    assert.notEqual(out, score);
    assert.notEqual(out!.diagnostics, score.diagnostics);
    assert.notEqual(out!.evidence_refs, score.evidence_refs);
  }
});

/** Each Score's metric, status and first diagnostic code. */
function outcomes(scores: Score[]): string[][] {
  return scores.map((s) => [s.metric, s.status, s.diagnostics[0]?.code ?? ""]);
}

Deno.test("scoreUnits turns a scorer that never settles into a scorer.interrupted error once its signal aborts, in both forms", async () => {
  const unit = { ...UNIT, expected: "a" };
  const hang = functionScorer("hang", () => new Promise<number>(() => {}));
  const hangs: Scorer = {
    name: "hangs",
    version: "hangs@1",
    score: () => new Promise<Score>(() => {}),
  };
  for (const form of ["single", "batches"] as const) {
    const abort = new AbortController();
    const options = { signal: abort.signal };
    const scorers = [hang, exactMatch(), hangs];
    const scoring = form === "single"
      ? Array.fromAsync(
        ReadableStream.from([unit]).pipeThrough(scoreUnits(scorers, options)),
      )
      : Array.fromAsync(
        ReadableStream.from([[unit]]).pipeThrough(
          scoreUnitBatches(scorers, options),
        ),
      ).then((batches) => batches.flat());
    await delay(20);
    abort.abort();
    const scores = await within(scoring, 5000, `scoreUnits (${form})`);
    assert.deepEqual(outcomes(scores), [
      ["hang", "error", "scorer.interrupted"],
      ["exact_match", "scored", ""],
      ["hangs", "error", "scorer.interrupted"],
    ], form);
    assert.equal(
      scores[0]!.reason,
      'scorer error: scorer "hang" was interrupted',
    );
    assert.equal(scores[0]!.evaluator_version, "hang@1");
  }
  // A signal aborted before the stage starts interrupts it too.
  const scores = await within(
    Array.fromAsync(
      ReadableStream.from([unit]).pipeThrough(
        scoreUnits([hang], { signal: AbortSignal.abort() }),
      ),
    ),
    5000,
    "scoreUnits",
  );
  assert.deepEqual(outcomes(scores), [["hang", "error", "scorer.interrupted"]]);
});

Deno.test("functionScorer's timeout makes a late async function a scorer.timeout error and aborts its signal", async () => {
  let aborted: unknown;
  const slow = functionScorer(
    "slow",
    (_unit, { signal }) =>
      new Promise<number>((resolve) => {
        const timer = setTimeout(() => resolve(1), 1000);
        signal?.addEventListener("abort", () => {
          aborted = signal.reason;
          clearTimeout(timer);
        });
      }),
    { timeout: 0.05 },
  );
  const quick = functionScorer("quick", async () => {
    await delay(1);
    return 0.75;
  }, { timeout: 5 });
  // A synchronous function is not timed: its Score comes at once.
  const sync = functionScorer("sync", () => true, { timeout: 0.05 });
  assert.ok(!(sync.score(UNIT, {}) instanceof Promise));
  const scores = await Array.fromAsync(
    ReadableStream.from([UNIT]).pipeThrough(scoreUnits([slow, quick, sync])),
  );
  assert.deepEqual(outcomes(scores), [
    ["slow", "error", "scorer.timeout"],
    ["quick", "scored", ""],
    ["sync", "scored", ""],
  ]);
  assert.equal(
    scores[0]!.reason,
    'scorer error: scorer "slow" timed out after 0.05 s',
  );
  assert.equal(scores[1]!.value, 0.75);
  assert.ok(aborted instanceof Error && /timed out/.test(aborted.message));
  // The run's own signal still reaches a function with a timeout.
  const run = new AbortController();
  const stopped = functionScorer(
    "stopped",
    (_unit, { signal }) =>
      new Promise<number>((_, reject) =>
        signal?.addEventListener("abort", () => reject(new Error("stopped")))
      ),
    { timeout: 5 },
  );
  const pending = stopped.score(UNIT, { signal: run.signal });
  run.abort();
  await assert.rejects(Promise.resolve(pending), /stopped/);
  for (const bad of [0, -1, NaN, Infinity]) {
    assert.throws(() => functionScorer("m", () => 1, { timeout: bad }), {
      name: "RangeError",
      message:
        `The timeout of function scorer "m" must be a positive number of seconds, not ${bad}`,
    });
  }
});

Deno.test("functionScorer's function gets a signal it can hand to fetch as it is, and a request that hangs is stopped at the timeout", async () => {
  // The project compiles with exactOptionalPropertyTypes: a signal typed
  // `AbortSignal | undefined` is not a RequestInit's, and needed a `!`.
  const hung = Promise.withResolvers<void>();
  // On loopback, as every test server here: by default Deno.serve
  // listens on all interfaces (0.0.0.0).
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request) => {
      const answered = Promise.withResolvers<Response>();
      request.signal.addEventListener("abort", () => {
        hung.resolve();
        answered.resolve(new Response("late"));
      });
      return answered.promise;
    },
  );
  try {
    const judge = functionScorer("judge", async (_unit, { signal }) => {
      const response = await fetch(
        `http://127.0.0.1:${server.addr.port}/`,
        { signal },
      );
      return Number(await response.text());
    }, { timeout: 0.2 });
    const [score] = await Array.fromAsync(
      ReadableStream.from([UNIT]).pipeThrough(scoreUnits([judge])),
    );
    assert.deepEqual(outcomes([score!]), [[
      "judge",
      "error",
      "scorer.timeout",
    ]]);
    // The request the function started was cancelled with it.
    await hung.promise;
  } finally {
    await server.shutdown();
  }
});

Deno.test("functionScorer's context is a plain object: a copy keeps a working signal, and every field the caller gave reaches the function", async () => {
  // What the function saw of a copy of its context: whether the copy has
  // a signal, aborted or not, and the caller's own field.
  const seen: string[] = [];
  const note = (context: ScorerContext) => {
    const copies = [{ ...context }, Object.assign({}, context)];
    for (const copy of copies) {
      const signal = copy.signal;
      seen.push(
        `${signal instanceof AbortSignal ? signal.aborted : "none"} ${
          (copy as { extra?: unknown }).extra
        }`,
      );
    }
    return copies[0]!.signal;
  };
  const sync = functionScorer("sync", (_unit, context) => {
    note(context);
    return 1;
  });
  const run = new AbortController();
  const context = { signal: run.signal, extra: 1 } as ScorerContext;
  // The first call, and the later ones of a function known to be synchronous.
  for (let i = 0; i < 3; i++) sync.score(UNIT, context);
  sync.score(UNIT, { extra: 2 } as ScorerContext);
  sync.score(UNIT, { signal: AbortSignal.abort(), extra: 3 } as ScorerContext);
  assert.deepEqual(seen.splice(0), [
    ...Array(6).fill("false 1"),
    "false 2",
    "false 2",
    "true 3",
    "true 3",
  ]);
  // An async function's copied signal aborts on its timeout.
  let copied: AbortSignal | undefined;
  const slow = functionScorer("slow", (_unit, context) => {
    copied = note(context);
    return new Promise<number>(() => {});
  }, { timeout: 0.05 });
  await assert.rejects(
    Promise.resolve(slow.score(UNIT, context)),
    /scorer "slow" timed out after 0.05 s/,
  );
  assert.deepEqual(seen.splice(0), ["false 1", "false 1"]);
  assert.ok(copied?.aborted && /timed out/.test(String(copied.reason)));
  // A function that returned synchronously and then returns a promise: from
  // its next call on, each call's signal is its own again.
  let calls = 0;
  const mixed = functionScorer("mixed", (_unit, context) => {
    copied = note(context);
    return calls++ === 0 ? 1 : new Promise<number>(() => {});
  }, { timeout: 0.05 });
  mixed.score(UNIT, context);
  for (let i = 0; i < 2; i++) {
    await assert.rejects(
      Promise.resolve(mixed.score(UNIT, context)),
      /timed out/,
    );
  }
  assert.ok(copied?.aborted && /timed out/.test(String(copied.reason)));
  assert.ok(!run.signal.aborted);
  // An async function's copied signal follows the caller's: aborted at the
  // call, or when the caller's aborts while it runs.
  const waits = functionScorer("waits", (_unit, context) => {
    const { signal } = { ...context };
    return new Promise<number>((_, reject) => {
      if (signal!.aborted) reject(new Error(`at the call: ${signal!.reason}`));
      signal!.addEventListener("abort", () => reject(signal!.reason));
    });
  });
  await assert.rejects(
    Promise.resolve(waits.score(UNIT, { signal: AbortSignal.abort("gone") })),
    /at the call: gone/,
  );
  const stopping = new AbortController();
  const waiting = Promise.resolve(
    waits.score(UNIT, { signal: stopping.signal }),
  );
  stopping.abort(new Error("stopped"));
  await assert.rejects(waiting, /^Error: stopped$/);
});

Deno.test("functionScorer piles no listener of a synchronous call on the caller's signal: a function adding one per unit leaves the last ten at most", () => {
  // Listeners still held fire when the caller's signal aborts: before, each
  // call after the first synchronous one got the caller's signal itself, and
  // 200,000 units held 200,000 listeners on it.
  let fired = 0;
  const listens = functionScorer("listens", (_unit, { signal }) => {
    signal!.addEventListener("abort", () => fired++);
    return signal!.aborted ? 0 : 1;
  });
  const run = new AbortController();
  // One context for every call, as the stage gives.
  const context = { signal: run.signal };
  for (let i = 0; i < 1000; i++) {
    const s = listens.score(UNIT, context);
    assert.ok(!(s instanceof Promise) && !("scores" in s) && s.value === 1);
  }
  run.abort();
  // Only the calls sharing the last signal (ten at most) still listen.
  assert.ok(fired <= 10, `${fired} listeners fired`);
  // The signal still says the caller's has aborted when it has.
  const s = listens.score(UNIT, context);
  assert.ok(!(s instanceof Promise) && !("scores" in s) && s.value === 0);
});

Deno.test("functionScorer tells a synchronous call's listener of an abort when it happens, not at a later call", () => {
  // A synchronous function may start work that outlives its call (a
  // fetch it does not await) with its signal: that work stops when the run
  // does, even if no unit is scored after.
  const heard: number[] = [];
  let calls = 0;
  const starts = functionScorer("starts", (_unit, { signal }) => {
    const call = ++calls;
    signal!.addEventListener("abort", () => heard.push(call));
    return signal!.aborted ? 0 : 1;
  });
  const run = new AbortController();
  const context = { signal: run.signal };
  for (let i = 0; i < 25; i++) starts.score(UNIT, context);
  run.abort();
  // The first call had a signal of its own (not yet known synchronous);
  // those of the calls since share one per ten, and the last ten's hear.
  assert.ok(heard.includes(25), `heard: ${heard}`);
  // A new context with the same signal is given it stopped.
  const s = starts.score(UNIT, { signal: run.signal });
  assert.ok(!(s instanceof Promise) && !("scores" in s) && s.value === 0);
});

Deno.test("functionScorer's score() called directly settles after an abort: a function that never ends is a scorer.interrupted error a second later, as in the stage", async () => {
  const never = functionScorer("never", () => new Promise<number>(() => {}));
  const interrupted = (error: unknown) =>
    error instanceof Error &&
    error.message === 'scorer "never" was interrupted' &&
    (error as { code?: unknown }).code === "scorer.interrupted";
  // Aborted while it runs, and before it is called.
  const run = new AbortController();
  const running = Promise.resolve(never.score(UNIT, { signal: run.signal }));
  run.abort();
  await within(
    assert.rejects(running, interrupted),
    30_000,
    "score() of a function that never settles, aborted while it ran",
  );
  await within(
    assert.rejects(
      Promise.resolve(never.score(UNIT, { signal: AbortSignal.abort() })),
      interrupted,
    ),
    30_000,
    "score() of a function that never settles, called aborted",
  );
  // The stage's Score for it says the same.
  const aborted = new AbortController();
  aborted.abort();
  const [score] = await Array.fromAsync(
    ReadableStream.from([UNIT]).pipeThrough(
      scoreUnits([never], { signal: aborted.signal }),
    ),
  );
  assert.deepEqual(
    [score!.status, score!.reason, score!.diagnostics[0]?.code],
    [
      "error",
      'scorer error: scorer "never" was interrupted',
      "scorer.interrupted",
    ],
  );
});

Deno.test("functionScorer gives an async function 60 s by default: one that never settles is a scorer.timeout error, and the stage ends", async () => {
  // The platform's clock, made quick: a timer of a minute or more fires
  // after 10 ms. Without a default timeout no timer is set, and the stage
  // never ends (within() says so).
  const realSetTimeout = globalThis.setTimeout;
  const asked: number[] = [];
  globalThis.setTimeout = ((fn: () => void, ms?: number) => {
    asked.push(ms ?? 0);
    return realSetTimeout(fn, (ms ?? 0) >= 60_000 ? 10 : ms);
  }) as typeof setTimeout;
  let aborted: unknown;
  const never = functionScorer("never", (_unit, { signal }) => {
    signal?.addEventListener("abort", () => (aborted = signal.reason));
    return new Promise<number>(() => {});
  });
  try {
    const scores = await within(
      Array.fromAsync(
        ReadableStream.from([UNIT]).pipeThrough(
          scoreUnits([never, exactMatch()]),
        ),
      ),
      5000,
      "scoreUnits with a function that never settles",
    );
    assert.deepEqual(outcomes(scores), [
      ["never", "error", "scorer.timeout"],
      ["exact_match", "non_evaluable", ""],
    ]);
    assert.equal(
      scores[0]!.reason,
      'scorer error: scorer "never" timed out after 60 s',
    );
    assert.deepEqual([scores[0]!.value, scores[0]!.passed], [null, false]);
    assert.ok(asked.includes(60_000), `timers set: ${asked.join(", ")}`);
    assert.ok(aborted instanceof Error && /timed out/.test(aborted.message));
  } finally {
    globalThis.setTimeout = realSetTimeout;
  }
});

Deno.test("functionScorer sets no timer for an async function that settles at once, and one for each that waits", async () => {
  // A timer per unit cost 4.5 µs: 200,000 units that settle at once took
  // 1.5 to 2.5 s instead of 0.4. Counted, not timed.
  const realSetTimeout = globalThis.setTimeout;
  let timers = 0;
  globalThis.setTimeout = ((fn: () => void, ms?: number) => {
    if (ms === 60_000) timers++;
    return realSetTimeout(fn, ms);
  }) as typeof setTimeout;
  try {
    const units = Array.from({ length: 50 }, (_, i) => ({
      ...UNIT,
      unit_id: `u#${i}`,
    }));
    const atOnce = functionScorer("at_once", async (unit) => {
      await Promise.resolve();
      return (unit.output ?? "").length > 0;
    });
    const waits = functionScorer("waits", async () => {
      await delay(1);
      return 1;
    });
    const quick = await Array.fromAsync(
      ReadableStream.from(units).pipeThrough(scoreUnits([atOnce])),
    );
    assert.equal(quick.filter((s) => s.status === "scored").length, 50);
    assert.equal(timers, 0);
    const slow = await Array.fromAsync(
      ReadableStream.from(units.slice(0, 3)).pipeThrough(scoreUnits([waits])),
    );
    assert.equal(slow.filter((s) => s.status === "scored").length, 3);
    assert.equal(timers, 3);
  } finally {
    globalThis.setTimeout = realSetTimeout;
  }
});

Deno.test("scoreUnits files a function scorer's result that breaks a Score rule as scorer.invalid_score", async () => {
  const results = [
    NaN,
    { score: NaN },
    { score: 0.9, passed: "yes" },
    "yes",
  ] as unknown as FunctionScorerResult[];
  const scorers: Scorer[] = results.map((result, i) =>
    functionScorer(`m${i}`, () => result)
  );
  // A Score built against the rules inside a scorer of one's own, too.
  scorers.push({
    name: "own",
    version: "own@1",
    score: () => scored("own", NaN),
  });
  const scores = await Array.fromAsync(
    ReadableStream.from([UNIT]).pipeThrough(scoreUnits(scorers)),
  );
  assert.deepEqual(outcomes(scores), [
    ["m0", "error", "scorer.invalid_score"],
    ["m1", "error", "scorer.invalid_score"],
    ["m2", "error", "scorer.invalid_score"],
    ["m3", "error", "scorer.invalid_score"],
    ["own", "error", "scorer.invalid_score"],
  ]);
  assert.equal(
    scores[2]!.reason,
    'scorer error: invalid Score: "passed" must be a boolean, not "yes"',
  );
  for (const s of scores) {
    assert.ok(s.reason?.startsWith("scorer error: invalid Score: "), s.reason);
  }
});

Deno.test("functionScorer quotes what it was given back as TypeScript shows it: NaN, not JSON's null, and a large object cut", async () => {
  const unit = { ...UNIT, context: ["x".repeat(5000)] };
  const results = [
    { value: NaN },
    { value: 0.3, passed: true },
    undefined,
    unit,
  ] as unknown as FunctionScorerResult[];
  const scores = await Array.fromAsync(
    ReadableStream.from([UNIT]).pipeThrough(
      scoreUnits(results.map((r, i) => functionScorer(`m${i}`, () => r))),
    ),
  );
  const expected =
    "expected a number, a boolean, a verdict, a Score or a batch";
  const prefix = "scorer error: invalid Score: Function scorer";
  assert.deepEqual(scores.slice(0, 3).map((s) => s.reason), [
    `${prefix} "m0" returned { value: NaN }: ${expected} (a verdict gives its number as "score")`,
    `${prefix} "m1" returned { value: 0.3, passed: true }: ${expected} (a verdict gives its number as "score")`,
    `${prefix} "m2" returned undefined: ${expected}`,
  ]);
  const reason = scores[3]!.reason!;
  assert.ok(
    reason.startsWith(`${prefix} "m3" returned { example_id: "d#1",`),
    reason,
  );
  assert.ok(reason.length < 400, `${reason.length} characters`);
});

Deno.test("functionScorer's verdict without a number, or null, is an invalid Score that names nonEvaluable, the way to say a metric does not apply", async () => {
  const results = [
    { score: null },
    { score: undefined, reason: "no context" },
    null,
  ] as unknown as FunctionScorerResult[];
  const scorers = results.map((r, i) => functionScorer(`m${i}`, () => r));
  // The way it names: a Score of its own, out of the mean and the pass rate.
  scorers.push(
    functionScorer(
      "m3",
      () => nonEvaluable("m3", { reason: "not applicable: no context" }),
    ),
  );
  const scores = await Array.fromAsync(
    ReadableStream.from([UNIT]).pipeThrough(scoreUnits(scorers)),
  );
  const prefix = "scorer error: invalid Score: Function scorer";
  const hint = (m: string) =>
    `for a unit the metric does not apply to, return nonEvaluable("${m}", { reason: "not applicable: <why>" })`;
  assert.deepEqual(scores.map((s) => [s.status, s.validity, s.reason]), [
    [
      "error",
      "not_measured",
      `${prefix} "m0" returned { score: null }: a verdict's "score" is a finite number; ${
        hint("m0")
      }`,
    ],
    [
      "error",
      "not_measured",
      `${prefix} "m1" returned { score: undefined, reason: "no context" }: a verdict's "score" is a finite number; ${
        hint("m1")
      }`,
    ],
    [
      "error",
      "not_measured",
      `${prefix} "m2" returned null: expected a number, a boolean, a verdict, a Score or a batch; ${
        hint("m2")
      }`,
    ],
    ["non_evaluable", "not_applicable", "not applicable: no context"],
  ]);
  assert.ok(scores.every((s) => s.value === null));
});

Deno.test("scoreUnits refuses, as it is built, two scorers that give one metric", () => {
  const pr = batchScorer([], ["precision", "recall"]);
  const cases: Array<[Scorer[], string]> = [
    [
      [exactMatch(), exactMatch()],
      'The scorers at index 0 and 1 give the metric "exact_match" twice: Scores are told apart by metric; give each scorer a name of its own',
    ],
    [
      [pr, functionScorer("recall", () => 1)],
      'The scorers at index 0 and 1 give the metric "recall" twice: Scores are told apart by metric; give each scorer a name of its own',
    ],
    [
      [batchScorer([], ["a", "a"])],
      'The scorer at index 0 gives the metric "a" twice: Scores are told apart by metric; give each scorer a name of its own',
    ],
  ];
  for (const [scorers, message] of cases) {
    for (
      const build of [
        () => scoreUnits(scorers),
        () => scoreUnitBatches(scorers),
      ]
    ) assert.throws(build, { name: "TypeError", message });
  }
  // Named apart, the same scorer twice is two metrics.
  scoreUnits([exactMatch(), exactMatch({ name: "exact_match_2" })]);
});

Deno.test("scoreUnits refuses, as it is built, a scorer no Score of which could be made", () => {
  const good: Scorer = { name: "m", version: "m@1", score: () => 1 as never };
  const bad: Array<[Partial<Scorer>, string]> = [
    [
      { name: "" },
      'The scorer at index 1 must have a non-empty "name", not ""',
    ],
    [
      { version: "" },
      'The scorer at index 1 ("m") must have a non-empty "version", not ""',
    ],
    [
      { metrics: ["a", ""] },
      'The scorer at index 1 ("m") must have "metrics" that are non-empty strings, not ["a",""]',
    ],
  ];
  for (const [change, message] of bad) {
    const scorers = [exactMatch(), { ...good, ...change }];
    for (
      const build of [
        () => scoreUnits(scorers),
        () => scoreUnitBatches(scorers),
      ]
    ) assert.throws(build, { name: "TypeError", message });
  }
});

Deno.test("exact_match's Scores in a run are those its score() gives, checked and stamped with the unit's ids", async () => {
  // `run` takes exact_match's own path to a unit's Score, built once with
  // its ids; it must give what score() followed by checkScores gives.
  const units: Unit[] = [
    { ...UNIT, output: " yes\n", expected: "yes" },
    {
      ...UNIT,
      example_id: "d#2",
      unit_id: "d#2@1",
      output: "no",
      expected: "yes",
    },
    {
      ...UNIT,
      example_id: "d#3",
      unit_id: "d#3",
      output: "caf\u0065\u0301",
      expected: "caf\u00e9",
    },
    {
      ...UNIT,
      example_id: "d#4",
      unit_id: "d#4",
      output: "YES",
      expected: "yes",
    },
    {
      ...UNIT,
      example_id: "d#5",
      unit_id: "d#5",
      output: '{"a":1}',
      expected: { a: 1 },
    },
    { ...UNIT, example_id: "d#6", unit_id: "d#6", output: "x" },
    {
      ...UNIT,
      example_id: "d#7",
      unit_id: "d#7",
      output: "yes",
      expected: "yes",
      target_name: "t",
    },
    { input: "q", output: "no", expected: "yes" } as unknown as Unit,
  ];
  for (
    const scorer of [
      exactMatch(),
      exactMatch({ ignore_case: true, name: "em_ci" }),
      exactMatch({ normalize: "nfkc" }),
      // A script's scorers spread from it, which carry its own path too.
      { ...exactMatch(), score: () => scored("exact_match", 0.5) },
      { ...exactMatch(), name: "renamed" },
      { ...exactMatch(), version: "exact_match@mine" },
      // One whose score() a script replaced in place.
      Object.assign(exactMatch(), { score: () => scored("exact_match", 0.5) }),
    ]
  ) {
    const viaRun = await Array.fromAsync(
      ReadableStream.from(units).pipeThrough(scoreUnits([scorer])),
    );
    const viaScore = [];
    for (const unit of units) {
      const [score] = checkScores(await scorer.score(unit, {}), scorer, unit);
      viaScore.push(
        unit.target_name === undefined
          ? score
          : { ...score, target_name: unit.target_name },
      );
    }
    assert.deepEqual(viaRun, viaScore);
  }
});

Deno.test("exact_match itself takes its unit path (a run's speed rests on it); a scorer spread from it does not", async () => {
  // The path's guard refusing exact_match too would leave every Score the
  // same, only slower: no other test would see it.
  const { unitPathOf } = await import("../../src/scorers/_unit_path.ts");
  const unit: Unit = { ...UNIT, output: "yes", expected: "yes" };
  for (
    const scorer of [exactMatch(), exactMatch({ ignore_case: true })]
  ) {
    const path = unitPathOf(scorer);
    assert.ok(path !== undefined);
    const scores = await path.call(scorer, unit, {}, undefined as never);
    assert.ok(scores !== undefined, `${scorer.version} declined its own path`);
    assert.equal(scores[0]?.unit_id, unit.unit_id);
  }
  const spread = { ...exactMatch(), name: "renamed" };
  const carried = unitPathOf(spread);
  assert.ok(carried !== undefined);
  assert.equal(
    await carried.call(spread, unit, {}, undefined as never),
    undefined,
  );
});

Deno.test("scoreUnits and scoreUnitBatches are typed as giving Scores whose ids are there", async () => {
  // Type-checked with the file: before the stages said so, `s.unit_id` was a
  // `string | undefined` and a script needed `!` for what is always set.
  const units: Unit[] = [UNIT, { ...UNIT, example_id: "d#2", unit_id: "d#2" }];
  const scores = await Array.fromAsync(
    ReadableStream.from(units).pipeThrough(scoreUnits([exactMatch()])),
  );
  const ids: string[] = scores.map((s) => s.unit_id);
  const examples: string[] = scores.map((s) => s.example_id);
  assert.deepEqual([ids, examples], [["d#1", "d#2"], ["d#1", "d#2"]]);
  const batches = await Array.fromAsync(
    ReadableStream.from([units]).pipeThrough(scoreUnitBatches([exactMatch()])),
  );
  const batchIds: string[] = batches.flat().map((s) => s.unit_id);
  assert.deepEqual(batchIds, ["d#1", "d#2"]);
});

Deno.test("scoreUnits: a function scorer that honours its signal, ending with its reason as fetch does, is scorer.interrupted, as one that ignores it", async () => {
  const run = new AbortController();
  const honours = functionScorer(
    "honours",
    (_unit, { signal }) =>
      new Promise<number>((_resolve, reject) => {
        signal!.addEventListener("abort", () => reject(signal!.reason));
        queueMicrotask(() => run.abort());
      }),
  );
  const [s] = await Array.fromAsync(
    ReadableStream.from([UNIT]).pipeThrough(
      scoreUnits([honours], { signal: run.signal }),
    ),
  );
  assert.equal(s?.status, "error");
  assert.equal(s?.diagnostics[0]?.code, "scorer.interrupted", s?.reason ?? "");
  assert.equal(s?.reason, 'scorer error: scorer "honours" was interrupted');
});
