// A script draws run's progress line from mod.ts: fed by runSuite's
// progress option as it is, as run gives it, it ends on the run's count.

import assert from "node:assert/strict";
import { join } from "node:path";
import { ProgressLine, runSuite } from "../../mod.ts";
import { withTempDir } from "../_proc.ts";

/** A line 80 columns wide, without colours, drawn into a string. */
function lineInString(): { line: ProgressLine; drawn: () => string } {
  let drawn = "";
  const line = new ProgressLine({
    write: (text) => void (drawn += text),
    columns: () => 80,
    color: false,
  });
  return { line, drawn: () => drawn };
}

Deno.test("ProgressLine, from mod.ts, draws a runSuite script's progress as run draws it", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      join(dir, "d.jsonl"),
      '{"input": "q", "output": "a", "expected": "a"}\n{"input": "q", "output": "b", "expected": "a"}\n{"output": "b"}\n',
    );
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    const { line, drawn } = lineInString();
    line.begin();
    try {
      await runSuite(join(dir, "suite.yaml"), {
        sink: new WritableStream(),
        onInvalidRecord: () => {},
        progress: line,
      });
    } finally {
      line.finish();
    }
    // The last frame on a line of its own: all three units, the invalid
    // case's blocked Score counted as an error.
    const last = drawn().split("\r\x1b[K").at(-1)!;
    assert.match(last, /^3\/3 units \(100%\) {2}1 error {2}in \d+s\n$/);
  });
});

Deno.test("ProgressLine begun twice keeps one redraw timer, which finish() stops", () => {
  const { line, drawn } = lineInString();
  line.begin();
  line.total(1);
  line.begin();
  line.finish();
  // The test's sanitizer fails it on a timer left running.
  // One frame: the last.
  const [before, frame, ...more] = drawn().split("\r\x1b[K");
  assert.deepEqual([before, more], ["", []]);
  assert.match(frame!, /^0\/1 units \(0%\) {2}0 errors {2}in \d+s\n$/);
});
