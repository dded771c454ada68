// The `trajectory` and `tool_call_f1` scorers: the rules as EvalCore's
// trajectory format (v0) states them, the reason naming the rule that failed,
// F1 figures counted by hand, and both from a config file.

import assert from "node:assert/strict";
import {
  buildScorers,
  checkConfigText,
  ConfigError,
  type Score,
  type ToolCall,
  toolCallF1,
  trajectory,
  TrajectoryOptionError,
  type TrajectoryRule,
  type Unit,
} from "../../mod.ts";
import { one } from "./_unit.ts";
import { withTempDir } from "../_proc.ts";

function calls(...specs: (string | [string, unknown])[]): ToolCall[] {
  return specs.map((s) =>
    typeof s === "string"
      ? { name: s, arguments: {} }
      : { name: s[0], arguments: s[1] }
  );
}

function agent(toolCalls: ToolCall[] | undefined, expected?: unknown): Unit {
  return {
    example_id: "d#1",
    unit_id: "d#1",
    input: "",
    output: "",
    ...(toolCalls !== undefined ? { tool_calls: toolCalls } : {}),
    ...(expected !== undefined ? { expected } : {}),
  };
}

/** Whether one rule holds of the calls. */
function holds(rule: TrajectoryRule, toolCalls: ToolCall[]): boolean {
  const s = one(trajectory({ rules: [rule] }), agent(toolCalls));
  assert.equal(s.status, "scored");
  assert.equal(s.passed, s.value === 1);
  return s.value === 1;
}

const REFUND = calls(
  ["verify_identity", { user: "u-123" }],
  ["search_kb", { query: "refund policy time limits" }],
  ["issue_refund", { order: "o-987", amount: 42.5 }],
);

Deno.test("trajectory must_call: some call of the tool matches every with test", () => {
  assert.ok(holds({ must_call: "search_kb" }, REFUND));
  assert.ok(!holds({ must_call: "delete_account" }, REFUND));
  assert.ok(
    holds(
      { must_call: "search_kb", with: { query: { contains: "refund" } } },
      REFUND,
    ),
  );
  assert.ok(
    !holds({
      must_call: "search_kb",
      with: { query: { contains: "shipping" } },
    }, REFUND),
  );
  // Every listed field must match, on one and the same call.
  assert.ok(
    holds({
      must_call: "issue_refund",
      with: { order: { equals: "o-987" }, amount: { equals: 42.5 } },
    }, REFUND),
  );
  assert.ok(
    !holds({
      must_call: "issue_refund",
      with: { order: { equals: "o-987" }, amount: { equals: 42 } },
    }, REFUND),
  );
  const two = calls(["pay", { to: "a", amount: 1 }], ["pay", {
    to: "b",
    amount: 2,
  }]);
  assert.ok(
    holds({
      must_call: "pay",
      with: { to: { equals: "b" }, amount: { equals: 2 } },
    }, two),
  );
  assert.ok(
    !holds({
      must_call: "pay",
      with: { to: { equals: "a" }, amount: { equals: 2 } },
    }, two),
  );
  // A missing field never matches.
  assert.ok(
    !holds(
      { must_call: "search_kb", with: { limit: { contains: "" } } },
      REFUND,
    ),
  );
});

Deno.test("trajectory matchers: contains reads a non-string as compact JSON; equals is JSON equality", () => {
  const c = calls(["f", {
    n: 42,
    tags: ["a", "b"],
    filter: { status: "open", since: 3 },
  }]);
  assert.ok(holds({ must_call: "f", with: { n: { contains: "42" } } }, c));
  assert.ok(
    holds({ must_call: "f", with: { tags: { contains: '["a","b"]' } } }, c),
  );
  assert.ok(
    holds({
      must_call: "f",
      with: { filter: { equals: { since: 3, status: "open" } } },
    }, c),
  );
  assert.ok(!holds({ must_call: "f", with: { n: { equals: "42" } } }, c));
  // Both tests at once must both hold.
  assert.ok(
    holds({ must_call: "f", with: { n: { contains: "4", equals: 42 } } }, c),
  );
  assert.ok(
    !holds({ must_call: "f", with: { n: { contains: "5", equals: 42 } } }, c),
  );
  // A dotted path reaches into nested arguments.
  assert.ok(
    holds({ must_call: "f", with: { "filter.status": { equals: "open" } } }, c),
  );
  // Arguments that did not parse are text: no field matches.
  const broken: ToolCall[] = [{
    name: "f",
    arguments: '{"n": 4',
    arguments_error: "bad",
  }];
  assert.ok(!holds({ must_call: "f", with: { n: { contains: "4" } } }, broken));
  assert.ok(holds({ must_call: "f" }, broken));
});

Deno.test("trajectory must_call after: only calls after the first call of the guard; no guard fails", () => {
  assert.ok(
    holds({ must_call: "issue_refund", after: "verify_identity" }, REFUND),
  );
  assert.ok(
    !holds({ must_call: "verify_identity", after: "issue_refund" }, REFUND),
  );
  // Strictly after the FIRST call of the guard.
  const c = calls("a", "t", "a");
  assert.ok(!holds({ must_call: "t", after: "t" }, calls("t")));
  assert.ok(holds({ must_call: "t", after: "a" }, c));
  assert.ok(!holds({ must_call: "search_kb", after: "escalate" }, REFUND));
});

Deno.test("trajectory must_not_call before: calls before the first guard break it; with no guard, every call does", () => {
  assert.ok(holds({ must_not_call: "delete_account" }, REFUND));
  assert.ok(!holds({ must_not_call: "search_kb" }, REFUND));
  assert.ok(
    holds({ must_not_call: "issue_refund", before: "verify_identity" }, REFUND),
  );
  assert.ok(
    !holds(
      { must_not_call: "issue_refund", before: "verify_identity" },
      calls("issue_refund", "verify_identity"),
    ),
  );
  // The guard never ran: any call of the tool breaks the rule.
  assert.ok(
    !holds(
      { must_not_call: "issue_refund", before: "manager_approval" },
      REFUND,
    ),
  );
  assert.ok(
    holds(
      { must_not_call: "delete_account", before: "manager_approval" },
      REFUND,
    ),
  );
  // With `with`, only calls with matching arguments count.
  assert.ok(
    holds(
      { must_not_call: "issue_refund", with: { amount: { equals: 1000 } } },
      REFUND,
    ),
  );
  assert.ok(
    !holds({
      must_not_call: "issue_refund",
      with: { amount: { equals: 42.5 } },
    }, REFUND),
  );
});

Deno.test("trajectory max_steps and order", () => {
  assert.ok(holds({ max_steps: 3 }, REFUND));
  assert.ok(!holds({ max_steps: 2 }, REFUND));
  assert.ok(holds({ max_steps: 0 }, []));
  assert.ok(holds({ order: ["verify_identity", "issue_refund"] }, REFUND));
  assert.ok(!holds({ order: ["issue_refund", "verify_identity"] }, REFUND));
  // Other calls may come between; a tool called twice can satisfy both ends.
  assert.ok(holds({ order: ["a", "b", "a"] }, calls("a", "x", "b", "y", "a")));
  assert.ok(!holds({ order: ["a", "b", "a"] }, calls("a", "b")));
});

Deno.test("trajectory: the value is the share of rules that hold, passing when all do; the reason names each failed rule", () => {
  const scorer = trajectory({
    rules: [
      { must_call: "search_kb", with: { query: { contains: "shipping" } } },
      { must_not_call: "issue_refund", before: "verify_identity" },
      { max_steps: 2 },
      { order: ["search_kb", "verify_identity"] },
      { must_call: "escalate", after: "search_kb" },
    ],
  });
  const s = one(scorer, agent(REFUND));
  assert.equal(s.value, 1 / 5);
  assert.equal(s.passed, false);
  assert.equal(
    s.reason,
    "4 of 5 rules failed: " +
      'rule 1 (must_call search_kb with {"query":{"contains":"shipping"}}): no call of "search_kb" matches: step 2 has "query" "refund policy time limits", without "shipping"; ' +
      "rule 3 (max_steps 2): 3 steps, more than 2; " +
      'rule 4 (order search_kb → verify_identity): no call of "verify_identity" after "search_kb" (step 2); ' +
      'rule 5 (must_call escalate after search_kb): no call of "escalate" after the first "search_kb" (step 2)',
  );
  const never = one(
    trajectory({
      rules: [{ must_not_call: "issue_refund", before: "manager_approval" }, {
        must_call: "x",
        after: "y",
      }],
    }),
    agent(calls("issue_refund", "a", "issue_refund")),
  );
  assert.equal(
    never.reason,
    "2 of 2 rules failed: " +
      'rule 1 (must_not_call issue_refund before manager_approval): steps 1, 3 call "issue_refund", and "manager_approval" is never called; ' +
      'rule 2 (must_call x after y): "y" is never called, so no call of "x" comes after it',
  );
  const good = one(trajectory({ rules: [{ max_steps: 5 }] }), agent(REFUND));
  assert.equal(good.value, 1);
  assert.equal(good.reason, "the rule holds (3 steps)");
});

Deno.test("trajectory and tool_call_f1: a unit without tool_calls is non_evaluable; an empty list is a trajectory", () => {
  for (
    const scorer of [
      trajectory({ rules: [{ max_steps: 3 }] }),
      toolCallF1({ calls: ["a"] }),
    ]
  ) {
    const s = one(scorer, agent(undefined));
    assert.equal(s.status, "non_evaluable");
    assert.equal(s.validity, "not_applicable");
    assert.equal(s.value, null);
    assert.equal(s.reason, "not applicable: the unit records no tool calls");
  }
  assert.equal(
    one(trajectory({ rules: [{ must_call: "a" }] }), agent([])).value,
    0,
  );
});

Deno.test("trajectory refuses rules it cannot read, naming the rule and key", () => {
  const bad: [unknown, string, string][] = [
    [[], "rules", '"rules" must list at least one rule'],
    [
      [{}],
      "rules,0",
      '"rules[0]" names no rule: expected one of must_call, must_not_call, max_steps, order',
    ],
    [
      [{ must_call: "a", max_steps: 2 }],
      "rules,0",
      '"rules[0]" names two rules, "must_call" and "max_steps": write each as a rule of its own',
    ],
    [
      [{ must_call: "a", before: "b" }],
      "rules,0,before",
      'unknown key "rules[0].before" (must_call takes "with", "after")',
    ],
    [
      [{ max_steps: 2 }, { max_steps: -1 }],
      "rules,1,max_steps",
      '"rules[1].max_steps" must be a whole number of at least 0, not number -1',
    ],
    [
      [{ must_call: "" }],
      "rules,0,must_call",
      '"rules[0].must_call" must be a tool\'s name, not string ""',
    ],
    [
      [{ must_call: "a", with: { q: "refund" } }],
      "rules,0,with,q",
      '"rules[0].with.q" must be a test, { contains: TEXT } or { equals: VALUE }, not string "refund"',
    ],
    [
      [{ must_call: "a", with: { q: { like: "x" } } }],
      "rules,0,with,q,like",
      'unknown key "rules[0].with.q.like" (a test takes "contains", "equals")',
    ],
    [
      [{ must_call: "a", with: { q: { contains: 3 } } }],
      "rules,0,with,q,contains",
      '"rules[0].with.q.contains" must be a text, not number 3',
    ],
    [
      [{ order: [] }],
      "rules,0,order",
      '"rules[0].order" must list tools\' names, not a list',
    ],
  ];
  for (const [rules, path, message] of bad) {
    assert.throws(
      () => trajectory({ rules: rules as TrajectoryRule[] }),
      (e) =>
        e instanceof TrajectoryOptionError && e.path.join() === path &&
        e.message === message,
      JSON.stringify(rules),
    );
  }
});

function f1(
  scorer: ReturnType<typeof toolCallF1>,
  made: ToolCall[],
  expected?: unknown,
): Score {
  return one(scorer, agent(made, expected));
}

Deno.test("tool_call_f1 by names: each call matched once, F1 of precision and recall (figures by hand)", () => {
  const scorer = toolCallF1();
  // made: a a b c; expected: a b b d. Matched: a, b → P 2/4, R 2/4, F1 0.5.
  const s = f1(scorer, calls("a", "a", "b", "c"), ["a", "b", "b", "d"]);
  assert.equal(s.value, 0.5);
  assert.equal(s.passed, true);
  assert.equal(
    s.reason,
    "precision 2/4, recall 2/4; missing: b, d; not expected: a, c",
  );
  // made: a; expected: a b c → P 1, R 1/3, F1 = 2·(1/3)/(4/3) = 0.5.
  assert.equal(f1(scorer, calls("a"), ["a", "b", "c"]).value, 0.5);
  // made: a b c; expected: a → P 1/3, R 1: F1 0.5; passes at the default 0.5.
  assert.equal(f1(scorer, calls("a", "b", "c"), [{ name: "a" }]).value, 0.5);
  // made: a b; expected: c → 0.
  assert.equal(f1(scorer, calls("a", "b"), ["c"]).value, 0);
  // Nothing expected, nothing made: 1. Nothing made, something expected: 0.
  const none = f1(scorer, [], []);
  assert.equal(none.value, 1);
  assert.equal(none.reason, "no tool call expected and none made");
  assert.equal(f1(scorer, [], ["a"]).value, 0);
  assert.equal(f1(scorer, calls("a"), []).value, 0);
  // expected as an object's tool_calls list.
  assert.equal(
    f1(scorer, calls("a", "b"), { answer: "x", tool_calls: ["b", "a"] }).value,
    1,
  );
});

Deno.test("tool_call_f1 with arguments: a call matches an expected call of equal arguments; one without arguments matches any", () => {
  const scorer = toolCallF1({ arguments: true });
  const made = calls(["get_weather", { city: "Paris", unit: "C" }], [
    "get_weather",
    { city: "Rome" },
  ], ["send", { to: "x" }]);
  // Paris matches (key order aside), Lyon does not; send has no arguments expected: any.
  const expected = [
    { name: "get_weather", arguments: { unit: "C", city: "Paris" } },
    { name: "get_weather", arguments: { city: "Lyon" } },
    { name: "send" },
  ];
  const s = f1(scorer, made, expected);
  // P 2/3, R 2/3: F1 2/3.
  assert.equal(s.value, 2 / 3);
  assert.equal(
    s.reason,
    'precision 2/3, recall 2/3; missing: get_weather {"city":"Lyon"}; not expected: get_weather {"city":"Rome"}',
  );
  // By names only, the same calls all match.
  assert.equal(f1(toolCallF1(), made, expected).value, 1);
  // The calls that name arguments are paired first: the any-arguments call
  // does not take the one call the specific one needs.
  const order = f1(scorer, calls(["f", { a: 1 }], ["f", { a: 2 }]), [{
    name: "f",
  }, { name: "f", arguments: { a: 2 } }]);
  assert.equal(order.value, 1);
});

Deno.test("tool_call_f1: its own calls win over expected; no usable expected is non_evaluable; threshold sets the pass", () => {
  assert.equal(f1(toolCallF1({ calls: ["a"] }), calls("a"), ["b"]).value, 1);
  const noExpected = f1(toolCallF1(), calls("a"));
  assert.equal(noExpected.status, "non_evaluable");
  assert.equal(noExpected.reason, "not applicable: the case has no expected");
  const text = f1(toolCallF1(), calls("a"), "Paris");
  assert.equal(text.status, "non_evaluable");
  assert.match(
    text.reason ?? "",
    /^not applicable: the case's expected lists no tool calls/,
  );
  const strict = f1(toolCallF1({ threshold: 0.9 }), calls("a", "b"), ["a"]);
  assert.equal(strict.passed, false);
  assert.throws(() => toolCallF1({ threshold: 2 }), RangeError);
  assert.throws(
    () => toolCallF1({ calls: [3 as never] }),
    TrajectoryOptionError,
  );
});

Deno.test("trajectory and tool_call_f1 from a config; a bad rule is a config error at its line", async () => {
  const yaml = [
    "dataset: cases.jsonl",
    "target: { type: trace }",
    "scorers:",
    "  - type: trajectory",
    "    rules:",
    "      - must_call: search_kb",
    "        with:",
    '          query: { contains: "refund" }',
    "      - must_not_call: issue_refund",
    "        before: verify_identity",
    "      - max_steps: 5",
    "      - order: [verify_identity, search_kb]",
    "  - { type: tool_call_f1, arguments: true, threshold: 0.6 }",
    "",
  ].join("\n");
  await withTempDir(async (dir) => {
    const config = await checkConfigText(yaml, `${dir}/suite.yaml`);
    const [rules, f] = await buildScorers(config, `${dir}/suite.yaml`, {
      cwd: dir,
    });
    assert.equal(one(rules!, agent(REFUND)).value, 1);
    assert.match(rules!.version, /^trajectory@1\+[0-9a-f]{8}$/);
    assert.equal(
      one(
        f!,
        agent(REFUND, [{
          name: "verify_identity",
          arguments: { user: "u-123" },
        }, "search_kb"]),
      ).value,
      0.8,
    );
    const bad = yaml.replace(
      "        before: verify_identity",
      "        after: verify_identity",
    );
    await Deno.writeTextFile(`${dir}/bad.yaml`, bad);
    const error = await checkConfigText(bad, `${dir}/bad.yaml`).then(
      () => undefined,
      (e) => e,
    );
    assert.ok(error instanceof ConfigError);
    assert.equal(error.line, 10);
    assert.equal(
      error.message,
      `Invalid config "${dir}/bad.yaml" line 10: unknown key "scorers[0].rules[1].after" (must_not_call takes "with", "before")`,
    );
    const notMapping = yaml.replace(
      "      - max_steps: 5",
      "      - max_steps",
    );
    const e2 = await checkConfigText(notMapping, "s.yaml").then(
      () => undefined,
      (e) => e,
    );
    assert.ok(e2 instanceof ConfigError);
    assert.equal(e2.line, 11);
    assert.match(e2.message, /"scorers\[0\]\.rules\[2\]" must be a mapping/);
    const badCalls = yaml.replace("arguments: true,", "calls: [3],");
    const e3 = await checkConfigText(badCalls, "s.yaml").then(
      () => undefined,
      (e) => e,
    );
    assert.ok(e3 instanceof ConfigError);
    assert.equal(
      e3.message,
      `Invalid config "s.yaml" line 13: "scorers[1].calls" must list tools' names or {name, arguments} mappings`,
    );
  });
});
