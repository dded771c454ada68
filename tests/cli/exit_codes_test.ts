// Every error a user can cause carries the exit code `main` ends with, so
// `main` maps it without importing its class.

import assert from "node:assert/strict";
import {
  exitCodeOf,
  InputError,
  OUTPUT_EXIT_CODE,
  OutputError,
  outputErrorOf,
} from "../../src/base/mod.ts";
import { UsageError } from "../../src/cli/mod.ts";
import { ConfigError } from "../../src/config/mod.ts";
import { DatasetError } from "../../src/dataset/mod.ts";
import { RunRecordError, ScoresFileError } from "../../src/record/mod.ts";
import { ResumeError } from "../../src/run/mod.ts";
import { openOut } from "../../src/io/mod.ts";

Deno.test("every user-error class carries exit code 2 and keeps its name and built-in", async () => {
  const errors: Array<[Error, string, ErrorConstructor]> = [
    [new UsageError('Unknown option "--x"'), "UsageError", Error],
    [new ConfigError("suite.yaml", 3, "bad"), "ConfigError", SyntaxError],
    [new DatasetError('Dataset "d.jsonl" has no cases'), "DatasetError", Error],
    [new ScoresFileError("Cannot read"), "ScoresFileError", Error],
    [new RunRecordError("Not a record"), "RunRecordError", SyntaxError],
    [new ResumeError("Changed"), "ResumeError", Error],
  ];
  for (const [error, name, builtin] of errors) {
    assert.equal(exitCodeOf(error), 2, name);
    assert.equal(error.name, name);
    assert.ok(error instanceof builtin, name);
  }
  const dir = await Deno.makeTempDir();
  try {
    await assert.rejects(openOut(`${dir}/no/such/folder.ndjson`), (error) => {
      assert.ok(error instanceof InputError);
      assert.equal(exitCodeOf(error), 2);
      assert.equal(
        error.message,
        `Cannot write ${
          JSON.stringify(`${dir}/no/such/folder.ndjson`)
        }: no such folder ${JSON.stringify(`${dir}/no/such`)}`,
      );
      return true;
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an output the disk refuses is an OutputError with exit code 3, recognised by its errno code", () => {
  const error = new OutputError("Cannot write stdout: no space left on device");
  assert.equal(exitCodeOf(error), OUTPUT_EXIT_CODE);
  assert.equal(OUTPUT_EXIT_CODE, 3);
  assert.equal(error.name, "OutputError");
  const words: Record<string, string> = {
    ENOSPC: "no space left on device",
    EDQUOT: "disk quota exceeded",
    EROFS: "read-only file system",
    EFBIG: "file too large",
    EIO: "input/output error",
  };
  for (const [code, text] of Object.entries(words)) {
    const os = Object.assign(new Error(`${code} (os error 1)`), { code });
    const mapped = outputErrorOf(os, '--out "o.ndjson"');
    assert.equal(
      mapped?.message,
      `Cannot write --out "o.ndjson": ${text} (${code})`,
    );
    assert.equal(mapped?.cause, os);
  }
  // A reader that went away, and errors of other kinds, are not output failures.
  assert.equal(
    outputErrorOf(new Deno.errors.BrokenPipe("x"), "stdout"),
    undefined,
  );
  assert.equal(
    outputErrorOf(Object.assign(new Error("x"), { code: "EACCES" }), "stdout"),
    undefined,
  );
  assert.equal(outputErrorOf("ENOSPC", "stdout"), undefined);
});
