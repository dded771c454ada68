// An input that opens but cannot be read (stdin redirected from a folder, a
// file whose reads fail) is an input error that names it: exit 2, one line
// on stderr, no stack trace.

import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, cliWithShellPrefix, type Outcome } from "../_cli.ts";

/** Runs `cli.ts ...args < stdin` through `sh`, which opens the folder for it. */
function withStdinFrom(
  stdin: string,
  args: string[],
  cwd: string,
): Promise<Outcome> {
  return cliWithShellPrefix('< "$EVALPIPE_TEST_STDIN"', args, cwd, {
    env: { EVALPIPE_TEST_STDIN: stdin },
  });
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

/** `text` as UTF-16LE, with a byte-order mark when `bom`. */
function utf16le(text: string, bom: boolean): Uint8Array {
  const out = new Uint8Array((bom ? 2 : 0) + 2 * text.length);
  if (bom) out.set([0xff, 0xfe]);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    out[(bom ? 2 : 0) + 2 * i] = c & 0xff;
    out[(bom ? 2 : 0) + 2 * i + 1] = c >> 8;
  }
  return out;
}

Deno.test("every command that reads NDJSON refuses UTF-16 text (Windows PowerShell's >) in one line, not a malformed record per line", async () => {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_unreadable_" });
  try {
    // Two cases; read as UTF-8 they were three records of NUL bytes, each
    // "Cannot parse JSON", the third made of the last newline's second byte.
    const cases =
      '{"input":"a","output":"a"}\r\n{"input":"b","output":"b"}\r\n';
    await Deno.writeFile(join(dir, "bom.jsonl"), utf16le(cases, true));
    await Deno.writeFile(join(dir, "le.jsonl"), utf16le(cases, false));
    const bom =
      "it is UTF-16 text (it starts with a UTF-16 byte-order mark), not UTF-8; save it as UTF-8";
    const nul =
      "it holds NUL bytes (UTF-16 text?), not UTF-8 text; save it as UTF-8";
    for (
      const [file, problem] of [["bom.jsonl", bom], ["le.jsonl", nul]] as const
    ) {
      await Deno.writeTextFile(
        join(dir, "suite.yaml"),
        `dataset: ${file}\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n`,
      );
      const scorer = ["--name", "s", "--scorer", "cat >/dev/null; echo '{}'"];
      const named = [["run", "suite.yaml"], ["score", ...scorer, file], [
        "aggregate",
        file,
      ]];
      for (const args of named) {
        const out = await withStdinFrom("/dev/null", args, dir);
        assert.equal(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
        assert.equal(out.stdout, "");
        assert.equal(
          out.stderr,
          `evalpipe: Cannot read "${file}": ${problem}\n`,
          args.join(" "),
        );
      }
      for (const args of [["score", ...scorer], ["aggregate"]]) {
        const out = await withStdinFrom(join(dir, file), args, dir);
        assert.equal(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
        assert.equal(out.stderr, `evalpipe: Cannot read stdin: ${problem}\n`);
      }
    }
    // Excel's "Unicode Text" is UTF-16 too.
    await Deno.writeFile(
      join(dir, "sheet.csv"),
      utf16le("input,output\r\na,a\r\n", true),
    );
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      "dataset: sheet.csv\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    for (const command of ["run", "validate"]) {
      const out = await withStdinFrom(
        "/dev/null",
        [command, "suite.yaml"],
        dir,
      );
      assert.equal(out.code, 2);
      assert.equal(out.stderr, `evalpipe: Cannot read "sheet.csv": ${bom}\n`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** `text` as UTF-32, little- or big-endian, with a byte-order mark when `bom`. */
function utf32(text: string, little: boolean, bom: boolean): Uint8Array {
  const chars = [...(bom ? "\ufeff" : ""), ...text];
  const out = new Uint8Array(4 * chars.length);
  const view = new DataView(out.buffer);
  chars.forEach((c, i) => view.setUint32(4 * i, c.codePointAt(0)!, little));
  return out;
}

Deno.test("every command that reads NDJSON names UTF-32 text as UTF-32, not UTF-16, and says how to convert it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_unreadable_" });
  try {
    const cases = '{"input":"a","output":"a"}\n{"input":"b","output":"b"}\n';
    const mark =
      "it is UTF-32 text (it starts with a UTF-32 byte-order mark), not UTF-8; convert it with iconv -f UTF-32 -t UTF-8";
    const files = [
      // FF FE 00 00 starts as UTF-16's little-endian mark does.
      ["le.jsonl", utf32(cases, true, true), mark],
      ["be.jsonl", utf32(cases, false, true), mark],
      [
        "le_bare.jsonl",
        utf32(cases, true, false),
        "it holds NUL bytes (UTF-32 text?), not UTF-8 text; convert it with iconv -f UTF-32LE -t UTF-8",
      ],
      [
        "be_bare.jsonl",
        utf32(cases, false, false),
        "it holds NUL bytes (UTF-32 text?), not UTF-8 text; convert it with iconv -f UTF-32BE -t UTF-8",
      ],
    ] as const;
    const scorer = ["--name", "s", "--scorer", "cat >/dev/null; echo '{}'"];
    for (const [file, bytes, problem] of files) {
      await Deno.writeFile(join(dir, file), bytes);
      await Deno.writeTextFile(
        join(dir, "suite.yaml"),
        `dataset: ${file}\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n`,
      );
      for (
        const args of [["run", "suite.yaml"], ["score", ...scorer, file], [
          "aggregate",
          file,
        ]]
      ) {
        const out = await withStdinFrom("/dev/null", args, dir);
        assert.equal(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
        assert.equal(out.stdout, "");
        assert.equal(
          out.stderr,
          `evalpipe: Cannot read "${file}": ${problem}\n`,
        );
      }
      const piped = await withStdinFrom(join(dir, file), ["aggregate"], dir);
      assert.equal(piped.code, 2, piped.stderr);
      assert.equal(piped.stderr, `evalpipe: Cannot read stdin: ${problem}\n`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a path whose symlinks lead back to themselves is named, in words, by every command that reads or writes it: exit 2, no stack trace", async () => {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_loop_" });
  try {
    await Deno.symlink("b.jsonl", join(dir, "a.jsonl"));
    await Deno.symlink("a.jsonl", join(dir, "b.jsonl"));
    await Deno.writeTextFile(
      join(dir, "data.jsonl"),
      '{"id":"x","input":"x","expected":"x"}\n',
    );
    const suite = (dataset: string) =>
      `dataset: ${dataset}\ntarget: { type: subprocess, cmd: cat }\nscorers: [{ type: exact_match }]\n`;
    await Deno.writeTextFile(join(dir, "suite.yaml"), suite("data.jsonl"));
    await Deno.writeTextFile(join(dir, "loop.yaml"), suite("a.jsonl"));
    const first = await cli(
      ["run", "suite.yaml", "--out", "s.ndjson", "--record", "r.json"],
      dir,
    );
    assert.equal(first.code, 0, first.stderr);
    const loop = "its symlinks lead back to themselves (a loop)";
    const cases: [string[], string][] = [
      [["run", "suite.yaml", "--out", "a.jsonl"], `Cannot write "a.jsonl"`],
      [
        ["run", "suite.yaml", "--record", "a.jsonl"],
        `Cannot write "a.jsonl"`,
      ],
      [["run", "loop.yaml"], `Cannot open dataset "a.jsonl"`],
      [["validate", "loop.yaml"], `Cannot open dataset "a.jsonl"`],
      [["report", "a.jsonl", "--markdown", "m.md"], `Cannot read "a.jsonl"`],
      [
        ["report", "r.json", "--markdown", "a.jsonl"],
        `Cannot write Markdown report "a.jsonl"`,
      ],
      [
        ["export", "--to", "evalglass", "a.jsonl", "out"],
        `Cannot read "a.jsonl"`,
      ],
      [["aggregate", "a.jsonl"], `Cannot open "a.jsonl"`],
    ];
    for (const [args, start] of cases) {
      const result = await cli(args, dir);
      assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
      assert.equal(
        result.stderr.split("\n").find((l) => l.startsWith("evalpipe: ")),
        `evalpipe: ${start}: ${loop}`,
        args.join(" "),
      );
      assert.doesNotMatch(result.stderr, /\n\s+at /, args.join(" "));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an output path that is a socket is named as one, in words, by run and report: exit 2, no stack trace", async () => {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_socket_" });
  const listener = Deno.listen({ transport: "unix", path: join(dir, "sock") });
  try {
    await Deno.writeTextFile(
      join(dir, "data.jsonl"),
      '{"id":"x","input":"x","expected":"x"}\n',
    );
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      "dataset: data.jsonl\ntarget: { type: subprocess, cmd: cat }\nscorers: [{ type: exact_match }]\n",
    );
    const first = await cli(["run", "suite.yaml", "--record", "r.json"], dir);
    assert.equal(first.code, 0, first.stderr);
    const words = "it is a socket, not a file: give the path of a file";
    const cases: [string[], string][] = [
      [["run", "suite.yaml", "--out", "sock"], `Cannot write "sock"`],
      [["run", "suite.yaml", "--units", "sock"], `Cannot write "sock"`],
      [
        ["run", "suite.yaml", "--markdown", "sock"],
        `Cannot write Markdown report "sock"`,
      ],
      [
        ["report", "r.json", "--junit", "sock"],
        `Cannot write JUnit report "sock"`,
      ],
      [
        ["run", "suite.yaml", "--save-baseline", "./sock"],
        `Cannot write baseline "./sock"`,
      ],
    ];
    for (const [args, start] of cases) {
      const result = await cli(args, dir);
      assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
      assert.ok(
        result.stderr.split("\n").includes(`evalpipe: ${start}: ${words}`),
        `${args.join(" ")}: ${result.stderr}`,
      );
      assert.doesNotMatch(result.stderr, /\n\s+at /, args.join(" "));
    }
  } finally {
    listener.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a report or baseline path that is a socket is refused before any call, as --out is: exit 2, nothing run", async () => {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_report_socket_" });
  const listener = Deno.listen({ transport: "unix", path: join(dir, "sock") });
  try {
    await Deno.writeTextFile(
      join(dir, "data.jsonl"),
      '{"id":"x","input":"x","expected":"x"}\n',
    );
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      "dataset: data.jsonl\ntarget: { type: subprocess, cmd: touch called }\nscorers: [{ type: exact_match }]\n",
    );
    const words = "it is a socket, not a file: give the path of a file";
    const cases: [string, string, string][] = [
      ["--markdown", "sock", "Markdown report"],
      ["--junit", "sock", "JUnit report"],
      ["--html", "sock", "HTML report"],
      ["--save-baseline", "./sock", "baseline"],
    ];
    for (const [flag, path, name] of cases) {
      const result = await cli(["run", "suite.yaml", flag, path], dir);
      assert.equal(result.code, 2, `${flag}: ${result.stderr}`);
      assert.equal(
        result.stderr,
        `evalpipe: Cannot write ${name} ${JSON.stringify(path)}: ${words}\n`,
        flag,
      );
      assert.equal(result.stdout, "", flag);
      await assert.rejects(
        Deno.stat(join(dir, "called")),
        Deno.errors.NotFound,
        flag,
      );
    }
  } finally {
    listener.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a --baseline whose symlinks loop, or that is a socket, is named in words before any call: exit 2, no stack trace", async () => {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_baseline_loop_" });
  const listener = Deno.listen({ transport: "unix", path: join(dir, "sock") });
  try {
    await Deno.symlink("b.json", join(dir, "a.json"));
    await Deno.symlink("a.json", join(dir, "b.json"));
    await Deno.writeTextFile(
      join(dir, "data.jsonl"),
      '{"id":"x","input":"x","expected":"x"}\n',
    );
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      "dataset: data.jsonl\ntarget: { type: subprocess, cmd: touch called }\nscorers: [{ type: exact_match }]\n",
    );
    const cases: [string, string][] = [
      ["./a.json", "its symlinks lead back to themselves (a loop)"],
      ["./sock", "it is a socket, not a file: give the path of a file"],
    ];
    for (const [path, why] of cases) {
      const result = await cli(["run", "suite.yaml", "--baseline", path], dir);
      assert.equal(result.code, 2, `${path}: ${result.stderr}`);
      assert.ok(
        result.stderr.split("\n").includes(
          `evalpipe: Cannot read baseline ${JSON.stringify(path)}: ${why}`,
        ),
        `${path}: ${result.stderr}`,
      );
      assert.doesNotMatch(result.stderr, /\n\s+at /, path);
      // Refused before the target was called.
      await assert.rejects(
        Deno.stat(join(dir, "called")),
        Deno.errors.NotFound,
      );
    }
  } finally {
    listener.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an input that is a socket is named as one, in words, by view, diff and report: exit 2, no stack trace", async () => {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_socket_in_" });
  const listener = Deno.listen({ transport: "unix", path: join(dir, "sock") });
  try {
    await Deno.writeTextFile(
      join(dir, "s.ndjson"),
      '{"metric":"m","status":"scored","validity":"valid","value":1,"evaluator_version":"m@1","unit_id":"u1"}\n',
    );
    const words =
      'evalpipe: Cannot read "sock": it is a socket, not a file: give the path of a file';
    for (
      const args of [
        ["view", "sock"],
        ["diff", "sock", "s.ndjson"],
        ["report", "sock", "--markdown", "m.md"],
      ]
    ) {
      const result = await cli(args, dir);
      assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
      assert.ok(
        result.stderr.split("\n").includes(words),
        `${args.join(" ")}: ${result.stderr}`,
      );
      assert.doesNotMatch(result.stderr, /\n\s+at /, args.join(" "));
    }
  } finally {
    listener.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a file named stdin that is not UTF-8 is named as a file (quoted) by aggregate and score, standard input as stdin", async () => {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_named_stdin_" });
  try {
    // UTF-16 with its byte-order mark: `{}` and a newline.
    await Deno.writeFile(
      join(dir, "stdin"),
      new Uint8Array([0xff, 0xfe, 0x7b, 0, 0x7d, 0, 0x0a, 0]),
    );
    const why =
      "it is UTF-16 text (it starts with a UTF-16 byte-order mark), not UTF-8; save it as UTF-8";
    const scorer = ["--name", "s", "--scorer", "cat >/dev/null; echo '{}'"];
    for (const args of [["aggregate"], ["score", ...scorer]]) {
      const file = await withStdinFrom("/dev/null", [...args, "stdin"], dir);
      assert.equal(file.code, 2, file.stderr);
      assert.equal(file.stderr, `evalpipe: Cannot read "stdin": ${why}\n`);
      const piped = await withStdinFrom(join(dir, "stdin"), args, dir);
      assert.equal(piped.code, 2, piped.stderr);
      assert.equal(piped.stderr, `evalpipe: Cannot read stdin: ${why}\n`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a file name too long for the system is named in words: run refuses it as an output before any call, the readers as an input; exit 2, no stack trace", async () => {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_long_name_" });
  // Longer than any file system's longest name (255 bytes on Linux).
  const long = "n".repeat(300);
  try {
    await Deno.writeTextFile(
      join(dir, "data.jsonl"),
      '{"id":"x","input":"x","expected":"x"}\n',
    );
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      "dataset: data.jsonl\ntarget: { type: subprocess, cmd: touch called }\nscorers: [{ type: exact_match }]\n",
    );
    const words = "its name, or a folder's in its path, is too long";
    // Its sidecar's name is checked first; with a short --out (250), the
    // sidecar's is the only name too long.
    const out = "o".repeat(250);
    const outputs: [string[], string][] = [
      [
        ["--out", long],
        `Cannot write the --out sidecar ${JSON.stringify(`${long}.meta.json`)}`,
      ],
      [["--record", long], `Cannot write ${JSON.stringify(long)}`],
      [["--units", long], `Cannot write ${JSON.stringify(long)}`],
      [
        ["--out", out],
        `Cannot write the --out sidecar ${JSON.stringify(`${out}.meta.json`)}`,
      ],
      [
        ["--markdown", `${long}.md`],
        `Cannot write Markdown report ${JSON.stringify(`${long}.md`)}`,
      ],
      [["--junit", long], `Cannot write JUnit report ${JSON.stringify(long)}`],
      [["--html", long], `Cannot write HTML report ${JSON.stringify(long)}`],
    ];
    for (const [flags, start] of outputs) {
      const result = await cli(["run", "suite.yaml", ...flags], dir);
      const what = flags[0]!;
      assert.equal(result.code, 2, `${what}: ${result.stderr}`);
      assert.equal(result.stderr, `evalpipe: ${start}: ${words}\n`, what);
      assert.equal(result.stdout, "", what);
      await assert.rejects(
        Deno.stat(join(dir, "called")),
        Deno.errors.NotFound,
        what,
      );
    }
    const inputs: [string[], string][] = [
      [["view", long], "Cannot read"],
      [["aggregate", long], "Cannot open"],
      [["diff", long, "data.jsonl"], "Cannot read"],
      [["report", long, "--markdown", "m.md"], "Cannot read"],
      [["export", "--to", "evalglass", long, "e"], "Cannot read"],
      [["score", "--name", "s", "--scorer", "cat", long], "Cannot open"],
    ];
    for (const [args, verb] of inputs) {
      const result = await cli(args, dir);
      assert.equal(result.code, 2, `${args[0]}: ${result.stderr}`);
      // diff reads its two inputs at once: the other's complaint may come
      // first.
      assert.ok(
        result.stderr.split("\n").includes(
          `evalpipe: ${verb} ${JSON.stringify(long)}: ${words}`,
        ),
        `${args[0]}: ${result.stderr}`,
      );
      assert.doesNotMatch(result.stderr, /\n\s+at /, args[0]);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
