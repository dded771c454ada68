// replaceFile against real files, links and a full disk made for the test.

import assert from "node:assert/strict";
import { exitCodeOf, InputError, OutputError } from "../../src/base/mod.ts";
import { removeStaleTemps, replaceFile } from "../../src/io/mod.ts";
import { withTempDir } from "../_proc.ts";

Deno.test("replaceFile replaces a hard link's name, leaving the file it shared untouched, and no temp file", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/victim`, "precious\n");
    await Deno.link(`${dir}/victim`, `${dir}/s.meta.json`);
    await replaceFile(`${dir}/s.meta.json`, "{}\n");
    assert.equal(await Deno.readTextFile(`${dir}/victim`), "precious\n");
    assert.equal(await Deno.readTextFile(`${dir}/s.meta.json`), "{}\n");
    const names = (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name);
    assert.deepEqual(names.sort(), ["s.meta.json", "victim"]);
  });
});

Deno.test("replaceFile keeps the mode of the file it replaces, as the shell's > does, and a new file gets the umask's", async () => {
  await withTempDir(async (dir) => {
    // A baseline or report a user made private stays private.
    await Deno.writeTextFile(`${dir}/main.json`, "old\n");
    await Deno.chmod(`${dir}/main.json`, 0o600);
    await replaceFile(`${dir}/main.json`, "new\n");
    assert.equal(await Deno.readTextFile(`${dir}/main.json`), "new\n");
    assert.equal((await Deno.stat(`${dir}/main.json`)).mode! & 0o777, 0o600);
    await Deno.chmod(`${dir}/main.json`, 0o640);
    await replaceFile(`${dir}/main.json`, "newer\n");
    assert.equal((await Deno.stat(`${dir}/main.json`)).mode! & 0o777, 0o640);
    await replaceFile(`${dir}/fresh.json`, "{}\n");
    const umask = Deno.umask();
    assert.equal(
      (await Deno.stat(`${dir}/fresh.json`)).mode! & 0o777,
      0o666 & ~umask,
    );
  });
});

Deno.test("replaceFile over a symlink to a private file makes a private file, and never one more open than a new file", async () => {
  await withTempDir(async (dir) => {
    const umask = Deno.umask();
    // `--units` kept behind a link to a 0600 file: inputs and outputs.
    await Deno.writeTextFile(`${dir}/private`, "old\n");
    await Deno.chmod(`${dir}/private`, 0o600);
    await Deno.symlink(`${dir}/private`, `${dir}/units.ndjson`);
    await replaceFile(`${dir}/units.ndjson`, "new\n");
    const made = await Deno.lstat(`${dir}/units.ndjson`);
    assert.ok(made.isFile);
    assert.equal(made.mode! & 0o777, 0o600 & ~umask);
    assert.equal(await Deno.readTextFile(`${dir}/private`), "old\n");
    // A link to a world-writable file.
    await Deno.writeTextFile(`${dir}/open`, "x\n");
    await Deno.chmod(`${dir}/open`, 0o777);
    await Deno.symlink(`${dir}/open`, `${dir}/s.meta.json`);
    await replaceFile(`${dir}/s.meta.json`, "{}\n");
    assert.equal(
      (await Deno.lstat(`${dir}/s.meta.json`)).mode! & 0o777,
      0o666 & ~umask,
    );
  });
});

Deno.test("replaceFile in a folder that does not exist is an InputError naming the file", async () => {
  await withTempDir(async (dir) => {
    await assert.rejects(
      replaceFile(`${dir}/no/s.meta.json`, "{}\n", { name: "the sidecar" }),
      (error) => {
        assert.ok(error instanceof InputError);
        assert.equal(exitCodeOf(error), 2);
        assert.equal(
          error.message,
          `Cannot write the sidecar "${dir}/no/s.meta.json": no such folder "${dir}/no"`,
        );
        return true;
      },
    );
  });
});

Deno.test({
  name:
    "replaceFile on a full disk is an OutputError (exit 3), and leaves no temp file",
  ignore: Deno.uid() !== 0,
  async fn() {
    const disk = await Deno.makeTempDir({ prefix: "evalpipe_full_" });
    const mount = await new Deno.Command("mount", {
      args: ["-t", "tmpfs", "-o", "size=64k", "tmpfs", disk],
    }).output();
    assert.equal(mount.code, 0, "cannot mount a tmpfs");
    try {
      await Deno.writeTextFile(`${disk}/s.meta.json`, "old\n");
      // Fill the disk to its last byte.
      const fill = await Deno.open(`${disk}/fill`, {
        write: true,
        create: true,
      });
      try {
        const block = new Uint8Array(4096);
        for (;;) fill.writeSync(block);
      } catch (error) {
        assert.equal((error as { code?: string }).code, "ENOSPC");
      } finally {
        fill.close();
      }
      await assert.rejects(
        replaceFile(`${disk}/s.meta.json`, "x".repeat(10_000), {
          name: "the sidecar",
        }),
        (error) => {
          assert.ok(error instanceof OutputError);
          assert.equal(exitCodeOf(error), 3);
          assert.equal(
            error.message,
            `Cannot write the sidecar "${disk}/s.meta.json": no space left on device (ENOSPC)`,
          );
          return true;
        },
      );
      assert.equal(await Deno.readTextFile(`${disk}/s.meta.json`), "old\n");
      const names = (await Array.fromAsync(Deno.readDir(disk))).map((e) =>
        e.name
      );
      assert.deepEqual(names.sort(), ["fill", "s.meta.json"]);
    } finally {
      const umount = await new Deno.Command("umount", { args: [disk] })
        .output();
      assert.equal(umount.code, 0);
      await Deno.remove(disk);
    }
  },
});

Deno.test("replaceFile writes through a FIFO or a device at its path, leaving it one, and /dev/full is an OutputError", async () => {
  await withTempDir(async (dir) => {
    const fifo = `${dir}/report.html`;
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert.equal(made.code, 0);
    // Bounded: were the FIFO replaced, nothing would ever open it to write.
    const reader = new Deno.Command("timeout", {
      args: ["5", "cat", fifo],
      stdout: "piped",
    }).output();
    try {
      await replaceFile(fifo, "<p>report</p>\n", { name: "HTML report" });
      assert.ok((await Deno.lstat(fifo)).isFifo, "still a FIFO");
    } finally {
      const read = await reader;
      assert.equal(new TextDecoder().decode(read.stdout), "<p>report</p>\n");
    }
    const names = (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name);
    assert.deepEqual(names, ["report.html"], "no temp file left");
  });
  await assert.rejects(
    replaceFile("/dev/full", "x\n", { name: "HTML report" }),
    (error) => {
      assert.ok(error instanceof OutputError, String(error));
      assert.match(error.message, /HTML report "\/dev\/full".*no space left/);
      return true;
    },
  );
  assert.ok((await Deno.lstat("/dev/full")).isCharDevice, "/dev/full kept");
});

Deno.test("replaceFile writes through /proc/self/fd/1 and /dev/fd/2, the system's links to the process's streams, adding to a file stdout was sent to", async () => {
  // "report --markdown /proc/self/fd/1" failed with 'no such folder
  // "/proc/self/fd"' (the temporary file cannot be made there), and
  // /dev/stdout, as root, would have been replaced for every process.
  await withTempDir(async (dir) => {
    const script = `${dir}/streams.ts`;
    const mod = new URL("../../src/io/mod.ts", import.meta.url).href;
    await Deno.writeTextFile(
      script,
      `import { replaceFile } from ${JSON.stringify(mod)};
console.log("first");
await replaceFile("/proc/self/fd/1", "to stdout\\n", { name: "Markdown report" });
await replaceFile("/dev/fd/2", "to stderr\\n", { name: "JUnit report" });
`,
    );
    const out = `${dir}/out.txt`;
    const { code, stderr } = await new Deno.Command("sh", {
      args: [
        "-c",
        'exec "$0" run -A "$1" > "$2"',
        Deno.execPath(),
        script,
        out,
      ],
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(new TextDecoder().decode(stderr), "to stderr\n");
    assert.equal(code, 0);
    assert.equal(await Deno.readTextFile(out), "first\nto stdout\n");
    const names = (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name);
    assert.deepEqual(names.sort(), ["out.txt", "streams.ts"]);
  });
});

Deno.test("replaceFile cut short by Deno.exit (a second Ctrl-C) leaves no temporary file", async () => {
  await withTempDir(async (dir) => {
    const script = `${dir}/stop.ts`;
    // Exits as soon as the temporary file exists, while 64 MiB are written.
    await Deno.writeTextFile(
      script,
      `import { replaceFile } from ${
        JSON.stringify(new URL("../../src/io/mod.ts", import.meta.url).href)
      };
const dir = ${JSON.stringify(dir)};
setInterval(() => {
  for (const e of Deno.readDirSync(dir)) {
    if (e.name.endsWith(".tmp")) Deno.exit(130);
  }
}, 0);
await replaceFile(dir + "/big.json", "x".repeat(64 * 1024 * 1024));
Deno.exit(0);
`,
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", script],
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(
      out.code,
      130,
      `stopped before the write ended: ${new TextDecoder().decode(out.stderr)}`,
    );
    const names = (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name);
    assert.deepEqual(names, ["stop.ts"]);
  });
});

Deno.test("replaceFile writes text handed over in pieces, and one that throws leaves the old file and no temp file", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/report.xml`;
    await Deno.writeTextFile(path, "old\n");
    // More pieces than one buffer holds, so that writes are under way when
    // the last comes.
    const piece = "x".repeat(1000) + "\n";
    await replaceFile(path, async (write) => {
      for (let i = 0; i < 500; i++) await write(piece);
    });
    assert.equal(await Deno.readTextFile(path), piece.repeat(500));
    const failure = new SyntaxError("the record is damaged");
    await assert.rejects(
      replaceFile(path, async (write) => {
        for (let i = 0; i < 300; i++) await write(`${i}\n`.repeat(100));
        throw failure;
      }),
      (error: unknown) => error === failure,
    );
    assert.equal(await Deno.readTextFile(path), piece.repeat(500));
    const names = [];
    for await (const entry of Deno.readDir(dir)) names.push(entry.name);
    assert.deepEqual(names, ["report.xml"]);
  });
});

/**
 * Starts a process that holds `temp` locked, as a live replaceFile holds its
 * temp file, writing to it first when `write` says so; resolves once it
 * holds the lock. Kill it with `stop`.
 */
async function holdLocked(temp: string, write: boolean) {
  const script = `${temp}.hold.ts`;
  await Deno.writeTextFile(
    script,
    `const file = await Deno.open(Deno.args[0], { write: true, create: true });
await file.lock(true);
if (Deno.args[1] === "write") await file.write(new TextEncoder().encode("half"));
console.log("locked");
setTimeout(() => {}, 1e9);
`,
  );
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", script, temp, write ? "write" : ""],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream())
    .getReader();
  let said = "";
  while (!said.includes("locked\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    said += value;
  }
  assert.equal(said, "locked\n");
  return {
    async stop() {
      child.kill("SIGKILL");
      await reader.cancel();
      await child.status;
      await Deno.remove(script);
    },
  };
}

Deno.test("replaceFile after a run killed mid-write (kill -9) removes the temp file it left, and leaves one a live process holds", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/s.ndjson.meta.json`;
    await Deno.writeTextFile(path, "old\n");
    const script = `${dir}/write.ts`;
    // Writes a megabyte, says so, and never ends: killed mid-write.
    await Deno.writeTextFile(
      script,
      `import { replaceFile } from ${
        JSON.stringify(new URL("../../src/io/mod.ts", import.meta.url).href)
      };
await replaceFile(Deno.args[0], async (write) => {
  await write("x".repeat(1024 * 1024));
  console.log("writing");
  await new Promise((resolve) => setTimeout(resolve, 1e9));
});
`,
    );
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", script, path],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const reader = child.stdout.pipeThrough(new TextDecoderStream())
      .getReader();
    let said = "";
    while (!said.includes("writing\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      said += value;
    }
    assert.equal(said, "writing\n");
    const temps = async () =>
      (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name)
        .filter((n) => n.endsWith(".tmp"));
    const [temp] = await temps();
    assert.match(temp!, /^\.s\.ndjson\.meta\.json\.[0-9a-f]{12}\.tmp$/);
    assert.ok((await Deno.stat(`${dir}/${temp}`)).size > 0);
    // Alive, it holds its temp file: nobody removes it.
    assert.deepEqual(await removeStaleTemps([path]), []);
    assert.deepEqual(await temps(), [temp]);
    child.kill("SIGKILL");
    await reader.cancel();
    assert.equal((await child.status).signal, "SIGKILL");
    assert.deepEqual(await temps(), [temp], "left by the kill");
    // Another process's temp file, locked, written or not yet: left.
    const live = await holdLocked(
      `${dir}/.s.ndjson.meta.json.00000000000a.tmp`,
      true,
    );
    const fresh = await holdLocked(
      `${dir}/.s.ndjson.meta.json.00000000000b.tmp`,
      false,
    );
    try {
      await replaceFile(path, "new\n");
      assert.equal(await Deno.readTextFile(path), "new\n");
      assert.deepEqual((await temps()).sort(), [
        ".s.ndjson.meta.json.00000000000a.tmp",
        ".s.ndjson.meta.json.00000000000b.tmp",
      ]);
    } finally {
      await live.stop();
      await fresh.stop();
    }
    // Dead now: the written one goes, the empty one (a live run's between
    // its creation and its lock, for all anyone can tell) stays.
    assert.deepEqual(await removeStaleTemps([path]), [
      `${dir}/.s.ndjson.meta.json.00000000000a.tmp`,
    ]);
    assert.deepEqual(await temps(), [".s.ndjson.meta.json.00000000000b.tmp"]);
  });
});
