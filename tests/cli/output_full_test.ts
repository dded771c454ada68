// Issue 18 item 5, the outputs: a full or read-only disk is a plain message
// and exit 3, never a stack trace or exit 1; what one output misses, the
// other still gets; a reader that goes away ends the run quietly. Against
// the real /dev/full, and a 64 KiB tmpfs when the tests run as root.

import assert from "node:assert/strict";
import { cli, cliInShell, spawnCli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { parseRunRecord } from "../../src/record/mod.ts";

const SUITE =
  "dataset: d.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n";

/** A suite of `n` replay cases in `dir`. */
async function suite(dir: string, n = 3): Promise<void> {
  const lines = Array.from(
    { length: n },
    (_, i) => JSON.stringify({ input: `q${i}`, output: "a", expected: "a" }),
  );
  await Deno.writeTextFile(`${dir}/d.jsonl`, lines.join("\n") + "\n");
  await Deno.writeTextFile(`${dir}/s.yaml`, SUITE);
}

function assertNoStack(stderr: string): void {
  assert.doesNotMatch(stderr, /\n\s+at |Uncaught|error: /, stderr);
}

Deno.test("cli run --out /dev/full ends with one plain line and exit 3, and writes no sidecar in /dev", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    const { code, stdout, stderr } = await cli(
      ["run", "s.yaml", "--out", "/dev/full"],
      dir,
    );
    assert.equal(code, 3, stderr);
    assert.equal(stdout, "");
    assertNoStack(stderr);
    const lines = stderr.trimEnd().split("\n");
    assert.equal(
      lines[0],
      'evalpipe: Cannot write --out "/dev/full": no space left on device (ENOSPC)',
    );
    assert.match(
      lines.at(-1)!,
      /^evalpipe: --out "\/dev\/full" could not be written in full/,
    );
    await assert.rejects(
      Deno.lstat("/dev/full.meta.json"),
      Deno.errors.NotFound,
    );
  });
});

Deno.test("cli run with stdout on a full disk (> /dev/full) ends with exit 3 naming stdout", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    const { code, stderr } = await cliInShell(
      dir,
      'exec "$0" run -A "$1" run s.yaml > /dev/full',
    );
    assert.equal(code, 3, stderr);
    assertNoStack(stderr);
    assert.equal(
      stderr.split("\n")[0],
      "evalpipe: Cannot write stdout: no space left on device (ENOSPC)",
    );
  });
});

Deno.test("cli run --out /dev/full --record F: the record still gets every Score", async () => {
  await withTempDir(async (dir) => {
    await suite(dir, 50);
    const { code, stderr } = await cli(
      ["run", "s.yaml", "--out", "/dev/full", "--record", "r.json"],
      dir,
    );
    assert.equal(code, 3, stderr);
    assertNoStack(stderr);
    assert.match(
      stderr,
      /evalpipe: --out "\/dev\/full" could not be written in full; --record "r\.json" has every Score/,
    );
    const record = parseRunRecord(
      await Deno.readTextFile(`${dir}/r.json`),
      "r.json",
    );
    assert.equal(record.scores.length, 50);
    assert.equal(record.complete, true);
  });
});

Deno.test("cli run --record /dev/full --out F: --out still gets every Score", async () => {
  await withTempDir(async (dir) => {
    await suite(dir, 50);
    const { code, stderr } = await cli(
      ["run", "s.yaml", "--out", "o.ndjson", "--record", "/dev/full"],
      dir,
    );
    assert.equal(code, 3, stderr);
    assertNoStack(stderr);
    assert.equal(
      stderr.split("\n")[0],
      'evalpipe: Cannot write --record "/dev/full": no space left on device (ENOSPC)',
    );
    assert.match(stderr, /--out "o\.ndjson" has every Score/);
    const lines = (await Deno.readTextFile(`${dir}/o.ndjson`)).trimEnd().split(
      "\n",
    );
    assert.equal(lines.length, 50);
    for (const line of lines) assert.equal(JSON.parse(line).status, "scored");
  });
});

Deno.test("cli score, aggregate, view, diff, export, --help and --version on a full stdout end with exit 3 naming stdout", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    const made = await cli([
      "run",
      "s.yaml",
      "--out",
      "o.ndjson",
      "--record",
      "r.json",
    ], dir);
    assert.equal(made.code, 0, made.stderr);
    await Deno.writeTextFile(`${dir}/u.ndjson`, '{"input":"q","output":"a"}\n');
    await Deno.writeTextFile(
      `${dir}/verdict.sh`,
      "cat >/dev/null; echo '{\"value\":1}'\n",
    );
    const commands = [
      "score --scorer 'sh verdict.sh' < u.ndjson",
      "aggregate < o.ndjson",
      "view r.json",
      "view r.json --by-call",
      "diff r.json o.ndjson",
      "export --to evalglass r.json eg",
      "--version",
      "--help",
      "run --help",
    ];
    for (const command of commands) {
      const { code, stderr } = await cliInShell(
        dir,
        `exec "$0" run -A "$1" ${command} > /dev/full`,
      );
      assert.equal(code, 3, `${command}: ${stderr}`);
      assertNoStack(stderr);
      assert.match(
        stderr,
        /^evalpipe: Cannot write stdout: no space left on device \(ENOSPC\)\n/,
        command,
      );
    }
  });
});

Deno.test("cli run whose reader goes away (| head -1) stops quietly with exit 0, as DESIGN pins", async () => {
  await withTempDir(async (dir) => {
    await suite(dir, 20_000);
    const { stdout } = await cliInShell(
      dir,
      '{ "$0" run -A "$1" run s.yaml 2>err.txt; echo $? > rc.txt; } | head -1',
    );
    assert.equal(stdout.split("\n").length, 2);
    assert.equal(JSON.parse(stdout).metric, "exact_match");
    assert.equal((await Deno.readTextFile(`${dir}/rc.txt`)).trim(), "0");
    assert.equal(await Deno.readTextFile(`${dir}/err.txt`), "");
  });
});

Deno.test("cli aggregate and view whose reader goes away stop quietly with exit 0", async () => {
  await withTempDir(async (dir) => {
    await suite(dir, 3000);
    const made = await cli([
      "run",
      "s.yaml",
      "--record",
      "r.json",
      "--out",
      "o.ndjson",
    ], dir);
    assert.equal(made.code, 0, made.stderr);
    for (
      const command of ["view r.json --by-call --json", "view r.json --by-call"]
    ) {
      const { stdout } = await cliInShell(
        dir,
        `{ "$0" run -A "$1" ${command} 2>err.txt; echo $? > rc.txt; } | head -1`,
      );
      assert.equal(stdout.split("\n").length, 2, command);
      assert.equal(
        (await Deno.readTextFile(`${dir}/rc.txt`)).trim(),
        "0",
        command,
      );
      assert.equal(await Deno.readTextFile(`${dir}/err.txt`), "", command);
    }
  });
});

/** A tmpfs of `kib` KiB, mounted for the test; `undefined` unless root. */
async function smallDisk(kib: number): Promise<string | undefined> {
  if (Deno.uid() !== 0) return undefined;
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_full_" });
  const { code } = await new Deno.Command("mount", {
    args: ["-t", "tmpfs", "-o", `size=${kib}k`, "tmpfs", dir],
    stderr: "null",
  }).output();
  if (code !== 0) {
    await Deno.remove(dir);
    return undefined;
  }
  return dir;
}

async function unmount(dir: string): Promise<void> {
  const { code } = await new Deno.Command("umount", { args: [dir] }).output();
  assert.equal(code, 0);
  await Deno.remove(dir);
}

const root = Deno.uid() === 0;

Deno.test({
  name:
    "cli run --out on a disk that fills up: exit 3 naming the file, the record keeps every Score",
  ignore: !root,
  async fn() {
    const disk = await smallDisk(64);
    assert.ok(disk, "cannot mount a tmpfs");
    try {
      await withTempDir(async (dir) => {
        await suite(dir, 2000); // about 600 KB of Scores
        const { code, stderr } = await cli(
          ["run", "s.yaml", "--out", `${disk}/o.ndjson`, "--record", "r.json"],
          dir,
        );
        assert.equal(code, 3, stderr);
        assertNoStack(stderr);
        assert.equal(
          stderr.split("\n")[0],
          `evalpipe: Cannot write --out ${
            JSON.stringify(`${disk}/o.ndjson`)
          }: no space left on device (ENOSPC)`,
        );
        const size = (await Deno.stat(`${disk}/o.ndjson`)).size;
        assert.ok(size > 0 && size <= 64 * 1024, String(size));
        const record = parseRunRecord(
          await Deno.readTextFile(`${dir}/r.json`),
          "r.json",
        );
        assert.equal(record.scores.length, 2000);
      });
    } finally {
      await unmount(disk);
    }
  },
});

Deno.test({
  name:
    "cli run --record on a disk that fills up: exit 3 naming the record, --out keeps every Score",
  ignore: !root,
  async fn() {
    const disk = await smallDisk(64);
    assert.ok(disk, "cannot mount a tmpfs");
    try {
      await withTempDir(async (dir) => {
        await suite(dir, 2000);
        const { code, stderr } = await cli(
          ["run", "s.yaml", "--out", "o.ndjson", "--record", `${disk}/r.json`],
          dir,
        );
        assert.equal(code, 3, stderr);
        assertNoStack(stderr);
        assert.equal(
          stderr.split("\n")[0],
          `evalpipe: Cannot write --record ${
            JSON.stringify(`${disk}/r.json`)
          }: no space left on device (ENOSPC)`,
        );
        const lines = (await Deno.readTextFile(`${dir}/o.ndjson`)).trimEnd()
          .split("\n");
        assert.equal(lines.length, 2000);
      });
    } finally {
      await unmount(disk);
    }
  },
});

Deno.test({
  name: "cli run --out on a read-only disk: exit 3 naming the file, EROFS",
  ignore: !root,
  async fn() {
    const disk = await smallDisk(64);
    assert.ok(disk, "cannot mount a tmpfs");
    try {
      await Deno.writeTextFile(`${disk}/o.ndjson`, "earlier\n");
      const { code } = await new Deno.Command("mount", {
        args: ["-o", "remount,ro", disk],
      }).output();
      assert.equal(code, 0);
      await withTempDir(async (dir) => {
        await suite(dir);
        const { code, stderr } = await cli(
          ["run", "s.yaml", "--out", `${disk}/o.ndjson`],
          dir,
        );
        assert.equal(code, 3, stderr);
        assertNoStack(stderr);
        assert.equal(
          stderr.trimEnd(),
          `evalpipe: Cannot write --out ${
            JSON.stringify(`${disk}/o.ndjson`)
          }: read-only file system (EROFS)`,
        );
      });
      assert.equal(await Deno.readTextFile(`${disk}/o.ndjson`), "earlier\n");
    } finally {
      await unmount(disk);
    }
  },
});

/** A suite whose exact_match gate fails: one case of four answers wrong. */
async function gatedSuite(dir: string): Promise<void> {
  await suite(dir);
  await Deno.writeTextFile(
    `${dir}/d.jsonl`,
    '{"input":"q","output":"b","expected":"a"}\n',
    { append: true },
  );
  await Deno.writeTextFile(
    `${dir}/s.yaml`,
    `${SUITE}gates:\n  exact_match: { min_mean: 0.9 }\n`,
  );
}

Deno.test("cli run whose gate fails and whose --out is full ends with 3, not 1: CI sees the disk", async () => {
  await withTempDir(async (dir) => {
    await gatedSuite(dir);
    const gated = await cli(["run", "s.yaml", "--out", "o.ndjson"], dir);
    assert.equal(gated.code, 1, gated.stderr);
    const { code, stderr } = await cli(
      ["run", "s.yaml", "--out", "/dev/full"],
      dir,
    );
    assert.equal(code, 3, stderr);
    assert.match(stderr, /gate failed: exact_match/);
  });
});

Deno.test({
  name:
    "cli export --to evalglass onto a full disk: exit 3 naming the run folder",
  ignore: !root,
  async fn() {
    const disk = await smallDisk(64);
    assert.ok(disk, "cannot mount a tmpfs");
    try {
      await withTempDir(async (dir) => {
        await suite(dir, 400);
        const made = await cli(["run", "s.yaml", "--record", "r.json"], dir);
        assert.equal(made.code, 0, made.stderr);
        const { code, stdout, stderr } = await cli(
          ["export", "--to", "evalglass", "r.json", `${disk}/eg`],
          dir,
        );
        assert.equal(code, 3, stderr);
        assert.equal(stdout, "");
        assertNoStack(stderr);
        assert.match(
          stderr,
          new RegExp(
            `^evalpipe: Cannot write the evalglass run "${disk}/eg/[^"]+": no space left on device \\(ENOSPC\\)\n$`,
          ),
        );
      });
    } finally {
      await unmount(disk);
    }
  },
});

Deno.test("cli run whose stderr is lost (its reader gone, or 2>/dev/full) still writes every Score and keeps its exit code", async () => {
  await withTempDir(async (dir) => {
    await suite(dir);
    // A failing case and a malformed line: messages on stderr, exit 2.
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"input":"q","output":"b","expected":"a"}\nnot json\n',
      { append: true },
    );
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      `${SUITE}gates:\n  exact_match: { min_mean: 1 }\n`,
    );
    const child = spawnCli(
      ["run", "s.yaml", "--out", "o.ndjson", "--record", "r.json"],
      dir,
    );
    // The reader goes away before the run says anything.
    await child.stderr.cancel();
    const { code } = await child.status;
    assert.equal(code, 2);
    const lines = (await Deno.readTextFile(`${dir}/o.ndjson`)).trim()
      .split("\n");
    assert.equal(lines.length, 5);
    const record = parseRunRecord(
      await Deno.readTextFile(`${dir}/r.json`),
      "r.json",
    );
    assert.equal(record.complete, true);
    assert.equal(record.units.length, 5);

    const full = await cliInShell(
      dir,
      '"$0" run -A "$1" run s.yaml --out f.ndjson 2>/dev/full; echo $?',
    );
    assert.equal(full.stdout, "2\n");
    assert.equal(
      (await Deno.readTextFile(`${dir}/f.ndjson`)).trim().split("\n").length,
      5,
    );
  });
});

Deno.test("cli run with a report on a full disk names it, still writes the other reports, says the gate and annotates it, and exits 3", async () => {
  await withTempDir(async (dir) => {
    await gatedSuite(dir);
    for (const [full, kept] of [["junit", "markdown"], ["markdown", "junit"]]) {
      const { code, stderr } = await cli(
        [
          "run",
          "s.yaml",
          `--${full}`,
          "/dev/full",
          `--${kept}`,
          `kept.${kept}`,
          "--html",
          `kept.${kept}.html`,
        ],
        dir,
        { GITHUB_ACTIONS: "true" },
      );
      assert.equal(code, 3, stderr);
      assertNoStack(stderr);
      const name = full === "junit" ? "JUnit report" : "Markdown report";
      assert.match(
        stderr,
        new RegExp(
          `^evalpipe: Cannot write ${name} "/dev/full": no space left on device \\(ENOSPC\\)$`,
          "m",
        ),
      );
      assert.match(stderr, /^evalpipe: gate failed: exact_match: /m);
      assert.match(
        stderr,
        /^::error title=evalpipe gate failed%3A exact_match::/m,
      );
      assert.match(
        stderr.trimEnd().split("\n").at(-1)!,
        new RegExp(
          `^evalpipe: --${full} "/dev/full" could not be written in full; stdout has every Score$`,
        ),
      );
      const text = await Deno.readTextFile(`${dir}/kept.${kept}`);
      assert.match(text, kept === "junit" ? /<testsuites/ : /❌ 1 gate failed/);
      assert.ok((await Deno.stat(`${dir}/kept.${kept}.html`)).size > 0);
    }
  });
});

Deno.test("cli report with a report on a full disk names it, still writes the others and exits 3", async () => {
  await withTempDir(async (dir) => {
    await gatedSuite(dir);
    const made = await cli(["run", "s.yaml", "--record", "r.json"], dir);
    assert.equal(made.code, 1, made.stderr);
    const { code, stderr } = await cli(
      [
        "report",
        "r.json",
        "--junit",
        "/dev/full",
        "--markdown",
        "m.md",
        "--html",
        "h.html",
      ],
      dir,
    );
    assert.equal(code, 3, stderr);
    assertNoStack(stderr);
    assert.match(
      stderr,
      /^evalpipe: Cannot write JUnit report "\/dev\/full": no space left on device \(ENOSPC\)$/m,
    );
    assert.match(await Deno.readTextFile(`${dir}/m.md`), /❌ 1 gate failed/);
    assert.ok((await Deno.stat(`${dir}/h.html`)).size > 0);
  });
});

/** Fills `disk` to its last byte. */
async function fill(disk: string): Promise<void> {
  try {
    await Deno.writeFile(`${disk}/fill`, new Uint8Array(1 << 20));
  } catch (error) {
    // Full: what was meant.
    if ((error as { code?: string }).code !== "ENOSPC") throw error;
  }
}

Deno.test({
  name:
    "cli run --save-baseline on a full disk: exit 3 naming the baseline, the summary and the reports still written, no temp file left",
  ignore: !root,
  async fn() {
    const disk = await smallDisk(16);
    assert.ok(disk, "cannot mount a tmpfs");
    try {
      await fill(disk);
      await withTempDir(async (dir) => {
        await suite(dir);
        const { code, stderr } = await cli(
          [
            "run",
            "s.yaml",
            "--save-baseline",
            `${disk}/b.json`,
            "--junit",
            "j.xml",
          ],
          dir,
        );
        assert.equal(code, 3, stderr);
        assertNoStack(stderr);
        assert.match(
          stderr,
          new RegExp(
            `^evalpipe: Cannot write baseline "${disk}/b\\.json": no space left on device \\(ENOSPC\\)$`,
            "m",
          ),
        );
        // The summary table, then the line on what was lost.
        assert.match(stderr, /^exact_match +1\.000/m);
        assert.match(
          stderr.trimEnd().split("\n").at(-1)!,
          new RegExp(
            `^evalpipe: --save-baseline "${disk}/b\\.json" could not be written in full; stdout has every Score$`,
          ),
        );
        assert.match(await Deno.readTextFile(`${dir}/j.xml`), /<testsuites/);
      });
      const left = [];
      for await (const entry of Deno.readDir(disk)) left.push(entry.name);
      assert.deepEqual(left, ["fill"]);
    } finally {
      await unmount(disk);
    }
  },
});

Deno.test({
  name:
    "cli run with a JUnit report on a disk that fills up keeps the last report whole, not a truncated one, and leaves no temporary file",
  ignore: !root,
  async fn() {
    const disk = await smallDisk(64);
    assert.ok(disk, "cannot mount a tmpfs");
    try {
      await withTempDir(async (dir) => {
        await suite(dir, 2000); // a JUnit report of over 64 KB
        const last = '<?xml version="1.0"?><testsuites name="last run"/>\n';
        await Deno.writeTextFile(`${disk}/j.xml`, last);
        const { code, stderr } = await cli(
          ["run", "s.yaml", "--junit", `${disk}/j.xml`],
          dir,
        );
        assert.equal(code, 3, stderr);
        assertNoStack(stderr);
        assert.match(
          stderr,
          /Cannot write JUnit report ".*j\.xml": no space left on device \(ENOSPC\)/,
        );
        // Before, the report was written in place: the disk held the first
        // 64 KB of this run's, an XML file a CI step could not parse.
        assert.equal(await Deno.readTextFile(`${disk}/j.xml`), last);
        const names = [...Deno.readDirSync(disk)].map((e) => e.name);
        assert.deepEqual(names, ["j.xml"]);
      });
    } finally {
      await unmount(disk);
    }
  },
});
