// Every error a user can cause carries the exit code `main` ends with, so
// `main` maps it without importing its class.

import assert from "node:assert/strict";
import { exitCodeOf, InputError } from "../../src/base/mod.ts";
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
        }: no such file`,
      );
      return true;
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
