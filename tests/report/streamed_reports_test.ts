/**
 * The JUnit XML and the HTML page of a RunRecord file, read a unit at a time
 * and written in pieces, are the bytes the reports of the whole record are,
 * whatever the record's layout: units with their Scores, Scores before their
 * unit, a unit twice, a unit's Scores on two lines, epochs, targets, a record
 * cut short, an indented one.
 */

import assert from "node:assert/strict";
import { cli, cliWithStdin } from "../_cli.ts";
import { makeRun } from "./_report_fixture.ts";
import {
  readRunRecord,
  RunRecordError,
  type RunRecordHeader,
  RunRecordWriter,
} from "../../src/record/mod.ts";
import {
  htmlReport,
  htmlReportFile,
  junitReport,
  junitReportFile,
  markdownReportFile,
} from "../../src/report/mod.ts";
import { type Score, scored } from "../../src/score/mod.ts";
import type { Unit } from "../../src/dataset/mod.ts";
import { recordHeader } from "../record/_header.ts";

/** A fixture run's units, each with its Scores. */
function byUnit(n: number, hostile: boolean, shift = 0) {
  const run = makeRun({ n, hostile, shift });
  return run.units.map((u) => ({
    unit: u as Unit,
    scores: run.scores.filter((s) => s.unit_id === u.unit_id),
  }));
}

function header(config: Record<string, unknown>): RunRecordHeader {
  return recordHeader({
    config: { ...makeRun({ n: 1 }).config, ...config },
    scorers: { exact_match: "exact_match@1", judge: "judge@2" },
  });
}

/** Each record's lines, written as a run writes them. */
const RECORDS: Record<
  string,
  {
    config?: Record<string, unknown>;
    finish?: false;
    fill(w: RunRecordWriter): Promise<void>;
  }
> = {
  hostile: {
    async fill(w) {
      for (const e of byUnit(120, true, 1)) await w.addUnit(e.unit, e.scores);
    },
  },
  "cut short": {
    finish: false,
    async fill(w) {
      for (const e of byUnit(30, true)) await w.addUnit(e.unit, e.scores);
    },
  },
  "odd layouts": {
    async fill(w) {
      const es = byUnit(40, true);
      const alias = (s: Score, unit_id: string, example_id = unit_id) => ({
        ...s,
        unit_id,
        example_id,
      });
      // Scores alone before their unit; a unit twice; Scores of a unit never
      // recorded; a later epoch; Scores without ids; a unit split over lines.
      await w.addScores(es[3]!.scores);
      for (const e of es) await w.addUnit(e.unit, e === es[3] ? [] : e.scores);
      await w.addUnit(es[5]!.unit, es[5]!.scores);
      await w.addScores([
        scored("exact_match", 1, { example_id: "gone#1", unit_id: "gone#1@2" }),
        scored("judge", 0.5, { example_id: "gone#1", unit_id: "gone#1@2" }),
      ]);
      const e7 = es[7]!;
      const at2 = `${e7.unit.example_id}@2`;
      await w.addUnit(
        { ...e7.unit, unit_id: at2, epoch: 2 },
        e7.scores.map((s) => alias(s, at2, e7.unit.example_id)),
      );
      await w.add(scored("exact_match", 0, {}));
      const e9 = es[9]!;
      await w.addUnit(
        { ...e9.unit, unit_id: "split#1", example_id: "split#1" },
        [
          alias(e9.scores[0]!, "split#1"),
        ],
      );
      await w.addUnit(es[10]!.unit, es[10]!.scores);
      await w.addScores([alias(e9.scores[1]!, "split#1")]);
    },
  },
  "two targets": {
    config: { matrix: ["a", "b"] },
    async fill(w) {
      for (const [t, shift] of [["a", 0], ["b", 1]] as const) {
        for (const e of byUnit(20, true, shift)) {
          const id = `${e.unit.unit_id}~${t}`;
          await w.addUnit(
            { ...e.unit, unit_id: id, target_name: t },
            e.scores.map((s) => ({ ...s, unit_id: id, target_name: t })),
          );
        }
      }
    },
  },
  "one target": {
    async fill(w) {
      for (const e of byUnit(20, false)) {
        await w.addUnit(
          { ...e.unit, target_name: "a" },
          e.scores.map((s) => ({ ...s, target_name: "a" })),
        );
      }
    },
  },
};

async function writeRecord(
  path: string,
  spec: (typeof RECORDS)[string],
): Promise<void> {
  let text = "";
  const dest = {
    write: (p: Uint8Array) => (
      text += new TextDecoder().decode(p), Promise.resolve(p.length)
    ),
  };
  const writer = new RunRecordWriter(dest, header(spec.config ?? {}));
  await spec.fill(writer);
  if (spec.finish !== false) await writer.finish([], true);
  // The lines reach `dest` on a later turn when there is no finish.
  await new Promise((resolve) => setTimeout(resolve, 0));
  await Deno.writeTextFile(path, text);
}

async function pieces(
  read: (write: (piece: string) => void) => Promise<unknown>,
): Promise<string> {
  let text = "";
  await read((piece) => {
    text += piece;
  });
  return text;
}

Deno.test("junitReportFile and htmlReportFile give the bytes of the whole record's reports, whatever its layout", async () => {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_streamed_" });
  try {
    for (const [name, spec] of Object.entries(RECORDS)) {
      const path = `${dir}/run.json`;
      await writeRecord(path, spec);
      const forms = [path];
      if (spec.finish !== false) {
        // Indented: read whole.
        const indented = `${dir}/indented.json`;
        const text = await Deno.readTextFile(path);
        await Deno.writeTextFile(
          indented,
          JSON.stringify(JSON.parse(text), null, 2),
        );
        forms.push(indented);
      }
      for (const file of forms) {
        const record = await readRunRecord(file);
        assert.equal(
          await pieces((write) => junitReportFile(file, write)),
          junitReport(record),
          `${name}: ${file}`,
        );
        assert.equal(
          await pieces((write) => htmlReportFile(file, write)),
          htmlReport(record),
          `${name}: ${file}`,
        );
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("junitReportFile reports a record a run is still writing as its first read found it, and refuses one written over between its reads", async () => {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_streamed_" });
  try {
    // A record of 30 units cut short, and its first 20 (the header's line
    // and a line per unit): what a run that goes on has written so far.
    await writeRecord(`${dir}/all.json`, RECORDS["cut short"]!);
    const lines = (await Deno.readTextFile(`${dir}/all.json`)).split(/(?<=\n)/);
    assert.equal(lines.length, 31);
    const path = `${dir}/run.json`;
    const firstUnits = (n: number) => lines.slice(0, 1 + n).join("");
    // What happens to the file once the document's counts are written.
    const reportWhile = async (change: () => Promise<void>) => {
      await Deno.writeTextFile(path, firstUnits(20));
      let text = "";
      let changed = false;
      await junitReportFile(path, async (piece) => {
        if (!changed) await change();
        changed = true;
        text += piece;
      });
      return text;
    };
    await Deno.writeTextFile(path, firstUnits(20));
    const asFound = junitReport(await readRunRecord(path));
    assert.match(asFound, /<testsuites name="evalpipe" tests="20" /);
    assert.equal(
      await reportWhile(() => Deno.writeTextFile(path, lines.join(""))),
      asFound,
      "the run went on: the 20 cases first read",
    );
    const overWritten = {
      "another run's record": () =>
        Deno.writeTextFile(path, lines.join("").replaceAll('"r1"', '"r2"')),
      "fewer units": () => Deno.writeTextFile(path, firstUnits(10)),
    };
    for (const [name, change] of Object.entries(overWritten)) {
      await assert.rejects(
        () => reportWhile(change),
        (e) =>
          e instanceof RunRecordError &&
          e.message.includes(
            `${JSON.stringify(path)}: it changed while it was read`,
          ),
        name,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli report RECORD --junit --html writes from the file the bytes the library gives for the whole record, and from a pipe too", async () => {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_streamed_" });
  try {
    await writeRecord(`${dir}/run.json`, RECORDS["odd layouts"]!);
    const out = await cli(
      ["report", "run.json", "--junit", "r.xml", "--html", "r.html"],
      dir,
    );
    assert.equal(out.code, 0, out.stderr);
    const record = await readRunRecord(`${dir}/run.json`);
    assert.equal(await Deno.readTextFile(`${dir}/r.xml`), junitReport(record));
    assert.equal(await Deno.readTextFile(`${dir}/r.html`), htmlReport(record));
    // A record piped on stdin is read whole: the same bytes.
    const piped = await cliWithStdin(
      ["report", "-", "--junit", "p.xml"],
      dir,
      await Deno.readTextFile(`${dir}/run.json`),
    );
    assert.equal(piped.code, 0, piped.stderr);
    assert.equal(await Deno.readTextFile(`${dir}/p.xml`), junitReport(record));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Whether this process has the file at `path` open (a read under way). */
async function holdsOpen(path: string): Promise<boolean> {
  for await (const fd of Deno.readDir("/proc/self/fd")) {
    try {
      if (await Deno.readLink(`/proc/self/fd/${fd.name}`) === path) return true;
    } catch (error) {
      // The descriptor was closed since the folder was listed.
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
  return false;
}

Deno.test("markdownReportFile reports a record a run is still writing as its first read found it, and refuses one written over between its reads", async () => {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_streamed_" });
  try {
    await writeRecord(`${dir}/all.json`, RECORDS["cut short"]!);
    const lines = (await Deno.readTextFile(`${dir}/all.json`)).split(/(?<=\n)/);
    const firstUnits = (n: number) => lines.slice(0, 1 + n).join("");
    await Deno.writeTextFile(`${dir}/run.json`, firstUnits(20));
    const options = { recordPath: "run.json" };
    const asFound = (await markdownReportFile(`${dir}/run.json`, options)).text;
    assert.match(asFound, /failing case/);
    // A FIFO gives each read of the record what the file held then.
    const live = `${dir}/live.json`;
    const made = await new Deno.Command("mkfifo", { args: [live] }).output();
    assert.equal(made.code, 0);
    const reportOf = async (next: string) => {
      const writes = (async () => {
        await Deno.writeTextFile(live, firstUnits(20));
        // Opened again before the first read has closed, the FIFO would go
        // on with the next text as one stream: wait for that read's end.
        while (await holdsOpen(live)) {
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        await Deno.writeTextFile(live, next);
      })();
      try {
        return (await markdownReportFile(live, options)).text;
      } finally {
        await writes;
      }
    };
    assert.equal(
      await reportOf(lines.join("")),
      asFound,
      "the run went on: the cases first read",
    );
    const overWritten = {
      "another run's record": lines.join("").replaceAll('"r1"', '"r2"'),
      "no units": firstUnits(0),
    };
    for (const [name, next] of Object.entries(overWritten)) {
      await assert.rejects(
        () => reportOf(next),
        (e) =>
          e instanceof RunRecordError &&
          e.message ===
            `Cannot write the Markdown report of ${
              JSON.stringify(live)
            }: it changed while it was read (another run's record was written over it); write the report again`,
        name,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
