import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Sha256 } from "../../src/fingerprint/_sha256.ts";

const native = (parts: Array<string | Uint8Array>) => {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return h.digest("hex");
};

Deno.test("Sha256 agrees with node:crypto at every padding boundary", () => {
  for (let n = 0; n <= 200; n++) {
    const text = "a".repeat(n);
    assert.equal(new Sha256().update(text).hex(), native([text]), `${n} bytes`);
    const bytes = new Uint8Array(n).map((_, i) => (i * 31 + n) & 0xff);
    assert.equal(new Sha256().update(bytes).hex(), native([bytes]), `${n}`);
  }
});

Deno.test("Sha256 agrees with node:crypto on text, bytes and split updates", () => {
  let state = 7;
  const next = (n: number) => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % n;
  };
  const alphabet = ["a", "\0", "é", "€", "😀", "\ud800", "\n", "Z", "\u007f"];
  for (let round = 0; round < 300; round++) {
    const parts: Array<string | Uint8Array> = [];
    for (let k = next(6); k >= 0; k--) {
      if (next(3) === 0) {
        parts.push(new Uint8Array(next(150)).map(() => next(256)));
      } else {
        let s = "";
        for (let i = next(150); i > 0; i--) {
          s += alphabet[next(alphabet.length)];
        }
        parts.push(s);
      }
    }
    const hash = new Sha256();
    for (const p of parts) hash.update(p);
    assert.equal(hash.hex(), native(parts), `round ${round}`);
  }
  // A known vector, independent of both implementations.
  assert.equal(
    new Sha256().update("abc").hex(),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
});

Deno.test("Sha256.copyFrom goes on from another hash's state, which stays as it was", () => {
  for (let n = 0; n <= 130; n++) {
    const start = new Sha256().update("s".repeat(n));
    const copy = new Sha256().update("something else").copyFrom(start);
    assert.equal(copy.update("tail").hex(), native(["s".repeat(n), "tail"]));
    assert.equal(start.update("other").hex(), native(["s".repeat(n), "other"]));
  }
});
