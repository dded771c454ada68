import assert from "node:assert/strict";
import { costLimit, latencyLimit } from "../../mod.ts";
import { assertNotApplicable, one, unit } from "./_unit.ts";

Deno.test("latencyLimit compares the target's latency_ms with max_ms", () => {
  const s = latencyLimit({ max_ms: 1000 });
  const fast = one(s, unit("a", undefined, { latency_ms: 1000 }));
  assert.equal(fast.value, 1);
  assert.equal(fast.reason, "1000 ms");
  const slow = one(s, unit("a", undefined, { latency_ms: 1000.5 }));
  assert.equal(slow.value, 0);
  assert.equal(slow.reason, "1000.5 ms, more than 1000 ms");
});

Deno.test("latencyLimit is non_evaluable without a latency, never a pass", () => {
  const s = latencyLimit({ max_ms: 1000 });
  const reason = "not applicable: the unit's target record has no latency_ms";
  assertNotApplicable(one(s, unit("a")), reason);
  assertNotApplicable(one(s, unit("a", undefined, { model: "m" })), reason);
  // One that is there but unusable is named, not called absent.
  assertNotApplicable(
    one(s, unit("a", undefined, { latency_ms: "fast" })),
    'not applicable: the unit\'s target record gives latency_ms as "fast", not a number of at least 0',
  );
  assertNotApplicable(
    one(s, unit("a", undefined, { latency_ms: -5 })),
    "not applicable: the unit's target record gives latency_ms as -5, not a number of at least 0",
  );
  // A function target's info may give NaN: named, not JSON's null.
  assertNotApplicable(
    one(s, unit("a", undefined, { latency_ms: NaN })),
    "not applicable: the unit's target record gives latency_ms as NaN, not a number of at least 0",
  );
  assert.throws(() => latencyLimit({ max_ms: -1 }), RangeError);
  assert.notEqual(
    latencyLimit({ max_ms: 1 }).version,
    latencyLimit({ max_ms: 2 }).version,
  );
});

Deno.test("costLimit compares the target's cost_usd with max_usd, non_evaluable without one", () => {
  const s = costLimit({ max_usd: 0.01, name: "spend" });
  assert.equal(s.name, "spend");
  assert.equal(one(s, unit("a", undefined, { cost_usd: 0.01 })).value, 1);
  const dear = one(s, unit("a", undefined, { cost_usd: 0.011 }));
  assert.equal(dear.value, 0);
  assert.equal(dear.reason, "$0.011, more than $0.01");
  assertNotApplicable(
    one(s, unit("a", undefined, { latency_ms: 3 })),
    "not applicable: the unit's target record has no cost_usd",
  );
});
