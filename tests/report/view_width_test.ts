// `view --by-call` measures text by the columns a terminal gives it: CJK
// and emoji take two, combining marks none. string-width (a separate,
// widely used implementation) is the measure the tests hold it to.

import assert from "node:assert/strict";
import stringWidth from "npm:string-width@9.0.0";
import { scored } from "../../src/score/mod.ts";
import { groupByCall, renderByCall } from "../../src/report/view.ts";
import {
  clipWidth,
  displayWidth,
  padEndWidth,
} from "../../src/report/_width.ts";
import { cli } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { inPty } from "../_pty.ts";

const SAMPLES = [
  "plain ascii",
  "中文的理由",
  "日本語のテキストとカタカナ",
  "한국어 문장",
  "ｆｕｌｌｗｉｄｔｈ",
  "ｱｲｳ half-width katakana",
  "e\u0301 combining acute",
  "👍 thumbs",
  "👍🏽 skin tone",
  "👨‍👩‍👧 family",
  "🇯🇵 flag",
  "❤️ heart with VS16",
  "☺ text-style",
  "mixed 中文 and 😀 and café",
];

Deno.test("displayWidth agrees with string-width on CJK, emoji and combining marks", () => {
  for (const text of SAMPLES) {
    assert.equal(displayWidth(text), stringWidth(text), JSON.stringify(text));
  }
  assert.equal(displayWidth("中文"), 4);
  assert.equal(displayWidth("e\u0301"), 1);
  assert.equal(displayWidth("😀"), 2);
});

Deno.test("clipWidth cuts at a column, never through a wide character or an emoji", () => {
  for (const text of SAMPLES) {
    for (let w = 1; w <= 20; w++) {
      const cut = clipWidth(text, w);
      assert.ok(stringWidth(cut) <= w, `${JSON.stringify(cut)} > ${w}`);
      if (stringWidth(text) <= w) assert.equal(cut, text);
      else {
        assert.ok(cut.endsWith("…"));
        // As much as fits: one more character would not.
        assert.ok(stringWidth(cut) >= w - 1, `${JSON.stringify(cut)} at ${w}`);
      }
    }
  }
  assert.equal(clipWidth("中文字", 4), "中…");
  assert.equal(clipWidth("👨‍👩‍👧 family", 3), "👨‍👩‍👧…");
  assert.equal(padEndWidth("中", 4), "中  ");
});

/** The display column where `needle` starts in `line`. */
function columnOf(line: string, needle: string): number {
  const at = line.indexOf(needle);
  assert.ok(at >= 0, `${JSON.stringify(needle)} in ${JSON.stringify(line)}`);
  return stringWidth(line.slice(0, at));
}

const ROWS = [
  scored("正确性", 1, {
    example_id: "问题.jsonl#1",
    unit_id: "问题.jsonl#1",
    reason: "答案与参考答案完全一致，没有任何遗漏或者多余的内容。".repeat(3),
  }),
  scored("exact_match", 0, {
    example_id: "问题.jsonl#1",
    unit_id: "问题.jsonl#1",
    reason: "👍🏽 emoji reason 🇯🇵 with a flag and 👨‍👩‍👧 and more text after",
  }),
  scored("流畅度😀", 0.5, {
    example_id: "问题.jsonl#1",
    unit_id: "问题.jsonl#1",
    reason: "e\u0301e\u0301e\u0301 combining marks and 日本語",
  }),
  scored("한국어", 1, {
    example_id: "问题.jsonl#1",
    unit_id: "问题.jsonl#1",
  }),
];

function assertAligned(lines: string[], width: number): void {
  for (const line of lines) {
    assert.ok(
      stringWidth(line) <= width,
      `${stringWidth(line)} > ${width}: ${line}`,
    );
  }
  const rows = lines.filter((l) => / scored /.test(l));
  assert.equal(rows.length, ROWS.length, lines.join("\n"));
  const status = rows.map((l) => columnOf(l, " scored ") + 1);
  assert.equal(
    new Set(status).size,
    1,
    `status columns ${status}:\n${rows.join("\n")}`,
  );
  // The value column holds each value at the same column.
  for (const [i, row] of rows.entries()) {
    const v = ROWS[i]!.value!.toFixed(3);
    assert.equal(columnOf(row, v), status[0]! + 16, row);
  }
}

Deno.test("renderByCall lines up the columns of CJK and emoji metrics and cuts by display width", () => {
  for (const width of [40, 60, 100]) {
    assertAligned(renderByCall(groupByCall(ROWS), width), width);
  }
});

Deno.test("cli view --by-call in a 50-column terminal fits and lines up CJK and emoji rows", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/scores.ndjson`,
      ROWS.map((s) => JSON.stringify(s) + "\n").join(""),
    );
    for (const [columns, fits] of [[50, 50], [0, 120]] as const) {
      const out = await inPty(["view", "scores.ndjson", "--by-call"], {
        cwd: dir,
        columns,
      });
      assert.equal(out.code, 0, out.screen);
      const lines = out.screen.split("\r\n").filter((l) => l !== "");
      assert.ok(lines[0]?.startsWith("✗ 问题.jsonl#1"), out.screen);
      assertAligned(lines.slice(0, -1), fits);
      // The reason fills its row to the edge, measured in columns.
      const longest = Math.max(...lines.map((l) => stringWidth(l)));
      assert.ok(longest >= fits - 1, `${longest} of ${fits}:\n${out.screen}`);
    }
  });
});

/**
 * The column, as string-width counts them, at which each cell of each line
 * starts: cells are two or more spaces apart.
 */
function cellColumns(lines: readonly string[]): number[][] {
  return lines.map((line) =>
    [...line.matchAll(/(?:^|(?<= {2}))\S+(?: \S+)*/g)].map((m) =>
      stringWidth(line.slice(0, m.index))
    )
  );
}

Deno.test("cli run, view and diff line up their summary tables by display width: CJK, emoji and accented metric names", async () => {
  await withTempDir(async (dir) => {
    const metrics = ["正确率", "👩‍💻_match", "é_nfd".normalize("NFD"), "exact"];
    await Deno.writeTextFile(
      `${dir}/cases.jsonl`,
      ["a", "b", "c"].map((o, i) =>
        JSON.stringify({ input: "q", output: o, expected: i === 0 ? "a" : "x" })
      ).join("\n") + "\n",
    );
    await Deno.writeTextFile(
      `${dir}/suite.yaml`,
      `dataset: cases.jsonl\ntarget: { type: replay }\nscorers:\n${
        metrics.map((m) => `  - { type: exact_match, name: "${m}" }\n`).join("")
      }`,
    );
    const table = (stderr: string, header: RegExp) => {
      const lines = stderr.split("\n");
      const at = lines.findIndex((l) => header.test(l));
      assert.ok(at >= 0, stderr);
      return lines.slice(at, at + 1 + metrics.length);
    };
    const run = await cli(
      ["run", "suite.yaml", "--record", "a.json"],
      dir,
    );
    assert.equal(run.code, 0, run.stderr);
    const view = await cli(["view", "a.json"], dir);
    assert.equal(view.code, 0, view.stderr);
    const diff = await cli(["diff", "a.json", "a.json"], dir);
    assert.equal(diff.code, 0, diff.stderr);
    for (
      const lines of [
        table(run.stderr, /^metric +mean/),
        table(view.stdout, /^metric +mean/),
        table(diff.stderr, /^metric +pairs/),
      ]
    ) {
      const columns = cellColumns(lines);
      for (const [i, row] of columns.entries()) {
        assert.deepEqual(row, columns[0], `line ${i}:\n${lines.join("\n")}`);
      }
    }
  });
});
