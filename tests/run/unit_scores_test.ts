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
  assert.deepEqual(ids(joiner.rest()), ["c:"]);
});

Deno.test("UnitScores writes a unit without Scores when a later one's arrive, and Scores of no waiting unit alone", () => {
  const joiner = new UnitScores((id) => (id === "b" ? 0 : 1));
  joiner.push([unit("a"), unit("b"), unit("c")]);
  assert.deepEqual(ids(joiner.take([score("m", "a")])), ["a:m"]);
  // b's metrics were all scored before (a resume): it comes out with none.
  assert.deepEqual(ids(joiner.take([score("m", "c")])), ["b:", "c:m"]);
  assert.deepEqual(ids(joiner.take([score("m", "zz")])), ["-:m"]);
  assert.deepEqual(ids(joiner.rest()), []);
});
