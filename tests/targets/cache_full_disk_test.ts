// A cache on a full or read-only file system: the answer already paid for is
// kept (the unit is scored) and counted as not cached, never turned into a
// target error. The file system is a tiny tmpfs made for the test (root
// only: mounting needs it), filled up, then remounted read-only.

import assert from "node:assert/strict";
import {
  cachedTarget,
  openaiTarget,
  runTarget,
  TargetCache,
} from "../../mod.ts";
import { fakeLlm } from "../_fake_llm.ts";
import { withTempDir } from "../_proc.ts";

async function sh(script: string): Promise<void> {
  const out = await new Deno.Command("sh", {
    args: ["-c", script],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
}

const root = Deno.uid() === 0;

Deno.test({
  name:
    "cachedTarget keeps answers when the cache's disk is full (ENOSPC) or read-only (EROFS)",
  ignore: !root,
  async fn() {
    await withTempDir(async (dir) => {
      const disk = `${dir}/disk`;
      await Deno.mkdir(disk);
      await sh(`mount -t tmpfs -o size=64k tmpfs '${disk}'`);
      try {
        await using server = fakeLlm();
        const target = openaiTarget({ base_url: server.baseUrl, model: "m" });
        const run = async (cache: TargetCache, n: number) =>
          await Array.fromAsync(
            ReadableStream.from(
              Array.from({ length: n }, (_, i) => ({
                example_id: `d#${i + 1}`,
                line: i + 1,
                case: { input: `q${i} ${"x".repeat(2000)}` },
              })),
            ).pipeThrough(runTarget(cachedTarget(target, cache))),
          );
        // The folder exists and the disk is full to its last byte.
        await Deno.mkdir(`${disk}/cache`);
        await sh(`dd if=/dev/zero of='${disk}/filler' bs=4k 2>/dev/null; true`);
        const full = new TargetCache(`${disk}/cache`);
        const units = await run(full, 5);
        assert.deepEqual(
          units.map((u) => u.target?.error),
          Array(5).fill(undefined),
        );
        assert.ok(units.every((u) => u.output?.startsWith("echo: q")));
        assert.deepEqual([full.misses, full.writeErrors], [5, 5]);

        await sh(`rm '${disk}/filler'; mount -o remount,ro '${disk}'`);
        const readOnly = new TargetCache(`${disk}/cache`);
        const again = await run(readOnly, 3);
        assert.deepEqual(
          again.map((u) => u.target?.error),
          Array(3).fill(undefined),
        );
        assert.deepEqual([readOnly.misses, readOnly.writeErrors], [3, 3]);
      } finally {
        await sh(`umount '${disk}'`);
      }
    });
  },
});
