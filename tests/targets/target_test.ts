import assert from "node:assert/strict";
import { join } from "node:path";
import type { Case, Example } from "../../src/dataset/case.ts";
import { expectedJson } from "../../src/io/_expected_text.ts";
import { loadDataset } from "../../src/dataset/dataset.ts";
import {
  runTarget,
  type RunTargetOptions,
  type Target,
  type TargetResult,
} from "../../src/targets/target.ts";
import { functionScorer, scoreUnits } from "../../src/scorers/mod.ts";
import { functionTarget } from "../../src/targets/function_target.ts";
import { replayTarget } from "../../src/targets/replay_target.ts";
import {
  subprocessTarget,
  targetPayload,
} from "../../src/targets/subprocess_target.ts";
import type { Unit } from "../../src/dataset/unit.ts";
import { withTempDir } from "../_proc.ts";
import { cli } from "../_cli.ts";

function example(id: number | string, testCase: Case | null): Example {
  return {
    example_id: `d.jsonl#${id}`,
    line: typeof id === "number" ? id : 1,
    case: testCase,
    ...(testCase === null ? { invalid: '"input" is missing' } : {}),
  };
}

async function run(
  target: Target,
  examples: Example[],
  options: RunTargetOptions = {},
): Promise<Unit[]> {
  return await Array.fromAsync(
    ReadableStream.from(examples).pipeThrough(runTarget(target, options)),
  );
}

async function runOne(target: Target, testCase: Case): Promise<Unit> {
  const [unit] = await run(target, [example(1, testCase)]);
  assert.ok(unit !== undefined);
  return unit;
}

function assertLatency(unit: Unit): void {
  const latency = unit.target?.latency_ms;
  assert.equal(typeof latency, "number");
  assert.ok(Number.isInteger(latency) && latency! >= 0, String(latency));
}

// --- runTarget with functionTarget and replayTarget --------------------------

Deno.test("runTarget with functionTarget emits a unit per example with output and latency", async () => {
  const seen: Case[] = [];
  const target = functionTarget((c) => {
    seen.push(c);
    return `echo: ${c.input}`;
  });
  const units = await run(target, [
    example(1, { input: "a", expected: "A", context: ["c"] }),
    example("own", { id: "own", input: ["m"], metadata: { k: 1 } }),
  ]);
  assert.equal(units.length, 2);
  assert.deepEqual(
    units.map(({ target: _, ...rest }) => rest),
    [
      {
        example_id: "d.jsonl#1",
        unit_id: "d.jsonl#1",
        epoch: 1,
        input: "a",
        output: "echo: a",
        expected: "A",
        context: ["c"],
      },
      {
        example_id: "d.jsonl#own",
        unit_id: "d.jsonl#own",
        epoch: 1,
        input: ["m"],
        output: "echo: m",
        metadata: { k: 1 },
      },
    ],
  );
  for (const unit of units) {
    assertLatency(unit);
    assert.equal(unit.target?.error, undefined);
  }
  assert.deepEqual(seen.map((c) => c.metadata), [undefined, { k: 1 }]);
});

Deno.test("runTarget with functionTarget records the info a function returns", async () => {
  const unit = await runOne(
    functionTarget(() => ({ output: "x", info: { model: "m1", tokens: 3 } })),
    { input: "q" },
  );
  assert.equal(unit.output, "x");
  assert.equal(unit.target?.model, "m1");
  assert.equal(unit.target?.tokens, 3);
  assertLatency(unit);
});

Deno.test("runTarget turns a throwing or outputless functionTarget into target.error", async () => {
  const units = await run(
    functionTarget((c) => {
      if (c.input === "throw") throw new Error("model overloaded");
      if (c.input === "reject") return Promise.reject(new Error("rejected"));
      if (c.input === "text") return { text: "a reply" } as unknown as string;
      return { output: 42 } as unknown as string;
    }),
    [
      example(1, { input: "throw" }),
      example(2, { input: "reject" }),
      example(3, { input: "number" }),
      example(4, { input: "text" }),
    ],
  );
  assert.deepEqual(units.map((u) => u.output), [null, null, null, null]);
  // What came back is quoted: "no output text" alone left the author to
  // guess which field was wrong.
  const expected = 'expected the output text, or { output: "…", info? }';
  assert.deepEqual(units.map((u) => u.target?.error), [
    "model overloaded",
    "rejected",
    `The target function returned { output: 42 }: ${expected}`,
    `The target function returned { text: "a reply" }: ${expected}`,
  ]);
  units.forEach(assertLatency);
});

Deno.test("runTarget turns a script's Target that answers without output text into target.error, not an output scored as empty", async () => {
  // A Target object is not checked as functionTarget's result is: an API
  // whose JSON said `"text": null` gave a unit with `output: null` and no
  // error, which every scorer then read as "" (a "no refusal" check passed).
  const reply = JSON.parse('{"text": null}') as { text: string };
  const target: Target = {
    call: (c) =>
      c.input === "later"
        ? Promise.resolve({ output: reply.text })
        : c.input === "text"
        ? "a reply" as unknown as TargetResult
        : { output: reply.text, info: { model: "m1" } },
  };
  const units = await run(target, [
    example(1, { input: "now" }),
    example(2, { input: "later" }),
    example(3, { input: "text" }),
  ]);
  assert.deepEqual(units.map((u) => u.output), [null, null, null]);
  const expected = 'expected { output: "…", info? }';
  assert.deepEqual(units.map((u) => u.target?.error), [
    `The target returned { output: null, info: { model: "m1" } }: ${expected}`,
    `The target returned { output: null }: ${expected}`,
    `The target returned "a reply": ${expected}`,
  ]);
  units.forEach(assertLatency);
  const scores = await Array.fromAsync(
    ReadableStream.from(units).pipeThrough(
      scoreUnits([
        functionScorer("no_refusal", (u) => !/sorry/i.test(u.output ?? "")),
      ]),
    ),
  );
  assert.deepEqual(scores.map((s) => [s.status, s.passed]), [
    ["blocked", false],
    ["blocked", false],
    ["blocked", false],
  ]);
});

Deno.test("runTarget keeps no info of a script's own error that carries one: only a paid reply's report counts", async () => {
  class ToolError extends Error {
    info = { latency_ms: 1e9, cost_usd: 5, session: "s-private-31" };
  }
  const [unit] = await run(
    functionTarget(() => {
      throw new ToolError("tool failed");
    }),
    [example(1, { input: "q" })],
  );
  assert.equal(unit?.target?.error, "tool failed");
  assert.equal(unit?.target?.cost_usd, undefined);
  assert.ok(!JSON.stringify(unit).includes("s-private-31"));
  assertLatency(unit!);
});

Deno.test("runTarget with replayTarget returns recorded outputs and errors for cases without one", async () => {
  const units = await run(replayTarget(), [
    example(1, { input: "q1", output: "recorded" }),
    example(2, { input: "q2" }),
    example(3, { input: "q3", output: "" }),
  ]);
  assert.equal(units[0]!.output, "recorded");
  assert.equal(units[0]!.target?.error, undefined);
  assert.equal(units[1]!.output, null);
  assert.equal(units[1]!.target?.error, 'The case has no "output" to replay');
  assertLatency(units[1]!);
  assert.equal(units[2]!.output, "");
});

Deno.test("runTarget gives an invalid example a unit marked invalid, without a call", async () => {
  let calls = 0;
  const units = await run(
    functionTarget(() => {
      calls++;
      return "out";
    }),
    [example(1, { input: "a" }), example(2, null), example(3, { input: "c" })],
  );
  assert.equal(calls, 2);
  assert.deepEqual(units.map((u) => u.unit_id), [
    "d.jsonl#1",
    "d.jsonl#2",
    "d.jsonl#3",
  ]);
  assert.equal(units[1]!.output, null);
  assert.equal(units[1]!.invalid, '"input" is missing');
  assert.equal(units[1]!.target, undefined);
  assert.equal(units[0]!.invalid, undefined);
});

Deno.test("runTarget emits units in input order at any concurrency", async () => {
  const examples = Array.from(
    { length: 40 },
    (_, i) => example(i + 1, { input: String(i) }),
  );
  for (const concurrency of [1, 5, 40]) {
    let inFlight = 0;
    let maxInFlight = 0;
    const units = await run(
      functionTarget(async (c) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 3)));
        inFlight--;
        return `out ${c.input}`;
      }),
      examples,
      { concurrency },
    );
    assert.deepEqual(
      units.map((u) => u.output),
      examples.map((_, i) => `out ${i}`),
    );
    assert.ok(maxInFlight <= concurrency, `${maxInFlight} > ${concurrency}`);
  }
});

Deno.test("runTarget passes its abort signal to the target", async () => {
  const controller = new AbortController();
  controller.abort();
  const unit = (await run(
    functionTarget((_, { signal }) => {
      signal?.throwIfAborted();
      return "not reached";
    }),
    [example(1, { input: "q" })],
    { signal: controller.signal },
  ))[0]!;
  assert.equal(unit.output, null);
  assert.equal(typeof unit.target?.error, "string");
});

Deno.test("runTarget carries expected verbatim from a loaded JSONL case to the unit", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "d.jsonl");
    await Deno.writeTextFile(
      path,
      '{"input":"q","expected": {"b": 1.0, "2": [1e3, 12345678901234567890], "s": "caf\\u00e9\\/"}}\n' +
        '{"input":"r"}\n',
    );
    const units = await Array.fromAsync(
      (await loadDataset(path, { name: "d.jsonl" })).pipeThrough(
        runTarget(functionTarget(() => "answer")),
      ),
    );
    assert.equal(
      expectedJson(units[0]!),
      '{"b":1.0,"2":[1e3,12345678901234567890],"s":"caf\\u00e9\\/"}',
    );
    assert.equal(expectedJson(units[1]!), "null");
    assert.equal("expected" in units[1]!, false);
  });
});

// --- subprocessTarget --------------------------------------------------------

Deno.test("targetPayload writes context, input and metadata in order, never expected", () => {
  assert.equal(
    targetPayload({
      metadata: { k: "v" },
      expected: "secret",
      input: "q",
      context: ["c1", "c2"],
      id: "x",
      output: "recorded",
    }),
    '{"context":["c1","c2"],"input":"q","metadata":{"k":"v"}}',
  );
  assert.equal(targetPayload({ input: "q", expected: 1 }), '{"input":"q"}');
  assert.equal(
    targetPayload({ input: [{ role: "user", content: "hi" }], context: [] }),
    '{"context":[],"input":[{"role":"user","content":"hi"}]}',
  );
});

Deno.test("subprocessTarget refuses, as it is built, a command whose script does not exist under its cwd", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/app.sh`, "cat >/dev/null; echo 42\n");
    // Built in another folder, every case was a target error.
    assert.throws(() => subprocessTarget("sh app.sh"), {
      name: "InputError",
      message:
        `subprocessTarget's command "sh app.sh" runs "app.sh", which does ` +
        `not exist (paths resolve against its cwd, ${
          JSON.stringify(Deno.cwd())
        })`,
    });
    const target = subprocessTarget("sh app.sh", { cwd: dir });
    assert.equal((await target.call({ input: "6*7?" }, {})).output, "42");
  });
});

Deno.test("subprocessTarget and subprocessScorer are built in a script Deno may not read the folder of (--allow-run alone), as before the check of their script", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/app.sh`, "cat >/dev/null; echo 42\n");
    await Deno.writeTextFile(
      `${dir}/grade.sh`,
      `cat >/dev/null; echo '{"score": 1}'\n`,
    );
    const src = new URL("../../src/", import.meta.url).href;
    await Deno.writeTextFile(
      `${dir}/main.ts`,
      `import { subprocessTarget } from "${src}targets/subprocess_target.ts";
import { subprocessScorer } from "${src}scorers/subprocess_scorer.ts";
const target = subprocessTarget("sh app.sh");
const scorer = subprocessScorer("sh grade.sh", { name: "grade" });
const { output } = await target.call({ input: "6*7?" }, {});
const [score] = [await scorer.score({ example_id: "d#1", unit_id: "d#1", input: "6*7?", output }, {})].flat();
console.log(output, score.value);
`,
    );
    // The script runs the commands; it reads no file of the folder itself.
    const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-lock", "--allow-run", "main.ts"],
      cwd: dir,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    assert.equal(code, 0, dec.decode(stderr));
    assert.equal(dec.decode(stdout), "42 1\n");
  });
});

Deno.test("subprocessTarget writes the exact payload bytes on stdin, without expected", async () => {
  await withTempDir(async (dir) => {
    const target = subprocessTarget("cat > payload.bin; echo ok", {
      cwd: dir,
      timeout: 30,
    });
    const cases: Case[] = [
      {
        input: "What is café?\n",
        expected: { answer: "secret" },
        context: ['chunk "one"', "日本"],
        metadata: { lang: "fr" },
      },
      { input: "plain", expected: "never sent" },
      { input: [{ role: "user", content: "hi" }], context: [] },
    ];
    const payloads: string[] = [];
    for (const testCase of cases) {
      const unit = await runOne(target, testCase);
      assert.equal(unit.output, "ok");
      const bytes = await Deno.readFile(join(dir, "payload.bin"));
      await Deno.remove(join(dir, "payload.bin"));
      payloads.push(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    }
    assert.deepEqual(payloads, [
      '{"context":["chunk \\"one\\"","日本"],"input":"What is café?\\n","metadata":{"lang":"fr"}}',
      '{"input":"plain"}',
      '{"context":[],"input":[{"role":"user","content":"hi"}]}',
    ]);
    for (const p of payloads) {
      assert.ok(!p.includes("secret") && !p.includes("never sent"));
    }
  });
});

Deno.test("subprocessTarget echoes stdin through cat byte for byte", async () => {
  const testCase: Case = { input: "naïve ☃ \u{1F600}", metadata: { n: 1 } };
  const unit = await runOne(subprocessTarget("cat", { timeout: 30 }), testCase);
  assert.equal(unit.output, targetPayload(testCase));
  assert.equal(unit.output, '{"input":"naïve ☃ \u{1F600}","metadata":{"n":1}}');
});

Deno.test("subprocessTarget strips trailing newlines from stdout only", async () => {
  const cases: Array<[string, string]> = [
    ["printf 'a\\n\\nb\\n\\n\\n'", "a\n\nb"],
    ["printf 'x\\r\\n'", "x"],
    ["printf '  spaced  \\n'", "  spaced  "],
    ["printf '\\nlead'", "\nlead"],
    ["true", ""],
  ];
  for (const [cmd, expected] of cases) {
    const unit = await runOne(
      subprocessTarget(`cat >/dev/null; ${cmd}`, { timeout: 30 }),
      { input: "q" },
    );
    assert.equal(unit.output, expected, cmd);
    assert.equal(unit.target?.error, undefined, cmd);
  }
});

Deno.test("subprocessTarget records a non-zero exit as target.error with status and stderr", async () => {
  const cmd = "cat >/dev/null; echo partial; echo 'model exploded' >&2; exit 3";
  const unit = await runOne(subprocessTarget(cmd, { timeout: 30 }), {
    input: "q",
  });
  assert.equal(unit.output, null);
  const error = unit.target?.error ?? "";
  assert.match(error, /exited with status 3/);
  assert.match(error, /model exploded/);
  assert.ok(error.includes(JSON.stringify(cmd)), error);
  assertLatency(unit);
});

Deno.test("subprocessTarget kills a command that times out and names the timeout", async () => {
  await withTempDir(async (dir) => {
    // The background child would keep the pipes open if only sh were killed.
    const unit = await runOne(
      subprocessTarget("sleep 30 & sleep 30", { timeout: 0.3, cwd: dir }),
      { input: "q" },
    );
    assert.equal(unit.output, null);
    assert.match(unit.target?.error ?? "", /timed out after 0\.3 s/);
    assertLatency(unit);
  });
});

Deno.test("subprocessTarget succeeds when the command does not read its stdin", async () => {
  const unit = await runOne(subprocessTarget("echo fine", { timeout: 30 }), {
    input: "x".repeat(1 << 20),
  });
  assert.equal(unit.output, "fine");
  assert.equal(unit.target?.error, undefined);
});

Deno.test("subprocessTarget runs in its cwd and caps its output, naming the option that raises the cap", async () => {
  await withTempDir(async (dir) => {
    const real = await Deno.realPath(dir);
    const here = await runOne(
      subprocessTarget("cat >/dev/null; pwd -P", { cwd: dir, timeout: 30 }),
      { input: "q" },
    );
    assert.equal(here.output, real);
    const big = await runOne(
      subprocessTarget("cat >/dev/null; head -c 5000 /dev/zero", {
        timeout: 30,
        maxOutputBytes: 1000,
      }),
      { input: "q" },
    );
    assert.equal(big.output, null);
    assert.match(
      big.target?.error ?? "",
      /more than 1000 bytes on stdout \(maxOutputBytes raises the cap\)$/,
    );
  });
});

Deno.test("run: a subprocess target's max_output_bytes raises its stderr cap too, so a verbose program can answer", async () => {
  await withTempDir(async (dir) => {
    // 1.5 MiB of log lines on stderr, then the answer.
    await Deno.writeTextFile(
      `${dir}/app.sh`,
      "cat >/dev/null\nhead -c 1572864 /dev/zero | tr '\\0' x >&2\necho yes\n",
    );
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input": "q", "expected": "yes"}\n',
    );
    const suite = (extra: string) =>
      `dataset: d.jsonl\ntarget: { type: subprocess, cmd: sh app.sh${extra} }\nscorers: [{ type: exact_match }]\n`;
    await Deno.writeTextFile(`${dir}/capped.yaml`, suite(""));
    await Deno.writeTextFile(
      `${dir}/raised.yaml`,
      suite(", max_output_bytes: 4000000"),
    );
    const capped = await cli(["run", "capped.yaml"], dir);
    const blocked = JSON.parse(capped.stdout);
    assert.equal(blocked.status, "blocked");
    assert.match(
      blocked.reason,
      / printed more than 1048576 bytes on stderr \(max_output_bytes raises the cap\)/,
    );
    const raised = await cli(["run", "raised.yaml"], dir);
    assert.equal(raised.code, 0, raised.stderr);
    const score = JSON.parse(raised.stdout);
    assert.equal(score.status, "scored");
    assert.equal(score.value, 1);
  });
});

Deno.test("run: a subprocess target whose output is not UTF-8 (Latin-1) is a target error, never a wrong answer", async () => {
  await withTempDir(async (dir) => {
    // "café" in Latin-1 (é is the byte 0xe9), then in UTF-8.
    await Deno.writeTextFile(
      `${dir}/app.sh`,
      "cat >/dev/null\nif [ \"$1\" = latin1 ]; then printf 'caf\\351\\n'; elif [ \"$1\" = fffd ]; then printf 'caf\\357\\277\\275\\n'; else printf 'caf\\303\\251\\n'; fi\n",
    );
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input": "q", "expected": "café"}\n',
    );
    const suite = (arg: string) =>
      `dataset: d.jsonl\ntarget: { type: subprocess, cmd: sh app.sh ${arg} }\nscorers: [{ type: exact_match }]\n`;
    await Deno.writeTextFile(`${dir}/latin1.yaml`, suite("latin1"));
    await Deno.writeTextFile(`${dir}/utf8.yaml`, suite("utf8"));
    const latin1 = await cli(["run", "latin1.yaml"], dir);
    const blocked = JSON.parse(latin1.stdout);
    assert.equal(blocked.status, "blocked");
    assert.equal(blocked.value, null);
    assert.equal(
      blocked.reason,
      'target error: target "sh app.sh latin1" printed text that is not UTF-8 on stdout (line 1): write the output as UTF-8 (a program writing Latin-1 or cp1252?)',
    );
    const utf8 = await cli(["run", "utf8.yaml"], dir);
    assert.equal(utf8.code, 0, utf8.stderr);
    assert.equal(JSON.parse(utf8.stdout).value, 1);
    // A U+FFFD the program wrote as UTF-8 is text like any other: scored.
    await Deno.writeTextFile(`${dir}/fffd.yaml`, suite("fffd"));
    const fffd = JSON.parse((await cli(["run", "fffd.yaml"], dir)).stdout);
    assert.deepEqual([fffd.status, fffd.value], ["scored", 0]);
  });
});

Deno.test("subprocessTarget kills its command when runTarget's signal aborts", async () => {
  const controller = new AbortController();
  const pending = run(
    subprocessTarget("cat >/dev/null; echo started; sleep 30", { timeout: 60 }),
    [example(1, { input: "q" })],
    { signal: controller.signal },
  );
  await new Promise((r) => setTimeout(r, 50));
  controller.abort();
  const [unit] = await pending;
  assert.equal(unit?.output, null);
  assert.match(unit?.target?.error ?? "", /was interrupted/);
});

Deno.test("runTarget with subprocessTarget keeps order, marks invalid examples and carries expected verbatim", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "d.jsonl");
    await Deno.writeTextFile(
      path,
      [
        '{"input":"one","expected":[1.50, {"z":1,"a":2}]}',
        '{"input":5}',
        "",
        '{"id":"k","input":"three","expected":"\\u0041"}',
      ].join("\n") + "\n",
    );
    const units = await Array.fromAsync(
      (await loadDataset(path, { name: "d.jsonl" })).pipeThrough(
        runTarget(
          subprocessTarget(
            `python3 -c 'import json,sys; print(json.load(sys.stdin)["input"].upper())'`,
            { timeout: 30 },
          ),
          { concurrency: 3 },
        ),
      ),
    );
    assert.deepEqual(units.map((u) => u.unit_id), [
      "d.jsonl#1",
      "d.jsonl#2",
      "d.jsonl#k",
    ]);
    assert.deepEqual(units.map((u) => u.output), ["ONE", null, "THREE"]);
    assert.match(units[1]!.invalid ?? "", /"input" must be/);
    assert.equal(expectedJson(units[0]!), '[1.50,{"z":1,"a":2}]');
    assert.equal(expectedJson(units[2]!), '"\\u0041"');
    assert.equal(units[2]!.expected, "A");
    assertLatency(units[0]!);
  });
});

Deno.test("runTarget with epochs calls each example N times, unit ids <example_id>@<epoch>, in order", async () => {
  const calls: string[] = [];
  const target = functionTarget(async (c, context) => {
    // Later epochs answer first: the output order must not follow completion order.
    await new Promise((r) => setTimeout(r, (4 - (context.epoch ?? 0)) * 3));
    calls.push(`${c.input}@${context.epoch}`);
    return `${c.input}#${context.epoch}`;
  });
  const examples = [
    { example_id: "d#1", line: 1, case: { input: "a" } },
    { example_id: "d#2", line: 2, case: null, invalid: "bad" },
    { example_id: "d#3", line: 3, case: { input: "c" } },
  ];
  const units = await Array.fromAsync(
    ReadableStream.from(examples).pipeThrough(
      runTarget(target, { epochs: 3, concurrency: 4 }),
    ),
  );
  assert.deepEqual(units.map((u) => u.unit_id), [
    "d#1@1",
    "d#1@2",
    "d#1@3",
    "d#2@1",
    "d#2@2",
    "d#2@3",
    "d#3@1",
    "d#3@2",
    "d#3@3",
  ]);
  assert.deepEqual(units.map((u) => u.output), [
    "a#1",
    "a#2",
    "a#3",
    null,
    null,
    null,
    "c#1",
    "c#2",
    "c#3",
  ]);
  assert.ok(units.every((u) => u.example_id === u.unit_id.split("@")[0]));
  assert.equal(units[3]!.invalid, "bad");
  assert.equal(calls.length, 6, "invalid records are not sent to the target");
});
