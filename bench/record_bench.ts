// `deno task bench:record`: what keeping every unit in the RunRecord costs.
// A replay run of N units (default 1,000,000) with `--record` (units, their
// inputs, outputs, target records and Scores, streamed) beside the same run
// writing its Scores alone (`--out`), alternating over rounds: peak RSS of
// the whole process (/usr/bin/time), wall time, and bytes per unit of each
// file; then `report --junit` reading the record back. A unit's case is a
// realistic small RAG case: a question, a context chunk, metadata, an answer
// of about 60 characters.
//
// Usage: deno run -A bench/record_bench.ts [--units N] [--rounds N]

import { parseFlags } from "../src/cli/flags.ts";
import { evalpipeArgs } from "./_evalpipe.ts";

const { flags } = parseFlags(Deno.args, {
  units: { type: "integer", default: 1_000_000, help: "Units of the run" },
  rounds: { type: "integer", default: 3, help: "Alternating rounds" },
});
const UNITS = flags.units;
const ROUNDS = flags.rounds;
const ROOT = new URL("..", import.meta.url).pathname;
const EVALPIPE = evalpipeArgs(`${ROOT}cli.ts`);
const TIME = "/usr/bin/time";

const dir = await Deno.makeTempDir({ prefix: "evalpipe_record_bench_" });
try {
  const file = await Deno.open(`${dir}/data.jsonl`, {
    write: true,
    create: true,
  });
  const enc = new TextEncoder();
  let chunk = "";
  for (let i = 0; i < UNITS; i++) {
    chunk += JSON.stringify({
      id: i,
      input: `What is the refund window for order ${i}?`,
      expected: "30 days",
      context: ["Refunds are accepted within 30 days of delivery."],
      metadata: { topic: "refunds" },
      output: i % 3
        ? "You can ask for a refund within 30 days of delivery."
        : "I am not sure.",
    }) + "\n";
    if (chunk.length > 1 << 20) {
      await file.write(enc.encode(chunk));
      chunk = "";
    }
  }
  await file.write(enc.encode(chunk));
  file.close();
  await Deno.writeTextFile(
    `${dir}/suite.yaml`,
    "dataset: data.jsonl\ntarget: { type: replay }\nscorers:\n  - { type: contains, name: refund }\n",
  );

  /** Peak RSS (MiB) and wall time (s) of one evalpipe run. */
  const measure = async (args: string[]): Promise<[number, number]> => {
    const start = performance.now();
    const { code, stderr } = await new Deno.Command(TIME, {
      args: ["-f", "peak %M", Deno.execPath(), ...EVALPIPE, ...args],
      cwd: dir,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    const seconds = (performance.now() - start) / 1000;
    const text = new TextDecoder().decode(stderr);
    const kib = Number(/peak (\d+)\s*$/.exec(text)?.[1]);
    if (code !== 0 || !Number.isFinite(kib)) {
      throw new Error(`${args.join(" ")} failed: ${text}`);
    }
    return [kib / 1024, seconds];
  };

  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const m = s.length >> 1;
    return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
  };
  const rows = {
    scores: { rss: [] as number[], s: [] as number[] },
    record: { rss: [] as number[], s: [] as number[] },
  };
  for (let r = 0; r < ROUNDS; r++) {
    const [a, as] = await measure([
      "run",
      "suite.yaml",
      "--out",
      "scores.ndjson",
    ]);
    rows.scores.rss.push(a);
    rows.scores.s.push(as);
    const [b, bs] = await measure([
      "run",
      "suite.yaml",
      "--record",
      "rec.json",
    ]);
    rows.record.rss.push(b);
    rows.record.s.push(bs);
    console.error(
      `round ${r + 1}: Scores alone ${a.toFixed(0)} MiB ${as.toFixed(1)} s, ` +
        `record with units ${b.toFixed(0)} MiB ${bs.toFixed(1)} s`,
    );
  }
  // Reading it back: `report` parses the whole record (one round).
  const [reportRss, reportS] = await measure([
    "report",
    "rec.json",
    "--junit",
    "junit.xml",
  ]);
  const junitBytes = (await Deno.stat(`${dir}/junit.xml`)).size;
  const scoresBytes = (await Deno.stat(`${dir}/scores.ndjson`)).size;
  const recordBytes = (await Deno.stat(`${dir}/rec.json`)).size;
  const datasetBytes = (await Deno.stat(`${dir}/data.jsonl`)).size;
  const perUnit = (bytes: number) => (bytes / UNITS).toFixed(0);
  console.log(
    `\nRunRecord with units vs Scores alone: ${UNITS} units, medians of ${ROUNDS} alternating rounds ` +
      `(Deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cores)\n`,
  );
  console.log("| output | peak RSS | wall time | file size | bytes per unit |");
  console.log("|---|--:|--:|--:|--:|");
  for (
    const [name, row, bytes] of [
      ["`--out` (Scores alone)", rows.scores, scoresBytes],
      ["`--record` (units + Scores)", rows.record, recordBytes],
    ] as const
  ) {
    console.log(
      `| ${name} | ${median(row.rss).toFixed(0)} MiB | ${
        median(row.s).toFixed(1)
      } s | ${(bytes / 2 ** 20).toFixed(0)} MiB | ${perUnit(bytes)} |`,
    );
  }
  console.log(
    `| \`report rec.json --junit\` (reads the record back; one round) | ${
      reportRss.toFixed(0)
    } MiB | ${reportS.toFixed(1)} s | ${
      (junitBytes / 2 ** 20).toFixed(0)
    } MiB (the XML) | ${perUnit(junitBytes)} |`,
  );
  console.log(
    `\nthe dataset: ${
      perUnit(datasetBytes)
    } bytes per case; record ÷ Scores: ` +
      `peak RSS ${
        (median(rows.record.rss) / median(rows.scores.rss)).toFixed(2)
      }×, size ${(recordBytes / scoresBytes).toFixed(2)}×`,
  );
} finally {
  await Deno.remove(dir, { recursive: true });
}
