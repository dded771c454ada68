// An input that opens but cannot be read (stdin redirected from a folder, a
// file whose reads fail) is an input error that names it: exit 2, one line
// on stderr, no stack trace.

import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI } from "../_cli.ts";

/** Runs `cli.ts ...args < stdin` through `sh`, which opens the folder for it. */
async function withStdinFrom(
  stdin: string,
  args: string[],
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { code, stdout, stderr } = await new Deno.Command("sh", {
    args: [
      "-c",
      'exec "$0" run -A "$@" < "$EVALPIPE_TEST_STDIN"',
      Deno.execPath(),
      CLI,
      ...args,
    ],
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", EVALPIPE_TEST_STDIN: stdin },
  }).output();
  const dec = new TextDecoder();
  return { code, stdout: dec.decode(stdout), stderr: dec.decode(stderr) };
}

Deno.test("every command that reads stdin names it when stdin is a folder, and exits 2", async () => {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_unreadable_" });
  try {
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      'dataset: "-"\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n',
    );
    const commands = [
      ["score", "--name", "s", "--scorer", "cat >/dev/null; echo '{}'"],
      ["score", "--name", "s", "--scorer", "cat >/dev/null; echo '{}'", "-"],
      ["aggregate"],
      ["run", "suite.yaml"],
      ["view", "-"],
    ];
    for (const args of commands) {
      const out = await withStdinFrom(dir, args, dir);
      assert.equal(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
      assert.equal(out.stdout, "");
      assert.equal(
        out.stderr,
        "evalpipe: Cannot read stdin: it is a folder\n",
        args.join(" "),
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("score and aggregate name a named input whose reads fail", async () => {
  // Reading /proc/self/mem from its start fails with EIO: a disk that fails.
  const failing = "/proc/self/mem";
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_unreadable_" });
  try {
    for (
      const args of [
        ["score", "--name", "s", "--scorer", "cat >/dev/null", failing],
        ["aggregate", failing],
      ]
    ) {
      const out = await withStdinFrom("/dev/null", args, dir);
      assert.equal(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
      assert.match(
        out.stderr,
        /^evalpipe: Cannot read "\/proc\/self\/mem": Input\/output error.*\n$/,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
