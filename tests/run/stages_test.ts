/**
 * `run` is the exported stages: their batch forms give what the per-item
 * forms give, they share one set of defaults, and `runSuite` writes what the
 * stages piped by hand write.
 */

import assert from "node:assert/strict";
import {
  aggregateInto,
  Aggregator,
  concurrentMap,
  contains,
  DEFAULTS,
  exactMatch,
  type Example,
  functionScorer,
  functionTarget,
  type InvalidCase,
  invalidCaseText,
  LineBatchStream,
  LineStream,
  loadDatasetBatches,
  ndjsonBatchSink,
  ndjsonSink,
  replayTarget,
  runMatrixBatches,
  runSuite,
  runTarget,
  runTargetBatches,
  type Score,
  scored,
  type Scorer,
  scoreUnitBatches,
  scoreUnits,
  type Target,
  type Unit,
  validateScore,
  validateScoreBatches,
  validateScores,
  valueRangesOf,
} from "../../mod.ts";
import { cli } from "../_cli.ts";

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

function example(n: number, output: string | null = "a"): Example {
  return output === null
    ? {
      example_id: `d.jsonl#${n}`,
      line: n,
      case: null,
      invalid: '"input" is missing',
    }
    : {
      example_id: `d.jsonl#${n}`,
      line: n,
      case: { input: `q${n}`, expected: "a", output },
    };
}

/** Some examples synchronous, some slow: the order must hold across both. */
const mixed: Target = {
  call(testCase) {
    const output = String(testCase.output);
    return testCase.input === "q3" || testCase.input === "q6"
      ? delay(5).then(() => ({ output }))
      : { output };
  },
};

function withoutLatency(units: Unit[]): Unit[] {
  return units.map((u) => ({ ...u, target: { ...u.target, latency_ms: 0 } }));
}

function chunked<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) {
    out.push(items.slice(i, i + size));
  }
  return out;
}

Deno.test("runTargetBatches gives runTarget's units in runTarget's order, whatever the batches", async () => {
  const examples = Array.from(
    { length: 9 },
    (_, i) => example(i + 1, i === 4 ? null : i % 2 ? "a" : "b"),
  );
  for (const epochs of [1, 3]) {
    for (const concurrency of [1, 2, 8]) {
      const options = { epochs, concurrency };
      const single = await Array.fromAsync(
        ReadableStream.from(examples).pipeThrough(runTarget(mixed, options)),
      );
      for (const size of [1, 4, 9]) {
        const batches = await Array.fromAsync(
          ReadableStream.from(chunked(examples, size)).pipeThrough(
            runTargetBatches(mixed, options),
          ),
        );
        assert.ok(batches.every((b) => b.length > 0), "an empty batch");
        assert.deepEqual(
          withoutLatency(batches.flat()),
          withoutLatency(single),
          `epochs ${epochs}, concurrency ${concurrency}, batches of ${size}`,
        );
      }
    }
  }
});

Deno.test("scoreUnitBatches gives scoreUnits' Scores in scoreUnits' order", async () => {
  const units: Unit[] = Array.from({ length: 12 }, (_, i) => ({
    example_id: `d#${i}`,
    unit_id: `d#${i}`,
    input: `q${i}`,
    output: i % 3 ? "a" : "b",
    expected: "a",
    ...(i === 7 ? { target: { latency_ms: 0, error: "boom" } } : {}),
  }));
  const slow = functionScorer("slow", async (unit) => {
    await delay(unit.unit_id === "d#2" ? 10 : 1);
    return unit.output === "a";
  });
  const scorers: Scorer[] = [exactMatch(), slow];
  const single = await Array.fromAsync(
    ReadableStream.from(units).pipeThrough(
      scoreUnits(scorers, { concurrency: 3 }),
    ),
  );
  assert.equal(single.length, 24);
  for (const size of [1, 5, 12]) {
    const batches = await Array.fromAsync(
      ReadableStream.from(chunked(units, size)).pipeThrough(
        scoreUnitBatches(scorers, { concurrency: 3 }),
      ),
    );
    assert.deepEqual(batches.flat(), single, `batches of ${size}`);
  }
});

/** A target that counts the calls in flight at once. */
function counting(): { target: Target; most: () => number } {
  let now = 0;
  let most = 0;
  return {
    target: {
      async call(testCase) {
        most = Math.max(most, ++now);
        await delay(2);
        now--;
        return { output: String(testCase.input) };
      },
    },
    most: () => most,
  };
}

Deno.test("the target and scoring stages, in both forms, default to DEFAULTS.concurrency calls in flight", async () => {
  assert.equal(DEFAULTS.concurrency, 8);
  const examples = Array.from({ length: 40 }, (_, i) => example(i + 1));
  for (const form of ["single", "batches"] as const) {
    const { target, most } = counting();
    if (form === "single") {
      await Array.fromAsync(
        ReadableStream.from(examples).pipeThrough(runTarget(target)),
      );
    } else {
      await Array.fromAsync(
        ReadableStream.from([examples]).pipeThrough(runTargetBatches(target)),
      );
    }
    assert.equal(most(), DEFAULTS.concurrency, `runTarget (${form})`);
  }
  const units = await Array.fromAsync(
    ReadableStream.from(examples).pipeThrough(runTarget(replayTarget())),
  );
  for (const form of ["single", "batches"] as const) {
    let now = 0;
    let most = 0;
    const scorer = functionScorer("slow", async () => {
      most = Math.max(most, ++now);
      await delay(2);
      now--;
      return 1;
    });
    if (form === "single") {
      await Array.fromAsync(
        ReadableStream.from(units).pipeThrough(scoreUnits([scorer])),
      );
    } else {
      await Array.fromAsync(
        ReadableStream.from([units]).pipeThrough(scoreUnitBatches([scorer])),
      );
    }
    assert.equal(most, DEFAULTS.concurrency, `scoreUnits (${form})`);
  }
});

Deno.test("runTarget's stop ends the intake: the calls in flight finish, no new one starts, in both forms", async () => {
  for (const epochs of [1, 2]) {
    for (const form of ["single", "batches"] as const) {
      const stop = new AbortController();
      const called: string[] = [];
      const target: Target = {
        async call(testCase, context) {
          called.push(`${testCase.input}@${context.epoch}`);
          if (testCase.input === "q3") stop.abort();
          await delay(1);
          return { output: "a" };
        },
      };
      const examples = Array.from({ length: 6 }, (_, i) => example(i + 1));
      const options = { stop: stop.signal, concurrency: 2, epochs };
      const units = form === "single"
        ? await Array.fromAsync(
          ReadableStream.from(examples).pipeThrough(runTarget(target, options)),
        )
        : (await Array.fromAsync(
          ReadableStream.from(chunked(examples, 4)).pipeThrough(
            runTargetBatches(target, options),
          ),
        )).flat();
      // An example once taken runs all its epochs; none after it starts.
      const taken = epochs === 1
        ? ["q1@1", "q2@1", "q3@1"]
        : ["q1@1", "q1@2", "q2@1", "q2@2", "q3@1", "q3@2"];
      assert.deepEqual(called, taken, `${form}, epochs ${epochs}`);
      assert.deepEqual(
        units.map((u) => u.input + "@" + (u.unit_id.split("@")[1] ?? "1")),
        taken,
      );
    }
  }
});

Deno.test("runTarget's onInvalidRecord is called once per malformed record, before its units, even when all are skipped", async () => {
  const examples = [example(1), example(2, null), example(3, null)];
  for (const form of ["single", "batches"] as const) {
    const events: string[] = [];
    const target: Target = {
      call(testCase) {
        events.push(`call ${testCase.input}`);
        return { output: "a" };
      },
    };
    const stage = (options: Parameters<typeof runTarget>[1]) =>
      form === "single"
        ? ReadableStream.from(examples).pipeThrough(runTarget(target, options))
        : ReadableStream.from([examples]).pipeThrough(
          runTargetBatches(target, options),
        ).pipeThrough(
          new TransformStream<Unit[], Unit>({
            transform(batch, controller) {
              for (const unit of batch) controller.enqueue(unit);
            },
          }),
        );
    const units = await Array.fromAsync(stage({
      epochs: 2,
      skip: (unitId) => unitId.startsWith("d.jsonl#3@"),
      onInvalidRecord: (e) => events.push(`invalid ${e.line}`),
    }));
    assert.deepEqual(events, [
      "call q1",
      "call q1",
      "invalid 2",
      "invalid 3",
    ], form);
    assert.deepEqual(units.map((u) => [u.unit_id, u.invalid]), [
      ["d.jsonl#1@1", undefined],
      ["d.jsonl#1@2", undefined],
      ["d.jsonl#2@1", '"input" is missing'],
      ["d.jsonl#2@2", '"input" is missing'],
    ], form);
  }
});

/** Candidates of every kind: canonical Scores and what is not quite one. */
function candidates(): unknown[] {
  const ok = scored("m", 0.5, { evaluator_version: "m@1" });
  const withIds = validateScore({ ...ok, example_id: "d#1", unit_id: "d#1" });
  class Instance {
    constructor() {
      Object.assign(this, ok);
    }
  }
  return [
    ok,
    withIds,
    scored("m", 1, { reason: "fine", example_id: "d#2" }),
    { ...ok, extra: 1 }, // an unknown key is dropped
    {
      passed: true,
      metric: "m",
      status: "scored",
      validity: "valid",
      value: 1,
      evaluator_version: "m@1",
      diagnostics: [],
      evidence_refs: [],
    }, // keys out of order
    { ...ok, reason: undefined }, // an optional key set to undefined
    { ...ok, value: -0 }, // -0 becomes 0
    { ...ok, value: NaN }, // breaks the no-0.0 rule
    { ...ok, diagnostics: [{ level: "info", message: "x", code: "c" }] },
    { ...ok, evidence_refs: ["a", , "b"] }, // a hole
    { ...ok, provenance: { model: "m" } }, // copied, never aliased
    new Instance(),
    { ...ok, diagnostics: new (class extends Array {})() },
    {
      ...ok,
      diagnostics: [
        new (class {
          level = "info";
          message = "x";
        })(),
      ],
    },
    Object.assign(Object.create(null), ok),
    { ...ok, diagnostics: undefined, evidence_refs: undefined },
    { metric: "m", status: "error", value: 0 },
    "not a Score",
    null,
    ...mutations(withIds),
    ...mutations(
      validateScore({
        ...withIds,
        reason: "r",
        diagnostics: [{ level: "warning", message: "w" }],
      }),
    ),
  ];
}

/** Each field of a Score set to each of some values, removed, or moved last. */
function mutations(score: Score): unknown[] {
  const values = [
    undefined,
    null,
    "",
    "x",
    0,
    -0,
    1,
    0.5,
    NaN,
    Infinity,
    true,
    false,
    [],
    ["a"],
    [{ level: "info", message: "m" }],
    [{ level: "loud", message: "m" }],
    [{ message: "m", level: "info" }],
    {},
    "scored",
    "error",
    "skipped",
    "not_applicable",
    "blocked",
    "valid",
    "invalid",
  ];
  const out: unknown[] = [];
  const keys = [...Object.keys(score), "reason", "provenance", "other"];
  for (const key of keys) {
    for (const value of values) out.push({ ...score, [key]: value });
    const { [key]: moved, ...rest } = score as unknown as Record<
      string,
      unknown
    >;
    out.push(rest, { ...rest, [key]: moved });
  }
  return out;
}

Deno.test("validateScores and validateScoreBatches emit what validateScore makes of each candidate", async () => {
  const all = candidates();
  const expected = all.map((c) => validateScore(c));
  const single = await Array.fromAsync(
    ReadableStream.from(all).pipeThrough(validateScores()),
  );
  assert.deepEqual(single, expected);
  for (const size of [1, 3, all.length]) {
    const batches = await Array.fromAsync(
      ReadableStream.from(chunked(all, size)).pipeThrough(
        validateScoreBatches(),
      ),
    );
    assert.deepEqual(batches.flat(), expected, `batches of ${size}`);
  }
  // Plain objects and arrays come out: nothing of a class instance is kept.
  for (const s of single) {
    assert.equal(Object.getPrototypeOf(s), Object.prototype);
    assert.equal(Object.getPrototypeOf(s.diagnostics), Array.prototype);
  }
  // A Score already canonical passes as it is; the provenance is a copy.
  assert.equal(single[0], all[0]);
  assert.equal(single[1], all[1]);
  const provenance = (all[10] as { provenance: object }).provenance;
  assert.notEqual(single[10]!.provenance, provenance);
});

Deno.test("aggregateInto passes each batch on unchanged and counts every Score", async () => {
  const batches: Score[][] = [
    [scored("m", 1), scored("m", 0)],
    [scored("m", 0.5)],
  ];
  const aggregator = new Aggregator();
  const out = await Array.fromAsync(
    ReadableStream.from(batches).pipeThrough(aggregateInto(aggregator)),
  );
  assert.deepEqual(out, batches);
  assert.equal(out[0], batches[0]);
  const [a] = aggregator.results();
  assert.equal(a?.n, 3);
  assert.equal(a?.mean, 0.5);
});

Deno.test("runSuite writes the Scores and aggregates of the exported stages piped by hand", async () => {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_stages_test_" });
  try {
    const lines = Array.from(
      { length: 50 },
      (_, i) =>
        i === 7
          ? '{"id": 7, "expected": "a"}' // no input: an invalid case
          : JSON.stringify({
            id: i,
            input: `q${i}`,
            expected: "a",
            ...(i % 11 === 3 ? {} : { output: i % 3 ? "a" : "b" }),
          }),
    );
    await Deno.writeTextFile(`${dir}/data.jsonl`, lines.join("\n") + "\n");
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: data.jsonl\ntarget: { type: replay }\n" +
        "scorers: [{ type: exact_match }, { type: contains }]\nepochs: 2\n",
    );
    const written: Score[] = [];
    const invalid: string[] = [];
    const summary = await runSuite(`${dir}/suite.yaml`, {
      sink: new WritableStream({
        write(batch) {
          written.push(...batch);
        },
      }),
      onInvalidRecord: (message) => invalid.push(message),
    });
    // The scorers' ranges clamp the mean's interval, in run as by hand.
    const aggregator = new Aggregator({
      valueRange: valueRangesOf([exactMatch(), contains()]),
    });
    const byHand = (await Array.fromAsync(
      (await loadDatasetBatches(`${dir}/data.jsonl`, { name: "data.jsonl" }))
        .pipeThrough(runTargetBatches(replayTarget(), { epochs: 2 }))
        .pipeThrough(
          scoreUnitBatches([exactMatch(), contains()]),
        )
        .pipeThrough(validateScoreBatches())
        .pipeThrough(aggregateInto(aggregator)),
    )).flat();
    assert.equal(written.length, 200);
    assert.deepEqual(written, byHand);
    assert.deepEqual(summary.aggregates, aggregator.results());
    assert.equal(summary.invalidRecords, 1);
    assert.deepEqual(invalid, [
      'Invalid case in "data.jsonl" line 8: "input" is missing (the record has "id", "expected"): name its prompt "input"',
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("functionTarget units from runTargetBatches carry their latency", async () => {
  const [units] = await Array.fromAsync(
    ReadableStream.from([[example(1)]]).pipeThrough(
      runTargetBatches(functionTarget(() => "x")),
    ),
  );
  assert.equal(units?.[0]?.output, "x");
  assert.equal(typeof units?.[0]?.target?.latency_ms, "number");
});

Deno.test("the stages refuse a count that is not a whole number of at least 1 as they are built, naming the option", async () => {
  const dest = { write: (p: Uint8Array) => Promise.resolve(p.length) };
  const targets = [{ name: "t", target: replayTarget() }];
  for (const bad of [0, -1, 1.5, NaN, Infinity]) {
    const builds: Array<[string, () => unknown]> = [
      ["epochs", () => runTarget(replayTarget(), { epochs: bad })],
      ["epochs", () => runTargetBatches(replayTarget(), { epochs: bad })],
      ["epochs", () => runMatrixBatches(targets, { epochs: bad })],
      ["concurrency", () => runTarget(replayTarget(), { concurrency: bad })],
      [
        "concurrency",
        () => runTargetBatches(replayTarget(), { concurrency: bad }),
      ],
      ["concurrency", () => runMatrixBatches(targets, { concurrency: bad })],
      ["concurrency", () => scoreUnits([exactMatch()], { concurrency: bad })],
      [
        "concurrency",
        () => scoreUnitBatches([exactMatch()], { concurrency: bad }),
      ],
      ["concurrency", () => concurrentMap((n) => n, { concurrency: bad })],
      ["window", () => concurrentMap((n) => n, { window: bad })],
      ["maxLineBytes", () => new LineStream({ maxLineBytes: bad })],
      ["maxLineBytes", () => new LineBatchStream({ maxLineBytes: bad })],
      ["flushChars", () => ndjsonSink(dest, { flushChars: bad })],
      ["flushChars", () => ndjsonBatchSink(dest, { flushChars: bad })],
    ];
    for (const [option, build] of builds) {
      assert.throws(build, {
        name: "RangeError",
        message:
          `The "${option}" option must be a whole number of at least 1, not ${bad}`,
      }, `${option}: ${bad}`);
    }
    // runSuite refuses them before it reads anything (the config is missing).
    for (const option of ["concurrency", "epochs"]) {
      await assert.rejects(
        runSuite("no/such/suite.yaml", {
          sink: new WritableStream(),
          [option]: bad,
        }),
        { name: "RangeError", message: new RegExp(`^The "${option}" option`) },
      );
    }
  }
});

Deno.test("runSuite refuses a subset size or a shard that would quietly run nothing or the wrong examples", async () => {
  // Before, `limit: -1` skipped every example, `sample: -2` drew all but two
  // and shard 3 of 2 ran nothing, each without a word.
  const cases: Array<[Record<string, unknown>, string]> = [
    [
      { subset: { limit: -1 } },
      'The "subset.limit" option must be a whole number of at least 0, not -1',
    ],
    [
      { subset: { limit: 1.5 } },
      'The "subset.limit" option must be a whole number of at least 0, not 1.5',
    ],
    [
      { subset: { sample: -2 } },
      'The "subset.sample" option must be a whole number of at least 0, not -2',
    ],
    [
      { shard: { index: 0, count: 2 } },
      'The "shard.index" option must be a whole number of at least 1, not 0',
    ],
    [
      { shard: { index: 1, count: NaN } },
      'The "shard.count" option must be a whole number of at least 1, not NaN',
    ],
    [
      { shard: { index: 3, count: 2 } },
      'The "shard.index" option (3) is above "shard.count" (2)',
    ],
  ];
  for (const [options, message] of cases) {
    // Refused before the (missing) config is read.
    await assert.rejects(
      runSuite("no/such/suite.yaml", {
        sink: new WritableStream(),
        ...options,
      }),
      { name: "RangeError", message },
      JSON.stringify(options),
    );
  }
});

Deno.test("run and score still name their own flags and config keys for a bad count", async () => {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_stages_test_" });
  try {
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input": "q", "output": "a"}\n',
    );
    const suite = "dataset: d.jsonl\ntarget: { type: replay }\n" +
      "scorers: [{ type: exact_match }]\n";
    await Deno.writeTextFile(`${dir}/suite.yaml`, suite);
    await Deno.writeTextFile(`${dir}/zero.yaml`, `${suite}epochs: 0\n`);
    const cases: Array<[string[], RegExp]> = [
      [
        ["run", "suite.yaml", "--concurrency", "0"],
        /"--concurrency" needs a positive number, not "0"/,
      ],
      [
        ["run", "suite.yaml", "--epochs", "1.5"],
        /"--epochs" needs a whole number, not "1\.5"/,
      ],
      [
        ["score", "--scorer", "true", "--name", "t", "--concurrency", "0"],
        /"--concurrency" needs a positive number, not "0"/,
      ],
      [["run", "zero.yaml"], /Invalid config "zero\.yaml" line 4: "epochs"/],
    ];
    for (const [args, message] of cases) {
      const out = await cli(args, dir);
      assert.equal(out.code, 2, args.join(" "));
      assert.match(out.stderr, message);
      assert.doesNotMatch(out.stderr, /RangeError|option must be/);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runSuite's onInvalidRecord gives the message's parts as data, which invalidCaseText words as the message does", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      '{"input":"q","expected":"a"}\n{"expected":"a"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/data.json`,
      '[\n  {"input": "q"},\n  {"input": 3}\n]\n',
    );
    const seen: [string, InvalidCase][] = [];
    for (const dataset of ["data.jsonl", "data.json"]) {
      await Deno.writeTextFile(
        `${dir}/suite.yaml`,
        `dataset: ${dataset}\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n`,
      );
      await runSuite(`${dir}/suite.yaml`, {
        sink: new WritableStream(),
        onInvalidRecord: (message, _example, invalid) =>
          seen.push([message, invalid]),
      });
    }
    assert.deepEqual(seen.map(([, invalid]) => invalid), [
      {
        dataset: "data.jsonl",
        where: "line",
        line: 2,
        message:
          '"input" is missing (the record has "expected"): name its prompt "input"',
      },
      {
        dataset: "data.json",
        where: "record",
        line: 2,
        at: 3,
        message: '"input" must be a string or a list of messages, not a number',
      },
    ]);
    for (const [message, invalid] of seen) {
      assert.equal(message, `Invalid case in ${invalidCaseText(invalid)}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
