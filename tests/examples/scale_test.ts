// The recipes of examples/scale/, run the way their engines run them: the
// commands are read from the files (YAML parsed with js-yaml), so a recipe
// that drifts from what works fails here. `evalpipe` is a shim on PATH for
// `deno run -A cli.ts`, and the suite's model a loopback server.

import assert from "node:assert/strict";
import * as yaml from "js-yaml";
import { CLI } from "../_cli.ts";
import { withTempDir } from "../_proc.ts";
import { fakeLlm } from "../_fake_llm.ts";

const SCALE = new URL("../../examples/scale/", import.meta.url).pathname;
const MODEL_URL = "http://model.evalpipe.svc:8000/v1";

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a shell script as an engine does: `sh -c` (or bash for Actions). */
async function sh(
  script: string,
  cwd: string,
  env: Record<string, string>,
  shell: string[] = ["sh", "-c"],
): Promise<Ran> {
  const out = await new Deno.Command(shell[0]!, {
    args: [...shell.slice(1), script],
    cwd,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
  };
}

/** The environment: `evalpipe` on PATH, the suite's key. */
async function engineEnv(dir: string): Promise<Record<string, string>> {
  await Deno.mkdir(`${dir}/bin`, { recursive: true });
  await Deno.writeTextFile(
    `${dir}/bin/evalpipe`,
    `#!/bin/sh\nexec "${Deno.execPath()}" run -A "${CLI}" "$@"\n`,
    { mode: 0o755 },
  );
  return {
    PATH: `${dir}/bin:${Deno.env.get("PATH")}`,
    HOME: Deno.env.get("HOME") ?? dir,
    NO_COLOR: "1",
    OPENAI_API_KEY: "test-key",
  };
}

/** The suite's files into `to`, its model pointed at `baseUrl`. */
async function copySuite(to: string, baseUrl: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for (const name of ["evalpipe.yaml", "cases.jsonl"]) {
    const text = await Deno.readTextFile(`${SCALE}suite/${name}`);
    assert.ok(name !== "evalpipe.yaml" || text.includes(MODEL_URL));
    await Deno.writeTextFile(`${to}/${name}`, text.replace(MODEL_URL, baseUrl));
  }
}

/** A workspace as a checkout has it: examples/scale/ with the suite. */
async function workspace(dir: string, baseUrl: string): Promise<string> {
  await copySuite(`${dir}/examples/scale/suite`, baseUrl);
  await Deno.copyFile(
    `${SCALE}parallel.sh`,
    `${dir}/examples/scale/parallel.sh`,
  );
  return dir;
}

/** The Scores of the whole suite run by one process, to compare with. */
async function wholeRun(
  dir: string,
  baseUrl: string,
  env: Record<string, string>,
) {
  await copySuite(`${dir}/whole`, baseUrl);
  const r = await sh(
    "evalpipe run whole/evalpipe.yaml --no-cache",
    dir,
    env,
  );
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

type Doc = Record<string, unknown>;
// deno-lint-ignore no-explicit-any
type Any = any;

Deno.test("the Kubernetes Indexed Job: each index a shard, restarted in place, the merge Job equal to one run", async () => {
  await using server = fakeLlm({ delayMs: 5 });
  await withTempDir(async (dir) => {
    const env = await engineEnv(dir);
    const whole = await wholeRun(dir, server.baseUrl, env);
    const docs = yaml.loadAll(
      await Deno.readTextFile(`${SCALE}k8s-indexed-job.yaml`),
    ) as Doc[];
    const job = docs.find((d) => d.kind === "Job") as Any;
    assert.equal(job.spec.completionMode, "Indexed");
    assert.equal(job.spec.template.spec.restartPolicy, "OnFailure");
    const pod = job.spec.template.spec;
    const container = pod.containers[0];
    // Each volume where the pod mounts it, here a folder of its own.
    const mounts = new Map<string, string>();
    for (const m of container.volumeMounts) {
      const volume = pod.volumes.find((v: Any) => v.name === m.name);
      const local = `${dir}/vol-${m.name}`;
      if (volume.configMap !== undefined) {
        await copySuite(local, server.baseUrl); // kubectl create configmap --from-file
      } else {
        assert.ok(volume.persistentVolumeClaim !== undefined);
        await Deno.mkdir(local);
      }
      mounts.set(m.mountPath, local);
    }
    const local = (args: string[]) =>
      args.map((a) => {
        let text = a;
        for (const [path, to] of mounts) text = text.replaceAll(path, to);
        return text;
      });
    assert.deepEqual(container.command, ["sh", "-c"]);
    const [script] = local(container.args);
    const indexes = Array.from({ length: job.spec.completions }, (_, i) => i);
    assert.equal(indexes.length, 4);
    const pods = await Promise.all(
      indexes.map((i) =>
        sh(script!, dir, { ...env, JOB_COMPLETION_INDEX: String(i) })
      ),
    );
    for (const p of pods) assert.equal(p.code, 0, p.stderr);
    // A pod restarted after its shard finished runs nothing again.
    const results = mounts.get("/results")!;
    const before = await Deno.readTextFile(`${results}/scores-0.ndjson`);
    const calls = server.count;
    const restarted = await sh(script!, dir, {
      ...env,
      JOB_COMPLETION_INDEX: "0",
    });
    assert.equal(restarted.code, 0, restarted.stderr);
    assert.equal(server.count, calls);
    assert.equal(await Deno.readTextFile(`${results}/scores-0.ndjson`), before);
    // The merge Job, over the same volume.
    const merge = yaml.load(
      await Deno.readTextFile(`${SCALE}k8s-merge-job.yaml`),
    ) as Any;
    const mergePod = merge.spec.template.spec;
    assert.deepEqual(
      mergePod.containers[0].volumeMounts.map((m: Any) => m.mountPath),
      ["/results"],
    );
    const [mergeScript] = local(mergePod.containers[0].args);
    const merged = await sh(mergeScript!, dir, env);
    assert.equal(merged.code, 0, merged.stderr);
    assert.equal(await Deno.readTextFile(`${results}/scores.ndjson`), whole);
    const record = JSON.parse(await Deno.readTextFile(`${results}/run.json`));
    assert.equal(record.complete, true);
    assert.equal(record.shard, undefined);
    // The merged cache holds every answer: the whole suite replays from it.
    const replay = await sh(
      `evalpipe run vol-suite/evalpipe.yaml --cache-dir ${results}/cache`,
      dir,
      env,
    );
    assert.equal(replay.code, 0, replay.stderr);
    assert.match(replay.stderr, /target cache: 40 hits, 0 calls/);
    assert.equal(server.count, calls);
  });
});

Deno.test("the GitHub Actions matrix: a job per shard, an artifact each, the merge job equal to one run", async () => {
  await using server = fakeLlm({ delayMs: 5 });
  await withTempDir(async (dir) => {
    const env = await engineEnv(dir);
    const whole = await wholeRun(dir, server.baseUrl, env);
    const workflow = yaml.load(
      await Deno.readTextFile(`${SCALE}github-actions.yml`),
    ) as Any;
    const shard = workflow.jobs.shard;
    const matrix: number[] = shard.strategy.matrix.shard;
    assert.deepEqual(matrix, [1, 2, 3, 4]);
    const expand = (text: string, vars: Record<string, string>) =>
      text.replace(/\$\{\{\s*([\w.]+)\s*\}\}/g, (_, name: string) => {
        assert.ok(name in vars, `unknown expression ${name}`);
        return vars[name]!;
      });
    const bash = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"];
    const run = shard.steps.find((s: Any) => s.id === "shard").run as string;
    const upload = shard.steps.find((s: Any) =>
      String(s.uses).startsWith("actions/upload-artifact")
    );
    const jobs = await Promise.all(matrix.map(async (k) => {
      const vars = {
        "matrix.shard": String(k),
        "secrets.OPENAI_API_KEY": "test-key",
      };
      const jobEnv: Record<string, string> = { ...env };
      for (const [name, value] of Object.entries(shard.env)) {
        jobEnv[name] = expand(String(value), vars);
      }
      const ws = await workspace(`${dir}/job-${k}`, server.baseUrl);
      const r = await sh(expand(run, vars), ws, jobEnv, bash);
      // upload-artifact: the folder, under the artifact's name.
      const name = expand(upload.with.name, vars);
      await Deno.mkdir(`${dir}/artifacts/${name}`, { recursive: true });
      await sh(
        `cp -R ${expand(upload.with.path, vars)}. ${dir}/artifacts/${name}/`,
        ws,
        env,
      );
      return r;
    }));
    for (const j of jobs) assert.equal(j.code, 0, j.stderr);
    const mergeJob = workflow.jobs.merge;
    assert.equal(mergeJob.needs, "shard");
    const download = mergeJob.steps.find((s: Any) =>
      String(s.uses).startsWith("actions/download-artifact")
    );
    assert.equal(download.with["merge-multiple"], true);
    const ws = await workspace(`${dir}/merge`, server.baseUrl);
    await Deno.mkdir(`${ws}/${download.with.path}`, { recursive: true });
    for (const k of matrix) {
      await sh(
        `cp -R ${dir}/artifacts/shard-${k}/. ${download.with.path}`,
        ws,
        env,
      );
    }
    const mergeRun = mergeJob.steps.find((s: Any) => s.id === "merge").run;
    const merged = await sh(mergeRun, ws, env, bash);
    assert.equal(merged.code, 0, merged.stderr);
    assert.equal(
      await Deno.readTextFile(`${ws}/results/scores.ndjson`),
      whole,
    );
  });
});

Deno.test("the GNU parallel one-liner: 4 shards at once, merged equal to one run", async () => {
  await using server = fakeLlm({ delayMs: 5 });
  await withTempDir(async (dir) => {
    const env = await engineEnv(dir);
    const whole = await wholeRun(dir, server.baseUrl, env);
    const ws = await workspace(`${dir}/ws`, server.baseUrl);
    const r = await sh("sh examples/scale/parallel.sh", ws, env);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await Deno.readTextFile(`${ws}/results/scores.ndjson`), whole);
  });
});

Deno.test("the GitHub Actions merge step gates a suite whose shards called no model, and so kept no cache", async () => {
  await withTempDir(async (dir) => {
    const env = await engineEnv(dir);
    const workflow = yaml.load(
      await Deno.readTextFile(`${SCALE}github-actions.yml`),
    ) as Any;
    // A suite of the user's own: a subprocess target, no model, no cache
    // (as `deno task eval`'s quickstart), its shards' records downloaded.
    const suite = `${dir}/ws/suite`;
    await Deno.mkdir(`${dir}/ws/results`, { recursive: true });
    await Deno.mkdir(suite);
    await Deno.writeTextFile(
      `${suite}/cases.jsonl`,
      '{"id":"a","input":"x","expected":"x"}\n{"id":"b","input":"y","expected":"y"}\n',
    );
    await Deno.writeTextFile(
      `${suite}/evalpipe.yaml`,
      'dataset: cases.jsonl\ntarget: { type: subprocess, cmd: "cat > /dev/null; echo x" }\nscorers: [{ type: exact_match }]\ngates: { exact_match: { min_pass_rate: 0.9 } }\n',
    );
    for (const k of [1, 2]) {
      const r = await sh(
        `evalpipe run suite/evalpipe.yaml --shard ${k}/2 --record results/record-${k}.json --cache-dir results/cache-${k} > /dev/null`,
        `${dir}/ws`,
        env,
      );
      assert.equal(r.code, 0, r.stderr);
    }
    const bash = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"];
    const mergeRun = workflow.jobs.merge.steps.find((s: Any) =>
      s.id === "merge"
    ).run;
    // Before, `evalpipe cache merge results/cache-*` found no folder, failed
    // (exit 2, `Cannot read cache "results/cache-*"`) and the merge, after
    // its `&&`, never ran: no gate checked, no step summary.
    const merged = await sh(mergeRun, `${dir}/ws`, env, bash);
    assert.equal(merged.code, 1, merged.stderr);
    assert.match(merged.stderr, /gate failed: exact_match: pass rate 0\.5/);
  });
});
