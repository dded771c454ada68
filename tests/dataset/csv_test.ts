import assert from "node:assert/strict";
import { join } from "node:path";
import { DatasetError, loadDataset } from "../../src/dataset/dataset.ts";
import type { Example } from "../../src/dataset/case.ts";
import { csvRecords, MAX_RECORD_BYTES } from "../../src/dataset/_csv.ts";
import { src, staticGraph } from "../_static_graph.ts";
import { cli } from "../_cli.ts";

const encoder = new TextEncoder();

/** Runs `fn` with a fresh temporary folder, removed afterwards. */
async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_csv_test_" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Writes `content` to `dir/file` and loads every example of it. */
async function load(
  dir: string,
  file: string,
  content: string | Uint8Array,
): Promise<Example[]> {
  const path = join(dir, file);
  if (typeof content === "string") await Deno.writeTextFile(path, content);
  else await Deno.writeFile(path, content);
  return await Array.fromAsync(await loadDataset(path, { name: file }));
}

/** Loads `content` as `dir/d.csv` and returns the DatasetError it ends with. */
async function failure(dir: string, content: string): Promise<DatasetError> {
  let caught: unknown;
  try {
    await load(dir, "d.csv", content);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof DatasetError, String(caught));
  assert.ok(caught.message.includes(JSON.stringify(join(dir, "d.csv"))));
  return caught;
}

/** The records of `text` read in chunks of `size` bytes, as [line, fields]. */
async function records(
  text: string,
  size = Infinity,
  max?: number,
): Promise<Array<[number, string[]]>> {
  const bytes = encoder.encode(text);
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) {
    chunks.push(bytes.slice(i, i + size));
  }
  const batches = await Array.fromAsync(
    csvRecords(
      ReadableStream.from(chunks),
      (line, detail) => new SyntaxError(`line ${line}: ${detail}`),
      max,
    ),
  );
  return batches.flat().map((r) => [r.line, r.fields]);
}

Deno.test("csvRecords numbers each record by the line it starts on, after quoted line breaks and empty lines", async () => {
  const text = "input,expected\r\n" + // 1
    '"two\r\nlines",x\r\n' + // 2-3
    "\r\n" + // 4
    '"three\nmixed\rends",y\n' + // 5-7
    "\n\n" + // 8-9
    "last,z"; // 10
  const expected: Array<[number, string[]]> = [
    [1, ["input", "expected"]],
    [2, ["two\r\nlines", "x"]],
    [5, ["three\nmixed\rends", "y"]],
    [10, ["last", "z"]],
  ];
  assert.deepEqual(await records(text), expected);
  // However the file is cut into reads, CRLF pairs included.
  for (const size of [1, 2, 3, 5, 7]) {
    assert.deepEqual(await records(text, size), expected, `size ${size}`);
  }
});

Deno.test("csvRecords names a bad byte's line with CR, LF and CRLF line ends, a CRLF split across two reads counted once", async () => {
  const bytes = [...encoder.encode("input\r\nok\rfine\n\r\nx"), 0xff];
  // Every cut: the CRLFs fall astride two reads in some of them.
  for (let size = 1; size <= bytes.length; size++) {
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < bytes.length; i += size) {
      chunks.push(new Uint8Array(bytes.slice(i, i + size)));
    }
    await assert.rejects(
      Array.fromAsync(
        csvRecords(
          ReadableStream.from(chunks),
          (line, detail) => new SyntaxError(`line ${line}: ${detail}`),
        ),
      ),
      (error: unknown) => {
        assert.equal(
          (error as Error).message,
          "line 5: not valid UTF-8; save it as UTF-8",
          `reads of ${size}`,
        );
        return true;
      },
    );
  }
});

Deno.test("csvRecords reads CRLF, LF and CR line ends alike, and a BOM", async () => {
  assert.deepEqual(await records("\ufeffa,b\r\n1,2\n3,4\r5,6"), [
    [1, ["a", "b"]],
    [2, ["1", "2"]],
    [3, ["3", "4"]],
    [4, ["5", "6"]],
  ]);
  // A BOM before a quoted header field.
  assert.deepEqual(await records('\ufeff"a"\n1\n'), [[1, ["a"]], [2, ["1"]]]);
});

Deno.test('csvRecords unescapes doubled quotes and keeps "" as an empty field', async () => {
  assert.deepEqual(
    await records('a,b,c\n"say ""hi""","",""""\n,,\n'),
    [
      [1, ["a", "b", "c"]],
      [2, ['say "hi"', "", '"']],
      [3, ["", "", ""]],
    ],
  );
});

Deno.test("loadDataset refuses a stray quote in a CSV, naming the line, rather than dropping it", async () => {
  await withTempDir(async (dir) => {
    // The closing quote of a quoted field followed by more text: not "abcd".
    const closing = await failure(dir, 'input\nok\n"ab"cd\n');
    assert.match(closing.message, /^Cannot parse dataset ".*" line 3: /);
    assert.match(closing.message, /closing quote is followed by more text/);
    // A quote inside a field that is not quoted.
    const inside = await failure(dir, 'input\nab"cd\n');
    assert.match(inside.message, / line 2: .*not quoted holds a quote/);
    // After a quoted CRLF (csv-parse would count it as two lines).
    const after = await failure(dir, 'input\r\n"a\r\nb"\r\n"x"y\r\n');
    assert.match(after.message, / line 4: /);
  });
});

Deno.test("csvRecords refuses a record longer than its cap, naming its line, so an unclosed quote cannot fill memory", async () => {
  const text = 'input\nshort\n"' + "x".repeat(100) + "\n".repeat(100);
  await assert.rejects(records(text, 16, 64), (error: unknown) => {
    assert.ok(error instanceof SyntaxError);
    assert.equal(
      error.message,
      "line 3: the record is longer than 64 bytes (an unclosed quote?)",
    );
    return true;
  });
  assert.deepEqual(await records('a\n"' + "y".repeat(60) + '"\n', 16, 64), [
    [1, ["a"]],
    [2, ["y".repeat(60)]],
  ]);
  assert.equal(MAX_RECORD_BYTES, 32 * 1024 * 1024);
});

Deno.test("loadDataset names the line where an unclosed CSV quote opens", async () => {
  await withTempDir(async (dir) => {
    const error = await failure(dir, 'input\nfine\n\n"unclosed\nmore\nrows\n');
    assert.match(error.message, / line 4: .*unclosed quote/);
  });
});

Deno.test("loadDataset refuses a CSV record with more fields than the header, naming its line; fewer fields are empty", async () => {
  await withTempDir(async (dir) => {
    const wide = await failure(dir, 'input,expected\n"a\nb",x\n\nc,d,e\n');
    assert.match(
      wide.message,
      / line 5: the record has 3 fields but the header has 2$/,
    );
    const narrow = await load(dir, "n.csv", "input,expected,lang\na\nb,c\n");
    assert.deepEqual(narrow.map((e) => e.case), [
      { input: "a", metadata: { lang: "" } },
      { input: "b", expected: "c", metadata: { lang: "" } },
    ]);
  });
});

Deno.test("loadDataset numbers CSV cases by position, not counting the header, empty lines or line breaks in fields", async () => {
  await withTempDir(async (dir) => {
    const examples = await load(
      dir,
      "d.csv",
      '\n\ninput\n"a\nb"\n\n\nc\n"d"\n',
    );
    assert.deepEqual(examples.map((e) => [e.example_id, e.line]), [
      ["d.csv#1", 1],
      ["d.csv#2", 2],
      ["d.csv#3", 3],
    ]);
    assert.deepEqual(examples.map((e) => e.case?.input), ["a\nb", "c", "d"]);
  });
});

Deno.test("loadDataset refuses a CSV with a header and no records, or nothing at all", async () => {
  await withTempDir(async (dir) => {
    for (const content of ["input,expected\r\n", "input", "", "\n\n"]) {
      const error = await failure(dir, content);
      assert.match(error.message, /has no cases/);
    }
  });
});

Deno.test("loadDataset refuses a CSV that is not UTF-8 at the line of its first bad byte, however far into the file", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "d.csv");
    // Far in, past many reads, with two-byte characters astride their
    // boundaries: only the Latin-1 byte is named.
    const good = "input\n" + "caf\u00e9 cr\u00e8me\n".repeat(20_000);
    for (
      const [bytes, line] of [
        [[...encoder.encode("input\nok\n"), 0xff, 0x0a], 3],
        [
          [...encoder.encode(good), ...encoder.encode("caf"), 0xe9, 0x0a],
          20_002,
        ],
        [[...encoder.encode(good), 0xc3], 20_002],
        // CR alone ends a line (Excel's "CSV (Macintosh)"): every bad byte
        // of such a file was named at line 1.
        [[...encoder.encode("input\rok\r"), 0xff, 0x0d], 3],
        [[...encoder.encode("input\r\nok\r\n"), 0xff, 0x0d, 0x0a], 3],
        [
          [
            ...encoder.encode(good.replaceAll("\n", "\r")),
            ...encoder.encode("caf"),
            0xe9,
            0x0d,
          ],
          20_002,
        ],
        [
          [
            ...encoder.encode(good.replaceAll("\n", "\r\n")),
            ...encoder.encode("caf"),
            0xe9,
            0x0d,
            0x0a,
          ],
          20_002,
        ],
      ] as const
    ) {
      await Deno.writeFile(path, new Uint8Array(bytes));
      await assert.rejects(
        async () => await Array.fromAsync(await loadDataset(path)),
        (error: unknown) => {
          assert.ok(error instanceof DatasetError);
          assert.equal(
            error.message,
            `Cannot parse dataset ${
              JSON.stringify(path)
            } line ${line}: not valid UTF-8; save it as UTF-8`,
          );
          return true;
        },
      );
    }
  });
});

const BIG_RECORDS = 100_000;

Deno.test("loadDataset streams a large CSV: the first example comes before the file is read", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "big.csv");
    let text = "id,input,expected\n";
    for (let i = 1; i <= BIG_RECORDS; i++) {
      text += `k${i},"question ${i}, with a comma",${i % 7}\n`;
    }
    await Deno.writeTextFile(path, text);
    const lastLine = `k${BIG_RECORDS},"question ${BIG_RECORDS}, with a comma"`;

    const stream = (await loadDataset(path, { name: "big" })).getReader();
    assert.equal((await stream.read()).value?.example_id, "big#k1");
    // Rewrite the last record in place after the first example arrived: a
    // loader that had read the whole file up front would not see the change.
    const file = await Deno.open(path, { write: true });
    try {
      await file.seek(text.lastIndexOf(lastLine), Deno.SeekMode.Start);
      await file.write(
        encoder.encode(lastLine.replace("question", "QUESTION")),
      );
    } finally {
      file.close();
    }
    let count = 1;
    let last: Example | undefined;
    for (;;) {
      const { done, value } = await stream.read();
      if (done) break;
      count++;
      last = value;
    }
    assert.equal(count, BIG_RECORDS);
    assert.equal(last?.example_id, `big#k${BIG_RECORDS}`);
    assert.equal(last?.case?.input, `QUESTION ${BIG_RECORDS}, with a comma`);

    // Cancelled after the first example, the file is closed (the resource
    // sanitizer would notice otherwise).
    const early = (await loadDataset(path)).getReader();
    await early.read();
    await early.cancel();
  });
});

Deno.test("the CSV library is loaded only when a CSV dataset is read", async () => {
  for (const entry of ["cli.ts", "mod.ts", "src/run/run_suite.ts"]) {
    const { modules, importersOf } = await staticGraph(entry);
    if (entry !== "cli.ts") assert.ok(modules.has(src("dataset/dataset.ts")));
    assert.ok(!modules.has(src("dataset/_csv.ts")), entry);
    assert.deepEqual([...importersOf("npm:/csv-parse@")], [], entry);
  }
});

Deno.test("cli run reports a CSV that cannot be parsed with its file and line, exit 2", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      "dataset: d.csv\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    await Deno.writeTextFile(
      join(dir, "d.csv"),
      'input,output\r\n"multi\r\nline",x\r\n"ab"cd,y\r\n',
    );
    const { code, stderr } = await cli(["run", "suite.yaml"], dir);
    assert.equal(code, 2);
    assert.match(
      stderr,
      /^evalpipe: Cannot parse dataset "d\.csv" line 4: a quoted field's closing quote is followed by more text/m,
    );
    assert.doesNotMatch(stderr, /at .*\.ts:\d+/, "no stack trace");
  });
});

Deno.test("loadDataset reads columns named as Object's own members (constructor, toString) as metadata", async () => {
  // Kaggle's Formula 1 tables have a `constructor` column: it was taken for
  // another tool's answer key, "function Object() { [native code] }".
  await withTempDir(async (dir) => {
    const [example] = await load(
      dir,
      "d.csv",
      "input,constructor,toString,__proto__\nq,Ferrari,t,p\n",
    );
    assert.equal(example?.invalid, undefined);
    assert.deepEqual(example?.case?.metadata, {
      constructor: "Ferrari",
      toString: "t",
      ["__proto__"]: "p",
    });
  });
});

Deno.test("cli run and validate refuse a CSV header that would load every case wrong, naming the column, before any output", async () => {
  const headers: Array<[string, RegExp]> = [
    [
      "input,topic,expected,topic",
      /line 1: columns 2 and 4 are both named "topic": give each column its own name$/m,
    ],
    [
      "Input,expected",
      /line 1: column 1 is named "Input": the case's field is "input" \(column names are read exactly; anything else is metadata\)$/m,
    ],
    [
      "input, expected",
      /line 1: column 2 is named " expected": the case's field is "expected"/,
    ],
    [
      "input,__expected",
      /line 1: column 2 "__expected" is promptfoo's assertion column, which evalpipe does not read: write the answer as "expected" and the checks as scorers$/m,
    ],
    [
      // promptfoo reads every __expected… column, one assertion each.
      "input,__expected1,__expected2",
      /line 1: column 2 "__expected1" is promptfoo's assertion column, which evalpipe does not read: write the answer as "expected" and the checks as scorers$/m,
    ],
    [
      "id;input;expected",
      /line 1: the header is one column, "id;input;expected": its fields are separated by ";", and a CSV dataset's by commas: save it with commas$/m,
    ],
    [
      "question,answer",
      /line 1: the header has no "input" column, which every case needs \(the columns are "question", "answer"\): name "input" the column of the text to send \(a target's prompt reads it as \{\{input\}\}, and a column that is no case field \("id", "expected", "context", "output"\) as \{\{metadata\.<its name>\}\}\)$/m,
    ],
    [
      // "expected" is the case's, read as {{expected}}: not metadata.
      "question,expected",
      /line 1: the header has no "input" column, which every case needs \(the columns are "question", "expected"\): name "input" the column of the text to send \(a target's prompt reads it as \{\{input\}\}, and a column that is no case field \("id", "expected", "context", "output"\) as \{\{metadata\.<its name>\}\}\)$/m,
    ],
  ];
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      "dataset: d.csv\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\n",
    );
    for (const [header, message] of headers) {
      await Deno.writeTextFile(join(dir, "d.csv"), `${header}\nq,a,b,c\n`);
      for (
        const args of [["validate", "suite.yaml"], [
          "run",
          "suite.yaml",
          "--out",
          "o.ndjson",
        ]]
      ) {
        const { code, stdout, stderr } = await cli(args, dir);
        assert.equal(code, 2, `${header}: ${stderr}`);
        assert.equal(stdout, "");
        assert.match(
          stderr,
          /^evalpipe: Cannot read dataset "d\.csv" line 1: /,
        );
        assert.match(stderr, message);
        assert.doesNotMatch(stderr, /at .*\.ts:\d+/, "no stack trace");
      }
      await assert.rejects(
        Deno.stat(join(dir, "o.ndjson")),
        Deno.errors.NotFound,
      );
    }
    // A pandas index column (a header cell without a name) loads.
    await Deno.writeTextFile(
      join(dir, "d.csv"),
      ",input,output,expected\n0,q,q,q\n",
    );
    const ok = await cli(["run", "suite.yaml"], dir);
    assert.equal(ok.code, 0, ok.stderr);
  });
});

Deno.test("loadDataset names Excel's semicolons even when a quoted field breaks the record first, and Excel's sep= line", async () => {
  await withTempDir(async (dir) => {
    // Excel where the decimal mark is a comma: ";" between fields, quotes
    // around those with line breaks; read with commas, record 2 breaks.
    const semicolons = await failure(
      dir,
      '\ufeffinput;expected\r\n"line1\r\nline2";"4,5"\r\n',
    );
    assert.match(
      semicolons.message,
      /line 1: the header is one column, "input;expected": its fields are separated by ";", and a CSV dataset's by commas: save it with commas$/,
    );
    assert.equal(semicolons.line, 1);
    const sep = await failure(dir, "sep=;\r\ninput;expected\r\na;b\r\n");
    assert.match(
      sep.message,
      /line 1: "sep=;" is Excel's note of the separator, ";"; a CSV dataset's fields are separated by commas: save it as CSV with commas, without that line$/,
    );
    // A record that breaks after a good header is still named as it was.
    const stray = await failure(dir, 'input,expected\n"ab"cd,x\n');
    assert.match(stray.message, /line 2: a quoted field's closing quote/);
  });
});
