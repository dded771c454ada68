// decodeUtf8 against real bytes: one text too long for a string, and bytes
// that are not UTF-8.

import assert from "node:assert/strict";
import { decodeUtf8, TextTooLongError, Utf8Error } from "../../src/io/mod.ts";

Deno.test("decodeUtf8 calls valid UTF-8 longer than a string can be too long, not invalid; a bad byte is still named by its line", () => {
  // A 515 MiB JSON dataset was 'not valid UTF-8 (line 1); save it as
  // UTF-8': the decoder throws one TypeError for both.
  const bytes = new Uint8Array(2 ** 29 + 2 ** 20).fill(0x61);
  bytes[100] = 0x0a;
  assert.throws(() => decodeUtf8(bytes), (error) => {
    assert.ok(error instanceof TextTooLongError, String(error));
    assert.equal(
      error.message,
      "too large to read as one text (513 MiB; a text holds at most about 512 MiB)",
    );
    return true;
  });
  bytes[200] = 0xff;
  assert.throws(() => decodeUtf8(bytes), (error) => {
    assert.ok(error instanceof Utf8Error, String(error));
    assert.equal(error.line, 2);
    return true;
  });
});
