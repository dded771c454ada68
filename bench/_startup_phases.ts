// Where a one-case process's start-up goes (bench:where), in CPU time of the
// process, all threads (clock_gettime(CLOCK_PROCESS_CPUTIME_ID) through FFI,
// which this script loads first; no wall time): Deno's own start
// until this one-module script runs; importing the command table; importing
// the command's module and the modules it imports when it runs
// (`--preload run|score`, the lists of src/cli/run.ts's and
// src/cli/score.ts's `import()`s); the first
// `main(args)` (what is left: the work of one case, cold); and a second
// `main(args)` in the same process (the same work, warm; `score` gets no
// input the second time). Prints one JSON line on stderr.
// Usage: deno run -A bench/_startup_phases.ts --preload run|score ARGS...
const libc = Deno.dlopen("libc.so.6", {
  clock_gettime: { parameters: ["i32", "buffer"], result: "i32" },
});
const timespec = new BigInt64Array(2);
const cpu = () => {
  libc.symbols.clock_gettime(2, timespec); // CLOCK_PROCESS_CPUTIME_ID
  return Number(timespec[0]!) * 1e3 + Number(timespec[1]!) / 1e6;
};
const t0 = cpu();
const [, preload, ...args] = Deno.args;
const { main } = await import("../src/cli/main.ts");
const t1 = cpu();
if (preload === "run") {
  await Promise.all([
    import("../src/cli/run.ts"),
    import("../src/io/out_file.ts"),
    import("../src/run/run_suite.ts"),
    import("../src/run/resume.ts"),
    import("../src/run/interrupt.ts"),
    import("../src/io/ndjson.ts"),
    import("../src/score/line.ts"),
    import("../src/report/summary.ts"),
    import("../src/io/same_file.ts"),
    import("../src/io/text_writer.ts"),
    import("../src/io/stdout.ts"),
  ]);
} else if (preload === "score") {
  await Promise.all([
    import("../src/cli/score.ts"),
    import("../src/scorers/subprocess_scorer.ts"),
    import("../src/scorers/scorer_names.ts"),
    import("../src/process/command.ts"),
    import("../src/dataset/unit.ts"),
    import("../src/scorers/score_units.ts"),
    import("../src/io/ndjson.ts"),
    import("../src/io/stdout.ts"),
    import("../src/score/line.ts"),
    import("../src/run/interrupt.ts"),
    import("../src/io/text_writer.ts"),
    import("../src/io/named_reads.ts"),
  ]);
} else throw new Error(`--preload run|score, not "${preload}"`);
const t2 = cpu();
const first = await main(args);
const t3 = cpu();
const second = await main(args);
const t4 = cpu();
if (first !== 0 || second !== 0) {
  throw new Error(`main exited ${first} then ${second}`);
}
console.error(JSON.stringify({
  deno: t0,
  table: t1 - t0,
  imports: t2 - t1,
  first: t3 - t2,
  second: t4 - t3,
}));
