import assert from "node:assert/strict";
import { CLI } from "../_cli.ts";
import { within, withTempDir } from "../_proc.ts";

const encoder = new TextEncoder();

/** Reads `reader` until `n` whole lines have come, and returns them. */
async function lines(
  reader: ReadableStreamDefaultReader<string>,
  n: number,
  seen: { rest: string },
): Promise<string[]> {
  while (seen.rest.split("\n").length <= n) {
    const { value, done } = await reader.read();
    if (done) break;
    seen.rest += value;
  }
  const all = seen.rest.split("\n");
  seen.rest = all.slice(n).join("\n");
  return all.slice(0, n);
}

// `tail -f`-style readers rely on it: the sink gathers lines into large
// writes only while more are ready, never by holding a line back.
for (
  const [command, config, record] of [
    [
      "run",
      "dataset: '-'\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
      (i: number) => ({ id: i, input: "q", expected: "a", output: "a" }),
    ],
    [
      "score",
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
      (i: number) => ({
        unit_id: `u${i}`,
        input: "q",
        expected: "a",
        output: "a",
      }),
    ],
  ] as const
) {
  Deno.test(`cli ${command} writes each Score line of a slow producer before the next record comes`, async () => {
    await withTempDir(async (dir) => {
      await Deno.writeTextFile(`${dir}/s.yaml`, config);
      const child = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          CLI,
          command,
          ...(command === "run" ? ["s.yaml"] : ["--config", "s.yaml"]),
        ],
        cwd: dir,
        stdin: "piped",
        stdout: "piped",
        stderr: "null",
        env: { NO_COLOR: "1" },
      }).spawn();
      const writer = child.stdin.getWriter();
      const reader = child.stdout.pipeThrough(new TextDecoderStream())
        .getReader();
      const seen = { rest: "" };
      try {
        for (let i = 1; i <= 3; i++) {
          await writer.write(
            encoder.encode(JSON.stringify(record(i)) + "\n"),
          );
          // The next record is written only once this one's Score is out.
          const [line] = await within(
            lines(reader, 1, seen),
            20_000,
            `the Score line of record ${i}`,
          );
          assert.equal(JSON.parse(line!).value, 1);
        }
        await writer.close();
        assert.deepEqual(await lines(reader, 1, seen), [""]);
        assert.equal((await child.status).code, 0);
      } finally {
        await writer.close().catch((error) => {
          // Closed above when the test got that far.
          if (!(error instanceof TypeError)) throw error;
        });
        await reader.cancel();
        await child.status;
      }
    });
  });
}
