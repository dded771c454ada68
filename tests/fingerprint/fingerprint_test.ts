import assert from "node:assert/strict";
import { join } from "node:path";
import {
  commandFingerprint,
  fileFingerprint,
  fingerprint,
} from "../../src/fingerprint/mod.ts";

const encoder = new TextEncoder();

/** The platform's SHA-256 of the parts, each followed by a NUL. */
async function platform(...parts: Array<string | Uint8Array>): Promise<string> {
  const bytes = parts.flatMap((p) => [
    ...(typeof p === "string" ? encoder.encode(p) : p),
    0,
  ]);
  const digest = await crypto.subtle.digest("SHA-256", new Uint8Array(bytes));
  const hex = Array.from(
    new Uint8Array(digest),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
  return `sha256:${hex}`;
}

Deno.test("fingerprint is the SHA-256 of its parts, each ended by a NUL, as crypto.subtle computes it", async () => {
  assert.equal(
    fingerprint(),
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  );
  // printf 'abc\0' | sha256sum
  assert.equal(
    fingerprint("abc"),
    "sha256:dc1114cd074914bd872cc1f9a23ec910ea2203bc79779ab2e17da25782a624fc",
  );
  const cases: Array<Array<string | Uint8Array>> = [
    [""],
    ["a", "b"],
    ["ab"],
    ["é€😀", "\0", "\ud800"],
    ["x".repeat(55)],
    ["x".repeat(56)],
    ["x".repeat(64), new Uint8Array(1000).map((_, i) => i & 0xff)],
    [JSON.stringify({ type: "openai", model: "m" }), '{"input":"q"}', "1"],
  ];
  for (const parts of cases) {
    assert.equal(fingerprint(...parts), await platform(...parts));
  }
  // Parts are kept apart: "a","b" is not "ab".
  assert.notEqual(fingerprint("a", "b"), fingerprint("ab"));
});

Deno.test("fileFingerprint is the fingerprint of the file's bytes, read as a stream", async () => {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_fingerprint_test_" });
  try {
    const path = join(dir, "d.jsonl");
    const bytes = new Uint8Array(300_000).map((_, i) => (i * 7) & 0xff);
    await Deno.writeFile(path, bytes);
    assert.equal(await fileFingerprint(path), await platform(bytes));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("commandFingerprint changes when the script the command runs changes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_fingerprint_test_" });
  try {
    await Deno.writeTextFile(join(dir, "s.py"), "print(1)\n");
    const before = commandFingerprint("python3 s.py", dir);
    assert.equal(before, await platform("python3 s.py", "print(1)\n"));
    await Deno.writeTextFile(join(dir, "s.py"), "print(2)\n");
    assert.notEqual(commandFingerprint("python3 s.py", dir), before);
    // A command that names no file is hashed alone.
    assert.equal(commandFingerprint("cat", dir), await platform("cat"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
