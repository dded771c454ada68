// `export` and `report` of a big RunRecord: peak RSS (/usr/bin/time), wall
// time and CPU time of each form, medians of alternating rounds. A replay run
// of N cases (default 120,000) with `exact_match` and `contains` writes the
// record once; then each form reads it. With `--base DIR` (a checkout of an
// earlier commit) each form runs from DIR and from this checkout in turn,
// and every output is compared byte for byte.
//
// Usage: deno run -A bench/export_report_bench.ts [--cases N] [--rounds N] [--base DIR]

import { parseFlags } from "../src/cli/flags.ts";
import { evalpipeArgs } from "./_evalpipe.ts";

const { flags } = parseFlags(Deno.args, {
  cases: { type: "integer", default: 120_000, help: "Cases of the run" },
  rounds: { type: "integer", default: 3, help: "Alternating rounds" },
  base: { type: "string", help: "A checkout to compare with (before)" },
});
const ROOT = new URL("..", import.meta.url).pathname;
const TIME = "/usr/bin/time";
const sides = flags.base === undefined
  ? [{ name: "this", cli: `${ROOT}cli.ts` }]
  : [
    { name: "base", cli: `${flags.base.replace(/\/$/, "")}/cli.ts` },
    { name: "this", cli: `${ROOT}cli.ts` },
  ];

const FORMS: Array<{ name: string; args: string[]; outputs: string[] }> = [
  {
    name: "`export --to evalglass`",
    args: ["export", "--to", "evalglass", "rec.json", "OUT/eg"],
    outputs: ["eg"],
  },
  {
    name: "`report --html`",
    args: ["report", "rec.json", "--html", "OUT/r.html"],
    outputs: ["r.html"],
  },
  {
    name: "`report --markdown`",
    args: ["report", "rec.json", "--markdown", "OUT/r.md"],
    outputs: ["r.md"],
  },
  {
    name: "`report --html --markdown`",
    args: [
      "report",
      "rec.json",
      "--html",
      "OUT/r.html",
      "--markdown",
      "OUT/r.md",
    ],
    outputs: ["r.html", "r.md"],
  },
  {
    name: "`report --junit`",
    args: ["report", "rec.json", "--junit", "OUT/r.xml"],
    outputs: ["r.xml"],
  },
];

const dir = await Deno.makeTempDir({ prefix: "evalpipe_export_report_" });
try {
  let chunk = "";
  const file = await Deno.open(`${dir}/data.jsonl`, {
    write: true,
    create: true,
  });
  const enc = new TextEncoder();
  for (let i = 0; i < flags.cases; i++) {
    const c: Record<string, unknown> = {
      id: i,
      input: `What is the refund window for order ${i}?`,
      context: ["Refunds are accepted within 30 days of delivery."],
      metadata: { topic: "refunds" },
      output: i % 3 ? "30 days" : "I am not sure.",
    };
    // One case in 50 has no expected answer: non_evaluable for exact_match.
    if (i % 50 !== 7) c.expected = "30 days";
    chunk += JSON.stringify(c) + "\n";
    if (chunk.length > 1 << 20) {
      await file.write(enc.encode(chunk));
      chunk = "";
    }
  }
  await file.write(enc.encode(chunk));
  file.close();
  await Deno.writeTextFile(
    `${dir}/suite.yaml`,
    "dataset: data.jsonl\ntarget: { type: replay }\nscorers:\n  - { type: exact_match }\n" +
      "  - { type: contains, name: refund, value: days }\ngates:\n  exact_match: { min_mean: 0.5 }\n",
  );
  const made = await new Deno.Command(Deno.execPath(), {
    args: [
      ...evalpipeArgs(`${ROOT}cli.ts`),
      "run",
      "suite.yaml",
      "--record",
      "rec.json",
    ],
    cwd: dir,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!made.success) throw new Error(new TextDecoder().decode(made.stderr));

  /** Peak RSS (MiB), wall time (s) and CPU time (s) of one command. */
  const measure = async (cli: string, args: string[], out: string) => {
    await Deno.remove(out, { recursive: true }).catch(() => {});
    await Deno.mkdir(out, { recursive: true });
    const start = performance.now();
    const { code, stderr } = await new Deno.Command(TIME, {
      args: [
        "-f",
        "peak %M cpu %U %S",
        Deno.execPath(),
        ...evalpipeArgs(cli),
        ...args.map((a) => a.replace("OUT", out)),
      ],
      cwd: dir,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    const seconds = (performance.now() - start) / 1000;
    const text = new TextDecoder().decode(stderr);
    const m = /peak (\d+) cpu ([\d.]+) ([\d.]+)\s*$/.exec(text);
    // A gate that failed (exit 1) still wrote every report.
    if (code > 1 || m === null) throw new Error(`${args.join(" ")}: ${text}`);
    return [Number(m[1]) / 1024, seconds, Number(m[2]) + Number(m[3])];
  };
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const m = s.length >> 1;
    return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
  };
  const same = async (a: string, b: string): Promise<boolean> => {
    const { success } = await new Deno.Command("diff", {
      args: ["-r", "-q", a, b],
      stdout: "null",
    }).output();
    return success;
  };

  const recordMiB = (await Deno.stat(`${dir}/rec.json`)).size / 2 ** 20;
  console.log(
    `\n${flags.cases} cases, a record of ${
      recordMiB.toFixed(0)
    } MiB; medians of ${flags.rounds} alternating rounds ` +
      `(Deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cores)\n`,
  );
  console.log(
    `| form | ${
      sides.map((s) => `${s.name}: peak RSS | wall | CPU`).join(" | ")
    } | outputs |`,
  );
  console.log(`|---|${sides.map(() => "--:|--:|--:|").join("")}---|`);
  for (const form of FORMS) {
    const rows = sides.map(() => ({
      rss: [] as number[],
      s: [] as number[],
      cpu: [] as number[],
    }));
    for (let r = 0; r < flags.rounds; r++) {
      for (const [i, side] of sides.entries()) {
        const [rss, s, cpu] = await measure(
          side.cli,
          form.args,
          `${dir}/out_${side.name}`,
        );
        rows[i]!.rss.push(rss!);
        rows[i]!.s.push(s!);
        rows[i]!.cpu.push(cpu!);
      }
    }
    let outputs = "";
    if (sides.length === 2) {
      let equal = true;
      for (const o of form.outputs) {
        equal &&= await same(`${dir}/out_base/${o}`, `${dir}/out_this/${o}`);
      }
      outputs = equal ? "byte-identical" : "**differ**";
    }
    console.log(
      `| ${form.name} | ${
        rows.map((r) =>
          `${median(r.rss).toFixed(0)} MiB | ${median(r.s).toFixed(1)} s | ${
            median(r.cpu).toFixed(1)
          } s`
        ).join(" | ")
      } | ${outputs} |`,
    );
  }
} finally {
  await Deno.remove(dir, { recursive: true });
}
