// The one deadline timer every run shares (src/process/_deadlines.ts):
// deadlines fire in time order, a cleared one never fires, and an expiry
// that throws leaves neither the others due with it nor the later ones
// unfired.

import assert from "node:assert/strict";
import { clearDeadline, setDeadline } from "../../src/process/_deadlines.ts";

/** Resolves once `fired` holds `n` names, or rejects after `ms`. */
function firedCount(fired: string[], n: number, ms = 5_000): Promise<void> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const check = () => {
      if (fired.length >= n) return resolve();
      if (performance.now() - start > ms) {
        return reject(new Error(`fired only ${fired.join(",")}`));
      }
      // Not the deadline timer under test: a plain one, to poll.
      AbortSignal.timeout(5).addEventListener("abort", check);
    };
    check();
  });
}

Deno.test("deadlines fire in time order, and a cleared one does not fire", async () => {
  const fired: string[] = [];
  const now = performance.now();
  setDeadline(now + 60, () => fired.push("late"));
  const cleared = setDeadline(now + 30, () => fired.push("cleared"));
  setDeadline(now + 20, () => fired.push("early"));
  clearDeadline(cleared);
  await firedCount(fired, 2);
  // Past the cleared one's time too.
  await new Promise<void>((resolve) =>
    AbortSignal.timeout(40).addEventListener("abort", () => resolve())
  );
  assert.deepEqual(fired, ["early", "late"]);
});

Deno.test("an expiry that throws is reported, and the deadlines due with it and after it still fire", async () => {
  const fired: string[] = [];
  const reported: unknown[] = [];
  const onError = (event: ErrorEvent) => {
    event.preventDefault();
    reported.push(event.error);
  };
  globalThis.addEventListener("error", onError);
  try {
    const now = performance.now();
    setDeadline(now + 10, () => {
      fired.push("throws");
      throw new Error("a bug in an expiry");
    });
    setDeadline(now + 10, () => fired.push("same time"));
    setDeadline(now + 80, () => fired.push("later"));
    await firedCount(fired, 3);
    assert.deepEqual(fired, ["throws", "same time", "later"]);
    assert.equal(reported.length, 1);
    assert.match(String(reported[0]), /a bug in an expiry/);
  } finally {
    globalThis.removeEventListener("error", onError);
  }
});
