// refuseSameFile against real files, links, pipes and folders made for the test.

import assert from "node:assert/strict";
import { exitCodeOf, InputError } from "../../src/base/mod.ts";
import { refuseSameFile } from "../../src/io/mod.ts";
import { withTempDir } from "../_proc.ts";

Deno.test("refuseSameFile follows a chain of dangling symlinks to the file another output will be", async () => {
  await withTempDir(async (dir) => {
    await Deno.symlink("b", `${dir}/a`);
    await Deno.symlink(`${dir}/c`, `${dir}/b`);
    await assert.rejects(
      refuseSameFile([
        { name: "--out", path: `${dir}/c` },
        { name: "--record", path: `${dir}/a` },
      ], []),
      (error) => {
        assert.ok(error instanceof InputError);
        assert.equal(exitCodeOf(error), 2);
        assert.equal(
          error.message,
          `--record "${dir}/a" is the same file as --out "${dir}/c": ` +
            "the two would be written over each other; choose another path",
        );
        return true;
      },
    );
  });
});

Deno.test("refuseSameFile leaves pipes, devices, distinct files and missing folders alone", async () => {
  await withTempDir(async (dir) => {
    const mkfifo = await new Deno.Command("mkfifo", { args: [`${dir}/p`] })
      .output();
    assert.equal(mkfifo.code, 0);
    await Deno.writeTextFile(`${dir}/d.jsonl`, "{}\n");
    await Deno.writeTextFile(`${dir}/copy.jsonl`, "{}\n");
    await refuseSameFile([
      { name: "--out", path: `${dir}/p` },
      { name: "--record", path: `${dir}/p` },
    ], [{ name: "the dataset", path: `${dir}/p` }]);
    await refuseSameFile([
      { name: "--out", path: "/dev/null" },
      { name: "--record", path: "/dev/null" },
    ], []);
    await refuseSameFile(
      [{ name: "--out", path: `${dir}/copy.jsonl` }],
      [{ name: "the dataset", path: `${dir}/d.jsonl` }],
    );
    await refuseSameFile(
      [{ name: "--out", path: `${dir}/no/such/folder/o.ndjson` }],
      [{ name: "the dataset", path: `${dir}/d.jsonl` }],
    );
  });
});

Deno.test("refuseSameFile catches a hard link in another folder and a path through '..'", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/a/b`, { recursive: true });
    await Deno.writeTextFile(`${dir}/d.jsonl`, "{}\n");
    await Deno.link(`${dir}/d.jsonl`, `${dir}/a/b/h.jsonl`);
    for (const path of [`${dir}/a/b/h.jsonl`, `${dir}/a/b/../../d.jsonl`]) {
      await assert.rejects(
        refuseSameFile(
          [{ name: "--out", path }],
          [{ name: "the dataset", path: `${dir}/d.jsonl` }],
        ),
        new RegExp(`is the same file as the dataset "${dir}/d\\.jsonl"`),
      );
    }
  });
});

Deno.test("refuseSameFile leaves symlinks that lead back to themselves to the opening, which names them", async () => {
  await withTempDir(async (dir) => {
    await Deno.symlink("b", `${dir}/a`);
    await Deno.symlink("a", `${dir}/b`);
    await Deno.writeTextFile(`${dir}/d.jsonl`, "{}\n");
    await refuseSameFile(
      [{ name: "--out", path: `${dir}/a` }, {
        name: "--record",
        path: `${dir}/r.json`,
      }],
      [{ name: "the dataset", path: `${dir}/b` }, {
        name: "the config",
        path: `${dir}/d.jsonl`,
      }],
    );
  });
});

Deno.test("refuseSameFile takes an output named '-' for the file ./- it writes, not for stdin", async () => {
  // `run --out - --markdown -` wrote both to the file `-`, the Markdown over
  // the Scores: as outputs, `-` is the file each writes.
  await assert.rejects(
    refuseSameFile([
      { name: "--out", path: "-" },
      { name: "--markdown", path: "-" },
    ], []),
    (e: Error) =>
      e instanceof InputError &&
      e.message ===
        '--markdown "-" is the same file as --out "-": the two would be written over each other; choose another path',
  );
  await assert.rejects(
    refuseSameFile([{ name: "--markdown", path: "-" }, {
      name: "--junit",
      path: "./-",
    }], []),
    InputError,
  );
  // Stdin (`-` among the inputs) is not the file `-`.
  await refuseSameFile([{ name: "--markdown", path: "./-" }], [{
    name: "the record",
    path: "-",
  }]);
});
