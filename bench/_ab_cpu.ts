// CPU of whole processes, side by side (issue 17's before/after figures on a
// shared machine): `perf stat -e task-clock` of each variant of a JSON list,
// children included, in turn, the order flipped every round; prints medians
// (lowest in brackets) of CPU and wall time, and the load average before and
// after. A variant: {"name", "argv": [...], "stdin"?: FILE, "cwd"?: DIR}, e.g.
// the same command from two worktrees.
// Usage: deno run -A bench/_ab_cpu.ts VARIANTS.json [ROUNDS (default 21)]
interface Variant {
  name: string;
  argv: string[];
  stdin?: string;
  cwd?: string;
}
const [specPath, roundsArg] = Deno.args;
if (specPath === undefined) {
  throw new Error("Usage: bench/_ab_cpu.ts VARIANTS.json [ROUNDS]");
}
const variants: Variant[] = JSON.parse(await Deno.readTextFile(specPath));
const rounds = Number(roundsArg ?? 21);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const load = () => Deno.readTextFileSync("/proc/loadavg").split(" ")[0];
const out = await Deno.makeTempFile({ prefix: "evalpipe_ab_" });

async function measure(v: Variant): Promise<{ cpu: number; wall: number }> {
  const child = new Deno.Command("perf", {
    args: ["stat", "-x,", "-e", "task-clock", "-o", out, "--", ...v.argv],
    ...(v.cwd !== undefined ? { cwd: v.cwd } : {}),
    stdin: v.stdin !== undefined ? "piped" : "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const started = performance.now();
  if (v.stdin !== undefined) {
    await (await Deno.open(v.stdin)).readable.pipeTo(child.stdin);
  }
  const { code, stderr } = await child.output();
  const wall = performance.now() - started;
  if (code !== 0) {
    throw new Error(
      `${v.name} exited ${code}: ${new TextDecoder().decode(stderr)}`,
    );
  }
  const line = (await Deno.readTextFile(out)).split("\n")
    .find((l) => l.split(",")[2] === "task-clock");
  return { cpu: Number(line?.split(",")[0]), wall };
}

try {
  const got = variants.map(() => ({
    cpu: [] as number[],
    wall: [] as number[],
  }));
  const before = load();
  for (let r = 0; r < rounds; r++) {
    const order = variants.map((_, i) => i);
    if (r % 2 === 1) order.reverse();
    for (const i of order) {
      const m = await measure(variants[i]!);
      got[i]!.cpu.push(m.cpu);
      got[i]!.wall.push(m.wall);
    }
  }
  console.log(`rounds ${rounds}, load ${before}→${load()}`);
  for (const [i, v] of variants.entries()) {
    const { cpu, wall } = got[i]!;
    console.log(
      `${v.name.padEnd(40)} cpu ${median(cpu).toFixed(1)} ms (${
        Math.min(...cpu).toFixed(1)
      })  wall ${median(wall).toFixed(1)} ms (${Math.min(...wall).toFixed(1)})`,
    );
  }
} finally {
  await Deno.remove(out);
}
