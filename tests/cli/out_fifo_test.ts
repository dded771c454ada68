// A FIFO given as --out opens only once something reads it: the run says
// so on stderr rather than waiting without a word, then writes to it.

import assert from "node:assert/strict";
import { CLI, cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";

/**
 * Writes the suite (`cases` JSONL lines, `target`) and a FIFO in `dir`,
 * and starts `run s.yaml --out FIFO ...more`, stderr piped.
 */
async function runIntoFifo(
  dir: string,
  cases: string,
  target: string,
  more: string[] = [],
): Promise<{ fifo: string; child: Deno.ChildProcess }> {
  await Deno.writeTextFile(`${dir}/d.jsonl`, cases);
  await Deno.writeTextFile(
    `${dir}/s.yaml`,
    `dataset: d.jsonl\ntarget: ${target}\nscorers: [{ type: exact_match }]\nconcurrency: 1\n`,
  );
  const fifo = `${dir}/scores.fifo`;
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.equal(made.code, 0);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "run", "s.yaml", "--out", fifo, ...more],
    cwd: dir,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  return { fifo, child };
}

Deno.test("cli run --out a FIFO nobody reads says it waits for a reader, then writes the Scores to it", async () => {
  await withTempDir(async (dir) => {
    const { fifo, child } = await runIntoFifo(
      dir,
      '{"input":"q","output":"a","expected":"a"}\n',
      "{ type: replay }",
    );
    // Read stderr as it comes, up to the note: nothing reads the FIFO yet.
    const reader = child.stderr.pipeThrough(new TextDecoderStream())
      .getReader();
    let said = "";
    while (!said.includes("FIFO")) {
      const { done, value } = await reader.read();
      if (done) break;
      said += value;
    }
    assert.ok(
      said.includes(
        `evalpipe: --out ${
          JSON.stringify(fifo)
        } is a FIFO: the run starts once something reads it\n`,
      ),
      said,
    );
    // Now a reader: the run starts and its Scores come through.
    const scores = await Deno.readTextFile(fifo);
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      said += r.value;
    }
    const { code } = await child.status;
    assert.equal(code, 0, said);
    const [score] = scores.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(score.metric, "exact_match");
    assert.equal(score.value, 1);
  });
});

Deno.test("cli run --out a FIFO, interrupted, gives no resume command: a resume cannot read back what went through it", async () => {
  await withTempDir(async (dir) => {
    const { fifo, child } = await runIntoFifo(
      dir,
      Array.from({ length: 50 }, (_, i) => `{"input":"q${i}","expected":"x"}\n`)
        .join(""),
      '{ type: subprocess, cmd: "sleep 0.2; echo x", stdin: text }',
    );
    const said = new Response(child.stderr).text();
    // The first Score through the FIFO: the run has begun; then SIGINT, with
    // most of the 50 cases still to come.
    const scores = (await Deno.open(fifo)).readable
      .pipeThrough(new TextDecoderStream()).getReader();
    let read = "";
    while (!read.includes("\n")) {
      const { done, value } = await scores.read();
      if (done) break;
      read += value;
    }
    child.kill("SIGINT");
    for (let r = await scores.read(); !r.done; r = await scores.read()) {
      read += r.value;
    }
    const { code } = await child.status;
    const stderr = await said;
    assert.equal(code, 130, stderr);
    assert.match(stderr, /the run is incomplete/);
    assert.doesNotMatch(stderr, /resume with/);
    assert.ok(
      stderr.includes(
        `evalpipe: --out ${
          JSON.stringify(fifo)
        } is not a regular file: what went through it cannot be read back, so this run cannot be resumed; to be able to, give it --out FILE\n`,
      ),
      stderr,
    );
  });
});

Deno.test("cli run --resume refuses an --out that is a FIFO: there is nothing to read back", async () => {
  await withTempDir(async (dir) => {
    const { fifo, child } = await runIntoFifo(
      dir,
      '{"input":"q","output":"a","expected":"a"}\n',
      "{ type: replay }",
      ["--resume"],
    );
    const said = new Response(child.stderr).text();
    const { code } = await child.status;
    const stderr = await said;
    assert.equal(code, 2, stderr);
    assert.ok(
      stderr.includes(
        `--resume reads back the Scores file given with --out, and ${
          JSON.stringify(fifo)
        } is not a regular file: resume a run written to a file\n`,
      ),
      stderr,
    );
  });
});

Deno.test("cli run --record a FIFO with --html is refused: the report reads the record back", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input":"q","output":"a","expected":"a"}\n',
    );
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    const fifo = `${dir}/record.fifo`;
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert.equal(made.code, 0);
    const { code, stderr } = await cli(
      ["run", "s.yaml", "--record", fifo, "--html", "r.html"],
      dir,
    );
    assert.equal(code, 2, stderr);
    assert.ok(
      stderr.includes(
        `The reports are made from the run's record, read back once written, and --record ${
          JSON.stringify(fifo)
        } is not a regular file: give --record a file, or leave it out`,
      ),
      stderr,
    );
  });
});

// Opens the FIFO, says "full" once its buffer holds 64 KiB (the run's
// writes then wait), and reads it only once its own stdin closes.
const HOLDING_READER = `import fcntl, struct, sys, termios, time
f = open(sys.argv[1], "rb")
while struct.unpack("i", fcntl.ioctl(f, termios.FIONREAD, b"\\0\\0\\0\\0"))[0] < 65536:
    time.sleep(0.01)
print("full", flush=True)
sys.stdin.read()
while f.read(65536):
    pass
`;

Deno.test("cli run --out a FIFO whose reader holds back still hears Ctrl-C: its writes do not stop the run", async () => {
  await withTempDir(async (dir) => {
    const cases = Array.from(
      { length: 5000 },
      (_, i) => `{"input":"question ${i}","output":"a","expected":"a"}\n`,
    ).join("");
    const { fifo, child } = await runIntoFifo(dir, cases, "{ type: replay }");
    const reader = new Deno.Command("python3", {
      args: ["-c", HOLDING_READER, fifo],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const lines = reader.stdout.pipeThrough(new TextDecoderStream())
      .getReader();
    let heard = "";
    while (!heard.includes("full")) {
      const { done, value } = await lines.read();
      assert.ok(!done, "the reader ended before the FIFO filled");
      heard += value;
    }
    // The FIFO is full and unread: the run's next write waits for it.
    child.kill("SIGINT");
    const stderr = child.stderr.pipeThrough(new TextDecoderStream())
      .getReader();
    let said = "";
    // A bound on the test, not a timing claim: a run stuck in a write
    // never says it, and the reader is let go so that it can end.
    let letGo = false;
    const bound = setTimeout(() => {
      letGo = true;
      reader.stdin.close();
    }, 30_000);
    while (!said.includes("SIGINT: taking no new cases")) {
      const { done, value } = await stderr.read();
      if (done) break;
      said += value;
    }
    const heardInTime = said.includes("SIGINT: taking no new cases") &&
      !letGo;
    clearTimeout(bound);
    if (!letGo) await reader.stdin.close();
    for (let r = await stderr.read(); !r.done; r = await stderr.read()) {
      said += r.value;
    }
    await lines.cancel();
    await reader.status;
    const { code } = await child.status;
    assert.ok(heardInTime, said);
    assert.equal(code, 130, said);
  });
});
