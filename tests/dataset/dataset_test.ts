import assert from "node:assert/strict";
import { join } from "node:path";
import {
  DatasetError,
  formatOf,
  loadDataset,
} from "../../src/dataset/dataset.ts";
import type { Example } from "../../src/dataset/case.ts";
import { expectedJson } from "../../src/io/_expected_text.ts";
import {
  compactJson,
  elementSpans,
  memberSpan,
} from "../../src/io/_json_scan.ts";
import { withTempDir } from "../_proc.ts";
import { cli } from "../_cli.ts";

const encoder = new TextEncoder();

/** Writes `content` to `dir/file` and loads every example of it. */
async function load(
  dir: string,
  file: string,
  content: string | Uint8Array,
  name = file,
): Promise<Example[]> {
  const path = join(dir, file);
  if (typeof content === "string") await Deno.writeTextFile(path, content);
  else await Deno.writeFile(path, content);
  return await Array.fromAsync(await loadDataset(path, { name }));
}

function ids(examples: Example[]): string[] {
  return examples.map((e) => e.example_id);
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

// --- formats and ids ---------------------------------------------------------

Deno.test("formatOf maps extensions to formats case-insensitively", () => {
  assert.equal(formatOf("a.jsonl"), "jsonl");
  assert.equal(formatOf("a.NDJSON"), "jsonl");
  assert.equal(formatOf("-"), "jsonl");
  assert.equal(formatOf("dir.v2/a.json"), "json");
  assert.equal(formatOf("a.yaml"), "yaml");
  assert.equal(formatOf("a.YML"), "yaml");
  assert.equal(formatOf("a.csv"), "csv");
  assert.equal(formatOf("a.txt"), undefined);
  assert.equal(formatOf("noext"), undefined);
  assert.equal(formatOf("jsonl"), undefined);
  assert.equal(formatOf("data/csv"), undefined);
  assert.equal(formatOf("data.json/cases"), undefined);
  assert.equal(formatOf(".jsonl"), "jsonl");
});

Deno.test("loadDataset numbers JSONL cases by 1-based line, blank lines included", async () => {
  await withTempDir(async (dir) => {
    const examples = await load(
      dir,
      "d.jsonl",
      '{"input":"a"}\n\n   \n{"id":"own","input":"b"}\n{"id":7,"input":"c"}\r\n{"input":"d"}',
      "datasets/d.jsonl",
    );
    assert.deepEqual(ids(examples), [
      "datasets/d.jsonl#1",
      "datasets/d.jsonl#own",
      "datasets/d.jsonl#7",
      "datasets/d.jsonl#6",
    ]);
    assert.deepEqual(examples.map((e) => e.line), [1, 4, 5, 6]);
    assert.deepEqual(examples.map((e) => e.case?.input), ["a", "b", "c", "d"]);
    assert.ok(examples.every((e) => e.invalid === undefined));
  });
});

Deno.test("loadDataset reads .ndjson like .jsonl and names examples by the path by default", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "d.ndjson");
    await Deno.writeTextFile(
      path,
      '\n{"input":"x","context":["c1","c2"],"metadata":{"k":1}}\n',
    );
    const examples = await Array.fromAsync(await loadDataset(path));
    assert.equal(examples.length, 1);
    assert.equal(examples[0]!.example_id, `${path}#2`);
    assert.deepEqual(examples[0]!.case, {
      input: "x",
      context: ["c1", "c2"],
      metadata: { k: 1 },
    });
  });
});

Deno.test("loadDataset numbers JSON array cases by 1-based position", async () => {
  await withTempDir(async (dir) => {
    const examples = await load(
      dir,
      "d.json",
      `[
  {"input": "a"},

  {"id": "x", "input": [{"role": "system", "content": "m1"}, {"role": "user"}]},
  {"input": "c", "expected": {"k": [1, 2]}}
]`,
    );
    assert.deepEqual(ids(examples), ["d.json#1", "d.json#x", "d.json#3"]);
    assert.deepEqual(examples.map((e) => e.line), [1, 2, 3]);
    assert.deepEqual(examples[1]!.case?.input, [{
      role: "system",
      content: "m1",
    }, { role: "user" }]);
    assert.deepEqual(examples[2]!.case?.expected, { k: [1, 2] });
  });
});

Deno.test("loadDataset numbers YAML list cases by 1-based position, for .yaml and .yml", async () => {
  await withTempDir(async (dir) => {
    const yaml = `# a comment
- input: first
  expected: "1"
- id: named
  input: second
  context: [a, b]
- input: |
    multi
    line
  metadata: { lang: en }
`;
    for (const file of ["d.yaml", "d.yml"]) {
      const examples = await load(dir, file, yaml);
      assert.deepEqual(ids(examples), [
        `${file}#1`,
        `${file}#named`,
        `${file}#3`,
      ]);
      assert.deepEqual(examples[0]!.case, { input: "first", expected: "1" });
      assert.deepEqual(examples[1]!.case?.context, ["a", "b"]);
      assert.equal(examples[2]!.case?.input, "multi\nline\n");
      assert.deepEqual(examples[2]!.case?.metadata, { lang: "en" });
    }
  });
});

Deno.test("loadDataset reads CSV quoted fields with commas, doubled quotes and newlines", async () => {
  await withTempDir(async (dir) => {
    const csv = "input,expected\r\n" +
      '"hello, world","say ""hi"""\r\n' +
      '"two\nlines",plain\r\n' +
      "last,\r\n";
    const examples = await load(dir, "d.csv", csv);
    assert.deepEqual(ids(examples), ["d.csv#1", "d.csv#2", "d.csv#3"]);
    assert.deepEqual(examples.map((e) => e.case), [
      { input: "hello, world", expected: 'say "hi"' },
      { input: "two\nlines", expected: "plain" },
      { input: "last" },
    ]);
  });
});

Deno.test("loadDataset reads a CSV context column as a JSON list or as plain text", async () => {
  await withTempDir(async (dir) => {
    const csv = "input,context\n" +
      'a,"[""c1"",""c2, with comma""]"\n' +
      "b,just some text\n" +
      "c,\n" +
      'd,"[not json"\n' +
      'e,"[1,2]"\n';
    const examples = await load(dir, "d.csv", csv);
    assert.deepEqual(examples.map((e) => e.case?.context), [
      ["c1", "c2, with comma"],
      ["just some text"],
      undefined,
      ["[not json"],
      undefined,
    ]);
    // A JSON list that is not of strings is a malformed record, not a crash.
    assert.equal(examples[4]!.case, null);
    assert.match(examples[4]!.invalid!, /context/);
  });
});

Deno.test("loadDataset puts CSV columns other than the case's own into metadata", async () => {
  await withTempDir(async (dir) => {
    const csv = "id,input,expected,lang,difficulty\n" +
      "q1,What?,That,en,hard\n" +
      ",Who?,,fr,\n";
    const examples = await load(dir, "d.csv", csv);
    assert.equal(examples[0]!.example_id, "d.csv#q1");
    assert.deepEqual(examples[0]!.case, {
      id: "q1",
      input: "What?",
      expected: "That",
      metadata: { lang: "en", difficulty: "hard" },
    });
    // An empty id cell means no id: the record is numbered by position.
    assert.equal(examples[1]!.example_id, "d.csv#2");
    assert.deepEqual(examples[1]!.case, {
      input: "Who?",
      metadata: { lang: "fr", difficulty: "" },
    });
  });
});

Deno.test("loadDataset reads CSV without counting the header, with a BOM and a final line without newline", async () => {
  await withTempDir(async (dir) => {
    const examples = await load(dir, "d.csv", "\ufeffinput\nx\n\ny\nz");
    assert.deepEqual(ids(examples), ["d.csv#1", "d.csv#2", "d.csv#3"]);
    assert.deepEqual(examples.map((e) => e.case?.input), ["x", "y", "z"]);
    // A header without records is an empty dataset: an error, not a silent pass.
    await assert.rejects(load(dir, "empty.csv", "input\n"), DatasetError);
  });
});

Deno.test("loadDataset reads NDJSON from the given stdin for -", async () => {
  const bytes = encoder.encode(
    '{"input":"a"}\n\n{"id":"k","input":"b"}\nnope\n',
  );
  const examples = await Array.fromAsync(
    await loadDataset("-", { stdin: ReadableStream.from([bytes]) }),
  );
  assert.deepEqual(ids(examples), ["stdin#1", "stdin#k", "stdin#4"]);
  assert.equal(examples[2]!.case, null);
  assert.match(examples[2]!.invalid!, /^Cannot parse JSON/);

  const named = await Array.fromAsync(
    await loadDataset("-", {
      name: "piped",
      stdin: ReadableStream.from([encoder.encode('{"input":"a"}')]),
    }),
  );
  assert.deepEqual(ids(named), ["piped#1"]);
});

// --- malformed records -------------------------------------------------------

Deno.test("loadDataset turns malformed JSONL records into invalid examples and goes on", async () => {
  await withTempDir(async (dir) => {
    const lines = [
      '{"input":"ok1"}',
      '{"input":"unterminated',
      '{"expected":"no input"}',
      '{"input":42}',
      '{"input":"q","context":7}',
      '{"input":"q","context":["a",1]}',
      '{"input":"q","metadata":[1]}',
      '{"input":"q","metadata":"m"}',
      "[1,2]",
      "42",
      '"a string"',
      "null",
      '{"id":"own","input":null}',
      '{"input":"ok2"}',
    ];
    const examples = await load(dir, "d.jsonl", lines.join("\n") + "\n");
    assert.equal(examples.length, lines.length);
    assert.deepEqual(ids(examples), [
      ...lines.slice(0, -2).map((_, i) => `d.jsonl#${i + 1}`),
      "d.jsonl#own",
      `d.jsonl#${lines.length}`,
    ]);
    assert.deepEqual(examples.map((e) => e.line), lines.map((_, i) => i + 1));
    const invalid = examples.slice(1, -1);
    for (const e of invalid) {
      assert.equal(e.case, null, e.example_id);
      assert.equal(typeof e.invalid, "string", e.example_id);
      assert.notEqual(e.invalid, "", e.example_id);
    }
    const messages = invalid.map((e) => e.invalid!);
    assert.match(messages[0]!, /^Cannot parse JSON: /);
    assert.match(messages[1]!, /"input" is missing/);
    assert.match(messages[2]!, /"input" must be .*not a number/);
    assert.equal(
      messages[3],
      '"context" must be a string or a list of strings, not a number',
    );
    assert.equal(
      messages[4],
      '"context" must be a string or a list of strings; item 2 is a number',
    );
    assert.match(messages[5]!, /"metadata" must be an object, not a list/);
    assert.match(messages[6]!, /"metadata" must be an object, not a string/);
    assert.match(messages[7]!, /must be an object, not a list/);
    assert.match(messages[8]!, /must be an object, not a number/);
    assert.match(messages[9]!, /must be an object, not a string/);
    assert.match(messages[10]!, /must be an object, not null/);
    assert.match(messages[11]!, /"input" must be/);
    assert.equal(examples.at(-1)!.case?.input, "ok2");
  });
});

Deno.test("loadDataset refuses a .jsonl file that holds a JSON array or pretty-printed cases, at its first line", async () => {
  await withTempDir(async (dir) => {
    const array = "it holds a JSON array, not one case per line: " +
      "name it .json, or write each case on a line of its own";
    const pretty = 'it starts a case over several lines ("{" alone): ' +
      "JSONL holds one case per line (`jq -c .` writes them so), or name a JSON array .json";
    const files: Array<[string, string, number, string]> = [
      // Line 3 fitted on a line and ran; lines 1, 2 and 4 were errors.
      [
        "indented.jsonl",
        '[\n  {"input":"a","expected":"x"},\n  {"input":"b","expected":"y"}\n]\n',
        1,
        array,
      ],
      ["one_line.jsonl", '[{"input":"a"},{"input":"b"}]', 1, array],
      [
        "pretty.jsonl",
        '\n{\n  "input": "a"\n}\n{\n  "input": "b"\n}\n',
        2,
        pretty,
      ],
    ];
    for (const [file, content, line, what] of files) {
      await Deno.writeTextFile(join(dir, file), content);
      const error = await Array.fromAsync(
        await loadDataset(join(dir, file), { name: file }),
      ).then(() => undefined, (e: unknown) => e);
      assert.ok(error instanceof DatasetError, file);
      assert.equal(
        error.message,
        `Cannot parse dataset ${
          JSON.stringify(join(dir, file))
        } line ${line}: ${what}`,
      );
    }
    // A list or a bad line after the first is one malformed record, as ever.
    const examples = await load(
      dir,
      "d.jsonl",
      '{"input":"a"}\n[{"input":"b"}]\n{\n',
    );
    assert.deepEqual(examples.map((e) => e.invalid !== undefined), [
      false,
      true,
      true,
    ]);
  });
});

Deno.test("loadDataset reports invalid UTF-8 bytes on their line and goes on", async () => {
  await withTempDir(async (dir) => {
    const bytes = concat(
      encoder.encode('{"input":"a"}\n{"input":"'),
      new Uint8Array([0xff, 0xfe]),
      encoder.encode('"}\n{"input":"caf'),
      new Uint8Array([0xc3]), // a truncated two-byte sequence
      encoder.encode('"}\n{"input":"é"}\n'),
    );
    const examples = await load(dir, "d.jsonl", bytes);
    assert.deepEqual(ids(examples), [
      "d.jsonl#1",
      "d.jsonl#2",
      "d.jsonl#3",
      "d.jsonl#4",
    ]);
    assert.equal(examples[1]!.case, null);
    assert.match(examples[1]!.invalid!, /UTF-8/);
    assert.equal(examples[2]!.case, null);
    assert.match(examples[2]!.invalid!, /UTF-8/);
    assert.equal(examples[3]!.case?.input, "é");
  });
});

Deno.test("loadDataset turns malformed JSON, YAML and CSV records into invalid examples by position", async () => {
  await withTempDir(async (dir) => {
    const json = await load(
      dir,
      "d.json",
      '[{"input":"a"}, 3, {"id":"x","input":1}, {"input":"b","metadata":"x"}, {"input":"c"}]',
    );
    assert.deepEqual(ids(json), [
      "d.json#1",
      "d.json#2",
      "d.json#x",
      "d.json#4",
      "d.json#5",
    ]);
    assert.deepEqual(json.map((e) => e.case === null), [
      false,
      true,
      true,
      true,
      false,
    ]);

    const yaml = await load(
      dir,
      "d.yaml",
      "- input: a\n- just text\n- input: c\n",
    );
    assert.deepEqual(ids(yaml), ["d.yaml#1", "d.yaml#2", "d.yaml#3"]);
    assert.equal(yaml[1]!.case, null);
    assert.match(yaml[1]!.invalid!, /must be an object/);
    assert.equal(yaml[2]!.case?.input, "c");

    const csv = await load(dir, "d.csv", "id,input\nx,a\nx,b\n");
    assert.equal(csv[1]!.case, null);
    assert.match(csv[1]!.invalid!, /Duplicate id "x"/);
  });
});

// --- whole-file problems -----------------------------------------------------

Deno.test("loadDataset throws DatasetError naming a missing file, whatever its format", async () => {
  await withTempDir(async (dir) => {
    for (const file of ["no.jsonl", "no.json", "no.yaml", "no.csv"]) {
      const path = join(dir, file);
      await assert.rejects(
        () => loadDataset(path),
        (error: unknown) => {
          assert.ok(error instanceof DatasetError);
          assert.equal(error.name, "DatasetError");
          assert.ok(
            error.message.includes(JSON.stringify(path)),
            error.message,
          );
          return true;
        },
      );
    }
  });
});

Deno.test("loadDataset throws DatasetError when a JSON file is not an array or not JSON", async () => {
  await withTempDir(async (dir) => {
    for (
      const [file, content, pattern] of [
        ["obj.json", '{"input":"a"}', /must hold a JSON array/],
        ["bad.json", '[{"input":"a"},', /Cannot parse dataset/],
        ["empty.json", "", /Cannot parse dataset/],
      ] as const
    ) {
      const path = join(dir, file);
      await Deno.writeTextFile(path, content);
      await assert.rejects(() => loadDataset(path), (error: unknown) => {
        assert.ok(error instanceof DatasetError);
        assert.match(error.message, pattern);
        assert.ok(error.message.includes(path), error.message);
        return true;
      });
    }
  });
});

Deno.test("loadDataset throws DatasetError when a YAML file is not a list or not YAML", async () => {
  await withTempDir(async (dir) => {
    for (
      const [file, content, pattern] of [
        ["map.yaml", "input: a\n", /must hold a YAML list/],
        ["empty.yml", "", /Cannot parse dataset|must hold a YAML list/],
        // At its line, as a config's: not the parser's "(3:1)" after the
        // file named a second time and the text under a caret.
        [
          "bad.yaml",
          "- input: a\n  expected: [unclosed\n- input: b\n",
          /^Cannot parse dataset "[^"]+" line 3: deficient indentation$/,
        ],
        // A second document would be dropped unread.
        [
          "two.yaml",
          "- { input: a }\n---\n- { input: b }\n",
          /" line 2: a second YAML document starts here; [^\n]*dropped\)$/,
        ],
        // A key that is a list names no field; the parser would say line 1.
        [
          "complex.yaml",
          "- input: a\n- input: b\n  ? [x, y]\n  : 1\n",
          /" line 3: a key must be a plain name, not a list or a mapping \(a \? key\)$/,
        ],
      ] as const
    ) {
      const path = join(dir, file);
      await Deno.writeTextFile(path, content);
      await assert.rejects(() => loadDataset(path), (error: unknown) => {
        assert.ok(error instanceof DatasetError);
        assert.match(error.message, pattern);
        assert.equal(error.message.split(path).length, 2, error.message);
        return true;
      });
    }
  });
});

Deno.test("loadDataset throws DatasetError for an unknown extension or a broken CSV", async () => {
  await withTempDir(async (dir) => {
    const txt = join(dir, "cases.txt");
    await Deno.writeTextFile(txt, '{"input":"a"}\n');
    await assert.rejects(() => loadDataset(txt), (error: unknown) => {
      assert.ok(error instanceof DatasetError);
      assert.ok(error.message.includes(JSON.stringify(txt)), error.message);
      assert.match(error.message, /\.jsonl/);
      return true;
    });
    await assert.rejects(() => loadDataset(txt), (error: Error) => {
      assert.doesNotMatch(error.message, /gunzip/);
      return true;
    });
    // A compressed file: how to read it.
    const gz = join(dir, "cases.jsonl.gz");
    await Deno.writeFile(gz, new Uint8Array([0x1f, 0x8b]));
    await assert.rejects(() => loadDataset(gz), {
      name: "DatasetError",
      message: `Cannot tell the format of dataset ${
        JSON.stringify(gz)
      }: use .jsonl, .ndjson, .json, .yaml, .yml or .csv; to read a .gz file, set dataset: "-" and run gunzip -c ${
        JSON.stringify(gz)
      } | evalpipe run SUITE`,
    });
    // An explicit format overrides the extension.
    const examples = await Array.fromAsync(
      await loadDataset(txt, { format: "jsonl", name: "t" }),
    );
    assert.deepEqual(ids(examples), ["t#1"]);

    for (
      const [file, content, pattern] of [
        ["quote.csv", 'input\n"unclosed\n', /unclosed quote/],
        ["wide.csv", "input\na,b\n", /2 fields but the header has 1/],
      ] as const
    ) {
      const path = join(dir, file);
      await Deno.writeTextFile(path, content);
      // A CSV is streamed: its records' errors come as it is read.
      const read = async () => await Array.fromAsync(await loadDataset(path));
      await assert.rejects(read, (error: unknown) => {
        assert.ok(error instanceof DatasetError);
        assert.match(error.message, pattern);
        assert.ok(error.message.includes(path), error.message);
        return true;
      });
    }
  });
});

// --- verbatim expected -------------------------------------------------------

const VERBATIM_VALUES = [
  '{"b":1,"a":2,"10":3,"2":4}',
  "1.0",
  "1e3",
  "-0.50",
  "12345678901234567890",
  '"caf\\u00e9"',
  '"a\\/b"',
  '"quote \\" and backslash \\\\"',
  '[1.10,{"z":{"y":"}"},"x":[]},"]"]',
  '{"nested":{"2":"b","1":"a"},"n":[1E+2,0.0]}',
];

/** Spreads compact JSON with whitespace around every token outside strings. */
function spread(compact: string): string {
  let out = "";
  let inString = false;
  for (let i = 0; i < compact.length; i++) {
    const c = compact[i]!;
    if (inString) {
      out += c;
      if (c === "\\") out += compact[++i];
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if ("{}[],:".includes(c)) out += ` \t${c}\n `;
    else out += c;
  }
  return out;
}

Deno.test("expectedJson returns the JSONL source of expected, compacted", async () => {
  await withTempDir(async (dir) => {
    const lines = VERBATIM_VALUES.map((v, i) =>
      `{ "input" : "q", "expected" :  ${
        spread(v).replaceAll("\n", " ")
      } , "id": ${i + 1} }`
    );
    const examples = await load(dir, "d.jsonl", lines.join("\n"));
    assert.equal(examples.length, VERBATIM_VALUES.length);
    for (const [i, value] of VERBATIM_VALUES.entries()) {
      assert.equal(expectedJson(examples[i]!.case!), value);
    }
    // The parsed value is still what JSON.parse gives.
    assert.equal(examples[5]!.case!.expected, "café");
    assert.equal(examples[4]!.case!.expected, 12345678901234567890);
  });
});

Deno.test("expectedJson returns the JSON array source of expected, compacted", async () => {
  await withTempDir(async (dir) => {
    const elements = VERBATIM_VALUES.map((v) =>
      `{\n  "input": "q {[\\"",\n  "expected": ${spread(v)}\n}`
    );
    const examples = await load(
      dir,
      "d.json",
      `[\n${elements.join(",\n")}\n]\n`,
    );
    assert.equal(examples.length, VERBATIM_VALUES.length);
    for (const [i, value] of VERBATIM_VALUES.entries()) {
      assert.equal(expectedJson(examples[i]!.case!), value, `element ${i + 1}`);
    }
  });
});

Deno.test("loadDataset refuses expected given twice, where JSON.parse kept the last", async () => {
  await withTempDir(async (dir) => {
    const examples = await load(
      dir,
      "d.jsonl",
      '{"expected":1.0,"input":"q","expected":{"b":1,"a":2.50}}\n',
    );
    assert.equal(examples[0]!.case, null);
    assert.equal(
      examples[0]!.invalid,
      'key "expected" appears twice: keep one',
    );
  });
});

Deno.test("expectedJson ignores an expected key nested below the top level", async () => {
  await withTempDir(async (dir) => {
    const examples = await load(
      dir,
      "d.jsonl",
      '{"input":"q","metadata":{"expected":2.0},"expected":3.0}\n' +
        '{"input":"q","metadata":{"expected":2.0}}\n',
    );
    assert.equal(expectedJson(examples[0]!.case!), "3.0");
    assert.equal(expectedJson(examples[1]!.case!), "null");
  });
});

Deno.test("expectedJson falls back to JSON.stringify once expected is replaced", async () => {
  await withTempDir(async (dir) => {
    const [example] = await load(
      dir,
      "d.jsonl",
      '{"input":"q","expected":{"b":1.0,"2":"x","1":"y"}}\n',
    );
    const testCase = example!.case!;
    assert.equal(expectedJson(testCase), '{"b":1.0,"2":"x","1":"y"}');
    testCase.expected = { b: 1.0, "2": "x", "1": "y" };
    assert.equal(expectedJson(testCase), '{"1":"y","2":"x","b":1}');
    testCase.expected = "plain";
    assert.equal(expectedJson(testCase), '"plain"');
    delete testCase.expected;
    assert.equal(expectedJson(testCase), "null");
  });
});

Deno.test("expectedJson of loaded cases without escapes or without expected", async () => {
  await withTempDir(async (dir) => {
    const examples = await load(
      dir,
      "d.jsonl",
      '{"input":"q","expected":"plain text"}\n' +
        '{"input":"q"}\n' +
        '{"input":"q","expected":null}\n' +
        '{"input":"q","expected":true}\n',
    );
    assert.deepEqual(examples.map((e) => expectedJson(e.case!)), [
      '"plain text"',
      "null",
      "null",
      "true",
    ]);
  });
});

// How fast (linear in the file's size, where it once was quadratic) is a
// benchmark row, bench/hot_bench.ts's "json-array" group, not a timed test.
Deno.test("loadDataset reads every case of a 100,000-case JSON array, its last text expected verbatim", async () => {
  await withTempDir(async (dir) => {
    const n = 100_000;
    const cases = Array.from(
      { length: n },
      (_, i) => ({ input: `q${i}`, expected: String(i % 7) }),
    );
    const path = join(dir, "big.json");
    await Deno.writeTextFile(path, JSON.stringify(cases, null, 2));
    let count = 0;
    let last: Example | undefined;
    for await (const example of await loadDataset(path)) {
      count++;
      last = example;
    }
    assert.equal(count, n);
    assert.equal(expectedJson(last!.case!), '"4"');
  });
});

// --- _json_scan --------------------------------------------------------------

function memberText(text: string, key: string, start = 0): string | undefined {
  const span = memberSpan(text, key, start);
  return span === undefined ? undefined : text.slice(span[0], span[1]);
}

Deno.test("memberSpan finds a top-level member's value", () => {
  const text = ' { "a" : 1.50 , "b":[1, {"a":2}] ,"c":"x","d":null,"e":-1e-7}';
  assert.equal(memberText(text, "a"), "1.50");
  assert.equal(memberText(text, "b"), '[1, {"a":2}]');
  assert.equal(memberText(text, "c"), '"x"');
  assert.equal(memberText(text, "d"), "null");
  assert.equal(memberText(text, "e"), "-1e-7");
  assert.equal(memberText(text, "z"), undefined);
  assert.equal(memberText("[1]", "a"), undefined);
  assert.equal(memberText("{}", "a"), undefined);
  assert.equal(memberText("{ }", "a"), undefined);
});

Deno.test("memberSpan lets the last of duplicate keys win, like JSON.parse", () => {
  const text = '{"k":1,"other":{"k":9},"k":[2],"x":0}';
  assert.equal(memberText(text, "k"), "[2]");
  assert.deepEqual(JSON.parse(memberText(text, "k")!), JSON.parse(text).k);
});

Deno.test("memberSpan skips braces, brackets and quotes inside strings", () => {
  const text =
    '{"a":"}{][","b":{"s":"\\"}","t":["]","\\\\"]},"c":"\\\\","d":"end"}';
  assert.equal(memberText(text, "b"), '{"s":"\\"}","t":["]","\\\\"]}');
  assert.equal(memberText(text, "c"), '"\\\\"');
  assert.equal(memberText(text, "d"), '"end"');
  for (const key of ["a", "b", "c", "d"]) {
    assert.deepEqual(
      JSON.parse(memberText(text, key)!),
      JSON.parse(text)[key],
      key,
    );
  }
});

Deno.test("memberSpan matches escaped key names by their decoded value", () => {
  const text = '{"exp\\u0065cted":1.0,"a\\"b":2,"a\\\\":3}';
  assert.equal(memberText(text, "expected"), "1.0");
  assert.equal(memberText(text, 'a"b'), "2");
  assert.equal(memberText(text, "a\\"), "3");
});

Deno.test("memberSpan starts at the given offset", () => {
  const text = '[{"e":1}, {"e":2.0}]';
  assert.equal(memberText(text, "e", 1), "1");
  assert.equal(memberText(text, "e", 9), "2.0"); // whitespace before the object
  assert.equal(memberText(text, "e", 10), "2.0");
});

Deno.test("elementSpans gives the source span of each array element", () => {
  const text = ' [ 1.0 , "a,]" ,{"x":[1,2]},[],{} ,null,"\\\\",-2e3 ] ';
  const spans = elementSpans(text);
  assert.deepEqual(spans.map(([s, e]) => text.slice(s, e)), [
    "1.0",
    '"a,]"',
    '{"x":[1,2]}',
    "[]",
    "{}",
    "null",
    '"\\\\"',
    "-2e3",
  ]);
  assert.equal(spans.length, JSON.parse(text).length);
  assert.deepEqual(elementSpans("[]"), []);
  assert.deepEqual(elementSpans(" [\n] "), []);
  assert.deepEqual(elementSpans('{"a":1}'), []);
});

Deno.test("compactJson removes whitespace outside strings only", () => {
  assert.equal(
    compactJson(' {\n\t"a b" : [ 1 , 2.0 ] ,\r\n "c" : " x\\" y " }\n'),
    '{"a b":[1,2.0],"c":" x\\" y "}',
  );
  assert.equal(compactJson('"  \\\\"  '), '"  \\\\"');
  assert.equal(compactJson('["\\\\", " "]'), '["\\\\"," "]');
  assert.equal(compactJson('{"a":1}'), '{"a":1}');
  const sample = { s: "a  b\n", n: [1, { k: '\\ " ' }] };
  assert.equal(
    compactJson(JSON.stringify(sample, null, 2)),
    JSON.stringify(sample),
  );
});

// --- streaming ---------------------------------------------------------------

const BIG_LINES = 200_000;

async function writeBigJsonl(path: string): Promise<void> {
  const file = await Deno.open(path, { write: true, create: true });
  const writer = file.writable.getWriter();
  const batch = 10_000;
  for (let start = 0; start < BIG_LINES; start += batch) {
    let text = "";
    for (let i = start; i < start + batch; i++) {
      text += `{"input":"q${
        String(i + 1).padStart(6, "0")
      }","expected":${i}}\n`;
    }
    await writer.write(encoder.encode(text));
  }
  await writer.close();
}

Deno.test("loadDataset streams a large JSONL file: the first example comes before the file is read", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "big.jsonl");
    await writeBigJsonl(path);

    // Read the first example, then cancel: the file is closed (the resource
    // sanitizer would notice otherwise).
    const stream = await loadDataset(path, { name: "big" });
    const reader = stream.getReader();
    const first = await reader.read();
    assert.equal(first.done, false);
    assert.equal(first.value?.example_id, "big#1");
    assert.equal(first.value?.case?.input, "q000001");
    await reader.cancel();

    // Rewrite the last line in place after the first example arrived: a
    // loader that had read the whole file up front would not see the change.
    const streamed = (await loadDataset(path, { name: "big" })).getReader();
    assert.equal((await streamed.read()).value?.example_id, "big#1");
    const size = (await Deno.stat(path)).size;
    const lastLine = `{"input":"q${BIG_LINES}","expected":${BIG_LINES - 1}}\n`;
    const file = await Deno.open(path, { write: true });
    try {
      await file.seek(size - lastLine.length, Deno.SeekMode.Start);
      const changed = lastLine.replace(`"q${BIG_LINES}"`, `"Z${BIG_LINES}"`);
      assert.equal(changed.length, lastLine.length);
      await file.write(encoder.encode(changed));
    } finally {
      file.close();
    }
    let count = 1;
    let last: Example | undefined;
    for (;;) {
      const { done, value } = await streamed.read();
      if (done) break;
      count++;
      last = value;
    }
    assert.equal(count, BIG_LINES);
    assert.equal(last?.example_id, `big#${BIG_LINES}`);
    assert.equal(last?.case?.input, `Z${BIG_LINES}`);

    // A full pass counts every line.
    let total = 0;
    let invalid = 0;
    for await (const example of await loadDataset(path)) {
      total++;
      if (example.case === null) invalid++;
    }
    assert.equal(total, BIG_LINES);
    assert.equal(invalid, 0);
  });
});

Deno.test("loadDataset yields stdin examples as their lines arrive", async () => {
  let source!: ReadableStreamDefaultController<Uint8Array>;
  const stdin = new ReadableStream<Uint8Array>({
    start(controller) {
      source = controller;
    },
  });
  const reader = (await loadDataset("-", { stdin })).getReader();
  source.enqueue(encoder.encode('{"input":"a"}\n{"inp'));
  const first = await reader.read();
  assert.equal(first.value?.example_id, "stdin#1");
  source.enqueue(encoder.encode('ut":"b"}\n'));
  const second = await reader.read();
  assert.equal(second.value?.example_id, "stdin#2");
  assert.equal(second.value?.case?.input, "b");
  source.close();
  assert.equal((await reader.read()).done, true);
});

Deno.test("loadDataset treats an empty id as a malformed record, not an id", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      '{"id":"","input":"a"}\n{"input":"b"}\n',
    );
    const examples = await Array.fromAsync(
      await loadDataset(`${dir}/d.jsonl`, { name: "d.jsonl" }),
    );
    assert.equal(examples[0]!.case, null);
    assert.equal(examples[0]!.example_id, "d.jsonl#1");
    assert.equal(examples[0]!.invalid, '"id" must not be empty');
    assert.equal(examples[1]!.example_id, "d.jsonl#2");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadDataset refuses an id that is another case's line number, and duplicates among invalid records", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // Line 1 claims id 3; line 3 has no id, so it would be d.jsonl#3 too.
    await Deno.writeTextFile(
      `${dir}/d.jsonl`,
      [
        '{"id":3,"input":"a"}',
        '{"input":"b"}',
        '{"input":"c"}',
        '{"id":"x","input":7}',
        '{"id":"x","input":"y"}',
      ]
        .join("\n") + "\n",
    );
    const examples = await Array.fromAsync(
      await loadDataset(`${dir}/d.jsonl`, { name: "d.jsonl" }),
    );
    const ids = examples.map((e) => e.example_id);
    assert.equal(new Set(ids).size, ids.length, `ids are unique: ${ids}`);
    assert.equal(examples[2]!.case, null);
    assert.match(
      examples[2]!.invalid!,
      /its line number 3 is the id of the case at line 1/,
    );
    // The first "x" is invalid (input 7) but still holds the id.
    assert.equal(examples[4]!.case, null);
    assert.match(examples[4]!.invalid!, /Duplicate id "x" \(first at line 4\)/);
    // An own id equal to a line number already used by a case without id.
    await Deno.writeTextFile(
      `${dir}/e.jsonl`,
      '{"input":"a"}\n{"id":1,"input":"b"}\n',
    );
    const more = await Array.fromAsync(
      await loadDataset(`${dir}/e.jsonl`, { name: "e.jsonl" }),
    );
    assert.equal(more[1]!.case, null);
    assert.match(
      more[1]!.invalid!,
      /Id "1" is also the line number of the case without an id at line 1/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadDataset reads a FIFO without blocking the event loop while its writer pauses", async () => {
  await withTempDir(async (dir) => {
    const fifo = join(dir, "cases.jsonl");
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert.equal(made.code, 0);
    // Another process writes one case, pauses, then writes the next.
    const writer = new Deno.Command("sh", {
      args: [
        "-c",
        `exec 3>"$1"; printf '{"input":"a"}\\n' >&3; sleep 0.5; printf '{"input":"b"}\\n' >&3`,
        "sh",
        fifo,
      ],
    }).spawn();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    try {
      const reader = (await loadDataset(fifo)).getReader();
      assert.equal((await reader.read()).value?.case?.input, "a");
      const before = ticks;
      assert.equal((await reader.read()).value?.case?.input, "b");
      // A read that blocked the thread would have stopped the timer.
      assert.ok(ticks - before >= 5, `${ticks - before} ticks`);
      assert.equal((await reader.read()).done, true);
    } finally {
      clearInterval(timer);
      await writer.status;
    }
  });
});

Deno.test("loadDataset finds a duplicate id whether it came as a JSON number or as its text", async () => {
  await withTempDir(async (dir) => {
    const examples = await load(
      dir,
      "d.jsonl",
      [
        '{"id":9,"input":"a"}',
        '{"id":"9","input":"b"}',
        '{"id":"2147483648","input":"c"}',
        '{"id":2147483648,"input":"d"}',
        '{"id":-0,"input":"e"}',
        '{"id":0,"input":"f"}',
        '{"input":"g"}',
        '{"id":9.0,"input":"h"}',
      ].join("\n") + "\n",
    );
    const problems = examples.map((e) => e.invalid ?? "");
    assert.match(problems[1]!, /^Duplicate id "9" \(first at line 1\)/);
    assert.match(
      problems[3]!,
      /^Duplicate id "2147483648" \(first at line 3\)/,
    );
    assert.match(problems[5]!, /^Duplicate id "0" \(first at line 5\)/);
    assert.equal(problems[6], "");
    assert.match(problems[7]!, /^Duplicate id "9" \(first at line 1\)/);
    assert.deepEqual(
      problems.map((p) => p === ""),
      [true, false, true, false, true, false, true, false],
    );
  });
});

Deno.test("loadDataset keeps integer ids beyond 2^53 as written, in JSONL and JSON, so two such cases stay two", async () => {
  await withTempDir(async (dir) => {
    const records = [
      '{"id":12345678901234567891,"input":"a"}',
      '{"input":"b","id":12345678901234567892}',
      '{"id":12345678901234567892,"input":"c"}',
      '{"id":1e21,"input":"d"}',
    ];
    const lines = await load(dir, "d.jsonl", records.join("\n") + "\n");
    const list = await load(dir, "d.json", `[${records.join(",\n")}]`);
    for (const [name, examples] of [["d.jsonl", lines], ["d.json", list]]) {
      const ids = (examples as typeof lines).map((e) => e.example_id);
      assert.deepEqual(ids.slice(0, 2), [
        `${name}#12345678901234567891`,
        `${name}#12345678901234567892`,
      ]);
      // The third repeats the second's id, exactly.
      assert.match(
        (examples as typeof lines)[2]!.invalid!,
        /^Duplicate id "12345678901234567892" \(first at (line|record) 2\)/,
      );
      // Not an integer as written: as JSON reads it.
      assert.equal(ids[3], `${name}#1e+21`);
    }
    // YAML gives its reader's number: the digits are gone, so the case is
    // refused rather than merged with another.
    const yaml = await load(
      dir,
      "d.yaml",
      "- {id: 12345678901234567891, input: a}\n- {id: '12345678901234567892', input: b}\n- {id: 9007199254740991, input: c}\n",
    );
    assert.equal(
      yaml[0]!.invalid,
      '"id" is an integer past 2^53, which YAML reads rounded (to 12345678901234567000): write it quoted, as a string',
    );
    assert.deepEqual(yaml.slice(1).map((e) => [e.example_id, e.invalid]), [
      ["d.yaml#12345678901234567892", undefined],
      ["d.yaml#9007199254740991", undefined],
    ]);
  });
});

Deno.test("a YAML dataset's integer past 2^53 reaches a subprocess scorer with every digit, as a JSON dataset's does", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      join(dir, "d.yaml"),
      [
        "- {input: a, output: a, expected: 12345678901234567890123}",
        "- {input: b, output: b, expected: {n: -9007199254740993, m: [0x20000000000001, 2]}}",
        "- {input: c, output: c, expected: 9007199254740991}",
        "- {input: d, output: d, expected: x, metadata: {ticket: 98765432109876543210}}",
      ].join("\n") + "\n",
    );
    const examples = await Array.fromAsync(
      await loadDataset(join(dir, "d.yaml"), { name: "d.yaml" }),
    );
    assert.deepEqual(examples.map((e) => expectedJson(e.case!)), [
      "12345678901234567890123",
      '{"n":-9007199254740993,"m":[9007199254740993,2]}',
      "9007199254740991",
      '"x"',
    ]);
    // The values themselves are numbers, as JSON reads them.
    assert.equal(examples[0]!.case!.expected, 12345678901234567890123);
    assert.equal(examples[3]!.case!.metadata?.ticket, 98765432109876543210);
    // What a scorer is sent, through run: its stdin, echoed as its reason.
    await Deno.writeTextFile(
      join(dir, "echo.py"),
      'import json, sys\nprint(json.dumps({"score": 1, "reason": sys.stdin.read()}))\n',
    );
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      "dataset: d.yaml\ntarget: { type: replay }\nscorers:\n  - { type: subprocess, cmd: python3 echo.py }\n",
    );
    const out = await cli(["run", "suite.yaml"], dir);
    assert.equal(out.code, 0, out.stderr);
    const sent = out.stdout.trim().split("\n").map((line) =>
      JSON.parse(JSON.parse(line).reason).expected
    );
    assert.equal(sent.length, 4);
    assert.match(
      out.stdout.split("\n")[0]!,
      /\\"expected\\":12345678901234567890123,/,
    );
  });
});

Deno.test("a YAML dataset's integer past a double's range stays text, as before integers past 2^53 were kept exactly", async () => {
  await withTempDir(async (dir) => {
    const big = "1" + "0".repeat(400);
    await Deno.writeTextFile(
      join(dir, "d.yaml"),
      `- {input: ${big}, expected: ${big}}\n`,
    );
    const examples = await Array.fromAsync(
      await loadDataset(join(dir, "d.yaml"), { name: "d.yaml" }),
    );
    assert.equal(examples[0]!.invalid, undefined);
    assert.equal(examples[0]!.case!.input, big);
    assert.equal(examples[0]!.case!.expected, big);
  });
});

Deno.test("an invalid case never takes the id a case gave itself: named by where it stands, line-N, as score names a unit", async () => {
  await withTempDir(async (dir) => {
    const examples = await load(
      dir,
      "d.jsonl",
      [
        '{"id":"a","input":"a"}',
        '{"id":"line-3","input":"b"}',
        '{"id":"a","input":"c"}', // a duplicate, named line-3: taken
        '{"id":5,"input":"d"}',
        "not json", // line 5, named 5: taken, so line-5
        '{"id":"line-5","input":"e"}', // now a duplicate of that name
        '{"id":9,"input":"f"}',
        '{"id":"line-9","input":"g"}',
        "[]", // line 9: both 9 and line-9 taken
      ].join("\n") + "\n",
    );
    assert.deepEqual(ids(examples), [
      "d.jsonl#a",
      "d.jsonl#line-3",
      "d.jsonl#line-3-invalid",
      "d.jsonl#5",
      "d.jsonl#line-5",
      "d.jsonl#line-6",
      "d.jsonl#9",
      "d.jsonl#line-9",
      "d.jsonl#line-9-invalid",
    ]);
    assert.equal(new Set(ids(examples)).size, examples.length);
    assert.match(examples[2]!.invalid!, /Duplicate id "a"/);
    assert.match(examples[4]!.invalid!, /Cannot parse JSON/);
    assert.match(examples[5]!.invalid!, /Duplicate id "line-5"/);
  });
});

Deno.test("loadDataset reads YAML merge keys, as PyYAML does, and refuses a file that is not UTF-8 at its line", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "cases.yaml");
    await Deno.writeTextFile(
      path,
      "- &first\n  input: q1\n  metadata: { topic: refunds }\n" +
        "- <<: *first\n  input: q2\n",
    );
    const examples = (await Array.fromAsync(await loadDataset(path))).flat();
    assert.deepEqual(examples.map((e) => e.case), [
      { input: "q1", metadata: { topic: "refunds" } },
      { input: "q2", metadata: { topic: "refunds" } },
    ]);
    for (const name of ["latin1.yaml", "latin1.json"]) {
      const bad = join(dir, name);
      // "café" in Latin-1 on the second line.
      await Deno.writeFile(
        bad,
        new Uint8Array([
          ...new TextEncoder().encode(
            name.endsWith(".json")
              ? '[{"input": "a"},\n{"input": "caf'
              : "- input: a\n- input: caf",
          ),
          0xe9,
          ...new TextEncoder().encode(name.endsWith(".json") ? '"}]\n' : "\n"),
        ]),
      );
      await assert.rejects(() => loadDataset(bad), (error: unknown) => {
        assert.ok(error instanceof DatasetError, String(error));
        assert.equal(
          error.message,
          `Cannot read dataset ${
            JSON.stringify(bad)
          }: not valid UTF-8 (line 2); save it as UTF-8`,
        );
        return true;
      });
    }
  });
});

Deno.test("a YAML case holding .inf or .nan anywhere is invalid, named by its path: JSON would write null, which means no expected", async () => {
  await withTempDir(async (dir) => {
    const examples = await load(
      dir,
      "d.yaml",
      [
        "- {id: a, input: q, output: Infinity, expected: .inf}",
        "- {id: b, input: q, expected: x, metadata: {w: [1, -.inf]}}",
        "- {id: c, input: q, expected: .NaN}",
        "- {id: .inf, input: q}",
        "- {id: d, input: q, expected: 5, metadata: {w: [1, 2.5]}}",
        "- {id: e, input: q, expected: '.inf'}",
      ].join("\n") + "\n",
    );
    const note = (path: string, value: string) =>
      `"${path}" is ${value}, a number JSON cannot carry: write "${value}" (quoted) for the text`;
    assert.deepEqual(examples.map((e) => e.invalid), [
      note("expected", ".inf"),
      note("metadata.w[1]", "-.inf"),
      note("expected", ".nan"),
      note("id", ".inf"),
      undefined,
      undefined,
    ]);
    assert.equal(examples[5]!.case?.expected, ".inf");
  });
});

Deno.test("loadDataset takes a list input only as chat messages, each with a role, naming the item", async () => {
  await withTempDir(async (dir) => {
    const examples = await load(
      dir,
      "m.jsonl",
      [
        '{"input":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]}',
        '{"input":[{"role":"assistant","content":null,"tool_calls":[]}]}',
        '{"input":[1,2]}',
        '{"input":[{"content":"hi"}]}',
        '{"input":[{"role":"user"},{"role":7}]}',
        '{"input":[["user","hi"]]}',
      ].join("\n") + "\n",
    );
    assert.deepEqual(examples.map((e) => e.invalid), [
      undefined,
      undefined,
      '"input" item 1 must be a chat message ({"role": ..., "content": ...}), not a number',
      '"input" message 1 needs a "role" (a text such as "user")',
      '"input" message 2 needs a "role" (a text such as "user"), not 7',
      '"input" item 1 must be a chat message ({"role": ..., "content": ...}), not a list',
    ]);
  });
});

Deno.test("loadDataset refuses an input that is an empty list of messages, which a chat API refuses a call at a time", async () => {
  await withTempDir(async (dir) => {
    const examples = await load(
      dir,
      "m.jsonl",
      '{"id": "q4", "input": [], "expected": "x"}\n{"input": ""}\n',
    );
    assert.deepEqual(examples.map((e) => [e.example_id, e.invalid]), [
      [
        "m.jsonl#q4",
        '"input" is an empty list of messages: give at least one ({"role": "user", "content": ...}) or the text to send',
      ],
      ["m.jsonl#2", undefined],
    ]);
  });
});

Deno.test("loadDataset names the line a malformed JSON, YAML or CSV record starts on", async () => {
  await withTempDir(async (dir) => {
    const json = await load(
      dir,
      "d.json",
      '[\n  {"input": "a"},\n\n  {\n    "input": 3\n  },\n  {"id": "x", "input": "c"}, {"id": "x", "input": "d"}\n]',
    );
    assert.deepEqual(
      json.map((e) => [e.line, e.at]),
      [[1, undefined], [2, 4], [3, undefined], [4, 7]],
    );
    const yaml = await load(
      dir,
      "d.yaml",
      "# cases\n- input: a\n\n- input:\n    - 1\n- id: x\n  input: c\n- id: x\n  input: d\n",
    );
    assert.deepEqual(
      yaml.map((e) => [e.line, e.at]),
      [[1, undefined], [2, 4], [3, undefined], [4, 8]],
    );
    const csv = await load(
      dir,
      "d.csv",
      'id,input\nx,"two\nlines"\n\nx,b\n',
    );
    assert.deepEqual(csv.map((e) => [e.line, e.at]), [[1, undefined], [2, 5]]);
  });
});

Deno.test("loadDataset names the keys of a case without input, where another tool's dataset has its prompt", async () => {
  await withTempDir(async (dir) => {
    const examples = await load(
      dir,
      "hf.jsonl",
      [
        '{"question":"2+2?","answer":"4"}', // a Hugging Face export
        '{"vars":{"question":"2+2?"},"assert":[{"type":"equals","value":"4"}]}', // promptfoo
        "{}",
        JSON.stringify(Object.fromEntries(
          Array.from({ length: 9 }, (_, i) => [`k${i}`, i]),
        )),
      ].join("\n") + "\n",
    );
    assert.deepEqual(examples.map((e) => e.invalid), [
      '"input" is missing (the record has "question", "answer"): name its prompt "input"',
      '"input" is missing (the record has "vars", "assert"): "vars" is promptfoo\'s test variables: keep them under "metadata", where a target\'s prompt reads them ({{metadata.question}}), and write the text to send as "input"',
      '"input" is missing (the record is empty)',
      '"input" is missing (the record has "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", …): name its prompt "input"',
    ]);
  });
});

Deno.test("loadDataset refuses Inspect's choices, which the target would never see, and says where they go", async () => {
  await withTempDir(async (dir) => {
    const examples = await load(
      dir,
      "mc.jsonl",
      [
        '{"input":"2+2?","expected":"B","choices":["3","4"]}',
        '{"input":"2+2? A) 3 B) 4","expected":"B","metadata":{"choices":["3","4"]}}',
        '{"input":"Pick","expected":"C","choices":["a","b","a very long option that goes on and on for a while",4]}',
      ].join("\n") + "\n",
    );
    assert.deepEqual(examples.map((e) => e.invalid), [
      `"choices" is Inspect's multiple-choice options, which evalpipe does not show the target: write them into "input" with their letters, as Inspect's multiple_choice() shows them ("A) 3", "B) 4"), ask for the letter alone, and score it with "exact_match" (in "metadata", a prompt's {{metadata.choices}} shows them without letters)`,
      undefined,
      `"choices" is Inspect's multiple-choice options, which evalpipe does not show the target: write them into "input" with their letters, as Inspect's multiple_choice() shows them ("A) a", "B) b", "C) a very long option that goes o…", …), ask for the letter alone, and score it with "exact_match" (in "metadata", a prompt's {{metadata.choices}} shows them without letters)`,
    ]);
  });
});

Deno.test("loadDataset refuses another tool's answer key in a case without expected, naming what to write", async () => {
  await withTempDir(async (dir) => {
    const examples = await load(
      dir,
      "m.jsonl",
      [
        '{"input":"2+2?","target":"4","choices":["3","4"]}',
        '{"input":"capital?","ideal":["Paris","paris"]}',
        '{"input":"q","__expected":"contains: 4"}',
        '{"input":"q","__expected2":"icontains: four"}',
        // Beside expected, or as a unit record's target information: kept.
        '{"input":"q","expected":"4","target":"4"}',
        '{"input":"q","output":"a","target":{"latency_ms":3}}',
      ].join("\n") + "\n",
    );
    assert.deepEqual(examples.map((e) => e.invalid), [
      `"target" is Inspect's answer key; evalpipe's is "expected": rename the field`,
      `"ideal" is OpenAI Evals' answer key; evalpipe's is "expected": rename the field`,
      `"__expected" is promptfoo's assertion column, which evalpipe does not read: write the answer as "expected" and the checks as scorers`,
      `"__expected2" is promptfoo's assertion column, which evalpipe does not read: write the answer as "expected" and the checks as scorers`,
      undefined,
      undefined,
    ]);
  });
});

Deno.test("loadDataset refuses another tool's answer key holding a number or a boolean, as it refuses one holding text", async () => {
  await withTempDir(async (dir) => {
    const target =
      `"target" is Inspect's answer key; evalpipe's is "expected": rename the field`;
    const ideal =
      `"ideal" is OpenAI Evals' answer key; evalpipe's is "expected": rename the field`;
    // GSM8K's answers are numbers: such a key was dropped in silence, and
    // every Score of the case was non_evaluable for want of an expected.
    const examples = await load(
      dir,
      "n.jsonl",
      [
        '{"input":"2+2?","target":4}',
        '{"input":"sky blue?","target":true}',
        '{"input":"roots of x^2-1?","ideal":[1,-1]}',
        '{"input":"q","target":["4",4]}',
        '{"input":"q","output":"a","target":{"latency_ms":3}}',
        '{"input":"q","target":null}',
        // Braintrust's export writes "expected": null for no answer: the
        // answer beside it was dropped all the same.
        '{"input":"2+2?","expected":null,"target":4}',
      ].join("\n") + "\n",
    );
    assert.deepEqual(examples.map((e) => e.invalid), [
      target,
      target,
      ideal,
      target,
      undefined,
      undefined,
      target,
    ]);
    const array = await load(
      dir,
      "n.json",
      '[{"input":"2+2?","target":4},{"input":"3+3?","expected":6}]',
    );
    assert.deepEqual(array.map((e) => e.invalid), [target, undefined]);
  });
});

Deno.test("DatasetError carries the 1-based line (and column) of a problem on a line, none for the file as a whole", async () => {
  await withTempDir(async (dir) => {
    const bad = new Uint8Array([...encoder.encode('[{"input":"a"},\n'), 0xff]);
    for (
      const [file, content, line, column] of [
        // JSON: where the scanner finds the grammar broken.
        ["bad.json", '[{"input":"a"},\n {"input": "b",}\n]\n', 2, 16],
        // YAML: the parser's mark, 0-based there.
        ["bad.yaml", "- input: a\n  expected: [unclosed\n- input: b\n", 3, 1],
        ["two.yaml", "- { input: a }\n---\n- { input: b }\n", 2, undefined],
        // A JSON array in a .jsonl file, refused at its first line.
        ["array.jsonl", '\n[{"input":"a"}]\n', 2, undefined],
        // CSV: a record that cannot be parsed, one too wide, a bad header.
        ["quote.csv", 'input,expected\na,b\n"c"d,e\n', 3, undefined],
        ["wide.csv", "input,expected\na,b\nc,d,e\n", 3, undefined],
        ["header.csv", "input,input\na,b\n", 1, undefined],
        // Bytes that are not UTF-8, at the line of the first.
        ["latin1.json", bad, 2, undefined],
        // The file as a whole: on no line.
        ["obj.json", '{"input":"a"}', undefined, undefined],
        ["missing.jsonl", undefined, undefined, undefined],
        ["empty.csv", "input\n", undefined, undefined],
      ] as const
    ) {
      const path = join(dir, file);
      if (typeof content === "string") await Deno.writeTextFile(path, content);
      else if (content !== undefined) await Deno.writeFile(path, content);
      await assert.rejects(
        async () => await Array.fromAsync(await loadDataset(path)),
        (error: unknown) => {
          assert.ok(error instanceof DatasetError, String(error));
          assert.equal(error.line, line, `${file}: ${error.message}`);
          assert.equal(error.column, column, `${file}: ${error.message}`);
          if (line !== undefined) {
            assert.ok(
              error.message.includes(`line ${line}`),
              `${file}: ${error.message}`,
            );
          }
          return true;
        },
      );
    }
  });
});

Deno.test("loadDataset reads stdin (`-`) in the format given, as it reads a file of that format", async () => {
  await withTempDir(async (dir) => {
    for (
      const [format, text] of [
        ["csv", 'id,input,expected\na,"2+2?",4\n,hi,\n'],
        [
          "json",
          '[{"id":"a","input":"2+2?","expected":"4"},\n{"input":"hi"}]\n',
        ],
        ["yaml", "- { id: a, input: 2+2?, expected: '4' }\n- input: hi\n"],
      ] as const
    ) {
      const path = join(dir, `cases.${format}`);
      await Deno.writeTextFile(path, text);
      const fromFile = await Array.fromAsync(
        await loadDataset(path, { name: "d" }),
      );
      const stdin = ReadableStream.from([encoder.encode(text)]);
      const fromStdin = await Array.fromAsync(
        await loadDataset("-", { name: "d", format, stdin }),
      );
      assert.deepEqual(fromStdin, fromFile, format);
      assert.deepEqual(ids(fromStdin), ["d#a", "d#2"], format);
    }
  });
});

Deno.test("loadDataset reads other tools' exports or says what to write: a .json of JSON Lines, Braintrust's null metadata and input object, promptfoo's tests", async () => {
  await withTempDir(async (dir) => {
    // Hugging Face's and pandas' to_json write JSON Lines under .json.
    const lines = join(dir, "hf.json");
    await Deno.writeTextFile(lines, '{"input":"a"}\n{"input":"b"}\n');
    await assert.rejects(() => loadDataset(lines), (error: unknown) => {
      assert.ok(error instanceof DatasetError);
      assert.equal(
        error.message,
        `Cannot parse dataset ${
          JSON.stringify(lines)
        } line 2: it holds one JSON value per line (JSON Lines, as Hugging Face's and pandas' to_json write), not a JSON array: name it .jsonl`,
      );
      assert.equal(error.line, 2);
      return true;
    });
    // Braintrust writes "metadata": null, and input as any JSON value.
    const examples = await load(
      dir,
      "bt.jsonl",
      [
        '{"id":"a1","input":"2+2?","expected":"4","metadata":null,"tags":[]}',
        '{"id":"a2","input":{"question":"2+2?"},"expected":"4"}',
        '{"vars":{"question":"2+2?"},"assert":[]}',
      ].join("\n") + "\n",
    );
    assert.deepEqual(examples[0]?.case, {
      id: "a1",
      input: "2+2?",
      expected: "4",
      tags: [],
    });
    assert.equal(
      examples[1]?.invalid,
      '"input" must be a string or a list of messages, not an object: keep its fields under "metadata", where a target\'s prompt reads them ({{metadata.question}}), and write the text to send as "input"',
    );
    assert.equal(
      examples[2]?.invalid,
      '"input" is missing (the record has "vars", "assert"): "vars" is promptfoo\'s test variables: keep them under "metadata", where a target\'s prompt reads them ({{metadata.question}}), and write the text to send as "input"',
    );
    // A promptfoo config, or tests under a key, is no list of cases.
    const config = join(dir, "promptfooconfig.yaml");
    await Deno.writeTextFile(
      config,
      "prompts: [\"Answer: {{question}}\"]\ntests:\n  - vars: { question: '2+2?' }\n",
    );
    await assert.rejects(() => loadDataset(config), (error: unknown) => {
      assert.ok(error instanceof DatasetError);
      assert.equal(
        error.message,
        `Dataset ${
          JSON.stringify(config)
        } must hold a YAML list of cases, not a mapping (its keys are "prompts", "tests"): write the list under "tests" alone, each item a case`,
      );
      return true;
    });
  });
});

Deno.test("cli run refuses an id that another case wrote in another Unicode form, so its Scores read back whole", async () => {
  await withTempDir(async (dir) => {
    // "café" precomposed, then as "e" and a combining accent: one id to
    // every reader of the Scores (ids are compared in NFC there).
    await Deno.writeTextFile(
      join(dir, "d.jsonl"),
      '{"id":"caf\\u00e9","input":"a","output":"x","expected":"x"}\n' +
        '{"id":"cafe\\u0301","input":"b","output":"y","expected":"x"}\n',
    );
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n  - type: exact_match\n",
    );
    const run = await cli(["run", "suite.yaml", "--out", "s.ndjson"], dir);
    assert.equal(run.code, 2, run.stderr);
    assert.match(
      run.stderr,
      /Invalid case in "d\.jsonl" line 2: Duplicate id "cafe\u0301" \(first at line 1\): ids must be unique/,
    );
    const scores = (await Deno.readTextFile(join(dir, "s.ndjson"))).trim()
      .split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(scores.map((s) => [s.example_id, s.status]), [
      ["d.jsonl#caf\u00e9", "scored"],
      ["d.jsonl#line-2", "blocked"],
    ]);
    // What run wrote, aggregate reads back without a Score given twice.
    const again = await cli(["aggregate", "s.ndjson"], dir);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(JSON.parse(again.stdout).n, 2);
  });
});
