import assert from "node:assert/strict";
import { codeOfReason, DIAGNOSTIC_CODES } from "../../mod.ts";

const README = new URL("../../README.md", import.meta.url);

Deno.test("every diagnostic code is dotted, explained, and listed in the README", async () => {
  const readme = await Deno.readTextFile(README);
  const section = readme.slice(readme.indexOf("#### Diagnostic codes"));
  for (const [code, meaning] of Object.entries(DIAGNOSTIC_CODES)) {
    assert.match(code, /^[a-z_]+(\.[a-z_]+)+$/, code);
    assert.ok(meaning.length > 10, code);
    assert.ok(section.includes(`\`${code}\``), `README lacks ${code}`);
  }
});

Deno.test("codeOfReason reads the reason prefixes evalpipe writes", () => {
  assert.equal(codeOfReason("target error: HTTP 503"), "target.error");
  assert.equal(codeOfReason("invalid case: no input"), "case.invalid");
  assert.equal(codeOfReason("budget: 100 calls spent"), "budget.exhausted");
  assert.equal(
    codeOfReason('scorer error: invalid Score: "value" is missing'),
    "scorer.invalid_score",
  );
  assert.equal(codeOfReason("scorer error: boom"), "scorer.error");
  assert.equal(codeOfReason("something else", "legacy.error"), "legacy.error");
});
