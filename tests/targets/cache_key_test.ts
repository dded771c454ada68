// Cache keys are what committed caches are found by (examples/ci/suite's
// .evalpipe/cache/ among them): a key must never change for the same target,
// case and epoch, however it is computed. These keys were made by the code
// that wrote the first caches; a change of any is a broken cache.

import assert from "node:assert/strict";
import {
  type CacheableTarget,
  cacheKey,
  openaiTarget,
} from "../../src/targets/mod.ts";
import { ChatClient } from "../../src/net/mod.ts";
import { fingerprint } from "../../src/fingerprint/mod.ts";

const support = openaiTarget({
  base_url: "http://127.0.0.1:11434/v1",
  model: "llama3.2",
  api_key_env: "LLM_API_KEY",
  system: "You answer from the context only.",
  prompt: "Context:\n{{context}}\n\nQuestion: {{input}}",
  params: { temperature: 0 },
}, () => "sk-any");
const canada = {
  input: "Do you ship to Canada?",
  context: ["We ship to Canada in 5 to 8 days."],
};

Deno.test("cacheKey gives the keys it always gave", () => {
  assert.equal(
    cacheKey(support, canada, 1),
    "3788daedb3d67b5d74ffaf3d0aaacd254c60bd0cef75b0a0cc9acf98dc420634",
  );
  assert.equal(
    cacheKey(support, canada, 2),
    "9fad021b1046573152c24c5c6ade623e060b79dafa02ba57d3fc14eb19df5000",
  );
  assert.equal(
    cacheKey(support, { input: "Ça coûte combien ? 😀", context: [] }, 1),
    "1bd94f68ff4b9580357b47038521fc10a231c7e6139268313fe41da7968d4d46",
  );
  // Asked again after other keys: nothing of one key is left in the next.
  assert.equal(
    cacheKey(support, canada, 1),
    "3788daedb3d67b5d74ffaf3d0aaacd254c60bd0cef75b0a0cc9acf98dc420634",
  );
  assert.equal(
    cacheKey(
      openaiTarget({ model: "m", base_url: "http://127.0.0.1:9/v1" }),
      { input: "q" },
      1,
    ),
    "62dc919ae8d1607b956db4a56b5da01c4351144566b266bf821ac7759d8fcb80",
  );
});

Deno.test("ChatClient.cacheKey gives the keys it always gave", () => {
  const client = new ChatClient({
    model: "m",
    base_url: "http://127.0.0.1:9/v1",
  });
  assert.equal(
    client.cacheKey([{ role: "user", content: "q" }]),
    "314dd843756bb93576a845678aab7c06edab91eb485c2c0d0c4d2e075a4cfb05",
  );
});

Deno.test("cacheKey is the fingerprint of the identity, the request and the epoch, at every length", () => {
  for (let n = 0; n <= 140; n += 1) {
    const target: CacheableTarget = {
      identity: "i".repeat(n),
      request: (c) => c.input,
      call: () => ({ output: "" }),
    };
    for (const input of ["", "q", "é".repeat(n), "x".repeat(140 - n)]) {
      for (const epoch of [1, 12]) {
        assert.equal(
          cacheKey(target, { input }, epoch),
          fingerprint(
            JSON.stringify(target.identity),
            JSON.stringify(input),
            String(epoch),
          ).slice("sha256:".length),
          `identity of ${n}, input ${JSON.stringify(input)}, epoch ${epoch}`,
        );
      }
    }
  }
});
