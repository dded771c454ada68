import assert from "node:assert/strict";
import { UnitScores } from "../../src/run/unit_scores.ts";
import type { Unit } from "../../src/dataset/mod.ts";
import { scored } from "../../src/score/mod.ts";

const unit = (id: string): Unit => ({
  example_id: id,
  unit_id: id,
  input: "q",
  output: "a",
});
const score = (metric: string, id: string) =>
  scored(metric, 1, { example_id: id, unit_id: id });
const ids = (entries: ReturnType<UnitScores["take"]>) =>
  entries.map(([u, s]) =>
    `${u?.unit_id ?? "-"}:${s.map((x) => x.metric).join("+")}`
  );

Deno.test("UnitScores gives each unit its Scores as soon as its last metric arrives", () => {
  const joiner = new UnitScores(() => 2);
  joiner.push([unit("a"), unit("b")]);
  assert.deepEqual(ids(joiner.take([score("m", "a")])), []);
  assert.deepEqual(ids(joiner.take([score("n", "a"), score("m", "b")])), [
    "a:m+n",
  ]);
  joiner.push([unit("c")]);
  assert.deepEqual(ids(joiner.take([score("n", "b")])), ["b:m+n"]);
  // c's Scores never came: it was not scored, and is left out.
  assert.deepEqual(ids(joiner.rest()), []);
});

Deno.test("UnitScores writes a unit without Scores with the next ones taken, and Scores of no waiting unit alone", () => {
  const joiner = new UnitScores((id) => (id === "b" ? 0 : 1));
  joiner.push([unit("a"), unit("b"), unit("c")]);
  // b's metrics were all scored before (a resume): it comes out with none.
  assert.deepEqual(ids(joiner.take([score("m", "a")])), ["b:", "a:m"]);
  assert.deepEqual(ids(joiner.take([score("m", "c")])), ["c:m"]);
  assert.deepEqual(ids(joiner.take([score("m", "zz")])), ["-:m"]);
  // A Score beyond a unit's metrics comes alone too.
  assert.deepEqual(ids(joiner.take([score("n", "c")])), ["-:n"]);
  assert.deepEqual(ids(joiner.rest()), []);
});

Deno.test("UnitScores joins Scores that come out of order (an interrupted run), and gives the rest in the units' order", () => {
  const joiner = new UnitScores(() => 2);
  joiner.push([unit("a"), unit("b"), unit("c"), unit("d")]);
  assert.deepEqual(ids(joiner.take([score("m", "c"), score("m", "a")])), []);
  assert.deepEqual(ids(joiner.take([score("n", "c")])), ["c:m+n"]);
  assert.deepEqual(ids(joiner.take([score("m", "d")])), []);
  assert.deepEqual(ids(joiner.rest()), ["a:m", "d:m"]);
});

Deno.test("UnitScores keeps a unit's early Scores when it reaches the head, and skips units written early", () => {
  const joiner = new UnitScores(() => 2);
  joiner.push([unit("a"), unit("b"), unit("c"), unit("d")]);
  // b gets one Score early, c both: c is written at once.
  assert.deepEqual(
    ids(joiner.take([score("m", "b"), score("m", "c"), score("n", "c")])),
    ["c:m+n"],
  );
  // a is written; b, now at the head, keeps its early Score.
  assert.deepEqual(ids(joiner.take([score("m", "a"), score("n", "a")])), [
    "a:m+n",
  ]);
  assert.deepEqual(ids(joiner.take([score("n", "b")])), ["b:m+n"]);
  // The head moved past c, written before: d is next.
  assert.deepEqual(ids(joiner.take([score("m", "d")])), []);
  assert.deepEqual(ids(joiner.rest()), ["d:m"]);
});
