// The progress line of `run` and `score`, as a terminal receives it: the
// real command line under a pseudo-terminal (util-linux's `script`), against
// real child processes and a loopback server that answers 429.

import assert from "node:assert/strict";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { inPty } from "../_pty.ts";
import {
  formatDuration,
  formatFrame,
  type ProgressNumbers,
} from "../../src/cli/_progress.ts";

const CLEAR = "\r\x1b[K";

/** The frames drawn, and what follows the last one (its line end on). */
function framesOf(screen: string): { frames: string[]; rest: string } {
  const parts = screen.split(CLEAR);
  const last = parts.pop() ?? "";
  const end = last.indexOf("\r\n");
  assert.ok(end >= 0, `the last frame ends its line: ${JSON.stringify(last)}`);
  return {
    frames: [...parts.slice(1), last.slice(0, end)],
    rest: last.slice(end + 2),
  };
}

function jsonl(rows: unknown[]): string {
  return rows.map((r) => JSON.stringify(r) + "\n").join("");
}

// Answers "a" after a tenth of a second; fails for an input that says "fail".
const SLOW_TARGET = `input=$(cat)
sleep 0.1
case "$input" in *fail*) echo "no" >&2; exit 3 ;; esac
echo a
`;

function cases(n: number): string {
  return jsonl(
    Array.from({ length: n }, (_, i) => ({
      input: i % 5 === 4 ? `fail ${i}` : `q${i}`,
      expected: "a",
    })),
  );
}

const SUITE = (dataset: string) =>
  `dataset: ${dataset}\ntarget: { type: subprocess, cmd: sh target.sh }\nscorers: [{ type: exact_match }]\nconcurrency: 2\n`;

async function slowSuite(dir: string, dataset = "data.jsonl", n = 30) {
  await Deno.writeTextFile(`${dir}/suite.yaml`, SUITE(dataset));
  await Deno.writeTextFile(`${dir}/target.sh`, SLOW_TARGET);
  await Deno.writeTextFile(`${dir}/data.jsonl`, cases(n));
}

/**
 * The frames from the first that shows the total `n` on: the dataset is
 * counted beside the run, so a frame drawn before the count arrives has no
 * total yet (checked: a count alone); once there is one, every frame has it.
 */
function framesWithTotal(frames: string[], n: number): string[] {
  const first = frames.findIndex((f) => new RegExp(`^\\d+/${n} units`).test(f));
  assert.ok(first >= 0, frames.join("\n"));
  assert.ok(
    frames.slice(0, first).every((f) => /^\d+ units/.test(f)),
    frames.join("\n"),
  );
  return frames.slice(first);
}

/** The visible text of a frame: without colour sequences. */
function plain(frame: string): string {
  return frame.replace(new RegExp("\x1b\\[[0-9;]*m", "g"), "");
}

Deno.test("run on a terminal redraws done/total, rate, ETA, errors and units in flight, and ends on its own line", async () => {
  await withTempDir(async (dir) => {
    await slowSuite(dir);
    const started = performance.now();
    const out = await inPty(["run", "suite.yaml", "--out", "s.ndjson"], {
      cwd: dir,
      env: { NO_COLOR: "1" },
    });
    const seconds = (performance.now() - started) / 1000;
    // Every fifth target call fails: blocked Scores, counted as errors.
    assert.equal(out.code, 0, out.screen);
    const { frames, rest } = framesOf(out.screen);
    assert.ok(frames.length >= 3, out.screen);
    // At most ten frames a second.
    assert.ok(
      frames.length <= seconds * 10 + 2,
      `${frames.length} frames in ${seconds.toFixed(1)} s`,
    );
    const counts = framesWithTotal(frames, 30).map((f) =>
      /^(\d+)\/30 units \(\d+%\)/.exec(f)
    );
    assert.ok(counts.every((m) => m !== null), frames.join("\n"));
    const done = counts.map((m) => Number(m![1]));
    assert.deepEqual(done, [...done].sort((a, b) => a - b), "counts only grow");
    assert.ok(
      frames.some((f) => /\d+(\.\d+)?\/s {2}ETA \d+s/.test(f)),
      frames.join("\n"),
    );
    assert.ok(frames.some((f) => / [12] in flight/.test(f)), frames.join("\n"));
    assert.ok(frames.some((f) => / [1-9] errors?/.test(f)), frames.join("\n"));
    // The last frame: all done, how long it took; then the summary, on a
    // clean line.
    assert.match(
      frames.at(-1)!,
      /^30\/30 units \(100%\) {2}6 errors {2}in \d+s$/,
    );
    assert.match(rest, /^metric +mean/);
    assert.ok(!out.screen.includes("\x1b[3"), "no colour under NO_COLOR");
  });
});

Deno.test("run on a terminal counts in flight only the units being worked on, never more than --concurrency", async () => {
  await withTempDir(async (dir) => {
    // The first case is slow: the units after it finish while it runs and
    // wait to be written in input order. Before, they were counted in
    // flight until written ("9 in flight" at --concurrency 2).
    await Deno.writeTextFile(
      `${dir}/target.sh`,
      `input=$(cat)\ncase "$input" in *slow*) sleep 2 ;; esac\necho a\n`,
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      "dataset: data.jsonl\ntarget: { type: subprocess, cmd: sh target.sh }\nscorers: [{ type: exact_match }]\n",
    );
    await Deno.writeTextFile(
      `${dir}/data.jsonl`,
      jsonl(
        Array.from({ length: 12 }, (_, i) => ({
          input: i === 0 ? "slow" : `q${i}`,
          expected: "a",
        })),
      ),
    );
    const out = await inPty(
      ["run", "suite.yaml", "--concurrency", "2", "--out", "s.ndjson"],
      { cwd: dir, env: { NO_COLOR: "1" } },
    );
    assert.equal(out.code, 0, out.screen);
    const { frames } = framesOf(out.screen);
    const flying = frames.map((f) => / (\d+) in flight/.exec(f)?.[1])
      .filter((n) => n !== undefined).map(Number);
    assert.ok(flying.length > 0, frames.join("\n"));
    assert.ok(flying.every((n) => n <= 2), frames.join("\n"));
  });
});

Deno.test("run on a terminal without NO_COLOR colours the errors", async () => {
  await withTempDir(async (dir) => {
    await slowSuite(dir, "data.jsonl", 10);
    const out = await inPty(["run", "suite.yaml"], {
      cwd: dir,
      stdoutFile: "scores.ndjson",
    });
    assert.equal(out.code, 0, out.screen);
    const { frames } = framesOf(out.screen);
    assert.ok(
      frames.some((f) =>
        f.includes("\x1b[31m1 error\x1b[0m") ||
        f.includes("\x1b[31m2 errors\x1b[0m")
      ),
      JSON.stringify(frames),
    );
    // Stdout, a file, has Scores only.
    const scores = await Deno.readTextFile(`${dir}/scores.ndjson`);
    assert.equal(scores.trim().split("\n").length, 10);
    assert.ok(!scores.includes("\x1b"));
  });
});

Deno.test("run with its dataset on stdin shows a counter, for the total is unknown", async () => {
  await withTempDir(async (dir) => {
    await slowSuite(dir, '"-"');
    const out = await inPty(["run", "suite.yaml", "--out", "s.ndjson"], {
      cwd: dir,
      stdinFile: "data.jsonl",
      env: { NO_COLOR: "1" },
    });
    assert.equal(out.code, 0, out.screen);
    const { frames } = framesOf(out.screen);
    assert.ok(frames.length >= 2, out.screen);
    for (const f of frames) assert.match(f, /^\d+ units {2}/);
    assert.ok(frames.every((f) => !f.includes("ETA")));
    assert.match(frames.at(-1)!, /^30 units {2}6 errors {2}in \d+s$/);
  });
});

Deno.test("score on a terminal counts the units it reads from stdin", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/slow.sh`,
      `cat > /dev/null\nsleep 0.1\necho '{"score": 1}'\n`,
    );
    await Deno.writeTextFile(
      `${dir}/units.ndjson`,
      jsonl(
        Array.from({ length: 12 }, (_, i) => ({ input: `q${i}`, output: "a" })),
      ),
    );
    const out = await inPty(
      ["score", "--scorer", "sh slow.sh", "--name", "slow"],
      {
        cwd: dir,
        stdinFile: "units.ndjson",
        stdoutFile: "scores.ndjson",
        env: { NO_COLOR: "1" },
      },
    );
    assert.equal(out.code, 0, out.screen);
    const { frames, rest } = framesOf(out.screen);
    assert.ok(frames.length >= 2, out.screen);
    const counts = frames.map((f) => Number(/^(\d+) units/.exec(f)?.[1]));
    assert.ok(counts.every((n) => n >= 0 && n <= 12), frames.join("\n"));
    assert.match(frames.at(-1)!, /^12 units {2}0 errors {2}in \d+s$/);
    assert.equal(rest, "");
    const scores = await Deno.readTextFile(`${dir}/scores.ndjson`);
    assert.equal(scores.trim().split("\n").length, 12);
  });
});

Deno.test("score on a terminal counts in flight the units being scored, not every unit it has started", async () => {
  await withTempDir(async (dir) => {
    // score tells no end of a target call: before, its line counted every
    // unit started as in flight ("60 in flight" near the end of 60 units).
    await Deno.writeTextFile(
      `${dir}/slow.sh`,
      `cat > /dev/null\nsleep 0.05\necho '{"score": 1}'\n`,
    );
    await Deno.writeTextFile(
      `${dir}/units.ndjson`,
      jsonl(
        Array.from({ length: 60 }, (_, i) => ({ input: `q${i}`, output: "a" })),
      ),
    );
    const out = await inPty(
      [
        "score",
        "--scorer",
        "sh slow.sh",
        "--name",
        "slow",
        "--concurrency",
        "2",
      ],
      {
        cwd: dir,
        stdinFile: "units.ndjson",
        stdoutFile: "scores.ndjson",
        env: { NO_COLOR: "1" },
      },
    );
    assert.equal(out.code, 0, out.screen);
    const { frames } = framesOf(out.screen);
    const flying = frames.map((f) => / (\d+) in flight/.exec(f)?.[1])
      .filter((n) => n !== undefined).map(Number);
    assert.ok(flying.length > 0, frames.join("\n"));
    // Two being scored, and a few scored on their way to be written.
    assert.ok(flying.every((n) => n <= 10), frames.join("\n"));
  });
});

Deno.test("the progress line fits a narrow terminal, and a terminal of 0 columns gets 120", async () => {
  await withTempDir(async (dir) => {
    await slowSuite(dir);
    for (const [columns, room] of [[30, 29], [0, 119]] as const) {
      const out = await inPty(["run", "suite.yaml", "--out", "s.ndjson"], {
        cwd: dir,
        columns,
      });
      const { frames } = framesOf(out.screen);
      assert.ok(frames.length >= 2, out.screen);
      for (const f of frames) {
        assert.ok(plain(f).length <= room, `${plain(f).length}: ${f}`);
      }
      assert.ok(
        framesWithTotal(frames, 30).every((f) => /^\d+\/30 units/.test(f)),
        frames.join("\n"),
      );
      if (columns === 0) {
        assert.ok(frames.some((f) => f.includes("in flight")));
      }
    }
  });
});

Deno.test("run on a terminal says when a server's Retry-After or the rate limit holds it back", async () => {
  let calls = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => {
      calls++;
      // The first two calls are told to come back in a second.
      if (calls <= 2) {
        return new Response("slow down", {
          status: 429,
          headers: { "retry-after": "1" },
        });
      }
      return Response.json({ answer: "a" });
    },
  );
  try {
    await withTempDir(async (dir) => {
      const url = `http://127.0.0.1:${server.addr.port}/ask`;
      await Deno.writeTextFile(
        `${dir}/suite.yaml`,
        `dataset: data.jsonl\ntarget: { type: http, url: "${url}", output: answer }\nscorers: [{ type: exact_match }]\nconcurrency: 2\n`,
      );
      await Deno.writeTextFile(
        `${dir}/data.jsonl`,
        jsonl([{ input: "q1", expected: "a" }, { input: "q2", expected: "a" }]),
      );
      const out = await inPty(["run", "suite.yaml", "--no-cache"], {
        cwd: dir,
        stdoutFile: "s.ndjson",
        env: { NO_COLOR: "1" },
      });
      assert.equal(out.code, 0, out.screen);
      const { frames } = framesOf(out.screen);
      assert.ok(
        frames.some((f) =>
          /^0\/2 units \(0%\) .*server asked to wait \(Retry-After 1s\): [12] calls? waiting$/
            .test(f)
        ),
        frames.join("\n"),
      );
      assert.match(
        frames.at(-1)!,
        /^2\/2 units \(100%\) {2}0 errors {2}in \d+s$/,
      );

      // A rate limit of 150 a minute spaces four calls 0.4 s apart.
      calls = 10;
      await Deno.writeTextFile(
        `${dir}/suite.yaml`,
        `dataset: data.jsonl\ntarget: { type: http, url: "${url}", output: answer, rate_limit: 150 }\nscorers: [{ type: exact_match }]\nconcurrency: 4\n`,
      );
      await Deno.writeTextFile(
        `${dir}/data.jsonl`,
        jsonl(Array.from({ length: 4 }, (_, i) => ({ input: `q${i}` }))),
      );
      const limited = await inPty(["run", "suite.yaml", "--no-cache"], {
        cwd: dir,
        stdoutFile: "s.ndjson",
        env: { NO_COLOR: "1" },
      });
      assert.equal(limited.code, 0, limited.screen);
      assert.ok(
        framesOf(limited.screen).frames.some((f) =>
          /held by rate_limit: [1-3] calls? waiting$/.test(f)
        ),
        limited.screen,
      );
    });
  } finally {
    await server.shutdown();
  }
});

Deno.test("run draws no progress line through Scores that go to the same terminal", async () => {
  await withTempDir(async (dir) => {
    await slowSuite(dir, "data.jsonl", 6);
    const out = await inPty(["run", "suite.yaml"], {
      cwd: dir,
      env: { NO_COLOR: "1" },
    });
    assert.equal(out.code, 0, out.screen);
    assert.ok(!out.screen.includes(CLEAR), JSON.stringify(out.screen));
    const scores = out.screen.split("\r\n").filter((l) => l.startsWith("{"));
    assert.equal(scores.length, 6, out.screen);
    for (const line of scores) {
      assert.equal(JSON.parse(line).metric, "exact_match");
    }
  });
});

Deno.test("run draws no progress line on a terminal that cannot redraw one (TERM=dumb)", async () => {
  await withTempDir(async (dir) => {
    await slowSuite(dir, "data.jsonl", 6);
    const out = await inPty(["run", "suite.yaml"], {
      cwd: dir,
      stdoutFile: "scores.ndjson",
      env: { TERM: "dumb" },
    });
    assert.equal(out.code, 0, out.screen);
    assert.ok(!out.screen.includes("\x1b["), JSON.stringify(out.screen));
    assert.ok(!out.screen.includes("units"), out.screen);
    assert.match(out.screen, /^metric +mean/m);
  });
});

Deno.test("run and score draw no progress line under CI=true, though stderr is a terminal", async () => {
  await withTempDir(async (dir) => {
    await slowSuite(dir, "data.jsonl", 6);
    const run = await inPty(["run", "suite.yaml", "--out", "s.ndjson"], {
      cwd: dir,
      env: { CI: "true" },
    });
    assert.equal(run.code, 0, run.screen);
    assert.ok(!run.screen.includes("\x1b["), JSON.stringify(run.screen));
    assert.ok(!run.screen.includes("units"), run.screen);
    assert.match(run.screen, /^metric +mean/m);
    await Deno.writeTextFile(
      `${dir}/slow.sh`,
      `cat > /dev/null\nsleep 0.1\necho '{"score": 1}'\n`,
    );
    await Deno.writeTextFile(
      `${dir}/units.ndjson`,
      jsonl([{ input: "q", output: "a" }, { input: "r", output: "a" }]),
    );
    const score = await inPty(
      ["score", "--scorer", "sh slow.sh", "--name", "slow"],
      {
        cwd: dir,
        stdinFile: "units.ndjson",
        stdoutFile: "scores.ndjson",
        env: { CI: "true" },
      },
    );
    assert.equal(score.code, 0, score.screen);
    assert.equal(score.screen, "");
    // CI=false is no CI: the line is drawn.
    const local = await inPty(["run", "suite.yaml", "--out", "t.ndjson"], {
      cwd: dir,
      env: { CI: "false", NO_COLOR: "1" },
    });
    assert.equal(local.code, 0, local.screen);
    assert.match(local.screen, /\d+\/6 units/);
  });
});

Deno.test("run and score draw nothing when stderr is not a terminal", async () => {
  await withTempDir(async (dir) => {
    await slowSuite(dir, "data.jsonl", 4);
    const out = await cli(["run", "suite.yaml"], dir);
    assert.equal(out.code, 0, out.stderr);
    assert.ok(!out.stderr.includes("\r"), JSON.stringify(out.stderr));
    assert.ok(!out.stderr.includes("units"), out.stderr);
    assert.match(out.stderr, /^metric +mean/);
  });
});

// --- the frame itself --------------------------------------------------------

const NUMBERS: ProgressNumbers = {
  done: 420,
  total: 1000,
  rate: 12.5,
  errors: 3,
  inFlight: 8,
  flow: {
    waiting: { rate_limit: 0, retry_after: 5, backoff: 0, slots: 0 },
    retryAfterMs: 4200,
  },
};

Deno.test("formatFrame shows every part when there is room, the least useful leave first", () => {
  assert.equal(
    formatFrame(NUMBERS, 200, false),
    "420/1000 units (42%)  12.5/s  ETA 46s  3 errors  8 in flight  server asked to wait (Retry-After 5s): 5 calls waiting",
  );
  for (let columns = 1; columns <= 130; columns++) {
    const frame = formatFrame(NUMBERS, columns, false);
    assert.ok(frame.length <= Math.max(1, columns - 1), `${columns}: ${frame}`);
  }
  // What holds the run back outlasts the rate and the units in flight.
  assert.equal(
    formatFrame(NUMBERS, 100, false),
    "420/1000 units (42%)  ETA 46s  3 errors  server asked to wait (Retry-After 5s): 5 calls waiting",
  );
  assert.equal(
    formatFrame(NUMBERS, 40, false),
    "420/1000 units (42%)  ETA 46s  3 errors",
  );
  assert.equal(formatFrame(NUMBERS, 22, false), "420/1000 units (42%)");
  assert.equal(formatFrame(NUMBERS, 10, false), "420/1000…");
  assert.equal(
    formatFrame({ ...NUMBERS, total: undefined, flow: undefined }, 200, false),
    "420 units  12.5/s  3 errors  8 in flight",
  );
  // One unit counted without a total is one unit, not "1 units".
  assert.equal(
    formatFrame(
      { ...NUMBERS, done: 1, total: undefined, errors: 0, flow: undefined },
      200,
      false,
    ),
    "1 unit  12.5/s  0 errors  8 in flight",
  );
  assert.equal(
    formatFrame({ ...NUMBERS, flow: undefined }, 200, true),
    "420/1000 units (42%)  12.5/s  ETA 46s  \x1b[31m3 errors\x1b[0m  8 in flight",
  );
});

Deno.test("formatDuration reads as seconds, minutes and hours", () => {
  assert.equal(formatDuration(0), "0s");
  assert.equal(formatDuration(59.4), "59s");
  assert.equal(formatDuration(185), "3m05s");
  assert.equal(formatDuration(3725), "1h02m");
});
