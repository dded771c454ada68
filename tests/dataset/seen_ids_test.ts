import assert from "node:assert/strict";
import { SeenIds } from "../../src/dataset/_seen_ids.ts";

// SeenIds must answer exactly as a Map by text would, whatever mix of dense,
// huge, non-canonical and textual ids comes, in whatever order.
Deno.test("SeenIds answers as a Map of ids to lines", () => {
  // A fixed-seed generator: a failure names the seed that reproduces it.
  for (let seed = 1; seed <= 40; seed++) {
    let state = seed;
    const next = (n: number) => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state % n;
    };
    const ids = () => {
      switch (next(9)) {
        case 0:
          return String(next(50)); // small, repeated often
        case 1:
          return String(next(5000)); // dense range
        case 2:
          return String(2 ** 31 - 1 - next(3)); // the largest dense-able
        case 3:
          return String(2 ** 31 + next(3)); // beyond: by text
        case 4:
          return String(1_000_000 + next(2_000_000) * 7); // sparse, big
        case 5:
          return "0" + String(next(20)); // leading zero: not canonical
        case 6:
          return ["", "-1", "1.0", "1e3", " 1", "x"][next(6)]!;
        case 7:
          return String(next(200_000)); // grows the dense array over time
        default:
          return `case-${next(100)}`;
      }
    };
    const seen = new SeenIds();
    const reference = new Map<string, number>();
    for (let line = 1; line <= 4000; line++) {
      const id = ids();
      assert.equal(
        seen.get(id),
        reference.get(id),
        `seed ${seed}, line ${line}, id ${JSON.stringify(id)}`,
      );
      if (!reference.has(id)) {
        reference.set(id, line);
        seen.set(id, line);
      }
    }
    for (const [id, line] of reference) {
      assert.equal(
        seen.get(id),
        line,
        `seed ${seed}, id ${JSON.stringify(id)}`,
      );
    }
  }
});

Deno.test("SeenIds tells huge, non-canonical and small numeric ids apart", () => {
  const seen = new SeenIds();
  seen.set("2000000000", 1);
  seen.set("7", 2);
  for (let i = 0; i < 100_000; i++) seen.set(String(1_000_000 + i), i + 3);
  assert.equal(seen.get("2000000000"), 1);
  assert.equal(seen.get("7"), 2);
  assert.equal(seen.get("07"), undefined);
  assert.equal(seen.get("8"), undefined);
  assert.equal(seen.get("1099999"), 100_002);
  assert.equal(seen.get("1100000"), undefined);
});
