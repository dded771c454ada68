// Cancelling a stage (its reader cancels, a `break` out of `for await`)
// aborts what it still runs: a script that stops reading does not leave
// commands running until their timeout. Each case runs in a Deno process of
// its own, as a user's script would, so that commands left running show as
// a script that does not end.

import assert from "node:assert/strict";
import { delay, running, within, withTempDir } from "../_proc.ts";

/** The script: calls a command that sleeps, and cancels the stage. */
const SCRIPT = new URL("../fixtures/stage_cancel.ts", import.meta.url).pathname;

/** Runs the script, cancels as `how` says, and checks that nothing it started runs on. */
async function assertCancelStops(how: "target" | "score" | "break") {
  await withTempDir(async (dir) => {
    const pidFile = `${dir}/pids`;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", SCRIPT, how, pidFile],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).spawn();
    const stderr = new Response(child.stderr).text();
    const stdout = child.stdout.pipeThrough(new TextDecoderStream())
      .getReader();
    let said = "";
    const read = async () => {
      for (;;) {
        const { done, value } = await stdout.read();
        if (done) return;
        said += value;
        if (said.includes("cancelled\n")) return;
      }
    };
    let pids: number[] = [];
    try {
      // The script says when it has cancelled; then its commands get about
      // two seconds to be gone, and the script a few to end.
      await within(read(), 60_000, "the script");
      // Its stderr is read once it has ended, not before.
      assert.equal(said, "cancelled\n");
      pids = (await Deno.readTextFile(pidFile)).trim().split("\n").map(Number);
      assert.equal(pids.length, 8, `PIDs: ${pids.join(", ")}`);
      for (let i = 0; i < 100 && pids.some(running); i++) await delay(20);
      assert.deepEqual(pids.filter(running), [], "commands left running");
      const status = await within(child.status, 5000, "the script");
      assert.equal(status.code, 0, await stderr);
    } catch (error) {
      // Cleaning up after a failure: these are the test's own processes.
      for (const pid of pids.filter(running)) Deno.kill(pid, "SIGKILL");
      try {
        child.kill("SIGKILL");
      } catch (killError) {
        // It has ended: nothing left to stop.
        if (!(killError instanceof TypeError)) throw killError;
      }
      throw error;
    } finally {
      await child.status;
      await stdout.cancel();
      await stderr;
    }
  });
}

Deno.test("runTarget kills the process groups of its calls in flight when its reader cancels", async () => {
  await assertCancelStops("target");
});

Deno.test("scoreUnits kills the process groups of its scorers running when its reader cancels", async () => {
  await assertCancelStops("score");
});

Deno.test("a break out of for await over runTarget and scoreUnits kills the target's calls in flight", async () => {
  await assertCancelStops("break");
});
